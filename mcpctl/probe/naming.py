"""Tool names as a host sees them: prefixes, allow/deny filters and collisions.

A host that aggregates several servers prefixes each tool with its server's name, either
``mcp_<server>_<tool>`` (as agent frameworks' MCP bridges do) or ``<server>:<tool>``. Two
different tools can end up with the same prefixed name (``mcp_a_b`` + ``c`` and ``mcp_a`` +
``b_c``); such collisions are reported, never resolved silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from mcpctl.config.model import ToolFilter

__all__ = ["CatalogEntry", "Collision", "PrefixStyle", "build_catalog", "prefixed"]

PrefixStyle = Literal["underscore", "colon", "none"]


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
