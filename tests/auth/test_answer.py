"""The answer to a sign-in, in-process: parsing the redirect address, what keeps an answer
from being redeemed (each in words), the loopback callback page (a real socket), and
addresses pasted on stdin."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx2
import pytest

from mcpctl.auth import answer as answer_module
from mcpctl.auth.answer import (
    MAX_REQUEST,
    MAX_SHOWN,
    Answer,
    Expected,
    belongs,
    check_answer,
    failed,
    ignored_note,
    parse_answer,
    read_pasted,
    serve_callback,
    shown,
)
from mcpctl.errors import SignInError

ISSUER = "http://127.0.0.1:9"
AGAIN = "run 'mcpctl auth docs' again and use the address it prints"


def test_parse_answer() -> None:
    assert parse_answer("http://127.0.0.1:5/callback?code=c1&state=s1&iss=I") == Answer(
        code="c1", state="s1", iss="I"
    )
    assert parse_answer("  ?error=access_denied&error_description=no+way&state=s ") == Answer(
        error="access_denied", error_description="no way", state="s"
    )
    assert parse_answer("code=c2") == Answer(code="c2")
    assert parse_answer("code=&state=s") is None  # an empty code is none
    assert parse_answer("http://127.0.0.1:5/callback?state=s1") is None
    assert parse_answer("https://example.com/?x=1#code=c") is None
    assert parse_answer("") is None
    assert parse_answer("Xcode=c") is None  # only a leading "?" is dropped
    # A bare query is not an address, even with an unencoded issuer in it.
    assert parse_answer("code=c&state=s&iss=https://as.example") == Answer(
        code="c", state="s", iss="https://as.example"
    )
    assert parse_answer("?iss=https://as.example&code=c") == Answer(
        code="c", iss="https://as.example"
    )


def test_shown() -> None:
    assert shown("plain") == "plain"
    assert shown("a\nb\x1b") == "a\\nb\\x1b"
    assert shown("x" * MAX_SHOWN) == "x" * MAX_SHOWN
    assert shown("x" * (MAX_SHOWN + 1)) == "x" * (MAX_SHOWN - 1) + "…"
    assert shown("abcdef", 4) == "abc…"


def test_failed_and_belongs() -> None:
    error = failed("docs", "it broke", "try again")
    assert isinstance(error, SignInError)
    assert (error.message, error.hint) == ("signing in to docs failed: it broke", "try again")
    assert failed("docs", "x").hint is None
    assert belongs(Answer(state="s"), Expected(state="s"))
    assert not belongs(Answer(state="t"), Expected(state="s"))
    assert not belongs(Answer(state=None), Expected(state=None))  # no address yet


def refused(answer: Answer, expected: Expected) -> SignInError:
    with pytest.raises(SignInError) as caught:
        check_answer("docs", answer, expected)
    return caught.value


def test_each_refusal_in_words() -> None:
    expected = Expected(state="s", issuer=ISSUER)
    state = refused(Answer(code="c", state="t"), expected)
    assert state.message == (
        "signing in to docs failed: the answer does not carry the state this sign-in sent, so "
        "it is not the answer to it (an old tab, or a forged link); nothing was stored"
    )
    assert state.hint == AGAIN
    # An answer to another sign-in is not believed, not even its error.
    assert refused(Answer(error="access_denied", state="t"), expected).message == state.message
    issuer = refused(Answer(code="c", state="s", iss="https://evil.example"), expected)
    assert issuer.message == (
        "signing in to docs failed: the answer comes from another authorization server than "
        f"the one this sign-in went to (iss 'https://evil.example', expected '{ISSUER}'); "
        "nothing was stored"
    )
    assert issuer.hint == AGAIN
    denied = refused(Answer(error="access_denied", error_description="the user said no",
                            state="s"), expected)  # fmt: skip
    assert denied.message == (
        "signing in to docs failed: access was denied (access_denied: the user said no)"
    )
    assert denied.hint == "run 'mcpctl auth docs' again and allow access"
    other = refused(Answer(error="server_error", state="s", iss=ISSUER), expected)
    assert (
        other.message == "signing in to docs failed: the authorization server answered server_error"
    )
    assert other.hint is None
    no_code = refused(Answer(state="s"), expected)
    assert no_code.message == "signing in to docs failed: the answer carries no authorization code"
    assert no_code.hint is None
    strict = Expected(state="s", issuer=ISSUER, iss_required=True)
    no_iss = refused(Answer(code="c", state="s"), strict)
    assert no_iss.message == (
        "signing in to docs failed: the answer does not name the authorization server it "
        "comes from (no iss), though that server's metadata says its answers do; nothing was "
        "stored"
    )
    assert no_iss.hint == AGAIN
    unknown = refused(Answer(code="c", state="s", iss=ISSUER), Expected(state="s"))
    assert "expected 'none (it published no metadata)'); nothing was stored" in unknown.message
    assert check_answer("docs", Answer(code="c", state="s", iss=ISSUER), strict) == "c"
    assert check_answer("docs", Answer(code="c", state="s"), expected) == "c"


def test_ignored_note() -> None:
    assert ignored_note(1) == "ignored 1 callback without the right state (not this sign-in's)"
    assert ignored_note(2, 1) == (
        "ignored 2 callbacks and 1 pasted address without the right state (not this sign-in's)"
    )
    assert ignored_note(0, 3) == (
        "ignored 3 pasted addresses without the right state (not this sign-in's)"
    )


def callback(paths: list[str], expected: Expected) -> tuple[list[httpx2.Response], list[Answer]]:
    """Each path asked of a real loopback callback in turn: the pages, and what it passed on."""

    async def run() -> tuple[list[httpx2.Response], list[Answer]]:
        send, receive = anyio.create_memory_object_stream[Answer](10)
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)  # noqa: S610 -- anyio's
        pages: list[httpx2.Response] = []
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve_callback, listener, send, expected)
                async with httpx2.AsyncClient(timeout=10) as http:
                    for path in paths:
                        pages.append(await http.get(f"http://127.0.0.1:{port}{path}"))
                tg.cancel_scope.cancel()
        send.close()
        return pages, [answer async for answer in receive]

    return anyio.run(run)


def test_the_callback_page_says_what_became_of_the_answer() -> None:
    expected = Expected(state="s", issuer=ISSUER)
    pages, answers = callback([
        "/callback?code=c&state=s",
        "/callback?code=c&state=other",
        "/callback?code=c&state=s&iss=https%3A%2F%2Fevil.example",
        "/callback?error=access_denied&state=s",
        "/callback?state=s&code=",
        "/elsewhere?code=c&state=s",
        "/callback?code=c&state=s&next=?",
    ], expected)  # fmt: skip
    assert [p.status_code for p in pages] == [200, 200, 200, 200, 200, 404, 200]
    titles = [p.text.split("<h1>")[1].split("</h1>")[0] for p in pages]
    # No code at all: it cannot carry the state either (the invalid_request put in its place).
    assert titles == ["Signed in", "Sign-in refused", "Sign-in refused", "Sign-in failed",
                      "Sign-in refused", "Not found", "Signed in"]  # fmt: skip
    assert "you can close this tab" in pages[0].text
    assert "does not belong to the sign-in mcpctl started" in pages[1].text
    assert "comes from another server than the one mcpctl sent you to" in pages[2].text
    assert "The authorization server answered: access_denied." in pages[3].text
    assert "<p>This is mcpctl&#x27;s sign-in callback.</p>" in pages[5].text
    assert pages[0].headers["cache-control"] == "no-store"
    assert pages[0].headers["content-type"] == "text/html; charset=utf-8"
    assert answers == [
        Answer(code="c", state="s"),
        Answer(code="c", state="other"),
        Answer(code="c", state="s", iss="https://evil.example"),
        Answer(error="access_denied", state="s"),
        Answer(error="invalid_request", error_description="no code in the answer"),
        Answer(code="c", state="s"),
    ]


def test_a_callback_with_an_unencoded_issuer_is_this_sign_ins() -> None:
    # Some servers send ``iss`` as it is: ``://`` in the query must not lose the state.
    pages, answers = callback([f"/callback?code=c&state=s&iss={ISSUER}"], Expected("s", ISSUER))
    assert "you can close this tab" in pages[0].text
    assert answers == [Answer(code="c", state="s", iss=ISSUER)]


def test_a_callback_without_iss_when_required_is_refused_on_the_page() -> None:
    pages, _ = callback(["/callback?code=c&state=s"], Expected("s", ISSUER, iss_required=True))
    assert "does not name the server it comes from" in pages[0].text


def test_the_callback_page_escapes_what_it_shows() -> None:
    pages, _ = callback(["/callback?error=%3Cb%3Ex&state=s"], Expected("s", ISSUER))
    assert "answered: &lt;b&gt;x." in pages[0].text and "<b>x" not in pages[0].text


def test_pasted_addresses_are_read_until_the_end_of_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(
        "\n   \nnot an address\nhttp://127.0.0.1:5/callback?code=c&state=s\n"
    ))  # fmt: skip
    said: list[str] = []

    async def run() -> list[Answer]:
        send, receive = anyio.create_memory_object_stream[Answer](10)
        with anyio.fail_after(30):
            await read_pasted(send, said.append)
        send.close()
        return [answer async for answer in receive]

    assert anyio.run(run) == [Answer(code="c", state="s", pasted=True)]
    assert said == [
        "That is not the address the browser was sent to (it has no code=); paste it again."
    ]


# --- what mutation testing found unpinned ----------------------------------------------------


class ClockedAnyio:
    """Stands in for ``anyio`` in the module: records the time limits and sleeps asked for,
    and gives each limit ``limit`` seconds instead (``None``: none)."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.limits: list[float] = []
        self.sleeps: list[float] = []

    def move_on_after(self, delay: float) -> anyio.CancelScope:
        self.limits.append(delay)
        return anyio.move_on_after(self.limit)

    async def sleep(self, delay: float) -> None:
        self.sleeps.append(delay)
        await anyio.sleep(delay)

    def __getattr__(self, name: str) -> Any:
        return getattr(anyio, name)


