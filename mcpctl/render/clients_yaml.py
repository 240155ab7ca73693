"""The YAML clients: Continue (an ``mcpServers`` list) and Goose (``extensions``).

* Continue reads ``~/.continue/config.yaml`` and the block files of ``.continue/mcpServers/``
  (YAML, or JSON in the Claude Desktop shape); secrets are ``${{ secrets.VAR }}``.
* Goose keeps ``extensions`` in its ``config.yaml``; it expands nothing, but ``env_keys``
  names variables Goose takes from its secret store or the environment: an ``env`` value that
  is exactly ``${NAME}`` (its own name) becomes one. Goose has dropped SSE.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from mcpctl.config.model import ServerEntry, ToolFilter
from mcpctl.errors import UsageError
from mcpctl.render.base import Places, Scope, Target
from mcpctl.render.clients import (
    NO_SYNTAX,
    RenderContext,
    Syntax,
    appdata,
    config_home,
    foreign,
    out_ceil,
    returned_remote,
    timeout_in,
)
from mcpctl.render.clients_base import ClientBase, McpServersClient

__all__ = ["TARGETS", "Continue", "Goose"]

_TRANSPORTS = {"stdio": "stdio", "streamable-http": "streamable-http", "sse": "sse"}


class _Yaml(ClientBase):
    file_format: Literal["json", "toml", "yaml"] = "yaml"

    def dump(self, doc: dict[str, Any]) -> str:
        """YAML text, keys in the order written."""
        from mcpctl.render.yamltext import dump_yaml

        return dump_yaml(doc)

    def load(self, text: str) -> Any:
        """The YAML document (an empty file is an empty document).

        Raises:
            UsageError: not YAML.
        """
        from mcpctl.render.readers import DocumentError, load_yaml

        try:
            doc = load_yaml(text)
        except DocumentError as exc:
            raise exc.usage(f"a {self.label} YAML file") from None
        return {} if doc is None else doc


_CONTINUE = Syntax(
    "${{ secrets.VAR }}",
    lambda var, _default: "${{ secrets." + var + " }}",
    back=re.compile(r"\$\{\{\s*(?:secrets|inputs)\.(?P<name>[A-Z_][A-Z0-9_]*)\s*\}\}"),
)


def _continue_where(scope: Scope, p: Places) -> list[Path]:
    if scope == "user":
        return [p.home / ".continue" / "config.yaml"]
    folder = p.cwd / ".continue" / "mcpServers"
    ours = folder / "mcpctl.yaml"
    others = sorted(
        f for f in (folder.iterdir() if folder.is_dir() else ())
        if f.suffix in (".yaml", ".yml", ".json") and f != ours
    )  # fmt: skip
    return [ours, *others]


class Continue(_Yaml, McpServersClient):
    """Continue: a list of ``{name, type, command | url, ...}`` under ``mcpServers``."""

    def document(self, servers: Any, ctx: RenderContext) -> dict[str, Any]:
        """A config block (name, version, schema) whose ``mcpServers`` list holds ours."""
        base = {"name": "mcpctl servers", "version": "1.0.0", "schema": "v1"}
        doc: dict[str, Any] = {**base, **(ctx.request.template or {})}
        existing = doc.get("mcpServers")
        kept = [s for s in existing if not (isinstance(s, dict) and s.get("name") in servers)] \
            if isinstance(existing, list) else []  # fmt: skip
        doc["mcpServers"] = kept + [{"name": name, **entry} for name, entry in servers.items()]
        return doc

    def entry_out(self, name: str, entry: ServerEntry, ctx: RenderContext) -> Any:
        """One server (headers go under ``requestOptions``)."""
        out = super().entry_out(name, entry, ctx)
        if "headers" in out:
            out["requestOptions"] = {"headers": out.pop("headers")}
        return out

    def servers_of(self, doc: Any) -> Any:
        """The ``mcpServers`` list (or object, in a JSON block file).

        Raises:
            UsageError: ``doc`` is not a mapping, or ``mcpServers`` is neither.
        """
        if not isinstance(doc, dict):
            raise UsageError("this is not a Continue config: expected a mapping at the top")
        servers = doc.get("mcpServers", [])
        if not isinstance(servers, list | dict):
            raise UsageError("'mcpServers' in a Continue config must be a list of servers")
        return servers

    def named_servers(self, servers: Any) -> list[tuple[str, Any]]:
        """``(name, server)`` from the list (each item names itself) or the object."""
        if isinstance(servers, dict):
            return super().named_servers(servers)
        out: list[tuple[str, Any]] = []
        for i, item in enumerate(servers):
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                rest = dict(item)
                out.append((rest.pop("name"), rest))
            else:
                out.append((f"server-{i + 1}", item))
        return out

    def entry_in(
        self, name: str, raw: dict[str, Any], warnings: list[str]
    ) -> dict[str, Any] | None:
        """One server (``requestOptions.headers`` are its headers)."""
        options = raw.pop("requestOptions", None)
        if isinstance(options, dict):
            options = dict(options)
            if "headers" in options:
                raw["headers"] = options.pop("headers")
            for key in options:
                warnings.append(f"{name}: requestOptions.{key} is not imported: a Continue "
                                "setting mcpctl does not have")  # fmt: skip
        return super().entry_in(name, raw, warnings)


def _goose_user(p: Places) -> list[Path]:
    if p.system == "win32":
        return [appdata(p) / "Block" / "goose" / "config" / "config.yaml"]
    paths = [config_home(p) / "goose" / "config.yaml"]
    if p.system == "darwin":
        paths.append(p.home / "Library" / "Application Support" / "Block" / "goose" / "config"
                     / "config.yaml")  # fmt: skip
    return paths


_EXACT = re.compile(r"\$\{(?P<name>[A-Z_][A-Z0-9_]*)\}")
_BUILTIN = ("builtin", "platform", "frontend", "inline_python")


class Goose(_Yaml):
    """Goose's ``extensions``: ``stdio`` (cmd, args, envs, env_keys) and ``streamable_http``."""

    def entry_out(self, name: str, entry: ServerEntry, ctx: RenderContext) -> Any:
        """One extension (``None`` for an SSE server)."""
        if entry.effective_transport == "sse":
            ctx.warn(name, "transport", "is SSE: Goose no longer has SSE extensions; the server "
                     "is left out")  # fmt: skip
            return None
        out: dict[str, Any] = {"name": name, "enabled": True}
        envs: dict[str, str] = {}
        keys: list[str] = []
        if entry.is_remote:
            out["type"] = "streamable_http"
            out["uri"] = ctx.literal(name, "url", entry.url or "")
            headers = {**entry.headers, **self.auth_headers(name, entry, ctx)}
            out["headers"] = {k: ctx.literal(name, f"headers.{k}", v) for k, v in headers.items()}
        else:
            out["type"] = "stdio"
            out["cmd"] = ctx.literal(name, "command", entry.command or "")
            out["args"] = [ctx.literal(name, "args", a) for a in entry.args]
            for key, value in entry.env.items():
                if value == "${" + key + "}":
                    keys.append(key)
                else:
                    envs[key] = ctx.literal(name, f"env.{key}", value)
        out["envs"] = envs
        out["env_keys"] = keys
        if entry.timeout is not None:
            out["timeout"] = out_ceil(entry.timeout, 1000)
            if entry.timeout % 1000:
                ctx.warn(name, "timeout", "is rounded up to whole seconds for Goose")
        if entry.description is not None:
            out["description"] = entry.description
        tools = entry.tools
        if tools is not None and tools.allow:
            out["available_tools"] = list(tools.allow)
        elif tools is not None and tools.allow is not None:
            ctx.warn(name, "tools.allow", "is not written: an empty available_tools means "
                     "every tool to Goose")  # fmt: skip
        self.unsupported(name, entry, ctx, "timeout allow")
        return out

    def entry_in(
        self, name: str, raw: dict[str, Any], warnings: list[str]
    ) -> dict[str, Any] | None:
        """One extension as mcpctl's entry data (built-in ones are left out)."""
        kind = raw.pop("type", None)
        for key in ("name", "bundled", "display_name"):
            raw.pop(key, None)
        data: dict[str, Any] = {}
        env = raw.pop("envs", None)
        env = dict(env) if isinstance(env, dict) else {}
        keys = raw.pop("env_keys", None)
        for key in keys if isinstance(keys, list) else ():
            env.setdefault(str(key), "${" + str(key) + "}")
        if kind == "stdio" and "cmd" in raw:
            data["command"] = raw.pop("cmd")
            if raw.get("args"):
                data["args"] = raw.pop("args")
            raw.pop("args", None)
            if env:
                data["env"] = env
        elif kind in ("streamable_http", "sse") and "uri" in raw:
            data["url"] = raw.pop("uri")
            if raw.get("headers"):
                data["headers"] = raw.pop("headers")
            raw.pop("headers", None)
            if kind == "sse":
                data["transport"] = "sse"
        elif kind in _BUILTIN:
            warnings.append(f"{name}: is a built-in Goose extension; not imported")
            return None
        else:
            warnings.append(f"{name}: is a {kind!r} extension mcpctl cannot read; not imported")
            return None
        if isinstance(raw.get("enabled"), bool):
            data["enabled"] = raw.pop("enabled")
        if "timeout" in raw:
            data["timeout"] = timeout_in(raw.pop("timeout"), 1000)
        if isinstance(raw.get("description"), str):
            data["description"] = raw.pop("description")
        tools = raw.pop("available_tools", None)
        if tools:
            data["tools"] = {"allow": tools}
        foreign(name, raw, warnings, self.label)
        return data

    def expressible(self, entry: ServerEntry) -> ServerEntry | None:
        """``entry`` as Goose holds it (``None`` for SSE)."""
        if entry.effective_transport == "sse":
            return None
        allow = entry.tools.allow if entry.tools is not None else None
        timeout = entry.timeout
        return ServerEntry(
            command=entry.command, args=entry.args, env=dict(entry.env),
            timeout=None if timeout is None else int(out_ceil(timeout, 1000)) * 1000,
            description=entry.description, enabled=entry.enabled,
            tools=ToolFilter(allow) if allow else None,
            **returned_remote(entry, str, sse=False),
        )  # fmt: skip


TARGETS: dict[str, Target] = {
    "continue": Continue(
        "continue", "Continue", "Continue: mcpServers in config.yaml or .continue/mcpServers/",
        section=("mcpServers",), keyed_lists={"mcpServers": "name"}, syntax=_CONTINUE,
        types=_TRANSPORTS, sse="type", cwd=True, timeout=("connectionTimeout", 1),
        where=_continue_where,
    ),
    "goose": Goose(
        "goose", "Goose", "Goose: extensions in its config.yaml", section=("extensions",),
        syntax=NO_SYNTAX, where=lambda scope, p: _goose_user(p) if scope == "user" else [],
    ),
}  # fmt: skip
