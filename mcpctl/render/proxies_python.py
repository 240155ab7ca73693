"""The two Python proxy targets: ``fastmcp`` and ``mcp-proxy-py``.

* ``fastmcp``: the ``mcpServers`` document that ``fastmcp.Client(config)`` and
  ``create_proxy(config)`` load (FastMCP's ``MCPConfig``). Tool filters become FastMCP tool
  transforms: a denied tool gets ``{"enabled": false}``; an allow list tags its tools
  ``mcpctl-allow`` and sets ``include_tags``.
* ``mcp-proxy-py``: the ``--named-server-config`` file of the PyPI ``mcp-proxy``, which reads
  ``command``, ``args``, ``env`` and ``enabled`` only. A remote server becomes a stdio bridge
  through mcp-proxy's own client mode (``mcp-proxy URL --transport streamablehttp -H K V``),
  and reading the file back turns such a bridge into the remote entry again.

Neither expands variables: placeholders stay as written (with a warning) unless secrets are
inlined.
"""

from __future__ import annotations

import re
from typing import Any

from mcpctl.config.model import AuthConfig, ServerEntry, Transport
from mcpctl.render.base import Family, Parsed
from mcpctl.render.proxies_common import (
    Reader,
    ServersTarget,
    Writer,
    auth_headers,
    filter_of,
    load_servers,
    split_bearer,
    tool_lists,
    valid_name,
)

__all__ = ["ALLOW_TAG", "BRIDGE", "FastMCPTarget", "McpProxyPyTarget"]

ALLOW_TAG = "mcpctl-allow"
BRIDGE = "mcp-proxy"
# FastMCP guesses SSE from a url path with /sse in it (infer_transport_type_from_url).
SSE_PATH_RE = re.compile(r"/sse(/|\?|&|$)")
FASTMCP_ONLY = ("keep_alive", "icon", "authentication", "sse_read_timeout", "max_sse_event_size")
BRIDGE_TRANSPORTS = {"streamable-http": "streamablehttp", "sse": "sse"}


def _same(text: str) -> str:
    return text


def _stdio_env_warning(w: Writer, name: str, entry: ServerEntry, how: str) -> None:
    if entry.cwd is not None and w.target == "mcp-proxy-py":
        w.warn(name, "cwd", "is left out: mcp-proxy starts named servers in its own directory")
    if entry.inherit_env:
        w.warn(name, "inherit_env", f"is left out: {how}")


