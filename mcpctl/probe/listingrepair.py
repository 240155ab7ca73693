"""Liberal in what mcpctl accepts from real servers: repair a tool listing, don't reject it.

The SDK validates every result against the negotiated protocol version's schema, and one tool
that breaks it fails the whole ``tools/list`` -- a published filesystem server whose input
schemas lack ``"type": "object"`` comes out "unhealthy" with a page-long validation dump.
:func:`tolerant_streams` sits between the transport and the SDK's session: it notes which
request each response answers, and repairs each non-conforming tool of a ``tools/list``
result before the SDK sees it -- an input schema without ``type`` is read as an object
schema, an optional field that does not conform is left out, a tool without a name is
dropped -- recording one warning per tool naming the fields. Everything else passes through
unchanged.

A schema nested deeper than the SDK goes is the server's business: a stdio server's line is
read by Python's parser when the SDK's stops (:func:`parse_message`; 200 levels), a field
nested too deep for the SDK's checks reaches it as a stand-in while the tool keeps what was
sent (:attr:`Listing.kept_schemas`), and a message no parser can follow answers its request
at once with an error saying so. A message a remote server's transport could not read fails
the requests waiting for an answer at once, instead of leaving them to their timeout.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp_types import ErrorData, JSONRPCMessage, jsonrpc_message_adapter
from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest, JSONRPCResponse
from pydantic import ValidationError

from mcpctl.sdk import SessionMessage

__all__ = [
    "Listing",
    "TooDeep",
    "parse_message",
    "repair_tool",
    "tolerant_streams",
    "too_deep_answer",
]

_OPTIONAL_TOOL_FIELDS = ("title", "description", "annotations", "icons", "execution", "_meta")
_FALLBACK_VERSION = "2025-11-25"


@dataclass
class Listing:
    """What the relay saw of a connection: repairs made, tools as the server sent them, and
    how long the tool listing may be cached (``ttlMs``, ``cacheScope``: the stateless era's
    caching hints; the shortest and narrowest over every page)."""

    protocol_version: str | None = None
    warnings: list[str] = field(default_factory=list)
    raw_tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    ttl_ms: int | None = None
    cache_scope: str | None = None
    #: Input schemas as sent, of the tools whose schema reached the SDK as a stand-in
    #: (nested deeper than it checks).
    kept_schemas: dict[str, dict[str, Any]] = field(default_factory=dict)

    def note_caching(self, result: dict[str, Any]) -> None:
        """Keep a listing page's caching hints (a bogus one reads as "do not cache")."""
        ttl = result.get("ttlMs")
        ttl = ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0 else 0
        self.ttl_ms = ttl if self.ttl_ms is None else min(self.ttl_ms, ttl)
        scope = result.get("cacheScope")
        if scope != "public" or self.cache_scope == "private":
            self.cache_scope = "private"
        else:
            self.cache_scope = "public"


# --- nesting -----------------------------------------------------------------------------

#: The depth (within a tool) from which a field reaches the SDK as a stand-in: its checks
#: serialize a result, and stop about 250 levels below the result.
SDK_FIELD_DEPTH = 128
_PARSE_ERROR = -32700
_TOO_DEEP = "the server's answer is nested too deeply to be read (no JSON parser here follows it)"
_STRING = rb'"(?:[^"\\]|\\.)*"'
_SCALAR = rb"(?:" + _STRING + rb"|-?[0-9][0-9.eE+-]*|true|false|null)"
_ID = rb'"id"\s*:\s*(-?[0-9]+|' + _STRING + rb")"
_HEAD_ID = re.compile(rb"\s*\{(?:\s*" + _STRING + rb"\s*:\s*" + _SCALAR + rb"\s*,)*?\s*" + _ID)
_TAIL_ID = re.compile(rb",\s*" + _ID + rb"\s*\}\s*$")


class TooDeep(ValueError):
    """A message nested deeper than any parser here follows; ``id`` is its request's, when
    it could be found (then the request is answered with an error instead of waiting)."""

    def __init__(self, request_id: int | str | None) -> None:
        super().__init__(_TOO_DEEP)
        self.id = request_id


def parse_message(raw: bytes) -> JSONRPCMessage:
    """The JSON-RPC message of one line a stdio server wrote.

    The SDK's parser stops at 200 levels of nesting; a message nested deeper (a tool's
    input schema can be) is read with Python's, which follows several hundred more.

    Raises:
        TooDeep: nested deeper than that.
        ValueError: not a JSON-RPC message.
    """
    try:
        return jsonrpc_message_adapter.validate_json(raw, by_name=False)
    except ValidationError as exc:
        if not any("recursion limit" in str(e.get("msg", "")) for e in exc.errors()):
            raise
    try:
        data = json.loads(raw)
    except RecursionError:
        raise TooDeep(_request_id(raw)) from None
    return jsonrpc_message_adapter.validate_python(data, by_name=False)


