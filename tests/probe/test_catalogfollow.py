"""``follow_catalog``: one server followed over an open connection, with real servers of
both eras -- listed again when it says a list changed, polled when it cannot say, and given
up when it ends the connection -- and with a server of either era in the test's process for
what a real one cannot do on demand: a backlog of changes, a listen stream that ends or is
dropped, lists other than the tools that change."""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.probe.catalog import Catalog
from mcpctl.probe.catalogfollow import follow_catalog
from mcpctl.probe.eras import EraMemory
from tests.conftest import SERVERS

PY = sys.executable
DEADLINE = 30  # seconds: generous, the machine may be busy


def changing(era: str, trigger: Path, log: Path) -> ServerEntry:
    """A server that adds the tool ``extra`` and says so once ``trigger`` exists."""
    if era == "modern":
        env = {"MODERN_SERVER_TRIGGER": str(trigger), "MODERN_SERVER_LOG": str(log)}
        return ServerEntry(command=PY, args=(str(SERVERS / "modern.py"), "list-changing"), env=env)
    env = {"LEGACY_SERVER_TRIGGER": str(trigger), "LEGACY_SERVER_LOG": str(log)}
    return ServerEntry(
        command=PY, args=(str(SERVERS / "legacy_modes.py"), "list-changing"), env=env
    )


def tools_of(catalog: Catalog) -> list[str]:
    return sorted(t["name"] for t in catalog.tools)


def first_listings(name: str, entry: ServerEntry, count: int, **options: Any) -> list[list[str]]:
    """The tools of the first ``count`` listings ``follow_catalog`` gives, then it is stopped."""
    seen: list[list[str]] = []

    async def followed() -> None:
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as tg:

                async def on_catalog(catalog: Catalog) -> None:
                    seen.append(tools_of(catalog))
                    if len(seen) == count:
                        tg.cancel_scope.cancel()

                tg.start_soon(
                    lambda: follow_catalog(name, entry, on_catalog, timeout=30, **options)
                )

    anyio.run(followed)
    return seen


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_server_that_says_its_list_changed_is_listed_again_then_only(
    tmp_path: Path, era: str
) -> None:
    """Listed at once, then again when the server says so -- and not every ``poll``
    seconds meanwhile, however short: a server that can say is never polled."""
    trigger, log = tmp_path / "trigger", tmp_path / "log"
    seen: list[list[str]] = []
    memory = EraMemory()

    async def followed() -> None:
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as tg:

                async def on_catalog(catalog: Catalog) -> None:
                    assert catalog.ok, catalog.message
                    seen.append(tools_of(catalog))
                    if len(seen) == 1:
                        trigger.touch()  # now the server adds a tool and says so
                    elif "extra" in seen[-1]:
                        tg.cancel_scope.cancel()

                tg.start_soon(
                    lambda: follow_catalog(
                        "s", entry, on_catalog, eras=memory, timeout=30, poll=0.01
                    )
                )

    entry = changing(era, trigger, log)

    anyio.run(followed)
    assert len(seen) == 2, seen
    assert "extra" not in seen[0] and seen[1] == sorted([*seen[0], "extra"])
    remembered = memory.recall(entry)  # the era spoken, remembered in the memory given
    assert remembered is not None and remembered.name == era
    if era == "modern":
        # The listen asked for the tools' changes (the server sends nothing otherwise).
        assert "subscriptions/listen" in log.read_text().split()


def test_a_server_that_cannot_say_is_listed_every_poll(tmp_path: Path) -> None:
    """The modern server's default mode has no ``subscriptions/listen``: it is listed again
    every ``poll`` seconds."""
    entry = ServerEntry(command=PY, args=(str(SERVERS / "modern.py"),))
    seen = first_listings("m", entry, 3, poll=0.05)
    assert len(seen) == 3 and seen[0] == seen[1] == seen[2]


def test_a_legacy_server_without_list_changed_is_polled(tmp_path: Path) -> None:
    """A handshake-era server whose capabilities do not say ``listChanged``."""
    entry = ServerEntry(command=PY, args=(str(SERVERS / "legacy_modes.py"), "elicit"))
    seen = first_listings("l", entry, 3, poll=0.05)
    assert len(seen) == 3 and "ask" in seen[0]


