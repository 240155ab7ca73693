"""Servers that ask for input in the middle of a call, in either protocol era.

A 2026-07-28 server answers ``tools/call`` (or ``prompts/get``, ``resources/read``) with an
``input_required`` result: requests (a form to fill in, or a page to visit) and an opaque
state; the client retries the same call with the answers. A handshake-era server sends
``elicitation/create`` while the call runs. Both reach one :data:`Answerer` as the same
:class:`InputRequest`, so the caller (a person at a terminal, ``--input`` values, a daemon's
own policy) never knows which era asked.

Only the user answers. A form is accepted with values the user gave (:class:`Answers`: a form
that asks for nothing only when told to confirm it) or typed; anything else is unanswered,
the server is told ``cancel`` (nobody was asked, so not ``decline``) and the call fails with
:class:`mcpctl.errors.InputRequiredError`. A page to visit reaches the answerer only at an
``https`` address (or ``http`` on this machine, :func:`visitable`); any other address
(``javascript:``, ``file:``, ``data:``...) is declined with a warning. A call gets
:data:`MAX_INPUT_ROUNDS` rounds of questions in every era, tasks included; after that the
server is told ``cancel`` and the call is stopped (:mod:`mcpctl.probe.inputlog`).

Sampling and roots requests are declined (both are deprecated in 2026-07-28), with a warning.
Everything a server sends here is untrusted text: it is shown escaped by whoever shows it.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from mcpctl.errors import UsageError
from mcpctl.text import closest, escape_controls

__all__ = [
    "MAX_INPUT_ROUNDS",
    "Answerer",
    "Answers",
    "InputAnswer",
    "InputField",
    "InputRequest",
    "answers_from",
    "coerce",
    "request_of",
    "shown",
    "visitable",
]

#: Rounds of input one call may ask for before mcpctl gives up on it: a handshake-era
#: ``elicitation/create``, an ``input_required`` result, a poll that finds a task waiting.
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

    def summary(self) -> str:
        """``colour (string, required: red|green|blue)``: for a person (untrusted text)."""
        what = self.type + (", required" if self.required else "")
        return f"{self.name} ({what}{': ' + '|'.join(self.choices) if self.choices else ''})"


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

    def summary(self) -> str:
        """What was asked, on one line of printable text (the server's text escaped, cut)."""
        message = '"' + shown(self.message, 200) + '"' if self.message else "(no message)"
        if self.mode == "url":
            return f"{message}: a page to visit, {shown(self.url or '', 200)}"
        if not self.fields:
            return f"{message}: a confirmation, no fields (--input-accept accepts it)"
        return f"{message}: " + ", ".join(shown(f.summary(), 120) for f in self.fields)


def shown(text: str, limit: int) -> str:
    """A server's ``text`` as one line of printable characters, at most ``limit`` long."""
    flat = escape_controls(" ".join(text.split()), keep_newlines=False)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def visitable(url: str) -> bool:
    """Whether a page a server sends a person to may be shown: an ``https`` address, or an
    ``http`` one on this machine (``localhost``, a loopback address). Never ``javascript:``,
    ``file:``, ``data:`` or any other scheme a click or a paste could run or read."""
    if any(c.isspace() for c in url) or not url.isprintable():
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return False
    if not host:
        return False
    if parts.scheme == "https":
        return True
    if parts.scheme != "http":
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


class Answers:
    """An :data:`Answerer` that fills forms from values given beforehand (field name -> text,
    as given by ``--input FIELD=VALUE``), and never more than they say.

    A form is accepted when every required field has a value and at least one of its fields
    has one. A form that asks for nothing -- no fields (a yes/no confirmation), or only
    optional ones none of which has a value -- is accepted (empty) only with ``confirm``
    (``--input-accept``). Anything else, a page to visit included, is left unanswered.

    A value named like a field of the form at hand but not one of them (``color`` for
    ``colour``) is refused as soon as that form comes, before anything is accepted; a value no
    form asked for at all is left for the caller to report once the call is over
    (:meth:`unused`, :meth:`check_unused`).
    """

    def __init__(self, values: Mapping[str, str], *, confirm: bool = False) -> None:
        self.values = dict(values)
        self.confirm = confirm
        self.asked: dict[str, None] = {}  # every field name a form asked for, in order
        self.confirmed = 0  # forms accepted empty through ``confirm``

    async def __call__(self, request: InputRequest) -> InputAnswer | None:
        """The answer to ``request`` from the values, or ``None``.

        Raises:
            UsageError: a value does not fit its field, or a value's name looks like a
                mistyped field of this form.
        """
        if request.mode != "form":
            return None
        names = [f.name for f in request.fields]
        self.asked.update(dict.fromkeys(names))
        for name in self.values:
            guess = closest(name, names) if name not in names else None
            if guess is not None and guess not in self.values:
                raise UsageError(
                    f"--input {name}: the form the server sent has no field {name!r} "
                    f"(did you mean {guess!r}?)",
                    hint=f"--input {guess}=VALUE; its fields: {', '.join(names)}",
                )
        if any(f.required and f.name not in self.values for f in request.fields):
            return None
        given = [f for f in request.fields if f.name in self.values]
        if not given:
            if not self.confirm:
                return None
            self.confirmed += 1
            return InputAnswer("accept", {})
        return InputAnswer("accept", {f.name: coerce(f, self.values[f.name]) for f in given})

    def unused(self) -> list[str]:
        """The names of values no form asked for (so far)."""
        return [name for name in self.values if name not in self.asked]

    def check_unused(self) -> None:
        """Raise when a value was given that no form asked for.

        Raises:
            UsageError: naming each such value, with the closest field that was asked for.
        """
        unused = self.unused()
        if not unused:
            return
        asked = list(self.asked)
        notes = []
        for name in unused:
            guess = closest(name, asked)
            notes.append(f"{name!r}" + (f" (did you mean {guess!r}?)" if guess else ""))
        what = (
            "no form asked for it, so it was"
            if len(unused) == 1
            else ("no form asked for them, so they were")
        )
        raise UsageError(
            f"--input {', '.join(notes)}: {what} not sent",
            hint=f"the fields asked for: {', '.join(asked)}" if asked else
            "the server asked for no input: drop --input",
        )  # fmt: skip


def answers_from(values: Mapping[str, str], *, confirm: bool = False) -> Answers:
    """An :data:`Answerer` that fills forms from ``values`` (field name -> text, as given by
    ``--input FIELD=VALUE``); see :class:`Answers`. ``confirm`` accepts a form that asks for
    nothing (no fields, or only optional ones none of which has a value).

    It raises :class:`mcpctl.errors.UsageError` when a value does not fit its field, or when
    its name looks like a mistyped field of the form at hand.
    """
    return Answers(values, confirm=confirm)
