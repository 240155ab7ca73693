"""Processes as psutil shows them: who belongs to a server, how much CPU it has used.

A server's *family* is every process that came from it: its descendants by parent links,
the members of its session and process group, and, again, of the sessions and groups those
lead (a child that called ``setsid`` leads its own). A process is known by its pid and its
start time together, so that a pid the system has reused is never taken for the process
that had it.

The processes are read through psutil (Linux, macOS, the BSDs alike); psutil is imported on
first use, not with this module. Where psutil cannot see a process (gone, or another user's
on macOS) it is simply not there. Becoming a child subreaper is Linux only. Nothing here
imports the MCP SDK.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import psutil

__all__ = [
    "ProcStat",
    "available",
    "children",
    "family",
    "is_subreaper",
    "process_age",
    "read_stat",
    "set_subreaper",
    "signal_members",
    "snapshot",
]

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_DEAD = frozenset({"zombie", "dead"})


class ProcStat(NamedTuple):
    """What mcpctl knows of one process (CPU times in seconds)."""

    pid: int
    state: str  # psutil's status: "running", "sleeping", "zombie", "dead"...
    ppid: int
    pgrp: int  # -1 when it cannot be told
    session: int  # -1 when it cannot be told
    cpu: float  # user + system time
    child_cpu: float  # the same, of the children it has waited for (0 where unknown)
    start: float  # its creation time: with the pid, the process's identity

    @property
    def dead(self) -> bool:
        """Whether it has exited (a zombie not reaped yet included)."""
        return self.state in _DEAD


def read_stat(pid: int) -> ProcStat | None:
    """What is known of one process, or ``None`` when it is gone (or cannot be seen)."""
    import psutil

    try:
        process = psutil.Process(pid)
        with process.oneshot():
            return ProcStat(
                pid, process.status(), process.ppid(), *_ids(pid), *_cpu(process),
                process.create_time(),
            )  # fmt: skip
    except (psutil.Error, OSError):
        return None


def process_age() -> float:
    """Seconds since this process started (Linux; 0.0 where that cannot be told): a deadline
    the user gave the command runs from when they started it, imports included."""
    from pathlib import Path

    try:
        fields = Path("/proc/self/stat").read_bytes().rpartition(b")")[2].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: its start, in ticks
        return max(0.0, float(Path("/proc/uptime").read_bytes().split()[0]) - started)
    except (OSError, ValueError, IndexError):
        return 0.0


def _ids(pid: int) -> tuple[int, int]:
    """Its process group and session, ``-1`` each where they cannot be told."""
    try:
        pgrp = os.getpgid(pid)
    except (OSError, AttributeError):
        pgrp = -1
    try:
        session = os.getsid(pid)
    except (OSError, AttributeError):
        session = -1
    return pgrp, session


def _cpu(process: psutil.Process) -> tuple[float, float]:
    """Its CPU time and its waited-for children's, zeros where it cannot be read (a zombie
    on macOS, another user's process)."""
    import psutil

    try:
        times = process.cpu_times()
    except (psutil.Error, OSError):
        return 0.0, 0.0
    return times.user + times.system, times.children_user + times.children_system


@cache
def available() -> bool:
    """Whether processes can be seen on this system (psutil knows how)."""
    return read_stat(os.getpid()) is not None


def snapshot() -> dict[int, ProcStat]:
    """Every process that can be seen, by pid."""
    import psutil

    table: dict[int, ProcStat] = {}
    wanted = ["ppid", "status", "create_time", "cpu_times"]
    try:
        # process_iter keeps its Process objects from one call to the next (a pid reused
        # meanwhile gets a new one): twice as fast as a Process per pid.
        for process in psutil.process_iter(wanted, ad_value=None):
            info = process.info
            if info["create_time"] is None or info["ppid"] is None:
                continue  # not ours to see (another user's, on macOS)
            times = info["cpu_times"]
            cpu = child_cpu = 0.0
            if times is not None:
                cpu = times.user + times.system
                child_cpu = times.children_user + times.children_system
            table[process.pid] = ProcStat(
                process.pid, info["status"] or "?", info["ppid"], *_ids(process.pid), cpu,
                child_cpu, info["create_time"],
            )  # fmt: skip
    except (psutil.Error, OSError):
        pass  # the table so far
    return table


def children(pid: int) -> dict[int, float]:
    """The children of ``pid`` now: pid -> start time (nothing when it is gone)."""
    import psutil

    found: dict[int, float] = {}
    try:
        processes = psutil.Process(pid).children()
    except (psutil.Error, OSError):
        return found
    for process in processes:
        with contextlib.suppress(psutil.Error, OSError):
            found[process.pid] = process.create_time()
    return found


def family(
    root: int, table: Mapping[int, ProcStat], known: Mapping[int, float] | None = None
) -> dict[int, ProcStat]:
    """The processes of ``table`` that came from ``root`` (see the module docstring).

    ``known`` (pid -> start time) are processes seen in the family earlier, ``root``
    included: those still running (same start time) are members too, with what came from
    them. ``root`` may be gone: its session and group id stay reserved while a member uses
    them. This process is never a member.
    """
    me = os.getpid()
    table = {pid: stat for pid, stat in table.items() if pid not in (me, 0, 1)}
    children: dict[int, list[int]] = defaultdict(list)
    for stat in table.values():
        children[stat.ppid].append(stat.pid)
    members: dict[int, ProcStat] = {}
    leaders = {root}
    known = known if known is not None else {}
    frontier = [p for p, start in known.items() if _same(table.get(p), start)]
    if root not in known:
        frontier.append(root)  # the caller vouches for it
    while True:
        while frontier:
            pid = frontier.pop()
            found = table.get(pid)
            if pid in members or found is None:
                continue
            members[pid] = found
            leaders.add(pid)
            frontier.extend(children[pid])
        frontier = [
            s.pid
            for s in table.values()
            if s.pid not in members and (s.session in leaders or s.pgrp in leaders)
        ]
        if not frontier:
            break
    return members


def _same(stat: ProcStat | None, start: float) -> bool:
    return stat is not None and stat.start == start


def signal_members(members: Iterable[ProcStat], sig: signal.Signals) -> None:
    """Send ``sig`` to each process that is still the one seen (same start time)."""
    for member in members:
        if _same(read_stat(member.pid), member.start):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(member.pid, sig)


@cache
def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def set_subreaper(enabled: bool) -> bool:
    """Make this process a child subreaper (Linux), or stop; whether it worked."""
    prctl = _prctl()
    return prctl is not None and prctl(_PR_SET_CHILD_SUBREAPER, int(enabled), 0, 0, 0) == 0


def is_subreaper() -> bool:
    """Whether this process is a child subreaper."""
    prctl = _prctl()
    if prctl is None:
        return False
    import ctypes

    value = ctypes.c_int(0)
    return prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0) == 0 and bool(value.value)
