"""A scripted MCP peer for in-process tests of the client side: a ClientSession over anyio
memory streams, answered with real JSON-RPC messages, one scripted answer per request."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import anyio
from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest, JSONRPCResponse

from mcpctl.errors import ProbeFailed
from mcpctl.probe.negotiate import CLIENT_HANDSHAKE_VERSIONS, CLIENT_MODERN_VERSIONS
from mcpctl.sdk import ClientSession, MCPError, SessionMessage

MODERN = CLIENT_MODERN_VERSIONS[-1]
HANDSHAKE = CLIENT_HANDSHAKE_VERSIONS[-1]
UNSUPPORTED = -32022
DEADLINE = 30  # seconds for one negotiation; the peer answers at once

# What the peer answers to one request: a result, an error (code, message, data), SILENT,
# or a callable of the request's params giving one of those.
SILENT = object()
Answer = Any


def discovered(*versions: str) -> dict[str, Any]:
    return {"supportedVersions": list(versions or (MODERN,)), "capabilities": {}}


def initialized(version: str = HANDSHAKE) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {},
        "serverInfo": {"name": "peer", "version": "1"},
    }


def unsupported(*versions: str, **extra: Any) -> tuple[int, str, Any]:
    return (UNSUPPORTED, "unsupported protocol version", {"supported": list(versions), **extra})


NOT_FOUND = (-32601, "Method not found: server/discover", None)


class Peer:
    """Answers each request by its method, in order; records what was asked."""

    def __init__(self, answers: dict[str, list[Answer]]) -> None:
        self.answers = {k: list(v) for k, v in answers.items()}
        self.asked: list[tuple[str, Any]] = []

    async def serve(self, incoming: Any, outgoing: Any) -> None:
        async for item in incoming:
            message = item.message
            if not isinstance(message, JSONRPCRequest):
                continue  # notifications (initialized) need no answer
            self.asked.append((message.method, message.params))
            queue = self.answers.get(message.method, [])
            answer = queue.pop(0) if queue else NOT_FOUND
            if callable(answer):
                answer = answer(message.params)
            if answer is SILENT:
                continue
            if isinstance(answer, tuple):
                code, text, data = answer
                error = {"code": code, "message": text}
                if data is not None:
                    error["data"] = data
                reply: Any = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
            else:
                reply = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=answer)
            await outgoing.send(SessionMessage(reply))

    @property
    def methods(self) -> list[str]:
        return [method for method, _ in self.asked]


def with_session(
    answers: dict[str, list[Answer]], work: Callable[[ClientSession], Any]
) -> tuple[Any, Peer]:
    """``work(session)`` on a session talking to a Peer; its result (or the MCPError,
    ProbeFailed or TimeoutError it raised), and the peer."""
    peer = Peer(answers)

    async def main() -> Any:
        to_client, client_reads = anyio.create_memory_object_stream[Any](16)
        client_writes, from_client = anyio.create_memory_object_stream[Any](16)
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as tg:
                tg.start_soon(peer.serve, from_client, to_client)
                try:
                    async with ClientSession(client_reads, client_writes) as session:
                        try:
                            return await work(session)
                        except (MCPError, ProbeFailed, TimeoutError) as exc:
                            return exc
                finally:
                    tg.cancel_scope.cancel()

    return anyio.run(main), peer


def with_connection(
    answers: dict[str, list[Answer]],
    work: Callable[[Any], Any],
    *,
    name: str = "srv",
    transport: str = "stdio",
) -> tuple[Any, Peer]:
    """``work(conn)`` on a :class:`mcpctl.probe.connect.Connection` to a Peer, set up as
    ``connect`` sets one up: its era settled in ``auto`` (a stateless era confirmed by the
    first request), tool listings relayed through ``tolerant_streams``. Its result (or the
    MCPError, ProbeFailed or OSError it raised), and the peer."""
    from mcpctl.config.model import ServerEntry
    from mcpctl.config.placeholders import ResolvedEntry
    from mcpctl.probe.connect import Connection
    from mcpctl.probe.listingrepair import Listing, tolerant_streams
    from mcpctl.probe.negotiate import handshake_instead, negotiate

    peer = Peer(answers)
    entry = ServerEntry(command="peer")

    async def main() -> Any:
        to_client, transport_reads = anyio.create_memory_object_stream[Any](16)
        transport_writes, from_client = anyio.create_memory_object_stream[Any](16)
        listing = Listing()
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as tg:
                tg.start_soon(peer.serve, from_client, to_client)
                try:
                    async with (
                        tolerant_streams(transport_reads, transport_writes, listing) as (r, w),
                        ClientSession(r, w) as session,
                    ):
                        try:
                            era = await negotiate(
                                session, name=name, mode="auto", transport="stdio", timeout=3
                            )
                            listing.protocol_version = era.version
                            conn = Connection(
                                name, session, transport, era, ResolvedEntry(name, entry),
                                listing=listing,
                            )  # type: ignore[arg-type]  # fmt: skip
                            if era.name == "modern":
                                conn.era_check = functools.partial(handshake_instead, session, 3)
                            return await work(conn)
                        except (MCPError, ProbeFailed, OSError) as exc:
                            return exc
                finally:
                    tg.cancel_scope.cancel()

    return anyio.run(main), peer
