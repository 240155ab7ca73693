"""A small, well-behaved MCP server built with the SDK's MCPServer.

python basic.py [stdio|sse|streamable-http] [PORT] [--tools N]
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("basic-test-server")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def weather(city: str, days: int = 1) -> dict[str, object]:
    """A structured forecast (made up)."""
    return {"city": city, "days": days, "forecast": ["sunny"] * days}


@server.tool()
def fail(message: str) -> str:
    """Always fails with the given message."""
    raise ToolError(message)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", nargs="?", default="stdio")
    parser.add_argument("port", nargs="?", type=int, default=0)
    parser.add_argument("--tools", type=int, default=0, help="add N extra tools")
    opts = parser.parse_args()
    for i in range(opts.tools):
        server.add_tool(lambda: "x", name=f"extra_{i:03d}", description=f"extra tool {i}")
    if opts.transport == "stdio":
        server.run("stdio")
    else:
        server.run(opts.transport, host="127.0.0.1", port=opts.port)


if __name__ == "__main__":
    main()
