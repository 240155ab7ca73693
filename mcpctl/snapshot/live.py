"""Following servers while they run: each change of what they offer, as it happens.

    async with watch_servers(config.enabled()) as events:
        async for event in events:
            if event.kind == "changed" and event.change.definitions_changed:
                alert(event.name, event.change)      # a tool now says something else

Beside :func:`mcpctl.snapshot.watch.watch_config` (changes of the file), this keeps one
connection to each server and reports what it offers as it changes -- tools, prompts and
resource templates added, removed, renamed or changed in place, with the same field-level
diff ``snapshot diff`` shows -- so a tool that changes what it says while an agent runs is
flagged at that moment, not at the next boot. Servers of both protocol eras are followed
(:mod:`mcpctl.probe.catalogfollow`). A server that fails or ends the connection is reconnected
with exponential backoff; its catalog after a reconnect is diffed against the last one seen.
Leaving the block (or cancelling it) stops every server started.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.snapshot.diff import ServerChange, diff_server_states

if TYPE_CHECKING:
    from mcpctl.config.placeholders import SecretSource
    from mcpctl.probe.catalog import Catalog
    from mcpctl.probe.eras import EraMemory
    from mcpctl.snapshot.model import ServerState

__all__ = ["ServerEvent", "watch_servers"]

EventKind = Literal["connected", "changed", "disconnected"]


@dataclass(frozen=True)
class ServerEvent:
    """Something that happened to one followed server.

    ``connected``: it was reached (again), ``era`` says in which protocol era; ``changed``:
    what it offers changed (``change``, as ``snapshot diff`` shows it); ``disconnected``: it
    failed or went away (``error``), and is retried after ``retry_in`` seconds.
    """

    name: str
    kind: EventKind
    change: ServerChange | None = None
    error: str | None = None
    era: str | None = None
    tools: int | None = None
    retry_in: float | None = None
    time: datetime = field(default_factory=lambda: datetime.now().astimezone())

    def to_data(self) -> dict[str, Any]:
        """The JSON view (names and fields; definitions as the server sent them)."""
        out: dict[str, Any] = {
            "time": self.time.isoformat(timespec="seconds"),
            "event": self.kind,
            "name": self.name,
        }
        if self.era is not None:
            out["protocol_version"] = self.era
        if self.tools is not None:
            out["tools"] = self.tools
        if self.change is not None:
            out["change"] = self.change.to_data()
        if self.error is not None:
            out["error"] = self.error
        if self.retry_in is not None:
            out["retry_in_s"] = self.retry_in
        return out


@contextlib.asynccontextmanager
async def watch_servers(
    entries: Mapping[str, ServerEntry],
    *,
    secrets: SecretSource | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
    timeout: float | None = None,
    poll: float = 60.0,
    backoff: tuple[float, float] = (1.0, 60.0),
) -> AsyncIterator[AsyncIterator[ServerEvent]]:
    """Follow each server of ``entries`` (name -> entry; disabled ones are left out) and
    give its events, as they come, to the ``async for`` over what the block receives.

    ``protocol``, ``eras``, ``secrets`` and ``timeout`` are those of
    :func:`mcpctl.probe.connect.connect`; ``poll`` is how often a server that cannot say
    when its lists change is listed again; a server that fails is retried after
    ``backoff[0]`` seconds, doubling up to ``backoff[1]``.
    """
    import anyio

    send, receive = anyio.create_memory_object_stream[ServerEvent](256)
    options: dict[str, Any] = {"secrets": secrets, "protocol": protocol, "eras": eras,
                               "timeout": timeout, "poll": poll}  # fmt: skip
    async with anyio.create_task_group() as tg, send, receive:
        for name, entry in entries.items():
            if entry.enabled:
                tg.start_soon(_follow, name, entry, send, options, backoff)
        try:
            yield receive
        finally:
            tg.cancel_scope.cancel()


async def _follow(
    name: str,
    entry: ServerEntry,
    send: Any,
    options: dict[str, Any],
    backoff: tuple[float, float],
) -> None:
    import anyio

    from mcpctl.probe.catalogfollow import follow_catalog
    from mcpctl.probe.failures import classify, one_line
    from mcpctl.snapshot.probing import state_of

    last: ServerState | None = None
    delay = backoff[0]
    reported_down = False
    while True:
        up = False

        async def seen(found: Catalog) -> None:
            nonlocal last, up, delay, reported_down
            state = state_of(found)
            if not up:
                up, delay, reported_down = True, backoff[0], False
                await send.send(ServerEvent(name, "connected", era=found.protocol_version,
                                            tools=len(found.tools)))  # fmt: skip
            if last is not None:
                change = diff_server_states(name, last, state)
                if not change.empty:
                    await send.send(ServerEvent(name, "changed", change=change,
                                                era=found.protocol_version))  # fmt: skip
            last = state

        try:
            await follow_catalog(name, entry, seen, **options)
            error = "the server ended the connection"
        except Exception as exc:  # one server's failure is an event, never the watch's end
            failure = classify(exc, entry, None, name)
            error = one_line(f"{failure.code}: {failure.message}")
        if not reported_down:  # once per outage: the retries that fail too are not news
            reported_down = True
            await send.send(ServerEvent(name, "disconnected", error=error, retry_in=delay))
        await anyio.sleep(delay)
        delay = min(delay * 2, backoff[1])
