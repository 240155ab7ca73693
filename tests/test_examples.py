"""The programs in examples/ run as they are: examples/daemon.py reports at start-up, prints
each config change, and ends on its own, on SIGTERM and on Ctrl-C; docs/daemon.md shows it
as it is."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.test_signals import wait_gone
from tests.conftest import ROOT, SERVERS, write_config

DAEMON = ROOT / "examples" / "daemon.py"
PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")], "description": "The basic server"}


class Daemon:
    """examples/daemon.py as a real process; its stdout read line by line as it comes."""

    def __init__(self, tmp_path: Path, config: dict[str, Any], *args: str) -> None:
        self.config = write_config(tmp_path / "external-mcps.json", config)
        self.snapshot = tmp_path / "last-known-mcps.json"
        env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}

        def defaults() -> None:  # as from a terminal, whatever the test runner ignores
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)

        self.proc = subprocess.Popen(
            [PY, str(DAEMON), "--config", str(self.config), "--snapshot", str(self.snapshot),
             *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
            preexec_fn=defaults,  # noqa: PLW1509
        )  # fmt: skip
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: str, seconds: float = 60.0) -> str:
        """The first line (from now on) that matches ``pattern``."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"no line like {pattern!r} in {seconds} s: {self.lines}"
                ) from None
            if line is None:
                raise AssertionError(f"ended without {pattern!r}: {self.lines} {self.stderr()}")
            self.lines.append(line)
            if re.search(pattern, line):
                return line

    def finish(self, seconds: float = 30.0) -> tuple[int, str]:
        """Wait for it to end on its own: its exit code and everything it printed."""
        self.proc.wait(timeout=seconds)
        while (line := self._queue.get(timeout=10)) is not None:
            self.lines.append(line)
        return self.proc.returncode, "\n".join(self.lines) + "\n"

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Any]:
    started: list[Daemon] = []

    def start(config: dict[str, Any], *args: str) -> Daemon:
        d = Daemon(tmp_path, config, *args)
        started.append(d)
        return d

    yield start
    for d in started:
        d.close()


def test_start_up_report_then_a_change(daemon: Any) -> None:
    d = daemon({"basic": BASIC}, "--max-changes", "1", "--timeout", "90")
    d.wait_for(r"^watching ")
    data = json.loads(d.config.read_text())
    data["basic"]["description"] = "Still the basic server"
    data["gone"] = {"command": "no-such-command-xyz"}
    write_config(d.config, data)
    code, out = d.finish()
    assert code == 0, d.stderr()
    assert out.startswith("MCP servers: 1 (0 internal, 1 external), 1 healthy, 0 failed\n")
    assert re.search(
        r"^- basic \(10 tools, [0-9,]+ tokens\): The basic server\n"
        r"  add, audio, echo, fail, headers, \+5 more\n",
        out,
        re.MULTILINE,
    ), out
    assert "First snapshot: nothing to compare with.\n" in out
    assert re.search(r"\n\S+ 2 change\(s\), 2 servers:\n", out), out
    assert "  + gone: added\n  ~ basic: config changed (description)\n" in out
    assert out.endswith("stopped\n")
    saved = json.loads(d.snapshot.read_text())
    assert [m["name"] for m in saved["mcps"]] == ["basic"]  # the state at start-up


def test_a_server_nobody_approved_is_not_started(
    daemon: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCPCTL_TRUST")  # as a user runs it in a project nobody approved
    monkeypatch.delenv("CI", raising=False)
    ran = tmp_path / "ran"
    d = daemon({"hostile": {"command": "sh", "args": ["-c", f"touch {ran}"]}}, "--timeout", "0.5")
    code, out = d.finish()
    assert code == 0, d.stderr()
    assert "warning: " in out and "is not trusted: 1 server waits for approval (hostile)" in out
    assert out.startswith("warning: ") and "MCP servers: 0" in out
    assert not ran.exists()


def test_the_next_start_reports_what_changed_and_ends_on_its_own(
    daemon: Any, tmp_path: Path
) -> None:
    first = daemon({"basic": BASIC}, "--timeout", "0.5", "--no-probe")
    code, out = first.finish()
    assert code == 0 and "not probed" in out and out.endswith("stopped\n")
    timestamp = json.loads(first.snapshot.read_text())["timestamp"]
    started = time.monotonic()
    second = daemon({"basic": BASIC, "gone": {"command": "no-such-command-xyz"}}, "--timeout", "3")
    code, out = second.finish()
    assert code == 0, second.stderr()
    assert time.monotonic() - started < 30
    assert "MCP servers: 2 (0 internal, 2 external), 1 healthy, 1 failed\n" in out
    assert f"Changes since {timestamp}:\n+ gone: added\n" in out
    assert "Failed:\n- gone: command_not_found\n" in out
    assert "watching " in out and out.endswith("stopped\n")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_while_watching_ends_it_cleanly(daemon: Any, sig: signal.Signals) -> None:
    d = daemon({"basic": BASIC})
    d.wait_for(r"^watching ")
    started = time.monotonic()
    d.proc.send_signal(sig)
    code, out = d.finish(seconds=15)
    assert code == 0, d.stderr()
    assert time.monotonic() - started < 5
    assert out.endswith(f"stopping ({sig.name})\nstopped\n")
    assert "Traceback" not in d.stderr()


def test_a_signal_while_probing_stops_the_servers(daemon: Any, tmp_path: Path) -> None:
    pid_file = tmp_path / "hang.pid"
    hang = {"command": PY, "args": [str(SERVERS / "misbehave.py"), "hang", str(pid_file)],
            "timeout": 120_000}  # fmt: skip
    d = daemon({"hang": hang})
    deadline = time.monotonic() + 60
    while not pid_file.exists():
        assert d.proc.poll() is None and time.monotonic() < deadline, d.stderr()
        time.sleep(0.05)
    pid = int(pid_file.read_text().split()[0])
    d.proc.send_signal(signal.SIGTERM)
    code, out = d.finish(seconds=30)
    assert code == 0, d.stderr()
    assert out == "stopping (SIGTERM)\nstopped\n"  # no report: it was stopped before one
    assert wait_gone([pid]) == []
    assert not d.snapshot.exists()


def test_the_docs_show_the_example_as_it_is() -> None:
    docs = (ROOT / "docs" / "daemon.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", docs, flags=re.DOTALL)
    assert DAEMON.read_text(encoding="utf-8") in blocks
