"""Tools of a server: listing them (every page), checking arguments, calling one.

:class:`ToolInfo` and :func:`list_all_tools` (a connected server's tools, every page) live in
:mod:`mcpctl.probe.toolinfo`, which :mod:`mcpctl.probe.health` uses too; they are
importable from here as well.

Arguments are checked against the tool's ``inputSchema`` before anything is sent, so a
missing or mistyped argument is one clear line ("missing required argument timezone
(string)"), not whatever the server makes of it. Results keep every content block whole;
:attr:`ToolCallResult.text` is the text blocks, with a one-line marker for each image, audio
clip or resource.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.config.placeholders import MissingPolicy, SecretSource
from mcpctl.errors import McpctlError, ToolArgumentsError, ToolNotFoundError
from mcpctl.probe.failures import (
    as_exception,
    classify,
    exception_leaves,
    one_line,
    precheck,
    timeout_error,
)
from mcpctl.probe.toolinfo import ToolInfo, list_all_tools
from mcpctl.probe.toolinfo import type_of as _type_of
from mcpctl.text import closest

if TYPE_CHECKING:
    from mcpctl.probe.connect import Connection
    from mcpctl.probe.eras import EraMemory
    from mcpctl.probe.inputrequests import Answerer
    from mcpctl.probe.tasks import TaskOptions

__all__ = [
    "ToolCallResult",
    "ToolInfo",
    "call_tool",
    "check_arguments",
    "content_marker",
    "list_all_tools",
    "list_tools",
]

DEFAULT_CALL_TIMEOUT = 60.0


@dataclass(frozen=True)
class ToolCallResult:
    """What a tool call returned.

    ``text`` is for people: the text blocks, and a marker line for every other block
    (``[image/png, 1,234 bytes]``); ``content`` has every block whole, as sent.
    ``warnings``: requests the server made that mcpctl declined (sampling, roots).
    ``task``: the task the server started, when the call did not wait for it (its handle
    under the wire names: ``taskId``, ``status``, ``pollIntervalMs``...); ``text`` then names it.
    """

    is_error: bool
    text: str
    structured: Any = None
    content: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    task: dict[str, Any] | None = None


async def list_tools(
    name: str,
    entry: ServerEntry,
    *,
    timeout: float | None = None,
    policy: MissingPolicy = "error",
    secrets: SecretSource | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
) -> list[ToolInfo]:
    """Every tool of one server (all pages), in whichever protocol era it speaks
    (``protocol`` and ``eras`` as in :func:`mcpctl.probe.connect.connect`).

    Raises:
        CommandNotFoundError: a stdio server's command is not installed.
        PlaceholderError: a placeholder has no value (``policy="error"``).
        ProbeFailed: the server could not be reached or listed (``reason`` says why).
    """
    from mcpctl.probe.health import probe

    result = await probe(
        name, entry, timeout=timeout, policy=policy, secrets=secrets, protocol=protocol, eras=eras
    )
    if result.error is not None:
        raise as_exception(name, result.error, result.stderr)
    return result.tools


# --- arguments ------------------------------------------------------------------------------


def _describe_error(err: Any, schema: dict[str, Any]) -> str:
    where = ".".join(str(p) for p in err.absolute_path)
    found = schema.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    if err.validator == "required" and not where and isinstance(err.validator_value, list):
        given = err.instance if isinstance(err.instance, dict) else {}
        missing = [str(r) for r in err.validator_value if r not in given]
        return "; ".join(
            f"missing required argument {m} ({_type_of(props.get(m))})" for m in missing
        )
    if err.validator == "additionalProperties" and not where:
        extra = (
            [k for k in err.instance if k not in props] if isinstance(err.instance, dict) else []
        )
        if extra:
            guess = closest(extra[0], list(props))
            return f"unknown argument {extra[0]!r}" + (
                f" (did you mean {guess!r}?)" if guess else ""
            )
    if err.validator == "type":
        got = type(err.instance).__name__
        names = {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean",
                 "list": "an array", "dict": "an object", "NoneType": "null"}  # fmt: skip
        expected = err.validator_value
        wanted = "|".join(expected) if isinstance(expected, list) else str(expected)
        return f"argument {where or '(all)'} must be {wanted}, got {names.get(got, got)}"
    return f"argument {where or '(all)'}: {one_line(err.message, 160)}"


def _typos(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Arguments the schema does not name but that are close to a name it does.

    Only where the schema says nothing of other arguments (as the Python SDK's never do):
    the validator reports every unknown argument when they are forbidden, and they are
    meant when allowed outright. The server would ignore a typo and use the default.
    """
    props = schema.get("properties")
    if not isinstance(props, dict) or {"additionalProperties", "patternProperties"} & set(schema):
        return []
    out = []
    for key in arguments:
        guess = closest(key, list(props)) if key not in props else None
        if guess is not None and guess not in arguments:
            out.append(f"unknown argument {key!r} (did you mean {guess!r}?)")
    return out


