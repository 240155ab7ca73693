"""The stored sign-in (item oauth:SERVER), the SDK's TokenStorage over it, and what the
provider gets back from it in a fresh process."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest

from mcpctl.auth.oauthtokens import (
    OAuthRecord,
    TokenStore,
    canonical_url,
    load_record,
    save_record,
    token_status,
)
from mcpctl.auth.secrets import SecretStore
from tests.conftest import MemoryKeyring

URL = "http://127.0.0.1:8123/mcp"
AS = "https://login.example.com"
ACCESS = "AT-distinctive-access-0001"
REFRESH = "RT-distinctive-refresh-0001"


def stored(**changes: Any) -> OAuthRecord:
    record = OAuthRecord(
        server_url=URL, access_token=ACCESS, refresh_token=REFRESH, scope="mcp:read mcp:write",
        expires_at=time.time() + 600, lifetime=600.0,
        client={"client_id": "client-1", "redirect_uris": ["http://127.0.0.1:5000/callback"],
                "token_endpoint_auth_method": "none"},
        client_source="registered",
        auth_server={"issuer": AS, "authorization_endpoint": f"{AS}/authorize",
                     "token_endpoint": f"{AS}/oauth/token", "revocation_endpoint": f"{AS}/revoke"},
        resource={"resource": URL, "authorization_servers": [AS]},
    )  # fmt: skip
    for key, value in changes.items():
        setattr(record, key, value)
    return record


def test_record_round_trip_and_junk() -> None:
    record = stored()
    assert OAuthRecord.from_data(json.loads(json.dumps(record.to_data()))) == record
    assert OAuthRecord.from_data({"nothing": 1}) is None
    assert OAuthRecord.from_data({"server_url": URL, "unknown": 1}) == OAuthRecord(server_url=URL)


def test_tokens_are_bound_to_the_url() -> None:
    assert canonical_url("HTTP://127.0.0.1:8123/mcp/#x") == canonical_url(URL)
    record = stored()
    assert record.bound_to(URL) and record.bound_to("http://127.0.0.1:8123/mcp/")
    assert not record.bound_to("http://127.0.0.1:8123/other")
    assert not record.bound_to("http://127.0.0.1:9999/mcp") and not record.bound_to(None)


def test_expiry_is_absolute_with_a_margin() -> None:
    now = time.time()
    long = stored(expires_at=now + 100, lifetime=3600.0)
    assert long.valid_until() == now + 70  # 30 s early at most
    assert not long.expired(now) and long.expired(now + 71)
    short = stored(expires_at=now + 3, lifetime=3.0)  # a tenth of a short life
    assert short.valid_until() == pytest.approx(now + 2.7)
    assert stored(access_token=None).expired(now)
    assert not stored(expires_at=None).expired(now)  # no expiry given: used until refused


def test_status_shows_everything_but_a_token() -> None:
    status = token_status("docs", URL, stored())
    assert status["signed_in"] and not status["stale"] and status["expired"] is False
    assert status["scopes"] == ["mcp:read", "mcp:write"] and status["authorization_server"] == AS
    text = json.dumps(status)
    assert ACCESS not in text and REFRESH not in text and "client-1" not in text
    stale = token_status("docs", "http://elsewhere/mcp", stored())
    assert stale["stale"] and not stale["signed_in"] and stale["problem"]
    assert not stale["refreshable"]  # stale tokens are never renewed
    refused = token_status("docs", URL, stored(sign_in_needed="refused", access_token=None,
                                                refresh_token=None))  # fmt: skip
    assert not refused["signed_in"] and refused["problem"] == "refused"
    assert token_status("docs", URL, None)["signed_in"] is False


def test_the_store_hands_out_an_empty_access_token_once_expired(
    memory_keyring: MemoryKeyring,
) -> None:
    secrets = SecretStore()
    save_record("docs", stored(), secrets)
    store = TokenStore("docs", URL, secrets)
    tokens = anyio.run(store.get_tokens)
    assert tokens is not None and tokens.access_token == ACCESS
    assert tokens.expires_in is not None and 560 < tokens.expires_in <= 600
    save_record("docs", stored(expires_at=time.time() - 1), secrets)
    tokens = anyio.run(store.get_tokens)
    # The SDK does not restore expiry: an expired token handed out as it is would be sent,
    # refused, and answered with a whole new sign-in instead of a refresh.
    assert tokens is not None and tokens.access_token == "" and tokens.refresh_token == REFRESH
    assert anyio.run(TokenStore("docs", "http://elsewhere/mcp", secrets).get_tokens) is None
    assert anyio.run(TokenStore("docs", URL, secrets, sign_in=True).get_tokens) is None


def test_set_tokens_stores_an_absolute_expiry_and_the_metadata(
    memory_keyring: MemoryKeyring,
) -> None:
    from mcp.shared.auth import OAuthMetadata, OAuthToken

    secrets = SecretStore()
    save_record("docs", stored(), secrets)
    store = TokenStore("docs", URL, secrets)
    anyio.run(store.get_tokens)
    metadata = OAuthMetadata.model_validate({**stored().auth_server, "token_endpoint": f"{AS}/t2"})  # type: ignore[dict-item]
    store.note_metadata(metadata, None)
    before = time.time()
    token = OAuthToken(access_token="AT-new", expires_in=120, refresh_token="RT-new")
    anyio.run(store.set_tokens, token)
    record = load_record("docs", secrets)
    assert record is not None and record.access_token == "AT-new"
    assert record.refresh_token == "RT-new" and record.scope == "mcp:read mcp:write"
    assert before + 120 <= (record.expires_at or 0) <= time.time() + 120
    assert record.endpoint("token_endpoint") == f"{AS}/t2"
    assert record.client_source == "registered"  # the registration stays


def test_set_tokens_without_a_refresh_token_keeps_the_stored_one(
    memory_keyring: MemoryKeyring,
) -> None:
    # A refresh answered with an access token alone (no rotation; the SDK may pass it on as
    # it came): the refresh token it did not replace is what the next refresh needs.
    from mcp.shared.auth import OAuthToken

    secrets = SecretStore()
    save_record("docs", stored(), secrets)
    store = TokenStore("docs", URL, secrets)
    anyio.run(store.get_tokens)
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-only", expires_in=120))
    record = load_record("docs", secrets)
    assert record is not None and record.access_token == "AT-only"
    assert record.refresh_token == REFRESH and record.scope == "mcp:read mcp:write"
    tokens = anyio.run(TokenStore("docs", URL, secrets).get_tokens)
    assert tokens is not None and tokens.refresh_token == REFRESH


def test_a_sign_in_stores_nothing_until_tokens_arrive(memory_keyring: MemoryKeyring) -> None:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

    secrets = SecretStore()
    save_record("docs", stored(), secrets)
    redirect = "http://127.0.0.1:6000/callback"
    store = TokenStore("docs", URL, secrets, sign_in=True, redirect_uri=redirect)
    # A stored registration that does not know this redirect URI is not reused.
    assert anyio.run(store.get_client_info) is None
    client = OAuthClientInformationFull.model_validate({"client_id": "client-2",
                                                        "redirect_uris": [redirect]})  # fmt: skip
    anyio.run(store.set_client_info, client)
    assert (load_record("docs", secrets) or stored()).client["client_id"] == "client-1"  # type: ignore[index]
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-2", expires_in=60))
    record = load_record("docs", secrets)
    assert record is not None and record.client is not None
    assert record.client["client_id"] == "client-2" and record.refresh_token is None
    assert record.auth_server is None  # a whole new record: nothing of the old one is kept


def test_a_configured_client_secret_is_never_stored(memory_keyring: MemoryKeyring) -> None:
    from mcp.shared.auth import OAuthToken

    from mcpctl.auth.oauth import configured_client
    from mcpctl.config.model import AuthConfig

    secrets = SecretStore()
    client = configured_client(
        AuthConfig(type="oauth", client_id="app", client_secret="sek-r3t-value")
    )
    assert client is not None and client.token_endpoint_auth_method == "client_secret_post"
    store = TokenStore("docs", URL, secrets, configured_client=client, sign_in=True)
    assert anyio.run(store.get_client_info) is client
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-3"))
    raw = secrets.get_item("oauth:docs") or ""
    assert "sek-r3t-value" not in raw and '"client_id":"app"' in raw
    assert (load_record("docs", secrets) or stored()).client_source == "configured"


def test_refused_tokens_are_dropped_but_not_the_registration(memory_keyring: MemoryKeyring) -> None:
    secrets = SecretStore()
    save_record("docs", stored(), secrets)
    anyio.run(TokenStore("docs", URL, secrets).mark_sign_in_needed, "refused")
    record = load_record("docs", secrets)
    assert record is not None and record.access_token is None and record.refresh_token is None
    assert record.sign_in_needed == "refused" and record.client is not None
    assert anyio.run(TokenStore("docs", URL, secrets).get_tokens) is None


def provider_for(store: TokenStore) -> Any:
    from mcpctl.auth.oauth import StoredOAuthProvider, client_metadata

    metadata = client_metadata("http://127.0.0.1/callback")
    return StoredOAuthProvider("docs", store, URL, metadata, store, connecting=True)


def test_the_sdk_alone_would_refresh_at_the_wrong_place() -> None:
    """Pins the SDK's behaviour that the subclass corrects (mcp 2.3): a provider that loads
    tokens from storage knows neither their expiry nor the authorization server, and would
    refresh at the server's origin without the resource parameter."""
    from mcp.client.auth.oauth2 import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

    from mcpctl.auth.oauth import client_metadata

    class Plain:
        async def get_tokens(self) -> OAuthToken:
            return OAuthToken(access_token=ACCESS, refresh_token=REFRESH, expires_in=1)

        async def get_client_info(self) -> OAuthClientInformationFull:
            return OAuthClientInformationFull(client_id="client-1")

    provider = OAuthClientProvider(URL, client_metadata("http://127.0.0.1/callback"), Plain())  # type: ignore[arg-type]

    async def check() -> None:
        await provider._initialize()
        assert provider.context.token_expiry_time is None  # expiry not restored
        assert provider.context.is_token_valid()  # so an expired token would be sent
        request = await provider._refresh_token()
        assert str(request.url) == "http://127.0.0.1:8123/token"
        assert b"resource" not in request.content

    anyio.run(check)


