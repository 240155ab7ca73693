"""Processes as Linux shows them in /proc: who belongs to a server, how much CPU it has used.

A server's *family* is every process that came from it: its descendants by parent links,
the members of its session and process group, and, again, of the sessions and groups those
lead (a child that called ``setsid`` leads its own). A process is known by its pid and its
start time together, so that a pid the kernel has reused is never taken for the process
that had it.

Where /proc is missing (macOS), everything here knows nothing: callers fall back to process
groups and time windows. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "ProcStat",
    "available",
    "family",
    "is_subreaper",
    "read_stat",
    "set_subreaper",
    "signal_members",
    "snapshot",
]

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


class ProcStat(NamedTuple):
    """The fields of ``/proc/PID/stat`` that mcpctl uses (times in clock ticks)."""

    pid: int
    state: str
    ppid: int
    pgrp: int
    session: int
    ticks: int  # utime + stime
    child_ticks: int  # cutime + cstime: children it has waited for
    start: int  # starttime, after boot: with the pid, the process's identity


def read_stat(pid: int) -> ProcStat | None:
    """The stat of one process, or ``None`` when it is gone (or /proc is missing)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    try:
        # The command name is in parentheses and may hold anything: split after the last ")".
        rest = raw[raw.rindex(b")") + 2 :].split()
        return ProcStat(
            pid, rest[0].decode("ascii", "replace"), int(rest[1]), int(rest[2]), int(rest[3]),
            int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14]), int(rest[19]),
        )  # fmt: skip
    except (ValueError, IndexError):
        return None


@cache
def available() -> bool:
    """Whether this system has a Linux /proc."""
    return read_stat(os.getpid()) is not None


def snapshot() -> dict[int, ProcStat]:
    """Every process that can be seen, by pid."""
    table: dict[int, ProcStat] = {}
    try:
        names = [entry.name for entry in Path("/proc").iterdir()]
    except OSError:
        return table
    for name in names:
        if name.isdigit():
            stat = read_stat(int(name))
            if stat is not None:
                table[stat.pid] = stat
    return table


def family(
    root: int, table: Mapping[int, ProcStat], known: Mapping[int, int] | None = None
) -> dict[int, ProcStat]:
    """The processes of ``table`` that came from ``root`` (see the module docstring).

    ``known`` (pid -> start time) are processes seen in the family earlier, ``root``
    included: those still running (same start time) are members too, with what came from
    them. ``root`` may be gone: its session and group id stay reserved while a member uses
    them. This process is never a member.
    """
    me = os.getpid()
    table = {pid: stat for pid, stat in table.items() if pid not in (me, 1)}
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


def _same(stat: ProcStat | None, start: int) -> bool:
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
