"""Tool names as a host sees them: prefixes, allow/deny filters and collisions.

A host that aggregates several servers prefixes each tool with its server's name, either
``mcp_<server>_<tool>`` (as agent frameworks' MCP bridges do) or ``<server>:<tool>``. Two
different tools can end up with the same prefixed name (``mcp_a_b`` + ``c`` and ``mcp_a`` +
``b_c``); such collisions are reported, never resolved silently.

Whether a collision fails a check depends on the naming the host uses
(:func:`collisions_fail`): two servers sharing a bare tool name (``search``) collide only for a
host that does not prefix, so without a prefix style it is a warning unless asked otherwise;
a prefixed name that still collides is two tools under one name for every host of that style.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from mcpctl.config.model import ToolFilter

__all__ = [
    "CatalogEntry",
    "Collision",
    "CollisionPolicy",
    "PrefixStyle",
    "build_catalog",
    "collisions_fail",
    "prefixed",
]

PrefixStyle = Literal["underscore", "colon", "none"]
CollisionPolicy = Literal["auto", "warn", "error"]


def collisions_fail(style: PrefixStyle, policy: CollisionPolicy = "auto") -> bool:
    """Whether name collisions under ``style`` fail a check: ``error`` always, ``warn``
    never, ``auto`` when the names are prefixed (bare names collide only for a host that does
    not prefix them; most hosts that aggregate servers do)."""
    if policy == "auto":
        return style != "none"
    return policy == "error"


def prefixed(server: str, tool: str, style: PrefixStyle) -> str:
    """The name a host exposes ``tool`` of ``server`` under."""
    if style == "underscore":
        return f"mcp_{server}_{tool}"
    if style == "colon":
        return f"{server}:{tool}"
    return tool


class CatalogEntry(NamedTuple):
    """One tool in the aggregated catalog."""

    name: str
    server: str
    tool: str
    exposed: bool


class Collision(NamedTuple):
    """Several tools that a host would see under one name."""

    name: str
    sources: tuple[tuple[str, str], ...]  # (server, tool)


def build_catalog(
    servers: Iterable[tuple[str, Iterable[str], ToolFilter | None]], style: PrefixStyle
) -> tuple[list[CatalogEntry], list[Collision]]:
    """Every tool of every server under its host-visible name, and the collisions.

    Tools hidden by a server's ``tools.allow``/``deny`` are listed with ``exposed=False``
    and take no part in collisions.
    """
    entries: list[CatalogEntry] = []
    seen: dict[str, list[tuple[str, str]]] = {}
    for server, tools, filt in servers:
        for tool in tools:
            exposed = filt is None or filt.allows(tool)
            name = prefixed(server, tool, style)
            entries.append(CatalogEntry(name, server, tool, exposed))
            if exposed:
                seen.setdefault(name, []).append((server, tool))
    collisions = [Collision(n, tuple(srcs)) for n, srcs in seen.items() if len(srcs) > 1]
    return entries, collisions
