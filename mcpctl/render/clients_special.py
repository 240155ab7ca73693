"""JSON clients with a twist: Claude Desktop (local servers only), VS Code (inputs), opencode.

* Claude Desktop's file holds local servers only: a remote server is written as the
  ``mcp-remote`` stdio bridge (``npx -y mcp-remote URL --header ...``), and such a bridge
  reads back as the remote server it stands for.
* VS Code prompts for secrets: a secret placeholder becomes ``${input:VAR}`` with an
  ``inputs`` item (a password prompt), any other ``${env:VAR}``.
* opencode has ``local``/``remote`` servers, the command as one array and ``{env:VAR}``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from mcpctl.config.model import ServerEntry, ToolFilter
from mcpctl.config.placeholders import PLACEHOLDER_RE
from mcpctl.render.base import Places, Rendered, RenderRequest, Target
from mcpctl.render.clients import (
    RenderContext,
    Syntax,
    appdata,
    config_home,
    foreign,
    returned_remote,
    timeout_in,
    vscode_user,
)
from mcpctl.render.clients_base import ClientBase, McpServersClient
from mcpctl.render.clients_json import scoped

__all__ = ["TARGETS", "ClaudeDesktop", "OpenCode", "VsCode"]

_NAME = r"[A-Z_][A-Z0-9_]*"
_BRIDGE = re.compile(r"mcp-remote(?:@\S+)?")
_VAR = re.compile(rf"\$\{{(?P<name>{_NAME})\}}")


def _claude_desktop_user(p: Places) -> list[Path]:
    if p.system == "darwin":
        base = p.home / "Library" / "Application Support" / "Claude"
    elif p.system == "win32":
        base = appdata(p) / "Claude"
    else:
        base = config_home(p) / "Claude"
    return [base / "claude_desktop_config.json"]


class ClaudeDesktop(McpServersClient):
    """Claude Desktop: local servers, remote ones through ``mcp-remote``; no placeholders."""

    def entry_out(self, name: str, entry: ServerEntry, ctx: RenderContext) -> Any:
        """A local server as is; a remote one as the ``mcp-remote`` bridge."""
        if not entry.is_remote:
            return super().entry_out(name, entry, ctx)
        ctx.warn(name, "url", "is reached through the mcp-remote bridge (npx -y mcp-remote): "
                 "Claude Desktop's file holds local servers only (a connector in its settings "
                 "is the other way)")  # fmt: skip
        args = ["-y", "mcp-remote", ctx.literal(name, "url", entry.url or "")]
        if entry.auth is not None and entry.auth.type == "oauth":
            ctx.warn(name, "auth", "is OAuth: mcp-remote signs in (a browser opens on first use)")
            headers = dict(entry.headers)
        else:
            headers = {**entry.headers, **self.auth_headers(name, entry, ctx)}
        env: dict[str, str] = {}
        for key, value in headers.items():
            shown = value
            if PLACEHOLDER_RE.search(value) or " " in value:
                # Through an environment variable: mcp-remote expands it, and spaces in args
                # are mangled on Windows.
                var = _header_var(key, env)
                env[var] = ctx.literal(name, f"headers.{key}", value)
                shown = "${" + var + "}"
            args += ["--header", f"{key}:{shown}"]
        if entry.effective_transport == "sse":
            args += ["--transport", "sse-only"]
        tools = entry.tools
        for pattern in tools.deny if tools is not None else ():
            args += ["--ignore-tool", pattern]
        if tools is not None and tools.allow is not None:
            ctx.warn(name, "tools.allow", "is not written: mcp-remote has no tool allow-list")
        if entry.timeout is not None:
            ctx.warn(name, "timeout", "is not written: Claude Desktop has no per-server timeout")
        out: dict[str, Any] = {"command": "npx", "args": args}
        if env:
            out["env"] = env
        return out

    def entry_in(
        self, name: str, raw: dict[str, Any], warnings: list[str]
    ) -> dict[str, Any] | None:
        """A server; an ``mcp-remote`` bridge comes back as the remote server."""
        data = _bridge_in(name, raw, warnings)
        if data is None:
            return super().entry_in(name, raw, warnings)
        self.common_in(name, raw, data)
        foreign(name, raw, warnings, self.label)
        return data

    def expressible(self, entry: ServerEntry) -> ServerEntry | None:
        """Local servers as written; remote ones keep url, headers, SSE and the deny-list."""
        out = super().expressible(entry)
        if out is None or not entry.is_remote:
            return out
        deny = entry.tools.deny if entry.tools is not None else ()
        return replace(out, tools=ToolFilter(None, deny) if deny else None)


def _header_var(header: str, env: dict[str, str]) -> str:
    base = "MCP_HEADER_" + re.sub(r"[^A-Za-z0-9]+", "_", header).upper().strip("_")
    var, n = base, 2
    while var in env:
        var, n = f"{base}_{n}", n + 1
    return var


def _bridge_in(name: str, raw: dict[str, Any], warnings: list[str]) -> dict[str, Any] | None:
    """The remote server an ``npx mcp-remote URL ...`` entry stands for (``None``: not one)."""
    args, env = raw.get("args"), raw.get("env", {})
    if raw.get("command") != "npx" or not isinstance(args, list) or not isinstance(env, dict):
        return None
    if not all(isinstance(a, str) for a in args) or not all(
        isinstance(v, str) for v in env.values()
    ):
        return None
    rest = args[1:] if args[:1] == ["-y"] else args
    if len(rest) < 2 or not _BRIDGE.fullmatch(rest[0]) or not rest[1].startswith("http"):
        return None
    headers: dict[str, str] = {}
    deny: list[str] = []
    sse = False
    flags = rest[2:]
    for flag, value in zip(flags[::2], flags[1::2], strict=False):
        if flag == "--header" and ":" in value:
            key, _, text = value.partition(":")
            headers[key.strip()] = text.lstrip()
        elif flag == "--transport" and value in (
            "sse-only",
            "sse-first",
            "http-only",
            "http-first",
        ):
            sse = value.startswith("sse")
        elif flag == "--ignore-tool":
            deny.append(value)
        else:
            return None  # a flag mcpctl has no setting for: keep the bridge as a local server
    if len(flags) % 2:
        return None
    env = dict(env)
    used: set[str] = set()

    def from_env(match: re.Match[str]) -> str:
        if match["name"] in env:
            used.add(match["name"])
            return str(env[match["name"]])
        return match.group(0)

    headers = {k: _VAR.sub(from_env, v) for k, v in headers.items()}
    for var in used:
        del env[var]
    for key in ("command", "args", "env"):
        raw.pop(key, None)
    if env:
        warnings.append(f"{name}: env is not imported: the remote server it bridges has none")
    data: dict[str, Any] = {"url": rest[1]}
    if headers:
        data["headers"] = headers
    if sse:
        data["transport"] = "sse"
    if deny:
        data["tools"] = {"deny": deny}
    return data


def _is_secret(name: str) -> bool:
    from mcpctl.config.redaction import ENV_SECRET_NAME_RE

    return ENV_SECRET_NAME_RE.search(name) is not None


# An id stops at a "$" too: each try then ends where the next one starts (with "[^}]+" alone,
# a value of many "${input:" and no "}" took quadratic time).
_VSCODE_BACK = re.compile(r"\$\{(?P<kind>env|input):(?P<id>[^}$]++)\}")


def _vscode_back(match: re.Match[str]) -> str:
    ident = match["id"]
    if match["kind"] == "input":
        ident = re.sub(r"[^A-Za-z0-9]+", "_", ident).strip("_").upper() or "INPUT"
        ident = ident if re.match(r"[A-Z_]", ident) else "_" + ident
    elif not re.fullmatch(_NAME, ident):
        return match.group(0)
    return "${" + ident + "}"


class VsCode(McpServersClient):
    """VS Code's ``mcp.json``: ``servers`` plus an ``inputs`` item per secret placeholder
    (a variable named like a secret, or one only the keyring holds)."""

    prompts_secrets = True

    def render(self, request: RenderRequest) -> Rendered:
        """``servers`` and ``inputs`` (a password prompt per secret variable used).

        Raises:
            UsageError: the template has something other than an object where servers go.
        """
        ctx = RenderContext(self, request)
        inputs: dict[str, str] = {}  # variable -> first server using it
        current = [""]

        def spell(var: str, _default: str | None) -> str:
            if _is_secret(var) or var in request.keyring_vars:
                inputs.setdefault(var, current[0])
                return "${input:" + var + "}"
            return "${env:" + var + "}"

        ctx.syntax = Syntax(self.syntax.label, spell)
        servers: dict[str, Any] = {}
        for name, entry in request.entries.items():
            current[0] = name
            servers[name] = self.entry_out(name, entry, ctx)
        doc = self.document(servers, ctx)
        if inputs:
            ours = [
                {"type": "promptString", "id": var, "description": f"{var} for {server}",
                 "password": True}
                for var, server in inputs.items()
            ]  # fmt: skip
            old = doc.get("inputs")
            kept = [
                i
                for i in (old if isinstance(old, list) else [])
                if not (isinstance(i, dict) and i.get("id") in inputs)
            ]
            doc["inputs"] = kept + ours
        return Rendered(self.dump(doc), ctx.warnings, ctx.holds_secrets)

    def read(self, value: Any) -> Any:
        """``${input:ID}`` and ``${env:VAR}`` back to ``${VAR}``."""
        if isinstance(value, str):
            return _VSCODE_BACK.sub(_vscode_back, value)
        return super().read(value)


_OPENCODE = Syntax(
    "{env:VAR}",
    lambda var, _default: "{env:" + var + "}",
    back=re.compile(rf"(?<!\$)\{{env:(?P<name>{_NAME})\}}"),
)


class OpenCode(ClientBase):
    """opencode: ``mcp`` holds ``local`` (command array, ``environment``) and ``remote``."""

    def entry_out(self, name: str, entry: ServerEntry, ctx: RenderContext) -> Any:
        """A ``local`` or ``remote`` server."""
        out: dict[str, Any]
        if entry.is_remote:
            if entry.effective_transport == "sse":
                ctx.warn(name, "transport", "is not written: opencode has no SSE setting (it "
                         "tries streamable HTTP, then SSE)")  # fmt: skip
            out = {"type": "remote", "url": ctx.text(name, "url", entry.url or "")}
            headers = {**entry.headers, **self.auth_headers(name, entry, ctx)}
            if headers:
                out["headers"] = {k: ctx.text(name, f"headers.{k}", v) for k, v in headers.items()}
        else:
            command = [ctx.text(name, "command", entry.command or "")]
            out = {
                "type": "local",
                "command": command + [ctx.text(name, "args", a) for a in entry.args],
            }
            if entry.env:
                out["environment"] = {
                    k: ctx.text(name, f"env.{k}", v) for k, v in entry.env.items()
                }
        if entry.timeout is not None:
            out["timeout"] = entry.timeout
        self.unsupported(name, entry, ctx, "timeout")
        return out

    def servers_of(self, doc: Any) -> Any:
        """``mcp`` (or ``mcp.servers``, opencode's newer layout).

        Raises:
            UsageError: not an opencode config, or ``mcp`` is not an object.
        """
        servers = super().servers_of(doc)
        inner = servers.get("servers")
        if isinstance(inner, dict) and "type" not in inner:
            return inner
        return servers

    def entry_in(
        self, name: str, raw: dict[str, Any], warnings: list[str]
    ) -> dict[str, Any] | None:
        """A ``local`` or ``remote`` server as mcpctl's entry data."""
        kind = raw.pop("type", None)
        data: dict[str, Any] = {}
        command = raw.get("command")
        if kind == "local" and isinstance(command, list) and command:
            raw.pop("command")
            data["command"], *args = self.read(command)
            if args:
                data["args"] = args
            if "environment" in raw:
                data["env"] = self.read(raw.pop("environment"))
        elif kind == "remote" and "url" in raw:
            data["url"] = self.read(raw.pop("url"))
            if "headers" in raw:
                data["headers"] = self.read(raw.pop("headers"))
        else:
            warnings.append(f"{name}: is neither a local server with a command nor a remote one "
                            "with a url; not imported")  # fmt: skip
            return None
        if isinstance(raw.get("enabled"), bool):
            data["enabled"] = raw.pop("enabled")
        if isinstance(raw.get("disabled"), bool):
            data["enabled"] = not raw.pop("disabled")
        if "timeout" in raw:
            data["timeout"] = timeout_in(raw.pop("timeout"), 1)
        foreign(name, raw, warnings, self.label)
        return data

    def expressible(self, entry: ServerEntry) -> ServerEntry | None:
        """command, args, env, url, headers and timeout (SSE is found by opencode itself)."""
        text = self.normal_text
        return ServerEntry(
            command=text(entry.command) if entry.command is not None else None,
            args=tuple(text(a) for a in entry.args),
            env={k: text(v) for k, v in entry.env.items()},
            timeout=entry.timeout,
            enabled=entry.enabled,
            **returned_remote(entry, text, sse=False),
        )


_ALL: list[ClientBase] = [
    ClaudeDesktop(
        "claude-desktop", "Claude Desktop",
        "Claude Desktop: claude_desktop_config.json (remote servers through mcp-remote)",
        sse="type", where=scoped(_claude_desktop_user),
    ),
    VsCode(
        "vscode", "VS Code", "VS Code: servers in mcp.json, secrets as ${input:...} prompts",
        section=("servers",), keyed_lists={"inputs": "id"},
        syntax=Syntax("${input:VAR} / ${env:VAR}", lambda v, _d: v),
        types={"stdio": "stdio", "streamable-http": "http", "sse": "sse"}, sse="type", cwd=True,
        where=scoped(lambda p: [vscode_user(p) / "mcp.json"],
                     lambda p: [p.cwd / ".vscode" / "mcp.json"]),
    ),
    OpenCode(
        "opencode", "opencode", "opencode: mcp in opencode.json (local and remote servers)",
        section=("mcp",), syntax=_OPENCODE,
        where=scoped(lambda p: [config_home(p) / "opencode" / "opencode.json"],
                     lambda p: [p.cwd / "opencode.json"]),
    ),
]  # fmt: skip

TARGETS: dict[str, Target] = {client.name: client for client in _ALL}