def test_the_provider_gets_back_the_expiry_and_the_metadata(memory_keyring: MemoryKeyring) -> None:
    from mcpctl.auth.oauth import _should_refresh

    secrets = SecretStore()
    save_record("docs", stored(expires_at=time.time() - 5), secrets)
    provider = provider_for(TokenStore("docs", URL, secrets))

    async def check() -> None:
        await provider._initialize()
        context = provider.context
        assert str(context.oauth_metadata.token_endpoint) == f"{AS}/oauth/token"
        assert context.protected_resource_metadata is not None
        assert context.auth_server_url == AS or context.auth_server_url == AS + "/"
        assert _should_refresh(provider.context)
        request = await provider._refresh_token()
        assert str(request.url) == f"{AS}/oauth/token"
        form = request.content.decode()
        assert (
            "grant_type=refresh_token" in form
            and "resource=http%3A%2F%2F127.0.0.1%3A8123%2Fmcp" in form
        )

    anyio.run(check)
    save_record("docs", stored(), secrets)
    fresh = provider_for(TokenStore("docs", URL, secrets))

    async def valid() -> None:
        await fresh._initialize()
        assert fresh.context.is_token_valid() and not _should_refresh(fresh.context)
        assert fresh.context.token_expiry_time is not None

    anyio.run(valid)


