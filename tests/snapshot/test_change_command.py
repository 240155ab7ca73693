"""ChangeCommand: a command run on a change, the change set on its stdin, and everything it
started stopped with it. Real processes; every one a test starts is stopped by pid."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from mcpctl import procs
from mcpctl.errors import UsageError
from mcpctl.snapshot.watch import ChangeCommand, CommandRun
from tests.conftest import alive

PY = sys.executable

# A child that leaves the command's session and group (setsid) and ignores SIGTERM, then
# sleeps; it writes its pid to argv[1] once it is out.
ESCAPER = (
    "import os, signal, sys, time\n"
    "os.setsid()\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "with open(sys.argv[1] + '.tmp', 'w') as f: f.write(str(os.getpid()))\n"
    "os.replace(sys.argv[1] + '.tmp', sys.argv[1])\n"
    "time.sleep(120)\n"
)
# The command: starts the escaper, waits until it is out, lingers a little (while its
# family is looked for), then exits at once, leaving it behind re-parented.
LEAVER = (
    "import os, subprocess, sys, time\n"
    "subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]])\n"
    "while not os.path.exists(sys.argv[2]): time.sleep(0.02)\n"
    "time.sleep(2)\n"
)
LINGERER = LEAVER.replace("time.sleep(2)", "time.sleep(120)")  # the same, that does not exit


def run(command: ChangeCommand, data: bytes = b"{}\n") -> CommandRun:
    return anyio.run(command.run, data)


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


@pytest.fixture
def pid_file(tmp_path: Path) -> Iterator[Path]:
    """Where a test's child writes its pid; that child is killed after the test."""
    path = tmp_path / "child.pid"
    yield path
    if path.exists():
        pid = int(path.read_text())
        stat = procs.read_stat(pid)
        if stat is not None and not stat.dead:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def test_the_data_is_on_its_stdin(tmp_path: Path) -> None:
    got = tmp_path / "got"
    script = f"import sys, pathlib; pathlib.Path({str(got)!r}).write_bytes(sys.stdin.buffer.read())"
    result = run(ChangeCommand([PY, "-c", script]), b'{"added": ["a"]}\n')
    assert result.ok and result.exit_code == 0 and result.error is None, result
    assert result.command == PY and result.seconds is not None and result.seconds >= 0
    assert got.read_bytes() == b'{"added": ["a"]}\n'


def test_a_failure_is_in_the_result_not_raised(tmp_path: Path) -> None:
    failed = run(ChangeCommand([PY, "-c", "raise SystemExit(3)"]))
    assert not failed.ok and failed.exit_code == 3
    assert failed.error == f"{PY} exited with 3"
    missing = run(ChangeCommand([str(tmp_path / "no-such-command")]))
    assert not missing.ok and missing.exit_code is None and missing.seconds is None
    assert missing.error is not None and missing.error.startswith("cannot run ")


def test_a_command_that_takes_too_long_is_stopped(pid_file: Path) -> None:
    # It ignores SIGTERM, and so does the setsid child it started: SIGKILL ends both.
    script = "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + LINGERER
    command = ChangeCommand([PY, "-c", script, ESCAPER, str(pid_file)], timeout=5.0, grace=0.2)
    result = run(command)
    assert not result.ok and result.exit_code is None
    assert result.error == f"{PY} did not finish within 5 s; stopped"
    assert result.leftovers >= 1
    assert wait_gone(int(pid_file.read_text())), "the command's child outlived the timeout"


def test_what_it_left_behind_is_stopped_when_it_exits(pid_file: Path) -> None:
    # The child left the command's session and was re-parented when the command exited:
    # nothing but what was seen of it earlier (pid and start time) ties it to the command.
    result = run(ChangeCommand([PY, "-c", LEAVER, ESCAPER, str(pid_file)], grace=0.2))
    assert result.ok, result
    assert result.leftovers == 1
    assert wait_gone(int(pid_file.read_text())), "the setsid child outlived its command"


def test_a_cancelled_run_stops_the_command_and_its_children(pid_file: Path) -> None:
    command = ChangeCommand([PY, "-c", LINGERER, ESCAPER, str(pid_file)], grace=0.2)

    async def go() -> None:
        with anyio.move_on_after(60) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(command.run, b"{}\n")
                while not pid_file.exists():  # the escaper is out: its own session
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
        assert not scope.cancelled_caught, "the escaper never started"

    anyio.run(go)
    assert wait_gone(int(pid_file.read_text())), "the setsid child outlived the cancellation"


