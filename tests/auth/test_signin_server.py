"""``sign_in`` in this process against the OAuth test server (tests/servers/oauth_server.py, a
subprocess built from the SDK's own server-side auth): the same sign-ins as
``test_signin.py`` -- the callback, a paste, the scopes and the callback port, answers
without the state sent, no answer in time, a denial, an SSE server, the client-credentials
grant -- against a real authorization server rather than the server in a thread.

Each test starts that server (a second or more each), so mutation testing of
``auth/signin.py`` runs ``test_signin.py`` alone, whose server in a thread starts at once.
"""

from __future__ import annotations

import socket
from typing import Any

import anyio
import httpx2
import pytest

from mcpctl.auth.answer import ignored_note
from mcpctl.auth.oauthtokens import load_record
from mcpctl.auth.secrets import SecretStore
from mcpctl.auth.signin import SignIn, sign_in
from mcpctl.config.model import AuthConfig
from mcpctl.errors import SignInError, UsageError
from tests.auth.conftest import TTL, OAuthServer
from tests.auth.test_signin import TIMEOUT, Person, forged_state, query_of, run
from tests.conftest import MemoryKeyring


def request(server: OAuthServer, **fields: Any) -> SignIn:
    auth = fields.pop("auth", AuthConfig(type="oauth"))
    fields.setdefault("timeout", TIMEOUT)
    return SignIn("docs", server.url, auth, browser=False, **fields)


def test_a_sign_in_through_the_callback_stores_the_tokens(
    oauth_server: Any, memory_keyring: MemoryKeyring
) -> None:
    server = oauth_server()
    person = Person()
    signed = anyio.run(sign_in, request(server), person)
    person.done()
    record = signed.record
    assert record.access_token and record.access_token.startswith("mcpctltestAT")
    assert record.refresh_token and record.refresh_token.startswith("mcpctltestRT")
    assert record.server_url == server.url and record.grant == "authorization_code"
    assert signed.warnings == []
    stored = load_record("docs", SecretStore())
    assert stored is not None and stored.access_token == record.access_token
    assert person.address is not None
    port = int(query_of(person.address)["redirect_uri"].split(":")[2].split("/")[0])
    assert person.lines == [
        "To sign in to docs, open this address in a browser:",
        person.address,
        f"Waiting for the answer at http://127.0.0.1:{port}/callback",
    ]
    sent = query_of(person.address)
    assert sent["redirect_uri"] == f"http://127.0.0.1:{port}/callback"
    assert sent["code_challenge_method"] == "S256" and sent["state"]
    assert server.stats()["code_exchanges"] == 1


