"""Tool calls a server runs as tasks (tests/servers/tasks_server.py): polled to the end, left
running with wait=False, failed, asking for input, timed out and cancelled -- and declared only
by a connection that calls tools."""

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
from mcpctl.probe.tasks import POLL_DEFAULT, POLL_MAX, POLL_MIN, guarded, poll_interval
from tests.conftest import SERVERS

DEADLINE = 60  # seconds for a whole test; the server answers in milliseconds


class Server:
    """tasks_server.py as a stdio entry, and the methods it received."""

    def __init__(self, tmp_path: Path) -> None:
        self.log = tmp_path / "methods.log"
        env = {"TASKS_SERVER_LOG": str(self.log)}
        script = str(SERVERS / "tasks_server.py")
        self.entry = ServerEntry(command=sys.executable, args=(script,), env=env)

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


def test_a_task_is_polled_to_its_result_with_its_status_reported(server: Server) -> None:
    seen: list[str] = []
    res = run(lambda: call_tool("t", server.entry, "slow_job", {"polls": 3}, on_status=seen.append))
    assert (res.is_error, res.text, res.task) == (False, "done after 3 polls", None)
    assert res.content == [{"type": "text", "text": "done after 3 polls"}]
    assert seen == ["working: started", "working: step 1 of 3", "working: step 2 of 3"]
    assert server.after_call() == ["tasks/get"] * 3


def test_without_waiting_the_handle_is_the_answer(server: Server) -> None:
    res = run(lambda: call_tool("t", server.entry, "slow_job", {}, wait=False))
    assert res.task is not None and not res.is_error
    assert res.task["taskId"] == "task-1" and res.task["status"] == "working"
    assert res.task["pollIntervalMs"] == 100 and res.task["ttlMs"] == 60000
    assert {"createdAt", "lastUpdatedAt", "statusMessage"} <= set(res.task)
    assert "resultType" not in res.task
    assert res.text == "task task-1 is working"
    assert server.after_call() == []  # never polled, never cancelled


def test_a_failed_task_fails_the_call_with_the_server_message_on_one_line(server: Server) -> None:
    with pytest.raises(ProbeFailed) as caught:
        run(lambda: call_tool("t", server.entry, "failing_job"))
    err = caught.value
    assert err.reason == "mcp_error" and err.exit_code == 3
    assert err.message == (
        "t: failing_job failed as task task-1: the job broke: disk full \\x1b[31mretry later "
        "(error -32603)"
    )
    assert server.after_call() == ["tasks/get"]  # a failed task is over: nothing to cancel


def test_a_task_that_asks_is_answered_through_tasks_update(server: Server) -> None:
    answer = answers_from({"environment": "staging"})
    seen: list[str] = []
    res = run(lambda: call_tool("t", server.entry, "asking_job", answer=answer,
                                on_status=seen.append))  # fmt: skip
    assert (res.is_error, res.text) == (False, "deployed to staging")
    assert server.after_call() == ["tasks/get", "tasks/update", "tasks/get"]
    assert "input required: waiting for an answer" in seen


def test_a_task_whose_question_nobody_answers_is_cancelled(server: Server) -> None:
    with pytest.raises(InputRequiredError) as caught:
        run(lambda: call_tool("t", server.entry, "asking_job"))
    (asked,) = caught.value.requests
    assert asked["message"] == "Deploy to which environment?"
    assert asked["fields"] == [{"name": "environment", "type": "string", "required": True,
                                "choices": ["staging", "production"]}]  # fmt: skip
    assert "--input environment=VALUE" in (caught.value.hint or "")
    # Told cancel (nobody was asked), then the task is cancelled.
    assert server.after_call() == ["tasks/get", "tasks/update", "tasks/cancel"]


def test_a_task_that_outlasts_the_timeout_is_cancelled(server: Server) -> None:
    started = time.monotonic()
    with pytest.raises(ProbeFailed) as caught:
        run(lambda: call_tool("t", server.entry, "slow_job", {"seconds": 60}, timeout=1.5))
    assert caught.value.reason == "timeout"
    assert "'slow_job' did not answer within 1.5 s" in caught.value.message
    after = server.after_call()
    assert after[0] == "tasks/get" and after[-1] == "tasks/cancel"
    assert time.monotonic() - started < 10


def test_a_cancelled_call_cancels_its_task_before_it_closes(server: Server) -> None:
    async def go() -> bool:
        async with anyio.create_task_group() as tg:

            async def cancel_once_polling() -> None:
                while "tasks/get" not in server.methods():
                    await anyio.sleep(0.02)
                tg.cancel_scope.cancel()

            tg.start_soon(cancel_once_polling)
            await call_tool("t", server.entry, "slow_job", {"seconds": 60})
        return tg.cancel_scope.cancelled_caught

    assert run(go) is True
    assert server.after_call()[-1] == "tasks/cancel"


def test_only_a_call_declares_the_extension(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.probe import connect

    def refused() -> Any:
        raise AssertionError("a probe declared the tasks extension")

    with monkeypatch.context() as m:
        m.setattr(connect, "declaration", refused)
        result = run(lambda: probe("t", server.entry))
    assert result.healthy, result.error
    assert "tools/call" not in server.methods()

    async def plain_call() -> str:
        async with connect.connect("t", server.entry) as conn:
            res = await conn.session.call_tool("slow_job", {})
            return str(getattr(res.content[0], "text", ""))

    # Undeclared, the server runs the job inline: it saw no extension.
    assert run(plain_call) == "done"
    assert "tasks/get" not in server.methods()


def test_the_poll_interval_is_the_servers_within_bounds() -> None:
    assert poll_interval(None) == POLL_DEFAULT
    assert poll_interval(-5) == POLL_DEFAULT
    assert poll_interval(0) == POLL_MIN
    assert poll_interval(250) == 0.25
    assert poll_interval(3_600_000) == POLL_MAX


def test_guarded_lets_its_blocks_exceptions_out_as_they_are() -> None:
    async def failing() -> None:
        async with guarded():
            raise ValueError("mine")

    with pytest.raises(ValueError, match="mine"):
        anyio.run(failing)

    async def cancelled_without_a_task() -> bool:
        with anyio.move_on_after(0.1) as scope:
            async with guarded():
                await anyio.sleep_forever()
        return scope.cancelled_caught

    assert run(cancelled_without_a_task) is True