@pytest.mark.parametrize(
    ("argv", "options", "message"),
    [
        ([], {}, "the command is empty"),
        (["true"], {"timeout": -1.0}, "timeout must be zero or more, not -1.0"),
        (["true"], {"grace": -1.5}, "grace must be zero or more, not -1.5"),
    ],
)
def test_what_cannot_run_is_refused(
    argv: list[str], options: dict[str, float], message: str
) -> None:
    with pytest.raises(UsageError) as refused:
        ChangeCommand(argv, **options)  # type: ignore[arg-type]
    assert refused.value.message == message


# --- what mutation testing found unpinned ----------------------------------------------------


def test_no_time_and_no_grace_are_allowed() -> None:
    command = ChangeCommand(["true"], timeout=0, grace=0)
    assert (command.timeout, command.grace) == (0, 0)
    assert ChangeCommand(["true"], timeout=None).timeout is None
    default = ChangeCommand(("true", "x"))
    assert default.argv == ["true", "x"]
    assert (default.timeout, default.grace, default.output) == (30.0, 1.0, None)


def test_its_output_goes_where_it_is_told(tmp_path: Path) -> None:
    out = tmp_path / "out"
    script = "import sys; print('to out'); print('to err', file=sys.stderr)"
    with out.open("w") as sink:
        result = run(ChangeCommand([PY, "-c", script], output=sink))
    assert result.ok, result
    assert sorted(out.read_text().splitlines()) == ["to err", "to out"]


def test_by_default_its_output_goes_to_stderr_or_nowhere(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    import io

    script = "import sys; print('said out'); print('said err', file=sys.stderr)"
    result = run(ChangeCommand([PY, "-c", script]))
    assert result.ok, result
    captured = capfd.readouterr()
    assert "said" not in captured.out and sorted(captured.err.splitlines()) == [
        "said err",
        "said out",
    ]
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # no file descriptor: /dev/null
    result = run(ChangeCommand([PY, "-c", script]))
    assert result.ok, result
    captured = capfd.readouterr()
    assert "said" not in captured.out + captured.err


def test_a_command_that_does_not_read_its_input_is_judged_by_its_exit_code() -> None:
    result = run(ChangeCommand([PY, "-c", "raise SystemExit(0)"]), b"x" * 4_000_000)
    assert result.ok and result.exit_code == 0, result


def test_what_cannot_start_says_why(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-command")
    result = run(ChangeCommand([missing]))
    assert result.error == f"cannot run {missing}: No such file or directory"
    assert result.command == missing and result.leftovers == 0


def test_the_time_it_took_is_in_seconds_to_the_millisecond() -> None:
    started = time.monotonic()
    result = run(ChangeCommand([PY, "-c", "import time; time.sleep(0.3)"]))
    took = time.monotonic() - started
    assert result.ok, result
    assert isinstance(result.seconds, float) and result.seconds == round(result.seconds, 3)
    assert 0.3 <= result.seconds <= took + 0.001


# Leaves a file once it got SIGTERM, and another when done cleaning up 2 s later.
CLEANER = (
    "import pathlib, signal, sys, time\n"
    "where = pathlib.Path(sys.argv[1])\n"
    "def cleanup(*_):\n"
    "    (where / 'term').touch()\n"
    "    time.sleep(2)\n"
    "    (where / 'done').touch()\n"
    "    sys.exit(0)\n"
    "signal.signal(signal.SIGTERM, cleanup)\n"
    "(where / 'ready').touch()\n"
    "time.sleep(120)\n"
)


def test_a_stopped_command_gets_its_grace_to_clean_up(tmp_path: Path) -> None:
    command = ChangeCommand([PY, "-c", CLEANER, str(tmp_path)], grace=30.0)

    async def go() -> None:
        with anyio.move_on_after(60) as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(command.run, b"{}\n")
                while not (tmp_path / "ready").exists():
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()
        assert not scope.cancelled_caught, "the command never got ready"

    anyio.run(go)
    assert (tmp_path / "term").exists(), "it was not sent SIGTERM first"
    assert (tmp_path / "done").exists(), "it was killed before its grace was over"
