"""Handshake-era tasks (mcpctl/probe/legacytasks.py) without a server process: a session in the
test's own process (tests/probe/peer.py) whose peer answers each request the test's way --
which tools are called as tasks, the request sent, the handle returned, the statuses shown,
the result fetched (its questions answered first), and the errors of a task that fails, is
cancelled or never starts. tests/probe/test_legacy_tasks.py runs the same with a stdio server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import resolve_entry
from mcpctl.errors import ProbeFailed
from mcpctl.probe.connect import Connection
from mcpctl.probe.eras import Era
from mcpctl.probe.legacytasks import call_as_task, offers_tasks, runs_as_task
from mcpctl.probe.tasks import TaskHandle, TaskOptions
from mcpctl.probe.toolinfo import ToolInfo
from tests.probe.peer import TASKS, VERSION, Failure, Peer, session_with, skip_waits

DEADLINE = 20  # seconds for a whole test; the peer answers at once
POLL_MS = 100  # the shortest interval mcpctl polls at


def run(test: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await test()

    return anyio.run(bounded)


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


def task(status: str, message: str | None = None, **more: Any) -> dict[str, Any]:
    data = {"taskId": "task-1", "status": status, "pollInterval": POLL_MS, **more}
    if message is not None:
        data["statusMessage"] = message
    return data


def scripted(
    statuses: list[dict[str, Any]],
    result: Callable[[Peer], Any] | dict[str, Any] | Failure | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> Callable[..., Any]:
    """``tools/call`` starts a task (the first status); each ``tasks/get`` finds the next one
    (the last one stays); ``tasks/result`` answers ``result``."""
    left = list(statuses)

    async def answer(method: str, params: dict[str, Any], peer: Peer) -> dict[str, Any]:
        if method == "tools/call":
            return {"task": left[0]}
        if method == "tasks/get":
            if len(left) > 1:
                left.pop(0)
            return left[0]
        if method == "tasks/result":
            if isinstance(result, Failure):
                raise result
            if callable(result):
                return await result(peer)
            return result if result is not None else text("done")
        if method == "tools/list":
            return {"tools": tools or []}
        raise Failure(-32601, "Method not found")

    return answer


def call(
    answer: Callable[..., Any], options: TaskOptions | None = None, **kwargs: Any
) -> tuple[Any, Peer]:
    async def main() -> tuple[Any, Peer]:
        async with session_with(answer, **kwargs.pop("session", {})) as (session, peer):
            got = await call_as_task(
                session, "report", {"pages": 2}, options or TaskOptions(server="srv"), **kwargs
            )
            return got, peer

    return run(main)


def failure(answer: Callable[..., Any], options: TaskOptions | None = None) -> ProbeFailed:
    with pytest.raises(ProbeFailed) as caught:
        call(answer, options)
    return caught.value


# --- which calls are tasks -----------------------------------------------------------------


def connection_offering(capabilities: dict[str, Any], era: str = "legacy") -> Connection:
    async def nothing(method: str, params: dict[str, Any], peer: Peer) -> dict[str, Any]:
        raise Failure(-32601, "Method not found")

    async def main() -> Connection:
        async with session_with(nothing, capabilities) as (session, _):
            resolved = resolve_entry("t", ServerEntry(command="server"))
            return Connection(
                name="t", session=session, transport="stdio", era=Era(era, VERSION),  # type: ignore[arg-type]
                resolved=resolved,  # type: ignore[arg-type]
            )  # fmt: skip

    return run(main)


@pytest.mark.parametrize(
    ("tasks", "offered"),
    [
        (TASKS, True),
        ({"requests": {"tools": {"call": {}}}}, True),
        (None, False),
        ({"list": {}, "cancel": {}}, False),
        ({"requests": {}}, False),
        ({"requests": {"tools": {}}}, False),
    ],
)
def test_tasks_are_offered_only_for_tools_call(tasks: Any, offered: bool) -> None:
    caps: dict[str, Any] = {"tools": {}} | ({"tasks": tasks} if tasks is not None else {})
    assert offers_tasks(connection_offering(caps)) is offered


def test_a_connection_of_the_stateless_era_is_never_offered_these_tasks() -> None:
    conn = connection_offering({"tools": {}, "tasks": TASKS}, era="modern")
    assert offers_tasks(conn) is False


def tool(support: str | None) -> ToolInfo:
    raw: dict[str, Any] = {"name": "report"}
    if support is not None:
        raw["execution"] = {"taskSupport": support}
    return ToolInfo(name="report", description="", input_schema={}, raw=raw)


@pytest.mark.parametrize(
    ("support", "wait", "as_task"),
    [
        ("required", True, True),
        ("required", False, True),
        ("optional", True, False),
        ("optional", False, True),
        ("forbidden", False, False),
        (None, False, False),
    ],
)
def test_a_tool_runs_as_a_task_when_it_must_or_may_and_nobody_waits(
    support: str | None, wait: bool, as_task: bool
) -> None:
    offering = connection_offering({"tools": {}, "tasks": TASKS})
    assert runs_as_task(offering, tool(support), wait=wait) is as_task
    refusing = connection_offering({"tools": {}})
    assert runs_as_task(refusing, tool(support), wait=wait) is False


# --- the call --------------------------------------------------------------------------------


def test_without_waiting_the_handle_is_the_answer_and_the_task_is_left_alone() -> None:
    started = task(
        "working", "queued", createdAt="2025-11-25T10:00:00Z",
        lastUpdatedAt="2025-11-25T10:00:01Z", ttl=30000,
    )  # fmt: skip
    got, peer = call(scripted([started]), TaskOptions(wait=False))
    assert got == TaskHandle(
        task_id="task-1", status="working", status_message="queued",
        created_at="2025-11-25T10:00:00Z", last_updated_at="2025-11-25T10:00:01Z",
        ttl_ms=30000, poll_interval_ms=POLL_MS,
    )  # fmt: skip
    assert peer.params[-1] == (
        "tools/call", {"name": "report", "arguments": {"pages": 2}, "task": {"ttl": 60000}}
    )  # fmt: skip
    assert peer.after("tools/call") == []


def test_the_time_to_live_asked_for_is_sent() -> None:
    _, peer = call(scripted([task("working")]), TaskOptions(wait=False), ttl_ms=5000)
    assert peer.params[-1][1]["task"] == {"ttl": 5000}


@pytest.mark.parametrize(
    "answer",
    [
        text("done at once"),
        {"task": {"task_id": "task-1", "status": "working"}},  # not the wire's names
        {"task": {"taskId": "task-1"}},
    ],
)
def test_an_answer_that_is_no_task_is_a_protocol_error(answer: dict[str, Any]) -> None:
    async def reply(method: str, params: dict[str, Any], peer: Peer) -> dict[str, Any]:
        return answer

    err = failure(reply)
    assert (err.server, err.reason) == ("srv", "protocol_error")
    assert str(err) == "srv: report was called as a task, but no task came back"


def test_a_task_is_polled_to_its_result_and_each_new_status_shown_once() -> None:
    seen: list[str] = []
    statuses = [
        task("working"),
        task("working", "step 1"),
        task("working", "step 1"),
        task("working", "step 2"),
        task("some_new_status"),
        task("completed", "all done"),
    ]
    got, peer = call(scripted(statuses, text("the report")), TaskOptions(on_status=seen.append))
    assert got.content[0].text == "the report" and not got.is_error
    assert seen == ["working", "working: step 1", "working: step 2", "some new status"]
    assert peer.after("tools/call") == ["tasks/get"] * 5 + ["tasks/result", "tools/list"]


def test_the_first_poll_waits_the_interval_the_task_started_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not the default second: the handle's pollInterval, then each status's own."""
    waits = skip_waits(monkeypatch)
    statuses = [task("working", pollInterval=250), task("working", pollInterval=400)]
    got, _ = call(scripted([*statuses, task("completed")]))
    assert got.content[0].text == "done"
    assert waits == [0.25, 0.4]


