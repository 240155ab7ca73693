"""Keeping the trust of a config file through the changes mcpctl makes to it.

``git pull`` changing a server asks for approval again; ``mcpctl add``, ``upgrade`` or
``group add`` must not: a server mcpctl adds, or writes in full for the user, becomes
approved; a server it changes stays as trusted as it was (an untrusted one stays untrusted);
a server it leaves alone keeps its state. :class:`~mcpctl.config.store.ConfigStore` applies
:func:`keep_edit` to the record under the record's lock, before it writes the file.

``undo`` needs nothing here: the record keeps the last contents approved of each server, so
a version restored is trusted when (and only when) its content was.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from mcpctl.config.checks import entry_from_data
from mcpctl.config.trustrecord import MAX_HISTORY, canonical, digest_of, entry_digest

__all__ = ["keep_edit", "raw_digest", "touched"]


def raw_digest(name: str, data: object) -> str:
    """The digest of an entry's JSON value as written: through the config model when the
    entry is valid (so it equals the digest of what the model loads), else of the value
    itself (such an entry never runs, but its digest must still change with it)."""
    entry, _ = entry_from_data(name, data)
    if entry is not None:
        return entry_digest(entry.to_data())
    return digest_of(canonical(data) if isinstance(data, dict) else {"$": data})


def touched(
    before: Mapping[str, Any], after: Mapping[str, Any], authored: Collection[str] = ()
) -> list[str]:
    """The servers a change writes: new, changed, or written in full (``authored``)."""
    return [
        name
        for name, value in after.items()
        if not name.startswith("$") and (name in authored or before.get(name) != value)
    ]


def keep_edit(
    files: dict[str, dict[str, object]],
    real: str,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    authored: Collection[str] = (),
) -> bool:
    """Record in ``files`` (the record's, see :func:`~mcpctl.config.trustrecord.read_record`)
    what a change of the file at ``real`` (``before`` -> ``after``, its JSON objects) keeps
    approved; whether anything was added."""
    names = touched(before, after, authored)
    if not names:
        return False
    item = files.setdefault(real, {"servers": {}})
    servers = item.get("servers")
    if not isinstance(servers, dict):
        servers = item["servers"] = {}
    added = False
    for name in names:
        digest = raw_digest(name, after[name])
        seen: list[str] = list(servers.get(name, []))
        if digest in seen:
            continue
        fresh = name in authored or name not in before
        if fresh or raw_digest(name, before[name]) in seen:
            servers[name] = [digest, *seen][:MAX_HISTORY]
            added = True
    return added
