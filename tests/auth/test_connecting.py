"""What connecting commands get for an ``oauth`` entry when no usable sign-in can be read."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import httpx2
import pytest

from mcpctl.auth.connecting import ConnectingAuth, connecting_auth
from mcpctl.auth.oauthtokens import OAuthRecord, save_record
from mcpctl.auth.secrets import SecretStore
from mcpctl.config.model import AuthConfig
from mcpctl.errors import ProbeFailed
from tests.conftest import MemoryKeyring

URL = "http://127.0.0.1:9/mcp"
ISSUER = "http://127.0.0.1:9/issuer"


def test_no_keyring_means_auth_required_with_the_remedies(no_keyring: None) -> None:
    auth = ConnectingAuth("docs", URL, AuthConfig(type="oauth"))
    with pytest.raises(ProbeFailed) as caught:
        anyio.run(auth.provider)
    assert caught.value.reason == "auth_required"
    assert "keyring" in caught.value.message and "Secret Service" in (caught.value.hint or "")


def test_client_credentials_need_the_entry_client(memory_keyring: MemoryKeyring) -> None:
    save_record("bot", OAuthRecord(server_url=URL, grant="client_credentials", access_token="AT-x"),
                SecretStore())  # fmt: skip
    auth = ConnectingAuth("bot", URL, AuthConfig(type="oauth", client_id="bot"))
    with pytest.raises(ProbeFailed) as caught:
        anyio.run(auth.provider)
    assert caught.value.reason == "auth_required" and "client_secret" in caught.value.message
    ok = ConnectingAuth("bot", URL, AuthConfig(type="oauth", client_id="bot", client_secret="s"))
    provider = anyio.run(ok.provider)
    state = provider.mcpctl
    assert state.reauthorizes and state.connecting  # a new grant needs no person


def test_the_code_grant_never_opens_a_browser(memory_keyring: MemoryKeyring) -> None:
    provider = anyio.run(ConnectingAuth("docs", URL, AuthConfig(type="oauth")).provider)
    assert provider.mcpctl.connecting and not provider.mcpctl.reauthorizes
    handler = provider.context.redirect_handler
    assert handler is not None
    from mcpctl.auth.oauth import OAuthFlowError

    with pytest.raises(OAuthFlowError):
        anyio.run(handler, "http://127.0.0.1:9/authorize")


# --- what mutation testing found unpinned ----------------------------------------------------


@pytest.fixture
def echo_server() -> Iterator[tuple[str, list[str | None]]]:
    """A real HTTP server on 127.0.0.1 that answers 200 and records each request's
    Authorization header."""
    seen: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_a_stored_sign_in_is_sent_as_a_bearer_token(
    memory_keyring: MemoryKeyring, echo_server: tuple[str, list[str | None]]
) -> None:
    url, seen = echo_server
    save_record("docs", OAuthRecord(server_url=url, access_token="AT-connecting-canary-1",
                                    expires_at=time.time() + 600))  # fmt: skip

    async def get() -> int:
        auth = connecting_auth("docs", url, AuthConfig(type="oauth"))
        async with httpx2.AsyncClient(auth=auth, timeout=10) as client:
            return (await client.get(url)).status_code

    assert anyio.run(get) == 200
    assert seen == ["Bearer AT-connecting-canary-1"]


def test_the_provider_is_chosen_once(memory_keyring: MemoryKeyring) -> None:
    auth = ConnectingAuth("docs", URL, AuthConfig(type="oauth"))

    async def twice() -> tuple[object, object]:
        return await auth.provider(), await auth.provider()

    first, second = anyio.run(twice)
    assert first is second


def test_without_a_keyring_the_server_and_the_keyrings_hint_are_named(no_keyring: None) -> None:
    from mcpctl.auth.secrets import SecretStore as Store
    from mcpctl.errors import KeyringUnavailableError

    with pytest.raises(KeyringUnavailableError) as unavailable:
        Store().get_item("probe")
    with pytest.raises(ProbeFailed) as caught:
        anyio.run(ConnectingAuth("docs", URL, AuthConfig(type="oauth")).provider)
    assert caught.value.server == "docs"
    assert caught.value.message == f"docs: the sign-in cannot be read: {unavailable.value.message}"
    assert caught.value.hint == unavailable.value.hint


def test_client_credentials_without_the_entrys_secret_in_words(
    memory_keyring: MemoryKeyring,
) -> None:
    save_record("bot", OAuthRecord(server_url=URL, grant="client_credentials", access_token="AT-x"))
    for auth in (AuthConfig(type="oauth", client_id="bot"),
                 AuthConfig(type="oauth", client_secret="s")):  # fmt: skip
        with pytest.raises(ProbeFailed) as caught:
            anyio.run(ConnectingAuth("bot", URL, auth).provider)
        assert caught.value.server == "bot"
        assert caught.value.message == (
            "bot: the client-credentials grant needs the entry's client_id and client_secret"
        )
        assert caught.value.hint == (
            "set auth.client_id and auth.client_secret (a ${VAR} placeholder)"
        )


def test_client_credentials_ask_for_the_stored_scope_at_the_stored_issuer(
    memory_keyring: MemoryKeyring,
) -> None:
    save_record("bot", OAuthRecord(server_url=URL, grant="client_credentials", access_token="AT-x",
                                   scope="stored", auth_server={"issuer": ISSUER}))  # fmt: skip
    auth = AuthConfig(type="oauth", client_id="bot", client_secret="s", scopes=("entry",))
    provider = anyio.run(ConnectingAuth("bot", URL, auth).provider)
    assert provider.context.client_metadata.scope == "stored"
    assert (provider.mcpctl.name, provider.context.server_url) == ("bot", URL)
    assert provider.mcpctl.store.grant == "client_credentials"
    assert provider.mcpctl.store.configured_client is not None
    save_record("bot", OAuthRecord(server_url=URL, grant="client_credentials", access_token="AT-x"))
    provider = anyio.run(ConnectingAuth("bot", URL, auth).provider)
    assert provider.context.client_metadata.scope == "entry"  # none stored: the entry's


def test_the_code_grant_asks_for_the_entrys_scopes_as_its_client(
    memory_keyring: MemoryKeyring,
) -> None:
    auth = AuthConfig(type="oauth", scopes=("read", "write"), client_id="cid", client_secret="s")
    provider = anyio.run(ConnectingAuth("docs", URL, auth).provider)
    assert (provider.mcpctl.name, provider.context.server_url) == ("docs", URL)
    metadata = provider.context.client_metadata
    assert metadata.scope == "read write"
    assert [str(u) for u in metadata.redirect_uris or []] == ["http://127.0.0.1/callback"]
    assert metadata.token_endpoint_auth_method == "client_secret_post"
    store = provider.mcpctl.store
    assert store.configured_client is not None and store.configured_client.client_id == "cid"
    public = anyio.run(ConnectingAuth("docs", URL, AuthConfig(type="oauth")).provider)
    assert public.context.client_metadata.scope is None  # what the server advertises
    assert public.context.client_metadata.token_endpoint_auth_method == "none"
    assert public.mcpctl.store.configured_client is None


def test_a_stored_code_grant_or_another_urls_sign_in_uses_the_code_grant(
    memory_keyring: MemoryKeyring,
) -> None:
    save_record("docs", OAuthRecord(server_url=URL, access_token="AT-x"))
    provider = anyio.run(ConnectingAuth("docs", URL, AuthConfig(type="oauth")).provider)
    assert not provider.mcpctl.reauthorizes
    save_record("bot", OAuthRecord(server_url="http://127.0.0.1:9/other",
                                   grant="client_credentials", access_token="AT-x"))  # fmt: skip
    provider = anyio.run(ConnectingAuth("bot", URL, AuthConfig(type="oauth")).provider)
    assert not provider.mcpctl.reauthorizes  # not refused for want of a client secret


def test_neither_a_browser_nor_a_callback_is_ever_waited_for(
    memory_keyring: MemoryKeyring,
) -> None:
    from mcpctl.auth.oauth import OAuthFlowError

    provider = anyio.run(ConnectingAuth("docs", URL, AuthConfig(type="oauth")).provider)
    redirect, callback = provider.context.redirect_handler, provider.context.callback_handler
    assert redirect is not None and callback is not None
    with pytest.raises(OAuthFlowError, match=r"^a sign-in in a browser is needed$"):
        anyio.run(redirect, "http://127.0.0.1:9/authorize")
    with pytest.raises(OAuthFlowError, match=r"^a sign-in in a browser is needed$"):
        anyio.run(callback)
