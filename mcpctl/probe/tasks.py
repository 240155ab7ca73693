"""Tool calls a server runs as tasks: the ``io.modelcontextprotocol/tasks`` extension of MCP
2026-07-28 (SEP-2663).

A client that declares the extension (``clientCapabilities.extensions``, on every request of
the stateless era) may get a task handle back from ``tools/call`` instead of its result:
``{"resultType": "task", "taskId", "status", "pollIntervalMs", ...}``. It then polls
``tasks/get`` until the task is ``completed`` (``result``: the CallToolResult), ``failed``
(``error``: a JSON-RPC error) or ``cancelled``. A task in ``input_required`` lists
``inputRequests``, answered with ``tasks/update`` through the same :data:`Answerer` as an
``input_required`` result (each poll that finds it waiting is a round of
:mod:`mcpctl.probe.inputlog`); ``tasks/cancel`` gives up on it. The handshake era has no such
extension: the SDK declares it, and accepts the handle, in the stateless era only.

A task outlives the request that started it, so a call that is given up on (Ctrl-C, its
deadline, a question nobody answers) cancels its task before the connection closes.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import anyio
import anyio.lowlevel
import mcp_types as types

from mcpctl.errors import ProbeFailed, UsageError
from mcpctl.probe.failures import one_line
from mcpctl.probe.inputlog import InputLog, answer_requests, cancelled
from mcpctl.probe.inputrequests import MAX_INPUT_ROUNDS, Answerer
from mcpctl.sdk import ClaimContext, ResultClaim
from mcpctl.text import escape_controls

if TYPE_CHECKING:
    from mcpctl.sdk import ClientSession

__all__ = [
    "EXTENSION",
    "Guard",
    "TaskHandle",
    "TaskOptions",
    "TaskState",
    "await_task",
    "call_with_inputs",
    "cancel_task",
    "declaration",
    "guarded",
    "handle_dict",
    "poll_interval",
    "supervise",
]

EXTENSION = "io.modelcontextprotocol/tasks"
POLL_DEFAULT = 1.0  # seconds, when the server suggests no interval
POLL_MIN = 0.1  # a server asking for less would have us spin
POLL_MAX = 5.0  # a server asking for more would leave a finished task unseen for long
CANCEL_DEADLINE = 2.0  # seconds a given-up call waits for tasks/cancel to be answered


class _TaskFields(types.Result):
    task_id: str
    status: str  # working, input_required, completed, failed, cancelled (or a newer one)
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskHandle(_TaskFields):
    """What ``tools/call`` answers when the server runs the call as a task."""

    result_type: Literal["task"] = "task"


class TaskState(_TaskFields):
    """A task as ``tasks/get`` reports it: its result, error or questions, once it has them."""

    result_type: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: types.InputRequests | None = None


class _TaskParams(types.RequestParams):
    task_id: str


class _UpdateParams(_TaskParams):
    input_responses: types.InputResponses


class _GetTask(types.Request[_TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskParams
    name_param = "taskId"  # SEP-2663: the Mcp-Name header of tasks/* names the task


class _UpdateTask(types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams
    name_param = "taskId"


class _CancelTask(types.Request[_TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskParams
    name_param = "taskId"


class Guard:
    """Holds off a cancellation of the whole call until the task it started is cancelled.

    A cancellation (Ctrl-C) reaches every task under the cancelled scope at once, the
    transport's readers and writers included: ``tasks/cancel`` could no longer be sent. Under
    :func:`guarded` the call runs shielded; a cancellation from outside stops the polling
    first, waits for ``tasks/cancel`` to be answered (at most :data:`CANCEL_DEADLINE`), and
    only then cancels the call, which closes the connection the usual way.
    """

    def __init__(self) -> None:
        self.fired = False
        self._work = anyio.CancelScope()
        self._polling: anyio.CancelScope | None = None
        self._settled = anyio.Event()
        self._done = False

    async def _watch(self) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            if not self._done:  # a scope around the call was cancelled
                self.fired = True
                with anyio.CancelScope(shield=True):
                    if self._polling is not None:
                        self._polling.cancel()
                        with anyio.move_on_after(CANCEL_DEADLINE + 1):
                            await self._settled.wait()
                self._work.cancel()

    async def _stopped(self) -> NoReturn:
        self._settled.set()
        await anyio.sleep_forever()  # the watcher cancels the call now
        raise AssertionError("unreachable")  # pragma: no cover


@contextlib.asynccontextmanager
async def guarded() -> AsyncIterator[Guard]:
    """Run the block so that a cancellation from outside cancels its task first (see
    :class:`Guard`); the block's own exceptions come out as they are.

    Raises:
        the cancellation from outside, once the block has unwound.
    """
    guard = Guard()
    failure: BaseException | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(guard._watch)
        try:
            with anyio.CancelScope(shield=True), guard._work:
                yield guard
        except BaseException as exc:  # re-raised below, not wrapped in an exception group
            failure = exc
        finally:
            guard._done = True
            guard._settled.set()  # a watcher still waiting on the polling need wait no more
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
    if guard.fired:
        await anyio.lowlevel.checkpoint()  # delivers the cancellation from outside


@dataclass(frozen=True)
class TaskOptions:
    """How a call treats a task its server starts.

    ``wait``: poll it to its end (else the handle is the call's answer); ``on_status``: told
    the task's status (and the server's message) as it changes, untrusted text; ``server``:
    the server's name, for errors; ``guard``: from :func:`guarded`, around the connection.
    """

    wait: bool = True
    on_status: Callable[[str], None] | None = None
    server: str = "server"
    guard: Guard | None = None


def declaration() -> tuple[dict[str, dict[str, Any]], dict[str, Sequence[ResultClaim[Any]]]]:
    """The ``extensions`` and ``result_claims`` of a ClientSession that accepts task handles."""
    claim = ResultClaim(result_type="task", model=TaskHandle, resolve=_resolve)
    return {EXTENSION: {}}, {EXTENSION: [claim]}


async def _resolve(handle: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
    # For the SDK's Client: the task polled to its end, with nobody to answer questions.
    log = InputLog()
    return await await_task(ctx.session, handle, ctx.tool_name, None, log, TaskOptions())


def poll_interval(ms: int | None) -> float:
    """Seconds between two polls: the server's ``pollIntervalMs``, within sane bounds."""
    if ms is None or ms < 0:
        return POLL_DEFAULT
    return min(max(ms / 1000, POLL_MIN), POLL_MAX)


