"""The answer to a sign-in: where the authorization server sends the browser back -- the
loopback callback ``http://127.0.0.1:PORT/callback``, or the address pasted on stdin -- and
what it must carry before its code is redeemed: the ``state`` this sign-in sent, and (RFC
9207) the issuer of the authorization server the browser was sent to, so that an answer from
another server (a mix-up) is refused.

An answer without the ``state`` sent is not this sign-in's (an old tab, or anyone who can
reach the loopback port): it is ignored -- counted, never believed, not even its error --
and the real answer is still awaited (:func:`belongs`). Only an answer with the right
``state`` can end the sign-in, its error included; the error's text is shown as data.
"""

from __future__ import annotations

import contextlib
import html
import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import SocketStream
from anyio.streams.memory import MemoryObjectSendStream

from mcpctl.errors import SignInError
from mcpctl.text import escape_controls, plural

__all__ = [
    "Answer",
    "Expected",
    "belongs",
    "check_answer",
    "failed",
    "ignored_note",
    "parse_answer",
    "read_pasted",
    "serve_callback",
    "shown",
]

MAX_REQUEST = 16 * 1024
MAX_SHOWN = 300  # characters of server-sent text in a message
Say = Callable[[str], None]


@dataclass(frozen=True)
class Answer:
    """What the authorization server sent back through the browser."""

    code: str | None = None
    state: str | None = None
    iss: str | None = None
    error: str | None = None
    error_description: str | None = None
    pasted: bool = False  # pasted on stdin, not brought to the callback


@dataclass
class Expected:
    """What an answer must carry to be the answer to this sign-in.

    ``state``: the one sent (``None`` until the address exists). ``issuer``: the authorization
    server's, from its metadata (``None`` without metadata). ``iss_required``: its metadata
    says (``authorization_response_iss_parameter_supported``) that every answer names it.
    """

    state: str | None = None
    issuer: str | None = None
    iss_required: bool = False


def parse_answer(text: str) -> Answer | None:
    """The answer in a redirect address (or just its query), or ``None`` if it holds none."""
    text = text.strip()
    # Only an address has a scheme: a bare query may hold ``://`` in an unencoded ``iss``.
    address = urlsplit(text)
    query = address.query if address.scheme else text.lstrip("?")
    values = {k: v[0] for k, v in parse_qs(query).items() if v}
    if "code" not in values and "error" not in values:
        return None
    return Answer(
        code=values.get("code"),
        state=values.get("state"),
        iss=values.get("iss"),
        error=values.get("error"),
        error_description=values.get("error_description"),
    )


