"""The proxy targets: aggregating proxies that serve many MCP servers behind one endpoint.

* ``mcp-proxy``: the Go proxy TBXark/mcp-proxy (``config.json``: ``mcpProxy`` + ``mcpServers``);
  it expands ``$VAR``/``${VAR}`` over the whole file when it loads it (``-expand-env``, on
  by default), so placeholders are carried over.
* ``1mcp``: the 1mcp agent's ``mcp.json``; it expands ``${VAR}`` in commands, args, cwd, env,
  urls, headers and OAuth fields.
* ``fastmcp`` and ``mcp-proxy-py`` (the PyPI ``mcp-proxy``) live in
  :mod:`mcpctl.render.proxies_python`: neither expands variables.

Placeholders with a default (``${VAR:-x}``) lose the default in both (neither has the
syntax), with a warning.
"""

from __future__ import annotations

from typing import Any

from mcpctl.config.model import INHERIT_NAME_RE, AuthConfig, ServerEntry, ToolFilter, Transport
from mcpctl.config.placeholders import PLACEHOLDER_RE
from mcpctl.errors import UsageError
from mcpctl.render.base import Family, placeholders_back
from mcpctl.render.clientenv import names_to_pass, own_names
from mcpctl.render.listen import parse_listen
from mcpctl.render.proxies_common import (
    BARE_RE,
    Reader,
    ServersTarget,
    Writer,
    auth_headers,
    filter_of,
    split_bearer,
    tool_lists,
)
from mcpctl.render.proxies_python import FastMCPTarget, McpProxyPyTarget

__all__ = ["TARGETS", "McpProxyTarget", "OneMcpTarget"]

NS_PER_MS = 1_000_000
# The proxy's own settings when no template gives them (mcp-proxy refuses a file without).
DEFAULT_PROXY: dict[str, Any] = {
    "mcpProxy": {
        "baseURL": "http://127.0.0.1:9090",
        "addr": "127.0.0.1:9090",
        "name": "mcpctl",
        "version": "1.0.0",
        "type": "streamable-http",
        "options": {"panicIfInvalid": False, "logEnabled": True},
    }
}


def _back(text: str) -> str:
    return placeholders_back(text, BARE_RE)


