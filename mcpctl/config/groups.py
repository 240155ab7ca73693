"""Groups of servers: the ``groups`` field of the entries, read as group -> members.

A group exists while at least one entry names it; it has no entry of its own. Selecting by
group (``--group``) is the union of the members of the groups named.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mcpctl.config.model import ServerEntry
from mcpctl.errors import GroupNotFoundError

__all__ = ["group_index", "group_members"]


def group_index(entries: Mapping[str, ServerEntry]) -> dict[str, list[str]]:
    """Every group, sorted by name, with its members in file order."""
    found: dict[str, list[str]] = {}
    for name, entry in entries.items():
        for group in dict.fromkeys(entry.groups):
            found.setdefault(group, []).append(name)
    return {group: found[group] for group in sorted(found)}


def group_members(entries: Mapping[str, ServerEntry], groups: Iterable[str]) -> list[str]:
    """The servers of ``groups`` (the union, in file order).

    Raises:
        GroupNotFoundError: a group no entry belongs to.
    """
    wanted = list(dict.fromkeys(groups))
    index = group_index(entries)
    missing = [g for g in wanted if g not in index]
    if missing:
        raise GroupNotFoundError.for_groups(missing, index)
    chosen = {name for g in wanted for name in index[g]}
    return [name for name in entries if name in chosen]