class FastMCPTarget(ServersTarget):
    """FastMCP's MCPConfig: stdio ``command``/``args``/``env``/``cwd``; remote ``url`` with
    ``transport`` (``http`` or ``sse``), ``headers``, ``auth: "oauth"``; ``timeout`` (ms),
    ``description``, ``tools``/``include_tags`` for tool filters."""

    name = "fastmcp"
    family: Family = "proxy"
    description = "FastMCP: the mcpServers config of fastmcp.Client and its proxy"
    listen_hint = "give the address to what serves the proxy (run_async(host=..., port=...))"

    def _server(self, w: Writer, name: str, entry: ServerEntry) -> dict[str, Any]:
        item: dict[str, Any] = {}
        if not entry.is_remote:
            item.update(w.stdio(name, entry))
            if entry.cwd is not None:
                item["cwd"] = w.text(name, "cwd", entry.cwd)
            _stdio_env_warning(w, name, entry, "FastMCP gives a server the MCP SDK's default "
                               "environment and env only: name the variables in env")  # fmt: skip
        else:
            item["url"] = w.text(name, "url", entry.url or "")
            item["transport"] = "sse" if entry.effective_transport == "sse" else "http"
            headers = w.texts(name, "headers", {**entry.headers, **auth_headers(w, name, entry)})
            if headers:
                item["headers"] = headers
            if entry.auth is not None and entry.auth.type == "oauth":
                item["auth"] = "oauth"
                w.warn(name, "auth", "(oauth): sign-in happens in FastMCP (a browser flow on "
                       "first connect); scopes and client settings are not carried")  # fmt: skip
        if entry.timeout is not None:
            item["timeout"] = entry.timeout
        if entry.description is not None:
            item["description"] = entry.description
        allow, deny = tool_lists(w, name, entry.tools)
        if allow is not None:
            if allow:
                item["tools"] = {tool: {"tags": [ALLOW_TAG]} for tool in allow}
            item["include_tags"] = [ALLOW_TAG]
        elif deny:
            item["tools"] = {tool: {"enabled": False} for tool in deny}
        return item

    def _entry(self, r: Reader) -> ServerEntry | None:
        command, url = r.text("command"), r.text("url")
        kind = r.text("transport") or r.text("type")
        timeout = r.timeout("timeout", r.number("timeout"))
        description = r.text("description")
        allow, deny = _transforms(r)
        tools = filter_of(allow, deny)
        ignored = dict.fromkeys(FASTMCP_ONLY, "is a FastMCP setting")
        if command is not None:
            args, env, cwd = r.texts("args") or (), r.mapping("env"), r.text("cwd")
            r.rest(ignored)
            return ServerEntry(command=command, args=args, env=env, cwd=cwd, timeout=timeout,
                               description=description, tools=tools)  # fmt: skip
        if url is None:
            r.warnings.append(f"{r.name}: entry has neither command nor url: skipped")
            return None
        headers, auth = split_bearer(r.mapping("headers"))
        given = r.raw("auth")
        if given == "oauth":
            auth = AuthConfig("oauth")
        elif isinstance(given, str):
            auth = AuthConfig("bearer", token=given)
        elif given is not None:
            r.warnings.append(f"{r.name}: auth is not a string: not imported")
        r.rest(ignored)
        if kind is None:
            from urllib.parse import urlsplit

            kind = "sse" if SSE_PATH_RE.search(urlsplit(url).path) else "http"
        transport: Transport = "sse" if kind == "sse" else "streamable-http"
        return ServerEntry(url=url, transport=transport, headers=headers, auth=auth,
                           timeout=timeout, description=description, tools=tools)  # fmt: skip


def _transforms(r: Reader) -> tuple[list[str] | None, list[str]]:
    """Tool filters back from FastMCP's tool transforms (only the forms render writes)."""
    transforms = r.raw("tools")
    include = r.raw("include_tags")
    if r.raw("exclude_tags") is not None:
        r.warnings.append(f"{r.name}: exclude_tags is a FastMCP setting: not imported")
    allow: list[str] | None = [] if include == [ALLOW_TAG] else None
    if include is not None and allow is None:
        r.warnings.append(f"{r.name}: include_tags is a FastMCP setting: not imported")
    deny: list[str] = []
    for tool, change in (transforms or {}).items() if isinstance(transforms, dict) else ():
        if change == {"enabled": False}:
            deny.append(tool)
        elif change == {"tags": [ALLOW_TAG]} and allow is not None:
            allow.append(tool)
        else:
            r.warnings.append(f"{r.name}: tools.{tool} is a FastMCP tool transform: "
                              "not imported")  # fmt: skip
    return allow, ([] if allow is not None else deny)


