"""``health --watch`` on a terminal (one table redrawn in place) and progress on stderr.

The view's parts are checked directly; the whole of it in a real pseudo-terminal, where a
person would see it, with a real server, ended by a signal like any watch.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from mcpctl.cli.health_live import FAILED, Board, ago, sparkline
from mcpctl.config.redaction import forget, register
from tests.conftest import alive

ROOT = Path(__file__).resolve().parents[2]
NOTES = ROOT / "examples" / "servers" / "notes.py"


def test_a_sparkline_scales_between_the_fastest_and_slowest_answer() -> None:
    assert sparkline([10.0, 20.0, 30.0]) == "▁▅█"
    assert sparkline([5.0, 5.0]) == "▁▁"  # flat: no change to show
    assert sparkline([10.0, None, 30.0]) == f"▁{FAILED}█"
    assert sparkline([None, None]) == FAILED * 2
    assert sparkline([]) == ""


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0s"),
        (59.9, "59s"),
        (65, "1m 05s"),
        (3600 * 2 + 600, "2h 10m"),
        (86400 * 3 + 7200, "3d 2h"),
        (-4, "0s"),
    ],
)
def test_durations_read_at_a_glance(seconds: float, shown: str) -> None:
    assert ago(seconds) == shown


def text_of(board: Board, now: float) -> str:
    console = Console(file=io.StringIO(), width=160, color_system=None)
    console.print(board.render(now))
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_the_board_keeps_each_servers_state_history_and_time_since_it_changed() -> None:
    board = Board(["a", "b"], interval=30)
    assert board.record("a", "healthy", 12.0, "", now=100.0) is True
    assert board.record("b", "unavailable", None, "spawn_failed: no such file", now=100.0) is True
    board.waiting(101.0)
    assert board.record("a", "healthy", 40.0, "", now=131.0) is False  # no transition
    assert board.record("b", "healthy", 7.0, "", now=131.0) is True
    board.waiting(132.0)
    shown = text_of(board, now=150.0)
    row_a = next(line for line in shown.splitlines() if " a " in line)
    row_b = next(line for line in shown.splitlines() if " b " in line)
    assert "healthy" in row_a and "40 ms" in row_a and "▁█" in row_a and "50s" in row_a
    assert "healthy" in row_b and f"{FAILED}▁" in row_b and "19s" in row_b
    assert "spawn_failed" not in shown  # the error went with the failure
    assert "2/2 healthy" in shown and "round 2" in shown and "next round in 12s" in shown
    board.probing()
    assert "round 3" in text_of(board, 160.0) and "probing" in text_of(board, 160.0)


def test_a_degraded_server_keeps_its_latency_and_says_why() -> None:
    board = Board(["slow", "locked"], interval=30)
    board.record("slow", "degraded", 2500.0, "slow: tools/list took 2500 ms", now=1.0)
    board.record("locked", "needs_auth", None, "auth_required: sign in", now=1.0)
    slow, locked = board.tracks()
    assert slow.latency_ms == 2500.0 and list(slow.history) == [2500.0]
    assert locked.latency_ms is None and list(locked.history) == [None]
    shown = text_of(board, 2.0)
    assert "REASON" in shown and "slow: tools/list took 2500 ms" in shown
    assert "needs_auth" in shown and "0/2 healthy" in shown


def test_the_history_keeps_only_the_last_probes() -> None:
    board = Board(["a"], interval=1)
    for i in range(50):
        board.record("a", "healthy", float(i), "", now=float(i))
    (track,) = board.tracks()
    assert len(track.history) == 20 and track.history[0] == 30.0


def test_names_and_errors_reach_the_terminal_as_data() -> None:
    register(["s3cret-value-in-an-error"])
    board = Board(["evil\x1b[2J\x1b]8;;http://x\x07name"], interval=5)
    board.record(
        "evil\x1b[2J\x1b]8;;http://x\x07name",
        "unhealthy",
        None,
        "tool_error: \x1b[31mred\x9b token s3cret-value-in-an-error",
        now=1.0,
    )
    shown = text_of(board, 2.0)
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "\\u001b[2J" in shown or "\\x1b[2J" in shown
    forget()
    assert "s3cret-value-in-an-error" not in shown and "****" in shown


# -- in a real terminal ------------------------------------------------------------------


def pids_alive(pids: list[int]) -> list[int]:
    return [pid for pid in pids if alive(pid)]


class Terminal:
    """mcpctl run in a pseudo-terminal (stdout and stderr both on it)."""

    def __init__(self, args: list[str], env: dict[str, str], *, hup: Any = signal.SIG_DFL) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: becomes mcpctl
            # As a terminal's shell starts it: the suite itself may run under nohup, whose
            # ignored SIGHUP the child would inherit (and rightly keep).
            signal.signal(signal.SIGHUP, hup)
            os.execve(sys.executable, [sys.executable, "-m", "mcpctl", *args], env)  # noqa: S606
        self.seen = b""
        self.status: int | None = None

    def read_until(self, needle: str, seconds: float) -> str:
        deadline = time.monotonic() + seconds
        while needle.encode() not in self.seen and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:  # the terminal closed: mcpctl ended
                    break
                if not chunk:
                    break
                self.seen += chunk
        return self.seen.decode(errors="replace")

    def wait(self, seconds: float) -> int:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.read_until("\x00never", 0.2)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                return self.status
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError(f"mcpctl did not end within {seconds} s:\n{self.seen.decode()}")

    def close(self) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        os.close(self.fd)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    pids = tmp_path / "pids"
    wrapper = f'echo $$ >> {pids}; exec "{sys.executable}" "{NOTES}"'
    config = tmp_path / "external-mcps.json"
    config.write_text(
        json.dumps(
            {
                "notes": {"command": "sh", "args": ["-c", wrapper], "timeout": 20000},
                "gone": {"command": str(tmp_path / "no-such-server")},
            }
        )
    )
    env = {
        **os.environ,
        "COLUMNS": "120",
        "LINES": "40",
        "TERM": "xterm-256color",
        "MCPCTL_CONFIG": str(config),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    env.pop("NO_COLOR", None)
    return config, pids, env


@pytest.mark.timeout(90)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_the_live_view_redraws_one_table_and_ends_on_a_signal(
    setup: tuple[Path, Path, dict[str, str]], sig: signal.Signals
) -> None:
    _, pids, env = setup
    term = Terminal(["health", "--watch", "--interval", "0.5"], env)
    try:
        seen = term.read_until("round 3", 60)
        assert "round 3" in seen, seen
        assert "notes" in seen and "healthy" in seen and "gone" in seen and "unavailable" in seen
        assert FAILED * 2 in seen  # the failing server's sparkline
        assert "->" not in seen  # no scrolling log of transitions
        assert "\x1b[" in seen  # redrawn in place: cursor movement
        os.kill(term.pid, sig)
        assert term.wait(30) == 0
    finally:
        term.close()
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) >= 2  # one server per round
    deadline = time.monotonic() + 10
    while pids_alive(started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pids_alive(started) == []


@pytest.mark.timeout(90)
def test_under_nohup_a_hangup_is_ignored_and_a_stop_still_ends_it(
    setup: tuple[Path, Path, dict[str, str]],
) -> None:
    """``nohup mcpctl health --watch``: SIGHUP was ignored when mcpctl started, so it keeps
    watching (as the user asked); SIGTERM still ends it and its servers."""
    _, pids, env = setup
    term = Terminal(["health", "--watch", "--interval", "0.5"], env, hup=signal.SIG_IGN)
    try:
        assert "round 2" in term.read_until("round 2", 60)
        os.kill(term.pid, signal.SIGHUP)
        now = int(re.findall(rb"round (\d+)", term.seen)[-1])
        seen = term.read_until(f"round {now + 2}", 60)  # still drawing, rounds later
        assert f"round {now + 2}" in seen, seen
        os.kill(term.pid, signal.SIGTERM)
        assert term.wait(30) == 0
    finally:
        term.close()
    started = [int(p) for p in pids.read_text().split()]
    deadline = time.monotonic() + 10
    while pids_alive(started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pids_alive(started) == []


@pytest.mark.timeout(90)
def test_progress_shows_on_a_terminal_only(setup: tuple[Path, Path, dict[str, str]]) -> None:
    _, _, env = setup
    term = Terminal(["health"], env)
    try:
        assert term.wait(60) == 1  # one of the two is unavailable
        seen = term.seen.decode(errors="replace")
    finally:
        term.close()
    # The server takes about a second to start: long enough for the bar to be drawn.
    assert "Probing 2 servers" in seen and "/2" in seen, seen
    assert "unavailable" in seen
    term = Terminal(["health", "--json"], env)
    try:
        assert term.wait(60) == 1
        seen = term.seen.decode(errors="replace")
    finally:
        term.close()
    assert "Probing" not in seen and '"command": "health"' in seen
