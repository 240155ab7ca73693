"""An MCP server in raw JSON-RPC over stdio that sends more than a client can take in.

python overreach.py MODE [NAME]            (stdio)
python overreach.py http PORT MODE [NAME]  (streamable HTTP at http://127.0.0.1:PORT/mcp)

The handshake (2025-11-25) works in every mode but ``versions``: ``initialize``, ``ping``,
``tools/list``, ``tools/call`` (any tool answers ``ok``); ``server/discover`` gets -32601
unless the mode says otherwise. ``NAME`` (default ``x``) names its one tool ``tool_NAME``.

* ``plain``: one tool, ``tool_NAME``, described by its own name (twelve of them at once give
  twelve configurations with twelve different tools).
* ``versions``: ``server/discover`` lists ``OVERREACH_VERSIONS`` (default 5000) made-up
  versions of ``OVERREACH_VERSION_LENGTH`` (default 1000) characters, then ``2026-07-28``,
  and the stateless era works; ``initialize`` (or a request naming another version) gets
  -32022 naming the same made-up versions only (``supported``), and a server name made of
  ``OVERREACH_VERSION_LENGTH`` letters.
* ``long-words``: ``server/discover`` gets -32601 with a message of 10,000 characters, and
  ``initialize`` a result naming a protocol version of 5,000 characters.
* ``claims-modern``: ``server/discover`` says ``2026-07-28``, but anything else before
  ``initialize`` gets -32600 "Bad Request: Server not initialized": it speaks only the
  handshake.
* ``same-cursor``: tools, prompts and resources offered; every page of ``tools/list``,
  ``prompts/list``, ``resources/list`` and ``resources/templates/list`` lists the same item
  with ``nextCursor: "again"``.
* ``deep``: ``tool_NAME`` has an input schema nested ``OVERREACH_DEPTH`` (default 150)
  objects deep (``{"type": "object", "properties": {"a": ...}}``), beside a plain tool
  ``flat``.
* ``big``: ``OVERREACH_TOOLS`` (default 1000) tools whose descriptions together make about
  ``OVERREACH_BYTES`` (default 10 MB) of random words of ``OVERREACH_WORD`` (default 99)
  letters: long ones are slow to tokenize, short ones never repeat.

With ``OVERREACH_LOG`` set, every method received is appended to that file (one per line).
"""

from __future__ import annotations

import json
import os
import random
import sys
from typing import Any

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
STATELESS = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
INFO = {"name": "overreach-test-server", "version": "1.0.0"}


