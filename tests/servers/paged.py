"""A low-level MCP server that returns its tools over several pages (cursor pagination)."""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(
        name=f"tool_{i:02d}", description=f"tool number {i}", input_schema={"type": "object"}
    )
    for i in range(25)
]
# Two fields a listing may or may not have: a title (on the first page) and a description
# (not on the last).
TOOLS[0] = TOOLS[0].model_copy(update={"title": "The first tool"})
TOOLS[24] = TOOLS[24].model_copy(update={"description": None})
PAGE = 10


async def list_tools(
    ctx: object, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    start = int(params.cursor) if params and params.cursor else 0
    end = start + PAGE
    return types.ListToolsResult(
        tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None
    )


server = Server("paged-test-server", version="1.0", on_list_tools=list_tools)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
