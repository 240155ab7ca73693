"""One server followed over a connection kept open: its catalog now, then after each change.

A server says its lists changed in the way of its era: ``subscriptions/listen`` (2026-07-28;
the client opens one stream and the server sends ``*_list_changed`` events on it) or a
``notifications/*/list_changed`` message on the session (the handshake era). Either way
:func:`follow_catalog` lists everything again and hands the new catalog over; the caller
diffs.
A server that offers neither is listed again every ``poll`` seconds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.config.placeholders import SecretSource
from mcpctl.probe.catalog import Catalog, catalog_of
from mcpctl.probe.connect import Connection, connect
from mcpctl.probe.eras import EraMemory
from mcpctl.sdk import ListenNotSupportedError, MCPError, listen

__all__ = ["follow_catalog"]

_CHANGES = (
    types.ToolListChangedNotification,
    types.PromptListChangedNotification,
    types.ResourceListChangedNotification,
)


async def follow_catalog(
    name: str,
    entry: ServerEntry,
    on_catalog: Callable[[Catalog], Awaitable[object]],
    *,
    secrets: SecretSource | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
    timeout: float | None = None,
    poll: float = 60.0,
) -> None:
    """Connect to a server and call ``on_catalog`` with its catalog, then with a new one each
    time it says a list changed (or every ``poll`` seconds when it cannot say); return when
    the server ends the connection.

    Raises:
        The errors of :func:`mcpctl.probe.connect.connect`, and of listing (``MCPError``,
        ``OSError``...) when the server fails or goes away.
    """
    changed_send, changed = anyio.create_memory_object_stream[str](64)
    # The end, said beside the channel too: a backlog may leave no room for CLOSED, and a
    # burst drained into one listing may hold it.
    closed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, _CHANGES):
            with contextlib.suppress(anyio.WouldBlock):  # a backlog: one re-list covers it
                changed_send.send_nowait(message.method)

    async with (
        connect(
            name, entry, timeout=timeout, secrets=secrets, protocol=protocol, eras=eras,
            message_handler=on_message,
        ) as conn,
        changed_send,
        changed,
        anyio.create_task_group() as tg,
    ):  # fmt: skip
        try:
            tg.start_soon(_on_end, conn, changed_send, closed)
            await on_catalog(await catalog_of(conn))
            live = await _subscribe(conn, changed_send, tg, closed)
            while True:
                with anyio.move_on_after(poll if not live else float("inf")):
                    await changed.receive()
                    await _drain(changed)
                if closed.is_set():
                    return
                await on_catalog(await catalog_of(conn))
        finally:
            tg.cancel_scope.cancel()  # the subscription's relay, before the connection ends


CLOSED = "closed"


def _close(out: Any, closed: anyio.Event) -> None:
    """Say the end: ``closed``, and :data:`CLOSED` to wake whoever waits for a change (a
    full channel has woken it already)."""
    closed.set()
    with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError):
        out.send_nowait(CLOSED)


async def _on_end(conn: Connection, out: Any, closed: anyio.Event) -> None:
    """Say the end once the server's side ends: a server that exits between two
    notifications is noticed then, not at the next listing (never, for one that notifies)."""
    if conn.ended is not None:
        await conn.ended.wait()
        _close(out, closed)


async def _subscribe(conn: Connection, out: Any, tg: TaskGroup, closed: anyio.Event) -> bool:
    """Whether the server will say when its lists change: the handshake era's notifications
    (already routed to ``out``), or a ``subscriptions/listen`` stream relayed to ``out`` by a
    task of the session (stateless era). ``False``: it must be polled."""
    caps = conn.capabilities
    said = [c for c in (caps.tools, caps.prompts, caps.resources) if c is not None]
    if conn.era.name == "legacy":
        return any(getattr(c, "list_changed", None) for c in said)
    opened = anyio.Event()
    failed: list[BaseException] = []

    async def relay() -> None:
        try:
            async with listen(
                conn.session, tools_list_changed=caps.tools is not None,
                prompts_list_changed=caps.prompts is not None,
                resources_list_changed=caps.resources is not None,
            ) as subscription:  # fmt: skip
                opened.set()
                async for event in subscription:
                    with contextlib.suppress(anyio.WouldBlock):
                        out.send_nowait(type(event).__name__)
        except (MCPError, ListenNotSupportedError, TimeoutError, RuntimeError) as exc:
            failed.append(exc)
            opened.set()
            if not isinstance(exc, MCPError | ListenNotSupportedError):
                _close(out, closed)  # the stream was lost: reconnect
            return
        # The server ended the stream: the connection is done with, reconnect.
        _close(out, closed)

    tg.start_soon(relay)
    await opened.wait()
    return not failed


async def _drain(stream: Any) -> None:
    """Take what else has arrived: a burst of changes is listed once."""
    while True:
        try:
            stream.receive_nowait()
        except anyio.WouldBlock:
            return