class McpProxyTarget(ServersTarget):
    """TBXark/mcp-proxy's config.json (v2).

    Per server: stdio ``command``/``args``/``env``; remote ``url``/``headers`` with
    ``transportType`` (``streamable-http`` or ``sse``, the proxy's default for a url);
    ``timeout`` (a Go duration: nanoseconds; applied to streamable HTTP only);
    ``options.toolFilter`` (``allow``/``block`` with exact names); ``options.disabled``.
    """

    name = "mcp-proxy"
    family: Family = "proxy"
    description = "TBXark/mcp-proxy (Go): config.json with mcpProxy + mcpServers"
    expands = True
    base = DEFAULT_PROXY
    listens = True

    def _back(self, text: str) -> str:
        return _back(text)

    def _finish(self, w: Writer, doc: dict[str, Any]) -> None:
        """``--listen`` into ``mcpProxy`` (``addr`` and ``baseURL``), then a warning when
        the proxy listens beyond this machine and a server it serves asks for no token.

        Raises:
            UsageError: ``--listen`` and the template's ``mcpProxy`` is not an object.
        """
        proxy = doc.get("mcpProxy")
        listen = w.request.listen
        if listen is not None:
            if not isinstance(proxy, dict):
                raise UsageError('the template\'s "mcpProxy" must be a JSON object for --listen')
            proxy["addr"], proxy["baseURL"] = listen.addr, listen.url
        if isinstance(proxy, dict) and isinstance(proxy.get("addr"), str):
            _exposure(w, proxy, doc.get("mcpServers"))

    def _server(self, w: Writer, name: str, entry: ServerEntry) -> dict[str, Any]:
        item: dict[str, Any] = {}
        transport = entry.effective_transport
        if not entry.is_remote:
            item.update(w.stdio(name, entry))
            if entry.cwd is not None:
                w.warn(name, "cwd", "is left out: mcp-proxy starts servers in its own directory")
            if entry.inherit_env:
                w.warn(name, "inherit_env", "is implied: mcp-proxy gives each server its "
                       "whole environment")  # fmt: skip
        else:
            item["transportType"] = transport
            item["url"] = w.text(name, "url", entry.url or "")
            headers = w.texts(name, "headers", {**entry.headers, **auth_headers(w, name, entry)})
            if headers:
                item["headers"] = headers
            if entry.auth is not None and entry.auth.type == "oauth":
                w.warn(name, "auth", "(oauth) is left out: mcp-proxy does not sign in, so it "
                       "connects without credentials")  # fmt: skip
        if entry.timeout is not None:
            if transport == "streamable-http":
                item["timeout"] = entry.timeout * NS_PER_MS
            else:
                w.warn(name, "timeout", f"is left out: mcp-proxy applies it to streamable "
                       f"HTTP only, not {transport}")  # fmt: skip
        options: dict[str, Any] = {}
        allow, deny = tool_lists(w, name, entry.tools)
        if allow is not None and not allow:
            w.warn(name, "tools", "allows no tool, which mcp-proxy cannot say (an empty list "
                   "is no filter): the server is disabled")  # fmt: skip
            options["disabled"] = True
        elif allow is not None:
            options["toolFilter"] = {"mode": "allow", "list": allow}
        elif deny:
            options["toolFilter"] = {"mode": "block", "list": deny}
        if options:
            item["options"] = options
        return item

    def _entry(self, r: Reader) -> ServerEntry | None:
        kind = r.text("transportType")
        command, url = r.text("command"), r.text("url")
        options = r.raw("options")
        if options is not None and not isinstance(options, dict):
            r.warnings.append(f"{r.name}: options is not an object: not imported")
        allow, deny, enabled = _options(r, options if isinstance(options, dict) else {})
        ns = r.number("timeout")
        timeout = r.timeout("timeout", ns / NS_PER_MS if ns is not None else None)
        if command is not None or kind == "stdio":
            args, env = r.texts("args") or (), r.mapping("env")
            r.rest({"headers": "applies to remote servers only"})
            if command is None:
                r.warnings.append(f"{r.name}: command is missing: skipped")
                return None
            return ServerEntry(command=command, args=args, env=env, timeout=timeout,
                               enabled=enabled, tools=filter_of(allow, deny))  # fmt: skip
        if url is None:
            r.warnings.append(f"{r.name}: entry has neither command nor url: skipped")
            return None
        headers, auth = split_bearer(r.mapping("headers"))
        r.rest({"env": "applies to stdio servers only", "args": "applies to stdio servers only"})
        # A url without transportType is SSE to mcp-proxy.
        transport: Transport = "streamable-http" if kind == "streamable-http" else "sse"
        return ServerEntry(url=url, transport=transport, headers=headers, auth=auth,
                           timeout=timeout, enabled=enabled,
                           tools=filter_of(allow, deny))  # fmt: skip


def _exposure(w: Writer, proxy: dict[str, Any], servers: Any) -> None:
    """Warn when ``addr`` is not loopback and a server has no auth token (mcp-proxy asks a
    server's clients for a token when its ``options.authTokens``, else those of
    ``mcpProxy.options``, has one)."""
    addr = str(proxy["addr"])
    if PLACEHOLDER_RE.search(addr) or BARE_RE.search(addr):
        return  # set where the proxy runs: unknown here
    try:
        listen = parse_listen(addr)
    except UsageError:
        return  # mcp-proxy's to refuse
    if listen.loopback:
        return
    shared = _tokens(proxy.get("options"))
    open_ = [
        name for name, item in (servers.items() if isinstance(servers, dict) else ())
        if not (_tokens(item.get("options")) if _has_tokens(item) else shared)
    ]  # fmt: skip
    if not open_:
        return
    where = "every interface" if listen.every_interface else listen.host
    if len(open_) == len(servers):
        who, what = "with no auth token", "every server"
    else:
        who, what = f"and {', '.join(open_)} {_have(open_)} no auth token", "them"
    w.warnings.append(
        f"mcpProxy: addr {addr} listens on {where} {who}: anyone who reaches it can use "
        f"{what}; set mcpProxy.options.authTokens (in a --template) or --listen 127.0.0.1:PORT"
    )


