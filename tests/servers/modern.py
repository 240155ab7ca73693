"""An MCP server that speaks only protocol revision 2026-07-28, in raw JSON-RPC over stdio.

python modern.py [modern|input-required|never-satisfied|list-changing]

That revision is stateless: no ``initialize`` handshake, no session, no ``ping``. Every request
carries its own ``_meta`` envelope (``io.modelcontextprotocol/protocolVersion``, ``.../clientInfo``,
``.../clientCapabilities``); every result carries ``resultType`` and the ``serverInfo`` stamp.

* ``server/discover``: supportedVersions ``["2026-07-28"]``, tools/prompts/resources
  capabilities, instructions, ``_meta["io.modelcontextprotocol/serverInfo"]`` =
  ``{"name": "modern-test-server", "version": "1.0.0"}``.
* ``initialize``, or any request whose envelope names another version or has none: error
  -32022 with data ``{"supported": ["2026-07-28"], "requested": <the version asked for>}``
  (``requested`` left out when the request named none). An envelope without clientCapabilities:
  -32602.
* ``tools/list`` (``echo`` {text}, ``add`` {a, b}, ``ask``), ``tools/call``; ``prompts/list``,
  ``resources/list`` and ``resources/templates/list`` (all empty); anything else, ``ping``
  included: -32601.
* ``ask`` answers a call with ``resultType: "input_required"``: one form-mode elicitation under
  the key ``"q"`` ("Which colour?": colour red/green/blue, required; count integer; confirm
  boolean) and ``requestState: "ask-1"``. The retry carrying ``inputResponses["q"]`` (accepted)
  and that requestState gets the text ``colour=red count=2 confirm=True`` (the keys answered); a
  declined or cancelled answer gets an error result; a retry without the answer is asked again;
  an unknown requestState gets -32602.

With ``MODERN_SERVER_SUFFIX`` set, that text ends every message, field title and description
and URL of its input requests. With ``MODERN_SERVER_TTL_MS`` set, ``tools/list`` says its listing stays fresh that long
(``cacheScope: "public"``).

Modes:

* ``modern`` (the default): the above.
* ``input-required``: also the tool ``ask_url``, whose call answers with a URL-mode elicitation
  (key ``"verify"``, url http://127.0.0.1:1/verify, "Open the page to continue") and whose
  retry with the answer gets the text ``done``.
* ``never-satisfied``: ``ask`` answers ``input_required`` on every round (requestState
  ``round-N``), so a client has to bound the rounds.
* ``list-changing``: serves ``subscriptions/listen``: it sends
  ``notifications/subscriptions/acknowledged`` (the honoured filter) and never answers the
  request; every frame on that stream carries ``_meta["io.modelcontextprotocol/subscriptionId"]``
  = the listen request's id. About 1 s after the first listen (or, with
  ``MODERN_SERVER_TRIGGER`` set, once that file exists; polled every 100 ms) ``tools/list``
  gains the tool ``extra`` and ``notifications/tools/list_changed`` goes to every open stream that
  asked for ``toolsListChanged``. A ``notifications/cancelled`` naming a listen request ends it.
  In the other modes ``subscriptions/listen`` is -32601.

With ``MODERN_SERVER_LOG`` set, every method received is appended to that file (one per line).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

VERSION = "2026-07-28"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = {"name": "modern-test-server", "version": "1.0.0"}
CACHE = {"ttlMs": 0, "cacheScope": "private"}
# MODERN_SERVER_TTL_MS: how long its tools/list says the listing stays fresh (default 0).
LISTING_CACHE = {"ttlMs": int(os.environ.get("MODERN_SERVER_TTL_MS", "0")), "cacheScope": "public"}

UNSUPPORTED_VERSION = -32022
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601


def _tool(
    name: str, description: str, properties: dict[str, Any], *required: str
) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": list(required)}
    return {"name": name, "description": description, "inputSchema": schema}


ECHO = _tool("echo", "Return the text unchanged.", {"text": {"type": "string"}}, "text")
ADD = _tool(
    "add", "Add two integers.", {"a": {"type": "integer"}, "b": {"type": "integer"}}, "a", "b"
)
ASK = _tool("ask", "Ask the user which colour (an input_required round trip).", {})
ASK_URL = _tool("ask_url", "Send the user to a page (a URL-mode elicitation).", {})
EXTRA = _tool("extra", "Listed once the tool list has changed.", {})

COLOUR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "colour": {"type": "string", "enum": ["red", "green", "blue"]},
        "count": {"type": "integer"},
        "confirm": {"type": "boolean"},
    },
    "required": ["colour"],
}
# MODERN_SERVER_SUFFIX: text appended to every message, field title and URL of its input
# requests (the adversarial suite puts escape sequences and a resolved secret there).
SUFFIX = os.environ.get("MODERN_SERVER_SUFFIX", "")
if SUFFIX:
    for spec in COLOUR_SCHEMA["properties"].values():
        spec["title"] = "Pick" + SUFFIX
        spec["description"] = "About" + SUFFIX
ASK_FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Which colour?" + SUFFIX,
        "requestedSchema": COLOUR_SCHEMA,
    },
}
ASK_PAGE = {
    "method": "elicitation/create",
    "params": {
        "mode": "url",
        "message": "Open the page to continue" + SUFFIX,
        "url": "http://127.0.0.1:1/verify" + SUFFIX,
    },
}


class Failure(Exception):
    """A JSON-RPC error to answer with."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