def handle_dict(handle: TaskHandle, redact: Callable[[str], str] = str) -> dict[str, Any]:
    """A handle as JSON, under its wire names (``taskId``, ``status``, ``pollIntervalMs``...)."""
    data = handle.model_dump(
        mode="json", by_alias=True, exclude_none=True, exclude={"result_type", "meta"}
    )
    return {k: redact(v) if isinstance(v, str) else v for k, v in data.items()}


async def cancel_task(session: ClientSession, task_id: str) -> None:
    """Send ``tasks/cancel``, waiting at most :data:`CANCEL_DEADLINE` for the answer, even from
    a cancelled scope; a failure to cancel is not the caller's (the task expires anyway)."""
    request = _CancelTask(params=_TaskParams(task_id=task_id))
    with anyio.move_on_after(CANCEL_DEADLINE, shield=True), contextlib.suppress(Exception):
        await session.send_request(request, types.EmptyResult, CANCEL_DEADLINE)


async def await_task(
    session: ClientSession,
    handle: TaskHandle,
    tool: str,
    answer: Answerer | None,
    log: InputLog,
    options: TaskOptions,
) -> types.CallToolResult:
    """Poll a task to its end and return the tool's result, answering its questions.

    Polls every ``pollIntervalMs`` (:func:`poll_interval`) until shortly before the deadline
    of the scopes around the call, which then takes effect as usual; a task given up on (that
    deadline, a cancellation, a question nobody answered) is cancelled with ``tasks/cancel``.

    Raises:
        ProbeFailed: the task failed (``mcp_error``, with the server's message), the server
            cancelled it, or it completed without a result (``protocol_error``).
        InputRequiredError: the task asked for input nobody gave.
        UsageError: an answer could not be given, or the task asked more than
            :attr:`InputLog.max_rounds` rounds.
        MCPError: ``tasks/get`` or ``tasks/update`` was answered with an error.
    """
    follow = lambda: _follow(session, handle, tool, answer, log, options)  # noqa: E731
    return await supervise(session, handle.task_id, follow, options)