def test_refreshes_of_one_server_take_turns(isolated: Any) -> None:
    import os
    from pathlib import Path

    from mcpctl.auth.oauthtokens import lock_path, refresh_lock
    from mcpctl.errors import LockTimeoutError

    assert lock_path("docs") == Path(os.environ["MCPCTL_HOME"]) / "state" / "oauth" / "docs.lock"
    assert lock_path("../x y").name == ".._x_y.lock"  # stays in its folder
    order: list[str] = []

    async def holder(name: str, hold: float, inside: anyio.Event | None = None) -> None:
        async with refresh_lock("docs"):
            order.append(f"{name} in")
            if inside is not None:
                inside.set()
            await anyio.sleep(hold)
            order.append(f"{name} out")

    async def both() -> None:
        a_has_it = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(holder, "a", 0.3, a_has_it)
            await a_has_it.wait()
            tg.start_soon(holder, "b", 0)

    anyio.run(both)
    assert order == ["a in", "a out", "b in", "b out"]

    async def impatient() -> None:
        async with refresh_lock("docs"), refresh_lock("docs", timeout=0.2):
            pass  # pragma: no cover

    with pytest.raises(LockTimeoutError):
        anyio.run(impatient)
    anyio.run(holder, "c", 0)  # released after the failure


def test_a_stored_registration_is_bound_to_its_authorization_server(
    memory_keyring: MemoryKeyring,
) -> None:
    secrets = SecretStore()

    def client_of(record: OAuthRecord, **store: Any) -> Any:
        save_record("docs", record, secrets)
        return anyio.run(TokenStore("docs", URL, secrets, **store).get_client_info)

    # Stored before registrations carried their issuer: bound to the server of its tokens,
    # so that the provider registers anew once the resource names another one.
    assert client_of(stored()).issuer == AS
    elsewhere = {**(stored().client or {}), "issuer": "https://other.example.com"}
    assert client_of(stored(client=elsewhere)).issuer == "https://other.example.com"
    # A client ID metadata document is the same client at every server: left unbound.
    document = "https://client.example.com/mcpctl.json"
    portable = stored(client={"client_id": document}, client_source="metadata_document")
    assert client_of(portable, client_metadata_url=document).issuer is None


