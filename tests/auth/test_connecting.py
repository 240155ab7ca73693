"""What connecting commands get for an ``oauth`` entry when no usable sign-in can be read."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from mcpctl.auth.connecting import ConnectingAuth
from mcpctl.auth.oauthtokens import OAuthRecord, save_record
from mcpctl.auth.secrets import SecretStore
from mcpctl.config.model import AuthConfig
from mcpctl.errors import ProbeFailed
from tests.conftest import MemoryKeyring

URL = "http://127.0.0.1:9/mcp"


@pytest.fixture
def no_keyring() -> Iterator[None]:
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


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
