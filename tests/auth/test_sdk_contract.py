"""The SDK's OAuth provider as :mod:`mcpctl.auth.oauth` depends on it.

``StoredOAuthProvider`` overrides two private methods of the SDK's ``OAuthClientProvider``
(``_initialize``, ``_auth_flow``) and calls two more (``_refresh_token``,
``_handle_refresh_response``) and reads its ``_initialized`` flag, each where no public hook
exists. Any release of the SDK may change a private name, and an override of a renamed method
would silently never run: these tests fail loudly instead -- the method is still on the base
class, with the signature overridden or called, and the SDK still takes the path relied on.
"""

from __future__ import annotations

import inspect
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.auth.oauth2 import OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from mcpctl.auth.oauth import (
    StoredOAuthProvider,
    _is_token_request,
    client_credentials_provider,
    client_metadata,
)
from mcpctl.auth.oauthtokens import TokenStore

URL = "http://127.0.0.1:8123/mcp"

#: The SDK's private methods mcpctl overrides or calls: their parameters, and whether each
#: is a coroutine (``async def``) or an async generator (the flow).
PRIVATE = {
    "_initialize": (["self"], inspect.iscoroutinefunction),
    "_auth_flow": (["self", "request"], inspect.isasyncgenfunction),
    "_refresh_token": (["self"], inspect.iscoroutinefunction),
    "_handle_refresh_response": (["self", "response"], inspect.iscoroutinefunction),
}
OVERRIDDEN = {"_initialize", "_auth_flow"}


class Storage:
    """The SDK's ``TokenStorage``, in memory: what a test stores, it gets back."""

    def __init__(self, tokens: OAuthToken | None = None) -> None:
        self.tokens = tokens
        self.client = OAuthClientInformationFull(client_id="client-1")
        self.stored: list[OAuthToken] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.stored.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def metadata() -> Any:
    return client_metadata("http://127.0.0.1/callback")


def tokens(access: str = "AT-1", refresh: str | None = "RT-1") -> OAuthToken:
    return OAuthToken(access_token=access, refresh_token=refresh)


@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_the_private_methods_relied_on_keep_their_signatures(name: str) -> None:
    method = getattr(OAuthClientProvider, name, None)
    parameters, kind = PRIVATE[name]
    assert method is not None and kind(method), (
        f"OAuthClientProvider.{name} is gone or changed: mcpctl/auth/oauth.py overrides or "
        "calls it, and must find another way"
    )
    assert list(inspect.signature(method).parameters) == parameters


def test_mcpctl_takes_no_name_of_the_sdks_but_those_it_overrides() -> None:
    bare = type("Bare", (OAuthClientProvider,), {})  # what every subclass has of its own
    own = set(vars(StoredOAuthProvider)) - set(vars(bare)) - {"__init__", "__annotations__"}
    sdk = set(dir(OAuthClientProvider)) | set(dir(ClientCredentialsOAuthProvider))
    assert own & sdk == OVERRIDDEN, "a name of mcpctl's meets one of the SDK's provider"
    assert all(name.startswith("_mcpctl_") or name == "mcpctl" for name in own - OVERRIDDEN)
    # Its state is one attribute of the instance, whatever the SDK's provider keeps.
    provider = StoredOAuthProvider("docs", TokenStore("docs", URL), URL, metadata(), Storage())
    plain = OAuthClientProvider(URL, metadata(), Storage())
    assert set(vars(provider)) - set(vars(plain)) == {"mcpctl"}


def drive(provider: OAuthClientProvider, request: httpx2.Request) -> Any:
    """The first request the provider's public ``async_auth_flow`` sends for ``request``."""

    async def first() -> httpx2.Request:
        flow = provider.async_auth_flow(request)
        try:
            return await flow.__anext__()
        finally:
            await flow.aclose()

    return anyio.run(first)


def test_the_public_flow_runs_the_overridden_flow() -> None:
    sent = httpx2.Request("GET", "http://127.0.0.1:9/other")

    class Flow(OAuthClientProvider):
        async def _auth_flow(self, request: httpx2.Request) -> Any:
            yield sent

    assert drive(Flow(URL, metadata(), Storage()), httpx2.Request("GET", URL)) is sent


def test_the_sdk_flow_loads_the_storage_through_initialize_once() -> None:
    """The expiry and metadata restored by the override reach every flow of the SDK's."""
    loads: list[bool] = []

    class Loading(OAuthClientProvider):
        async def _initialize(self) -> None:
            loads.append(self._initialized)
            await super()._initialize()

    provider = Loading(URL, metadata(), Storage(tokens()))
    assert provider._initialized is False
    request = httpx2.Request("GET", URL)
    # The flow sends the request itself, not a copy: mcpctl's flow tells it by identity.
    assert drive(provider, request) is request
    assert request.headers["Authorization"] == "Bearer AT-1"
    assert loads == [False] and provider._initialized is True
    assert provider.context.current_tokens == tokens()
    drive(provider, httpx2.Request("GET", URL))
    assert loads == [False], "loaded once, then the flag says so"


def test_a_refresh_is_a_token_request_and_its_answer_is_kept() -> None:
    storage = Storage(tokens())
    provider = OAuthClientProvider(URL, metadata(), storage)

    async def check() -> None:
        await provider._initialize()
        request = await provider._refresh_token()
        assert isinstance(request, httpx2.Request) and _is_token_request(request)
        assert b"grant_type=refresh_token" in request.content
        answer = {"access_token": "AT-2", "token_type": "Bearer", "expires_in": 60}
        kept = await provider._handle_refresh_response(
            httpx2.Response(200, json=answer, request=request)
        )
        assert kept is True and storage.stored[-1].access_token == "AT-2"
        current = provider.context.current_tokens
        assert current is not None and current.refresh_token == "RT-1"  # carried forward
        assert provider.context.is_token_valid()
        refused = httpx2.Response(400, json={"error": "invalid_grant"}, request=request)
        assert await provider._handle_refresh_response(refused) is False
        # Cleared, so the flow does not refresh again with the refused token.
        assert not provider.context.can_refresh_token()

    anyio.run(check)


def test_only_token_requests_are_token_requests() -> None:
    assert _is_token_request(httpx2.Request("POST", URL, data={"grant_type": "x"}))
    assert not _is_token_request(httpx2.Request("POST", URL, json={"grant_types": ["x"]}))
    assert not _is_token_request(httpx2.Request("GET", URL, params={"grant_type": "x"}))
    assert not _is_token_request(httpx2.Request("POST", URL, json={"grant_type": "x"}))


def test_the_chosen_scope_outlasts_the_sdks_choice() -> None:
    """The SDK sets the scope it chooses on the context's client metadata before it asks:
    the one the user chose stays, for either grant."""
    provider = client_credentials_provider(
        "bot", TokenStore("bot", URL), URL, "bot", "s", scope="mcp:read mcp:write"
    )
    signing_in = StoredOAuthProvider(
        "docs", TokenStore("docs", URL), URL, metadata(), Storage(), scope="mcp:write"
    )
    for chosen, each in (("mcp:read mcp:write", provider), ("mcp:write", signing_in)):
        each.context.client_metadata.scope = "mcp:read"
        assert each.context.client_metadata.scope == chosen
    plain = StoredOAuthProvider("docs", TokenStore("docs", URL), URL, metadata(), Storage())
    plain.context.client_metadata.scope = "mcp:read"
    assert plain.context.client_metadata.scope == "mcp:read"  # none chosen: the SDK's
