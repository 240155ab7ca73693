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
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp_types.jsonrpc import JSONRPCRequest, JSONRPCResponse
from pydantic import ValidationError

from mcpctl.sdk import SessionMessage

__all__ = ["Listing", "repair_tool", "tolerant_streams"]

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


def _conforms(result: dict[str, Any], version: str) -> bool:
    from mcp_types.methods import validate_server_result

    try:
        validate_server_result("tools/list", version, result)
    except ValidationError:
        return False
    except (KeyError, ValueError):
        pass  # a version the SDK has no schema for: nothing to check against
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
    if _conforms(result, version):
        return result  # the usual case: one check of the whole listing
    kept: list[Any] = []
    for position, tool in enumerate(tools, 1):
        name = tool.get("name") if isinstance(tool, dict) else None
        fixed, notes = repair_tool(tool, version)
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
                            item.message, JSONRPCResponse
                        ):
                            relayed = _inspect(item, methods.pop(item.message.id, None), listing)
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
