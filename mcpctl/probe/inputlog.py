"""One call's questions: who answers them, how many rounds, and giving the call up.

:class:`InputLog` follows the questions of one call, in either era
(:mod:`mcpctl.probe.inputrequests` has what a question is): :func:`elicitation_callback` answers a
handshake-era server's ``elicitation/create`` (each one a round), :func:`answer_requests` one round
of a stateless server's ``input_required`` requests (a result, or a task waiting). A question nobody
answers, an answer that cannot be given, or a round past
:data:`~mcpctl.probe.inputrequests.MAX_INPUT_ROUNDS` gives the call up: the server is told
``cancel`` (to that question and to whatever it asks after), and the caller ends the call
(:meth:`InputLog.halted`) and raises (:meth:`InputLog.check`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from mcpctl.errors import InputRequiredError, McpctlError, UsageError
from mcpctl.probe.inputrequests import (
    MAX_INPUT_ROUNDS,
    Answerer,
    InputAnswer,
    InputRequest,
    request_of,
    shown,
    visitable,
)

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["STOP_GRACE", "InputLog", "answer_requests", "cancelled", "elicitation_callback"]

#: Seconds a call given up on (a question nobody answered, too many rounds) is left to the
#: server to end, once told ``cancel``, before mcpctl ends it; a server that asks again ends
#: it at once.
STOP_GRACE = 2.0

_CANCEL = InputAnswer("cancel")


@dataclass
class InputLog:
    """What a call's input requests came to: the ones nobody answered, warnings, the rounds
    asked, and whether the call is being given up on (:attr:`stopping`).

    Shared by the callbacks of one call, which a handshake-era server may run concurrently:
    one question is answered at a time.
    """

    unanswered: list[InputRequest] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    max_rounds: int = MAX_INPUT_ROUNDS
    rounds: int = 0
    capped: bool = False
    failure: McpctlError | None = None
    _lock: anyio.Lock = field(default_factory=anyio.Lock, repr=False)
    _stopping: anyio.Event = field(default_factory=anyio.Event, repr=False)
    _again: anyio.Event = field(default_factory=anyio.Event, repr=False)

    @property
    def stopping(self) -> bool:
        """Whether the call is given up on: a question nobody answered, an answer that could
        not be given (:attr:`failure`), or more than :attr:`max_rounds` rounds."""
        return self.capped or self.failure is not None or bool(self.unanswered)

    def next_round(self) -> bool:
        """Count one round of questions; ``False`` (and the call given up on) past the cap."""
        self.rounds += 1
        if self.rounds > self.max_rounds:
            self.capped = True
            self._stopping.set()
        return not self.capped

    def give_up(self, failure: McpctlError | None = None) -> None:
        """Give the call up, for ``failure`` when given (raised by :meth:`check`)."""
        if failure is not None and self.failure is None:
            self.failure = failure
        self._stopping.set()

    async def halted(self) -> None:
        """Return once the call is to be ended from outside: it is given up on, and the server
        asked again, or had :data:`STOP_GRACE` seconds to end the call itself."""
        await self._stopping.wait()
        with anyio.move_on_after(STOP_GRACE):
            await self._again.wait()

    def check(self, tool: str) -> None:
        """Raise when the call was given up on.

        Raises:
            UsageError: an answer could not be given (a value that does not fit, a mistyped
                field), or the server asked more than :attr:`max_rounds` rounds.
            InputRequiredError: listing every request nobody answered.
        """
        if self.failure is not None:
            raise self.failure
        if self.unanswered:
            raise _nobody_answered(tool, self.unanswered)
        if self.capped:
            raise UsageError(
                f"{tool} kept asking for input: {self.max_rounds} rounds answered, and it asks "
                "again; the server was told cancel and the call stopped",
                hint="the server may not accept the answers given; check them, or call it "
                "elsewhere",
            )


def _nobody_answered(tool: str, requests: list[InputRequest]) -> InputRequiredError:
    fields = [f.name for r in requests for f in r.fields]
    ways = []
    if fields:
        given = " ".join(f"--input {name}=VALUE" for name in dict.fromkeys(fields))
        ways.append(f"give each field with {given}")
    if any(r.mode == "form" and not any(f.required for f in r.fields) for r in requests):
        ways.append("accept a form that asks for nothing with --input-accept")
    hint = "answer on a terminal, or " + "; or ".join(ways)
    if not ways:
        hint = "run it on a terminal to visit the page the server names"
    return InputRequiredError(
        f"{tool} asks for input nobody gave; the server was told cancel",
        [r.to_dict() for r in requests],
        hint=hint,
        details=[f"asked: {r.summary()}" for r in requests],
    )


async def _answer(
    key: str, request: Any, answer: Answerer | None, log: InputLog, *, counted: bool = True
) -> types.ElicitResult | None:
    import mcp_types as types

    if not isinstance(request, types.ElicitRequest):
        what = "sampling" if isinstance(request, types.CreateMessageRequest) else "roots"
        log.warnings.append(f"the server asked for {what}, which mcpctl declines")
        return None
    asked = request_of(key, request.params)
    async with log._lock:  # one question at a time, whoever answers it
        if not counted:  # a handshake-era request: a round of its own
            if log.stopping:  # asked again after being told cancel: the call ends now
                log._again.set()
            log.next_round()
        found = await _settle(asked, answer, log)
    if found.action != "accept" or asked.mode != "form":
        return types.ElicitResult(action=found.action)
    return types.ElicitResult(action="accept", content=found.content)


async def _settle(asked: InputRequest, answer: Answerer | None, log: InputLog) -> InputAnswer:
    if log.stopping:  # given up on: whatever comes now is cancelled
        return _CANCEL
    if asked.mode == "url" and not visitable(asked.url or ""):
        log.warnings.append(
            f'the server asked to open "{shown(asked.url or "", 200)}", which mcpctl declined: '
            "only an https page (or http on this machine) is shown"
        )
        return InputAnswer("decline")
    try:
        found = await answer(asked) if answer is not None else None
    except McpctlError as exc:
        log.give_up(exc)
        return _CANCEL
    if found is None:
        log.unanswered.append(asked)
        log.give_up()
        return _CANCEL
    return found


def elicitation_callback(answer: Answerer | None, log: InputLog) -> Any:
    """The SDK session's elicitation callback (the handshake era's ``elicitation/create``):
    each request is a round of :class:`InputLog`."""
    import mcp_types as types

    async def callback(context: Any, params: Any) -> Any:
        request = types.ElicitRequest(params=params)
        result = await _answer(str(context.request_id), request, answer, log, counted=False)
        return result if result is not None else types.ErrorData(code=-32600, message="declined")

    return callback


async def answer_requests(
    requests: Mapping[str, Any], answer: Answerer | None, log: InputLog
) -> dict[str, Any]:
    """The answers to one round of a server's input requests, under the keys it gave them;
    what nobody answered is noted in ``log`` (and answered ``cancel``), sampling and roots
    declined. A round past the cap, or one that gives the call up, is answered ``cancel``
    throughout."""
    log.next_round()
    responses: dict[str, Any] = {}
    for key, request in requests.items():
        found = await _answer(key, request, answer, log)
        if found is not None:
            responses[key] = found
    return cancelled(responses) if log.stopping else responses


def cancelled(requests: Mapping[str, Any]) -> dict[str, Any]:
    """``cancel`` to every elicitation of ``requests`` (what a call given up on answers)."""
    import mcp_types as types

    return {
        key: types.ElicitResult(action="cancel")
        for key, request in requests.items()
        if isinstance(request, types.ElicitRequest | types.ElicitResult)
    }