def check_arguments(tool: ToolInfo, arguments: dict[str, Any]) -> None:
    """Check ``arguments`` against the tool's input schema before calling it.

    A schema that is itself invalid is not held against the call (the server decides). An
    argument the schema does not name is refused when it looks like a typo of one it does.

    Raises:
        ToolArgumentsError: every way the arguments break the schema, in one message.
    """
    from jsonschema.validators import validator_for

    schema = tool.input_schema
    try:
        cls = validator_for(schema)
        cls.check_schema(schema)
        errors = sorted(cls(schema).iter_errors(arguments), key=lambda e: list(e.absolute_path))
    except Exception:  # an invalid schema, an unresolvable $ref...: the server judges
        return
    described = (_describe_error(e, schema) for e in errors)
    messages = list(dict.fromkeys(m for text in described for m in text.split("; ") if m))
    messages += _typos(schema, arguments)
    if not messages:
        return
    more = f" (and {len(messages) - 3} more)" if len(messages) > 3 else ""
    # Property names are the server's text: both lines stay one short line whatever it sent.
    raise ToolArgumentsError(
        one_line(f"{tool.name}: " + "; ".join(messages[:3]) + more),
        hint=one_line(f"its parameters: {tool.params_summary(20) or 'none'}"),
    )


# --- calls ----------------------------------------------------------------------------------


def _decoded_size(data: object) -> int | None:
    if not isinstance(data, str):
        return None
    return len(data) * 3 // 4 - data[-2:].count("=")


def _bytes(size: int) -> str:
    return f"{size:,} byte{'' if size == 1 else 's'}"


def content_marker(block: dict[str, Any]) -> str:
    """One line standing for a content block that is not text (``[image/png, 1,234 bytes]``)."""
    kind = str(block.get("type", "content"))
    if kind in ("image", "audio"):
        size = _decoded_size(block.get("data"))
        mime = block.get("mimeType") or kind
        return f"[{mime}, {_bytes(size)}]" if size is not None else f"[{mime}]"
    if kind == "resource":
        res = block.get("resource") if isinstance(block.get("resource"), dict) else {}
        assert isinstance(res, dict)
        body = res.get("text") if isinstance(res.get("text"), str) else None
        size = len(body.encode()) if body is not None else _decoded_size(res.get("blob"))
        mime = f" ({res['mimeType']})" if res.get("mimeType") else ""
        bytes_ = f", {_bytes(size)}" if size is not None else ""
        return f"[resource {res.get('uri', '?')}{mime}{bytes_}]"
    if kind == "resource_link":
        return f"[resource link {block.get('uri', '?')}]"
    return f"[{kind} content]"