class Failure(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def made_up_versions() -> list[str]:
    length = _env_int("OVERREACH_VERSION_LENGTH", 1000)
    return [f"v{i:05d}-".ljust(length, "x") for i in range(_env_int("OVERREACH_VERSIONS", 5000))]


def tool(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "description": description,
            "inputSchema": schema or {"type": "object", "properties": {}}}  # fmt: skip


class Raw(str):
    """A result already in JSON (nested deeper than ``json.dumps`` goes)."""


def nested(depth: int) -> str:
    """``{"type": "object", "properties": {"a": ...}}`` ``depth`` times, as JSON text."""
    return '{"type": "object", "properties": {"a": ' * depth + '{"type": "string"}' + "}}" * depth


def big_tools() -> list[dict[str, Any]]:
    """Descriptions of random words (99 letters: slow to tokenize; a few: many pieces that
    never repeat, for a tokenizer's memo to fill up on)."""
    count = _env_int("OVERREACH_TOOLS", 1000)
    size = _env_int("OVERREACH_BYTES", 10_000_000) // count
    length = _env_int("OVERREACH_WORD", 99)
    letters = bytes(range(ord("a"), ord("z") + 1)) + bytes(range(ord("A"), ord("Z") + 1))
    table = bytes(letters[i % len(letters)] for i in range(256))
    noise = random.Random(7).randbytes(count * size).translate(table).decode("ascii")
    tools = []
    for i in range(count):
        text = noise[i * size : (i + 1) * size]
        words = " ".join(text[j : j + length] for j in range(0, len(text), length + 1))
        tools.append(tool(f"big_{i:04d}", words))
    return tools


class Server:
    def __init__(self, mode: str, name: str) -> None:
        self.mode, self.name = mode, name
        self.initialized = False

    def tools(self) -> list[dict[str, Any]]:
        own = tool(f"tool_{self.name}", f"The tool of server {self.name}.")
        if self.mode == "big":
            return big_tools()
        return [own]

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any] | Raw:
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        if self.mode == "versions":
            return self.versions(method, params, meta)
        if self.mode == "long-words" and method in ("server/discover", "initialize"):
            if method == "server/discover":
                raise Failure(-32601, "Method not found: " + "w" * 10_000)
            return {"protocolVersion": HANDSHAKE + "y" * 5000, "capabilities": {"tools": {}},
                    "serverInfo": INFO}  # fmt: skip
        if method == "server/discover" and self.mode == "claims-modern":
            return {"supportedVersions": [MODERN], "capabilities": {"tools": {}}}
        if method == "initialize":
            self.initialized = True
            capabilities: dict[str, Any] = {"tools": {}}
            if self.mode == "same-cursor":
                capabilities.update(prompts={}, resources={})
            return {"protocolVersion": HANDSHAKE, "capabilities": capabilities, "serverInfo": INFO}
        if self.mode == "claims-modern" and not self.initialized:
            raise Failure(-32600, "Bad Request: Server not initialized")
        if method == "ping":
            return {}
        if method == "tools/call":
            return {"content": [{"type": "text", "text": "ok"}], "isError": False}
        if self.mode == "same-cursor":
            page = {
                "tools/list": ("tools", tool("again", "Listed on every page.")),
                "prompts/list": ("prompts", {"name": "again"}),
                "resources/list": ("resources", {"uri": "memo://again", "name": "again"}),
                "resources/templates/list": (
                    "resourceTemplates",
                    {"uriTemplate": "memo://{key}", "name": "again"},
                ),
            }.get(method)
            if page is not None:
                return {page[0]: [page[1]], "nextCursor": "again"}
        if method == "tools/list" and self.mode == "deep":
            deep = json.dumps({"name": f"tool_{self.name}", "description": "A deep one."})[:-1]
            schema = nested(_env_int("OVERREACH_DEPTH", 150))
            flat = json.dumps(tool("flat", "A plain tool."))
            return Raw(f'{{"tools": [{flat}, {deep}, "inputSchema": {schema}}}]}}')
        if method == "tools/list":
            return {"tools": self.tools()}
        raise Failure(-32601, "Method not found")

    def versions(self, method: str, params: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        versions = made_up_versions()
        if method == "server/discover" and meta.get(PROTOCOL_VERSION_KEY) == MODERN:
            return {"supportedVersions": [*versions, MODERN], "capabilities": {"tools": {}},
                    **STATELESS}  # fmt: skip
        if method == "initialize" or meta.get(PROTOCOL_VERSION_KEY) != MODERN:
            name = "n" * _env_int("OVERREACH_VERSION_LENGTH", 1000)
            raise Failure(-32022, f"Unsupported protocol version; server {name}",
                          {"supported": versions})  # fmt: skip
        if method == "tools/list":
            return {"tools": self.tools(), **STATELESS}
        if method == "tools/call":
            return {"content": [{"type": "text", "text": "ok"}], "resultType": "complete"}
        raise Failure(-32601, "Method not found")


def respond(server: Server, message: dict[str, Any]) -> str | None:
    """The line answering ``message`` (``None`` for a notification or a response)."""
    method = message.get("method")
    log = os.environ.get("OVERREACH_LOG")
    if log and isinstance(method, str):
        with open(log, "a", encoding="utf-8") as f:
            f.write(method + "\n")
    if "id" not in message or not isinstance(method, str):
        return None
    head = json.dumps({"jsonrpc": "2.0", "id": message["id"]})[:-1]
    try:
        result = server.answer(method, message.get("params") or {})
        body = result if isinstance(result, Raw) else json.dumps(result)
        return f'{head}, "result": {body}}}'
    except Failure as e:
        error: dict[str, Any] = {"code": e.code, "message": e.message}
        if e.data is not None:
            error["data"] = e.data
        return json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error})


def serve_http(server: Server, port: int) -> None:
    """Streamable HTTP at http://127.0.0.1:PORT/mcp: each POST answered with JSON (202 for a
    notification), no session, no standing stream (GET and DELETE: 405)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            reply = respond(server, json.loads(body))
            if reply is None:
                self.send_response(202)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            data = reply.encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def refuse(self) -> None:
            self.send_response(405)
            self.send_header("allow", "POST")
            self.send_header("content-length", "0")
            self.end_headers()

        do_GET = do_DELETE = refuse

        def log_message(self, format: str, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main() -> None:
    args = sys.argv[1:]
    port = None
    if args[0] == "http":
        port, args = int(args[1]), args[2:]
    server = Server(args[0], args[1] if len(args) > 1 else "x")
    if port is not None:
        serve_http(server, port)
        return
    for line in sys.stdin:
        if line.strip():
            reply = respond(server, json.loads(line))
            if reply is not None:
                sys.stdout.write(reply + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
