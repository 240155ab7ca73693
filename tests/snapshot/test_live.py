"""Following servers while they run: list changes in both eras, outages, and mcpctl watch
--servers as a real program."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.snapshot.live import ServerEvent, watch_servers
from tests.conftest import MCPCTL, SERVERS, write_config

PY = sys.executable
DEADLINE = 60  # seconds: generous, the machine may be busy


@contextlib.contextmanager
def retries_at_most(limit: int) -> Iterator[list[float]]:
    """Count the watch's waits before a retry (each still happens); past ``limit`` of them the
    watch fails at once. A test whose server comes back at the first retry once it has heard
    the outage is thus not left waiting for its deadline when that event never comes: the
    retries go on, and their count, not the clock, says that the event is overdue."""
    asked: list[float] = []
    real_sleep = anyio.sleep

    async def sleep(delay: float) -> None:
        if Path(sys._getframe(1).f_code.co_filename).name == "live.py":
            asked.append(delay)
            assert len(asked) <= limit, f"still retrying after {limit} waits: {asked}"
        await real_sleep(delay)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(anyio, "sleep", sleep)
        yield asked


def changing(era: str, trigger: Path) -> ServerEntry:
    if era == "modern":
        env = {"MODERN_SERVER_TRIGGER": str(trigger)}
        return ServerEntry(command=PY, args=(str(SERVERS / "modern.py"), "list-changing"), env=env)
    env = {"LEGACY_SERVER_TRIGGER": str(trigger)}
    return ServerEntry(
        command=PY, args=(str(SERVERS / "legacy_modes.py"), "list-changing"), env=env
    )


async def collect(
    entries: dict[str, ServerEntry], until: Any, on_event: Any = None, **options: Any
) -> list[ServerEvent]:
    seen: list[ServerEvent] = []
    with anyio.fail_after(DEADLINE):
        async with watch_servers(entries, **options) as events:
            async for event in events:
                seen.append(event)
                if on_event is not None:
                    on_event(event, seen)
                if until(seen):
                    break
    return seen


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_tool_added_while_running_is_reported_at_once(tmp_path: Path, era: str) -> None:
    trigger = tmp_path / "trigger"

    def pull(event: ServerEvent, _: list[ServerEvent]) -> None:
        if event.kind == "connected":
            trigger.touch()  # now the server adds a tool and says so

    seen = anyio.run(
        lambda: collect(
            {"s": changing(era, trigger)},
            # The next event after the connection: an outage (a change the follower failed
            # to report) or a change spelt otherwise fails the test at once.
            lambda s: any(e.kind != "connected" for e in s),
            pull,
            poll=3600,  # a re-list must come from the server's word, not a poll
        )
    )
    connected, changed = seen[0], seen[-1]
    assert [e.kind for e in seen] == ["connected", "changed"], seen
    assert connected.kind == "connected" and connected.tools is not None
    assert connected.era == ("2026-07-28" if era == "modern" else "2025-11-25")
    assert changed.change is not None and changed.change.added == {"tools": ["extra"]}
    assert changed.name == "s" and changed.change.name == "s"  # the server it happened to
    assert changed.era == connected.era  # the era it was listed in
    data = changed.to_data()
    assert data["event"] == "changed" and data["change"]["added"] == {"tools": ["extra"]}


def test_a_server_that_cannot_say_is_polled(tmp_path: Path) -> None:
    # The modern server's default mode has no subscriptions/listen: it is listed again
    # every `poll` seconds, and an unchanged listing reports nothing.
    log = tmp_path / "log"
    entry = ServerEntry(
        command=PY, args=(str(SERVERS / "modern.py"),), env={"MODERN_SERVER_LOG": str(log)}
    )
    seen: list[ServerEvent] = []

    async def run() -> None:
        with anyio.fail_after(DEADLINE):
            async with (
                watch_servers({"m": entry}, poll=0.2) as events,
                anyio.create_task_group() as tg,
            ):

                async def gather() -> None:
                    async for event in events:
                        seen.append(event)

                tg.start_soon(gather)
                while not (log.exists() and log.read_text().split().count("tools/list") >= 3):
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()

    anyio.run(run)
    assert [e.kind for e in seen] == ["connected"]


def test_an_outage_is_reported_once_and_retried(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    entry = ServerEntry(command=PY, args=(str(script),))

    def restore(event: ServerEvent, _: list[ServerEvent]) -> None:
        if event.kind == "disconnected":
            script.write_text((SERVERS / "raw.py").read_text())  # it comes back

    with retries_at_most(10):
        seen = anyio.run(
            lambda: collect(
                {"gone": entry, "off": ServerEntry(command="false", enabled=False)},
                lambda s: any(e.kind == "connected" for e in s),
                restore,
                backoff=(0.1, 0.2),
            )
        )
    kinds = [e.kind for e in seen]
    assert kinds[0] == "disconnected" and kinds[-1] == "connected"
    assert kinds.count("disconnected") == 1
    assert seen[0].error and seen[0].retry_in == 0.1
    assert {e.name for e in seen} == {"gone"}  # a disabled entry is not followed


# A server that is down while its state file says so, and otherwise runs shifty.py in the
# mode the file names (writing its PID first, so the test can stop it).
COMES_BACK = """
import os, sys
state, pid_file, shifty = sys.argv[1:4]
mode = open(state).read()
if mode == "down":
    sys.exit(1)
