"""A server in the test's own process: the SDK's ClientSession over memory streams, and a peer
that answers each request the test's way. For the code between a session and a server that
the stdio servers of tests/servers reach only seconds at a time (a process per test).

``answer(method, params, peer)`` returns a request's result (a dict) or raises
:class:`Failure` (its JSON-RPC error); ``peer.ask(method, params)`` sends the client a request
of the server's own (``elicitation/create``) and returns its answer. ``initialize`` is
answered by the peer (protocol 2025-11-25, the capabilities given); ``peer.methods`` lists
what the client sent, notifications included; ``peer.headers`` the HTTP headers each request
would carry (the transport's metadata: a stdio transport drops them).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import mcp_types
import pytest
from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest, JSONRPCResponse

VERSION = "2025-11-25"
TASKS = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
READ_TIMEOUT = 10  # seconds the session waits for one answer; the peer answers at once


class Failure(Exception):
    """A JSON-RPC error as the answer."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Peer:
    def __init__(
        self,
        answer: Callable[[str, dict[str, Any], Peer], Awaitable[dict[str, Any]]],
        capabilities: dict[str, Any],
    ) -> None:
        self.answer = answer
        self.capabilities = capabilities
        self.methods: list[str] = []
        self.params: list[tuple[str, dict[str, Any]]] = []
        self.headers: list[tuple[str, dict[str, str]]] = []  # what HTTP would send
        self._to_client: Any = None
        self._waiting: dict[Any, Any] = {}
        self._asked = 0

    async def ask(self, method: str, params: dict[str, Any]) -> Any:
        """A request to the client: its result, or its JSONRPCError."""
        self._asked += 1
        request_id = f"peer-{self._asked}"
        send, receive = anyio.create_memory_object_stream[Any](1)
        self._waiting[request_id] = send
        request = JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params)
        await self._send(request)
        reply = await receive.receive()
        return reply.result if isinstance(reply, JSONRPCResponse) else reply

    async def _send(self, message: Any) -> None:
        from mcpctl.sdk import SessionMessage

        await self._to_client.send(SessionMessage(message))

    async def _reply(self, request: JSONRPCRequest) -> None:
        params = dict(request.params or {})
        try:
            if request.method == "initialize":
                result = {"protocolVersion": VERSION, "capabilities": self.capabilities,
                          "serverInfo": {"name": "peer", "version": "1.0.0"}}  # fmt: skip
            else:
                result = await self.answer(request.method, params, self)
        except Failure as e:
            error = mcp_types.ErrorData(code=e.code, message=e.message)
            await self._send(JSONRPCError(jsonrpc="2.0", id=request.id, error=error))
            return
        await self._send(JSONRPCResponse(jsonrpc="2.0", id=request.id, result=result))

    async def serve(self, from_client: Any, to_client: Any) -> None:
        self._to_client = to_client
        async with anyio.create_task_group() as tg:
            async for message in from_client:
                m = message.message
                if isinstance(m, JSONRPCRequest):
                    self.methods.append(m.method)
                    self.params.append((m.method, dict(m.params or {})))
                    headers = getattr(message.metadata, "headers", None) or {}
                    self.headers.append((m.method, dict(headers)))
                    tg.start_soon(self._reply, m)
                elif isinstance(m, (JSONRPCResponse, JSONRPCError)):
                    await self._waiting.pop(m.id).send(m)
                else:
                    self.methods.append(m.method)

    def after(self, method: str) -> list[str]:
        """What the client sent after the (last) ``method``, notifications left out."""
        requests = [m for m, _ in self.params]
        return requests[len(requests) - requests[::-1].index(method) :]


def skip_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Make ``anyio.sleep`` record each wait of more than nothing and return at once: the
    intervals code asks for, read without a clock."""
    waits: list[float] = []
    checkpoint = anyio.sleep

    async def sleep(delay: float) -> None:
        if delay > 0:
            waits.append(delay)
        await checkpoint(0)

    monkeypatch.setattr(anyio, "sleep", sleep)
    return waits


def unwrapped(exc: BaseException) -> BaseException:
    """The one exception inside the task groups' exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


@contextlib.asynccontextmanager
async def session_with(
    answer: Callable[[str, dict[str, Any], Peer], Awaitable[dict[str, Any]]],
    capabilities: dict[str, Any] | None = None,
    *,
    modern: str | None = None,
    **session_args: Any,
) -> AsyncIterator[tuple[Any, Peer]]:
    """An initialized ClientSession talking to ``answer``, and its peer (capabilities
    default to tools and tasks for ``tools/call``). With ``modern`` (a version of the
    stateless era) the session speaks that era instead of the handshake's. What the block raises comes out of the
    task groups' exception groups as it was raised."""
    from mcpctl.sdk import ClientSession

    caps = capabilities if capabilities is not None else {"tools": {}, "tasks": TASKS}
    peer = Peer(answer, caps)
    to_client, client_reads = anyio.create_memory_object_stream[Any](32)
    client_writes, from_client = anyio.create_memory_object_stream[Any](32)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.serve, from_client, to_client)
            async with ClientSession(
                client_reads, client_writes, read_timeout_seconds=READ_TIMEOUT, **session_args
            ) as session:
                if modern is None:
                    await session.initialize()
                else:  # the stateless era, as if server/discover had answered
                    discovered = {"supportedVersions": [modern], "capabilities": caps}
                    session.adopt(mcp_types.DiscoverResult.model_validate(discovered))
                yield session, peer
            tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        raise unwrapped(group) from None