def raw_callback(
    client: Callable[[int], Awaitable[bytes]], expected: Expected
) -> tuple[bytes, list[Answer]]:
    """``client(port)`` run against a real loopback callback: what it returns (the page it
    read), and what the callback passed on."""

    async def run() -> tuple[bytes, list[Answer]]:
        send, receive = anyio.create_memory_object_stream[Answer](10)
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)  # noqa: S610 -- anyio's
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve_callback, listener, send, expected)
                page = await client(port)
                tg.cancel_scope.cancel()
        send.close()
        return page, [answer async for answer in receive]

    return anyio.run(run)


async def read_all(stream: anyio.abc.SocketStream) -> bytes:
    page = b""
    with contextlib.suppress(anyio.EndOfStream):
        while True:
            page += await stream.receive()
    return page


def test_a_request_arriving_in_pieces_is_read_whole() -> None:
    # Longer than one read (4096 bytes): its end comes in a later piece than its start.
    pages, answers = callback([f"/callback?code=c&state=s&pad={'x' * 6000}"], Expected("s"))
    assert "you can close this tab" in pages[0].text
    assert answers == [Answer(code="c", state="s")]


def test_a_request_is_read_up_to_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """At ``MAX_REQUEST`` bytes the callback reads no more: it answers, though the request has
    not ended (its time limit made endless: only the size stops the reading)."""
    monkeypatch.setattr(answer_module, "anyio", ClockedAnyio(None))
    start = b"GET /callback?code=c&state=s&pad="
    request = start + b"x" * (MAX_REQUEST - len(start))

    async def client(port: int) -> bytes:
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(request)
            return await read_all(stream)

    page, answers = raw_callback(client, Expected("s"))
    assert page.startswith(b"HTTP/1.1 200 OK\r\n") and b"Signed in" in page
    assert answers == [Answer(code="c", state="s")]