# --- what mutation testing found unpinned ---------------------------------------------------


def test_a_registration_outside_a_sign_in_is_stored_at_once(memory_keyring: MemoryKeyring) -> None:
    # A refresh that had to register anew: the new client is kept with the tokens it goes
    # with, and its secret is hidden from all output before anything is stored.
    from mcp.shared.auth import OAuthClientInformationFull

    from mcpctl.config.redaction import forget, redactor

    forget()
    secrets = SecretStore()
    save_record("docs", stored(), secrets)
    client = OAuthClientInformationFull(client_id="client-9", client_secret="cs-distinct-0009",
                                        redirect_uris=["http://127.0.0.1:5000/callback"])  # type: ignore[list-item]  # fmt: skip
    anyio.run(TokenStore("docs", URL, secrets).set_client_info, client)
    assert redactor(patterns=False)("echo cs-distinct-0009") == "echo ****"
    record = load_record("docs", secrets)
    assert record is not None and record.client is not None and record.access_token == ACCESS
    assert record.client["client_id"] == "client-9"
    assert record.client["client_secret"] == "cs-distinct-0009"  # needed to refresh
    assert record.client_source == "registered"
    again = anyio.run(TokenStore("docs", URL, secrets).get_client_info)
    assert again is not None and again.client_id == "client-9"
    forget()
    # Nothing to attach it to: a record of another URL is left alone, no record stays none.
    elsewhere = stored(server_url="http://elsewhere/mcp")
    save_record("docs", elsewhere, secrets)
    anyio.run(TokenStore("docs", URL, secrets).set_client_info, client)
    assert load_record("docs", secrets) == elsewhere
    secrets.delete_item("oauth:docs")
    anyio.run(TokenStore("docs", URL, secrets).set_client_info, client)
    assert load_record("docs", secrets) is None


def test_a_registration_of_another_url_is_not_handed_out(memory_keyring: MemoryKeyring) -> None:
    secrets = SecretStore()
    save_record("docs", stored(server_url="http://elsewhere/mcp"), secrets)
    assert anyio.run(TokenStore("docs", URL, secrets).get_client_info) is None
    secrets.delete_item("oauth:docs")
    assert anyio.run(TokenStore("docs", URL, secrets).get_client_info) is None


def test_a_configured_client_is_stored_by_its_id_alone(memory_keyring: MemoryKeyring) -> None:
    from mcp.shared.auth import OAuthToken

    from mcpctl.auth.oauth import configured_client
    from mcpctl.config.model import AuthConfig

    secrets = SecretStore()
    public = configured_client(AuthConfig(type="oauth", client_id="app"))  # no secret at all
    assert public is not None
    store = TokenStore("docs", URL, secrets, configured_client=public, sign_in=True)
    anyio.run(store.get_client_info)
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-5"))
    record = load_record("docs", secrets)
    assert record is not None and record.client is not None
    assert record.client["client_id"] == "app" and record.client_source == "configured"
    # The client handed back to a refresh (as the SDK may) keeps its secret out too.
    private = configured_client(AuthConfig(type="oauth", client_id="app", client_secret="sek-2"))
    assert private is not None
    anyio.run(TokenStore("docs", URL, secrets, configured_client=private).set_client_info, private)
    raw = secrets.get_item("oauth:docs") or ""
    assert "sek-2" not in raw and '"client_id":"app"' in raw
    assert (load_record("docs", secrets) or stored()).client_source == "configured"
    # Once the entry no longer names its client, that client is not presented: register anew.
    assert anyio.run(TokenStore("docs", URL, secrets).get_client_info) is None


