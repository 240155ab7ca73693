"""SIGINT, SIGTERM and SIGHUP to the mcpctl program while its servers run.

Each server here starts a descendant, then hangs (or serves a slow call): a plain child in its
group, a child that called setsid, and the grandchild of a double fork, orphaned in a session
of its own. Whatever the signal, every one of those processes is gone afterwards, the program
says so on stderr, exits 128 + the signal's number (0 for --watch, which a signal ends), and
with --json prints exactly one envelope. A process the test started itself survives.
``mcpctl watch`` ends with exit 0 on a signal, and stops the --exec child it runs.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_watch import A, B, save, wait_for
from tests.conftest import MCPCTL, SERVERS, alive, write_config

pytestmark = pytest.mark.slow

PY = sys.executable
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
MODES = ("spawn", "setsid", "daemon")


def wait_gone(pids: list[int], seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := [p for p in pids if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def read_pids(path: Path, proc: subprocess.Popen[str], seconds: float = 60.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, f"mcpctl ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return [int(p) for p in path.read_text().split()]


class Running:
    """mcpctl started as a real program, and the pids its servers wrote."""

    def __init__(
        self, tmp_path: Path, config: dict[str, Any], *args: str,
        ignore: signal.Signals | None = None,
    ) -> None:  # fmt: skip
        cfg = write_config(tmp_path / "external-mcps.json", config)
        env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home")}

        def signals() -> None:
            # A shell without job control starts background jobs with SIGINT ignored, and
            # mcpctl (rightly) leaves ignored signals ignored: give it a terminal's defaults.
            for sig in SIGNALS:
                signal.signal(sig, signal.SIG_IGN if sig == ignore else signal.SIG_DFL)

        self.proc = subprocess.Popen(
            [*MCPCTL, "--config", str(cfg), *args], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=env, preexec_fn=signals,  # noqa: PLW1509
        )  # fmt: skip

    def pids(self, files: list[Path]) -> list[int]:
        return [pid for f in files for pid in read_pids(f, self.proc)]

    def stop(self, sig: signal.Signals) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, out, err

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate(timeout=30)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Any]:
    started: list[Running] = []

    def start(config: dict[str, Any], *args: str, **kw: Any) -> Running:
        started.append(Running(tmp_path, config, *args, **kw))
        return started[-1]

    yield start
    for r in started:
        r.close()


@pytest.fixture
def unrelated() -> Iterator[subprocess.Popen[bytes]]:
    """A process mcpctl did not start, in a session of its own like a server's."""
    proc = subprocess.Popen([PY, "-c", "import time; time.sleep(300)"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait(timeout=10)


def hanging_family(tmp_path: Path) -> tuple[dict[str, Any], list[Path]]:
    """Three servers, each with its kind of descendant, that never answer."""
    files = [tmp_path / f"{mode}.pids" for mode in MODES]
    config = {
        mode: {"command": PY, "args": [str(SERVERS / "misbehave.py"), mode, str(f), "hang"]}
        for mode, f in zip(MODES, files, strict=True)
    }
    return config, files


def check_interrupted(sig: signal.Signals, code: int, out: str, err: str, command: str) -> None:
    assert code == 128 + sig, (code, err)
    assert err.strip().splitlines()[-1] == f"interrupted by {sig.name}", err
    assert "Traceback" not in err
    envelope = json.loads(out)  # exactly one JSON document
    assert envelope["command"] == command and envelope["ok"] is False
    assert envelope["errors"] == [
        {"code": "interrupted", "message": f"interrupted by {sig.name}", "hint": None}
    ]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("command", ["health", "tools"])
def test_a_signal_stops_every_server_and_what_came_from_it(
    running: Any, tmp_path: Path, unrelated: subprocess.Popen[bytes],
    command: str, sig: signal.Signals,
) -> None:  # fmt: skip
    config, files = hanging_family(tmp_path)
    mcpctl = running(config, command, "--timeout", "60", "--json")
    pids = mcpctl.pids(files)
    assert all(alive(p) for p in pids)
    code, out, err = mcpctl.stop(sig)
    check_interrupted(sig, code, out, err, command)
    assert wait_gone(pids) == [], "a server or its descendant outlived mcpctl"
    assert unrelated.poll() is None, "a process mcpctl did not start was stopped"


@pytest.mark.parametrize(
    "args",
    [["report", "--probe"], ["snapshot", "save", "--probe"], ["snapshot", "diff", "--probe"]],
    ids=" ".join,
)
def test_a_signal_stops_the_probing_commands(
    running: Any, tmp_path: Path, unrelated: subprocess.Popen[bytes], args: list[str]
) -> None:
    config, files = hanging_family(tmp_path)
    mcpctl = running(config, *args, "--timeout", "60", "--json")
    pids = mcpctl.pids(files)
    code, out, err = mcpctl.stop(signal.SIGTERM)
    assert code == 128 + signal.SIGTERM, (code, err)
    assert err.strip().splitlines()[-1] == "interrupted by SIGTERM", err
    assert "Traceback" not in err
    assert json.loads(out)["errors"][0]["code"] == "interrupted"
    assert wait_gone(pids) == []
    assert unrelated.poll() is None


@pytest.mark.parametrize(
    ("sig", "mode"), list(zip(SIGNALS, MODES, strict=True)), ids=lambda v: getattr(v, "name", v)
)
def test_a_signal_during_a_call(
    running: Any, tmp_path: Path, unrelated: subprocess.Popen[bytes],
    sig: signal.Signals, mode: str,
) -> None:  # fmt: skip
    pid_file = tmp_path / "pids"
    config = {"s": {"command": PY, "args": [str(SERVERS / "misbehave.py"), mode, str(pid_file)]}}
    mcpctl = running(config, "call", "s", "slow", "--arg", "seconds=120", "--json")
    pids = mcpctl.pids([pid_file])
    code, out, err = mcpctl.stop(sig)
    check_interrupted(sig, code, out, err, "call")
    assert wait_gone(pids) == []
    assert unrelated.poll() is None


def test_without_json_stdout_stays_empty(running: Any, tmp_path: Path) -> None:
    config, files = hanging_family(tmp_path)
    mcpctl = running(config, "health", "--timeout", "60")
    pids = mcpctl.pids(files)
    code, out, err = mcpctl.stop(signal.SIGTERM)
    assert (code, out) == (143, "")
    assert err.strip().splitlines()[-1] == "interrupted by SIGTERM"
    assert wait_gone(pids) == []


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_watch_ends_on_a_signal_mid_round(
    running: Any, tmp_path: Path, unrelated: subprocess.Popen[bytes], sig: signal.Signals
) -> None:
    config, files = hanging_family(tmp_path)
    mcpctl = running(config, "health", "--watch", "--timeout", "60", "--json")
    pids = mcpctl.pids(files)
    code, out, err = mcpctl.stop(sig)
    assert (code, out) == (0, ""), err  # no round completed: nothing to report
    assert "Traceback" not in err and "interrupted" not in err
    assert wait_gone(pids) == []
    assert unrelated.poll() is None


def test_a_signal_ignored_at_start_stays_ignored(running: Any, tmp_path: Path) -> None:
    config, files = hanging_family(tmp_path)
    mcpctl = running(config, "health", "--timeout", "60", "--json", ignore=signal.SIGHUP)
    pids = mcpctl.pids(files)
    mcpctl.proc.send_signal(signal.SIGHUP)  # as under nohup: not a reason to stop
    with pytest.raises(subprocess.TimeoutExpired):
        mcpctl.proc.wait(timeout=2)
    code, out, err = mcpctl.stop(signal.SIGTERM)
    check_interrupted(signal.SIGTERM, code, out, err, "health")
    assert wait_gone(pids) == []


# --- mcpctl watch: a signal ends it with exit 0, a running --exec child included ---------


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_ends_it_with_exit_0_and_stops_a_running_exec(
    tmp_path: Path, watch: Any, sig: signal.Signals
) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    pid_file = tmp_path / "pid"
    script = (
        "import os, sys, time, pathlib; sys.stdin.read(); "
        f"pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid())); time.sleep(60)"
    )
    w = watch(cfg, "--exec", shlex.join([PY, "-c", script]), "--json")
    w.ready()
    save(cfg, {"a": A, "b": B})
    w.event()
    pid = int(wait_for(lambda: pid_file.exists() and pid_file.read_text()))
    assert alive(pid)
    started = time.monotonic()
    assert w.stop(sig) == 0
    assert time.monotonic() - started < 4
    assert wait_gone([pid], 2) == [], "the --exec child outlived mcpctl"
    assert "Traceback" not in w.all_stderr()


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_while_idle_ends_it_with_exit_0(
    tmp_path: Path, watch: Any, sig: signal.Signals
) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    w = watch(cfg, "--json")
    w.ready()
    started = time.monotonic()
    assert w.stop(sig) == 0
    assert time.monotonic() - started < 2
    assert w.rest() == []
