"""Claude Code's approval of a project's servers: which ones of a ``.mcp.json`` it starts.

A server of a project's ``.mcp.json`` (Claude Code's project scope) is started only once the
user approved it: until then Claude Code lists it as "pending approval" and does not start
it. The answers live in its settings: ``enabledMcpjsonServers`` (approved names),
``enableAllProjectMcpServers`` (all of them) and ``disabledMcpjsonServers`` (rejected names,
which win), in the user's ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR/settings.json``)
and the project's ``.claude/settings.json`` and ``.claude/settings.local.json``. Answering
the prompt ``claude`` shows in the project writes the last one. A server of the user's
``~/.claude.json`` needs no approval.

Whose word counts (Claude Code 2.1): a refusal in any of them; an approval in the user's
settings; in the project's, once the user trusted the folder (the dialog ``claude`` shows
first, recorded in ``~/.claude.json``); before that, in ``settings.local.json`` only when
the project is a git work tree that does not track it (and neither it nor ``.claude`` is a
symbolic link) -- a file that came with a clone is not the user's answer. ``claude -p``
without a terminal starts pending servers too.
"""

from __future__ import annotations

import os
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
    return [_config_dir(places) / "settings.json", project / ".claude" / "settings.json",
            project / ".claude" / "settings.local.json"]  # fmt: skip


def _config_dir(places: Places) -> Path:
    configured = places.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(configured).expanduser() if configured else places.home / ".claude"


def claude_approvals(
    file: Path, names: Iterable[str], places: Places, warnings: list[str] | None = None
) -> dict[str, Approval] | None:
    """Claude Code's answer for each server ``names`` of ``file``, or ``None`` when ``file`` is
    not a project's ``.mcp.json`` (its servers need no approval). A settings file that cannot
    be read, or is not a JSON object, counts as empty (with a line in ``warnings``)."""
    if file.name != PROJECT_FILE:
        return None
    project = file.parent.absolute()
    user, shared, local = settings_files(project, places)
    settings = {path: _read(path, warnings) for path in (user, shared, local)}
    if _trusted(project, places, warnings):
        approving = [user, shared, local]
    else:
        approving = [user] + ([local] if _local_is_the_users(project) else [])
    return {name: _approval(name, settings, approving) for name in names}


def _approval(
    name: str, settings: Mapping[Path, Mapping[str, Any]], approving: list[Path]
) -> Approval:
    key = _normal(name)
    for path, data in settings.items():
        if key in _names(data.get(DISABLED)):
            return Approval("rejected", f"{path}: {DISABLED}")
    for path in approving:
        data = settings[path]
        if data.get(ALL) is True:
            return Approval("approved", f"{path}: {ALL}")
        if key in _names(data.get(ENABLED)):
            return Approval("approved", f"{path}: {ENABLED}")
    return Approval("pending")


def _trusted(project: Path, places: Places, warnings: list[str] | None) -> bool:
    """Whether the user accepted Claude Code's trust dialog for ``project`` (or its git
    root): ``projects[PATH].hasTrustDialogAccepted`` in its ``.claude.json``."""
    configured = places.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    base = Path(configured).expanduser() if configured else places.home
    found = _read(base / ".claude.json", warnings, "the folders Claude Code trusts are not read")
    projects = found.get("projects")
    if not isinstance(projects, dict):
        return False
    keys = {str(project), os.path.realpath(project)}
    root = _git_root(project)
    if root is not None:
        keys |= {str(root), os.path.realpath(root)}
    return any(
        isinstance(projects.get(k), dict) and projects[k].get("hasTrustDialogAccepted") is True
        for k in keys
    )


def _git_root(folder: Path) -> Path | None:
    return next((f for f in (folder, *folder.parents) if (f / ".git").exists()), None)


def _local_is_the_users(project: Path) -> bool:
    """Whether Claude Code takes the approvals of ``.claude/settings.local.json`` in an
    untrusted project: not a symbolic link (nor ``.claude``), no ``.claude/.git``, and git
    says the project is a work tree that does not track the file (without git: it does)."""
    import shutil
    import subprocess

    folder = project / ".claude"
    if folder.is_symlink() or (folder / "settings.local.json").is_symlink():
        return False
    if (folder / ".git").exists():
        return False
    git = shutil.which("git")
    if git is None:
        return True
    env = {**os.environ, "GIT_LITERAL_PATHSPECS": ""}
    try:
        # Read-only, with hooks and fsmonitor off, as Claude Code runs it.
        done = subprocess.run(
            [git, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=", "-C", str(project),
             "ls-files", "--error-unmatch", "--", ":(icase).claude/settings.local.json"],
            capture_output=True, stdin=subprocess.DEVNULL, timeout=2, env=env, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return False
    except OSError:  # Claude Code's own check gives up the same way
        return True
    return done.returncode == 1  # 1: not tracked; 0: tracked; 128: not a work tree


def _names(value: object) -> set[str]:
    return {_normal(v) for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _normal(name: str) -> str:
    """A name as Claude Code compares them: what is not a letter, digit, ``_`` or ``-`` is
    ``_``."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


def _read(
    path: Path, warnings: list[str] | None, lost: str = "its MCP approvals are not read"
) -> Mapping[str, Any]:
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
        warnings.append(f"{path}: {why}; {lost}")
    return {}
