"""The adversarial suite's fixtures: after every case, nothing the case started still runs.

For the length of each test this process is a child subreaper (Linux), so the orphans of
whatever the test started (the grandchild of a double fork, a server a killed mcpctl left
behind) are re-parented here instead of to init, and stay visible as descendants. After the
test, every process that came from this one (its descendants, and the members of sessions
and process groups they lead) and was not there before the test must be gone within a few
seconds. Stragglers are stopped by pid (with their start time checked, never by name), reaped,
and the test fails naming them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping

import pytest

from mcpctl import procs
from tests.auth.conftest import mcpctl, oauth_server  # noqa: F401 -- fixtures used here too
from tests.cli.test_watch import watch  # noqa: F401 -- fixtures used here too
from tests.conftest import Cli, Run
from tests.registry.conftest import catalog, registry  # noqa: F401

LOGGERS = ("", "mcp", "client", "httpx2", "httpcore2")
GRACE = 10.0  # seconds for what a test started to finish exiting after the test


def descendants(table: Mapping[int, procs.ProcStat]) -> dict[int, procs.ProcStat]:
    """The processes of ``table`` that came from this one (this one excluded)."""
    me = os.getpid()
    children: dict[int, list[int]] = defaultdict(list)
    for stat in table.values():
        children[stat.ppid].append(stat.pid)
    found: dict[int, procs.ProcStat] = {}
    frontier = list(children[me])
    while frontier:
        while frontier:
            pid = frontier.pop()
            if pid in found or pid not in table or pid == me:
                continue
            found[pid] = table[pid]
            frontier.extend(children[pid])
        leaders = set(found)
        frontier = [
            s.pid
            for s in table.values()
            if s.pid not in found and s.pid != me and (s.session in leaders or s.pgrp in leaders)
        ]
    return found


def _cmdline(pid: int) -> str:
    import psutil

    try:
        argv = psutil.Process(pid).cmdline()
    except psutil.Error:
        return "?"
    return " ".join(argv).strip()[:200]


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _new_live(before: Mapping[int, float]) -> dict[int, procs.ProcStat]:
    me = os.getpid()
    left: dict[int, procs.ProcStat] = {}
    for pid, stat in descendants(procs.snapshot()).items():
        if before.get(pid) == stat.start:
            continue
        if stat.dead:
            if stat.ppid == me:  # an adopted orphan that died: reap it
                _reap(pid)
            continue
        left[pid] = stat
    return left


@pytest.fixture(autouse=True)
def nothing_left_running() -> Iterator[None]:
    """Fails the test when a process it started (directly or not) outlives it."""
    if not procs.available():
        yield
        return
    was_subreaper = procs.is_subreaper()
    procs.set_subreaper(True)
    before = {pid: stat.start for pid, stat in descendants(procs.snapshot()).items()}
    try:
        yield
        deadline = time.monotonic() + GRACE
        while (left := _new_live(before)) and time.monotonic() < deadline:
            time.sleep(0.05)
        if left:
            described = [f"{pid} {_cmdline(pid)}" for pid in sorted(left)]
            procs.signal_members(left.values(), signal.SIGKILL)
            deadline = time.monotonic() + GRACE
            while _new_live(before) and time.monotonic() < deadline:  # reaps the dead ones
                time.sleep(0.05)
            for pid in left:
                _reap(pid)
            pytest.fail("processes the test started still run:\n" + "\n".join(described))
    finally:
        if not was_subreaper:
            procs.set_subreaper(False)


class OwnProcessCli(Cli):
    """Runs mcpctl in this process as if in a process of its own, as far as logging goes:
    with -v the libraries' logs go to the run's stderr, and what a run does to the logging
    setup (a handler on a stream that closes with the run) is undone after it."""

    def __call__(
        self, *args: str, input: str | None = None, env: dict[str, str] | None = None
    ) -> Run:
        saved = [(lg, list(lg.handlers), lg.level, lg.propagate)
                 for lg in map(logging.getLogger, LOGGERS)]  # fmt: skip
        for name in LOGGERS[1:]:
            logging.getLogger(name).propagate = True
        try:
            return super().__call__(*args, input=input, env=env)
        finally:
            for lg, handlers, level, propagate in saved:
                lg.handlers, lg.level, lg.propagate = handlers, level, propagate


@pytest.fixture
def cli() -> Iterator[Cli]:
    yield OwnProcessCli()
