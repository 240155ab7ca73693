"""A connecting command's OAuth in this process: the stored sign-in sent, renewed once when the
server refuses it, and each way that fails said in words -- against a real HTTP server on
127.0.0.1 that is both the MCP server and its authorization server (tests/httpthread.py).

The end-to-end tests (mcpctl as a subprocess, against the SDK's own server-side auth) are in
``test_signin_flow.py`` and ``test_needs_auth.py``; mutation testing sees only these.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

import anyio
import httpx2
import pytest

from mcpctl._version import __version__
from mcpctl.auth.connecting import connecting_auth
from mcpctl.auth.oauth import (
    REFUSED_REFRESH,
    StoredOAuthProvider,
    client_credentials_provider,
    client_metadata,
    configured_client,
    sign_in_hint,
)
from mcpctl.auth.oauthtokens import TokenStore
from mcpctl.auth.records import OAuthRecord, load_record, save_record
from mcpctl.config.model import AuthConfig
from mcpctl.errors import ProbeFailed
from tests.conftest import MemoryKeyring
from tests.httpthread import reply, serving_http

HINT = "run 'mcpctl auth docs' to sign in"
JSON = {"Content-Type": "application/json"}


def authorization_server(base: str) -> dict[str, Any]:
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
    }


class Server:
    """The MCP server (``/mcp``: 200 for a valid token, else ``refusal``) and its token
    endpoint (``/token``: each answer in turn from ``answers``)."""

    def __init__(self) -> None:
        self.valid = {"AT-good"}
        self.refusal: tuple[int, str | None] = (401, 'Bearer error="invalid_token"')
        self.answers: list[tuple[int, Any]] = []
        self.sent: list[str | None] = []  # the Authorization header of each /mcp request
        self.forms: list[dict[str, list[str]]] = []
        self.posted: list[str] = []  # the path of each token request
        self.url = ""
        self.accept_new = True  # whether a token the endpoint hands out is taken at /mcp
        self.on_refusal: Callable[[], None] | None = None  # run before /mcp refuses a request

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                auth = self.headers.get("Authorization")
                base = server.url.removesuffix("/mcp")
                if self.path.startswith("/.well-known/oauth-protected-resource"):
                    meta: Any = {"resource": server.url, "authorization_servers": [base]}
                    reply(self, 200, json.dumps(meta).encode(), JSON)
                    return
                if self.path.startswith("/.well-known/oauth-authorization-server"):
                    reply(self, 200, json.dumps(authorization_server(base)).encode(), JSON)
                    return
                if self.path != "/mcp":
                    reply(self, 404, b"{}", JSON)
                    return
                server.sent.append(auth)
                if auth is not None and auth.removeprefix("Bearer ") in server.valid:
                    reply(self, 200, b"ok", {"Content-Type": "text/plain"})
                    return
                if server.on_refusal is not None:
                    server.on_refusal()
                status, challenge = server.refusal
                reply(self, status, b"", {"WWW-Authenticate": challenge} if challenge else {})

            def do_POST(self) -> None:
                server.posted.append(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                server.forms.append(parse_qs(self.rfile.read(length).decode()))
                status, body = server.answers.pop(0) if server.answers else (500, {})
                if (
                    server.accept_new
                    and status == 200
                    and isinstance(body, dict)
                    and "access_token" in body
                ):
                    server.valid.add(str(body["access_token"]))
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                reply(self, status, data, {"Content-Type": "application/json"})

            def log_message(self, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def server(memory_keyring: MemoryKeyring) -> Iterator[Server]:
    state = Server()
    with serving_http(state.handler()) as base:
        state.url = f"{base}/mcp"
        yield state


def signed_in(server: Server, **fields: Any) -> OAuthRecord:
    """A stored sign-in of ``docs`` at ``server``, with its metadata (no discovery needed)."""
    base = server.url.removesuffix("/mcp")
    record = OAuthRecord(
        server_url=server.url,
        access_token="AT-old",
        refresh_token="RT-1",
        expires_at=time.time() + 600,
        client={"client_id": "client-1", "redirect_uris": ["http://127.0.0.1:1/callback"]},
        client_source="registered",
        auth_server=authorization_server(base),
        resource={"resource": server.url, "authorization_servers": [base]},
    )
    for key, value in fields.items():
        setattr(record, key, value)
    save_record("docs", record)
    return record


def get(server: Server, url: str | None = None, auth_config: AuthConfig | None = None) -> int:
    async def main() -> int:
        config = auth_config or AuthConfig(type="oauth")
        auth = connecting_auth("docs", url or server.url, config)
        async with httpx2.AsyncClient(auth=auth, timeout=10) as client:
            with anyio.fail_after(30):
                return (await client.get(url or server.url)).status_code

    return anyio.run(main)


def failure(server: Server, url: str | None = None) -> ProbeFailed:
    with pytest.raises(ProbeFailed) as caught:
        get(server, url)
    assert caught.value.reason == "auth_required"
    return caught.value


TOKENS = {"access_token": "AT-new", "token_type": "Bearer", "expires_in": 600,
          "refresh_token": "RT-2"}  # fmt: skip


def test_a_refused_sign_in_is_renewed_once_and_the_request_sent_again(server: Server) -> None:
    signed_in(server)
    server.answers = [(200, TOKENS)]
    assert get(server) == 200
    assert server.sent == ["Bearer AT-old", "Bearer AT-new"]
    assert len(server.forms) == 1
    assert server.forms[0]["grant_type"] == ["refresh_token"]
    assert server.forms[0]["refresh_token"] == ["RT-1"]
    record = load_record("docs")
    assert record is not None and record.access_token == "AT-new"
    assert record.refresh_token == "RT-2"
    assert record.expires_at is not None and 500 < record.expires_at - time.time() <= 600
    # The metadata it was renewed by stays with the new tokens.
    base = server.url.removesuffix("/mcp")
    assert record.auth_server is not None and record.auth_server["issuer"] == base
    assert record.auth_server["token_endpoint"] == f"{base}/token"
    assert record.resource is not None and record.resource["resource"] == server.url


def test_a_sign_in_another_process_renewed_meanwhile_is_used_as_it_is(server: Server) -> None:
    record = signed_in(server)
    server.valid.add("AT-other")

    def renewed_elsewhere() -> None:  # what a concurrent mcpctl stores after its own refresh
        server.on_refusal = None
        record.access_token, record.refresh_token = "AT-other", "RT-other"
        save_record("docs", record)

    server.on_refusal = renewed_elsewhere
    assert get(server) == 200
    assert server.sent == ["Bearer AT-old", "Bearer AT-other"]
    assert server.forms == []  # not renewed again: its refresh token would be spent


def test_a_keyring_that_fails_during_the_run_is_said(
    server: Server, memory_keyring: MemoryKeyring
) -> None:
    from keyring.errors import KeyringError

    from mcpctl.auth.secrets import _REMEDIES

    signed_in(server)

    def locked(service: str, username: str) -> str | None:
        raise KeyringError("the collection is locked")

    def keyring_fails() -> None:  # before the stored sign-in is read again to renew it
        memory_keyring.get_password = locked  # type: ignore[method-assign]

    server.on_refusal = keyring_fails
    error = failure(server)
    assert error.message == (
        "docs: the sign-in cannot be read: the keyring could not be read: "
        "KeyringError: the collection is locked"
    )
    assert error.hint == _REMEDIES  # the keyring's remedies, not a sign-in
    assert server.forms == []


def test_an_expired_sign_in_is_renewed_before_the_request(server: Server) -> None:
    signed_in(server, expires_at=time.time() - 10)
    server.answers = [(200, TOKENS)]
    assert get(server) == 200
    assert server.sent == ["Bearer AT-new"]


@pytest.mark.parametrize("status", [400, 401])  # invalid_grant, invalid_client
def test_a_refused_refresh_says_a_new_sign_in_is_needed_and_remembers_it(
    server: Server, status: int
) -> None:
    signed_in(server)
    server.answers = [(status, {"error": "invalid_grant"})]
    error = failure(server)
    assert error.message == (f"docs: {REFUSED_REFRESH} (its refresh token was revoked or expired)")
    assert error.hint == HINT
    record = load_record("docs")
    assert record is not None and record.sign_in_needed == REFUSED_REFRESH
    # The next run says so without asking the authorization server again.
    error = failure(server)
    assert error.message == f"docs: {REFUSED_REFRESH}"
    assert len(server.forms) == 1


def test_an_expired_sign_in_whose_renewal_is_refused_is_not_sent(server: Server) -> None:
    signed_in(server, expires_at=time.time() - 10)
    server.answers = [(400, {"error": "invalid_grant"})]
    error = failure(server)
    assert error.message == (f"docs: {REFUSED_REFRESH} (its refresh token was revoked or expired)")
    assert server.sent == []  # the MCP server never saw the expired token, nor none
    record = load_record("docs")
    assert record is not None and record.sign_in_needed == REFUSED_REFRESH


def test_a_token_endpoint_that_fails_is_named_with_its_status(server: Server) -> None:
    signed_in(server)
    server.answers = [(503, {"error": "temporarily_unavailable"})]
    error = failure(server)
    assert error.message == (
        "docs: renewing the sign-in failed: the authorization server answered HTTP 503"
    )
    assert error.hint == f"try again later; if it persists, {HINT}"
    record = load_record("docs")
    assert record is not None and record.sign_in_needed is None  # kept for a later try


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ({**TOKENS, "access_token": "AT new"},
         "an unusable access_token: it holds a character other than visible ASCII (\\x20)"),
        ({**TOKENS, "refresh_token": ""}, "an unusable refresh_token: it is empty"),
        ({**TOKENS, "access_token": 7}, "an unusable access_token: it is not a string"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("status", [200, 201])
def test_an_unusable_token_is_refused_before_it_is_stored(
    server: Server, answer: dict[str, Any], words: str, status: int
) -> None:
    signed_in(server)
    server.answers = [(status, answer)]
    error = failure(server)
    assert error.message == (
        f"docs: renewing the sign-in failed: the authorization server sent {words}"
    )
    assert error.hint == HINT
    record = load_record("docs")
    assert record is not None and record.access_token == "AT-old"


@pytest.mark.parametrize(
    ("expires_in", "lifetime"),
    [(59.6, 60), (0.2, 1), ("120", 120), (-5, None), ("soon", None), (10.0**12, None),
     (..., None)],
)  # fmt: skip
def test_a_lifetime_is_rounded_and_one_that_is_no_lifetime_dropped(
    server: Server, expires_in: object, lifetime: int | None
) -> None:
    signed_in(server)
    answer: dict[str, Any] = {"access_token": "AT-new", "token_type": "Bearer"}
    if expires_in is not ...:  # ...: none sent
        answer["expires_in"] = expires_in
    server.answers = [(200, answer)]
    assert get(server) == 200
    record = load_record("docs")
    assert record is not None and record.access_token == "AT-new"
    assert record.refresh_token == "RT-1"  # none sent: the stored one stays
    if lifetime is None:
        assert record.expires_at is None
    else:
        assert record.expires_at is not None
        assert lifetime - 30 < record.expires_at - time.time() <= lifetime


def test_a_renewed_sign_in_the_server_refuses_too_is_said(server: Server) -> None:
    signed_in(server)
    server.accept_new = False
    server.answers = [(200, TOKENS)]
    error = failure(server)
    assert error.message == "docs: the server refused the renewed sign-in"
    assert error.hint == HINT
    assert server.sent == ["Bearer AT-old", "Bearer AT-new"]


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"refresh_token": None}, "the server refused the stored sign-in"),
        ({"refresh_token": None, "expires_at": time.time() - 10},
         "the sign-in has expired, and there is no refresh token to renew it"),
        ({"refresh_token": None, "sign_in_needed": "the user revoked it"},
         "the user revoked it"),
        ({"server_url": "http://127.0.0.1:9/elsewhere"},
         "the stored sign-in is for another URL (the entry's url changed)"),
    ],
)  # fmt: skip
def test_why_a_stored_sign_in_cannot_be_used_is_said(
    server: Server, fields: dict[str, Any], why: str
) -> None:
    signed_in(server, **fields)
    error = failure(server)
    assert error.message == f"docs: {why}"
    assert error.hint == HINT
    assert server.forms == []  # nothing to renew it with


def test_no_stored_sign_in_is_said_as_such(server: Server) -> None:
    error = failure(server)
    assert error.message == "docs: the server needs a sign-in, and there is none stored"
    assert error.hint == sign_in_hint("docs") == HINT
    assert server.sent == [None]


def test_a_server_asking_for_more_scopes_is_not_answered_with_a_refresh(server: Server) -> None:
    signed_in(server)
    server.refusal = (403, 'Bearer error="insufficient_scope", scope="mcp:admin"')
    error = failure(server)
    assert error.message == "docs: the server asks for more scopes than the stored sign-in has"
    assert server.forms == []
    # A 403 that is not about scopes is the server's answer, passed on.
    server.refusal = (403, 'Bearer error="forbidden"')
    assert get(server) == 403
    server.refusal = (403, None)  # no challenge at all
    assert get(server) == 403
    assert server.forms == []


def test_what_mcpctl_registers_as_and_a_configured_client() -> None:
    public = client_metadata("http://127.0.0.1:5/callback")
    assert public.token_endpoint_auth_method == "none" and public.scope is None
    assert [str(u) for u in public.redirect_uris or []] == ["http://127.0.0.1:5/callback"]
    assert public.grant_types == ["authorization_code", "refresh_token"]
    assert public.response_types == ["code"]
    assert public.client_name == "mcpctl"
    # A native app (OpenID registration takes one that does not say for a web app, which may
    # not redirect to a loopback http:// URI), naming the program and its version.
    assert public.application_type == "native"
    assert public.software_id == "mcpctl" and public.software_version == __version__
    confidential = client_metadata("http://127.0.0.1:5/callback", scope="a b", secret=True)
    assert confidential.token_endpoint_auth_method == "client_secret_post"
    assert confidential.scope == "a b"
    assert confidential.grant_types == ["authorization_code", "refresh_token"]
    confidential.scope = "c"  # what the SDK does with the server's scopes
    assert confidential.scope == "a b"
    assert configured_client(AuthConfig(type="oauth")) is None
    own = configured_client(AuthConfig(type="oauth", client_id="c1"))
    assert own is not None and own.client_id == "c1" and own.client_secret is None
    assert own.token_endpoint_auth_method == "none" and own.redirect_uris is None
    assert own.grant_types == ["authorization_code", "refresh_token"]
    secret = configured_client(
        AuthConfig(type="oauth", client_id="c1", client_secret="s"), "http://127.0.0.1:5/cb"
    )
    assert secret is not None and secret.client_secret == "s"
    assert secret.token_endpoint_auth_method == "client_secret_post"
    assert [str(u) for u in secret.redirect_uris or []] == ["http://127.0.0.1:5/cb"]


def test_a_provider_given_scopes_asks_for_them_whatever_the_server_advertises(
    memory_keyring: MemoryKeyring,
) -> None:
    url = "http://127.0.0.1:9/mcp"
    store = TokenStore("docs", url)
    metadata = client_metadata("http://127.0.0.1:5/callback")
    provider = StoredOAuthProvider("docs", store, url, metadata, store, scope="a b")
    asked = provider.context.client_metadata
    assert asked.scope == "a b"
    asked.scope = "c"  # what the SDK does with the server's scopes
    assert provider.context.client_metadata.scope == "a b"
    # The rest of what it registers as is kept.
    assert asked.client_name == "mcpctl" and asked.application_type == "native"
    assert [str(u) for u in asked.redirect_uris or []] == ["http://127.0.0.1:5/callback"]
    assert provider.mcpctl.name == "docs" and provider.mcpctl.store is store
    assert not provider.mcpctl.connecting
    # Given none, the server's scopes are taken.
    provider = StoredOAuthProvider("docs", store, url, metadata, store, connecting=True)
    assert provider.mcpctl.connecting
    provider.context.client_metadata.scope = "c"
    assert provider.context.client_metadata.scope == "c"
    # So too for client credentials.
    machine = client_credentials_provider("docs", store, url, "bot", "s3cret", scope="a b")
    machine.context.client_metadata.scope = "c"
    assert machine.context.client_metadata.scope == "a b"
    assert machine.mcpctl.reauthorizes and not machine.mcpctl.connecting


def test_client_credentials_are_granted_anew_when_the_token_is_refused(server: Server) -> None:
    signed_in(server, grant="client_credentials", refresh_token=None, scope="mcp:read",
              client=None, client_source="configured")  # fmt: skip
    server.answers = [(200, {"access_token": "AT-cc", "token_type": "Bearer", "expires_in": 60})]
    entry = AuthConfig(type="oauth", client_id="bot", client_secret="s3cret")
    assert get(server, auth_config=entry) == 200
    assert server.sent == ["Bearer AT-old", "Bearer AT-cc"]
    (form,) = server.forms
    assert form["grant_type"] == ["client_credentials"]
    assert form["client_id"] == ["bot"] and form["client_secret"] == ["s3cret"]
    assert form["scope"] == ["mcp:read"]
    record = load_record("docs")
    assert record is not None and record.access_token == "AT-cc"


def test_stored_metadata_that_no_longer_reads_is_left_out(server: Server) -> None:
    signed_in(server, auth_server={"issuer": 5}, resource={"resource": 5})
    server.valid.add("AT-old")
    assert get(server) == 200
    assert server.sent == ["Bearer AT-old"]


def test_a_client_credentials_grant_goes_only_to_the_stored_issuer(server: Server) -> None:
    base = server.url.removesuffix("/mcp")
    elsewhere = {**authorization_server(base), "issuer": "http://127.0.0.1:9/elsewhere"}
    signed_in(server, grant="client_credentials", refresh_token=None, client=None,
              client_source="configured", auth_server=elsewhere)  # fmt: skip
    server.answers = [(200, {"access_token": "AT-cc", "token_type": "Bearer"})]
    entry = AuthConfig(type="oauth", client_id="bot", client_secret="s3cret")
    with pytest.raises(ProbeFailed) as caught:
        get(server, auth_config=entry)
    assert caught.value.reason == "auth_required"
    assert caught.value.message.startswith("docs: the OAuth flow failed: ")
    assert "elsewhere" in caught.value.message
    assert server.forms == []  # the client's secret went nowhere


def test_only_a_readable_form_is_a_token_request() -> None:
    from mcpctl.auth.oauth import _is_token_request

    url = "http://127.0.0.1:9/token"
    undecodable = httpx2.Request("POST", url, content=b"grant_type=x&\xff\xfe")
    assert _is_token_request(undecodable)

    async def chunks() -> Any:
        yield b"grant_type=x"

    assert not _is_token_request(httpx2.Request("POST", url, content=chunks()))


def test_an_unusable_token_ends_a_sign_in_with_nothing_stored(
    memory_keyring: MemoryKeyring,
) -> None:
    from mcpctl.auth.oauth import StoredOAuthProvider
    from mcpctl.auth.oauthtokens import TokenStore
    from mcpctl.errors import SignInError

    url = "http://127.0.0.1:9/mcp"
    store = TokenStore("docs", url)
    provider = StoredOAuthProvider(
        "docs", store, url, client_metadata("http://127.0.0.1:5/callback"), store
    )
    request = httpx2.Request("POST", "http://127.0.0.1:9/token", data={"grant_type": "x"})
    answer = httpx2.Response(200, json={**TOKENS, "access_token": ""}, request=request)
    with pytest.raises(SignInError) as caught:
        anyio.run(provider.mcpctl.checked, provider.context, answer)
    assert caught.value.message == (
        "signing in to docs failed: the authorization server sent an unusable access_token: "
        "it is empty; nothing was stored"
    )
    assert load_record("docs") is None


def test_a_sign_in_another_process_made_elsewhere_meanwhile_is_renewed_where_it_came_from(
    server: Server,
) -> None:
    """Another process signs in anew, at an authorization server of other metadata, while a
    provider runs: the new sign-in is renewed at its own token endpoint, and its metadata is
    kept in the store (not the one the running provider read first)."""
    record = signed_in(server)
    server.valid.add("AT-old")
    base = server.url.removesuffix("/mcp")

    async def main() -> tuple[int, int]:
        auth = connecting_auth("docs", server.url, AuthConfig(type="oauth"))
        async with httpx2.AsyncClient(auth=auth, timeout=10) as client:
            with anyio.fail_after(30):
                first = (await client.get(server.url)).status_code
                record.auth_server = {**authorization_server(base),
                                      "token_endpoint": f"{base}/elsewhere/token"}  # fmt: skip
                record.access_token, record.refresh_token = "AT-elsewhere", "RT-elsewhere"
                record.expires_at = time.time() - 10
                save_record("docs", record)  # the other process
                server.valid.discard("AT-old")
                server.answers = [(200, TOKENS)]
                return first, (await client.get(server.url)).status_code

    assert anyio.run(main) == (200, 200)
    assert server.posted == ["/elsewhere/token"]
    assert server.forms[0]["refresh_token"] == ["RT-elsewhere"]
    stored = load_record("docs")
    assert stored is not None and stored.access_token == "AT-new"
    assert stored.auth_server is not None
    assert stored.auth_server["token_endpoint"] == f"{base}/elsewhere/token"