async def supervise(
    session: ClientSession,
    task_id: str,
    follow: Callable[[], Awaitable[types.CallToolResult]],
    options: TaskOptions,
) -> types.CallToolResult:
    """Run ``follow`` (which polls task ``task_id`` to its result) until shortly before the
    deadline of the scopes around the call, which then takes effect as usual; a task given up
    on (that deadline, a cancellation, a question nobody answered) is cancelled with
    ``tasks/cancel`` first. Either era's tasks are followed under it.

    Raises:
        what ``follow`` raises, and the cancellation from outside.
    """
    now = anyio.current_time()
    deadline = anyio.current_effective_deadline()
    # Time left at the end to cancel the task in, before the call's own deadline cuts us off.
    grace = min(CANCEL_DEADLINE, max(deadline - now, 0) / 4)
    guard = options.guard
    try:
        with anyio.CancelScope(deadline=deadline - grace) as polling:
            if guard is not None:
                guard._polling = polling
            try:
                return await follow()
            finally:
                if guard is not None:
                    guard._polling = None
    except (anyio.get_cancelled_exc_class(), UsageError):  # given up on: questions too
        await cancel_task(session, task_id)
        raise
    await cancel_task(session, task_id)
    if guard is not None and guard.fired:
        await guard._stopped()
    await anyio.sleep_forever()  # the deadline is only the grace away: it ends the call
    raise AssertionError("unreachable")  # pragma: no cover


async def _follow(
    session: ClientSession,
    handle: TaskHandle,
    tool: str,
    answer: Answerer | None,
    log: InputLog,
    options: TaskOptions,
) -> types.CallToolResult:
    state: _TaskFields = handle
    shown: tuple[str, str | None] | None = None
    asked: set[str] = set()  # a key is answered once, however many polls still list it
    interval = poll_interval(handle.poll_interval_ms)
    while True:
        if options.on_status is not None and shown != (state.status, state.status_message):
            shown = (state.status, state.status_message)
            message = f": {state.status_message}" if state.status_message else ""
            options.on_status(state.status.replace("_", " ") + message)
        await anyio.sleep(interval)
        get = _GetTask(params=_TaskParams(task_id=handle.task_id))
        state = found = await session.send_request(get, TaskState)
        interval = poll_interval(found.poll_interval_ms or handle.poll_interval_ms)
        if found.status in ("completed", "failed", "cancelled"):
            return await _ended(session, found, tool, options.server)
        if found.status != "input_required":
            continue
        listed = found.input_requests or {}
        fresh = {k: r for k, r in listed.items() if k not in asked}
        asked.update(fresh)
        # A round, even with nothing new: a task that stays waiting asks again.
        responses = await answer_requests(fresh, answer, log)
        if log.stopping:  # the server is told cancel, to every question still open
            with contextlib.suppress(Exception):
                await _update(session, handle.task_id, cancelled(listed))
            log.check(tool)
        if responses:
            await _update(session, handle.task_id, responses)


async def _update(session: ClientSession, task_id: str, responses: Mapping[str, Any]) -> None:
    if responses:
        params = _UpdateParams(task_id=task_id, input_responses=dict(responses))
        await session.send_request(_UpdateTask(params=params), types.EmptyResult)


async def _ended(
    session: ClientSession, state: TaskState, tool: str, server: str
) -> types.CallToolResult:
    task = f"task {_shown(state.task_id, 80)}"
    if state.status == "failed":
        error: Mapping[str, Any] = state.error or {}
        message = _shown(str(error.get("message") or "no message"))
        code = error.get("code")
        suffix = f" (error {code})" if isinstance(code, int) and not isinstance(code, bool) else ""
        raise ProbeFailed(server, "mcp_error", f"{tool} failed as {task}: {message}{suffix}")
    if state.status == "cancelled":
        why = f": {_shown(state.status_message)}" if state.status_message else ""
        raise ProbeFailed(server, "mcp_error", f"the server cancelled {task} of {tool}{why}")
    if state.result is None:
        raise ProbeFailed(server, "protocol_error", f"{task} of {tool} completed without a result")
    result = types.CallToolResult.model_validate(state.result, by_name=False)
    if not result.is_error:
        await session.validate_tool_result(tool, result)
    return result


