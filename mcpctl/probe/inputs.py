"""Servers that ask for input in the middle of a call, in either protocol era.

A 2026-07-28 server answers ``tools/call`` (or ``prompts/get``, ``resources/read``) with an
``input_required`` result: requests (a form to fill in, or a page to visit) and an opaque
state; the client retries the same call with the answers. A handshake-era server sends
``elicitation/create`` while the call runs. Both reach one :data:`Answerer` as the same
:class:`InputRequest`, so the caller (a person at a terminal, ``--input`` values, a daemon's
own policy) never knows which era asked.

Sampling and roots requests are declined (both are deprecated in 2026-07-28), with a warning.
Everything a server sends here is untrusted text: it is shown escaped by whoever shows it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from mcpctl.errors import InputRequiredError, UsageError

if TYPE_CHECKING:
    import mcp_types as types

__all__ = [
    "MAX_INPUT_ROUNDS",
    "Answerer",
    "InputAnswer",
    "InputField",
    "InputRequest",
    "answer_requests",
    "answers_from",
    "elicitation_callback",
]

#: Rounds of input one call may ask for before mcpctl gives up on it.
MAX_INPUT_ROUNDS = 10

FieldType = Literal["string", "number", "integer", "boolean"]


@dataclass(frozen=True)
class InputField:
    """One field of a form a server asks to be filled in."""

    name: str
    type: FieldType = "string"
    title: str | None = None
    description: str | None = None
    choices: tuple[str, ...] = ()
    required: bool = False
    default: Any = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        data: dict[str, Any] = {"name": self.name, "type": self.type, "required": self.required}
        if self.choices:
            data["choices"] = list(self.choices)
        for key in ("title", "description", "default"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return data


@dataclass(frozen=True)
class InputRequest:
    """What a server asked for: a form (``fields``) or a page to visit (``url``)."""

    key: str
    mode: Literal["form", "url"]
    message: str
    fields: tuple[InputField, ...] = ()
    url: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (as listed in an ``input_required`` error)."""
        data: dict[str, Any] = {"mode": self.mode, "message": self.message}
        if self.mode == "url":
            data["url"] = self.url
        else:
            data["fields"] = [f.to_dict() for f in self.fields]
        return data


@dataclass(frozen=True)
class InputAnswer:
    """The answer to one request: ``accept`` (with the form's values), ``decline`` or
    ``cancel``."""

    action: Literal["accept", "decline", "cancel"] = "accept"
    content: dict[str, Any] = field(default_factory=dict)


#: Answers a request, or returns ``None`` when it cannot (the call then fails with
#: :class:`mcpctl.errors.InputRequiredError` listing what was asked).
Answerer = Callable[[InputRequest], Awaitable[InputAnswer | None]]


def _field(name: str, spec: Any, required: bool) -> InputField:
    spec = spec if isinstance(spec, dict) else {}
    kind = spec.get("type")
    choices = spec.get("enum") or [
        o.get("const") for o in spec.get("oneOf") or [] if isinstance(o, dict)
    ]
    if kind not in ("string", "number", "integer", "boolean"):
        kind = "string"
    return InputField(
        name, kind, _text(spec.get("title")), _text(spec.get("description")),
        tuple(str(c) for c in choices if c is not None) if isinstance(choices, list) else (),
        required, spec.get("default"),
    )  # fmt: skip


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def request_of(key: str, params: Any) -> InputRequest:
    """The :class:`InputRequest` of an elicitation's parameters (form or URL mode)."""
    message = str(getattr(params, "message", ""))
    if getattr(params, "mode", "form") == "url":
        return InputRequest(key, "url", message, url=str(getattr(params, "url", "")))
    schema: Any = getattr(params, "requested_schema", None)
    raw = schema.model_dump(by_alias=True) if hasattr(schema, "model_dump") else schema
    props = raw.get("properties") if isinstance(raw, dict) else None
    required = set(raw.get("required") or []) if isinstance(raw, dict) else set()
    fields = tuple(
        _field(str(name), spec, name in required)
        for name, spec in (props.items() if isinstance(props, dict) else ())
    )
    return InputRequest(key, "form", message, fields)


