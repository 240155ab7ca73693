"""Signing out in-process: revoking the tokens at a real revocation endpoint (a small HTTP
server on 127.0.0.1 that records what it is sent), then deleting the stored sign-in."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import anyio
import pytest

from mcpctl.auth import revoke as revoke_module
from mcpctl.auth.oauthtokens import OAuthRecord, load_record, save_record
from mcpctl.auth.revoke import SignOut, revoke, sign_out
from mcpctl.auth.secrets import SecretStore
from tests.conftest import MemoryKeyring, reserved_port

URL = "https://docs.example.com/mcp"
ACCESS = "AT-revoke-canary-1"
REFRESH = "RT-revoke-canary-1"


@dataclass
class Revocation:
    """The endpoint: what each request sent (its form and Authorization header), and the
    statuses it answers with, in turn (200 once they run out)."""

    url: str
    sent: list[tuple[dict[str, str], str | None]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    hang: threading.Event | None = None


@pytest.fixture
def endpoint() -> Iterator[Revocation]:
    state = Revocation("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            form = {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}
            state.sent.append((form, self.headers.get("Authorization")))
            if state.hang is not None:
                state.hang.wait(30)
            status = state.statuses.pop(0) if state.statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/revoke"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        if state.hang is not None:
            state.hang.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def record(endpoint: str | None, **changes: Any) -> OAuthRecord:
    data: dict[str, Any] = {
        "server_url": URL, "access_token": ACCESS, "refresh_token": REFRESH,
        "auth_server": {"issuer": "https://login.example.com",
                        **({"revocation_endpoint": endpoint} if endpoint else {})},
        "client": {"client_id": "mcpctl-client"},
    }  # fmt: skip
    data.update(changes)
    return OAuthRecord(**data)


def test_both_tokens_are_revoked_the_refresh_token_first(endpoint: Revocation) -> None:
    assert anyio.run(revoke, record(endpoint.url)) == (True, None)
    assert endpoint.sent == [
        ({"token": REFRESH, "token_type_hint": "refresh_token", "client_id": "mcpctl-client"},
         None),
        ({"token": ACCESS, "token_type_hint": "access_token", "client_id": "mcpctl-client"},
         None),
    ]  # fmt: skip


def test_only_the_tokens_there_are(endpoint: Revocation) -> None:
    assert anyio.run(revoke, record(endpoint.url, refresh_token=None)) == (True, None)
    assert [form["token_type_hint"] for form, _ in endpoint.sent] == ["access_token"]


def test_nothing_to_revoke(endpoint: Revocation) -> None:
    bare = record(endpoint.url, access_token=None, refresh_token=None)
    assert anyio.run(revoke, bare) == (None, None)
    assert endpoint.sent == []


def test_no_revocation_endpoint() -> None:
    assert anyio.run(revoke, record(None)) == (
        None, "the authorization server offers no revocation: the tokens stay valid until expiry",
    )  # fmt: skip


def test_a_registered_clients_secret_is_sent_in_the_form(endpoint: Revocation) -> None:
    client = {"client_id": "cid", "client_secret": "registered-secret",
              "token_endpoint_auth_method": "client_secret_post"}  # fmt: skip
    assert anyio.run(revoke, record(endpoint.url, client=client)) == (True, None)
    for form, header in endpoint.sent:
        assert (form["client_id"], form["client_secret"], header) == (
            "cid", "registered-secret", None,
        )  # fmt: skip


def test_client_secret_basic_sends_the_client_in_the_header(endpoint: Revocation) -> None:
    client = {"client_id": "c:id/1", "client_secret": "s%cr/et:x",
              "token_endpoint_auth_method": "client_secret_basic"}  # fmt: skip
    assert anyio.run(revoke, record(endpoint.url, client=client)) == (True, None)
    pair = base64.b64encode(b"c%3Aid%2F1:s%25cr%2Fet%3Ax").decode()
    for form, header in endpoint.sent:
        assert "client_id" not in form and "client_secret" not in form
        assert header == f"Basic {pair}"


def test_a_configured_client_uses_the_entrys_own_secret(endpoint: Revocation) -> None:
    client = {"client_id": "cid", "client_secret": "stale-stored-secret",
              "token_endpoint_auth_method": "client_secret_post"}  # fmt: skip
    configured = record(endpoint.url, client=client, client_source="configured")
    assert anyio.run(revoke, configured, "entry-secret") == (True, None)
    assert {form["client_secret"] for form, _ in endpoint.sent} == {"entry-secret"}
    endpoint.sent.clear()
    registered = record(endpoint.url, client=client, client_source="registered")
    assert anyio.run(revoke, registered, "entry-secret") == (True, None)
    assert {form["client_secret"] for form, _ in endpoint.sent} == {"stale-stored-secret"}


def test_a_public_client_refused_for_want_of_a_secret_asks_again_with_an_empty_one(
    endpoint: Revocation,
) -> None:
    endpoint.statuses = [400]
    assert anyio.run(revoke, record(endpoint.url, refresh_token=None)) == (True, None)
    assert [form for form, _ in endpoint.sent] == [
        {"token": ACCESS, "token_type_hint": "access_token", "client_id": "mcpctl-client"},
        {"token": ACCESS, "token_type_hint": "access_token", "client_id": "mcpctl-client",
         "client_secret": ""},
    ]  # fmt: skip


def test_a_client_with_a_secret_is_not_asked_again(endpoint: Revocation) -> None:
    endpoint.statuses = [400]
    client = {"client_id": "cid", "client_secret": "s"}
    revoked = anyio.run(revoke, record(endpoint.url, refresh_token=None, client=client))
    assert revoked == (False, "the authorization server answered HTTP 400")
    assert len(endpoint.sent) == 1


def test_a_refusal_is_reported(endpoint: Revocation) -> None:
    endpoint.statuses = [200, 503]
    assert anyio.run(revoke, record(endpoint.url)) == (
        False, "the authorization server answered HTTP 503",
    )  # fmt: skip
    endpoint.statuses = [503, 200]
    assert anyio.run(revoke, record(endpoint.url))[0] is False  # a later success hides none


def test_an_unreachable_server_is_reported() -> None:
    with reserved_port() as port:  # nothing listens there
        revoked = anyio.run(revoke, record(f"http://127.0.0.1:{port}/revoke"))
    assert revoked == (False, "cannot reach the authorization server: ConnectError")


def test_a_server_that_does_not_answer_is_given_up_on(
    endpoint: Revocation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(revoke_module, "REVOKE_TIMEOUT", 0.5)
    endpoint.hang = threading.Event()
    assert anyio.run(revoke, record(endpoint.url)) == (
        False, "the authorization server did not answer within 0.5 s",
    )  # fmt: skip


def test_signing_out_revokes_then_deletes(
    memory_keyring: MemoryKeyring, endpoint: Revocation
) -> None:
    store = SecretStore(MemoryKeyring())  # not the default keyring
    save_record("docs", record(endpoint.url), store)
    save_record("docs", record(endpoint.url, access_token="AT-default-keyring"))

    async def out() -> SignOut:
        return await sign_out("docs", secrets=store)

    assert anyio.run(out) == SignOut("docs", deleted=True, revoked=True, problem=None)
    assert load_record("docs", store) is None
    assert [form["token"] for form, _ in endpoint.sent] == [REFRESH, ACCESS]
    assert load_record("docs") is not None  # the default keyring's is left alone
    assert anyio.run(out) == SignOut("docs", deleted=False)


def test_signing_out_of_a_configured_client_hands_on_its_secret(
    memory_keyring: MemoryKeyring, endpoint: Revocation
) -> None:
    client = {"client_id": "cid"}
    save_record("docs", record(endpoint.url, client=client, client_source="configured"))

    async def out() -> SignOut:
        return await sign_out("docs", client_secret="entry-secret")

    outcome = anyio.run(out)
    assert (outcome.deleted, outcome.revoked) == (True, True)
    assert {form["client_secret"] for form, _ in endpoint.sent} == {"entry-secret"}


def test_signing_out_when_revocation_fails_still_deletes(
    memory_keyring: MemoryKeyring, endpoint: Revocation
) -> None:
    endpoint.statuses = [500, 500]
    save_record("docs", record(endpoint.url))
    outcome = anyio.run(sign_out, "docs")
    assert outcome == SignOut("docs", deleted=True, revoked=False,
                              problem="the authorization server answered HTTP 500")  # fmt: skip
    assert load_record("docs") is None
