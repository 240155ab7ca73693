"""A small MCP server to try mcpctl on: notes kept in memory, a clock and a dice roller.

    python examples/servers/notes.py                          # stdio
    python examples/servers/notes.py streamable-http PORT     # http://127.0.0.1:PORT/mcp

It is built on the MCP SDK that ``pip install mcpctl`` brings, so it runs with no network
and nothing else installed. The notes live as long as the process: over stdio that is one
session, over HTTP until the server stops.
"""

from __future__ import annotations

import argparse
import random
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# The ban on the SDK guards the library's layering; a server of its own is another program.
from mcp.server.mcpserver import MCPServer  # noqa: TID251
from mcp.server.mcpserver.exceptions import ToolError  # noqa: TID251

server = MCPServer(
    "notes-example",
    instructions="Keep short notes for this session, tell the time, roll dice.",
    log_level="WARNING",  # no per-request log lines over HTTP
)

NOTES: list[str] = []


@server.tool(structured_output=False)  # a sentence: plain text
def add_note(text: str) -> str:
    """Keep a note (in memory, while the server runs)."""
    if not text.strip():
        raise ToolError("the note is empty")
    NOTES.append(text.strip())
    return f"note {len(NOTES)} kept"


@server.tool()
def list_notes(contains: str = "") -> list[str]:
    """The notes so far, oldest first (only those containing `contains`, if given)."""
    return [note for note in NOTES if contains.lower() in note.lower()]


@server.tool(structured_output=False)
def now(timezone: str = "UTC") -> str:
    """The date and time now in an IANA time zone (e.g. Europe/Paris)."""
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(f"unknown time zone {timezone!r}") from None
    return datetime.now(zone).isoformat(timespec="seconds")


@server.tool()
def roll_dice(sides: int = 6, count: int = 1) -> list[int]:
    """Roll `count` dice (1-100) of `sides` sides (2-1000)."""
    if not (2 <= sides <= 1000 and 1 <= count <= 100):
        raise ToolError("sides must be 2-1000 and count 1-100")
    return [random.randint(1, sides) for _ in range(count)]  # noqa: S311 - a game, not a secret


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("transport", nargs="?", default="stdio",
                        choices=["stdio", "streamable-http"])  # fmt: skip
    parser.add_argument("port", nargs="?", type=int, default=8765,
                        help="the HTTP port on 127.0.0.1 (default 8765)")  # fmt: skip
    opts = parser.parse_args()
    if opts.transport == "stdio":
        server.run("stdio")
    else:  # loopback only: an example server is nobody else's business
        server.run("streamable-http", host="127.0.0.1", port=opts.port)


if __name__ == "__main__":
    main()
