"""Handshake-only MCP servers (2025-11-25) in raw JSON-RPC over stdio, for era negotiation.

python legacy_modes.py [silent-discover|elicit|list-changing]

Both answer ``initialize`` with protocolVersion 2025-11-25 (capabilities ``tools``, serverInfo
``legacy-test-server``), ``ping`` with ``{}``, ``tools/list`` (``echo`` {text}, ``add`` {a, b},
and in ``elicit`` mode ``ask``) and ``tools/call``; any other method gets -32601. They know
nothing of the 2026-07-28 ``_meta`` envelope and ignore it.

* ``silent-discover`` (the default): ``server/discover`` is never answered, as by servers that
  drop what they do not know; only a client-side timeout gets a client past it.
* ``elicit``: ``server/discover`` gets -32601. ``ask`` sends the client an ``elicitation/create``
  request (id ``elicit-N``, form mode, "Which colour?": colour red/green/blue, required; count
  integer; confirm boolean) in the middle of the call and answers the call once the client
  responds: ``colour=red count=2 confirm=True`` (the keys answered) on accept, an error result
  naming the action on decline or cancel, or the error the client answered with. A client that
  did not declare the elicitation capability gets an error result at once.

* ``list-changing``: ``server/discover`` gets -32601; capabilities say ``tools.listChanged``.
  Once the file named by ``LEGACY_SERVER_TRIGGER`` exists (looked for every 50 ms), the tool
  ``extra`` is listed too and ``notifications/tools/list_changed`` is sent once.

With ``LEGACY_SERVER_LOG`` set, every method received is appended to that file (one per line).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
import time
from typing import Any

VERSION = "2025-11-25"
SERVER_INFO = {"name": "legacy-test-server", "version": "1.0.0"}


def _tool(
    name: str, description: str, properties: dict[str, Any], *required: str
) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": list(required)}
    return {"name": name, "description": description, "inputSchema": schema}


ECHO = _tool("echo", "Return the text unchanged.", {"text": {"type": "string"}}, "text")
ADD = _tool(
    "add", "Add two integers.", {"a": {"type": "integer"}, "b": {"type": "integer"}}, "a", "b"
)
ASK = _tool("ask", "Ask the user which colour (an elicitation mid-call).", {})
COLOUR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "colour": {"type": "string", "enum": ["red", "green", "blue"]},
        "count": {"type": "integer"},
        "confirm": {"type": "boolean"},
    },
    "required": ["colour"],
}


def _log(method: str) -> None:
    path = os.environ.get("LEGACY_SERVER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(method + "\n")


_WRITE = threading.Lock()
EXTRA = _tool("extra", "A tool that came later.", {})


def _send(message: dict[str, Any]) -> None:
    with _WRITE:  # the trigger's thread writes too
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()


def _watch_trigger(tools: list[dict[str, Any]]) -> None:
    trigger = os.environ.get("LEGACY_SERVER_TRIGGER")
    if not trigger:
        return
    while not os.path.exists(trigger):
        time.sleep(0.05)
    tools.append(EXTRA)
    _send({"method": "notifications/tools/list_changed"})


def _text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


def _outcome(response: dict[str, Any]) -> dict[str, Any]:
    """The ``ask`` call's result, from the client's response to ``elicitation/create``."""
    if "error" in response:
        return _text(f"elicitation failed: {response['error'].get('message')}", error=True)
    result = response.get("result") or {}
    if result.get("action") != "accept":
        return _text(f"the user chose {result.get('action')}", error=True)
    content = result.get("content") or {}
    keys = COLOUR_SCHEMA["properties"]
    return _text(" ".join(f"{key}={content[key]}" for key in keys if key in content))


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "silent-discover"
    if mode not in ("silent-discover", "elicit", "list-changing"):
        sys.exit(f"unknown mode {mode!r}; one of silent-discover, elicit, list-changing")
    tools = [ECHO, ADD, ASK] if mode == "elicit" else [ECHO, ADD]
    if mode == "list-changing":
        threading.Thread(target=_watch_trigger, args=(tools,), daemon=True).start()
    can_elicit = False
    minted = itertools.count(1)
    waiting: dict[Any, Any] = {}  # our elicitation/create id -> the id of the tools/call it serves
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method = message.get("method")
        if isinstance(method, str):
            _log(method)
        if method is None:  # a response to one of our requests
            call_id = waiting.pop(message.get("id"), None)
            if call_id is not None:
                _send({"id": call_id, "result": _outcome(message)})
            continue
        if "id" not in message:
            continue  # a notification
        request_id, params = message["id"], message.get("params") or {}
        result: dict[str, Any] | None = None
        if method == "initialize":
            can_elicit = "elicitation" in (params.get("capabilities") or {})
            listed = {"listChanged": True} if mode == "list-changing" else {}
            result = {
                "protocolVersion": VERSION,
                "capabilities": {"tools": listed},
                "serverInfo": SERVER_INFO,
            }
        elif method == "server/discover" and mode == "silent-discover":
            continue  # never answered
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": list(tools)}
        elif method == "tools/call":
            name, args = params.get("name"), params.get("arguments") or {}
            if name == "ask" and mode == "elicit":
                if not can_elicit:
                    result = _text("the client cannot elicit", error=True)
                else:
                    ours = f"elicit-{next(minted)}"
                    waiting[ours] = request_id
                    form = {
                        "mode": "form",
                        "message": "Which colour?",
                        "requestedSchema": COLOUR_SCHEMA,
                    }
                    _send({"id": ours, "method": "elicitation/create", "params": form})
                    continue  # answered when the client responds
            elif name == "echo":
                result = _text(str(args.get("text")))
            elif (
                name == "add" and isinstance(args.get("a"), int) and isinstance(args.get("b"), int)
            ):
                result = _text(str(args["a"] + args["b"]))
            else:
                result = _text(f"cannot call {name!r} with {args!r}", error=True)
        if result is None:
            _send({"id": request_id, "error": {"code": -32601, "message": "Method not found"}})
        else:
            _send({"id": request_id, "result": result})


if __name__ == "__main__":
    main()
