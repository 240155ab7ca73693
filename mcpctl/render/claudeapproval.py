"""Claude Code's approval of a project's servers: which ones of a ``.mcp.json`` it starts.

A server of a project's ``.mcp.json`` (Claude Code's project scope) is started only once the
user approved it: until then Claude Code lists it as "pending approval" and does not start
it. The answers live in its settings: ``enabledMcpjsonServers`` (approved names),
``enableAllProjectMcpServers`` (all of them) and ``disabledMcpjsonServers`` (rejected names,
which win), in the user's ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR/settings.json``)
and the project's ``.claude/settings.json`` and ``.claude/settings.local.json``. Answering
the prompt ``claude`` shows in the project writes the last one. A server of the user's
``~/.claude.json`` needs no approval. (Claude Code 2.1; ``claude -p`` without a terminal
starts pending servers too.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcpctl.render.base import Places

__all__ = ["Approval", "ApprovalState", "claude_approvals", "settings_files"]

ApprovalState = Literal["approved", "pending", "rejected"]

PROJECT_FILE = ".mcp.json"
ENABLED = "enabledMcpjsonServers"
ALL = "enableAllProjectMcpServers"
DISABLED = "disabledMcpjsonServers"


@dataclass(frozen=True)
class Approval:
    """Whether Claude Code starts one project server, and which setting says so
    (``"<file>: <key>"``; ``None`` when none does: pending)."""

    state: ApprovalState
    setting: str | None = None


def settings_files(project: Path, places: Places) -> list[Path]:
    """The settings Claude Code reads the approvals from, for the project at ``project``: the
    user's, the project's shared one, the project's local one."""
    configured = places.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    user = Path(configured).expanduser() if configured else places.home / ".claude"
    return [user / "settings.json", project / ".claude" / "settings.json",
            project / ".claude" / "settings.local.json"]  # fmt: skip


def claude_approvals(
    file: Path, names: Iterable[str], places: Places, warnings: list[str] | None = None
) -> dict[str, Approval] | None:
    """Claude Code's answer for each server ``names`` of ``file``, or ``None`` when ``file`` is
    not a project's ``.mcp.json`` (its servers need no approval). A settings file that cannot
    be read, or is not a JSON object, counts as empty (with a line in ``warnings``)."""
    if file.name != PROJECT_FILE:
        return None
    settings = [(path, _read(path, warnings)) for path in settings_files(file.parent, places)]
    return {name: _approval(name, settings) for name in names}


def _approval(name: str, settings: list[tuple[Path, Mapping[str, Any]]]) -> Approval:
    key = _normal(name)
    for path, data in settings:
        if key in _names(data.get(DISABLED)):
            return Approval("rejected", f"{path}: {DISABLED}")
    for path, data in settings:
        if data.get(ALL) is True:
            return Approval("approved", f"{path}: {ALL}")
        if key in _names(data.get(ENABLED)):
            return Approval("approved", f"{path}: {ENABLED}")
    return Approval("pending")


def _names(value: object) -> set[str]:
    return {_normal(v) for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _normal(name: str) -> str:
    """A name as Claude Code compares them: what is not a letter, digit, ``_`` or ``-`` is
    ``_``."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


def _read(path: Path, warnings: list[str] | None) -> Mapping[str, Any]:
    from mcpctl.config.safefile import decode_text, read_file
    from mcpctl.errors import McpctlError
    from mcpctl.render.readers import DocumentError, load_json

    try:
        raw = read_file(path)
        data = load_json(decode_text(raw, path)) if raw is not None else {}
    except McpctlError as exc:
        why = exc.message
    except DocumentError as exc:
        why = str(exc)
    else:
        if isinstance(data, dict):
            return data
        why = "not a JSON object"
    if warnings is not None:
        warnings.append(f"{path}: {why}; its MCP approvals are not read")
    return {}