# shifty.py, after writing its PID where the test can read it (to stop it).
WITH_PID = """
import os, sys
pid_file, shifty = sys.argv[1:3]
with open(pid_file, "w") as f:
    f.write(str(os.getpid()))
os.execv(sys.executable, [sys.executable, shifty])
"""


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_following_ends_when_the_server_goes_away(tmp_path: Path, era: ProtocolMode) -> None:
    """Noticed at once, not at a poll an hour away: ``follow_catalog`` returns."""
    pid_file = tmp_path / "pid"
    entry = ServerEntry(
        command=PY, args=("-c", WITH_PID, str(pid_file), str(SERVERS / "shifty.py"))
    )
    seen: list[list[str]] = []

    async def on_catalog(catalog: Catalog) -> None:
        # The catalog is the server's, by its name, in the era asked for.
        assert catalog.name == "s" and catalog.era is not None and catalog.era.name == era
        seen.append(tools_of(catalog))
        os.kill(int(pid_file.read_text()), signal.SIGTERM)

    async def followed() -> None:
        with anyio.fail_after(DEADLINE):
            await follow_catalog("s", entry, on_catalog, protocol=era, timeout=30, poll=3600)

    anyio.run(followed)
    assert seen == [["add", "lookup"]]


def test_the_entrys_secrets_come_from_the_source_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FOLLOW_SCRIPT", raising=False)
    entry = ServerEntry(command=PY, args=("${FOLLOW_SCRIPT}",))
    script = str(SERVERS / "legacy_modes.py")
    # Pinned to the handshake: its default mode never answers the stateless era's discovery.
    seen = first_listings("f", entry, 1, secrets={"FOLLOW_SCRIPT": script}.get, protocol="legacy")
    assert seen == [["add", "echo"]]


def test_a_server_that_never_answers_fails_within_the_timeout_given() -> None:
    """Not the entry's (two minutes here): the connection's deadline is ``timeout``."""
    entry = ServerEntry(command=PY, args=("-c", "import time; time.sleep(120)"), timeout=120_000)

    async def on_catalog(catalog: Catalog) -> None:
        raise AssertionError("listed a server that never answered")

    async def followed() -> None:
        with anyio.fail_after(DEADLINE):
            await follow_catalog("n", entry, on_catalog, timeout=0.5)

    started = time.monotonic()
    with pytest.raises(Exception) as caught:
        anyio.run(followed)
    assert not isinstance(caught.value, AssertionError)
    assert time.monotonic() - started < DEADLINE / 2  # not the test's own deadline


# --- in-process: a server of either era over memory streams ---------------------------------
#
# ``connect`` as it is, its transport a pair of memory streams to :class:`Server`; the
# notifications ``follow_catalog`` is handed, and what its relay takes from the listen
# stream, are counted, so a test waits for them instead of for time.

SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
FILTERS = {"tools": "toolsListChanged", "prompts": "promptsListChanged",
           "resources": "resourcesListChanged"}  # fmt: skip
ENTRY = ServerEntry(command="in-process")
IN_PROCESS_DEADLINE = 10  # seconds: each of these ends in well under one; a hang fails


