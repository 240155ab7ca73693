"""The environment ``health --as`` starts a client's servers with, and what it says about it.

:func:`builder` makes the servers of a probe get what the client would give them
(:mod:`mcpctl.render.clientenv`) rather than mcpctl's few variables; :func:`environments`
computes both for one server, and :func:`difference` says, by name only, what one has that
the other lacks -- the reason two verdicts differ when the command and arguments are the
same. :func:`approval_reason` says why Claude Code does not start a project server
(:mod:`mcpctl.render.claudeapproval`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mcpctl.render.clientenv import client_env

if TYPE_CHECKING:
    from pathlib import Path

    from mcpctl.config.model import ServerEntry
    from mcpctl.probe.childenv import EnvBuilder
    from mcpctl.render.claudeapproval import Approval

__all__ = ["approval_reason", "builder", "difference", "environments"]

SHOWN = 5  # names listed before "and N more"


def builder(target: str) -> EnvBuilder:
    """How ``target`` builds a (resolved) server's environment, for
    :func:`mcpctl.probe.childenv.started_by`."""
    how = client_env(target)

    def build(entry: ServerEntry, environ: Mapping[str, str]) -> dict[str, str]:
        return how.environment(environ, entry.inherit_env, entry.env)

    return build


def environments(
    target: str, theirs: ServerEntry, mine: ServerEntry, environ: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The environments of one server (both entries resolved): as ``target`` starts it from
    ``theirs``, and as plain ``health`` starts it from ``mine``."""
    from mcpctl.probe.serverenv import server_env

    return builder(target)(theirs, environ), server_env(mine.env, mine.inherit_env, environ)


def difference(target: str, theirs: Mapping[str, str], mine: Mapping[str, str]) -> str | None:
    """What ``target``'s environment for a server lacks or adds against mcpctl's, by name (a
    changed value is named, never shown); ``None`` when they are the same."""
    lacks = sorted(n for n in mine if n not in theirs)
    adds = sorted(n for n in theirs if n not in mine)
    changed = sorted(n for n in mine if n in theirs and mine[n] != theirs[n])
    parts = []
    if lacks:
        parts.append(f"{target} does not pass {_names(lacks)}, which mcpctl does")
    if changed:
        parts.append(f"{target} passes another value of {_names(changed)}")
    if adds:
        what = "variable" if len(adds) == 1 else "variables"
        parts.append(f"{target} passes {len(adds)} {what} mcpctl does not ({_names(adds)})")
    return "; ".join(parts) or None


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def approval_reason(name: str, file: Path, approval: Approval) -> str:
    """Why Claude Code does not start project server ``name`` of ``file``, and how to change
    that."""
    from mcpctl.render.claudeapproval import ENABLED

    if approval.state == "rejected":
        return (
            f"rejected in Claude Code's settings ({approval.setting}): Claude Code does not start "
            f"it; remove it from that list to be asked again"
        )
    local = file.parent / ".claude" / "settings.local.json"
    return (
        f"pending approval: Claude Code does not start a server of a project's {file.name} "
        f"until you approve it; run claude in {file.parent} and approve it (or /mcp there), or "
        f'add "{ENABLED}": ["{name}"] to {local}'
    )
