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


async def cancel_once_polled(scope: anyio.CancelScope, methods: Callable[[], Any]) -> None:
    """Cancel ``scope`` once the server has been asked ``tasks/get`` (looked at every 20 ms)."""
    while "tasks/get" not in methods():
        await anyio.sleep(0.02)
    scope.cancel()


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
            tg.start_soon(cancel_once_polled, tg.cancel_scope, server.methods)
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


# --- in-process: a session in the test's own process (tests/probe/peer.py) ------------------
# The stateless era's task messages need no handshake of their own once the call has its
# handle: each test below hands await_task (or its parts) a handle and a session whose peer
# answers tasks/get, tasks/update and tasks/cancel the test's way.

ASK_ENV = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Deploy to which environment?",
        "requestedSchema": {
            "type": "object",
            "properties": {"environment": {"type": "string", "enum": ["staging", "production"]}},
            "required": ["environment"],
        },
    },
}


def state(status: str, message: str | None = None, **more: Any) -> dict[str, Any]:
    data = {"taskId": "task-1", "status": status, "pollIntervalMs": 100, **more}
    if message is not None:
        data["statusMessage"] = message
    return data


def done(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


def polled(
    states: list[dict[str, Any]],
    *,
    answer: Any = None,
    on_status: Callable[[str], None] | None = None,
    tools: list[dict[str, Any]] | None = None,
    handle: dict[str, Any] | None = None,
    refuse_update: bool = False,
) -> tuple[Any, Any]:
    """await_task over a handle (``handle``, else the first state's fields) whose tasks/get
    finds each state in turn (the last one stays): what it returns or raises, and the peer
    (which answers tasks/update with an error if ``refuse_update``)."""
    from mcpctl.probe.inputlog import InputLog
    from mcpctl.probe.tasks import TaskHandle, TaskOptions, await_task
    from tests.probe.peer import Failure, session_with

    left = list(states)

    async def reply(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        if method == "tasks/get":
            if len(left) > 1:
                left.pop(0)
            return left[0]
        if method == "tasks/update" and refuse_update:
            raise Failure(-32602, "task-1 no longer waits for input")
        if method in ("tasks/update", "tasks/cancel"):
            return {}
        if method == "tools/list":
            return {"tools": tools or []}
        raise Failure(-32601, "Method not found")

    first = handle or {k: v for k, v in states[0].items() if k != "result"}
    outcome: list[Any] = []

    async def main() -> Any:
        async with session_with(reply) as (session, peer):
            options = TaskOptions(on_status=on_status, server="srv")
            try:
                got = await await_task(
                    session, TaskHandle.model_validate(first, by_name=False), "deploy",
                    answer, InputLog(), options,
                )  # fmt: skip
                outcome.append(got)
            except Exception as exc:  # the test reads it
                outcome.append(exc)
            return peer

    peer = run(main)
    return outcome[0], peer


def test_each_new_status_is_shown_once_and_the_result_is_the_completed_tasks() -> None:
    seen: list[str] = []
    states = [state("working"), state("working", "step 1"), state("working", "step 1"),
              state("input_required", "hold on", inputRequests={}),
              state("completed", result=done("shipped"))]  # fmt: skip
    got, peer = polled(states, on_status=seen.append)
    assert got.content[0].text == "shipped" and not got.is_error
    assert seen == ["working", "working: step 1", "input required: hold on"]
    assert peer.after("initialize") == ["tasks/get"] * 4 + ["tools/list"]


def test_a_failed_task_names_its_error_and_code() -> None:
    failed = state("failed", error={"code": -32603, "message": "broke\n\x1b[31mbadly"})
    err, peer = polled([state("working"), failed])
    assert isinstance(err, ProbeFailed) and (err.server, err.reason) == ("srv", "mcp_error")
    assert str(err) == "srv: deploy failed as task task-1: broke \\x1b[31mbadly (error -32603)"
    assert peer.after("initialize") == ["tasks/get"]  # over: nothing to cancel
    for error, said in [
        ({}, "no message"),
        ({"message": "", "code": True}, "no message"),  # a boolean is no code
        ({"message": "x", "code": "E1"}, "x"),
    ]:
        err, _ = polled([state("working"), state("failed", error=error)])
        assert str(err) == f"srv: deploy failed as task task-1: {said}"
    err, _ = polled([state("working", taskId="t" * 90), state("failed", taskId="t" * 90)])
    assert str(err) == f"srv: deploy failed as task {'t' * 79}…: no message"


def test_a_task_the_server_cancels_fails_with_its_reason() -> None:
    err, _ = polled([state("working"), state("cancelled", "over\tquota")])
    assert isinstance(err, ProbeFailed) and err.reason == "mcp_error"
    assert str(err) == "srv: the server cancelled task task-1 of deploy: over quota"
    err, _ = polled([state("working"), state("cancelled")])
    assert str(err) == "srv: the server cancelled task task-1 of deploy"


def test_a_task_completed_without_a_result_is_a_protocol_error() -> None:
    err, _ = polled([state("working"), state("completed")])
    assert isinstance(err, ProbeFailed) and err.reason == "protocol_error"
    assert str(err) == "srv: task task-1 of deploy completed without a result"


def test_the_result_is_checked_against_the_output_schema_unless_it_is_an_error() -> None:
    listed = [{"name": "deploy", "inputSchema": {"type": "object"},
               "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]  # fmt: skip
    err, _ = polled([state("working"), state("completed", result=done("x"))], tools=listed)
    assert isinstance(err, RuntimeError) and "structured content" in str(err)
    states = [state("working"), state("completed", result=done("broke", error=True))]
    got, peer = polled(states, tools=listed)
    assert got.is_error and "tools/list" not in peer.methods


def test_a_question_is_answered_once_through_tasks_update() -> None:
    asking = state("input_required", "waiting", inputRequests={"env": ASK_ENV})
    states = [state("working"), asking, asking, state("completed", result=done("deployed"))]
    got, peer = polled(states, answer=answers_from({"environment": "staging"}))
    assert got.content[0].text == "deployed"
    # The second poll still lists the question: it is not asked again, nor answered twice.
    assert peer.after("initialize") == [
        "tasks/get", "tasks/update", "tasks/get", "tasks/get", "tools/list"
    ]  # fmt: skip
    (update,) = [p for m, p in peer.params if m == "tasks/update"]
    assert update == {"taskId": "task-1", "inputResponses": {
        "env": {"action": "accept", "content": {"environment": "staging"}}}}  # fmt: skip


def test_a_question_nobody_answers_is_told_cancel_and_the_task_cancelled() -> None:
    asking = state("input_required", "waiting", inputRequests={"env": ASK_ENV})
    err, peer = polled([state("working"), asking])
    assert isinstance(err, InputRequiredError) and str(err).startswith("deploy ")
    assert peer.after("initialize") == ["tasks/get", "tasks/update", "tasks/cancel"]
    update, cancel = [p for m, p in peer.params if m in ("tasks/update", "tasks/cancel")]
    assert update == {"taskId": "task-1", "inputResponses": {"env": {"action": "cancel"}}}
    assert cancel == {"taskId": "task-1"}
    # A server that refuses being told cancel: the call still fails for the question nobody
    # answered, naming the tool, and the task is cancelled.
    err, peer = polled([state("working"), asking], refuse_update=True)
    assert isinstance(err, InputRequiredError) and str(err).startswith("deploy ")
    assert peer.after("initialize") == ["tasks/get", "tasks/update", "tasks/cancel"]


def test_a_task_polled_past_the_deadline_is_cancelled_before_it() -> None:
    from mcpctl.probe.inputlog import InputLog
    from mcpctl.probe.tasks import TaskHandle, TaskOptions, await_task
    from tests.probe.peer import session_with

    async def reply(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        return state("working") if method == "tasks/get" else {}

    async def main() -> tuple[bool, list[str]]:
        async with session_with(reply) as (session, peer):
            handle = TaskHandle.model_validate(state("working"), by_name=False)
            with anyio.move_on_after(1.5) as scope:
                await await_task(session, handle, "deploy", None, InputLog(), TaskOptions())
            return scope.cancelled_caught, peer.after("initialize")

    cancelled, sent = run(main)
    assert cancelled and sent[0] == "tasks/get" and sent[-1] == "tasks/cancel"
    assert sent.count("tasks/cancel") == 1


def test_a_cancel_nobody_answers_is_given_up_on() -> None:
    from mcpctl.probe.tasks import CANCEL_DEADLINE, cancel_task
    from tests.probe.peer import Failure, session_with

    async def never(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def refused(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        raise Failure(-32602, "no such task")

    async def main() -> float:
        async with session_with(refused) as (session, peer):
            await cancel_task(session, "task-9")  # an error answer is not the caller's
            assert peer.params[-1] == ("tasks/cancel", {"taskId": "task-9"})
        async with session_with(never) as (session, peer):
            started = anyio.current_time()
            await cancel_task(session, "task-9")
            return anyio.current_time() - started

    assert run(main) >= CANCEL_DEADLINE


def test_a_handle_as_json_has_its_wire_names_and_no_empty_fields() -> None:
    from mcpctl.probe.tasks import TaskHandle, handle_dict

    handle = TaskHandle.model_validate(
        {"taskId": "t1", "status": "working", "statusMessage": "token abc",
         "pollIntervalMs": 100, "ttlMs": 5000, "_meta": {"x": 1}},
        by_name=False,
    )  # fmt: skip
    assert handle_dict(handle) == {"taskId": "t1", "status": "working",
                                   "statusMessage": "token abc", "ttlMs": 5000,
                                   "pollIntervalMs": 100}  # fmt: skip
    shown = handle_dict(handle, lambda s: s.replace("abc", "***"))
    assert shown["statusMessage"] == "token ***" and shown["ttlMs"] == 5000


# --- in-process, the stateless era: call_with_inputs over a peer of 2026-07-28 -------------

MODERN = "2026-07-28"
LISTING = {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}


def calling(
    replies: list[dict[str, Any]],
    *,
    answer: Any = None,
    tasks: Any = None,
    polls: list[dict[str, Any]] | None = None,
    **kwargs: Any,
) -> tuple[Any, Any]:
    """call_with_inputs of ``deploy`` over a session of the stateless era (that declares the
    tasks extension) whose peer answers each tools/call with the next of ``replies`` (the
    last one stays; a Failure is its error) and each tasks/get with the next of ``polls``
    (default: a completed task): what it returns or raises, and the peer."""
    from mcpctl.probe.inputlog import InputLog
    from mcpctl.probe.tasks import call_with_inputs, declaration
    from tests.probe.peer import Failure, session_with

    left = list(replies)
    found = list(polls or [state("completed", result=done("deployed"))])
    outcome: list[Any] = []

    async def reply(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        if method == "tools/call":
            given = left.pop(0) if len(left) > 1 else left[0]
            if isinstance(given, Failure):
                raise given
            return given
        if method == "tasks/get":
            return found.pop(0) if len(found) > 1 else found[0]
        if method == "tools/list":
            return LISTING
        return {}

    async def main() -> Any:
        extensions, claims = declaration()
        async with session_with(
            reply, modern=MODERN, extensions=extensions, result_claims=claims
        ) as (session, peer):
            try:
                got = await call_with_inputs(
                    session, "deploy", {"v": 1}, answer, InputLog(), tasks=tasks, **kwargs
                )
                outcome.append(got)
            except Exception as exc:  # the test reads it
                outcome.append(exc)
            return peer

    peer = run(main)
    return outcome[0], peer


HANDLE = {"resultType": "task", "taskId": "task-1", "status": "working", "pollIntervalMs": 100}
ASKING = {"resultType": "input_required", "inputRequests": {"env": ASK_ENV},
          "requestState": "round-1"}  # fmt: skip


def calls(peer: Any) -> list[dict[str, Any]]:
    """Each tools/call's params, without the stateless era's _meta."""
    return [{k: v for k, v in p.items() if k != "_meta"} for m, p in peer.params
            if m == "tools/call"]  # fmt: skip


def test_a_task_handle_is_the_answer_when_not_waited_for() -> None:
    from mcpctl.probe.tasks import TaskHandle, TaskOptions

    got, peer = calling([HANDLE], tasks=TaskOptions(wait=False))
    assert isinstance(got, TaskHandle) and got.task_id == "task-1"
    assert "tasks/get" not in peer.methods
    assert calls(peer) == [{"name": "deploy", "arguments": {"v": 1}}]


def test_a_task_handle_is_polled_to_its_result_when_waited_for() -> None:
    from mcpctl.probe.tasks import TaskOptions

    got, peer = calling([HANDLE], tasks=TaskOptions())
    assert got.content[0].text == "deployed"
    assert peer.after("tools/call")[0] == "tasks/get"


def test_a_plain_result_is_the_answer() -> None:
    from mcpctl.probe.tasks import TaskOptions

    for tasks in (None, TaskOptions()):
        got, peer = calling([{**done("at once"), "resultType": "complete"}], tasks=tasks)
        assert got.content[0].text == "at once" and "tasks/get" not in peer.methods


def test_each_round_of_questions_is_answered_by_calling_again() -> None:
    complete = {**done("deployed to staging"), "resultType": "complete"}
    got, peer = calling([ASKING, complete], answer=answers_from({"environment": "staging"}))
    assert got.content[0].text == "deployed to staging"
    first, second = calls(peer)
    assert first == {"name": "deploy", "arguments": {"v": 1}}
    assert second == {
        "name": "deploy", "arguments": {"v": 1}, "requestState": "round-1",
        "inputResponses": {"env": {"action": "accept", "content": {"environment": "staging"}}},
    }  # fmt: skip


def test_a_question_nobody_answers_is_told_cancel_in_one_more_call() -> None:
    got, peer = calling([ASKING, {**done("cancelled"), "resultType": "complete"}])
    assert isinstance(got, InputRequiredError)
    assert len(calls(peer)) == 2
    assert calls(peer)[1] == {
        "name": "deploy", "arguments": {"v": 1}, "requestState": "round-1",
        "inputResponses": {"env": {"action": "cancel"}},
    }  # fmt: skip


def test_that_last_call_answered_with_an_error_still_says_what_went_unanswered() -> None:
    from tests.probe.peer import Failure

    got, peer = calling([ASKING, Failure(-32603, "cannot cancel")])
    assert isinstance(got, InputRequiredError) and len(calls(peer)) == 2


def test_a_task_started_once_the_questions_are_answered_is_polled() -> None:
    from mcpctl.probe.tasks import TaskOptions

    got, peer = calling(
        [ASKING, HANDLE], answer=answers_from({"environment": "staging"}), tasks=TaskOptions()
    )
    assert got.content[0].text == "deployed"
    assert len(calls(peer)) == 2 and peer.after("tools/call")[0] == "tasks/get"


def test_a_tasks_own_questions_are_answered_and_its_failure_names_the_tool() -> None:
    from mcpctl.probe.tasks import TaskOptions

    asking = state("input_required", "waiting", inputRequests={"env": ASK_ENV})
    polls = [asking, state("completed", result=done("deployed to staging"))]
    answer = answers_from({"environment": "staging"})
    got, peer = calling([HANDLE], answer=answer, tasks=TaskOptions(), polls=polls)
    assert got.content[0].text == "deployed to staging"
    assert peer.after("tools/call")[:2] == ["tasks/get", "tasks/update"]
    failed = [state("failed", error={"message": "no disk", "code": -32603})]
    got, _ = calling([HANDLE], tasks=TaskOptions(server="srv"), polls=failed)
    assert isinstance(got, ProbeFailed)
    assert str(got) == "srv: deploy failed as task task-1: no disk (error -32603)"


def test_a_task_started_by_that_last_call_is_cancelled() -> None:
    from mcpctl.probe.tasks import TaskOptions

    got, peer = calling([ASKING, HANDLE], tasks=TaskOptions())
    assert isinstance(got, InputRequiredError)
    assert peer.after("tools/call") == ["tasks/cancel"]
    assert peer.params[-1][1]["taskId"] == "task-1"


def test_rounds_past_the_cap_give_the_call_up() -> None:
    from mcpctl.errors import UsageError

    got, peer = calling([ASKING], answer=answers_from({"environment": "staging"}), max_rounds=2)
    assert isinstance(got, UsageError) and not isinstance(got, InputRequiredError)
    assert "deploy" in str(got)
    assert 2 <= len(calls(peer)) <= 4


def test_a_call_made_another_way_is_watched_the_same_way() -> None:
    made: list[str] = []

    async def other() -> str:
        made.append("called")
        return "its answer"

    got, peer = calling([HANDLE], call=other)
    assert got == "its answer" and made == ["called"] and calls(peer) == []

    async def failing() -> str:
        raise ValueError("it broke")

    got, _ = calling([HANDLE], call=failing)
    assert isinstance(got, ValueError) and str(got) == "it broke"


def cancelled_while_polling(*, with_guard: bool) -> tuple[bool, list[str], bool | None]:
    """await_task cancelled by its caller once it polls: whether the cancel was caught, what
    the server got after the handshake, and whether the guard (if any) says it fired."""
    from mcpctl.probe.inputlog import InputLog
    from mcpctl.probe.tasks import TaskHandle, TaskOptions, await_task
    from tests.probe.peer import session_with

    async def reply(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        return state("working") if method == "tasks/get" else {}

    async def main() -> tuple[bool, list[str], bool | None]:
        async with session_with(reply) as (session, peer):
            handle = TaskHandle.model_validate(state("working"), by_name=False)
            fired: list[bool] = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_once_polled, tg.cancel_scope, lambda: peer.methods)
                if not with_guard:
                    await await_task(session, handle, "deploy", None, InputLog(), TaskOptions())
                async with guarded() as guard:
                    try:
                        options = TaskOptions(guard=guard)
                        await await_task(session, handle, "deploy", None, InputLog(), options)
                    finally:
                        fired.append(guard.fired)
            return tg.cancel_scope.cancelled_caught, peer.after("initialize"), (fired or [None])[0]

    return run(main)


def test_a_guarded_call_cancelled_from_outside_cancels_its_task_first() -> None:
    cancelled, sent, fired = cancelled_while_polling(with_guard=True)
    assert cancelled and fired
    assert sent[0] == "tasks/get" and sent[-1] == "tasks/cancel"
    assert sent.count("tasks/cancel") == 1


def test_a_call_cancelled_from_outside_cancels_its_task_first() -> None:
    """Cancelled while it polls (given up on by its caller: no deadline, no guard), the call
    still tells the server to cancel the task on its way out."""
    cancelled, sent, fired = cancelled_while_polling(with_guard=False)
    assert cancelled and fired is None
    assert sent[0] == "tasks/get" and sent[-1] == "tasks/cancel"
    assert sent.count("tasks/cancel") == 1


def test_a_handshake_question_nobody_answers_fails_the_call_naming_the_tool() -> None:
    """The handshake era asks with elicitation/create while the call is open: nobody
    answers (told cancel), the server ends the call, and the call fails naming the tool."""
    from mcpctl.probe.inputlog import InputLog, elicitation_callback
    from mcpctl.probe.tasks import call_with_inputs
    from tests.probe.peer import session_with

    async def reply(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        if method == "tools/call":
            await peer.ask("elicitation/create", ASK_ENV["params"])
            return done("the user cancelled", error=True)
        return {"tools": []}

    async def main() -> Exception:
        log = InputLog()
        callback = elicitation_callback(None, log)
        async with session_with(reply, elicitation_callback=callback) as (session, _):
            try:
                await call_with_inputs(
                    session, "deploy", {}, None, log,
                    call=lambda: session.call_tool("deploy", {}),
                )  # fmt: skip
            except Exception as exc:  # the test reads it
                return exc
        raise AssertionError("the call did not fail")

    err = run(main)
    assert isinstance(err, InputRequiredError)
    assert str(err).startswith("deploy ")


def test_a_tasks_result_is_read_by_its_wire_names_only() -> None:
    snake = {"content": [{"type": "text", "text": "ok"}], "is_error": True}
    got, _ = polled([state("working"), state("completed", result=snake)])
    assert got.content[0].text == "ok" and got.is_error is False


def test_the_task_is_polled_as_often_as_the_server_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's pollIntervalMs, from the first state that gives one (a handle without
    one is polled once a second until then)."""
    from tests.probe.peer import skip_waits

    waits = skip_waits(monkeypatch)
    handle = {"taskId": "task-1", "status": "working"}
    states = [state("working", f"step {n}") for n in range(10)]
    states.append(state("completed", result=done("deployed")))
    got, peer = polled(states, handle=handle)
    assert got.content[0].text == "deployed"
    assert peer.after("initialize").count("tasks/get") == 10
    assert waits == [POLL_DEFAULT] + [0.1] * 9
    # A handle that gives one: its interval from the first poll on.
    waits.clear()
    got, _ = polled(states, handle={**handle, "pollIntervalMs": 250})
    assert got.content[0].text == "deployed" and waits == [0.25] + [0.1] * 9


def test_a_long_error_message_is_cut_at_300_characters() -> None:
    failed = state("failed", error={"message": "x" * 400})
    err, _ = polled([state("working"), failed])
    assert str(err) == f"srv: deploy failed as task task-1: {'x' * 299}…"


def resolved(states: list[dict[str, Any]]) -> tuple[Any, Any]:
    """The handle claimed by declaration()'s claim, resolved as the SDK's Client would (a
    ClaimContext naming ``deploy``), against a peer whose tasks/get finds each state in turn:
    what it returns or raises, and the peer."""
    from mcpctl.probe.tasks import EXTENSION, TaskHandle, declaration
    from mcpctl.sdk import ClaimContext
    from tests.probe.peer import session_with

    left = list(states)
    outcome: list[Any] = []

    async def reply(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        if method == "tasks/get":
            return left.pop(0) if len(left) > 1 else left[0]
        return {"tools": []} if method == "tools/list" else {}

    async def main() -> Any:
        (claim,) = declaration()[1][EXTENSION]
        handle = TaskHandle.model_validate(state("working"), by_name=False)
        async with session_with(reply) as (session, peer):
            ctx = ClaimContext(session=session, tool_name="deploy", read_timeout_seconds=None)
            try:
                outcome.append(await claim.resolve(handle, ctx))
            except Exception as exc:  # the test reads it
                outcome.append(exc)
            return peer

    peer = run(main)
    return outcome[0], peer


def test_a_claimed_handle_is_resolved_by_polling_its_task_with_nobody_to_answer() -> None:
    got, peer = resolved([state("working"), state("completed", result=done("deployed"))])
    assert got.content[0].text == "deployed" and not got.is_error
    assert peer.after("initialize") == ["tasks/get", "tasks/get", "tools/list"]
    # Its failure names the tool the context names, and the server as any call's default.
    got, _ = resolved([state("failed", error={"message": "no disk"})])
    assert isinstance(got, ProbeFailed)
    assert str(got) == "server: deploy failed as task task-1: no disk"
    # A question: nobody is there to answer it; the task is told cancel, then cancelled.
    asking = state("input_required", "waiting", inputRequests={"env": ASK_ENV})
    got, peer = resolved([asking])
    assert isinstance(got, InputRequiredError) and str(got).startswith("deploy ")
    assert peer.after("initialize") == ["tasks/get", "tasks/update", "tasks/cancel"]


def test_a_guarded_call_with_its_connection_inside_cancels_its_task_first() -> None:
    """As connect() has it: the transport inside the guarded block. Cancelled from outside
    while polling, the polling alone stops first, the cancel is sent and answered over the
    connection still open, and only then does the block end."""
    from mcpctl.probe.inputlog import InputLog
    from mcpctl.probe.tasks import TaskHandle, TaskOptions, await_task
    from tests.probe.peer import session_with

    peers: list[Any] = []
    answered: list[str] = []

    async def reply(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        answered.append(method)
        return state("working") if method == "tasks/get" else {}

    async def main() -> bool:
        handle = TaskHandle.model_validate(state("working"), by_name=False)
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                cancel_once_polled, tg.cancel_scope, lambda: peers[0].methods if peers else ()
            )
            async with guarded() as guard, session_with(reply) as (session, peer):
                peers.append(peer)
                options = TaskOptions(guard=guard)
                await await_task(session, handle, "deploy", None, InputLog(), options)
        return tg.cancel_scope.cancelled_caught

    assert run(main) is True
    assert peers[0].after("initialize")[-1] == "tasks/cancel" and answered[-1] == "tasks/cancel"


def virtual_loop() -> Any:
    """An asyncio loop on a clock of its own that jumps to the next timer whenever every
    task waits (none of these tests waits for anything outside its process): the times code
    asks for are kept exactly, at once, however busy the machine."""
    import asyncio

    loop = asyncio.SelectorEventLoop()
    now = [0.0]
    select = loop._selector.select  # type: ignore[attr-defined]

    def jump(timeout: float | None = None) -> Any:
        events = select(0)
        if events or timeout is None:
            return events or select(timeout)
        now[0] += timeout  # idle until the next timer: it is due now
        return events

    loop._selector.select = jump  # type: ignore[attr-defined]
    loop.time = lambda: now[0]  # type: ignore[method-assign]
    return loop


def run_virtual(test: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await test()

    return anyio.run(bounded, backend_options={"loop_factory": virtual_loop})


@pytest.mark.parametrize(("deadline", "cancelled_at"), [(0.5, 0.375), (4.0, 3.0), (20.0, 18.0)])
def test_the_polling_stops_a_quarter_of_the_time_left_before_the_deadline(
    deadline: float, cancelled_at: float
) -> None:
    """At most CANCEL_DEADLINE (2 s) before it: time to cancel the task in."""
    from mcpctl.probe.inputlog import InputLog
    from mcpctl.probe.tasks import TaskHandle, TaskOptions, await_task
    from tests.probe.peer import session_with

    sent: list[tuple[str, float]] = []

    async def reply(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        sent.append((method, anyio.current_time()))
        return state("working") if method == "tasks/get" else {}

    async def main() -> tuple[float, float, bool]:
        async with session_with(reply) as (session, _):
            handle = TaskHandle.model_validate(state("working"), by_name=False)
            start = anyio.current_time()
            with anyio.move_on_after(deadline) as scope:
                await await_task(session, handle, "deploy", None, InputLog(), TaskOptions())
            return start, anyio.current_time() - start, scope.cancelled_caught

    start, took, cancelled = run_virtual(main)
    assert cancelled and took == pytest.approx(deadline)  # the call's own deadline ends it
    assert [m for m, _ in sent[-2:]] == ["tasks/get", "tasks/cancel"]
    assert sent[-1][1] - start == pytest.approx(cancelled_at)


def test_a_guarded_call_waits_for_a_slow_answer_to_its_cancel() -> None:
    """The cancel answered 1.5 s after it is sent (within CANCEL_DEADLINE): the connection
    stays open until then."""
    from mcpctl.probe.inputlog import InputLog
    from mcpctl.probe.tasks import TaskHandle, TaskOptions, await_task
    from tests.probe.peer import session_with

    peers: list[Any] = []
    asked: list[float] = []
    answered: list[tuple[str, float]] = []

    async def reply(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        if method == "tasks/cancel":
            asked.append(anyio.current_time())
            await anyio.sleep(1.5)
        answered.append((method, anyio.current_time()))
        return state("working") if method == "tasks/get" else {}

    async def main() -> tuple[bool, float]:
        handle = TaskHandle.model_validate(state("working"), by_name=False)
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                cancel_once_polled, tg.cancel_scope, lambda: peers[0].methods if peers else ()
            )
            async with guarded() as guard, session_with(reply) as (session, peer):
                peers.append(peer)
                options = TaskOptions(guard=guard)
                await await_task(session, handle, "deploy", None, InputLog(), options)
        return tg.cancel_scope.cancelled_caught, anyio.current_time()

    cancelled, ended = run_virtual(main)
    assert cancelled and answered[-1][0] == "tasks/cancel"
    assert len(asked) == 1 and answered[-1][1] == pytest.approx(asked[0] + 1.5)
    assert ended == pytest.approx(answered[-1][1])  # the connection closed only then


def test_a_guarded_block_cancelled_once_its_task_has_ended_is_cancelled_as_any() -> None:
    """The polling over, the guard has nothing left to stop: a cancellation from outside
    then just cancels the block."""
    from mcpctl.probe.inputlog import InputLog
    from mcpctl.probe.tasks import TaskHandle, TaskOptions, await_task
    from tests.probe.peer import session_with

    async def reply(method: str, params: dict[str, Any], peer: Any) -> dict[str, Any]:
        if method == "tasks/get":
            return state("completed", result=done("deployed"))
        return {"tools": []}

    async def main() -> tuple[bool, list[str], list[bool]]:
        handle = TaskHandle.model_validate(state("working"), by_name=False)
        finished, fired = anyio.Event(), []
        async with anyio.create_task_group() as tg:

            async def cancel_once_finished() -> None:
                await finished.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(cancel_once_finished)
            async with session_with(reply) as (session, peer), guarded() as guard:
                try:
                    options = TaskOptions(guard=guard)
                    got = await await_task(session, handle, "deploy", None, InputLog(), options)
                    assert got.content[0].text == "deployed"
                    finished.set()
                    with anyio.move_on_after(5):  # the block runs shielded: a bound
                        await anyio.sleep_forever()
                finally:
                    fired.append(guard.fired)
        return tg.cancel_scope.cancelled_caught, peer.after("initialize"), fired

    cancelled, sent, fired = run(main)
    assert cancelled and fired == [True]
    assert sent == ["tasks/get", "tools/list"]  # over: nothing to cancel
