"""``sign_in`` in this process: what mcpctl says, sends and stores, and each way a sign-in
fails -- against a server in a thread of the test (tests/auth/auththread.py), which starts at
once, keeps every request it gets, and misbehaves on demand. The same sign-ins against the
OAuth test server (the SDK's own server side, a subprocess) are in ``test_signin_server.py``.

The person at the browser is a thread: it reads the address mcpctl says, opens it without
following the authorization server's redirect, and delivers the answer to the loopback
callback (:class:`Person`), or pastes it into mcpctl's stdin (:class:`Paster`). Tokens go to
the in-memory test keyring. The end-to-end tests (mcpctl as a subprocess) are in
``test_signin_flow.py``; mutation testing sees only these.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import anyio
import httpx2
import mcp_types
import pytest

from mcpctl._version import __version__
from mcpctl.auth.answer import ignored_note
from mcpctl.auth.oauthtokens import load_record
from mcpctl.auth.secrets import SecretStore
from mcpctl.auth.signin import (
    DEFAULT_TIMEOUT,
    PASTED_IGNORED,
    REQUEST_TIMEOUT,
    SignedIn,
    SignIn,
    _duration,
    has_display,
    sign_in,
    step_limit,
)
from mcpctl.config.model import AuthConfig
from mcpctl.errors import OutsideError, SignInError, UsageError
from tests.auth.auththread import AuthServer, auth_server
from tests.conftest import MemoryKeyring, free_port

TIMEOUT = 30.0
#: The sign-in's own time limit against the server in a thread, which answers in
#: milliseconds: a broken sign-in that waits for an answer that never comes fails sooner.
WAIT = 10.0


class Person:
    """The person at the browser: opens the address mcpctl says (in a thread, as a browser
    would) and delivers the answer to the callback, after ``before`` answers (each a function
    of the real one) when there are any; or does nothing (``act=False``)."""

    def __init__(self, act: bool = True, before: tuple[Callable[[str], str], ...] = ()) -> None:
        self.act = act
        self.before = before
        self.lines: list[str] = []
        self.address: str | None = None
        self.errors: list[BaseException] = []
        self.thread: threading.Thread | None = None

    def __call__(self, line: str) -> None:
        self.lines.append(line)
        if line.startswith("http") and self.address is None:
            self.address = line
            if self.act:
                self.thread = threading.Thread(target=self._browse, args=(line,), daemon=True)
                self.thread.start()

    def _browse(self, address: str) -> None:
        try:
            r = httpx2.get(address, follow_redirects=False, timeout=10)
            answer = r.headers["location"]
            for change in self.before:
                httpx2.get(change(answer), timeout=10)
            httpx2.get(answer, timeout=10)
        except BaseException as exc:  # the test sees it
            self.errors.append(exc)

    def done(self) -> None:
        if self.thread is not None:
            self.thread.join(TIMEOUT)
        assert not self.errors, self.errors


def run(req: SignIn, person: Person) -> SignedIn:
    try:
        return anyio.run(sign_in, req, person)
    finally:
        person.done()


def forged_state(answer: str) -> str:
    parts = urlsplit(answer)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    query["state"] = "not-the-state-mcpctl-sent"
    return urlunsplit(parts._replace(query=urlencode(query)))


def query_of(address: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(address).query).items()}


def test_an_unreachable_server(memory_keyring: MemoryKeyring) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    req = SignIn("gone", url, AuthConfig(type="oauth"), browser=False, timeout=TIMEOUT)
    with pytest.raises(OutsideError) as raised:
        run(req, Person())
    assert raised.value.message.startswith(f"cannot reach {url}: ConnectError: ")


def test_step_limit_and_durations() -> None:
    auth = AuthConfig(type="oauth")
    assert step_limit(SignIn("s", "http://x", auth, timeout=5)) == 5
    assert step_limit(SignIn("s", "http://x", auth)) == REQUEST_TIMEOUT == 30.0
    assert step_limit(SignIn("s", "http://x", auth, timeout=30)) == 30
    assert DEFAULT_TIMEOUT == 300.0
    assert [_duration(s) for s in (1, 1.5, 59, 60, 90, 120, 300)] == [
        "1 s", "1.5 s", "59 s", "1 min", "90 s", "2 min", "5 min"]  # fmt: skip


def test_has_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert not has_display()
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert has_display()
    monkeypatch.delenv("WAYLAND_DISPLAY")
    monkeypatch.setenv("DISPLAY", ":0")
    assert has_display()
    monkeypatch.setenv("DISPLAY", "")
    assert not has_display()
    monkeypatch.setattr("sys.platform", "darwin")
    assert has_display()


# --- against a server in this process (tests/auth/auththread.py): what mcpctl sends --------


@pytest.fixture
def fast(memory_keyring: MemoryKeyring) -> Iterator[AuthServer]:
    with auth_server() as server:
        yield server


def fast_request(server: AuthServer, **fields: Any) -> SignIn:
    auth = fields.pop("auth", AuthConfig(type="oauth"))
    fields.setdefault("timeout", WAIT)
    fields.setdefault("browser", False)
    return SignIn("docs", server.url, auth, **fields)


def test_the_request_that_starts_the_sign_in_is_an_mcp_initialize(fast: AuthServer) -> None:
    signed = run(fast_request(fast), Person())
    assert signed.record.access_token in fast.valid
    posts = fast.requests("POST", "/mcp")
    assert len(posts) == 2  # refused without a token, then sent again with the new one
    for post in posts:
        assert post.json == {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION, "capabilities": {},
                "clientInfo": {"name": "mcpctl", "version": __version__},
            },
        }  # fmt: skip
        assert post.headers["accept"] == "application/json, text/event-stream"
    assert posts[1].headers["authorization"] == f"Bearer {signed.record.access_token}"
    assert fast.requests("DELETE", "/mcp") == []  # no session was opened
    assert fast.requests("GET", "/mcp") == []


def redirect_port(person: Person) -> int:
    assert person.address is not None
    return int(urlsplit(query_of(person.address)["redirect_uri"]).port or 0)


def test_what_is_said_and_where_the_answer_is_awaited(fast: AuthServer) -> None:
    person = Person()
    run(fast_request(fast), person)
    port = redirect_port(person)
    assert port >= 1024  # a free port the system picked
    assert person.lines == [
        "To sign in to docs, open this address in a browser:",
        person.address,
        f"Waiting for the answer at http://127.0.0.1:{port}/callback",
    ]
    sent = query_of(person.address or "")
    assert sent["redirect_uri"] == f"http://127.0.0.1:{port}/callback"
    assert sent["code_challenge_method"] == "S256" and sent["state"]
    assert sent["resource"] == fast.url
    assert "scope" not in sent  # none asked for, none advertised
    [registration] = fast.requests("POST", "/register")
    body = registration.json
    assert body["redirect_uris"] == [f"http://127.0.0.1:{port}/callback"]
    assert body["token_endpoint_auth_method"] == "none" and "scope" not in body
    [token] = fast.requests("POST", "/token")
    assert token.form["grant_type"] == "authorization_code"
    assert token.form["redirect_uri"] == f"http://127.0.0.1:{port}/callback"


def test_a_session_the_initialize_opened_is_ended(fast: AuthServer) -> None:
    fast.session = "session-1"
    run(fast_request(fast), Person())
    [end] = fast.requests("DELETE", "/mcp")
    assert end.headers["mcp-session-id"] == "session-1"
    assert fast.seen[-1] is end  # after the initialize that opened it


def test_a_failing_session_end_is_no_failure(fast: AuthServer) -> None:
    fast.session = "session-1"
    fast.delete_status = None  # the server hangs up: an HTTP error, not the sign-in's
    signed = run(fast_request(fast), Person())
    assert signed.record.access_token in fast.valid
    assert len(fast.requests("DELETE", "/mcp")) == 1


@pytest.mark.parametrize("status", [404, 405])
def test_a_server_that_takes_no_post_is_asked_for_its_event_stream(
    fast: AuthServer, status: int
) -> None:
    fast.post_status = status
    signed = run(fast_request(fast), Person())
    gets = fast.requests("GET", "/mcp")
    assert len(gets) == 2 and all(g.headers["accept"] == "text/event-stream" for g in gets)
    assert gets[1].headers["authorization"] == f"Bearer {signed.record.access_token}"
    assert len(fast.requests("POST", "/mcp")) == 1  # the sign-in happens on the event stream


def test_an_sse_server_named_so_gets_no_post(fast: AuthServer) -> None:
    signed = run(fast_request(fast, transport="sse"), Person())
    assert fast.requests("POST", "/mcp") == []
    gets = fast.requests("GET", "/mcp")
    assert [g.headers["accept"] for g in gets] == ["text/event-stream"] * 2
    assert signed.record.access_token


def test_a_streamable_http_server_s_404_is_not_taken_for_sse(fast: AuthServer) -> None:
    fast.post_status = 404
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast, transport="streamable-http"), Person(act=False))
    assert raised.value.message == (
        "signing in to docs failed: the server answered HTTP 404 without asking for a "
        "sign-in, so there is nothing to sign in to"
    )
    assert fast.requests("GET", "/mcp") == []


@pytest.mark.parametrize("status", [401, 403])
def test_a_server_that_refuses_the_new_tokens(fast: AuthServer, status: int) -> None:
    fast.mcp_status = status
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast), Person())
    assert raised.value.message == (
        f"signing in to docs failed: the server refused the new sign-in (HTTP {status})"
    )
    assert raised.value.hint is None


def test_a_token_endpoint_that_refuses_the_code(fast: AuthServer) -> None:
    fast.token_answer = (400, b"refused\x1b[31m")
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast), Person())
    assert raised.value.message == (  # the server's words, escaped
        "signing in to docs failed: Token exchange failed (400): refused\\x1b[31m"
    )
    assert load_record("docs", SecretStore()) is None


def test_a_token_endpoint_that_trickles_is_given_up_on(fast: AuthServer) -> None:
    fast.trickle = True
    with pytest.raises(OutsideError) as raised:
        run(fast_request(fast, timeout=1), Person())
    assert raised.value.message == (f"POST {fast.base}/token did not answer in full within 1 s")
    assert raised.value.hint == (
        "try again later; a server that trickles its answer is given up on"
    )


def test_a_token_answer_too_large_is_refused(fast: AuthServer) -> None:
    from mcpctl.httpclient import MAX_RESPONSE

    fast.token_answer = (200, b" " * (MAX_RESPONSE + 1))
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast), Person())
    assert raised.value.message == (
        f"signing in to docs failed: POST {fast.base}/token answered with more than 4 MiB"
    )


def test_a_step_that_times_out_in_the_http_client_is_named(
    fast: AuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def slow(client: Any, request: SignIn) -> int:
        raise httpx2.ReadTimeout("timed out", request=httpx2.Request("POST", fast.url + "?x#y"))

    monkeypatch.setattr("mcpctl.auth.signin._touch", slow)
    with pytest.raises(OutsideError) as raised:
        run(fast_request(fast, timeout=7), Person(act=False))
    assert raised.value.message == f"POST {fast.url} did not answer within 7 s"
    assert raised.value.hint is None


def test_a_failure_s_target() -> None:
    from mcpctl.auth.signin import _target

    assert _target(httpx2.ReadTimeout("timed out")) == "the server"
    request = httpx2.Request("GET", "http://127.0.0.1:9/.well-known/x?a=1#f")
    assert _target(httpx2.ReadTimeout("t", request=request)) == (
        "GET http://127.0.0.1:9/.well-known/x"
    )
    long = httpx2.Request("POST", "http://127.0.0.1:9/" + "p" * 400)  # shown cut short
    assert _target(httpx2.ReadTimeout("t", request=long)) == (
        "POST http://127.0.0.1:9/" + "p" * (300 - 25) + "…"
    )


# --- the browser, a pasted address, and no answer -------------------------------------------


@pytest.mark.parametrize(("browser", "display", "opened"),
                         [(True, True, True), (True, False, False), (False, True, False)])  # fmt: skip
def test_the_browser_is_opened_when_asked_and_there_is_a_display(
    fast: AuthServer, monkeypatch: pytest.MonkeyPatch, browser: bool, display: bool, opened: bool
) -> None:
    import webbrowser

    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    if display:
        monkeypatch.setenv("DISPLAY", ":0")
    else:
        monkeypatch.delenv("DISPLAY", raising=False)
    seen: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, *args, **kwargs: seen.append(url))
    person = Person()
    run(fast_request(fast, browser=browser), person)
    assert seen == ([person.address] if opened else [])


class Paster(Person):
    """The person at the browser who pastes the answer into mcpctl's stdin (a pipe) instead
    of letting the browser bring it to the callback; ``forged`` first pastes a line that is
    no address and an answer without the state sent, and waits for mcpctl to say it was
    ignored; ``real=False``:
    never pastes the real one."""

    def __init__(self, forged: bool = False, real: bool = True) -> None:
        super().__init__()
        self.forged = forged
        self.real = real
        self.ignored = threading.Event()
        read, self.pipe = os.pipe()
        self.stdin = os.fdopen(read)

    def __call__(self, line: str) -> None:
        if line == PASTED_IGNORED:
            self.ignored.set()
        super().__call__(line)

    def _browse(self, address: str) -> None:
        try:
            answer = httpx2.get(address, follow_redirects=False, timeout=10).headers["location"]
            if self.forged:
                os.write(self.pipe, b"not an address\n")  # read (and said) in order
                os.write(self.pipe, (forged_state(answer) + "\n").encode())
                assert self.ignored.wait(WAIT), "the forged answer was not ignored"
            if self.real:
                os.write(self.pipe, (answer + "\n").encode())
        except BaseException as exc:  # the test sees it
            self.errors.append(exc)

    def done(self) -> None:
        super().done()
        os.close(self.pipe)
        self.stdin.close()


def test_a_pasted_answer_is_taken(fast: AuthServer, monkeypatch: pytest.MonkeyPatch) -> None:
    paster = Paster()
    monkeypatch.setattr("sys.stdin", paster.stdin)
    signed = run(fast_request(fast, paste=True), paster)
    assert signed.record.access_token in fast.valid and signed.warnings == []
    assert paster.lines[2] == (
        f"Waiting for the answer at http://127.0.0.1:{redirect_port(paster)}/callback -- or "
        "paste here the address it was sent to, then press Enter"
    )


def test_a_pasted_answer_without_the_state_is_said_counted_and_ignored(
    fast: AuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    paster = Paster(forged=True)
    monkeypatch.setattr("sys.stdin", paster.stdin)
    signed = run(fast_request(fast, paste=True), paster)
    assert signed.warnings == [ignored_note(0, 1)]
    assert paster.lines.count(PASTED_IGNORED) == 1
    assert paster.lines[3:] == [
        "That is not the address the browser was sent to (it has no code=); paste it again.",
        PASTED_IGNORED,
    ]
    assert PASTED_IGNORED == (
        "That address does not carry the state this sign-in sent, so it is not its answer: "
        "ignored. Paste the address of this sign-in's browser tab."
    )


def test_no_answer_in_time_after_a_pasted_one_without_the_state(
    fast: AuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    paster = Paster(forged=True, real=False)
    monkeypatch.setattr("sys.stdin", paster.stdin)
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast, paste=True, timeout=1.5), paster)
    assert raised.value.message == (
        f"signing in to docs failed: no answer within 1.5 s ({ignored_note(0, 1)})"
    )
    assert fast.requests("POST", "/token") == []


def test_answers_to_the_callback_without_the_state_are_counted_not_said(
    fast: AuthServer,
) -> None:
    person = Person(before=(forged_state, forged_state))
    signed = run(fast_request(fast), person)
    assert signed.warnings == [ignored_note(2, 0)]
    assert PASTED_IGNORED not in person.lines
    assert len(fast.requests("POST", "/token")) == 1


def test_no_answer_in_time_redeems_nothing(fast: AuthServer) -> None:
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast, timeout=1), Person(act=False))
    assert raised.value.message == "signing in to docs failed: no answer within 1 s"
    assert raised.value.hint == "run it again, and finish the sign-in in the browser in time"
    assert fast.requests("POST", "/token") == []
    assert load_record("docs", SecretStore()) is None


# --- the client, the scopes, the issuer, the port -------------------------------------------


def test_the_entry_s_own_client_is_used_without_a_registration(fast: AuthServer) -> None:
    auth = AuthConfig(type="oauth", client_id="entry-client", client_secret="s3cret")
    person = Person()
    run(fast_request(fast, auth=auth), person)
    assert fast.requests("POST", "/register") == []
    assert query_of(person.address or "")["client_id"] == "entry-client"
    [token] = fast.requests("POST", "/token")
    assert token.form["client_id"] == "entry-client"
    assert token.form["client_secret"] == "s3cret"  # client_secret_post
    assert token.form["redirect_uri"] == f"http://127.0.0.1:{redirect_port(person)}/callback"


def test_a_registration_with_the_entry_s_secret_says_so(fast: AuthServer) -> None:
    auth = AuthConfig(type="oauth", client_secret="s3cret")
    run(fast_request(fast, auth=auth), Person())
    [registration] = fast.requests("POST", "/register")
    assert registration.json["token_endpoint_auth_method"] == "client_secret_post"
    assert fast.requests("POST", "/token")[0].form["client_secret"] == "registered-secret"


CIMD = "https://client.example.com/mcpctl.json"


@pytest.mark.parametrize(("asked", "entry"), [(CIMD, None), (None, CIMD), (CIMD, "https://x.example/other.json")])  # fmt: skip
def test_a_client_metadata_document_is_the_client(
    fast: AuthServer, asked: str | None, entry: str | None
) -> None:
    fast.metadata = {"client_id_metadata_document_supported": True}
    auth = AuthConfig(type="oauth", client_metadata_url=entry)
    person = Person()
    signed = run(fast_request(fast, auth=auth, client_metadata_url=asked), person)
    assert query_of(person.address or "")["client_id"] == CIMD  # the command line's first
    assert fast.requests("POST", "/register") == []
    assert signed.record.client_metadata_url == CIMD


def test_a_client_metadata_url_that_is_not_https_is_refused(fast: AuthServer) -> None:
    with pytest.raises(UsageError) as raised:
        run(fast_request(fast, client_metadata_url="http://client.example.com/c.json"),
            Person(act=False))  # fmt: skip
    assert raised.value.message == (
        "client_metadata_url must be a valid HTTPS URL with a non-root pathname, got: "
        "http://client.example.com/c.json"
    )
    assert fast.seen == []


@pytest.mark.parametrize(("asked", "entry", "sent"), [
    ((), ("mcp:read",), "mcp:read"),
    (("mcp:read", "mcp:write"), ("mcp:read",), "mcp:read mcp:write"),
])  # fmt: skip
def test_the_scopes_asked_for(
    fast: AuthServer, asked: tuple[str, ...], entry: tuple[str, ...], sent: str
) -> None:
    person = Person()
    auth = AuthConfig(type="oauth", scopes=entry)
    signed = run(fast_request(fast, auth=auth, scopes=asked), person)
    assert query_of(person.address or "")["scope"] == sent
    assert fast.requests("POST", "/register")[0].json["scope"] == sent
    assert signed.record.scope == sent


def test_an_answer_must_name_the_server_that_promised_to(fast: AuthServer) -> None:
    fast.metadata = {"authorization_response_iss_parameter_supported": True}
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast), Person())
    assert raised.value.message.startswith(
        "signing in to docs failed: the answer does not name the authorization server"
    )
    assert raised.value.hint == "run 'mcpctl auth docs' again and use the address it prints"
    assert fast.requests("POST", "/token") == []
    fast.iss = fast.base
    signed = run(fast_request(fast), Person())
    assert signed.record.access_token in fast.valid


def test_an_answer_from_another_server_is_refused(fast: AuthServer) -> None:
    fast.iss = "https://login.evil.example"
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast), Person())
    assert raised.value.message == (
        "signing in to docs failed: the answer comes from another authorization server than "
        f"the one this sign-in went to (iss 'https://login.evil.example', expected "
        f"'{fast.base}'); nothing was stored"
    )
    assert fast.requests("POST", "/token") == []


def test_a_taken_callback_port_is_said_before_anything_is_asked(fast: AuthServer) -> None:
    import errno

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        auth = AuthConfig(type="oauth", callback_port=port)
        with pytest.raises(UsageError) as raised:
            run(fast_request(fast, auth=auth), Person())
    assert raised.value.message == (
        f"cannot listen for the sign-in's answer on 127.0.0.1:{port}: "
        f"{os.strerror(errno.EADDRINUSE)}"
    )
    assert raised.value.hint == "free that port, or change the entry's auth.callback_port"
    assert fast.seen == []


def test_the_entry_s_callback_port(fast: AuthServer, callback_port: int) -> None:
    person = Person()
    run(fast_request(fast, auth=AuthConfig(type="oauth", callback_port=callback_port)), person)
    assert redirect_port(person) == callback_port


def test_a_new_sign_in_replaces_the_stored_one(fast: AuthServer) -> None:
    first = run(fast_request(fast), Person())
    second = run(fast_request(fast), Person())  # its tokens still valid: signed in anew
    assert second.record.access_token != first.record.access_token
    assert len(fast.requests("POST", "/token")) == 2
    stored = load_record("docs", SecretStore())
    assert stored is not None and stored.access_token == second.record.access_token


def test_client_credentials_at_a_server_in_this_process(fast: AuthServer) -> None:
    auth = AuthConfig(type="oauth", client_id="bot", client_secret="s3cret", scopes=("a",))
    person = Person(act=False)
    signed = run(fast_request(fast, auth=auth, grant="client_credentials", scopes=("b", "c")),
                 person)  # fmt: skip
    assert person.lines == [] and signed.warnings == []
    [token] = fast.requests("POST", "/token")
    assert token.form["grant_type"] == "client_credentials" and token.form["scope"] == "b c"
    assert token.form["client_id"] == "bot" and token.form["client_secret"] == "s3cret"
    assert signed.record.grant == "client_credentials" and signed.record.scope == "b c"
    run(fast_request(fast, auth=auth, grant="client_credentials"), person)
    assert fast.requests("POST", "/token")[1].form["scope"] == "a"
    auth = AuthConfig(type="oauth", client_id="bot", client_secret="s3cret")
    run(fast_request(fast, auth=auth, grant="client_credentials"), person)
    assert "scope" not in fast.requests("POST", "/token")[2].form


@pytest.mark.parametrize("missing", ["client_id", "client_secret"])
def test_client_credentials_without_the_entry_s_client_ask_nothing(
    fast: AuthServer, missing: str
) -> None:
    fields = {"client_id": "bot", "client_secret": "s3cret", missing: None}
    with pytest.raises(UsageError) as raised:
        run(fast_request(fast, auth=AuthConfig(type="oauth", **fields),
                         grant="client_credentials"), Person(act=False))  # fmt: skip
    assert raised.value.message == (
        "the client-credentials grant needs the client_id and client_secret of docs's auth"
    )
    assert raised.value.hint == 'set "client_id" and "client_secret": "${VAR}" in its "auth"'
    assert fast.seen == []


def test_the_entry_s_headers_go_with_the_mcp_request(fast: AuthServer) -> None:
    run(fast_request(fast, headers={"X-Team": "docs-team"}), Person())
    assert [p.headers.get("x-team") for p in fast.requests("POST", "/mcp")] == ["docs-team"] * 2
    # Not to the authorization server (metadata, registration, token): they are the MCP server's.
    assert all("x-team" not in s.headers for s in fast.seen if s.path != "/mcp")


@pytest.mark.parametrize("grant", ["authorization_code", "client_credentials"])
def test_the_tokens_go_to_the_secret_store_given(fast: AuthServer, grant: str) -> None:
    own = SecretStore(MemoryKeyring())
    auth = AuthConfig(type="oauth", client_id="bot", client_secret="s3cret")
    signed = run(fast_request(fast, auth=auth, grant=grant, secrets=own), Person())
    stored = load_record("docs", own)
    assert stored is not None and stored.access_token == signed.record.access_token
    assert load_record("docs", SecretStore()) is None


def test_client_credentials_refused_by_the_token_endpoint(fast: AuthServer) -> None:
    fast.token_answer = (401, {"error": "invalid_client"})
    auth = AuthConfig(type="oauth", client_id="bot", client_secret="s3cret")
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast, auth=auth, grant="client_credentials"), Person(act=False))
    assert raised.value.message == (
        'signing in to docs failed: Token exchange failed (401): {"error": "invalid_client"}'
    )


def test_the_callback_listens_on_127_0_0_1_alone(fast: AuthServer) -> None:
    reached: list[bool] = []

    class Prober(Person):
        def _browse(self, address: str) -> None:
            port = int(urlsplit(query_of(address)["redirect_uri"]).port or 0)
            with socket.socket() as probe:
                probe.settimeout(10)
                reached.append(probe.connect_ex(("127.0.0.2", port)) == 0)
            super()._browse(address)

    run(fast_request(fast), Prober())
    assert reached == [False]


def test_the_scopes_asked_for_are_kept_whatever_the_server_advertises(fast: AuthServer) -> None:
    fast.scopes_supported = ["mcp:read", "mcp:write", "admin"]
    person = Person()
    auth = AuthConfig(type="oauth", scopes=("mcp:read",))
    run(fast_request(fast, auth=auth), person)
    assert query_of(person.address or "")["scope"] == "mcp:read"


def test_a_browser_that_does_not_return_does_not_hold_a_cancelled_sign_in(
    fast: AuthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import webbrowser

    monkeypatch.setattr("sys.platform", "darwin")
    opened, release, returned = threading.Event(), threading.Event(), threading.Event()

    def stuck(url: str, *args: Any, **kwargs: Any) -> bool:
        opened.set()
        release.wait(WAIT)
        returned.set()
        return True

    monkeypatch.setattr(webbrowser, "open", stuck)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(sign_in, fast_request(fast, browser=True), lambda line: None)
            await anyio.to_thread.run_sync(opened.wait, TIMEOUT)
            tg.cancel_scope.cancel()  # Ctrl-C while the browser is being opened

    try:
        anyio.run(main)
        assert opened.is_set() and not returned.is_set()
    finally:
        release.set()


def test_the_entry_s_client_is_stored_with_this_sign_in_s_redirect(fast: AuthServer) -> None:
    person = Person()
    auth = AuthConfig(type="oauth", client_id="entry-client")
    signed = run(fast_request(fast, auth=auth), person)
    client = signed.record.client
    assert client is not None and client["client_id"] == "entry-client"
    assert client["redirect_uris"] == [f"http://127.0.0.1:{redirect_port(person)}/callback"]


def test_a_registration_is_kept_for_the_same_callback(fast: AuthServer, callback_port: int) -> None:
    auth = AuthConfig(type="oauth", callback_port=callback_port)
    run(fast_request(fast, auth=auth), Person())
    run(fast_request(fast, auth=auth), Person())
    assert len(fast.requests("POST", "/register")) == 1
    run(fast_request(fast), Person())  # another port: another redirect URI, registered anew
    assert len(fast.requests("POST", "/register")) == 2


def test_a_refused_client_metadata_url_frees_the_callback_port(
    fast: AuthServer, callback_port: int
) -> None:
    auth = AuthConfig(type="oauth", callback_port=callback_port)
    with pytest.raises(UsageError):
        run(fast_request(fast, auth=auth, client_metadata_url="http://c.example/c.json"),
            Person(act=False))  # fmt: skip
    with socket.socket() as again:
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", callback_port))
        again.listen()


def test_client_credentials_the_server_refuses_at_once(fast: AuthServer) -> None:
    fast.mcp_status = 401
    auth = AuthConfig(type="oauth", client_id="bot", client_secret="s3cret")
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast, auth=auth, grant="client_credentials"), Person(act=False))
    assert raised.value.message == (
        "signing in to docs failed: the server refused the new sign-in (HTTP 401)"
    )


@pytest.mark.parametrize("grant", ["authorization_code", "client_credentials"])
def test_an_unusable_token_is_refused_naming_the_server(fast: AuthServer, grant: str) -> None:
    fast.token_answer = (200, {"access_token": "", "token_type": "Bearer"})
    auth = AuthConfig(type="oauth", client_id="bot", client_secret="s3cret")
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast, auth=auth, grant=grant), Person())
    assert raised.value.message == (
        "signing in to docs failed: the authorization server sent an unusable access_token: "
        "it is empty; nothing was stored"
    )
    assert load_record("docs", SecretStore()) is None


def test_client_credentials_store_the_entry_s_client_without_its_secret(fast: AuthServer) -> None:
    auth = AuthConfig(type="oauth", client_id="bot", client_secret="s3cret")
    signed = run(fast_request(fast, auth=auth, grant="client_credentials"), Person(act=False))
    assert signed.record.client_source == "configured"
    assert signed.record.client is not None and signed.record.client["client_id"] == "bot"
    assert "s3cret" not in json.dumps(signed.record.client)


def test_without_the_authorization_server_s_metadata(fast: AuthServer) -> None:
    fast.published = False  # the flow falls back to the endpoints at the server's root
    signed = run(fast_request(fast), Person())
    assert signed.record.access_token in fast.valid
    fast.iss = fast.base  # an answer that names a server, when none published its metadata
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast), Person())
    assert raised.value.message == (
        "signing in to docs failed: the answer comes from another authorization server than "
        f"the one this sign-in went to (iss '{fast.base}', expected 'none (it published no "
        "metadata)'); nothing was stored"
    )


def test_a_denied_sign_in_stores_nothing(fast: AuthServer) -> None:
    fast.deny = True
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast), Person())
    assert (
        raised.value.message == "signing in to docs failed: access was denied (access_denied: no)"
    )
    assert raised.value.hint == "run 'mcpctl auth docs' again and allow access"
    assert fast.requests("POST", "/token") == []
    assert load_record("docs", SecretStore()) is None


def test_a_server_that_asks_for_no_sign_in(fast: AuthServer) -> None:
    fast.open = 200
    with pytest.raises(SignInError) as raised:
        run(fast_request(fast), Person(act=False))
    assert raised.value.message == (
        "signing in to docs failed: the server answered HTTP 200 without asking for a "
        "sign-in, so there is nothing to sign in to"
    )
    assert raised.value.hint == (
        "check the entry's url; a server that needs no sign-in needs no auth"
    )
    assert [s.path for s in fast.seen] == ["/mcp"]


def test_no_answer_in_time_after_a_callback_without_the_state(fast: AuthServer) -> None:
    class Forger(Person):  # brings the callback an answer to another sign-in, and no other
        def _browse(self, address: str) -> None:
            try:
                answer = httpx2.get(address, follow_redirects=False, timeout=10)
                httpx2.get(forged_state(answer.headers["location"]), timeout=10)
            except BaseException as exc:  # the test sees it
                self.errors.append(exc)

    with pytest.raises(SignInError) as raised:
        run(fast_request(fast, timeout=1.5), Forger())
    assert raised.value.message == (
        f"signing in to docs failed: no answer within 1.5 s ({ignored_note(1, 0)})"
    )


def test_a_sign_in_stores_the_metadata_it_discovered(fast: AuthServer) -> None:
    """The authorization server's and the resource's metadata found by this sign-in go to the
    store with its tokens (a connecting command later needs no discovery)."""
    run(fast_request(fast), Person())
    stored = load_record("docs", SecretStore())
    assert stored is not None and stored.auth_server is not None and stored.resource is not None
    assert stored.auth_server["issuer"] == fast.base
    assert stored.auth_server["token_endpoint"] == f"{fast.base}/token"
    assert stored.resource["resource"] == fast.url
    assert stored.resource["authorization_servers"] == [fast.base]