class Server:
    """A server of ``era`` offering ``kinds`` (tools, prompts, resources), each saying when
    it changes: a ``*/list_changed`` notification (handshake era) or an event on each
    ``subscriptions/listen`` stream that asked for it (stateless era)."""

    def __init__(self, era: str, kinds: tuple[str, ...] = ("tools",), *, says: bool = True) -> None:
        self.era = era
        self.kinds = kinds
        self.says = says  # whether its capabilities say ``listChanged``
        self.listens: dict[Any, dict[str, Any]] = {}  # listen request id -> honoured filter
        self.asked: list[dict[str, Any]] = []  # each listen's filter, as asked
        self.listening = anyio.Event()
        self.methods: list[str] = []
        self._out: Any = None

    @property
    def capabilities(self) -> dict[str, Any]:
        return {kind: {"listChanged": True} if self.says else {} for kind in self.kinds}

    async def serve(self, incoming: Any, outgoing: Any) -> None:
        from mcp_types.jsonrpc import JSONRPCRequest

        self._out = outgoing
        async for item in incoming:
            message = item.message
            if isinstance(message, JSONRPCRequest):
                self.methods.append(message.method)
                await self._answer(message.id, message.method, dict(message.params or {}))

    async def _answer(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        from mcpctl.probe.negotiate import CLIENT_HANDSHAKE_VERSIONS, CLIENT_MODERN_VERSIONS

        if method == "subscriptions/listen":
            wanted = params.get("notifications") or {}
            self.asked.append(wanted)
            honoured = {k: True for k in FILTERS.values() if wanted.get(k) is True}
            self.listens[request_id] = honoured
            ack = {"notifications": honoured, "_meta": {SUBSCRIPTION: request_id}}
            await self.send("notifications/subscriptions/acknowledged", ack)
            self.listening.set()
            return  # answered when the stream ends
        result: dict[str, Any] = {
            "initialize": {"protocolVersion": CLIENT_HANDSHAKE_VERSIONS[-1],
                           "capabilities": self.capabilities,
                           "serverInfo": {"name": "peer", "version": "1"}},
            "server/discover": {"supportedVersions": [CLIENT_MODERN_VERSIONS[-1]],
                                "capabilities": self.capabilities},
            "tools/list": {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]},
            "prompts/list": {"prompts": []},
            "resources/templates/list": {"resourceTemplates": []},
        }.get(method, {})  # fmt: skip
        if self.era == "modern":
            result = {**result, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
        await self.reply(request_id, result)

    async def send(self, method: str, params: dict[str, Any]) -> None:
        from mcp_types.jsonrpc import JSONRPCNotification

        from mcpctl.sdk import SessionMessage

        message = JSONRPCNotification(jsonrpc="2.0", method=method, params=params)
        await self._out.send(SessionMessage(message))

    async def reply(self, request_id: Any, result: dict[str, Any]) -> None:
        from mcp_types.jsonrpc import JSONRPCResponse

        from mcpctl.sdk import SessionMessage

        message = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
        await self._out.send(SessionMessage(message))

    async def change(self, kind: str = "tools", times: int = 1) -> None:
        """Say ``kind`` changed, ``times`` over, the way of the era."""
        for _ in range(times):
            if self.era == "legacy":
                await self.send(f"notifications/{kind}/list_changed", {})
                continue
            for sid, honoured in list(self.listens.items()):
                if honoured.get(FILTERS[kind]):
                    await self.send(
                        f"notifications/{kind}/list_changed", {"_meta": {SUBSCRIPTION: sid}}
                    )

    async def end_streams(self, *, graceful: bool) -> None:
        """End each listen stream: its answer (the server's close), or a cancel (lost)."""
        for sid in list(self.listens):
            del self.listens[sid]
            if graceful:
                await self.reply(sid, {})
            else:
                await self.send("notifications/cancelled", {"requestId": sid})

    async def leave(self) -> None:
        """The server's side of the connection ends (a stdio server exits)."""
        await self._out.aclose()


class Seen:
    """What a follow went through: the notifications handed to it, what its relay took from
    the listen stream, the server's end noticed."""

    def __init__(self) -> None:
        self.handled = 0
        self.handled_all = anyio.Event()
        self.expected = 0
        self.relayed = 0  # events the relay took
        self.relay_mark: int | None = None
        self.relayed_since_mark = anyio.Event()  # one taken (and passed on) since the mark
        self.relay_ended = anyio.Event()  # the listen stream ended, the relay past it
        self.end_noticed = anyio.Event()  # the follow's watcher woke to the server's end

    def expect(self, count: int) -> None:
        self.handled, self.expected, self.handled_all = 0, count, anyio.Event()

    def mark_relay(self) -> None:
        self.relay_mark, self.relayed_since_mark = self.relayed, anyio.Event()


class _Watched:
    """``conn.ended``, saying when the follow's watcher woke to it."""

    def __init__(self, ended: anyio.Event, seen: Seen) -> None:
        self._ended, self._seen = ended, seen

    def is_set(self) -> bool:
        return self._ended.is_set()

    def set(self) -> None:
        self._ended.set()

    async def wait(self) -> None:
        await self._ended.wait()
        self._seen.end_noticed.set()  # what follows the wait runs before anyone sees this


class _Relayed:
    """A subscription, counting what the relay takes from it."""

    def __init__(self, subscription: Any, seen: Seen) -> None:
        self._subscription, self._seen = subscription, seen

    def __aiter__(self) -> _Relayed:
        return self

    async def __anext__(self) -> Any:
        seen = self._seen
        if seen.relay_mark is not None and seen.relayed > seen.relay_mark:
            seen.relayed_since_mark.set()  # the event before this one was passed on
        try:
            event = await self._subscription.__anext__()
        except BaseException:
            seen.relay_ended.set()  # what the relay does then runs before anyone sees this
            raise
        seen.relayed += 1
        return event


def in_process(monkeypatch: pytest.MonkeyPatch, server: Server) -> Seen:
    """``follow_catalog`` reaches ``server`` in the test's process; what it goes through."""
    import contextlib

    import mcpctl.probe.connect as connect_module
    from mcpctl.probe import catalogfollow

    seen = Seen()

    @contextlib.asynccontextmanager
    async def memory(*_: Any) -> Any:
        to_client, client_reads = anyio.create_memory_object_stream[Any](16)
        client_writes, from_client = anyio.create_memory_object_stream[Any](16)
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, from_client, to_client)
            try:
                yield client_reads, client_writes
            finally:
                tg.cancel_scope.cancel()

    monkeypatch.setattr(connect_module, "_opener", lambda transport: memory)
    real_connect, real_listen = catalogfollow.connect, catalogfollow.listen

    @contextlib.asynccontextmanager
    async def connect(*args: Any, message_handler: Any, **options: Any) -> Any:
        async def counted(message: Any) -> None:
            try:
                await message_handler(message)
            finally:
                seen.handled += 1
                if seen.handled >= seen.expected:
                    seen.handled_all.set()

        async with real_connect(*args, message_handler=counted, **options) as conn:
            conn.ended = _Watched(conn.ended, seen)
            yield conn

    @contextlib.asynccontextmanager
    async def listen(*args: Any, **options: Any) -> Any:
        async with real_listen(*args, **options) as subscription:
            yield _Relayed(subscription, seen)

    monkeypatch.setattr(catalogfollow, "connect", connect)
    monkeypatch.setattr(catalogfollow, "listen", listen)
    return seen