def test_paste_is_offered_when_asked_for(
    oauth_server: Any, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    # Nothing is pasted (stdin ends at once): the callback still answers.
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    server = oauth_server()
    person = Person()
    run(request(server, paste=True), person)
    assert person.lines[2].endswith(
        "/callback -- or paste here the address it was sent to, then press Enter"
    )


def test_the_scopes_asked_for_and_the_entry_s_callback_port(
    oauth_server: Any, memory_keyring: MemoryKeyring, callback_port: int
) -> None:
    server = oauth_server()
    auth = AuthConfig(type="oauth", scopes=("mcp:read",), callback_port=callback_port)
    person = Person()
    signed = run(request(server, auth=auth), person)
    assert person.address is not None
    sent = query_of(person.address)
    assert sent["redirect_uri"] == f"http://127.0.0.1:{callback_port}/callback"
    assert sent["scope"] == "mcp:read" and signed.record.scope == "mcp:read"
    # The scopes of the command line come before the entry's.
    person = Person()
    run(request(oauth_server(), auth=auth, scopes=("mcp:read", "mcp:write")), person)
    assert person.address is not None
    assert query_of(person.address)["scope"] == "mcp:read mcp:write"


def test_a_taken_callback_port_is_said(oauth_server: Any, memory_keyring: MemoryKeyring) -> None:
    server = oauth_server()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        auth = AuthConfig(type="oauth", callback_port=port)
        with pytest.raises(UsageError) as raised:
            run(request(server, auth=auth), Person())
    assert raised.value.message.startswith(
        f"cannot listen for the sign-in's answer on 127.0.0.1:{port}: "
    )
    assert raised.value.hint == "free that port, or change the entry's auth.callback_port"
    assert "registrations" not in server.stats()


def test_answers_without_the_state_sent_are_ignored_and_counted(
    oauth_server: Any, memory_keyring: MemoryKeyring
) -> None:
    server = oauth_server()
    person = Person(before=(forged_state, forged_state))
    signed = run(request(server), person)
    assert signed.warnings == [ignored_note(2, 0)]
    assert signed.record.access_token


def test_no_answer_in_time(oauth_server: Any, memory_keyring: MemoryKeyring) -> None:
    server = oauth_server()
    person = Person(before=(forged_state,))
    person.act = True

    # The forged answer arrives; the real one never does.
    def only_forged(address: str) -> None:
        try:
            r = httpx2.get(address, follow_redirects=False, timeout=10)
            httpx2.get(forged_state(r.headers["location"]), timeout=10)
        except BaseException as exc:
            person.errors.append(exc)

    person._browse = only_forged  # type: ignore[method-assign]
    with pytest.raises(SignInError) as raised:
        run(request(server, timeout=1.5), person)
    assert raised.value.message.endswith(f"no answer within 1.5 s ({ignored_note(1, 0)})"), (
        raised.value.message
    )
    assert raised.value.hint == "run it again, and finish the sign-in in the browser in time"
    assert load_record("docs", SecretStore()) is None
    silent = Person(act=False)
    with pytest.raises(SignInError) as raised:
        run(request(server, timeout=1), silent)
    assert raised.value.message.endswith("no answer within 1 s"), raised.value.message


def test_a_denied_sign_in_stores_nothing(oauth_server: Any, memory_keyring: MemoryKeyring) -> None:
    server = oauth_server()
    server.control("deny", on="1")
    with pytest.raises(SignInError) as raised:
        run(request(server), Person())
    assert "denied" in raised.value.message
    assert load_record("docs", SecretStore()) is None


def test_an_sse_server(oauth_server: Any, memory_keyring: MemoryKeyring) -> None:
    server = oauth_server(TTL, False, None, "--sse")
    for transport in ("sse", None):  # named, or found by the 404/405 of a POST
        signed = run(request(server, transport=transport), Person())
        assert signed.record.access_token


def test_client_credentials(oauth_server: Any, memory_keyring: MemoryKeyring) -> None:
    server = oauth_server(client="build-bot:s3cret-of-the-bot")
    auth = AuthConfig(type="oauth", client_id="build-bot", client_secret="s3cret-of-the-bot",
                      scopes=("mcp:read",))  # fmt: skip
    person = Person(act=False)
    signed = run(request(server, auth=auth, grant="client_credentials"), person)
    assert person.lines == []  # no browser, nothing to say
    assert signed.record.grant == "client_credentials" and signed.record.access_token
    assert signed.record.scope == "mcp:read" and signed.warnings == []
    assert server.stats()["client_credentials"] == 1
    # The scopes of the command line come before the entry's.
    scopes = ("mcp:read", "mcp:write")
    signed = run(request(server, auth=auth, grant="client_credentials", scopes=scopes), person)
    assert signed.record.scope == "mcp:read mcp:write"
    stored = load_record("docs", SecretStore())
    assert stored is not None and stored.access_token == signed.record.access_token


@pytest.mark.parametrize("missing", ["client_id", "client_secret"])
def test_client_credentials_need_the_entry_s_client(
    oauth_server: Any, memory_keyring: MemoryKeyring, missing: str
) -> None:
    server = oauth_server(client="build-bot:s3cret")
    fields = {"client_id": "build-bot", "client_secret": "s3cret", missing: None}
    with pytest.raises(UsageError) as raised:
        run(request(server, auth=AuthConfig(type="oauth", **fields),
                    grant="client_credentials"), Person(act=False))  # fmt: skip
    assert raised.value.message == (
        "the client-credentials grant needs the client_id and client_secret of docs's auth"
    )
    assert raised.value.hint == 'set "client_id" and "client_secret": "${VAR}" in its "auth"'
    assert "client_credentials" not in server.stats()


def test_a_server_that_asks_for_no_sign_in(http_server: Any, memory_keyring: MemoryKeyring) -> None:
    url = http_server("streamable-http") + "/mcp"
    req = SignIn("open", url, AuthConfig(type="oauth"), browser=False, timeout=TIMEOUT)
    with pytest.raises(SignInError) as raised:
        run(req, Person())
    assert raised.value.message.endswith(
        "the server answered HTTP 200 without asking for a sign-in, so there is nothing to "
        "sign in to"
    ), raised.value.message
    assert (
        raised.value.hint == "check the entry's url; a server that needs no sign-in needs no auth"
    )
    assert load_record("open", SecretStore()) is None


def test_a_client_metadata_url_that_is_not_https(
    oauth_server: Any, memory_keyring: MemoryKeyring
) -> None:
    server = oauth_server()
    with pytest.raises(UsageError):
        run(request(server, client_metadata_url="http://client.example.com/c.json"), Person())