def _have(names: list[str]) -> str:
    return "has" if len(names) == 1 else "have"


def _has_tokens(item: Any) -> bool:
    options = item.get("options") if isinstance(item, dict) else None
    return isinstance(options, dict) and options.get("authTokens") is not None


def _tokens(options: Any) -> bool:
    """Whether ``options`` has an auth token (a non-empty string in ``authTokens``)."""
    found = options.get("authTokens") if isinstance(options, dict) else None
    return isinstance(found, list) and any(isinstance(t, str) and t.strip() for t in found)


def _options(r: Reader, options: dict[str, Any]) -> tuple[list[str] | None, list[str], bool]:
    allow: list[str] | None = None
    deny: list[str] = []
    chosen = options.get("toolFilter")
    if isinstance(chosen, dict):
        mode = str(chosen.get("mode", "")).lower()
        listed = chosen.get("list")
        names = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
        if mode == "allow" and names:
            allow = names
        elif mode == "block":
            deny = names
        elif names:
            r.warnings.append(f"{r.name}: options.toolFilter has mode {mode!r}: not imported")
    for key in options:
        if key not in ("toolFilter", "disabled"):
            r.warnings.append(f"{r.name}: options.{key} is a setting of mcp-proxy: not imported")
    return allow, deny, options.get("disabled") is not True


class OneMcpTarget(ServersTarget):
    """The 1mcp agent's mcp.json.

    Per server: ``type`` (always written: 1mcp guesses SSE for a url not ending in ``mcp``),
    stdio ``command``/``args``/``env``/``cwd``/``inheritParentEnv``/``envFilter``, remote
    ``url``/``headers``/``oauth``, ``connectionTimeout`` (ms), ``disabledTools`` (exact
    names), ``disabled``.
    """

    name = "1mcp"
    family: Family = "proxy"
    description = "1mcp agent: mcp.json (mcpServers, ${VAR} expanded by 1mcp)"
    expands = True
    listen_hint = "give it to the agent itself: 1mcp serve --host HOST --port PORT"

    def _back(self, text: str) -> str:
        return _back(text)

    def _document_notes(self, doc: dict[str, Any], warnings: list[str]) -> None:
        for key in ("serverDefaults", "mcpTemplates"):
            if doc.get(key):
                warnings.append(f"{key} is a 1mcp setting: not imported")

    def _server(self, w: Writer, name: str, entry: ServerEntry) -> dict[str, Any]:
        transport = entry.effective_transport
        item: dict[str, Any] = {"type": "http" if transport == "streamable-http" else transport}
        if not entry.is_remote:
            item.update(w.stdio(name, entry))
            if entry.cwd is not None:
                item["cwd"] = w.text(name, "cwd", entry.cwd)
            item["inheritParentEnv"] = True  # else 1mcp passes only the SDK's few variables
            if entry.inherit_env is not True:
                item["envFilter"] = names_to_pass(entry.inherit_env)
        else:
            item["url"] = w.text(name, "url", entry.url or "")
            headers = w.texts(name, "headers", {**entry.headers, **auth_headers(w, name, entry)})
            if headers:
                item["headers"] = headers
            if entry.auth is not None and entry.auth.type == "oauth":
                item["oauth"] = _oauth(w, name, entry.auth)
        if entry.timeout is not None:
            item["connectionTimeout"] = entry.timeout
        tools = entry.tools
        if tools is not None and tools.allow is not None:
            w.warn(name, "tools.allow", "is left out: 1mcp has no allow list, only "
                   "disabledTools, so every other tool is exposed")  # fmt: skip
        _, deny = tool_lists(w, name, ToolFilter(None, tools.deny) if tools else None)
        if deny:
            item["disabledTools"] = deny
        return item

    def _entry(self, r: Reader) -> ServerEntry | None:
        kind = r.text("type")
        command, url = r.text("command"), r.text("url")
        connect = r.number("connectionTimeout")
        fallback = r.number("timeout")
        timeout = r.timeout("timeout", connect if connect is not None else fallback)
        disabled = r.raw("disabled")
        if isinstance(disabled, str):
            r.warnings.append(f"{r.name}: disabled is a 1mcp template: imported as enabled")
        enabled = disabled is not True
        tools = filter_of(None, list(r.texts("disabledTools") or ()))
        ignored = {"tags": "is for 1mcp's routing", "requestTimeout": "has no field in mcpctl",
                   "restartOnExit": "is 1mcp's supervision", "maxRestarts": "is 1mcp's "
                   "supervision", "restartDelay": "is 1mcp's supervision"}  # fmt: skip
        if command is not None or kind == "stdio":
            env, inherit = _env(r)
            args, cwd = r.texts("args") or (), r.text("cwd")
            r.rest(ignored)
            if command is None:
                r.warnings.append(f"{r.name}: command is missing: skipped")
                return None
            return ServerEntry(command=command, args=args, env=env, cwd=cwd,
                               inherit_env=inherit, timeout=timeout, enabled=enabled,
                               tools=tools)  # fmt: skip
        if url is None:
            r.warnings.append(f"{r.name}: entry has neither command nor url: skipped")
            return None
        headers, auth = split_bearer(r.mapping("headers"))
        oauth = r.raw("oauth")
        if isinstance(oauth, dict):
            if auth is not None:  # the bearer header stays a header beside OAuth
                headers = r.mapping("headers")
            listed = oauth.get("scopes")
            listed = listed if isinstance(listed, list) else []
            scopes = tuple(s for s in listed if isinstance(s, str))
            auth = AuthConfig("oauth", scopes=scopes, client_id=_opt_str(oauth.get("clientId")),
                              client_secret=_opt_str(oauth.get("clientSecret")))  # fmt: skip
            for key in oauth:
                if key not in ("scopes", "clientId", "clientSecret"):
                    r.warnings.append(f"{r.name}: oauth.{key} is a 1mcp setting: not imported")
        r.rest(ignored)
        if kind is None:  # 1mcp's own guess
            kind = "http" if url.endswith("mcp") else "sse"
        remote: Transport = "sse" if kind == "sse" else "streamable-http"
        return ServerEntry(url=url, transport=remote, headers=headers, auth=auth,
                           timeout=timeout, enabled=enabled, tools=tools)  # fmt: skip


