"""A tool as a server lists it, and the listing of every page of a connected server's tools.

:mod:`mcpctl.probe.health` lists tools as part of a probe, and :mod:`mcpctl.probe.tools`
(which also probes, for ``list_tools``) re-exports both names: they live here so that neither
of those two modules imports the other at import time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpctl.probe.connect import Connection

__all__ = ["ToolInfo", "list_all_tools", "type_of"]


@dataclass(frozen=True)
class ToolInfo:
    """One tool of a server (``raw``: the object exactly as the server sent it)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    title: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def params_summary(self, limit: int = 6) -> str:
        """``city*: string, days: integer`` (``*`` = required)."""
        props = self.input_schema.get("properties") or {}
        required = set(self.input_schema.get("required") or [])
        parts = []
        for pname, spec in list(props.items())[:limit]:
            parts.append(f"{pname}{'*' if pname in required else ''}: {type_of(spec)}")
        if len(props) > limit:
            parts.append(f"+{len(props) - limit} more")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
        }


def type_of(spec: object) -> str:
    """The JSON Schema type of a property (``string``, ``integer|null``, ``any``)."""
    kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    return str(kind)


async def list_all_tools(conn: Connection) -> list[ToolInfo]:
    """Every tool of a connected server, through every page (:func:`mcpctl.probe.pages.
    every_page`: a server's broken paging ends in a warning of ``conn.listing``)."""
    import mcp_types as types

    from mcpctl.probe.pages import every_page

    async def page(cursor: str | None) -> Any:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        return await conn.request(lambda: conn.session.list_tools(params=params))

    listing = conn.listing
    return [
        ToolInfo(
            tool.name,
            tool.description or "",
            listing.kept_schemas.get(tool.name) or dict(tool.input_schema or {}),
            tool.title,
            listing.raw_tools.get(tool.name, {}),
        )
        for tool in await every_page(page, "tools", "tools", listing.warnings)
    ]
