"""The plain JSON clients: a servers object of ``{command, args, env}`` / ``{url, headers}``.

Each is one :class:`~mcpctl.render.clients_base.McpServersClient` with its own spelling of the
transports, its placeholder syntax, its optional settings and its file locations.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpctl.render.base import Places, Scope, Target
from mcpctl.render.clients import (
    BRACED,
    DOLLAR,
    ENV_COLON,
    SHELL,
    appdata,
    config_home,
    vscode_user,
)
from mcpctl.render.clients_base import McpServersClient

__all__ = ["TARGETS", "ZedClient", "scoped"]

Where = Callable[[Scope, Places], list[Path]]


def scoped(
    user: Callable[[Places], list[Path]], project: Callable[[Places], list[Path]] | None = None
) -> Where:
    """A ``locations`` function from the user-scope and project-scope lists."""

    def where(scope: Scope, places: Places) -> list[Path]:
        if scope == "user":
            return user(places)
        return project(places) if project is not None else []

    return where


def _home(*parts: str) -> Callable[[Places], list[Path]]:
    return lambda p: [p.home.joinpath(*parts)]


def _cwd(*parts: str) -> Callable[[Places], list[Path]]:
    return lambda p: [p.cwd.joinpath(*parts)]


def _zed_user(p: Places) -> list[Path]:
    if p.system == "win32":
        return [appdata(p) / "Zed" / "settings.json"]
    return [config_home(p) / "zed" / "settings.json"]


def _cline_user(p: Places) -> list[Path]:
    storage = vscode_user(p) / "globalStorage" / "saoudrizwan.claude-dev" / "settings"
    return [storage / "cline_mcp_settings.json",
            p.home / ".cline" / "data" / "settings" / "cline_mcp_settings.json"]  # fmt: skip


def _roo_user(p: Places) -> list[Path]:
    storage = vscode_user(p) / "globalStorage" / "rooveterinaryinc.roo-cline" / "settings"
    return [storage / "mcp_settings.json"]


def _amp_user(p: Places) -> list[Path]:
    base = p.home / ".config" if p.system == "win32" else config_home(p)
    return [base / "amp" / "settings.json"]


def _copilot_user(p: Places) -> list[Path]:
    home = p.environ.get("COPILOT_HOME")
    return [(Path(home) if home else p.home / ".copilot") / "mcp-config.json"]


_TYPED = {"stdio": "stdio", "streamable-http": "http", "sse": "sse"}


class ZedClient(McpServersClient):
    """Zed's ``context_servers``: also reads the older ``{"command": {"path", ...}}`` form."""

    def entry_in(
        self, name: str, raw: dict[str, Any], warnings: list[str]
    ) -> dict[str, Any] | None:
        """One context server (extension-provided ones have no command: left out)."""
        if raw.get("source") in ("custom", None):
            raw.pop("source", None)
        command = raw.get("command")
        if isinstance(command, dict):
            raw.pop("command")
            raw["command"] = command.pop("path", None)
            for key in ("args", "env"):
                if key in command:
                    raw[key] = command.pop(key)
        if "command" not in raw and "url" not in raw:
            warnings.append(f"{name}: is provided by a Zed extension; not imported")
            return None
        return super().entry_in(name, raw, warnings)


_GEMINI: dict[str, Any] = {
    "syntax": DOLLAR, "url_keys": ("httpUrl", "url"), "sse": "key", "cwd": True,
    "timeout": ("timeout", 1), "allow_key": "includeTools", "deny_key": "excludeTools",
    "exact_tools": True,
}  # fmt: skip

_ALL: list[McpServersClient] = [
    McpServersClient(
        "claude-code",
        "Claude Code",
        "Claude Code: ~/.claude.json (user) or .mcp.json (project)",
        syntax=SHELL,
        types=_TYPED,
        sse="type",
        where=scoped(_home(".claude.json"), _cwd(".mcp.json")),
        headers_helper="headersHelper",
    ),
    McpServersClient(
        "cursor",
        "Cursor",
        "Cursor: ~/.cursor/mcp.json or .cursor/mcp.json",
        syntax=ENV_COLON,
        where=scoped(_home(".cursor", "mcp.json"), _cwd(".cursor", "mcp.json")),
    ),
    McpServersClient(
        "windsurf",
        "Windsurf",
        "Windsurf (Cascade): ~/.codeium/windsurf/mcp_config.json",
        syntax=ENV_COLON,
        url_keys=("serverUrl", "serverUrl"),
        where=scoped(_home(".codeium", "windsurf", "mcp_config.json")),
    ),
    McpServersClient(
        "gemini",
        "Gemini CLI",
        "Gemini CLI: mcpServers in ~/.gemini/settings.json",
        where=scoped(_home(".gemini", "settings.json"), _cwd(".gemini", "settings.json")),
        **_GEMINI,
    ),
    McpServersClient(
        "qwen-code",
        "Qwen Code",
        "Qwen Code: mcpServers in ~/.qwen/settings.json",
        where=scoped(_home(".qwen", "settings.json"), _cwd(".qwen", "settings.json")),
        **_GEMINI,
    ),
    ZedClient(
        "zed",
        "Zed",
        "Zed: context_servers in its settings.json",
        section=("context_servers",),
        where=scoped(_zed_user, _cwd(".zed", "settings.json")),
    ),
    McpServersClient(
        "cline",
        "Cline",
        "Cline: cline_mcp_settings.json in the extension's storage",
        types={"stdio": "stdio", "streamable-http": "streamableHttp", "sse": "sse"},
        sse="type",
        where=scoped(_cline_user),
    ),
    McpServersClient(
        "roo-code",
        "Roo Code",
        "Roo Code: mcp_settings.json (user) or .roo/mcp.json (project)",
        syntax=ENV_COLON,
        types={"stdio": "stdio", "streamable-http": "streamable-http", "sse": "sse"},
        sse="type",
        cwd=True,
        where=scoped(_roo_user, _cwd(".roo", "mcp.json")),
    ),
    McpServersClient(
        "lm-studio",
        "LM Studio",
        "LM Studio: ~/.lmstudio/mcp.json",
        where=scoped(_home(".lmstudio", "mcp.json")),
    ),
    McpServersClient(
        "amp",
        "Amp",
        "Amp: amp.mcpServers in ~/.config/amp/settings.json",
        section=("amp.mcpServers",),
        syntax=BRACED,
        where=scoped(_amp_user, _cwd(".amp", "settings.json")),
    ),
    McpServersClient(
        "kiro",
        "Kiro",
        "Kiro: ~/.kiro/settings/mcp.json or .kiro/settings/mcp.json",
        syntax=BRACED,
        deny_key="disabledTools",
        where=scoped(_home(".kiro", "settings", "mcp.json"), _cwd(".kiro", "settings", "mcp.json")),
    ),
    McpServersClient(
        "copilot-cli",
        "Copilot CLI",
        "GitHub Copilot CLI: ~/.copilot/mcp-config.json",
        syntax=SHELL,
        types=_TYPED,
        sse="type",
        cwd=True,
        allow_key="tools",
        all_tools="*",
        where=scoped(_copilot_user, _cwd(".github", "mcp.json")),
    ),
]

TARGETS: dict[str, Target] = {client.name: client for client in _ALL}