class McpProxyPyTarget(ServersTarget):
    """The PyPI mcp-proxy's ``--named-server-config``: ``command``, ``args``, ``env``."""

    name = "mcp-proxy-py"
    family: Family = "proxy"
    description = "mcp-proxy from PyPI: the --named-server-config file (remote via bridge)"
    listen_hint = "give it to mcp-proxy itself: --host HOST --port PORT"

    def _server(self, w: Writer, name: str, entry: ServerEntry) -> dict[str, Any]:
        if not entry.is_remote:
            item: dict[str, Any] = w.stdio(name, entry)
            _stdio_env_warning(w, name, entry, "named servers get the MCP SDK's default "
                               "environment and env only (mcp-proxy --pass-environment "
                               "passes everything to every server)")  # fmt: skip
        else:
            item = {"command": BRIDGE, "args": self._bridge(w, name, entry)}
        if entry.timeout is not None:
            w.warn(name, "timeout", "is left out: mcp-proxy has no timeout per named server")
        if entry.tools is not None:
            w.warn(name, "tools", "is left out: mcp-proxy does not filter tools, so all of "
                   "them are exposed")  # fmt: skip
        return item

    def _bridge(self, w: Writer, name: str, entry: ServerEntry) -> list[str]:
        args = [w.text(name, "url", entry.url or ""),
                "--transport", BRIDGE_TRANSPORTS[entry.effective_transport]]  # fmt: skip
        auth = entry.auth
        if auth is not None and auth.type == "basic":
            args += ["--username", w.text(name, "auth.username", auth.username or ""),
                     "--password", w.text(name, "auth.password", auth.password or "")]  # fmt: skip
            headers = dict(entry.headers)
        else:
            headers = {**entry.headers, **auth_headers(w, name, entry)}
        for key, value in w.texts(name, "headers", headers).items():
            args += ["-H", key, value]
        if auth is not None and auth.type == "oauth":
            w.warn(name, "auth", "(oauth) is left out: mcp-proxy's client does not sign in, "
                   "so it connects without credentials")  # fmt: skip
        return args

    def parse(self, text: str) -> Parsed:
        """The servers of a named-server config; a bridge to a url reads as that remote.

        Raises:
            UsageError: ``text`` is not such a document.
        """
        _, servers = load_servers(text, self.name)
        out = Parsed()
        for name, data in servers.items():
            if not valid_name(name, data, out.warnings):
                continue
            r = Reader(name, data, out.warnings, _same)
            command, args, env = r.text("command"), r.texts("args") or (), r.mapping("env")
            enabled = r.flag("enabled") is not False
            not_read = "is not read by mcp-proxy"
            r.rest({"disabled": not_read, "timeout": not_read, "transportType": not_read})
            if command is None:
                out.warnings.append(f"{name}: command is missing: skipped")
                continue
            entry = _from_bridge(args) if _is_bridge(command, args) else None
            if entry is None:
                if _is_bridge(command, args):
                    out.warnings.append(f"{name}: its mcp-proxy arguments are not all "
                                        "understood: imported as a stdio server")  # fmt: skip
                entry = ServerEntry(command=command, args=args, env=env)
            elif env:
                out.warnings.append(f"{name}: env of the bridge is not imported")
            out.entries[name] = entry if enabled else _disabled(entry)
        return out


def _disabled(entry: ServerEntry) -> ServerEntry:
    from dataclasses import replace

    return replace(entry, enabled=False)


def _is_bridge(command: str, args: tuple[str, ...]) -> bool:
    program = command.replace("\\", "/").rsplit("/", 1)[-1]
    return program == BRIDGE and bool(args) and args[0].startswith(("http://", "https://"))


def _from_bridge(args: tuple[str, ...]) -> ServerEntry | None:
    """The remote entry of ``mcp-proxy URL [--transport T] [-H K V]... [--username U
    --password P]``, or ``None`` for anything else."""
    url, transport = args[0], "sse"  # mcp-proxy's default transport
    headers: dict[str, str] = {}
    login: dict[str, str] = {}
    rest = list(args[1:])
    while rest:
        flag = rest.pop(0)
        if flag.startswith("--transport="):
            transport = flag.partition("=")[2]
        elif flag in ("-H", "--headers") and len(rest) >= 2:
            headers[rest[0]] = rest[1]
            del rest[:2]
        elif flag in ("--transport", "--username", "--password") and rest:
            value = rest.pop(0)
            if flag == "--transport":
                transport = value
            else:
                login[flag] = value
        else:
            return None
    if transport not in BRIDGE_TRANSPORTS.values() or len(login) == 1:
        return None
    auth: AuthConfig | None = None
    if login:
        auth = AuthConfig("basic", username=login["--username"], password=login["--password"])
    else:
        headers, auth = split_bearer(headers)
    kind: Transport = "streamable-http" if transport == "streamablehttp" else "sse"
    return ServerEntry(url=url, transport=kind, headers=headers, auth=auth)
