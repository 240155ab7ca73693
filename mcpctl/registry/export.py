"""Discovery descriptors: registry records as the ``discovered_servers.json`` shape of
1mcp-style catalogs (``discover --export``), which a file registry reads back."""

from __future__ import annotations

from typing import Any

from mcpctl.errors import UsageError
from mcpctl.registry.convert import default_name, entry_from_server_json
from mcpctl.registry.records import Record

__all__ = ["descriptor", "descriptors"]


def descriptor(record: Record, registry: str, name: str) -> dict[str, Any]:
    """One of the discovery descriptors (the ``discovered_servers.json`` shape of 1mcp-style
    catalogs): ``{name, transport, command|url, args, env, tools, options}``, with the
    original ``server.json`` in ``options.server`` so the file can be read back as a file
    registry.

    Raises:
        UsageError: the record cannot be converted.
    """
    conv = entry_from_server_json(record, registry=registry)
    entry = conv.entry
    out: dict[str, Any] = {"name": name, "transport": entry.effective_transport}
    if entry.url is not None:
        out["url"] = entry.url
    else:
        out["command"] = entry.command
    out["args"] = list(entry.args)
    out["env"] = dict(entry.env)
    out["tools"] = []
    out["options"] = {
        "description": entry.description,
        "headers": dict(entry.headers),
        "secrets": conv.secrets,
        "missing": [m.name for m in conv.missing],
        "source": {"registry": registry, "name": record.name, "version": record.version},
        "server": record.server,
    }
    return out


def descriptors(
    hits: list[tuple[str, Record]], taken: set[str] | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Discovery descriptors of (registry, record) pairs, and why some could not be made."""
    items: list[dict[str, Any]] = []
    warnings: list[str] = []
    names = set(taken or ())
    for registry, record in hits:
        name = default_name(record.name, names)
        try:
            items.append(descriptor(record, registry, name))
        except UsageError as exc:
            warnings.append(f"not exported: {exc.message}")
            continue
        names.add(name)
    return items, warnings
