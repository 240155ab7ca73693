"""mcpctl watch as a real program: JSON Lines, --render, --exec, signals, a missing file."""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MCPCTL, Cli, alive, write_config

PY = sys.executable
A = {"command": "echo"}
B = {"url": "http://127.0.0.1:9/mcp"}
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def save(path: Path, data: dict[str, Any] | str) -> None:
    """Save as editors do: a temporary file renamed over the config."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    os.replace(tmp, path)


def wait_for(check: Any, seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"not within {seconds} s")


def _default_signals() -> None:
    # A shell without job control starts background jobs with SIGINT ignored, and mcpctl
    # leaves ignored signals ignored: give it the defaults a terminal would.
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_DFL)


class Watching:
    """``mcpctl watch`` running, its output read line by line with timeouts."""

    def __init__(self, tmp_path: Path, config: Path, *args: str) -> None:
        env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home")}
        self.proc = subprocess.Popen(
            [*MCPCTL, "--config", str(config), "watch", "--debounce", "0.2", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            cwd=tmp_path, preexec_fn=_default_signals,  # noqa: PLW1509
        )  # fmt: skip
        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        self.ended = {"stdout": threading.Event(), "stderr": threading.Event()}
        for stream, into, ended in ((self.proc.stdout, self.out, self.ended["stdout"]),
                                    (self.proc.stderr, self.err, self.ended["stderr"])):  # fmt: skip
            threading.Thread(target=self._pump, args=(stream, into, ended), daemon=True).start()

    @staticmethod
    def _pump(stream: Any, into: queue.Queue[str], ended: threading.Event) -> None:
        for line in stream:
            into.put(line.rstrip("\n"))
        ended.set()

    def _read_to_the_end(self, which: str, timeout: float = 30.0) -> None:
        """Wait until the reader thread of ``which`` has read it to its end (mcpctl ended)."""
        if not self.ended[which].wait(timeout):
            raise AssertionError(f"{which} still open {timeout} s after it was read to the end")

    def line(self, timeout: float = 30.0) -> str:
        try:
            return self.out.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout} s; stderr: {self.stderr}") from None

    def event(self, kind: str = "change", timeout: float = 30.0) -> dict[str, Any]:
        while True:
            data: dict[str, Any] = json.loads(self.line(timeout))
            if data["event"] == kind:
                return data

    def err_line(self, containing: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.err.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            self.stderr.append(line)
            if containing in line:
                return line
        raise AssertionError(f"no {containing!r} on stderr: {self.stderr}")

    def ready(self) -> None:
        self.err_line("watching ")

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)

    def all_stderr(self) -> str:
        """All of stderr, once mcpctl has ended."""
        self._read_to_the_end("stderr")
        while not self.err.empty():
            self.stderr.append(self.err.get())
        return "\n".join(self.stderr)

    def rest(self) -> list[str]:
        """The lines of stdout not read yet, once mcpctl has ended."""
        self._read_to_the_end("stdout")
        lines = []
        while not self.out.empty():
            lines.append(self.out.get())
        return lines


@pytest.fixture
def watch(tmp_path: Path) -> Iterator[Any]:
    started: list[Watching] = []

    def start(config: Path, *args: str) -> Watching:
        started.append(Watching(tmp_path, config, *args))
        return started[-1]

    yield start
    for w in started:
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait(timeout=10)


def test_json_lines_one_object_per_change_set(tmp_path: Path, watch: Any) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    w = watch(cfg, "--json")
    w.ready()
    save(cfg, {"a": {**A, "args": ["x"]}, "b": B})
    change = w.event()
    assert change["ok"] is True and change["problem"] is None
    assert change["added"] == ["b"] and change["removed"] == []
    assert change["changed"] == [{"name": "a", "fields": ["args"]}]
    assert change["servers"] == ["a", "b"] and change["file"] == str(cfg)
    save(cfg, "{oops")
    problem = w.event()
    assert problem["ok"] is False and "invalid JSON" in problem["problem"]
    save(cfg, {"b": B})
    assert w.event()["removed"] == ["a"]
    assert w.stop() == 0
    assert w.rest() == []  # nothing after the end: every line was a change set


def test_human_lines(tmp_path: Path, watch: Any) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A, "gone": A})
    w = watch(cfg)
    w.ready()
    save(cfg, {"a": {**A, "env": {"X": "1"}, "args": ["y"]}, "b": B})
    lines = [w.line(), w.line(), w.line()]
    stamps = {line.split(" ", 1)[0] for line in lines}
    assert len(stamps) == 1 and "T" in stamps.pop()
    assert [line.split(" ", 1)[1] for line in lines] == ["+ b", "- gone", "~ a (args, env)"]
    save(cfg, "{")
    assert "invalid JSON" in w.err_line("warning:")
    assert w.stop(signal.SIGINT) == 0


def test_render_rewrites_the_file_on_each_change(tmp_path: Path, watch: Any) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    out = tmp_path / "proxy.json"
    w = watch(cfg, "--render", "mcp-proxy", "-o", str(out), "--json")
    assert w.event("render")["ok"] is True  # at start: the file is brought up to date
    assert list(json.loads(out.read_text())["mcpServers"]) == ["a"]
    save(cfg, {"a": A, "b": B})
    assert w.event()["added"] == ["b"]
    rendered = w.event("render")
    assert rendered["ok"] is True and rendered["changed"] is True
    assert list(json.loads(out.read_text())["mcpServers"]) == ["a", "b"]
    # A failing render is reported, and the watch goes on.
    out.unlink()
    out.mkdir()
    save(cfg, {"b": B})
    w.event()
    failed = w.event("render")
    assert failed["ok"] is False and failed["error"]
    out.rmdir()
    save(cfg, {"c": A})
    w.event()
    assert w.event("render")["ok"] is True
    assert list(json.loads(out.read_text())["mcpServers"]) == ["c"]
    assert w.stop() == 0


def test_exec_gets_the_change_set_on_stdin(tmp_path: Path, watch: Any) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    got = tmp_path / "got"
    script = f"import sys, pathlib; pathlib.Path({str(got)!r}).write_text(sys.stdin.read())"
    w = watch(cfg, "--exec", shlex.join([PY, "-c", script]), "--json")
    w.ready()
    save(cfg, {"a": A, "b": B})
    change = w.event()
    ran = w.event("exec")
    assert ran["ok"] is True and ran["exit_code"] == 0, ran
    assert json.loads(got.read_text()) == change
    assert w.stop() == 0


def test_a_failing_or_hanging_exec_is_reported_and_the_watch_goes_on(
    tmp_path: Path, watch: Any
) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    pid_file = tmp_path / "pid"
    script = (
        "import os, sys, time, json, pathlib; d = json.load(sys.stdin); "
        f"pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid())); "
        "time.sleep(60) if 'slow' in d['added'] else sys.exit(3)"
    )
    w = watch(cfg, "--exec", shlex.join([PY, "-c", script]), "--exec-timeout", "0.5", "--json")
    w.ready()
    save(cfg, {"a": A, "b": B})
    w.event()
    failed = w.event("exec")
    assert (failed["ok"], failed["exit_code"]) == (False, 3) and "exited with 3" in failed["error"]
    save(cfg, {"a": A, "b": B, "slow": A})
    w.event()
    timed_out = w.event("exec")
    assert timed_out["ok"] is False and "did not finish within 0.5 s" in timed_out["error"]
    assert not alive(int(pid_file.read_text()))
    save(cfg, {"a": A})
    assert w.event()["removed"] == ["b", "slow"]
    assert w.stop() == 0


def test_an_exec_that_cannot_start_is_reported(tmp_path: Path, watch: Any) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    w = watch(cfg, "--exec", str(tmp_path / "no-such-program"))
    w.ready()
    save(cfg, {"a": A, "b": B})
    assert w.line().endswith(" + b")
    assert "cannot run" in w.err_line("--exec")
    save(cfg, {"b": B})
    assert w.line().endswith(" - a")  # it goes on
    assert w.stop() == 0


def test_changes_during_a_slow_exec_come_after_it(tmp_path: Path, watch: Any) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    log, release = tmp_path / "log", tmp_path / "release"
    # Each run lasts until the test releases it.
    script = (
        "import os, sys, time, json; d = json.load(sys.stdin); "
        f"f = open({str(log)!r}, 'a'); f.write(f'start {{time.monotonic()}} {{d[\"added\"]}}\\n'); "
        f"f.flush()\nwhile not os.path.exists({str(release)!r}): time.sleep(0.02)\n"
        "f.write(f'end {time.monotonic()}\\n')"
    )
    w = watch(cfg, "--exec", shlex.join([PY, "-c", script]), "--json")
    w.ready()
    save(cfg, {"a": A, "b": B})
    assert w.event()["added"] == ["b"]
    wait_for(log.exists)
    save(cfg, {"a": A, "b": B, "c": A})  # while the first run is busy
    save(cfg, {"a": A, "b": B, "c": A, "d": A})
    release.touch()
    assert w.event("exec")["ok"] is True
    second = w.event()
    assert second["added"] == ["c", "d"]
    assert w.event("exec")["ok"] is True
    runs = log.read_text().split("\n")[:-1]
    assert [r.split()[0] for r in runs] == ["start", "end", "start", "end"]  # never at once
    assert float(runs[1].split()[1]) <= float(runs[2].split()[1])
    assert w.stop() == 0


def test_a_reader_that_goes_away_ends_it(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": A})
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [*MCPCTL, "--config", str(cfg), "watch", "--json", "--debounce", "0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stderr is not None and proc.stdout is not None
        assert proc.stderr.readline().startswith("watching ")
        save(cfg, {"a": A, "b": B})
        assert json.loads(proc.stdout.readline())["added"] == ["b"]
        proc.stdout.close()  # as `mcpctl watch --json | head -1` does
        save(cfg, {"a": A})
        assert proc.wait(timeout=5) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_a_missing_config_is_waited_for(tmp_path: Path, watch: Any) -> None:
    cfg = tmp_path / "external-mcps.json"
    w = watch(cfg)
    w.ready()
    assert "does not exist yet; waiting for it" in w.err_line("warning:")
    save(cfg, {"a": A})
    assert w.line().endswith(" + a")
    cfg.unlink()
    assert "was removed; waiting for it to come back" in w.err_line("warning:")
    assert w.stop() == 0


def test_usage_errors(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"a": A})
    r = cli("watch", "--render", "mcp-proxy")
    assert r.exit_code == 2 and "--render TARGET and -o FILE go together" in r.stderr
    r = cli("watch", "--render", "no-such-target", "-o", "x.json")
    assert r.exit_code == 2 and "no render target" in r.stderr
    r = cli("watch", "--exec", "'unbalanced")
    assert r.exit_code == 2 and "cannot be split" in r.stderr
    r = cli("watch", "--debounce", "soon")
    assert r.exit_code == 2 and "not a duration" in r.stderr
    r = cli("watch", "--render", "mcp-proxy", "-o", str(config_path))
    assert r.exit_code == 2 and "the config file itself" in r.stderr