def _shown(text: str, limit: int = 300) -> str:
    """A server's text as one line of printable characters (it is untrusted)."""
    return escape_controls(one_line(text, limit), keep_newlines=False)


async def call_with_inputs(
    session: ClientSession,
    tool: str,
    arguments: dict[str, Any],
    answer: Answerer | None,
    log: InputLog,
    *,
    max_rounds: int = MAX_INPUT_ROUNDS,
    tasks: TaskOptions | None = None,
    call: Callable[[], Awaitable[Any]] | None = None,
) -> Any:
    """``tools/call``, answering each ``input_required`` round through ``answer`` (and, with
    ``log``'s elicitation callback on the session, each handshake-era ``elicitation/create``).

    With ``tasks``, the server may run the call as a task: it is polled to its end (its
    questions answered the same way), or with ``tasks.wait`` false its :class:`TaskHandle` is
    returned instead of a result. (It lives here, not in :mod:`mcpctl.probe.inputrequests`, which
    this module builds on.) ``call`` makes the call another way (a handshake-era task:
    :func:`mcpctl.probe.legacytasks.call_as_task`), under the same watch for questions
    nobody answers.

    A call given up on (:attr:`InputLog.stopping`) tells the server ``cancel`` (a stateless
    server by one more call carrying it) and is ended: a handshake-era one once the server
    asks again or had :data:`~mcpctl.probe.inputlog.STOP_GRACE` seconds to end it.

    Raises:
        InputRequiredError: a request went unanswered.
        UsageError: an answer could not be given (see :class:`~mcpctl.probe.inputrequests.Answers`),
            or the server asked for more than ``max_rounds`` rounds of input.
        and those of :func:`await_task`, for a task.
    """
    log.max_rounds = max_rounds
    found: list[Any] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            try:
                if call is not None:
                    found.append(await call())
                else:
                    found.append(await _call(session, tool, arguments, answer, log, tasks))
            except Exception as exc:  # raised below, not wrapped in an exception group
                failed.append(exc)
            finally:
                tg.cancel_scope.cancel()

        tg.start_soon(run)
        await log.halted()  # the call is given up on while the server keeps it going
        tg.cancel_scope.cancel()
    if failed:
        raise failed[0]
    log.check(tool)
    if not found:  # pragma: no cover -- halted only once given up on, which check raised
        raise UsageError(f"{tool} was given up on")
    return found[0]


async def _call(
    session: ClientSession,
    tool: str,
    arguments: dict[str, Any],
    answer: Answerer | None,
    log: InputLog,
    tasks: TaskOptions | None,
) -> Any:
    claimed = tasks is not None  # a task handle is a claimed (extension) result
    result = await session.call_tool(
        tool, arguments, allow_input_required=True, allow_claimed=claimed
    )
    while isinstance(result, types.InputRequiredResult):
        responses = await answer_requests(result.input_requests or {}, answer, log)
        if log.stopping:  # the server is told cancel: one more call carrying it
            with contextlib.suppress(Exception):
                last = await session.call_tool(
                    tool, arguments, input_responses=responses,
                    request_state=result.request_state, allow_input_required=True,
                    allow_claimed=claimed,
                )  # fmt: skip
                if isinstance(last, TaskHandle):
                    await cancel_task(session, last.task_id)
            log.check(tool)
        result = await session.call_tool(
            tool, arguments, input_responses=responses, request_state=result.request_state,
            allow_input_required=True, allow_claimed=claimed,
        )  # fmt: skip
    if tasks is not None and tasks.wait and isinstance(result, TaskHandle):
        return await await_task(session, result, tool, answer, log, tasks)
    return result