def coerce(field: InputField, text: str) -> Any:
    """A typed value for ``field`` from what a person typed.

    Raises:
        UsageError: the text is not a value of the field's type or one of its choices.
    """
    if field.choices and text not in field.choices:
        raise UsageError(f"{field.name} must be one of {', '.join(field.choices)}; got {text!r}")
    if field.type == "boolean":
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "y", "1"):
            return True
        if lowered in ("false", "no", "n", "0"):
            return False
        raise UsageError(f"{field.name} must be true or false; got {text!r}")
    if field.type in ("integer", "number"):
        try:
            number = json.loads(text)
        except ValueError:
            number = None
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise UsageError(f"{field.name} must be a number; got {text!r}")
        if field.type == "integer" and not float(number).is_integer():
            raise UsageError(f"{field.name} must be an integer; got {text!r}")
        return int(number) if field.type == "integer" else number
    return text


def answers_from(values: Mapping[str, str]) -> Answerer:
    """An :data:`Answerer` that fills forms from ``values`` (field name -> text, as given by
    ``--input FIELD=VALUE``): a form whose required fields all have a value is accepted;
    anything else (a missing field, a page to visit) is left unanswered.

    A value that does not fit its field raises :class:`mcpctl.errors.UsageError`.
    """

    async def answer(request: InputRequest) -> InputAnswer | None:
        if request.mode != "form":
            return None
        if any(f.required and f.name not in values for f in request.fields):
            return None
        content = {f.name: coerce(f, values[f.name]) for f in request.fields if f.name in values}
        return InputAnswer("accept", content)

    return answer


@dataclass
class InputLog:
    """What a call's input requests came to: the ones nobody answered, and warnings."""

    unanswered: list[InputRequest] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def check(self, tool: str) -> None:
        """Raise when a request went unanswered.

        Raises:
            InputRequiredError: listing every request nobody answered.
        """
        if not self.unanswered:
            return
        asked = [r.to_dict() for r in self.unanswered]
        fields = [f.name for r in self.unanswered for f in r.fields]
        hint = (
            "answer on a terminal, or give each field with --input "
            + " ".join(f"{name}=VALUE" for name in dict.fromkeys(fields))
            if fields
            else "run it on a terminal to visit the page the server names"
        )
        raise InputRequiredError(f"{tool} asks for input nobody gave", asked, hint=hint)


async def _answer(
    key: str, request: Any, answer: Answerer | None, log: InputLog
) -> types.ElicitResult | None:
    import mcp_types as types

    if not isinstance(request, types.ElicitRequest):
        what = "sampling" if isinstance(request, types.CreateMessageRequest) else "roots"
        log.warnings.append(f"the server asked for {what}, which mcpctl declines")
        return None
    asked = request_of(key, request.params)
    answered = await answer(asked) if answer is not None else None
    if answered is None:
        log.unanswered.append(asked)
        return types.ElicitResult(action="cancel")
    content = answered.content if answered.action == "accept" and asked.mode == "form" else None
    return types.ElicitResult(action=answered.action, content=content)


def elicitation_callback(answer: Answerer | None, log: InputLog) -> Any:
    """The SDK session's elicitation callback (the handshake era's ``elicitation/create``)."""
    import mcp_types as types

    async def callback(context: Any, params: Any) -> Any:
        request = types.ElicitRequest(params=params)
        result = await _answer(str(context.request_id), request, answer, log)
        return result if result is not None else types.ErrorData(code=-32600, message="declined")

    return callback


async def answer_requests(
    requests: Mapping[str, Any], answer: Answerer | None, log: InputLog
) -> dict[str, Any]:
    """The answers to a server's input requests, under the keys it gave them; what nobody
    answered is noted in ``log`` (and answered ``cancel``), sampling and roots declined."""
    responses: dict[str, Any] = {}
    for key, request in requests.items():
        found = await _answer(key, request, answer, log)
        if found is not None:
            responses[key] = found
    return responses