def test_a_task_already_completed_is_fetched_without_polling() -> None:
    seen: list[str] = []
    got, peer = call(scripted([task("completed")]), TaskOptions(on_status=seen.append))
    assert got.content[0].text == "done"
    assert seen == []
    assert peer.after("tools/call") == ["tasks/result", "tools/list"]


def test_the_result_is_checked_against_the_tools_output_schema() -> None:
    listed = [{"name": "report", "inputSchema": {"type": "object"},
               "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]  # fmt: skip
    with pytest.raises(RuntimeError, match="did not return structured content"):
        call(scripted([task("completed")], text("no structure"), listed))
    # An error result is the tool's failure: nothing to check.
    got, peer = call(scripted([task("completed")], text("broke", error=True), listed))
    assert got.is_error and "tools/list" not in peer.methods


def test_a_failed_task_fails_the_call_with_the_servers_message_on_one_line() -> None:
    broke = Failure(-32603, "the report\nbroke: \x1b[31mdisk full")
    err = failure(scripted([task("working"), task("failed", "disk full")], broke))
    assert (err.server, err.reason) == ("srv", "mcp_error")
    assert str(err) == (
        "srv: report failed as task task-1: the report broke: \\x1b[31mdisk full (error -32603)"
    )


def test_a_long_task_id_and_message_are_cut() -> None:
    long_id = "t" * 100
    statuses = [task("working", taskId=long_id), task("failed", taskId=long_id)]
    err = failure(scripted(statuses, Failure(-32603, "x" * 400)))
    assert str(err) == (f"srv: report failed as task {'t' * 79}…: {'x' * 299}… (error -32603)")


def test_a_task_the_server_cancels_fails_the_call_with_its_reason() -> None:
    statuses = [task("working"), task("cancelled", "out of\tmemory \x07")]
    err = failure(scripted(statuses), TaskOptions(server="srv", on_status=lambda _: None))
    assert (err.server, err.reason) == ("srv", "mcp_error")
    assert str(err) == "srv: the server cancelled task task-1 of report: out of memory \\x07"
    statuses = [task("working"), task("cancelled", taskId="x" * 90)]
    err = failure(scripted(statuses))
    assert str(err) == f"srv: the server cancelled task {'x' * 79}… of report"


def test_a_task_that_asks_is_answered_through_its_result() -> None:
    """``input_required``: tasks/result is called at once, and the server asks while it is
    open; the session's elicitation callback answers."""
    asked: list[Any] = []

    async def elicitation(context: Any, params: Any) -> Any:
        import mcp_types

        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"format": "pdf"})

    async def result(peer: Peer) -> dict[str, Any]:
        schema = {"type": "object", "properties": {"format": {"type": "string"}}}
        reply = await peer.ask(
            "elicitation/create",
            {"mode": "form", "message": "Which format?", "requestedSchema": schema},
        )
        return text(f"report as {reply['content']['format']}")

    seen: list[str] = []
    statuses = [task("working"), task("input_required", "waiting for the format")]

    async def main() -> tuple[Any, Peer]:
        answer = scripted(statuses, result)
        async with session_with(answer, elicitation_callback=elicitation) as (session, peer):
            options = TaskOptions(on_status=seen.append)
            return await call_as_task(session, "report", {}, options), peer

    got, peer = run(main)
    assert got.content[0].text == "report as pdf"
    assert asked == ["Which format?"]
    assert seen == ["working", "input required: waiting for the format"]
    assert peer.after("tools/call") == ["tasks/get", "tasks/result", "tools/list"]


