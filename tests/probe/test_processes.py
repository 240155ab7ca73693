"""The processes behind stdio servers: who belongs to one, stopping them all, start-up slots."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from mcpctl import procs
from mcpctl.config.model import ServerEntry
from mcpctl.probe import probe, probe_all
from mcpctl.probe.spawn import (
    become_subreaper,
    reap_orphans,
    spawn_server,
    stop_server,
    until_waiting,
)
from mcpctl.procs import ProcStat
from tests.conftest import SERVERS

PY = sys.executable
SLEEPER = "import time; time.sleep(120)"


def misbehave(mode: str, *extra: str, timeout: int = 30000) -> ServerEntry:
    return ServerEntry(
        command=PY, args=(str(SERVERS / "misbehave.py"), mode, *extra), timeout=timeout
    )


def lingering(pid: int) -> bool:
    """Whether ``pid`` still runs, or is a zombie this process has not reaped."""
    stat = procs.read_stat(pid)
    if stat is None:
        return False
    return not stat.dead or stat.ppid == os.getpid()


def wait_gone(pids: list[int], seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := [p for p in pids if lingering(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def read_pids(path: Path, seconds: float = 30.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return [int(p) for p in path.read_text().split()]


@pytest.fixture
def unrelated() -> Iterator[subprocess.Popen[bytes]]:
    """A process of ours that mcpctl did not start, in a session of its own like a server."""
    proc = subprocess.Popen([PY, "-c", SLEEPER], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait(timeout=10)


@pytest.fixture
def subreaper() -> Iterator[None]:
    if not become_subreaper():
        pytest.skip("this system has no child subreapers")
    yield
    become_subreaper(False)


# --- families --------------------------------------------------------------------------


def _stat(
    pid: int, ppid: int, session: int, pgrp: int | None = None, start: float = 7.0
) -> ProcStat:
    group = pgrp if pgrp is not None else session
    return ProcStat(pid, "sleeping", ppid, group, session, 0.0, 0.0, start)


def test_family_follows_parents_sessions_and_groups_but_nothing_else() -> None:
    me = os.getpid()
    table = {s.pid: s for s in [
        _stat(100, me, 100),             # the server (its own session)
        _stat(101, 100, 100),            # its child, in its group
        _stat(102, 100, 102),            # a child that called setsid
        _stat(103, 102, 102, pgrp=103),  # ... and its child in a new group
        _stat(104, 1, 100),              # an orphan still in the server's session
        _stat(105, me, 999),             # adopted, from a session nobody here leads
        _stat(106, 1, 106),              # unrelated
        _stat(200, 1, 200, start=9),     # seen earlier under another start time: a reused pid
        _stat(me, 1, 5),                 # never this process
    ]}  # fmt: skip
    assert set(procs.family(100, table, {100: 7})) == {100, 101, 102, 103, 104}
    assert set(procs.family(100, table, {100: 7, 106: 7})) == {100, 101, 102, 103, 104, 106}
    assert set(procs.family(100, table, {100: 7, 200: 7})) == {100, 101, 102, 103, 104}
    # The server gone: what it left in its session and group is still found.
    del table[100]
    assert set(procs.family(100, table, {100: 7})) == {101, 104}


# --- stopping a server stops everything that came from it --------------------------------


@pytest.mark.slow
def test_a_child_that_left_the_group_is_stopped_with_its_server(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    r = anyio.run(lambda: probe("x", misbehave("setsid", str(pid_file))))
    assert r.healthy, (r.error, r.stderr)
    server, child = read_pids(pid_file)
    assert wait_gone([server, child]) == [], "the setsid child outlived the probe"


@pytest.mark.slow
def test_what_servers_leave_behind_is_stopped_and_reaped_not_our_other_processes(
    tmp_path: Path, subreaper: None, unrelated: subprocess.Popen[bytes]
) -> None:
    entries = {
        "setsid": misbehave("setsid", str(tmp_path / "setsid")),
        "daemon": misbehave("daemon", str(tmp_path / "daemon")),
        "spawn": misbehave("spawn", str(tmp_path / "spawn")),
    }
    results = anyio.run(lambda: probe_all(entries))
    assert all(r.healthy for r in results), [(r.name, r.error) for r in results]
    pids = {name: read_pids(tmp_path / name) for name in entries}
    # The setsid and plain children are traced to their servers: stopped, and, adopted by
    # this process as they died, reaped (a zombie of ours would linger).
    assert wait_gone([*pids["setsid"], *pids["spawn"], pids["daemon"][0]]) == []
    # The grandchild of the double fork belongs to no server any more: the sweep's to stop.
    orphan = pids["daemon"][1]
    assert lingering(orphan) and procs.read_stat(orphan).ppid == os.getpid()  # type: ignore[union-attr]
    assert reap_orphans() == 1
    assert wait_gone([orphan]) == []
    assert unrelated.poll() is None, "a process mcpctl did not start was stopped"
    assert reap_orphans() == 0


@pytest.mark.slow
def test_stopping_a_server_that_hangs_stops_its_children(tmp_path: Path) -> None:
    async def go() -> list[int]:
        process = await spawn_server(misbehave("setsid", str(tmp_path / "pids"), "hang"))
        pids = await anyio.to_thread.run_sync(read_pids, tmp_path / "pids")
        await stop_server(process)
        return pids

    assert wait_gone(anyio.run(go)) == []


# --- a command that is no server: what it leaves running is stopped with it ---------------


@pytest.mark.slow
def test_a_command_family_stops_what_the_command_left_behind_not_our_other_processes(
    tmp_path: Path, subreaper: None, unrelated: subprocess.Popen[bytes]
) -> None:
    from mcpctl.reaper import CommandFamily

    pids = tmp_path / "pids"
    # A setsid child ignoring SIGTERM, a plain one, and a double fork's grandchild: the
    # command exits at once and leaves all three to this process (a subreaper).
    script = (
        f"trap '' TERM; setsid sleep 120 & echo $! >> {pids}; sleep 120 & echo $! >> {pids}; "
        f"(sleep 120 & echo $! >> {pids}); exit 3"
    )

    async def go() -> tuple[int, int]:
        family = CommandFamily()
        process = await anyio.open_process(["sh", "-c", script], start_new_session=True)
        family.started(process.pid)
        code = await family.wait(process)
        return code, await family.stop(process, grace=0.5)

    assert anyio.run(go) == (3, 3)
    left = read_pids(pids)
    assert len(left) == 3 and wait_gone(left) == [], "the command's children outlived it"
    assert unrelated.poll() is None, "a process the command did not start was stopped"


# --- start-up slots -------------------------------------------------------------------------


def test_until_waiting_waits_out_a_busy_start_up() -> None:
    burn = (
        "import time\n"
        "t = time.process_time()\n"
        "while time.process_time() - t < 1.0: pass\n"
        "time.sleep(120)\n"
    )

    async def go() -> float:
        process = await anyio.open_process([PY, "-c", burn])
        try:
            with anyio.fail_after(60):
                await until_waiting(lambda: process.pid)
            stat = procs.read_stat(process.pid)
            assert stat is not None
            return stat.cpu
        finally:
            process.kill()
            await process.wait()

    # Released only once a second of CPU is spent, however long that takes on this machine.
    assert anyio.run(go) >= 0.9


def test_until_waiting_lets_a_waiting_server_go() -> None:
    async def go() -> None:
        process = await anyio.open_process([PY, "-c", SLEEPER])
        try:
            with anyio.fail_after(20):
                await until_waiting(lambda: process.pid)
        finally:
            process.kill()
            await process.wait()

    anyio.run(go)


@pytest.mark.slow
def test_servers_that_hang_do_not_hold_the_start_up_slots(tmp_path: Path) -> None:
    # One slot: before, the healthy server waited for both timeouts (60 s) to start at all.
    entries = {
        "hang1": misbehave("hang", str(tmp_path / "hang1")),
        "hang2": misbehave("hang", str(tmp_path / "hang2")),
        "good": misbehave("spawn", str(tmp_path / "good")),
    }
    started: list[int] = []

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: probe_all(entries, concurrency=1))
            # Within 15 s, far below the hangs' 30 s timeouts.
            started.extend(await anyio.to_thread.run_sync(read_pids, tmp_path / "good", 15.0))
            tg.cancel_scope.cancel()

    anyio.run(go)
    hangs = [read_pids(tmp_path / name)[0] for name in ("hang1", "hang2")]
    assert wait_gone([*hangs, *started]) == []  # and a cancelled probe stops everything
