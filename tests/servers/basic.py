"""A small, well-behaved MCP server built with the SDK's MCPServer.

python basic.py [stdio|sse|streamable-http] [PORT] [--tools N] [--structured]

Besides plain tools it has: ``slow`` (sleeps), ``record`` (appends to the file named by
``BASIC_SERVER_CALL_LOG``, to prove whether a call arrived), ``image``, ``audio`` and
``resource`` (content that is not text) and ``headers`` (the HTTP request headers it
received; empty over stdio). With ``--structured`` it also has ``summary`` (a sentence of
text and, apart from it, structured content that says the same in other words) and
``figures`` (structured content and no content block at all).
"""

from __future__ import annotations

import argparse
import base64
import os
import struct
import zlib

import anyio
import mcp_types as types
from mcp.server.mcpserver import Audio, Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("basic-test-server")

CALL_LOG_VAR = "BASIC_SERVER_CALL_LOG"


def _png_1x1() -> bytes:
    """A valid 1x1 PNG, built here (deterministic bytes)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte + one red pixel
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _wav_silence(samples: int = 100) -> bytes:
    """A valid 8-bit mono WAV of ``samples`` samples of silence."""
    data = b"\x80" * samples
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)
    return (
        b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE"
        + b"fmt " + struct.pack("<I", len(fmt)) + fmt
        + b"data" + struct.pack("<I", len(data)) + data
    )  # fmt: skip


PNG = _png_1x1()
WAV = _wav_silence()
BLOB = bytes(range(256))


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


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep for the given number of seconds, then answer."""
    await anyio.sleep(seconds)
    return f"slept {seconds:g} s"


@server.tool()
def record(note: str, times: int = 1) -> str:
    """Append the note to the file named by BASIC_SERVER_CALL_LOG (proof that a call arrived)."""
    path = os.environ.get(CALL_LOG_VAR)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{note}\n" * times)
    return f"recorded {note!r} {times} time(s)"


@server.tool()
def image() -> Image:
    """A 1x1 PNG."""
    return Image(data=PNG, format="png")


@server.tool()
def audio() -> Audio:
    """A short WAV of silence."""
    return Audio(data=WAV, format="wav")


@server.tool()
def resource() -> list[types.ContentBlock]:
    """A text block, then a text resource and a binary resource, embedded."""
    return [
        types.TextContent(type="text", text="two resources follow"),
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(
                uri="memo://note", mime_type="text/plain", text="hello, resource"
            ),
        ),
        types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri="memo://blob",
                mime_type="application/octet-stream",
                blob=base64.b64encode(BLOB).decode(),
            ),
        ),
    ]


@server.tool()
def headers(ctx: Context) -> dict[str, str]:
    """The HTTP request headers this call arrived with (lower-case names; {} over stdio)."""
    received = ctx.headers or {}
    return {str(k).lower(): str(v) for k, v in received.items()}


def summary(city: str) -> types.CallToolResult:
    """A sentence for people, and the same as data: the two differ, as in real servers."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"It is sunny in {city}, 21 °C.")],
        structured_content={"city": city, "sky": "sunny", "celsius": 21},
    )


def figures() -> types.CallToolResult:
    """Structured content only: no content block."""
    return types.CallToolResult(content=[], structured_content={"count": 3, "unit": "items"})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", nargs="?", default="stdio")
    parser.add_argument("port", nargs="?", type=int, default=0)
    parser.add_argument("--tools", type=int, default=0, help="add N extra tools")
    parser.add_argument("--structured", action="store_true", help="add summary and figures")
    opts = parser.parse_args()
    if opts.structured:
        server.add_tool(summary)
        server.add_tool(figures)
    for i in range(opts.tools):
        server.add_tool(lambda: "x", name=f"extra_{i:03d}", description=f"extra tool {i}")
    if opts.transport == "stdio":
        server.run("stdio")
    else:
        server.run(opts.transport, host="127.0.0.1", port=opts.port)


if __name__ == "__main__":
    main()
