"""Tool calls run as tasks in the handshake era (MCP 2025-11-25; tests/servers/legacy_tasks.py):
a tool that requires a task is called as one and polled to its result, one that allows it is a
task only when not waited for, a failed task fails the call with the server's message, a task
that asks is answered through tasks/result, one given up on is cancelled -- and a server that
offers no tasks is never asked for one."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import InputRequiredError, ProbeFailed
from mcpctl.probe import call_tool, probe
from mcpctl.probe.inputrequests import answers_from
from mcpctl.probe.legacytasks import REQUIRED_HINT
from tests.conftest import SERVERS

DEADLINE = 60  # seconds for a whole test; the server answers in milliseconds


class Server:
    """legacy_tasks.py as a stdio entry, and the methods it received."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.log = tmp_path / "methods.log"
        script = str(SERVERS / "legacy_tasks.py")
        self.entry = ServerEntry(
            command=sys.executable, args=(script, *args), env={"LEGACY_TASKS_LOG": str(self.log)}
        )

    def methods(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def after_call(self) -> list[str]:
        """What came after the (last) tools/call."""
        methods = self.methods()
        return methods[len(methods) - methods[::-1].index("tools/call") :]


@pytest.fixture
def server(tmp_path: Path) -> Server:
    return Server(tmp_path)


def run(test: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await test()

    return anyio.run(bounded)


def test_the_listing_says_which_tools_run_as_tasks(server: Server) -> None:
    result = run(lambda: probe("t", server.entry))
    assert result.error is None and result.era is not None and result.era.name == "legacy"
    support = {t.name: t.task_support for t in result.tools}
    assert support == {"build_report": "required", "slow_report": "required",
                       "failing_report": "required", "asking_report": "required",
                       "maybe_report": "optional", "echo": None}  # fmt: skip
    assert result.tools[0].to_dict()["task_support"] == "required"


def test_a_tool_that_requires_a_task_is_called_as_one(server: Server) -> None:
    seen: list[str] = []
    res = run(
        lambda: call_tool("t", server.entry, "build_report", {"polls": 3}, on_status=seen.append)
    )
    assert (res.is_error, res.text, res.task) == (False, "report ready after 3 polls", None)
    assert seen == ["working: started", "working: step 1 of 3", "working: step 2 of 3"]
    assert server.after_call() == ["tasks/get"] * 3 + ["tasks/result"]


def test_without_waiting_the_task_is_the_answer_in_the_stateless_shape(server: Server) -> None:
    res = run(lambda: call_tool("t", server.entry, "build_report", {}, wait=False))
    assert res.task is not None and not res.is_error
    assert res.task["taskId"] == "task-1" and res.task["status"] == "working"
    assert res.task["pollIntervalMs"] == 100 and res.task["ttlMs"] == 60000
    assert res.text == "task task-1 is working"
    assert server.after_call() == []  # never polled, never cancelled


def test_an_optional_task_is_asked_for_only_when_not_waited_for(server: Server) -> None:
    res = run(lambda: call_tool("t", server.entry, "maybe_report"))
    assert (res.text, res.task) == ("quick report", None)
    assert server.after_call() == []
    res = run(lambda: call_tool("t", server.entry, "maybe_report", wait=False))
    assert res.task is not None and res.task["taskId"] == "task-1"
    # A tool that forbids tasks is called plainly even then.
    res = run(lambda: call_tool("t", server.entry, "echo", {"text": "hi"}, wait=False))
    assert (res.text, res.task) == ("hi", None)


def test_a_failed_task_fails_the_call_with_the_server_message(server: Server) -> None:
    with pytest.raises(ProbeFailed) as caught:
        run(lambda: call_tool("t", server.entry, "failing_report"))
    err = caught.value
    assert err.reason == "mcp_error" and err.exit_code == 3
    assert err.message == (
        "t: failing_report failed as task task-1: the report broke: disk full (error -32603)"
    )
    assert server.after_call() == ["tasks/get", "tasks/result"]  # over: nothing to cancel


def test_a_task_that_asks_is_answered_while_its_result_is_awaited(server: Server) -> None:
    seen: list[str] = []
    answer = answers_from({"format": "html"})
    res = run(lambda: call_tool("t", server.entry, "asking_report", answer=answer,
                                on_status=seen.append))  # fmt: skip
    assert (res.is_error, res.text) == (False, "report as html")
    assert "input required: waiting for the format" in seen
    assert server.after_call() == ["tasks/get", "tasks/result"]


def test_a_task_whose_question_nobody_answers_fails_the_call(server: Server) -> None:
    with pytest.raises(InputRequiredError) as caught:
        run(lambda: call_tool("t", server.entry, "asking_report"))
    (asked,) = caught.value.requests
    assert asked["message"] == "Which format?"
    assert "--input format=VALUE" in (caught.value.hint or "")
    # Told cancel, the server ended the task: nothing left to cancel.
    assert server.after_call() == ["tasks/get", "tasks/result"]


def test_a_task_that_outlasts_the_timeout_is_cancelled(server: Server) -> None:
    started = time.monotonic()
    with pytest.raises(ProbeFailed) as caught:
        run(lambda: call_tool("t", server.entry, "slow_report", timeout=1.5))
    assert caught.value.reason == "timeout"
    after = server.after_call()
    assert after[0] == "tasks/get" and after[-1] == "tasks/cancel"
    assert time.monotonic() - started < 10


def test_a_server_that_offers_no_tasks_is_not_asked_for_one(tmp_path: Path) -> None:
    server = Server(tmp_path, "--no-capability")
    with pytest.raises(ProbeFailed) as caught:
        run(lambda: call_tool("t", server.entry, "build_report"))
    # The server's own -32601, with why: a client may not ask it for a task.
    assert "must be called as a task" in caught.value.message
    assert caught.value.hint == REQUIRED_HINT
    assert server.after_call() == []
