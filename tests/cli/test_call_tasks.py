"""mcpctl call against a server that runs calls as tasks (tests/servers/tasks_server.py):
waited for, --no-wait, failed, asking for input, and interrupted by Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import MCPCTL, SERVERS, Cli, alive, write_config

PY = sys.executable


class Logged:
    """The server's entry writes what it received (and its pid) to files in tmp_path."""

    def __init__(self, tmp_path: Path, config_path: Path) -> None:
        self.log = tmp_path / "methods.log"
        self.pid_file = tmp_path / "server.pid"
        env = {"TASKS_SERVER_LOG": str(self.log), "TASKS_SERVER_PID": str(self.pid_file)}
        entry = {"command": PY, "args": [str(SERVERS / "tasks_server.py")], "env": env}
        self.config = write_config(config_path, {"jobs": entry})

    def methods(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []


@pytest.fixture
def jobs(tmp_path: Path, config_path: Path) -> Logged:
    return Logged(tmp_path, config_path)


def test_call_waits_for_the_task(cli: Cli, jobs: Logged) -> None:
    r = cli("call", "jobs", "slow_job", "--arg", "polls=2", "--json")
    assert r.exit_code == 0, r.stdout
    data = r.json["data"]
    assert (data["text"], data["is_error"], data["task"]) == ("done after 2 polls", False, None)
    assert jobs.methods()[-3:] == ["tools/call", "tasks/get", "tasks/get"]
    r = cli("call", "jobs", "slow_job")
    assert (r.exit_code, r.stdout) == (0, "done after 2 polls\n")


def test_no_wait_prints_the_task(cli: Cli, jobs: Logged) -> None:
    r = cli("call", "jobs", "slow_job", "--no-wait")
    assert (r.exit_code, r.stdout) == (0, "task task-1: working (started)\n"), r.stderr
    r = cli("call", "jobs", "slow_job", "--no-wait", "--json")
    assert r.exit_code == 0 and r.json["ok"] is True
    task = r.json["data"]["task"]
    assert task["taskId"] == "task-1" and task["status"] == "working"
    assert task["pollIntervalMs"] == 100
    assert "tasks/get" not in jobs.methods()


def test_a_failed_task_exits_3_with_the_server_message(cli: Cli, jobs: Logged) -> None:
    r = cli("call", "jobs", "failing_job")
    assert r.exit_code == 3 and r.stdout == ""
    assert "failing_job failed as task task-1: the job broke: disk full" in r.stderr
    assert "\x1b" not in r.stderr and "\\x1b[31mretry later (error -32603)" in r.stderr
    r = cli("call", "jobs", "failing_job", "--json")
    assert r.exit_code == 3
    (error,) = r.json["errors"]
    assert error["code"] == "probe_failed" and error["reason"] == "mcp_error"


def test_a_task_asking_for_input_is_answered_by_input(cli: Cli, jobs: Logged) -> None:
    r = cli("call", "jobs", "asking_job", "--input", "environment=production")
    assert (r.exit_code, r.stdout) == (0, "deployed to production\n"), r.stderr
    assert "tasks/update" in jobs.methods()


def test_a_task_asking_for_input_nobody_gives_exits_2(cli: Cli, jobs: Logged) -> None:
    r = cli("call", "jobs", "asking_job", "--json")
    assert r.exit_code == 2
    (error,) = r.json["errors"]
    assert error["code"] == "input_required"
    (asked,) = error["requests"]
    assert asked["message"] == "Deploy to which environment?"
    assert [f["name"] for f in asked["fields"]] == ["environment"]
    assert "--input environment=VALUE" in error["hint"]
    assert jobs.methods()[-1] == "tasks/cancel"
    r = cli("call", "jobs", "asking_job")
    assert r.exit_code == 2 and "--input environment=VALUE" in r.stderr


def test_ctrl_c_while_polling_cancels_the_task(tmp_path: Path, jobs: Logged) -> None:
    def terminal_signals() -> None:
        # A shell without job control starts background jobs with SIGINT ignored.
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [*MCPCTL, "--config", str(jobs.config), "call", "jobs", "slow_job", "--arg", "seconds=120"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=terminal_signals,  # noqa: PLW1509
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while "tasks/get" not in jobs.methods():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "mcpctl never polled the task"
            time.sleep(0.02)
        server = int(jobs.pid_file.read_text())
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert (out, err.strip().splitlines()[-1]) == ("", "interrupted by SIGINT")
    assert jobs.methods()[-1] == "tasks/cancel"
    deadline = time.monotonic() + 10
    while alive(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(server), "the server outlived mcpctl"