def shown(text: str, limit: int = MAX_SHOWN) -> str:
    """Server-sent ``text`` fit for a message: one line, controls escaped, at most ``limit``."""
    text = escape_controls(text, keep_newlines=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failed(name: str, message: str, hint: str | None = None) -> SignInError:
    """The error of a sign-in to ``name`` that ended without tokens."""
    return SignInError(f"signing in to {name} failed: {message}", hint=hint)


def belongs(answer: Answer, expected: Expected) -> bool:
    """Whether ``answer`` carries the ``state`` this sign-in sent (anything else is ignored)."""
    return expected.state is not None and answer.state == expected.state


def _problem(answer: Answer, expected: Expected) -> str | None:
    """What keeps ``answer`` from being redeemed, as a word, or ``None``."""
    # The state first: an answer to another sign-in is not trusted with anything, its error
    # included; then the issuer: an answer from another server is not trusted with its error.
    if not belongs(answer, expected):
        return "state"
    if answer.iss is not None and answer.iss != expected.issuer:
        return "issuer"
    if answer.error:
        return "error"
    if answer.iss is None and expected.iss_required:
        return "no_iss"
    return None if answer.code else "no_code"


def check_answer(name: str, answer: Answer, expected: Expected) -> str:
    """The authorization code of ``answer``, if it may be redeemed.

    A caller waiting for the answer skips those that do not :func:`belong <belongs>` first.

    Raises:
        SignInError: the answer is an error, does not carry the ``state`` sent, names another
            authorization server than the one the browser was sent to (or none, when that
            server promised to), or carries no code.
    """
    again = f"run 'mcpctl auth {name}' again and use the address it prints"
    problem = _problem(answer, expected)
    if problem == "issuer":
        wanted = shown(expected.issuer) if expected.issuer else "none (it published no metadata)"
        raise failed(
            name,
            f"the answer comes from another authorization server than the one this sign-in "
            f"went to (iss '{shown(answer.iss or '')}', expected '{wanted}'); nothing was stored",
            hint=again,
        )
    if problem == "error":
        error = shown(answer.error or "")
        detail = f": {shown(answer.error_description)}" if answer.error_description else ""
        if answer.error == "access_denied":
            hint = f"run 'mcpctl auth {name}' again and allow access"
            raise failed(name, f"access was denied ({error}{detail})", hint=hint)
        raise failed(name, f"the authorization server answered {error}{detail}")
    if problem == "state":
        raise failed(
            name,
            "the answer does not carry the state this sign-in sent, so it is not the answer to "
            "it (an old tab, or a forged link); nothing was stored",
            hint=again,
        )
    if problem == "no_iss":
        raise failed(
            name,
            "the answer does not name the authorization server it comes from (no iss), though "
            "that server's metadata says its answers do; nothing was stored",
            hint=again,
        )
    if problem == "no_code":
        raise failed(name, "the answer carries no authorization code")
    assert answer.code is not None
    return answer.code


def ignored_note(callbacks: int, pasted: int = 0) -> str:
    """What is said of the answers ignored (those without the ``state`` sent)."""
    parts = [plural(callbacks, "callback")] if callbacks else []
    if pasted:
        parts.append(f"{pasted} pasted address{'' if pasted == 1 else 'es'}")
    return f"ignored {' and '.join(parts)} without the right state (not this sign-in's)"


# --- the loopback callback ----------------------------------------------------------------

_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>mcpctl</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>{title}</h1><p>{text}</p></body></html>
"""
_REFUSED = "Sign-in refused"
_VERDICTS = {
    None: ("Signed in", "mcpctl has the answer; you can close this tab."),
    "issuer": (_REFUSED, "This answer comes from another server than the one mcpctl sent you to."),
    "state": (_REFUSED, "This answer does not belong to the sign-in mcpctl started."),
    "no_iss": (_REFUSED, "This answer does not name the server it comes from."),
    "no_code": ("Sign-in failed", "The answer carries no authorization code."),
}


async def serve_callback(
    listener: Any, sent: MemoryObjectSendStream[Answer], expected: Expected
) -> None:
    """Answer the browser at ``/callback`` and pass on what it brings, until cancelled."""

    async def handle(stream: SocketStream) -> None:
        with contextlib.suppress(Exception):
            async with stream:
                await _answer_one(stream, sent, expected)

    await listener.serve(handle)


async def _answer_one(
    stream: SocketStream, sent: MemoryObjectSendStream[Answer], expected: Expected
) -> None:
    data = b""
    with anyio.move_on_after(10):
        while b"\r\n\r\n" not in data and len(data) < MAX_REQUEST:
            data += await stream.receive(4096)
    method, _, rest = data.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
    target = rest.partition(" ")[0]
    path, _, query = target.partition("?")
    if method != "GET" or path != "/callback":
        await _respond(stream, "404 Not Found", "Not found", "This is mcpctl's sign-in callback.")
        return
    answer = parse_answer(query) or Answer(error="invalid_request",
                                           error_description="no code in the answer")  # fmt: skip
    problem = _problem(answer, expected)
    if problem == "error":
        title, text = "Sign-in failed", f"The authorization server answered: {answer.error}."
    else:
        title, text = _VERDICTS[problem]
    await _respond(stream, "200 OK", title, text)
    await sent.send(answer)


async def _respond(stream: SocketStream, status: str, title: str, text: str) -> None:
    body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
    await stream.send(head.encode() + body)


# --- a pasted address -----------------------------------------------------------------------


async def read_pasted(sent: MemoryObjectSendStream[Answer], say: Say) -> None:
    """Answers pasted on stdin (read by a daemon thread: a blocked read never holds mcpctl)."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        try:
            for line in sys.stdin:
                lines.put(line)
        except (OSError, ValueError):
            pass
        lines.put(None)

    threading.Thread(target=read, name="mcpctl-paste", daemon=True).start()
    while True:
        try:
            line = lines.get_nowait()
        except queue.Empty:
            await anyio.sleep(0.1)
            continue
        if line is None:
            return  # end of input: the callback may still come
        if not line.strip():
            continue
        answer = parse_answer(line)
        if answer is None:
            say(
                "That is not the address the browser was sent to (it has no code=); paste it again."
            )
            continue
        await sent.send(replace(answer, pasted=True))
