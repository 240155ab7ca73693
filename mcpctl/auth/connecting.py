"""The auth of an ``oauth`` entry for connecting commands (``health``, ``tools``, ``call``,
:func:`mcpctl.probe.open_session`): the stored sign-in, renewed when it expires, never a
browser -- a run that needs a new sign-in fails with :class:`~mcpctl.errors.ProbeFailed`
``auth_required`` and the hint ``mcpctl auth NAME``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

import httpx2

from mcpctl.auth.oauth import (
    OAuthFlowError,
    StoredOAuthProvider,
    client_credentials_provider,
    client_metadata,
    configured_client,
)
from mcpctl.auth.oauthtokens import TokenStore
from mcpctl.config.model import AuthConfig
from mcpctl.errors import KeyringUnavailableError, ProbeFailed

if TYPE_CHECKING:
    from mcpctl.sdk import AuthorizationCodeResult

__all__ = ["ConnectingAuth", "connecting_auth"]

PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback"  # a connecting command never redirects


async def _no_browser(url: str) -> None:
    raise OAuthFlowError("a sign-in in a browser is needed")


async def _no_callback() -> AuthorizationCodeResult:
    raise OAuthFlowError("a sign-in in a browser is needed")


class ConnectingAuth(httpx2.Auth):
    """The auth of an ``oauth`` entry for a connecting command: the stored sign-in, renewed
    when expired, never a browser.

    The provider is chosen on the first request, from the stored grant (reading the keyring
    then, not when the connection is set up).
    """

    requires_response_body = True

    def __init__(self, name: str, url: str, auth: AuthConfig) -> None:
        self.name = name
        self.url = url
        self.auth = auth
        self._provider: StoredOAuthProvider | None = None

    async def provider(self) -> StoredOAuthProvider:
        """The provider for the stored grant."""
        if self._provider is not None:
            return self._provider
        auth = self.auth
        configured = configured_client(auth)
        store = TokenStore(self.name, self.url, configured_client=configured)
        try:
            record = await store.aload()
        except KeyringUnavailableError as exc:
            message = f"the sign-in cannot be read: {exc.message}"
            raise ProbeFailed(self.name, "auth_required", message, hint=exc.hint) from None
        scope = " ".join(auth.scopes) or None
        bound = record is not None and record.bound_to(self.url)
        if record is not None and bound and record.grant == "client_credentials":
            if not auth.client_id or not auth.client_secret:
                raise ProbeFailed(
                    self.name, "auth_required",
                    "the client-credentials grant needs the entry's client_id and client_secret",
                    hint="set auth.client_id and auth.client_secret (a ${VAR} placeholder)",
                )  # fmt: skip
            store.grant = "client_credentials"
            self._provider = client_credentials_provider(
                self.name, store, self.url, auth.client_id, auth.client_secret,
                scope=(record.scope or scope), issuer=record.issuer, connecting=True,
            )  # fmt: skip
        else:
            metadata = client_metadata(PLACEHOLDER_REDIRECT, scope=scope,
                                       secret=bool(auth.client_secret))  # fmt: skip
            self._provider = StoredOAuthProvider(
                self.name, store, self.url, metadata, store,
                redirect_handler=_no_browser, callback_handler=_no_callback, connecting=True,
            )  # fmt: skip
        return self._provider

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = (await self.provider()).async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                try:
                    outgoing = await flow.asend(response)
                except StopAsyncIteration:
                    return
        finally:
            await flow.aclose()


def connecting_auth(name: str, url: str, auth: AuthConfig) -> httpx2.Auth:
    """The ``httpx2.Auth`` of an ``oauth`` entry (placeholders resolved) for a connecting
    command; see :class:`ConnectingAuth`."""
    return ConnectingAuth(name, url, auth)
