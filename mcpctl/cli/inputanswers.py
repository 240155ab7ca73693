"""Answering a server that asks for input mid-call: ``--input`` values, then a person.

On a terminal (stdin and stderr both, no ``--json``, not in CI), what ``--input`` (and
``--input-accept``) does not answer is shown: a form is asked for field by field on stderr
(choices as a list, booleans as yes/no, numbers checked), and one that would go back empty --
no fields, or only optional ones left empty -- is a yes/no question whose default is no
(``decline``). A page to visit is printed on a line of its own (never wrapped, so it stays
copyable) and Enter continues. Anywhere else an unanswered request fails the call (exit 2)
with what was asked, and the server is told ``cancel``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import typer

from mcpctl.cli import output
from mcpctl.cli.output import STATE
from mcpctl.errors import UsageError
from mcpctl.probe.inputrequests import Answerer, Answers, InputAnswer, InputField, InputRequest

__all__ = ["answerer", "interactive"]

T = TypeVar("T")


def interactive() -> bool:
    """Whether a person can be asked: a terminal on both ends, no ``--json``, not in CI."""
    if STATE.json or os.environ.get("CI"):
        return False
    return sys.stdin.isatty() and sys.stderr.isatty()


def answerer(given: Answers) -> Answerer:
    """``--input`` values first (``given``); on a terminal, a person for the rest."""
    ask = interactive()

    async def answer(request: InputRequest) -> InputAnswer | None:
        found = await given(request)
        if found is not None or not ask:
            return found
        return await _in_daemon_thread(lambda: _ask(request, given.values))

    return answer


async def _in_daemon_thread(fn: Callable[[], T]) -> T:
    """``fn()`` in a daemon thread: a prompt blocks in input(), and a call cancelled by Ctrl-C
    must be able to exit without waiting for a line nobody will type."""
    import contextlib
    import threading

    import anyio
    import anyio.from_thread
    import anyio.lowlevel

    done = anyio.Event()
    token = anyio.lowlevel.current_token()
    outcome: list[tuple[bool, Any]] = []

    def target() -> None:
        try:
            outcome.append((True, fn()))
        except BaseException as exc:  # handed over to the event loop
            outcome.append((False, exc))
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=target, name="mcpctl-prompt", daemon=True).start()
    await done.wait()
    ok, value = outcome[0]
    if not ok:
        raise value
    result: T = value
    return result


def _ask(request: InputRequest, values: Mapping[str, str]) -> InputAnswer:
    output.stderr(f"The server asks: {output.clean(request.message)}")
    try:
        if request.mode == "url":
            # Its own line, unstyled and unwrapped, so it can be copied whole.
            sys.stderr.write(output.clean(request.url or "", one_line=True) + "\n")
            sys.stderr.flush()
            typer.prompt("Press Enter once done", default="", show_default=False, err=True)
            return InputAnswer("accept")
        content: dict[str, Any] = {}
        for field in request.fields:
            value = _field(field, values.get(field.name))
            if value is not None:
                content[field.name] = value
        if not content:  # nothing filled in: accepted only by a typed yes
            what = "Accept?" if not request.fields else "Accept with every field left empty?"
            if not typer.confirm(what, default=False, err=True):
                return InputAnswer("decline")
        return InputAnswer("accept", content)
    except typer.Abort:  # end of input at a prompt (Ctrl-C reaches the main thread)
        return InputAnswer("cancel")


def _field(field: InputField, given: str | None) -> Any:
    from mcpctl.probe.inputrequests import coerce

    label = output.clean(field.title or field.name, one_line=True)
    if field.description:
        label += f" ({output.clean(field.description, one_line=True)})"
    while True:
        if given is not None:
            text, given = given, None
        else:
            # Booleans too: a text answer, so an optional field can be left empty.
            if field.type == "boolean":
                choices = " [y/n]"
            else:
                shown = (output.clean(c, one_line=True) for c in field.choices)
                choices = f" [{'/'.join(shown)}]" if field.choices else ""
            fallback = "" if field.default is None else str(field.default)
            text = typer.prompt(
                f"{label}{choices}", default=fallback, show_default=bool(fallback), err=True
            )
        if text == "" and not field.required:
            return None
        try:
            return coerce(field, text)
        except UsageError as exc:
            output.warn(exc.message)
