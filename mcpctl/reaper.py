"""What came from the servers: their families, their start-up, and what they leave behind.

:func:`mcpctl.probe.spawn.spawn_server` records each server in :data:`REGISTRY` with what is
seen of its family on the way (:mod:`mcpctl.procs`), so that
:func:`mcpctl.probe.spawn.stop_server` can stop all of it, a child that called ``setsid``
included. :func:`until_waiting` tells a server that boots from one that only waits.
:func:`become_subreaper` and :func:`reap_orphans` catch the grandchild of a double fork,
which nothing ties to its server any more. :class:`CommandFamily` does the same for a
command that is no server (``watch --exec``): whatever it started is stopped with it, even
what it left running when it exited at once. The processes are read through psutil (Linux,
macOS); becoming a subreaper is Linux only: elsewhere the grandchild of a double fork is
init's, and only what can still be traced to a server or command is stopped with it.
Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import anyio

from mcpctl import procs

if TYPE_CHECKING:
    from anyio.abc import Process

__all__ = [
    "GONE_WAIT",
    "KILL_GRACE",
    "REGISTRY",
    "CommandFamily",
    "Registry",
    "become_subreaper",
    "family_now",
    "reap_dead",
    "reap_orphans",
    "until_waiting",
]

KILL_GRACE = 0.5  # seconds between SIGTERM and SIGKILL
GONE_WAIT = 1.0  # seconds to wait for the killed to be gone

# Start-up: a server holds a start-up slot until it answers, or until it is only waiting.
STARTUP_MIN = 0.3  # seconds before a server may count as waiting
SAMPLE_EVERY = 0.1  # seconds between two readings of its CPU time
IDLE_SAMPLES = 2  # readings in a row without CPU growth: it is waiting
RESCAN_EVERY = 0.5  # seconds between two searches for the processes of its family
STARTUP_WINDOW = 2.0  # where processes cannot be seen: the start-up is over after this long


class Registry:
    """The servers this process started and has not stopped, and what came from each."""

    def __init__(self) -> None:
        # server pid -> {pid: start time} of each process seen in its family, its own included
        self.running: dict[int, dict[int, float]] = {}
        # The start time of the first server since this process became a subreaper or last
        # reaped orphans, and the children this process had then: orphans adopted since are
        # younger, and not among those.
        self.window_start: float | None = None
        self.children_before: dict[int, float] = {}
        self.unreaped: set[int] = set()  # servers stopped but not reaped yet (unkillable)

    def prepare(self) -> None:
        """A server is about to be spawned: at the start of a window, note this process's
        children (before it, so that none of what the server starts is among them)."""
        if self.window_start is None:
            self.children_before = procs.children(os.getpid())

    def add(self, pid: int) -> None:
        stat = procs.read_stat(pid)
        self.running[pid] = {pid: stat.start} if stat is not None else {}
        if stat is not None and self.window_start is None:
            self.window_start = stat.start
            self.children_before.pop(pid, None)  # a pid reused since

    def new_window(self) -> None:
        starts = [seen[pid] for pid, seen in self.running.items() if pid in seen]
        self.window_start = min(starts, default=None)
        if self.window_start is None:
            self.children_before = {}

    def note(self, pid: int, members: Mapping[int, procs.ProcStat]) -> None:
        seen = self.running.get(pid)
        if seen is not None:
            seen.update((p, m.start) for p, m in members.items())

    def stopped(self, pid: int, *, reaped: bool) -> None:
        self.running.pop(pid, None)
        if not reaped:
            self.unreaped.add(pid)  # its process object's to reap, never reap_orphans'


REGISTRY = Registry()


def become_subreaper(enabled: bool = True) -> bool:
    """Make this process a child subreaper (Linux): the orphans of its descendants, a
    server's grandchild that called ``setsid`` included, become its children instead of
    init's, so that :func:`mcpctl.probe.spawn.stop_server` and :func:`reap_orphans` find and
    reap them.

    The ``mcpctl`` program does this while it probes. A library caller may opt in; it then
    adopts the orphans of every process it started. Returns whether this process is now
    one (``False`` where the system has no such thing); ``enabled=False`` stops it.
    """
    if enabled:
        REGISTRY.new_window()
    return procs.set_subreaper(enabled)


async def until_waiting(pid_of: Callable[[], int | None]) -> None:
    """Return once a starting server is only waiting: its start-up no longer needs a CPU.

    ``pid_of`` gives the server's pid once it is spawned. Where processes can be seen
    (:func:`mcpctl.procs.available`), that is when the CPU
    time of its processes (read every :data:`SAMPLE_EVERY` s) has not grown for
    :data:`IDLE_SAMPLES` readings in a row, at least :data:`STARTUP_MIN` s after it was
    seen, or when it has exited; elsewhere, :data:`STARTUP_WINDOW` s after it was seen.
    Its other processes (a launcher's child) are searched for, at most every
    :data:`RESCAN_EVERY` s, only while the server itself is idle, and remembered for
    :func:`mcpctl.probe.spawn.stop_server`.
    """
    while (pid := pid_of()) is None:
        await anyio.sleep(SAMPLE_EVERY / 2)
    if not procs.available():
        await anyio.sleep(STARTUP_WINDOW)
        return
    seen_at = time.monotonic()
    scanned_at: float | None = None
    members: list[int] = [pid]
    own = total = -1.0
    idle = 0
    while True:
        stat = procs.read_stat(pid)
        if stat is None or stat.dead:
            return  # it exited: the probe is about to end
        now = time.monotonic()
        if stat.cpu + stat.child_cpu > own:
            own, idle = stat.cpu + stat.child_cpu, 0  # busy itself: nothing else to know
        else:
            if scanned_at is None or now - scanned_at >= RESCAN_EVERY:
                found = procs.family(pid, procs.snapshot(), REGISTRY.running.get(pid))
                REGISTRY.note(pid, found)
                members, scanned_at = list(found) or [pid], now
            stats = [s for s in map(procs.read_stat, members) if s is not None]
            used = sum(s.cpu + s.child_cpu for s in stats)
            idle = idle + 1 if used <= total else 0
            total = max(used, total)
            if idle >= IDLE_SAMPLES and now - seen_at >= STARTUP_MIN:
                return
        await anyio.sleep(SAMPLE_EVERY)


def family_now(pid: int) -> dict[int, procs.ProcStat]:
    """The server's family now, itself left out (its process object reaps it)."""
    if not procs.available():
        return {}
    members = procs.family(pid, procs.snapshot(), REGISTRY.running.get(pid))
    REGISTRY.note(pid, members)
    members.pop(pid, None)
    return members


def reap_dead(members: Mapping[int, procs.ProcStat], root: int) -> dict[int, procs.ProcStat]:
    """Reap the members that are dead children of this process; returns those not done.

    A member is done once gone, or dead with a parent outside the family (init reaps it).
    A dead member whose parent is in the family is not: it may be passed on to this process.
    """
    me = os.getpid()
    left = {}
    for pid, seen in members.items():
        stat = procs.read_stat(pid)
        if stat is None or stat.start != seen.start:
            continue
        if not stat.dead or stat.ppid in members or stat.ppid == root:
            left[pid] = seen
        elif stat.ppid == me:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
    return left


def reap_orphans() -> int:
    """Stop and reap the orphans this process adopted as a subreaper from stopped servers.

    :func:`mcpctl.probe.spawn.stop_server` stops every process it traces to the server; not
    the grandchild of a double fork whose parent exited at once: it was adopted by this
    process (see :func:`become_subreaper`) with nothing left that ties it to its server.
    Orphans are this process's children in a session other than its own, that are no
    server, come from no running server, and were neither started before nor children
    already when the first server was spawned since this process became a subreaper or last
    called this. They and what came from them get SIGTERM, SIGKILL half a second later, and
    are reaped.

    So a process that starts children of its own in a new session while servers run should
    not call it; the ``mcpctl`` program does, once its servers are stopped. Returns how many
    processes were stopped.
    """
    me = procs.read_stat(os.getpid())
    since, before = REGISTRY.window_start, REGISTRY.children_before
    REGISTRY.new_window()
    if me is None or since is None:
        return 0
    table = procs.snapshot()
    REGISTRY.unreaped &= set(table)
    busy = set(REGISTRY.unreaped)
    for pid, seen in REGISTRY.running.items():
        busy.update(procs.family(pid, table, seen))
    orphans: dict[int, procs.ProcStat] = {}
    for stat in table.values():
        if (
            stat.ppid == me.pid
            and stat.session != me.session
            and stat.pid not in busy
            and stat.start >= since
            and before.get(stat.pid) != stat.start
        ):
            orphans.update(procs.family(stat.pid, table, {stat.pid: stat.start}))
    orphans = {pid: stat for pid, stat in orphans.items() if pid not in busy}
    if not orphans:
        return 0
    procs.signal_members(orphans.values(), signal.SIGTERM)
    left = _wait_reaped(orphans, KILL_GRACE)
    procs.signal_members(left.values(), signal.SIGKILL)
    _wait_reaped(left, GONE_WAIT)
    return len(orphans)


def _wait_reaped(
    members: Mapping[int, procs.ProcStat], seconds: float
) -> dict[int, procs.ProcStat]:
    deadline = time.monotonic() + seconds
    while (left := reap_dead(members, 0)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return left


class CommandFamily:
    """Every process that came from one command this process runs, to stop them all with it.

    Made *before* the command starts (it notes this process's children then), told the
    command's pid with :meth:`started`; :meth:`wait` waits for the command while it looks
    for its family, and :meth:`stop` ends the command and its whole family: SIGTERM, then
    SIGKILL after a grace period, the zombies reaped. The family is what
    :func:`mcpctl.procs.family` finds from the command (its descendants, a child that called
    ``setsid`` included, and the members of the sessions and groups they lead), and, when
    this process is a child subreaper (:func:`become_subreaper`), the orphans it adopted
    meanwhile in a session other than its own: the child that a command put in the
    background (``setsid``, ``nohup``, a double fork) before exiting at once. So nothing
    else should start children of this process in a new session while a command runs.

    The command should lead a session of its own (``start_new_session=True``). Where
    processes cannot be seen (:func:`mcpctl.procs.available`) only its process group
    is known.
    """

    def __init__(self) -> None:
        self.me = os.getpid()
        self.root: int | None = None
        self.seen: dict[int, float] = {}  # pid -> start time of each member seen, root included
        self.before: dict[int, float] = {}
        if procs.available():
            self.before = procs.children(self.me)

    def started(self, pid: int) -> None:
        """The command is running as ``pid``."""
        self.root = pid
        stat = procs.read_stat(pid)
        if stat is not None:
            self.seen[pid] = stat.start
        self.before.pop(pid, None)  # a pid reused since

    def scan(self) -> dict[int, procs.ProcStat]:
        """The family now, the command itself left out (its process object reaps it)."""
        if self.root is None or not procs.available():
            return {}
        table = procs.snapshot()
        me = table.get(self.me)
        members = procs.family(self.root, table, self.seen)
        for stat in table.values():
            if (
                stat.ppid == self.me
                and stat.pid != self.root
                and stat.pid not in members
                and self.before.get(stat.pid) != stat.start
                and (me is None or stat.session != me.session)
            ):
                members.update(procs.family(stat.pid, table, {stat.pid: stat.start}))
        self.seen.update((p, m.start) for p, m in members.items())
        members.pop(self.root, None)
        return members

    async def wait(self, process: Process) -> int:
        """Wait for the command to exit, looking for its family meanwhile (every
        :data:`RESCAN_EVERY` s: a child seen while its parent runs is known once it is
        re-parented); its exit code."""
        code: int | None = None
        while code is None:
            with anyio.move_on_after(RESCAN_EVERY):
                code = await process.wait()
            if code is None:
                self.scan()
        return code

    async def stop(self, process: Process, grace: float = KILL_GRACE) -> int:
        """Stop the command if it still runs and every process of its family: SIGTERM,
        SIGKILL ``grace`` s later to what is left; then reap them and close ``process``.
        Not cancelled by the caller's cancellation. Returns how many processes of the
        family (the command left out) were found."""
        if self.root is None:
            self.started(process.pid)
        found: set[int] = set()
        with anyio.CancelScope(shield=True):
            if process.stdin is not None:
                with contextlib.suppress(Exception):
                    await process.stdin.aclose()
            members = self.scan()
            found.update(members)
            for sig, seconds in ((signal.SIGTERM, grace), (signal.SIGKILL, GONE_WAIT)):
                if process.returncode is None or self._group_in_use(members):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(process.pid, sig)  # its group: it leads a session
                procs.signal_members(members.values(), sig)
                with anyio.move_on_after(seconds):
                    while process.returncode is None or (
                        members := reap_dead(members, process.pid)
                    ):
                        await anyio.sleep(0.01)
                more = self.scan()  # what started meanwhile (a trap that forks)
                found.update(more)
                members.update(more)
                if process.returncode is None or members:
                    continue
                break
            with contextlib.suppress(Exception):
                await process.aclose()
        return len(found)

    def _group_in_use(self, members: Mapping[int, procs.ProcStat]) -> bool:
        if self.root is None:
            return False
        if not procs.available():
            return True  # nothing to tell by: the group may outlive its leader
        # A group that cannot be told (-1) may be the command's: nothing to tell by either.
        return any(m.pgrp in (self.root, -1) for m in members.values())
