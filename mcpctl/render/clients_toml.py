"""Codex (the OpenAI CLI): ``[mcp_servers.NAME]`` tables in ``~/.codex/config.toml``.

Codex expands no placeholders in this file, but it can take a value from the environment in
three places, which mcpctl uses when a value is exactly ``${VAR}``: ``bearer_token_env_var``
(bearer auth), ``env_http_headers`` (a header) and ``env_vars`` (``inherit_env`` names).
Everything else follows the inline rule. Codex speaks stdio and streamable HTTP: an SSE server
is left out.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.render.base import Places, Target
from mcpctl.render.clients import (
    NO_SYNTAX,
    RenderContext,
    foreign,
    returned_remote,
    timeout_in,
)
from mcpctl.render.clients_base import ClientBase
from mcpctl.render.clients_json import scoped

__all__ = ["TARGETS", "Codex"]

_EXACT = re.compile(r"\$\{(?P<name>[A-Z_][A-Z0-9_]*)\}")


def _codex_user(p: Places) -> list[Path]:
    home = p.environ.get("CODEX_HOME")
    return [(Path(home) if home else p.home / ".codex") / "config.toml"]


def _env_name(value: str | None) -> str | None:
    """``VAR`` when ``value`` is exactly ``${VAR}``."""
    match = _EXACT.fullmatch(value or "")
    return match["name"] if match else None


class Codex(ClientBase):
    """Codex's ``mcp_servers`` tables."""

    file_format: Literal["json", "toml", "yaml"] = "toml"

    def entry_out(self, name: str, entry: ServerEntry, ctx: RenderContext) -> Any:
        """One ``[mcp_servers.NAME]`` table (``None`` for an SSE server)."""
        if entry.effective_transport == "sse":
            ctx.warn(name, "transport", "is SSE: Codex has no SSE transport; the server is "
                     "left out")  # fmt: skip
            return None
        out: dict[str, Any] = {}
        if entry.is_remote:
            out["url"] = ctx.literal(name, "url", entry.url or "")
            self._remote_auth(name, entry, ctx, out)
        else:
            out["command"] = ctx.literal(name, "command", entry.command or "")
            if entry.args:
                out["args"] = [ctx.literal(name, "args", a) for a in entry.args]
            if entry.env:
                out["env"] = {k: ctx.literal(name, f"env.{k}", v) for k, v in entry.env.items()}
            if entry.cwd is not None:
                out["cwd"] = ctx.literal(name, "cwd", entry.cwd)
            if isinstance(entry.inherit_env, tuple) and entry.inherit_env:
                out["env_vars"] = list(entry.inherit_env)
        if entry.timeout is not None:
            if entry.timeout % 1000:
                out["startup_timeout_ms"] = entry.timeout
            else:
                out["startup_timeout_sec"] = entry.timeout // 1000
        tools = entry.tools
        if tools is not None and tools.allow is not None:
            out["enabled_tools"] = list(tools.allow)
        if tools is not None and tools.deny:
            out["disabled_tools"] = list(tools.deny)
        self.unsupported(name, entry, ctx, "cwd timeout allow deny" + (
            " inherit_env" if entry.inherit_env is not True else ""))  # fmt: skip
        return out

    def _remote_auth(
        self, name: str, entry: ServerEntry, ctx: RenderContext, out: dict[str, Any]
    ) -> None:
        auth = entry.auth
        headers = dict(entry.headers)
        if auth is not None and auth.type == "bearer" and _env_name(auth.token):
            out["bearer_token_env_var"] = _env_name(auth.token)
        elif auth is not None and auth.type == "oauth":
            ctx.warn(name, "auth", f"is OAuth: sign-in happens in Codex (codex mcp login {name})")
            if auth.scopes:
                out["scopes"] = list(auth.scopes)
        else:
            headers.update(self.auth_headers(name, entry, ctx))
        static: dict[str, str] = {}
        from_env: dict[str, str] = {}
        for key, value in headers.items():
            var = _env_name(value)
            if var is not None:
                from_env[key] = var
            else:
                static[key] = ctx.literal(name, f"headers.{key}", value)
        if static:
            out["http_headers"] = static
        if from_env:
            out["env_http_headers"] = from_env

    def dump(self, doc: dict[str, Any]) -> str:
        """TOML text (``--install`` edits the client's file with tomlkit, keeping comments)."""
        import tomli_w

        text = tomli_w.dumps(doc)
        return text if text.endswith("\n") else text + "\n"

    def load(self, text: str) -> Any:
        """The TOML document.

        Raises:
            UsageError: not TOML.
        """
        from mcpctl.render.readers import DocumentError, load_toml

        try:
            return load_toml(text)
        except DocumentError as exc:
            raise exc.usage("a Codex config.toml") from None

    def entry_in(
        self, name: str, raw: dict[str, Any], warnings: list[str]
    ) -> dict[str, Any] | None:
        """One ``[mcp_servers.NAME]`` table as mcpctl's entry data."""
        data: dict[str, Any] = {}
        if "command" in raw:
            for key in ("command", "args", "env", "cwd"):
                if key in raw:
                    data[key] = raw.pop(key)
            if "env_vars" in raw:
                names = raw.pop("env_vars")
                if isinstance(names, list):
                    names = [n.get("name") if isinstance(n, dict) else n for n in names]
                data["inherit_env"] = names
        elif "url" in raw:
            data["url"] = raw.pop("url")
            headers = raw.pop("http_headers", None)
            headers = dict(headers) if isinstance(headers, dict) else {}
            env_headers = raw.pop("env_http_headers", None)
            if isinstance(env_headers, dict):
                headers.update({k: "${" + str(v) + "}" for k, v in env_headers.items()})
            if headers:
                data["headers"] = headers
            bearer = raw.pop("bearer_token_env_var", None)
            scopes = raw.pop("scopes", None)
            if isinstance(bearer, str):
                data["auth"] = {"type": "bearer", "token": "${" + bearer + "}"}
            elif scopes is not None:
                data["auth"] = {"type": "oauth", "scopes": scopes}
        else:
            warnings.append(f"{name}: has neither 'command' nor 'url'; not imported")
            return None
        if isinstance(raw.get("enabled"), bool):
            data["enabled"] = raw.pop("enabled")
        if "startup_timeout_ms" in raw:
            data["timeout"] = timeout_in(raw.pop("startup_timeout_ms"), 1)
        elif "startup_timeout_sec" in raw:
            data["timeout"] = timeout_in(raw.pop("startup_timeout_sec"), 1000)
        tools = {k: raw.pop(f) for k, f in (("allow", "enabled_tools"), ("deny", "disabled_tools"))
                 if f in raw}  # fmt: skip
        if tools:
            data["tools"] = tools
        foreign(name, raw, warnings, self.label)
        return data

    def expressible(self, entry: ServerEntry) -> ServerEntry | None:
        """``entry`` as Codex holds it (``None`` for SSE)."""
        if entry.effective_transport == "sse":
            return None
        auth = entry.auth
        remote = returned_remote(entry, str, sse=False)
        if auth is not None and auth.type == "bearer" and _env_name(auth.token):
            remote.update(headers=dict(entry.headers), auth=auth)
        elif auth is not None and auth.type == "oauth":
            kept = AuthConfig("oauth", scopes=auth.scopes) if auth.scopes else None
            remote.update(headers=dict(entry.headers), auth=kept)
            if kept is None:
                remote.update(returned_remote(replace(entry, auth=None), str, sse=False))
        inherit = entry.inherit_env if isinstance(entry.inherit_env, tuple) else False
        return ServerEntry(
            command=entry.command, args=entry.args, env=dict(entry.env), cwd=entry.cwd,
            inherit_env=inherit, timeout=entry.timeout, enabled=entry.enabled,
            tools=entry.tools if entry.tools != ToolFilter() else None, **remote,
        )  # fmt: skip


TARGETS: dict[str, Target] = {
    "codex": Codex(
        "codex", "Codex", "OpenAI Codex CLI: [mcp_servers.NAME] in ~/.codex/config.toml",
        section=("mcp_servers",), syntax=NO_SYNTAX,
        where=scoped(_codex_user, lambda p: [p.cwd / ".codex" / "config.toml"]),
    )
}  # fmt: skip