def _request_id(raw: bytes) -> int | str | None:
    """The ``id`` of an answer no parser follows, found before the nested part (after the
    members that are plain values) or as its last member."""
    if b'"method"' in raw[:256] + raw[-256:]:
        return None  # the server's own request (or a notification): no answer of ours to fail
    found = _HEAD_ID.match(raw) or _TAIL_ID.search(raw[-256:])
    if found is None:
        return None
    value = json.loads(found.group(1))
    return value if isinstance(value, int | str) else None


def too_deep_answer(error: TooDeep) -> SessionMessage | None:
    """The error answer to the request of a message too deep to read (``None``: its request
    is not known)."""
    if error.id is None:
        return None
    answer = JSONRPCError(
        jsonrpc="2.0", id=error.id, error=ErrorData(code=_PARSE_ERROR, message=_TOO_DEEP)
    )
    return SessionMessage(answer)


def _depth(value: object, limit: int) -> int:
    """How deep ``value`` nests (objects and arrays), counted up to ``limit + 1``; without
    recursion, which the value would outlast."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _within_sdk_depth(tool: object, listing: Listing) -> object:
    """``tool`` as the SDK can check it: an input schema nested deeper than it serializes
    becomes a stand-in (the one sent is kept in ``listing``), another such field is left
    out (the tool as sent is kept whole in ``listing.raw_tools``)."""
    if not isinstance(tool, dict) or _depth(tool, SDK_FIELD_DEPTH) <= SDK_FIELD_DEPTH:
        return tool
    shallow: dict[str, Any] = {}
    for key, value in tool.items():
        if _depth(value, SDK_FIELD_DEPTH - 1) < SDK_FIELD_DEPTH:
            shallow[key] = value
        elif key == "inputSchema" and isinstance(value, dict) and isinstance(tool.get("name"), str):
            listing.kept_schemas[tool["name"]] = value
            shallow[key] = {"type": "object"}
    return shallow


def _problems(tool: dict[str, Any], version: str) -> list[tuple[str, str]]:
    """(top-level field, message) of each way ``tool`` breaks the schema of ``version``."""
    from mcp_types.methods import validate_server_result

    try:
        validate_server_result("tools/list", version, {"tools": [tool]})
    except ValidationError as exc:
        out = []
        for err in exc.errors(include_url=False):
            loc = [str(p) for p in err.get("loc", ())]
            # ("tools", 0, "inputSchema", "type") -> "inputSchema" / "inputSchema.type"
            where = loc[2:] if loc[:1] == ["tools"] else loc
            out.append((where[0] if where else "", ".".join(where) or "tool"))
        return out
    except (KeyError, ValueError):
        return []  # a version the SDK has no schema for: nothing to check against
    return []


def repair_tool(tool: object, version: str) -> tuple[dict[str, Any] | None, list[str]]:
    """``tool`` made to conform (or ``None`` when it cannot be), and what was changed."""
    if not isinstance(tool, dict):
        return None, ["it is not a JSON object; the tool was left out"]
    fixed = dict(tool)
    notes: list[str] = []
    for _ in range(4):  # each round fixes every field reported; a few rounds at most
        problems = _problems(fixed, version)
        if not problems:
            return fixed, notes
        for top, where in problems:
            if top == "name":
                return None, ["name is missing or not a string; the tool was left out"]
            if top == "inputSchema":
                schema = fixed.get("inputSchema")
                if isinstance(schema, dict) and "type" not in schema:
                    fixed["inputSchema"] = {**schema, "type": "object"}
                    notes.append('inputSchema has no "type"; read as an object schema')
                else:
                    fixed["inputSchema"] = {"type": "object"}
                    notes.append(f"{where} does not conform; the tool accepts any arguments")
            elif top in ("outputSchema", *_OPTIONAL_TOOL_FIELDS) and top in fixed:
                del fixed[top]
                notes.append(f"{where} does not conform and was ignored")
            else:
                return None, [f"{where} does not conform; the tool was left out"]
    return None, ["the tool does not conform; it was left out"]


def _conforms(result: dict[str, Any], version: str) -> bool | None:
    """Whether ``result`` conforms (``None``: nested deeper than the SDK checks)."""
    from mcp_types.methods import validate_server_result

    try:
        validate_server_result("tools/list", version, result)
    except ValidationError:
        return False
    except KeyError:
        pass  # a version the SDK has no schema for: nothing to check against
    except ValueError as exc:
        return None if "depth" in str(exc) else True
    return True


def _repair_listing(result: dict[str, Any], listing: Listing) -> dict[str, Any]:
    tools = result.get("tools")
    if not isinstance(tools, list):
        return result
    # Repairs copy what they change, so the tools as sent stay as they are.
    listing.raw_tools.update(
        (t["name"], t) for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
    )
    version = listing.protocol_version or _FALLBACK_VERSION
    verdict = _conforms(result, version)
    if verdict is None:  # a tool nested too deep for the SDK: it gets a stand-in
        tools = [_within_sdk_depth(t, listing) for t in tools]
        result = {**result, "tools": tools}
        verdict = _conforms(result, version)
    if verdict:
        return result  # the usual case: one check of the whole listing
    kept: list[Any] = []
    for position, tool in enumerate(tools, 1):
        name = tool.get("name") if isinstance(tool, dict) else None
        # A tool nested too deep beside one that does not conform gets its stand-in here.
        fixed, notes = repair_tool(_within_sdk_depth(tool, listing), version)
        # A tool without a name is named by its place in the list.
        label = f"tool {name!r}" if isinstance(name, str) else f"tool #{position}"
        listing.warnings += [f"{label}: {note}" for note in dict.fromkeys(notes)]
        if fixed is not None:
            kept.append(fixed)
    return {**result, "tools": kept}


@contextlib.asynccontextmanager
async def tolerant_streams(
    read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
    write_stream: MemoryObjectSendStream[SessionMessage],
    listing: Listing,
    ended: anyio.Event | None = None,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """Streams for a ``ClientSession`` that relay the transport's, repairing tool listings;
    ``ended`` is set once the transport's side has ended (the server went away)."""
    methods: dict[Any, str] = {}
    to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    session_writes, from_session = anyio.create_memory_object_stream[SessionMessage](16)

    async def outgoing() -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async with from_session, write_stream:
                async for item in from_session:
                    if isinstance(item.message, JSONRPCRequest):
                        methods[item.message.id] = item.message.method
                    await write_stream.send(item)

    async def incoming() -> None:
        try:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async with read_stream, to_session:
                    async for item in read_stream:
                        relayed = item
                        if isinstance(item, SessionMessage) and isinstance(
                            item.message, JSONRPCResponse | JSONRPCError
                        ):
                            method = methods.pop(item.message.id, None)
                            if isinstance(item.message, JSONRPCResponse):
                                relayed = _inspect(item, method, listing)
                        elif isinstance(item, ValidationError):
                            # A message the transport could not read: what waits for an answer
                            # would wait for ever (a listen stream is not waiting for one).
                            for waiting, method in list(methods.items()):
                                if method != "subscriptions/listen":
                                    del methods[waiting]
                                    await to_session.send(_unreadable(waiting, method, item))
                        await to_session.send(relayed)
        finally:
            # The session sees the end only through a request it sends: say it to whoever
            # waits without one (a server followed between its notifications).
            if ended is not None:
                ended.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(outgoing)
        tg.start_soon(incoming)
        try:
            yield session_reads, session_writes
        finally:
            tg.cancel_scope.cancel()
            for stream in (session_reads, session_writes):
                with contextlib.suppress(Exception):
                    await stream.aclose()


def _unreadable(request_id: Any, method: str, exc: ValidationError) -> SessionMessage:
    from mcpctl.probe.failures import one_line

    deep = any("recursion limit" in str(e.get("msg", "")) for e in exc.errors())
    why = "it is nested too deeply to be read" if deep else one_line(_first_error(exc), 120)
    message = f"the server's answer to {method} could not be read: {why}"
    error = ErrorData(code=_PARSE_ERROR, message=message)
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    return str(errors[0].get("msg", "")) if errors else "not a JSON-RPC message"


def _inspect(item: SessionMessage, method: str | None, listing: Listing) -> SessionMessage:
    message = item.message
    assert isinstance(message, JSONRPCResponse)
    if method == "initialize":
        version = message.result.get("protocolVersion")
        listing.protocol_version = version if isinstance(version, str) else None
    elif method == "tools/list":
        if "ttlMs" in message.result or "cacheScope" in message.result:
            listing.note_caching(message.result)
        repaired = _repair_listing(message.result, listing)
        if repaired is not message.result:
            fixed = message.model_copy(update={"result": repaired})
            return SessionMessage(fixed, metadata=item.metadata)
    return item
