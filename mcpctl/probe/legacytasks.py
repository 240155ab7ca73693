"""Tool calls run as tasks in the handshake era: the tasks of MCP 2025-11-25.

In that revision a server says which requests it can run as tasks
(``capabilities.tasks.requests.tools.call``) and each tool whether it may or must
(``execution.taskSupport``: ``forbidden`` when absent, ``optional``, ``required``). A tool that
requires a task answers a plain ``tools/call`` with -32601. A client asks for a task with the
``task`` param of ``tools/call`` (``{"ttl": ms}``) and gets ``{"task": {taskId, status,
pollInterval, ttl...}}`` back; it polls ``tasks/get`` until the task ends, then fetches the
tool's result with ``tasks/result`` (the CallToolResult, or the JSON-RPC error the call ended
with). A task waiting for input (``input_required``) asks through ``tasks/result``: the server
sends ``elicitation/create`` requests while that call is open, answered like any other
(:func:`mcpctl.probe.inputlog.elicitation_callback`). ``tasks/cancel`` gives up on it.

mcpctl asks for a task when the tool requires one, or allows one and the caller does not wait
(``call --no-wait``), and only of a server that offers tasks for ``tools/call`` (a client must
not, otherwise). The polling, its deadline and the cancellation of a task given up on are
those of the stateless era's tasks (:func:`mcpctl.probe.tasks.supervise`); a task not waited
for is returned as the same :class:`~mcpctl.probe.tasks.TaskHandle` (``ttlMs`` and
``pollIntervalMs``), whichever era started it.

The SDK defines these messages as types only: its check of a ``tools/call`` result knows no
task, so the task-augmented call goes out below that check (:func:`_send_unchecked`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import anyio
import mcp_types as types

from mcpctl.errors import ProbeFailed
from mcpctl.probe.failures import one_line
from mcpctl.probe.tasks import TaskHandle, TaskOptions, poll_interval, supervise
from mcpctl.text import escape_controls

if TYPE_CHECKING:
    from mcpctl.probe.connect import Connection
    from mcpctl.probe.toolinfo import ToolInfo
    from mcpctl.sdk import ClientSession

__all__ = ["REQUIRED_HINT", "call_as_task", "offers_tasks", "runs_as_task"]

#: Why a tool that requires a task cannot be called on a server that offers none.
REQUIRED_HINT = (
    "the tool says it runs only as a task (execution.taskSupport: required), but the server "
    "does not offer tasks for tools/call (capabilities.tasks.requests.tools.call): a client "
    "may not ask it for one; report it to the server's maintainers"
)
DEFAULT_TTL_MS = 60_000  # how long the server keeps a task, at least


class _Task(types.Result):
    """A task as the 2025-11-25 revision sends it (any status: a newer one is kept)."""

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl: int | None = None
    poll_interval: int | None = None


class _Created(types.Result):
    task: _Task


class _TaskParams(types.RequestParams):
    task_id: str


class _GetTask(types.Request[_TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskParams


class _TaskResult(types.Request[_TaskParams, Literal["tasks/result"]]):
    method: Literal["tasks/result"] = "tasks/result"
    params: _TaskParams


def offers_tasks(conn: Connection) -> bool:
    """Whether a handshake-era server runs ``tools/call`` as tasks when asked."""
    tasks = conn.capabilities.tasks if conn.era.name == "legacy" else None
    requests = tasks.requests if tasks is not None else None
    return requests is not None and requests.tools is not None and requests.tools.call is not None


def runs_as_task(conn: Connection, tool: ToolInfo, *, wait: bool) -> bool:
    """Whether to call ``tool`` as a task: it requires one, or allows one and the caller
    does not wait for the result; and the server offers tasks for ``tools/call``."""
    support = tool.task_support
    wanted = support == "required" or (support == "optional" and not wait)
    return wanted and offers_tasks(conn)


async def call_as_task(
    session: ClientSession,
    tool: str,
    arguments: dict[str, Any],
    options: TaskOptions,
    *,
    ttl_ms: int = DEFAULT_TTL_MS,
) -> types.CallToolResult | TaskHandle:
    """``tools/call`` as a task: its result once the task ends, or with ``options.wait``
    false the task's handle.

    Raises:
        ProbeFailed: the server did not start a task (``protocol_error``), the task failed
            (``mcp_error``, with the server's message) or the server cancelled it.
        MCPError: the call or ``tasks/get`` was answered with an error.
    """
    params = {"name": tool, "arguments": arguments, "task": {"ttl": ttl_ms}}
    raw = await _send_unchecked(session, "tools/call", params)
    try:
        task = _Created.model_validate(raw, by_name=False).task
    except ValueError:
        raise ProbeFailed(
            options.server, "protocol_error", f"{tool} was called as a task, but no task came back"
        ) from None
    if not options.wait:
        return TaskHandle(
            task_id=task.task_id, status=task.status, status_message=task.status_message,
            created_at=task.created_at, last_updated_at=task.last_updated_at,
            ttl_ms=task.ttl, poll_interval_ms=task.poll_interval,
        )  # fmt: skip
    return await supervise(
        session, task.task_id, lambda: _follow(session, task, tool, options), options
    )


async def _send_unchecked(
    session: ClientSession, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    """A request sent as ``send_request`` sends it (the session's stamp: its protocol
    version header), its result returned as it came."""
    data: dict[str, Any] = {"method": method, "params": params}
    opts: Any = {}
    # The session's own parts (see the module's docstring): its tests fail if they change.
    session._stamp(data, opts)
    return await session._dispatcher.send_raw_request(method, data["params"], opts)


async def _follow(
    session: ClientSession, task: _Task, tool: str, options: TaskOptions
) -> types.CallToolResult:
    state = task
    shown: tuple[str, str | None] | None = None
    interval = poll_interval(task.poll_interval)
    while True:
        ended = state.status in ("completed", "failed")
        if (
            options.on_status is not None
            and not ended
            and shown != (state.status, state.status_message)
        ):
            shown = (state.status, state.status_message)
            message = f": {state.status_message}" if state.status_message else ""
            options.on_status(state.status.replace("_", " ") + message)
        if ended or state.status == "input_required":
            # The result, or the questions first: tasks/result stays open while they are asked.
            return await _payload(session, state, tool, options.server)
        if state.status == "cancelled":
            why = f": {_shown(state.status_message)}" if state.status_message else ""
            raise ProbeFailed(
                options.server, "mcp_error",
                f"the server cancelled task {_shown(state.task_id, 80)} of {tool}{why}",
            )  # fmt: skip
        await anyio.sleep(interval)
        state = await session.send_request(
            _GetTask(params=_TaskParams(task_id=task.task_id)), _Task
        )
        interval = poll_interval(state.poll_interval or task.poll_interval)


async def _payload(
    session: ClientSession, state: _Task, tool: str, server: str
) -> types.CallToolResult:
    from mcpctl.sdk import MCPError

    request = _TaskResult(params=_TaskParams(task_id=state.task_id))
    try:
        result = await session.send_request(request, types.CallToolResult)
    except MCPError as exc:
        raise ProbeFailed(
            server, "mcp_error",
            f"{tool} failed as task {_shown(state.task_id, 80)}: {_shown(exc.message)} "
            f"(error {exc.code})",
        ) from None  # fmt: skip
    if not result.is_error:
        await session.validate_tool_result(tool, result)
    return result


def _shown(text: str | None, limit: int = 300) -> str:
    """A server's text as one line of printable characters (it is untrusted)."""
    return escape_controls(one_line(text or "", limit), keep_newlines=False)
