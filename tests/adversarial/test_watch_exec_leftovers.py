"""What a ``watch --exec`` command leaves running is stopped: after each run, and when the
watch ends.

A command that starts a child in the background and exits at once (a ``setsid`` child, one
that ignores SIGTERM, a ``nohup`` one, the grandchild of a double fork) must not leave that
child behind: it would outlive ``mcpctl watch`` and hold its stderr open, so that
``mcpctl watch ... 2>&1 | tee log`` never ends. Each sleeper has a marker of its own in its
argv (``sleep 300.<digits>``), by which psutil finds it; whatever a case finds is stopped by
pid in a ``finally``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import random
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from mcpctl import procs
from tests.cli.test_watch import SIGNALS, A, B, _default_signals, save, wait_for
from tests.conftest import MCPCTL, SERVERS, write_config

GONE_WITHIN = 10.0  # seconds: generous, the machine is shared
# setsid(1) as a script: macOS has no such program.
SETSID = shlex.join([sys.executable, str(SERVERS / "setsid.py")])
# A command that exits at once leaves its children to whoever adopts orphans: mcpctl, where it
# can be a child subreaper (Linux); elsewhere launchd, and nothing ties them to the command.
needs_subreaper = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="the orphans of a command that exits at once are caught by a child subreaper (Linux)",
)


def marked(marker: str) -> dict[int, float]:
    """The live processes with ``marker`` in their argv: pid -> start time."""
    found: dict[int, float] = {}
    for process in psutil.process_iter():
        try:
            argv = process.cmdline()
        except psutil.Error:
            continue  # ended meanwhile, or not ours to read
        stat = procs.read_stat(process.pid)
        if marker in argv and stat is not None and not stat.dead:
            found[stat.pid] = stat.start
    return found


def wait_none(marker: str, seconds: float = GONE_WITHIN) -> dict[int, float]:
    deadline = time.monotonic() + seconds
    while (left := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def sleepers() -> Iterator[Any]:
    """A new marker (``300.<digits>``: a sleep of five minutes) per call; every process
    carrying one is stopped by pid (start time checked) after the test."""
    made: list[str] = []

    def new() -> str:
        made.append(f"300.{random.randrange(10**8):08d}")
        return made[-1]

    yield new
    for marker in made:
        stop_marked(marker)


def stop_marked(marker: str) -> None:
    """SIGKILL each process with ``marker`` in its argv, by pid (start time checked)."""
    for pid, start in marked(marker).items():
        stat = procs.read_stat(pid)
        if stat is not None and stat.start == start:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def commands(mark: str) -> dict[str, str]:
    """Commands that leave a sleeper with ``mark`` behind and exit at once."""
    return {
        "setsid": f"sh -c '{SETSID} sleep {mark} & exit 0'",
        "ignores-term": f"sh -c 'trap \"\" TERM; sleep {mark} & exit 0'",
        "setsid-ignores-term": f"sh -c 'trap \"\" TERM; {SETSID} sleep {mark} & exit 0'",
        "nohup": f"sh -c 'nohup sleep {mark} >/dev/null 2>&1 & exit 0'",
        "double-fork": f"sh -c '(sleep {mark} &); exit 0'",
    }


KINDS = list(commands("0"))


@needs_subreaper
@pytest.mark.parametrize("kind", KINDS)
def test_what_a_run_leaves_behind_is_stopped_when_it_ends(
    tmp_path: Path, watch: Any, sleepers: Any, kind: str
) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    mark = sleepers()
    w = watch(cfg, "--exec", commands(mark)[kind], "--json")
    w.ready()
    save(cfg, {"a": A, "b": B})
    assert w.event()["added"] == ["b"]
    ran = w.event("exec", timeout=30)
    assert ran["ok"] is True and ran["exit_code"] == 0, ran
    assert wait_none(mark) == {}, f"{kind}: the sleeper outlived its --exec run"
    # The watch goes on, and the next run is cleaned up after as well.
    save(cfg, {"a": A})
    assert w.event()["removed"] == ["b"]
    assert w.event("exec", timeout=30)["ok"] is True
    assert wait_none(mark) == {}
    assert w.stop() == 0
    assert "Traceback" not in w.all_stderr()


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_mid_run_stops_what_the_run_started(
    tmp_path: Path, watch: Any, sleepers: Any, sig: signal.Signals
) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    outside, inside = sleepers(), sleepers()
    started = tmp_path / "started"
    # A setsid child that ignores SIGTERM, then the command itself ignores it and waits.
    command = (
        f"sh -c 'trap \"\" TERM; {SETSID} sleep {outside} & sleep {inside} & touch {started}; wait'"
    )
    w = watch(cfg, "--exec", command, "--json")
    w.ready()
    save(cfg, {"a": A, "b": B})
    w.event()
    wait_for(started.exists, 30)
    wait_for(lambda: marked(outside) and marked(inside), 30)
    assert w.stop(sig) == 0
    assert wait_none(outside) == {}, f"{sig.name}: the setsid child outlived mcpctl watch"
    assert wait_none(inside) == {}, f"{sig.name}: the command outlived mcpctl watch"
    assert "Traceback" not in w.all_stderr()


@needs_subreaper
@pytest.mark.parametrize("kind", ["setsid", "ignores-term", "nohup"])
def test_watch_piped_into_tee_ends(tmp_path: Path, sleepers: Any, kind: str) -> None:
    """``mcpctl watch --exec CMD 2>&1 | tee``: once watch ends, its stderr pipe reaches EOF
    (no sleeper holds it open), so the reader ends too."""
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    mark = sleepers()
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home")}
    argv = [*MCPCTL, "--config", str(cfg), "watch", "--debounce", "0.2", "--json",
            "--exec", commands(mark)[kind]]  # fmt: skip
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
        preexec_fn=_default_signals,  # noqa: PLW1509 -- the signals a terminal gives it
    )  # fmt: skip
    lines: queue.Queue[bytes] = queue.Queue()
    stderr: list[bytes] = []

    def pump(stream: Any, into: Any) -> None:
        for line in stream:  # to EOF: every writer closed the pipe
            into(line)

    assert proc.stdout is not None and proc.stderr is not None
    readers = [threading.Thread(target=pump, args=(proc.stdout, lines.put), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, stderr.append), daemon=True)]  # fmt: skip
    for reader in readers:
        reader.start()
    try:
        wait_for(lambda: any(b"watching " in line for line in stderr), 30)
        save(cfg, {"a": A, "b": B})
        while True:
            event = json.loads(lines.get(timeout=30))
            if event["event"] == "exec":
                break
        assert event["ok"] is True, event
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=GONE_WITHIN) == 0
        readers[1].join(GONE_WITHIN)
        assert not readers[1].is_alive(), f"{kind}: watch's stderr stays open after it ended"
        assert marked(mark) == {}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        stop_marked(mark)  # what holds the pipes open, so that the readers end
        for reader in readers:
            reader.join(GONE_WITHIN)