class Follow:
    """The catalogs a follow gives; a script (the server's part) waits for them, and may hold
    one: the follow waits in its ``on_catalog`` until released."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.catalogs: list[Catalog] = []
        self._given = [anyio.Event() for _ in range(most + 1)]
        self._held: dict[int, anyio.Event] = {}

    async def on_catalog(self, catalog: Catalog) -> None:
        self.catalogs.append(catalog)
        n = len(self.catalogs)
        assert n <= self.most, f"listed {n} times"
        self._given[n].set()
        if n in self._held:
            await self._held[n].wait()

    def hold(self, n: int) -> None:
        """Keep the follow in the ``n``-th ``on_catalog`` (asked before it comes)."""
        self._held[n] = anyio.Event()

    def release(self) -> None:
        for event in self._held.values():
            event.set()

    async def listed(self, n: int) -> None:
        await self._given[n].wait()


def followed_in_process(server: Server, script: Any, *, most: int, **options: Any) -> list[Catalog]:
    """The catalogs ``follow_catalog`` gives while ``script(follow)`` plays the server's
    part (``most`` of them, or a listing more fails); it must end the following. What
    ``follow_catalog`` raises comes out as raised."""
    follow = Follow(most)

    async def main() -> None:
        with anyio.fail_after(IN_PROCESS_DEADLINE):
            async with anyio.create_task_group() as tg:

                async def play() -> None:
                    await script(follow)
                    follow.release()

                tg.start_soon(play)
                await follow_catalog("s", ENTRY, follow.on_catalog, protocol=server.era,  # type: ignore[arg-type]
                                     timeout=10, **options)  # fmt: skip
                tg.cancel_scope.cancel()

    try:
        anyio.run(main)
    except BaseExceptionGroup as group:
        from tests.probe.peer import unwrapped

        raise unwrapped(group) from None
    return follow.catalogs


async def ready(server: Server, follow: Follow) -> None:
    """Listed once, and following: for the stateless era, its listen stream open."""
    await follow.listed(1)
    if server.era == "modern":
        await server.listening.wait()


async def flood(server: Server, seen: Seen) -> None:
    """More changes than the follow keeps unread (64), each handed to it, and (stateless era)
    one relayed from the listen stream once no more fit."""
    seen.expect(70)
    await server.change(times=70)
    await seen.handled_all.wait()
    if server.era == "modern":
        seen.mark_relay()
        await server.change()
        await seen.relayed_since_mark.wait()


ERRORS = logging.ERROR


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_backlog_of_changes_is_listed_once_and_is_no_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, era: str
) -> None:
    """Changes pile up while the caller is busy with a catalog, more than are kept: one
    listing covers them all, and nothing is logged (no "callback raised" on the terminal)."""
    server = Server(era)
    seen = in_process(monkeypatch, server)

    async def script(follow: Follow) -> None:
        await ready(server, follow)
        follow.hold(2)
        await server.change()
        await follow.listed(2)  # the caller is busy with it
        await flood(server, seen)
        follow.release()
        await follow.listed(3)
        await server.leave()

    with caplog.at_level(logging.WARNING):
        catalogs = followed_in_process(server, script, most=3)
    assert len(catalogs) == 3
    assert [r.getMessage() for r in caplog.records if r.levelno >= ERRORS] == []


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_servers_end_behind_a_backlog_ends_the_following(
    monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """The server exits while the caller is busy and 64 changes wait: no room is left to
    say the end, and it is not lost -- no listing of a server that is gone."""
    server = Server(era)
    seen = in_process(monkeypatch, server)

    async def script(follow: Follow) -> None:
        await ready(server, follow)
        follow.hold(2)
        await server.change()
        await follow.listed(2)
        await flood(server, seen)
        await server.leave()
        await seen.end_noticed.wait()
        if era == "modern":
            await seen.relay_ended.wait()

    assert len(followed_in_process(server, script, most=2)) == 2


@pytest.mark.parametrize("graceful", [True, False])
def test_a_listen_stream_that_ends_ends_the_following(
    monkeypatch: pytest.MonkeyPatch, graceful: bool
) -> None:
    """The server closes the stream (its answer to the listen) or drops it (a cancel), the
    connection still open: following ends, for the caller to connect and listen again --
    not a follow that waits for ever on a stream that is gone."""
    server = Server("modern")
    seen = in_process(monkeypatch, server)

    async def script(follow: Follow) -> None:
        await ready(server, follow)
        await server.end_streams(graceful=graceful)
        await seen.relay_ended.wait()

    assert len(followed_in_process(server, script, most=1)) == 1


def test_a_stream_lost_behind_a_change_ends_the_following(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change, then the stream dropped, while the caller is busy: the change is not
    listed on a connection without its stream; following ends."""
    server = Server("modern")
    seen = in_process(monkeypatch, server)

    async def script(follow: Follow) -> None:
        await ready(server, follow)
        follow.hold(2)
        await server.change()
        await follow.listed(2)
        seen.expect(1)
        await server.change()
        await seen.handled_all.wait()
        await server.end_streams(graceful=False)
        await seen.relay_ended.wait()

    assert len(followed_in_process(server, script, most=2)) == 2