def test_a_request_that_never_ends_is_answered_when_its_time_is_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The callback gives a request 10 s (shortened here) and answers what it has by then."""
    clock = ClockedAnyio(0.05)
    monkeypatch.setattr(answer_module, "anyio", clock)

    async def client(port: int) -> bytes:
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(b"GET /callback?code=c&state=s HTTP/1.1\r\n")
            return await read_all(stream)

    page, answers = raw_callback(client, Expected("s"))
    assert page.startswith(b"HTTP/1.1 200 OK\r\n") and b"Signed in" in page
    assert answers == [Answer(code="c", state="s")]
    assert clock.limits == [10]


def test_a_connection_that_fails_does_not_stop_the_callback() -> None:
    async def client(port: int) -> bytes:
        # Hung up before sending anything: reading the request fails, the callback goes on.
        stream = await anyio.connect_tcp("127.0.0.1", port)
        await stream.aclose()
        async with httpx2.AsyncClient(timeout=10) as http:
            page = await http.get(f"http://127.0.0.1:{port}/callback?code=c&state=s")
        return page.content

    page, answers = raw_callback(client, Expected("s"))
    assert b"you can close this tab" in page
    assert answers == [Answer(code="c", state="s")]


def test_a_pasted_address_is_awaited_by_a_daemon_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stdin is read by a daemon thread (a read blocked on it never holds mcpctl at exit), and
    a line pasted later is taken within a tenth of a second of its coming."""
    clock = ClockedAnyio(None)
    monkeypatch.setattr(answer_module, "anyio", clock)
    read_end, write_end = os.pipe()
    stdin = open(read_end, encoding="utf-8")  # noqa: SIM115 -- closed below
    monkeypatch.setattr(sys, "stdin", stdin)
    before = set(threading.enumerate())
    said: list[str] = []

    async def run() -> tuple[threading.Thread, list[Answer]]:
        send, receive = anyio.create_memory_object_stream[Answer](10)
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(read_pasted, send, said.append)
                while not (new := set(threading.enumerate()) - before):
                    await anyio.sleep(0.01)
                [reader] = new
                # Nothing pasted yet: it waits.
                os.write(write_end, b"http://127.0.0.1:5/callback?code=c&state=s\n")
                first = await receive.receive()
                os.close(write_end)  # the end of input ends the reading
        send.close()
        return reader, [first, *[answer async for answer in receive]]

    try:
        reader, answers = anyio.run(run)
    finally:
        with contextlib.suppress(OSError):
            os.close(write_end)
        stdin.close()
    assert reader.daemon
    reader.join(10)
    assert not reader.is_alive()
    assert answers == [Answer(code="c", state="s", pasted=True)]
    assert said == [] and clock.sleeps and set(clock.sleeps) == {0.1}