def test_a_sign_in_reuses_a_registration_that_knows_its_redirect(
    memory_keyring: MemoryKeyring,
) -> None:
    from mcp.shared.auth import OAuthToken

    secrets = SecretStore()
    save_record("docs", stored(), secrets)
    store = TokenStore("docs", URL, secrets, sign_in=True,
                       redirect_uri="http://127.0.0.1:5000/callback")  # fmt: skip
    client = anyio.run(store.get_client_info)
    assert client is not None and client.client_id == "client-1"
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-4", expires_in=60))
    record = load_record("docs", secrets)
    assert record is not None and record.client is not None and record.access_token == "AT-4"
    assert record.client["client_id"] == "client-1" and record.client_source == "registered"
    assert record.grant == "authorization_code" and record.refresh_token is None


def test_a_client_credentials_grant_is_remembered(memory_keyring: MemoryKeyring) -> None:
    # Its access token is renewed by the grant itself, with no refresh token.
    from mcp.shared.auth import OAuthToken

    from mcpctl.auth.oauth import configured_client
    from mcpctl.config.model import AuthConfig

    secrets = SecretStore()
    client = configured_client(AuthConfig(type="oauth", client_id="bot", client_secret="sek-3"))
    store = TokenStore("bot", URL, secrets, configured_client=client, grant="client_credentials")
    assert store.tokens_saved == 0
    assert anyio.run(store.get_tokens) is None
    anyio.run(store.get_client_info)
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-bot", expires_in=60))
    assert store.tokens_saved != 0  # a sign-in that saved no tokens is reported as failed
    record = load_record("bot", secrets)
    assert record is not None and record.grant == "client_credentials" and record.refreshable
    assert token_status("bot", URL, record)["refreshable"]


def test_new_tokens_for_another_url_replace_the_whole_record(
    memory_keyring: MemoryKeyring,
) -> None:
    from mcp.shared.auth import OAuthToken

    secrets = SecretStore()
    save_record("docs", stored(server_url="http://elsewhere/mcp"), secrets)
    store = TokenStore("docs", URL, secrets)
    assert anyio.run(store.get_tokens) is None and store.current() is None
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-6", expires_in=60))
    record = load_record("docs", secrets)
    assert record is not None and record.bound_to(URL) and record.access_token == "AT-6"
    assert record.refresh_token is None and record.client is None and record.auth_server is None
    assert record.client_source is None  # no client, so no source claimed


def test_a_client_metadata_document_is_stored_as_such(memory_keyring: MemoryKeyring) -> None:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

    secrets = SecretStore()
    document = "https://client.example.com/mcpctl.json"
    redirect = "http://127.0.0.1:6000/callback"

    def sign_in(client_id: str) -> OAuthRecord | None:
        store = TokenStore("docs", URL, secrets, sign_in=True, redirect_uri=redirect,
                           client_metadata_url=document)  # fmt: skip
        client = OAuthClientInformationFull(client_id=client_id, redirect_uris=[redirect])  # type: ignore[list-item]
        anyio.run(store.set_client_info, client)
        anyio.run(store.set_tokens, OAuthToken(access_token="AT-7"))
        return load_record("docs", secrets)

    record = sign_in(document)
    assert record is not None and record.client_source == "metadata_document"
    assert record.client_metadata_url == document
    # A server that does not take metadata documents: the registration it made instead.
    record = sign_in("client-7")
    assert record is not None and record.client_source == "registered"


def test_tokens_saved_twice_in_one_process_keep_the_registration(
    memory_keyring: MemoryKeyring,
) -> None:
    from mcp.shared.auth import OAuthToken

    secrets = SecretStore()
    save_record("docs", stored(), secrets)
    store = TokenStore("docs", URL, secrets)
    anyio.run(store.get_tokens)
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-a", expires_in=60))
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-b", expires_in=60))
    current = store.current()
    assert current is not None and current.access_token == "AT-b"
    record = load_record("docs", secrets)
    assert record is not None and record.client is not None and record.access_token == "AT-b"
    assert record.client["client_id"] == "client-1" and record.refresh_token == REFRESH
    assert TokenStore("docs", "http://elsewhere/mcp", secrets).current() is None