def test_an_empty_message_and_task_id_are_shown_empty() -> None:
    statuses = [task("working", taskId=""), task("failed", taskId="")]
    err = failure(scripted(statuses, Failure(-32603, "")))
    assert str(err) == "srv: report failed as task :  (error -32603)"


def test_the_task_is_asked_for_with_the_sessions_protocol_version_header() -> None:
    """Sent below the SDK's check, the call still carries what the session stamps on every
    request (over HTTP: MCP-Protocol-Version)."""
    _, peer = call(scripted([task("working")]), TaskOptions(wait=False))
    method, headers = peer.headers[-1]
    assert method == "tools/call"
    assert {k.lower(): v for k, v in headers.items()} == {"mcp-protocol-version": VERSION}


def test_a_task_given_up_on_at_the_deadline_is_cancelled() -> None:
    async def main() -> tuple[bool, Peer]:
        async with session_with(scripted([task("working")])) as (session, peer):
            with anyio.move_on_after(1.5) as scope:
                await call_as_task(session, "report", {}, TaskOptions())
            return scope.cancelled_caught, peer

    cancelled, peer = run(main)
    assert cancelled
    assert peer.after("tools/call")[-1] == "tasks/cancel"
    assert peer.params[-1] == ("tasks/cancel", {"taskId": "task-1"})


def test_the_task_is_polled_as_often_as_the_server_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's pollInterval, from the first status that gives one (a task started
    without one is polled once a second until then)."""
    waits = skip_waits(monkeypatch)
    started = dict(task("working"))
    del started["pollInterval"]
    statuses = [started] + [task("working", f"step {n}") for n in range(10)]
    statuses.append(task("completed"))
    got, peer = call(scripted(statuses))
    assert got.content[0].text == "done"
    assert peer.after("tools/call").count("tasks/get") == 11
    assert waits == [1.0] + [POLL_MS / 1000] * 10