async def call_tool(
    name: str,
    entry: ServerEntry,
    tool: str,
    arguments: dict[str, Any] | Callable[[ToolInfo], dict[str, Any]] | None = None,
    *,
    timeout: float | None = None,
    policy: MissingPolicy = "error",
    secrets: SecretSource | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
    answer: Answerer | None = None,
    wait: bool = True,
    on_status: Callable[[str], None] | None = None,
) -> ToolCallResult:
    """Call one tool over one connection and return its result.

    ``arguments`` may be a function of the tool's :class:`ToolInfo` (its input schema), to
    build typed arguments from strings. They are checked against the tool's input schema
    before the call. A tool that reports an error returns ``is_error=True``; it does not
    raise. ``timeout`` bounds the whole call (default: the entry's, at least a minute).
    ``protocol`` and ``eras`` are those of :func:`mcpctl.probe.connect.connect`.

    A server that asks for input while the call runs (a stateless server's
    ``input_required`` result, a handshake-era ``elicitation/create``, a task's questions) is
    answered by ``answer`` (:func:`mcpctl.probe.inputrequests.answers_from` fills forms from values
    the user gave); without one, or when it cannot answer, the server is told ``cancel`` and
    the call fails with what was asked. A page to visit reaches ``answer`` only at an https
    address (or http on this machine); any other is declined, with a warning. At most
    :data:`~mcpctl.probe.inputrequests.MAX_INPUT_ROUNDS` rounds of questions are answered.

    A server of the stateless era may run the call as a task (:mod:`mcpctl.probe.tasks`); a
    handshake-era server is asked for one when the tool requires it, or allows it and
    ``wait`` is false (:mod:`mcpctl.probe.legacytasks`). The task is polled to its end within
    ``timeout``, ``on_status`` told its status as it changes (untrusted text), and cancelled
    on the server when the call is given up on (a cancellation, the timeout). With ``wait``
    false the task's handle is returned instead (:attr:`ToolCallResult.task`).

    Raises:
        ToolNotFoundError: the server has no such tool.
        ToolArgumentsError: the arguments do not match the tool's input schema.
        InputRequiredError: the server asked for input nobody gave (every request listed).
        UsageError: an answer could not be given (a value that does not fit its field, a
            mistyped field), or the server kept asking past the rounds allowed.
        CommandNotFoundError: a stdio server's command is not installed.
        PlaceholderError: a placeholder has no value (``policy="error"``).
        ProbeFailed: the server could not be reached, the tool did not answer in time
            (``reason`` ``timeout``), the call failed at the protocol level, or its task
            failed or was cancelled by the server (``mcp_error``, with the server's message).
    """
    early = precheck(entry)
    if early is not None:
        raise as_exception(name, early)
    import anyio

    from mcpctl.probe.connect import connect
    from mcpctl.probe.inputlog import InputLog, elicitation_callback
    from mcpctl.probe.spawn import StdioDiagnostics
    from mcpctl.probe.tasks import TaskOptions, call_with_inputs, guarded

    seconds = timeout if timeout is not None else max(entry.timeout_ms / 1000, DEFAULT_CALL_TIMEOUT)
    diag = StdioDiagnostics() if not entry.is_remote else None
    calling = False
    needs_task = False  # a tool that runs only as a task, of a server that offers none
    log = InputLog()
    try:
        # Guarded: a cancellation (Ctrl-C) cancels the server's task before the connection goes.
        async with guarded() as guard:
            with anyio.fail_after(seconds):
                async with connect(
                    name, entry, timeout=seconds, policy=policy, secrets=secrets,
                    diagnostics=diag, protocol=protocol, eras=eras, tasks=True,
                    elicitation=elicitation_callback(answer, log),
                ) as conn:  # fmt: skip
                    found = {t.name: t for t in await list_all_tools(conn)}
                    if tool not in found:
                        raise ToolNotFoundError(name, tool, sorted(found))
                    args = arguments(found[tool]) if callable(arguments) else dict(arguments or {})
                    check_arguments(found[tool], args)
                    calling = True
                    tasks = TaskOptions(wait, on_status, name, guard)
                    as_task = _as_task(conn, found[tool], args, tasks, seconds)
                    needs_task = as_task is None and found[tool].task_support == "required"
                    res = await call_with_inputs(
                        conn.session, tool, args, answer, log, tasks=tasks, call=as_task
                    )
                    return _result(res, conn, log.warnings)
    except TimeoutError:
        error = timeout_error(seconds, diag, calling=tool if calling else None)
        raise as_exception(name, error, diag.tail() if diag else ()) from None
    except Exception as exc:
        ours = [e for e in exception_leaves(exc) if isinstance(e, McpctlError)]
        if ours:
            raise ours[0] from None
        error = classify(exc, entry, diag, name)
        if needs_task and error.hint is None:  # the server's -32601 says nothing of why
            from mcpctl.probe.legacytasks import REQUIRED_HINT

            error = error._replace(hint=REQUIRED_HINT)
        raise as_exception(name, error, diag.tail() if diag else ()) from None


def _as_task(
    conn: Connection, tool: ToolInfo, args: dict[str, Any], tasks: TaskOptions, seconds: float
) -> Callable[[], Awaitable[Any]] | None:
    """How to call ``tool`` as a handshake-era task, or ``None`` for a plain call."""
    from mcpctl.probe.legacytasks import call_as_task, runs_as_task

    if not runs_as_task(conn, tool, wait=tasks.wait):
        return None
    ttl_ms = int(max(seconds, 60) * 1000)
    return lambda: call_as_task(conn.session, tool.name, args, tasks, ttl_ms=ttl_ms)


def _result(res: Any, conn: Connection, warnings: list[str]) -> ToolCallResult:
    from mcpctl.probe.tasks import TaskHandle, handle_dict

    if isinstance(res, TaskHandle):  # not waited for: the handle is the answer
        task = handle_dict(res, conn.resolved.redact)
        text = f"task {task['taskId']} is {task['status']}"
        return ToolCallResult(False, text, warnings=warnings, task=task)
    lines: list[str] = []
    content: list[dict[str, Any]] = []
    for block in res.content:
        data = block.model_dump(mode="json", by_alias=True, exclude_none=True)
        content.append(data)
        if data.get("type") == "text":
            lines.append(str(data.get("text", "")))
        else:
            lines.append(content_marker(data))
    text = conn.resolved.redact("\n".join(lines))
    return ToolCallResult(bool(res.is_error), text, res.structured_content, content, warnings)