def answered(content: dict[str, Any]) -> str:
    """``colour=red count=2 confirm=True``: the answered keys, in the schema's order."""
    return " ".join(
        f"{key}={content[key]}" for key in COLOUR_SCHEMA["properties"] if key in content
    )


def input_required(key: str, request: dict[str, Any], state: str) -> dict[str, Any]:
    return {"resultType": "input_required", "inputRequests": {key: request}, "requestState": state}


def unsupported(requested: Any) -> Failure:
    data: dict[str, Any] = {"supported": [VERSION]}
    if isinstance(requested, str):
        data["requested"] = requested
    return Failure(UNSUPPORTED_VERSION, "Unsupported protocol version", data)


class ModernServer:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.lock = threading.Lock()  # one writer at a time: the reader and the watcher
        self.listeners: dict[Any, dict[str, Any]] = {}  # listen request id -> honoured filter
        self.listening = threading.Event()
        self.changed = False
        self.rounds = 0

    # --- the wire ---------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        with self.lock:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            sys.stdout.flush()

    def serve(self) -> None:
        if self.mode == "list-changing":
            threading.Thread(target=self.watch, daemon=True).start()
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            method = message.get("method")
            if isinstance(method, str):
                _log(method)
            if method is None:
                continue  # a response: this server never asks anything
            params = message.get("params") or {}
            if "id" not in message:
                if method == "notifications/cancelled":
                    with self.lock:
                        self.listeners.pop(params.get("requestId"), None)
                continue
            try:
                result = self.answer(message["id"], method, params)
            except Failure as e:
                error = {"code": e.code, "message": e.message}
                if e.data is not None:
                    error["data"] = e.data
                self.send({"id": message["id"], "error": error})
                continue
            if result is not None:  # None: a listen stream, answered by notifications only
                result.setdefault("resultType", "complete")
                result.setdefault("_meta", {})[SERVER_INFO_KEY] = SERVER_INFO
                self.send({"id": message["id"], "result": result})

    # --- requests ---------------------------------------------------------------------------

    def answer(self, request_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "initialize":
            raise unsupported(params.get("protocolVersion"))
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        if meta.get(PROTOCOL_VERSION_KEY) != VERSION:
            raise unsupported(meta.get(PROTOCOL_VERSION_KEY))
        if CLIENT_CAPABILITIES_KEY not in meta:
            raise Failure(INVALID_PARAMS, f"params._meta is missing {CLIENT_CAPABILITIES_KEY}")
        if method == "server/discover":
            listing = {"listChanged": True} if self.mode == "list-changing" else {}
            return {
                "supportedVersions": [VERSION],
                "capabilities": {"tools": listing, "prompts": {}, "resources": {}},
                "instructions": "A modern-only test server: echo, add and ask.",
                **CACHE,
            }
        if method == "tools/list":
            return {"tools": self.tools(), **LISTING_CACHE}
        if method == "tools/call":
            return self.call(params)
        if method == "prompts/list":
            return {"prompts": [], **CACHE}
        if method == "resources/list":
            return {"resources": [], **CACHE}
        if method == "resources/templates/list":
            return {"resourceTemplates": [], **CACHE}
        if method == "subscriptions/listen" and self.mode == "list-changing":
            self.listen(request_id, params.get("notifications") or {})
            return None
        raise Failure(METHOD_NOT_FOUND, "Method not found", method)

    def tools(self) -> list[dict[str, Any]]:
        tools = [ECHO, ADD, ASK]
        if self.mode == "input-required":
            tools.append(ASK_URL)
        if self.changed:
            tools.append(EXTRA)
        return tools

    def call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        args = params.get("arguments") or {}
        if name not in {tool["name"] for tool in self.tools()}:
            return text(f"no tool {name!r}", error=True)
        if name == "echo":
            return text(str(args.get("text")))
        if name == "add":
            a, b = args.get("a"), args.get("b")
            if not (isinstance(a, int) and isinstance(b, int)):
                return text("a and b must be integers", error=True)
            return text(str(a + b))
        if name == "extra":
            return text("extra")
        responses = params.get("inputResponses") or {}
        state = params.get("requestState")
        if name == "ask" and self.mode == "never-satisfied":
            self.rounds += 1
            return input_required("q", ASK_FORM, f"round-{self.rounds}")
        key, request, expected = (
            ("q", ASK_FORM, "ask-1") if name == "ask" else ("verify", ASK_PAGE, "url-1")
        )
        if state is not None and state != expected:
            raise Failure(INVALID_PARAMS, "Invalid or expired requestState")
        reply = responses.get(key)
        if state is None or not isinstance(reply, dict):
            return input_required(key, request, expected)
        if reply.get("action") != "accept":
            return text(f"the user chose {reply.get('action')}", error=True)
        return text(answered(reply.get("content") or {}) if name == "ask" else "done")

    # --- subscriptions/listen ---------------------------------------------------------------

    def listen(self, request_id: Any, wanted: dict[str, Any]) -> None:
        honoured: dict[str, Any] = {
            key: True
            for key in ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
            if wanted.get(key) is True
        }
        if wanted.get("resourceSubscriptions"):
            honoured["resourceSubscriptions"] = list(wanted["resourceSubscriptions"])
        ack = {"notifications": honoured, "_meta": {SUBSCRIPTION_ID_KEY: request_id}}
        self.send({"method": "notifications/subscriptions/acknowledged", "params": ack})
        with self.lock:  # registered after the ack, so the ack is the stream's first frame
            self.listeners[request_id] = honoured
        self.listening.set()

    def watch(self) -> None:
        trigger = os.environ.get("MODERN_SERVER_TRIGGER")
        if trigger:
            while not os.path.exists(trigger):
                time.sleep(0.1)
        else:
            self.listening.wait()
            time.sleep(1.0)
        with self.lock:
            self.changed = True
            streams = [
                sid for sid, honoured in self.listeners.items() if honoured.get("toolsListChanged")
            ]
        for sid in streams:
            event = {"_meta": {SUBSCRIPTION_ID_KEY: sid}}
            self.send({"method": "notifications/tools/list_changed", "params": event})


def _log(method: str) -> None:
    path = os.environ.get("MODERN_SERVER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(method + "\n")


MODES = ("modern", "input-required", "never-satisfied", "list-changing")

if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "modern"
    if mode not in MODES:
        sys.exit(f"unknown mode {mode!r}; one of {', '.join(MODES)}")
    ModernServer(mode).serve()