def _oauth(w: Writer, name: str, auth: AuthConfig) -> dict[str, Any]:
    w.warn(name, "auth", "(oauth): sign-in happens in 1mcp (its own OAuth flow and tokens)")
    out: dict[str, Any] = {}
    if auth.scopes:
        out["scopes"] = list(auth.scopes)
    if auth.client_id is not None:
        out["clientId"] = w.text(name, "auth.client_id", auth.client_id)
    if auth.client_secret is not None:
        out["clientSecret"] = w.text(name, "auth.client_secret", auth.client_secret)
    for field in ("client_metadata_url", "callback_port"):
        if getattr(auth, field) is not None:
            w.warn(name, f"auth.{field}", "is left out: 1mcp has no such setting")
    return out


def _opt_str(value: Any) -> str | None:
    return _back(value) if isinstance(value, str) else None


def _env(r: Reader) -> tuple[dict[str, str], bool | tuple[str, ...]]:
    """env as an object, or 1mcp's list (``KEY=value``, and ``KEY`` alone: inherit KEY)."""
    raw = r.data.get("env")
    names: list[str] = []
    if isinstance(raw, list) and all(isinstance(v, str) for v in raw):
        r.seen.add("env")
        env: dict[str, str] = {}
        for item in raw:
            key, eq, value = item.partition("=")
            if eq:
                env[key.strip()] = _back(value)
            else:
                names.append(item.strip())
    else:
        env = r.mapping("env")
    inherit: bool | tuple[str, ...] = tuple(names) if names else False
    if r.flag("inheritParentEnv"):
        patterns = r.texts("envFilter")
        if patterns is None:
            inherit = True
        elif all(INHERIT_NAME_RE.fullmatch(p) for p in patterns):
            inherit = own_names(tuple(dict.fromkeys([*names, *patterns]))) or False
        else:
            r.warnings.append(f"{r.name}: envFilter has patterns: imported as inherit_env: true")
            inherit = True
    else:
        r.seen.add("envFilter")
    return env, inherit


TARGETS: dict[str, Any] = {
    target.name: target
    for target in (McpProxyTarget(), FastMCPTarget(), McpProxyPyTarget(), OneMcpTarget())
}
