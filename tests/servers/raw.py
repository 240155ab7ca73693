"""An MCP server speaking raw JSON-RPC over stdio, without the SDK's models.

It can send what the SDK's server models would refuse, the way real servers do.

python raw.py [tools|clean|bad-init|list-error|prompts-error|slow]

* ``tools`` (the default): a valid handshake, then a ``tools/list`` that breaks the schema
  as published servers do -- an input schema with ``$schema`` and ``properties`` but no
  ``type`` (like @modelcontextprotocol/server-filesystem@2025.8.21), an output schema that
  is not an object schema, ``annotations`` that are not an object, a tool without a name,
  a tool without an input schema, one whose input schema is not an object -- and answers
  ``tools/call``.
* ``clean``: a handshake-only server with one conforming tool (nothing to repair).
* ``bad-init``: answers ``initialize`` with a result missing its required fields.
* ``list-error``: a valid handshake (tools, prompts and resources offered), then every list
  answered with a JSON-RPC error (-32603 "the index is unavailable"); ``ping`` works.
* ``prompts-error``: one conforming tool and no resources, but ``prompts/list`` answered
  with that error.
* ``slow``: one conforming tool, listed ``RAW_SERVER_DELAY`` seconds (default 1) late.

With ``RAW_SERVER_LOG`` set, every method received is appended to that file (one per
line), so a test can tell what reached the server.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

DEFAULT_VERSION = "2025-11-25"

TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_time",
        "description": "A conforming tool with a strict schema.",
        "inputSchema": {
            "type": "object",
            "properties": {"timezone": {"type": "string"}},
            "required": ["timezone"],
            "additionalProperties": False,
        },
    },
    {
        "name": "read_file",
        "description": "Read a file (its input schema has no type, like server-filesystem's).",
        "inputSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        },
    },
    {
        "name": "list_names",
        "description": "Its output schema is an array schema: tools must output objects.",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {"type": "array", "items": {"type": "string"}},
    },
    {
        "name": "annotated",
        "description": "Its annotations are a string, not an object.",
        "inputSchema": {"type": "object"},
        "annotations": "read-only",
    },
    {
        "description": "A tool without a name: nobody can call it.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "no_schema",
        "description": "It has no input schema at all.",
    },
    {
        "name": "any_args",
        "description": "Its input schema is a list, not a schema.",
        "inputSchema": ["path"],
    },
]


def _log(method: str) -> None:
    path = os.environ.get("RAW_SERVER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(method + "\n")


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _call(params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "read_file":
        return _text(f"contents of {args.get('path')}")
    if name == "get_time":
        return _text(f"12:00 in {args.get('timezone')}")
    if name == "list_names":
        return _text('["a", "b"]')
    return {"content": [{"type": "text", "text": f"no tool {name!r}"}], "isError": True}


class Refused(Exception):
    """A request answered with a JSON-RPC error."""


LIST_ERROR = {"code": -32603, "message": "the index is unavailable"}


def answer(mode: str, request: dict[str, Any]) -> dict[str, Any] | None:
    """The result of one request (``None``: method not found).

    Raises:
        Refused: the mode answers it with an error.
    """
    method = request.get("method", "")
    params = request.get("params") or {}
    if method == "initialize":
        version = params.get("protocolVersion") or DEFAULT_VERSION
        if mode == "bad-init":
            return {"protocolVersion": version}  # no capabilities, no serverInfo
        capabilities: dict[str, Any] = {"tools": {}}
        if mode in ("list-error", "prompts-error"):
            capabilities["prompts"] = {}
        if mode == "list-error":
            capabilities["resources"] = {}
        return {
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": {"name": "raw-test-server", "version": "0.1.0"},
        }
    if method == "ping":
        return {}
    if mode == "list-error" and method.endswith("/list"):
        raise Refused
    if mode == "prompts-error" and method == "prompts/list":
        raise Refused
    if method == "tools/list":
        if mode == "slow":
            time.sleep(float(os.environ.get("RAW_SERVER_DELAY", "1")))
        return {"tools": TOOLS if mode in ("tools", "bad-init") else TOOLS[:1]}
    if method == "tools/call":
        return _call(params)
    return None


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "tools"
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        method = request.get("method")
        if isinstance(method, str):
            _log(method)
        if "id" not in request or method is None:
            continue  # a notification, or a response to us: nothing to answer
        try:
            result = answer(mode, request)
        except Refused:
            _send({"id": request["id"], "error": LIST_ERROR})
            continue
        if result is None:
            _send({"id": request["id"], "error": {"code": -32601, "message": "Method not found"}})
        else:
            _send({"id": request["id"], "result": result})


if __name__ == "__main__":
    main()
