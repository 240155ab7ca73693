"""The README's first command, past the install: examples/demo.py runs validate, list, health
and tools on examples/demo.json, offline, finds both servers healthy with their tools, and
leaves nothing running however it ends."""

from __future__ import annotations

import queue
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpctl.config.validate import validate_config
from tests.adversarial.test_signals import wait_gone
from tests.conftest import ROOT

DEMO = ROOT / "examples" / "demo.py"
SERVER_ARG = "examples/servers/notes.py"
INSTALL = "python3 -m venv .venv && .venv/bin/pip install . && "
TOOLS = ("add_note", "list_notes", "now", "roll_dice")


def readme_demo_command() -> list[str]:
    """The README's first command without the install, run with this Python (the venv's)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.DOTALL)[0]
    assert first.startswith(INSTALL), first
    argv = shlex.split(first.removeprefix(INSTALL))
    assert argv[0] == ".venv/bin/python", argv
    return [sys.executable, *argv[1:]]


def notes_servers(since: set[int] | None = None) -> set[int]:
    """The pids of the example servers this Python runs now (started after ``since``)."""
    import psutil

    found: set[int] = set()
    for process in psutil.process_iter():
        try:
            text = process.cmdline()
        except psutil.Error:
            continue  # ended meanwhile, or not ours to read
        if text and text[0] == sys.executable and any(a.endswith(SERVER_ARG) for a in text):
            found.add(process.pid)
    return found - (since or set())


def server_of(out: str) -> tuple[int, int]:
    """The port and pid of the HTTP example server, as the demo announced it."""
    m = re.search(r"example server: http://127\.0\.0\.1:(\d+)/mcp \(pid (\d+)\)", out)
    assert m, out
    return int(m.group(1)), int(m.group(2))


def assert_nothing_left(out: str, before: set[int]) -> None:
    port, pid = server_of(out)
    assert wait_gone([pid]) == [], f"the HTTP example server {pid} still runs"
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    deadline = time.monotonic() + 10
    while (left := notes_servers(before)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == set(), f"example servers still running: {left}"


def test_the_demo_config_is_valid_without_any_network() -> None:
    report = validate_config(ROOT / "examples" / "demo.json")
    assert report.ok and report.servers == 2, report.problems
    text = (ROOT / "examples" / "demo.json").read_text(encoding="utf-8")
    assert "uvx" not in text and "npx" not in text and "https://" not in text


@pytest.mark.parametrize("where", ["root", "elsewhere"])
def test_the_readme_first_command_shows_healthy_servers_and_their_tools(
    where: str, tmp_path: Path
) -> None:
    before = notes_servers()
    argv = readme_demo_command()
    if where == "elsewhere":  # from another folder, by the demo's full path
        argv = [argv[0], str(DEMO)]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT if where == "root" else tmp_path,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert time.monotonic() - started < 60
    for command in ("validate", "list", "health", "tools --prefix underscore"):
        assert f"\n$ mcpctl --config examples/demo.json {command}\n" in out
    assert "examples/demo.json: valid (2 servers)\n" in out
    for server, transport in (("notes", "stdio"), ("remote", "streamable-http")):
        row = rf"^{server}\s.*\b{transport}\s+healthy\b"
        assert re.search(row, out, re.MULTILINE), out
        for tool in TOOLS:  # the catalog a host sees: each tool under its server's prefix
            assert re.search(rf"^mcp_{server}_{tool}\s+{server}\s", out, re.MULTILINE), out
    # Real calls, printed as a host shows them: the tool's text.
    assert "\nnote 1 kept\n" in out
    assert "list_notes\nmcpctl works offline\n" in out
    assert out.endswith("the example server is stopped; all done\n")
    assert "Traceback" not in done.stderr
    assert_nothing_left(out, before)


class Demo:
    """examples/demo.py --serve as a real process; its stdout read line by line."""

    def __init__(self) -> None:
        self.before = notes_servers()  # before it starts any
        self.proc = subprocess.Popen(
            [sys.executable, str(DEMO), "--serve"], cwd=ROOT, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, text: str, seconds: float = 60.0) -> None:
        deadline = time.monotonic() + seconds
        while not self.lines or text not in self.lines[-1]:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {text!r} in {seconds} s: {self.lines}") from None
            assert line is not None, f"ended without {text!r}: {self.lines}"
            self.lines.append(line)

    def finish(self, seconds: float = 30.0) -> tuple[int, str, str]:
        self.proc.wait(timeout=seconds)
        while (line := self._queue.get(timeout=10)) is not None:
            self.lines.append(line)
        assert self.proc.stderr is not None
        return self.proc.returncode, "".join(self.lines), self.proc.stderr.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = Demo()
    yield d
    d.close()


def test_ctrl_c_stops_the_example_server_it_serves(demo: Demo) -> None:
    demo.wait_for("The example server stays up until Ctrl-C")
    assert notes_servers(demo.before) == {server_of("".join(demo.lines))[1]}  # only it runs
    demo.proc.send_signal(signal.SIGINT)
    code, out, err = demo.finish()
    assert code == 128 + signal.SIGINT, out + err
    assert out.endswith("stopped (SIGINT); the example server is stopped too\n")
    assert "Traceback" not in err
    assert_nothing_left(out, demo.before)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_during_a_probe_leaves_nothing_running(demo: Demo, sig: signal.Signals) -> None:
    demo.wait_for("$ mcpctl --config examples/demo.json health")
    _, remote = server_of("".join(demo.lines))
    deadline = time.monotonic() + 60
    while not notes_servers(demo.before) - {remote}:  # the stdio server health probes
        assert time.monotonic() < deadline and demo.proc.poll() is None, "health started none"
        time.sleep(0.02)
    demo.proc.send_signal(sig)
    code, out, err = demo.finish()
    assert code == 128 + sig, out + err
    assert out.endswith(f"stopped ({sig.name}); the example server is stopped too\n")
    assert "Traceback" not in err
    assert_nothing_left(out, demo.before)
