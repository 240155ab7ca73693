"""A snapshot diff as text: what ``snapshot diff`` and ``watch --servers`` print.

``+``/``-`` for servers (and what they offer) added and removed, ``~`` for a server whose
configuration or offer changed, and ``!`` before each definition that changed in place, its
old and new values below it. Server-sent text is shown escaped, and cut when long. Then
the packages that moved (``snapshot diff --packages``) and a one-line summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcpctl.snapshot.diff import DefinitionChange, ServerChange, SnapshotDiff
from mcpctl.text import plural

if TYPE_CHECKING:
    from mcpctl.snapshot.packages import PackageChange

__all__ = ["NOUNS", "diff_lines", "diff_summary", "package_lines"]

NOUNS = {"tools": "tool", "prompts": "prompt", "resource_templates": "resource template"}
TEXT_MAX = 2000  # a changed description is shown whole up to this, then cut
JSON_MAX = 400


def diff_lines(changes: SnapshotDiff) -> list[str]:
    """``+ name``, ``- name``, ``~ name (fields: ...)``, what each server offers that changed,
    and ``!`` before each definition that changed in place, old and new values below it, and
    before each that held a secret (recorded redacted)."""
    lines = [f"+ {name}" for name in changes.added]
    lines += [f"- {name}" for name in changes.removed]
    for change in changes.changed:
        lines += _server_lines(change)
    for item in changes.redacted:
        what = f"{NOUNS[item.kind]} {item.name}: " if item.name is not None else ""
        lines.append(f"! {item.server}: {what}{item.message}")
    return lines


def _server_lines(change: ServerChange) -> list[str]:
    name = change.name
    head = f"~ {name}"
    if change.fields:
        head += f" (fields: {', '.join(change.fields)})"
    lines = [head]
    if change.probe_failed is not None:
        lines.append(f"    ? probe failed ({change.probe_failed}): what it offers is unknown")
    if change.server_info is not None:
        old, new = change.server_info
        lines.append(f"    serverInfo: {_compact(old)} -> {_compact(new)}")
    for kind, names in change.added.items():
        lines += [f"    + {NOUNS[kind]} {item}" for item in names]
    for kind, names in change.removed.items():
        lines += [f"    - {NOUNS[kind]} {item}" for item in names]
    for kind, pairs in change.renamed.items():
        lines += [f"    {NOUNS[kind]} renamed {a} -> {b}" for a, b in pairs]
    if change.instructions:
        lines.append(f"! {name}: instructions changed")
    for changed in change.changed:
        lines += _definition_lines(name, changed)
    if change.tokens_line is not None:
        lines.append(f"~ {name}: {change.tokens_line}")
    return lines


def _definition_lines(server: str, changed: DefinitionChange) -> list[str]:
    fields = ", ".join(changed.fields)
    lines = [
        f"! {server}: {NOUNS.get(changed.kind, changed.kind)} {changed.name} changed ({fields})"
    ]
    for key, (old, new) in changed.fields.items():
        lines.append(f"    {key} was: {_shown(old)}")
        lines.append(f"    {key} now: {_shown(new)}")
    return lines


def _shown(value: Any) -> str:
    from mcpctl.text import escape_controls

    if value is None:
        return "(none)"
    if isinstance(value, str):
        text = escape_controls(value, keep_newlines=False)
        cut = len(text) - TEXT_MAX
        return text if cut <= 0 else f"{text[:TEXT_MAX]}… ({cut} more characters; see --json)"
    return _compact(value)


def _compact(value: Any) -> str:
    import json

    from mcpctl.text import escape_controls

    text = escape_controls(
        json.dumps(value, sort_keys=True, ensure_ascii=False), keep_newlines=False
    )
    return text if len(text) <= JSON_MAX else text[: JSON_MAX - 1] + "…"


def package_lines(changes: list[PackageChange]) -> list[str]:
    """``! NAME: moved 1.2.0 → 1.3.0 (unpinned)``, ``? NAME: unresolved: ...`` (an unpinned
    spec is a warning, not a line)."""
    return [
        f"{'!' if c.fails else '?'} {c.server}: package {c.message}"
        for c in changes
        if c.kind != "unpinned"
    ]


def diff_summary(changes: SnapshotDiff, since: str, packages: Sequence[PackageChange] = ()) -> str:
    """The one-line summary after a diff: what changed since ``since``, and the definitions
    changed in place to review."""
    if changes.empty and not packages:
        return f"no changes since {since or 'the earlier snapshot'}"
    parts = [
        f"{len(group)} {what}"
        for group, what in (
            (changes.added, "added"), (changes.removed, "removed"), (changes.changed, "changed"),
        )
        if group
    ]  # fmt: skip
    if packages:
        parts.append(f"{plural(len(packages), 'package')} moved or republished")
    text = f"changes since {since or 'the earlier snapshot'}: {', '.join(parts)}"
    moved = changes.definitions_changed
    if moved:
        names = ", ".join(c.name for c in moved)
        text += f"; definitions changed in place on {names}: review them before use"
    return text