def test_a_refresh_stores_the_scope_and_resource_it_was_given(
    memory_keyring: MemoryKeyring,
) -> None:
    from mcp.shared.auth import OAuthToken, ProtectedResourceMetadata

    secrets = SecretStore()
    save_record("docs", stored(), secrets)
    store = TokenStore("docs", URL, secrets)
    anyio.run(store.get_tokens)
    other = "https://login2.example.com"
    resource = ProtectedResourceMetadata.model_validate({"resource": URL,
                                                         "authorization_servers": [other]})  # fmt: skip
    store.note_metadata(None, resource)
    store.note_metadata(None, None)  # nothing new discovered: what was is kept
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-8", scope="mcp:read", expires_in=60))
    record = load_record("docs", secrets)
    assert record is not None and record.scope == "mcp:read"
    assert record.resource is not None and record.resource["authorization_servers"] == [other]
    assert record.endpoint("token_endpoint") == f"{AS}/oauth/token"  # not rediscovered: kept


def test_the_tokens_handed_out_tell_their_scope_and_remaining_life(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    secrets = SecretStore()
    save_record("docs", stored(expires_at=None, lifetime=None), secrets)
    tokens = anyio.run(TokenStore("docs", URL, secrets).get_tokens)
    # No expiry given: used until refused, and the scope granted goes with it.
    assert tokens is not None and tokens.access_token == ACCESS and tokens.expires_in is None
    assert tokens.scope == "mcp:read mcp:write"
    now = time.time()
    monkeypatch.setattr("mcpctl.auth.oauthtokens.time", types.SimpleNamespace(time=lambda: now))
    save_record("docs", stored(expires_at=now + 0.5, lifetime=1.0), secrets)
    tokens = anyio.run(TokenStore("docs", URL, secrets).get_tokens)
    # Half a second left: never overstated, and never 0 (which would read as no expiry).
    assert tokens is not None and tokens.access_token == ACCESS and tokens.expires_in == 1


def test_refused_tokens_are_forgotten_not_blanked(memory_keyring: MemoryKeyring) -> None:
    secrets = SecretStore()
    save_record("docs", stored(), secrets)
    anyio.run(TokenStore("docs", URL, secrets).mark_sign_in_needed, "refused")
    raw = json.loads(secrets.get_item("oauth:docs") or "{}")
    assert not {"access_token", "refresh_token", "expires_at"} & raw.keys()
    # Tokens of another URL (or none) are not this entry's to drop.
    elsewhere = stored(server_url="http://elsewhere/mcp")
    save_record("docs", elsewhere, secrets)
    anyio.run(TokenStore("docs", URL, secrets).mark_sign_in_needed, "refused")
    assert load_record("docs", secrets) == elsewhere
    secrets.delete_item("oauth:docs")
    anyio.run(TokenStore("docs", URL, secrets).mark_sign_in_needed, "refused")
    assert load_record("docs", secrets) is None


def test_the_store_uses_the_keyring_it_is_given(memory_keyring: MemoryKeyring) -> None:
    from mcp.shared.auth import OAuthToken

    own = MemoryKeyring()
    secrets = SecretStore(own)
    save_record("docs", stored(), secrets)
    store = TokenStore("docs", URL, secrets)
    tokens = anyio.run(store.get_tokens)
    assert tokens is not None and tokens.access_token == ACCESS
    anyio.run(store.set_tokens, OAuthToken(access_token="AT-own"))
    assert (load_record("docs", secrets) or stored()).access_token == "AT-own"
    assert not memory_keyring.items  # the default keyring is never touched


def test_a_hung_keyring_does_not_outlast_the_caller(memory_keyring: MemoryKeyring) -> None:
    # A keyring may hang (a locked collection waiting for a prompt): a command's timeout
    # still ends the wait instead of waiting for the keyring.
    import threading

    release = threading.Event()

    class Hung(MemoryKeyring):
        def get_password(self, service: str, username: str) -> str | None:
            release.wait(120)
            return None

    store = TokenStore("docs", URL, SecretStore(Hung()))

    async def impatient() -> bool:
        with anyio.move_on_after(0.2):
            await store.get_tokens()
        return release.is_set()

    watchdog = threading.Timer(60, release.set)  # a mutant that waits ends the test, failing
    watchdog.start()
    try:
        assert anyio.run(impatient) is False  # came back while the keyring still hung
    finally:
        release.set()
        watchdog.cancel()