with open(pid_file, "w") as f:
    f.write(str(os.getpid()))
os.environ["SHIFTY_MODE"] = mode
os.execv(sys.executable, [sys.executable, shifty])
"""


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_tool_added_while_the_server_was_down_is_reported_when_it_is_back(
    tmp_path: Path, era: ProtocolMode
) -> None:
    """The server exits while followed (noticed at once, not at a poll an hour away) and
    comes back with one more tool: that is a change, against what it offered before."""
    state, pid_file = tmp_path / "state", tmp_path / "pid"
    state.write_text("")
    entry = ServerEntry(
        command=PY, args=("-c", COMES_BACK, str(state), str(pid_file), str(SERVERS / "shifty.py"))
    )
    seen: list[ServerEvent] = []

    def step(event: ServerEvent) -> None:
        if event.kind == "connected" and len(seen) == 1:
            state.write_text("down")  # it stays down...
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        elif event.kind == "disconnected":
            state.write_text("extra")  # ...until it comes back with one more tool

    async def run() -> None:
        with anyio.fail_after(DEADLINE):
            async with watch_servers(
                {"s": entry}, protocol=era, poll=3600, backoff=(0.1, 0.2)
            ) as events:
                async for event in events:
                    seen.append(event)
                    step(event)
                    if [e.kind for e in seen].count("connected") == 2:
                        break
                # What it offers now is compared with what it offered before the outage.
                with anyio.move_on_after(10):
                    seen.append(await events.receive())

    with retries_at_most(10):
        anyio.run(run)
    kinds = [e.kind for e in seen]
    assert kinds == ["connected", "disconnected", "connected", "changed"], seen
    assert seen[0].tools == 2 and seen[2].tools == 3
    assert seen[1].error == "the server ended the connection"  # it exited, nothing failed
    change = seen[-1].change
    assert change is not None and change.added == {"tools": ["delete_everything"]}
    assert not change.removed


def test_watch_servers_on_the_command_line(tmp_path: Path, config_path: Path) -> None:
    trigger = tmp_path / "trigger"
    write_config(config_path, {"m": changing("modern", trigger).to_data(),
                               "l": changing("legacy", trigger).to_data()})  # fmt: skip
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [*MCPCTL, "--config", str(config_path), "watch", "--servers", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        events: list[dict[str, Any]] = []
        assert proc.stdout is not None
        for line in proc.stdout:  # bounded by pytest's timeout
            events.append(json.loads(line))
            if sum(e["event"] == "connected" for e in events) == 2:
                trigger.touch()
            if sum(e["event"] == "changed" for e in events) == 2:
                break
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=DEADLINE) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    changed = {e["name"]: e["change"]["added"] for e in events if e["event"] == "changed"}
    assert changed == {"m": {"tools": ["extra"]}, "l": {"tools": ["extra"]}}


def test_watch_servers_refuses_file_options(cli: Any) -> None:
    r = cli("watch", "--servers", "--exec", "true")
    assert r.exit_code == 2 and "--servers" in r.stderr
    r = cli("watch", "--server", "x")
    assert r.exit_code == 2 and "--servers" in r.stderr


# --- what mutation testing found unpinned ----------------------------------------------------


def test_an_event_s_json_view_holds_what_it_knows() -> None:
    from datetime import UTC, datetime, timedelta, timezone

    from mcpctl.snapshot.diff import ServerChange

    when = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone(timedelta(hours=1)))
    change = ServerChange("s", added={"tools": ["x"]})
    changed = ServerEvent("s", "changed", change=change, era="2025-11-25", time=when)
    assert changed.to_data() == {
        "time": "2026-01-02T03:04:05+01:00",
        "event": "changed",
        "name": "s",
        "protocol_version": "2025-11-25",
        "change": change.to_data(),
    }
    connected = ServerEvent("s", "connected", era="2026-07-28", tools=0, time=when)
    assert connected.to_data()["tools"] == 0  # no tools is a count, not nothing
    assert "change" not in connected.to_data() and "error" not in connected.to_data()
    down = ServerEvent("s", "disconnected", error="spawn_failed: no", retry_in=0.0, time=when)
    assert down.to_data() == {
        "time": "2026-01-02T03:04:05+01:00",
        "event": "disconnected",
        "name": "s",
        "error": "spawn_failed: no",
        "retry_in_s": 0.0,
    }
    now = ServerEvent("s", "connected").time
    assert now.tzinfo is not None and abs(now - datetime.now(UTC)) < timedelta(minutes=1)


def test_each_outage_is_retried_after_the_first_delay_again(tmp_path: Path) -> None:
    """A server back after an outage starts its backoff over: the next outage's first retry
    is after ``backoff[0]`` again, not after the longest delay."""
    state, pid_file = tmp_path / "state", tmp_path / "pid"
    state.write_text("")
    entry = ServerEntry(
        command=PY, args=("-c", COMES_BACK, str(state), str(pid_file), str(SERVERS / "shifty.py"))
    )

    def step(event: ServerEvent, seen: list[ServerEvent]) -> None:
        if event.kind == "connected":
            state.write_text("down")
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        elif event.kind == "disconnected":
            state.write_text("")  # back at the first retry

    with retries_at_most(10):
        seen = anyio.run(
            lambda: collect(
                {"s": entry},
                lambda s: [e.kind for e in s].count("disconnected") == 2,
                step,
                poll=3600,
                backoff=(0.1, 0.4),
            )
        )
    downs = [e for e in seen if e.kind == "disconnected"]
    assert [e.retry_in for e in downs] == [0.1, 0.1], seen


def test_an_unreachable_remote_server_says_why_and_where() -> None:
    """A remote server refusing connections: its outage names the address it could not
    reach (the entry's URL), as ``code: message``."""
    import socket

    with socket.socket() as s:  # a port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    with retries_at_most(10):  # the outage is reported before the first retry
        seen = anyio.run(
            lambda: collect(
                {"r": ServerEntry(url=url, timeout=10_000)},
                lambda s: any(e.kind == "disconnected" for e in s),
                backoff=(0.05, 0.1),
            )
        )
    assert seen[0].kind == "disconnected" and seen[0].name == "r"
    assert seen[0].error is not None and seen[0].error.startswith("connection_refused: ")
    assert url in seen[0].error


def test_a_server_that_stays_down_is_retried_less_and_less_often(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each retry of a server that stays down waits twice as long as the one before, up to
    ``backoff[1]``; the outage is reported once, with the first wait. (The waits the watch
    asks of anyio are recorded on their way through; each still happens.)"""
    asked: list[float] = []
    real_sleep = anyio.sleep

    async def sleep(delay: float) -> None:
        if Path(sys._getframe(1).f_code.co_filename).name == "live.py":
            asked.append(delay)
        await real_sleep(delay)

    monkeypatch.setattr(anyio, "sleep", sleep)
    down = ServerEntry(command=PY, args=("-c", "import sys; sys.exit(3)"))
    seen: list[ServerEvent] = []

    async def run() -> None:
        with anyio.fail_after(DEADLINE):
            async with (
                watch_servers({"d": down}, backoff=(0.05, 0.2)) as events,
                anyio.create_task_group() as tg,
            ):

                async def gather() -> None:
                    async for event in events:
                        seen.append(event)

                tg.start_soon(gather)
                while len(asked) < 5:
                    await real_sleep(0.05)
                tg.cancel_scope.cancel()

    anyio.run(run)
    assert asked[:5] == [0.05, 0.1, 0.2, 0.2, 0.2]
    assert [(e.kind, e.retry_in) for e in seen] == [("disconnected", 0.05)]


def test_a_server_missing_a_variable_names_it_and_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server whose entry needs a variable that is not set is down for that reason, and
    the outage names both the variable and the server it is missing in."""
    monkeypatch.delenv("MCPCTL_TEST_LIVE_UNSET", raising=False)
    entry = ServerEntry(command=PY, args=("-c", "pass"), env={"TOKEN": "${MCPCTL_TEST_LIVE_UNSET}"})
    with retries_at_most(10):
        seen = anyio.run(
            lambda: collect(
                {"s": entry},
                lambda s: any(e.kind == "disconnected" for e in s),
                backoff=(0.05, 0.1),
            )
        )
    assert seen[0].kind == "disconnected" and seen[0].error is not None
    assert seen[0].error.startswith("missing_variable: ")
    assert "MCPCTL_TEST_LIVE_UNSET" in seen[0].error and "'s'" in seen[0].error
