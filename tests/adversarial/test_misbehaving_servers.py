"""Servers that go wrong on purpose: mcpctl ends within its timeout, says what went wrong
(a classified error code, never a traceback), and leaves none of their processes behind.

The servers (tests/servers/misbehave.py) hang before the handshake, crash on start (exit
code, SIGSEGV), write garbage on stdout, flood stdout with 100 MB in one endless line, flood
stderr, ignore SIGTERM, and start children that stay in their group, leave it (setsid) or
are orphaned by a double fork.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.probe import probe
from tests.adversarial.test_signals import wait_gone
from tests.conftest import MCPCTL, SERVERS, alive, write_config

PY = sys.executable
MISBEHAVE = str(SERVERS / "misbehave.py")


def misbehave(mode: str, *extra: str, timeout: int = 5000) -> ServerEntry:
    return ServerEntry(command=PY, args=(MISBEHAVE, mode, *extra), timeout=timeout)


def run(coro_fn: Any) -> Any:
    return anyio.run(coro_fn)


# --- the probe, in this process ----------------------------------------------------------


def test_server_that_exits_at_once_shows_its_stderr() -> None:
    r = run(lambda: probe("x", misbehave("exit")))
    assert r.error is not None and r.error.code == "server_exited"
    assert "code 3" in r.error.message
    assert r.stderr[-2:] == [
        "fatal: configuration file not found: /etc/example.toml",
        "hint: set EXAMPLE_CONFIG",
    ]


def test_server_that_hangs_ends_within_its_timeout_plus_a_second() -> None:
    start = time.monotonic()
    r = run(lambda: probe("x", misbehave("hang", timeout=1500)))
    elapsed = time.monotonic() - start
    assert r.error is not None and r.error.code == "timeout"
    assert elapsed < 1.5 + 1.0, elapsed


def test_garbage_on_stdout_is_a_protocol_error() -> None:
    r = run(lambda: probe("x", misbehave("garbage", timeout=2000)))
    assert r.error is not None and r.error.code == "protocol_error"
    assert "not JSON-RPC" in r.error.message and "Welcome" in r.error.message


def test_stderr_flood_neither_blocks_nor_bloats() -> None:
    r = run(lambda: probe("x", misbehave("flood", timeout=30000)))
    assert r.healthy, r.error
    assert r.stderr == []  # only failures carry stderr


def test_no_process_is_left_alive_after_a_probe(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    r = run(lambda: probe("x", misbehave("spawn", str(pid_file), timeout=30000)))
    assert r.healthy, r.error
    child = int(pid_file.read_text().split()[-1])  # "SERVER_PID CHILD_PID"
    deadline = time.monotonic() + 3
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the server's child outlived the probe"


# --- the mcpctl program over all of them at once ------------------------------------------

TIMEOUT = 3  # seconds: --timeout of the runs below
SLACK = 12  # seconds beyond it for start-up, the stops (SIGTERM, then SIGKILL) and a busy CI

# server -> (misbehave.py arguments, the error code mcpctl must classify it as)
SERVERS_GONE_WRONG: dict[str, tuple[list[str], str]] = {
    "hang": (["hang", "{pids}"], "timeout"),
    "exit": (["exit"], "server_exited"),
    "segv": (["crash"], "server_exited"),
    "garbage": (["garbage"], "protocol_error"),
    "flood": (["stdout-flood", "{pids}"], "protocol_error"),
    "stubborn": (["stubborn", "{pids}"], "timeout"),
    "child": (["spawn", "{pids}", "hang"], "timeout"),
    "setsid": (["setsid", "{pids}", "hang"], "timeout"),
    "daemon": (["daemon", "{pids}", "hang"], "timeout"),
}


def gone_wrong_config(tmp_path: Path) -> tuple[Path, list[Path]]:
    config: dict[str, Any] = {}
    pid_files: list[Path] = []
    for name, (args, _) in SERVERS_GONE_WRONG.items():
        pids = tmp_path / f"{name}.pids"
        if "{pids}" in args:
            pid_files.append(pids)
        config[name] = {"command": PY, "args": [MISBEHAVE, *(a.format(pids=pids) for a in args)]}
    return write_config(tmp_path / "external-mcps.json", config), pid_files


def read_pids(files: list[Path]) -> list[int]:
    return [int(p) for f in files if f.exists() for p in f.read_text().split()]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["health", "tools"])
def test_every_fault_is_classified_within_the_timeout_and_nothing_is_left(
    tmp_path: Path, command: str
) -> None:
    path, pid_files = gone_wrong_config(tmp_path)
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home")}
    started = time.monotonic()
    done = subprocess.run(
        [*MCPCTL, "--config", str(path), command, "--json", "--timeout", f"{TIMEOUT}s"],
        capture_output=True, text=True, env=env, timeout=TIMEOUT + SLACK + 30,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert elapsed < TIMEOUT + SLACK, elapsed
    assert done.returncode == 1, done.stderr  # 1: the servers checked are not OK
    assert "Traceback" not in done.stderr
    envelope = json.loads(done.stdout)
    if command == "health":
        errors = {m["name"]: m["error"] for m in envelope["data"]["mcps"]}
    else:
        assert envelope["data"]["tools"] == []
        errors = {f["name"]: f["error"] for f in envelope["data"]["failed"]}
    assert {name: e["code"] for name, e in errors.items()} == {
        name: code for name, (_, code) in SERVERS_GONE_WRONG.items()
    }
    assert all(e["message"] and e["hint"] for e in errors.values()), errors
    assert "exited on signal 11" in errors["segv"]["message"]
    assert "not JSON-RPC" in errors["flood"]["message"] and len(done.stdout) < 100_000
    pids = read_pids(pid_files)
    assert len(pids) == 3 + 2 * 3, pid_files  # each wrote its pid(s) before hanging
    assert wait_gone(pids, 5) == [], "a server or its descendant outlived mcpctl"


def test_a_server_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    r = run(lambda: probe("x", misbehave("stubborn", str(pid_file), timeout=1000)))
    assert r.error is not None and r.error.code == "timeout"
    assert time.monotonic() - started < 1 + 3, "SIGKILL follows SIGTERM within its grace"
    assert wait_gone(read_pids([pid_file]), 2) == []