@pytest.mark.parametrize(
    "kinds", [("tools",), ("prompts", "resources"), ("tools", "prompts", "resources")]
)
def test_a_stateless_server_is_asked_for_the_changes_of_each_list_it_offers(
    monkeypatch: pytest.MonkeyPatch, kinds: tuple[str, ...]
) -> None:
    """And only those: each change is listed again."""
    server = Server("modern", kinds)
    in_process(monkeypatch, server)

    async def script(follow: Follow) -> None:
        await ready(server, follow)
        assert server.asked == [{FILTERS[kind]: True for kind in kinds}]
        for n, kind in enumerate(kinds, start=2):
            await server.change(kind)
            await follow.listed(n)
        await server.leave()

    assert len(followed_in_process(server, script, most=len(kinds) + 1)) == len(kinds) + 1


def test_a_server_that_cannot_say_is_listed_every_minute_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wait between two listings, read without a clock: each one ``follow_catalog``
    asks for is recorded and over at once."""
    import sys

    from mcpctl.probe import catalogfollow

    waits: list[float] = []
    move_on_after = anyio.move_on_after

    def recorded(delay: float, **options: Any) -> Any:
        if sys._getframe(1).f_globals["__name__"] != catalogfollow.__name__:
            return move_on_after(delay, **options)  # the session's own deadlines
        waits.append(delay)
        return move_on_after(0, **options)

    monkeypatch.setattr(anyio, "move_on_after", recorded)
    server = Server("legacy", says=False)
    seen = in_process(monkeypatch, server)

    async def script(follow: Follow) -> None:
        follow.hold(3)
        await follow.listed(3)
        await server.leave()
        await seen.end_noticed.wait()

    catalogs = followed_in_process(server, script, most=3)  # no ``poll`` given
    assert len(catalogs) == 3 and waits[:2] == [60.0, 60.0]
