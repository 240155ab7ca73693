"""OAuth 2.1 for remote entries, through the SDK's providers, with tokens from the keyring.

The SDK's ``OAuthClientProvider`` (an ``httpx2.Auth``) does discovery, registration, PKCE and
the token exchange. What it does not do for a program that runs once and exits, the subclasses
here add:

* it does not restore the expiry of stored tokens: :class:`~mcpctl.auth.oauthtokens.TokenStore`
  keeps an absolute expiry, hands out an expired access token as empty, and the provider's
  context is given that expiry;
* in a fresh process it would refresh against ``{server origin}/token`` without the
  ``resource`` parameter: the stored authorization-server and protected-resource metadata are
  put back into its context first, so a refresh goes where the tokens came from;
* with refresh-token rotation, two processes refreshing at once invalidate each other: a
  refresh happens under a file lock (:func:`~mcpctl.auth.oauthtokens.refresh_lock`), after reading
  the tokens again -- the process that waited uses the ones the other just stored;
* on a 401 it would start a browser sign-in: a connecting command (``health``, ``tools``,
  ``call``, :func:`mcpctl.probe.open_session`) instead tries the refresh token once, then fails
  with :class:`~mcpctl.errors.ProbeFailed` ``auth_required`` and the hint ``mcpctl auth NAME``.

:mod:`mcpctl.auth.connecting` builds what :mod:`mcpctl.probe.connect` uses for ``oauth``
entries; :mod:`mcpctl.auth.signin` the interactive providers of ``mcpctl auth``.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import AsyncGenerator
from typing import Any

import anyio
import httpx2
from pydantic import PrivateAttr

from mcpctl._version import __version__
from mcpctl.auth.answer import failed
from mcpctl.auth.oauthtokens import TokenStore, refresh_lock
from mcpctl.auth.records import sane_lifetime, token_problem
from mcpctl.config.model import AuthConfig
from mcpctl.errors import KeyringUnavailableError, ProbeFailed
from mcpctl.sdk import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthClientProvider,
    OAuthFlowError,
    OAuthMetadata,
    ProtectedResourceMetadata,
)

__all__ = [
    "OAuthFlowError",
    "PinnedScopeMetadata",
    "StoredOAuthProvider",
    "client_credentials_provider",
    "client_metadata",
    "configured_client",
    "sign_in_hint",
]

REFUSED_REFRESH = "the authorization server refused to renew the sign-in"


def sign_in_hint(name: str) -> str:
    """The hint of every failure a new sign-in fixes."""
    return f"run 'mcpctl auth {name}' to sign in"


class PinnedScopeMetadata(OAuthClientMetadata):
    """Client metadata whose ``scope``, once chosen by the user, stays: the SDK replaces it
    with the scopes the server advertises before it registers and authorizes."""

    _pinned: str | None = PrivateAttr(default=None)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "scope" and self._pinned is not None:
            value = self._pinned
        super().__setattr__(name, value)


def client_metadata(
    redirect_uri: str, *, scope: str | None = None, secret: bool = False
) -> OAuthClientMetadata:
    """What mcpctl registers as: a native app with a loopback redirect, public unless the
    entry configures a client secret; ``scope``, when given, is what it asks for whatever the
    server advertises."""
    metadata = PinnedScopeMetadata.model_validate({
        # Said, not left to the SDK's default: OpenID registration takes a client that does
        # not say for a web app, and a web app may not redirect to a loopback http:// URI.
        "application_type": "native",
        "redirect_uris": [redirect_uri],
        "token_endpoint_auth_method": "client_secret_post" if secret else "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "scope": scope,
        "client_name": "mcpctl",
        "software_id": "mcpctl",
        "software_version": __version__,
    })  # fmt: skip
    metadata._pinned = scope
    return metadata


def configured_client(
    auth: AuthConfig, redirect_uri: str | None = None
) -> OAuthClientInformationFull | None:
    """The entry's own client (``client_id``, and ``client_secret`` resolved from its
    placeholder), used instead of any registration; ``None`` when it names none."""
    if not auth.client_id:
        return None
    data: dict[str, Any] = {
        "client_id": auth.client_id,
        "token_endpoint_auth_method": "client_secret_post" if auth.client_secret else "none",
        "grant_types": ["authorization_code", "refresh_token"],
    }
    if auth.client_secret:
        data["client_secret"] = auth.client_secret
    if redirect_uri:
        data["redirect_uris"] = [redirect_uri]
    return OAuthClientInformationFull.model_validate(data)


def _wants_sign_in(response: httpx2.Response) -> bool:
    if response.status_code == 401:
        return True
    if response.status_code != 403:
        return False
    return "insufficient_scope" in response.headers.get("www-authenticate", "")


class StoredOAuthProvider(OAuthClientProvider):
    """The SDK's provider over a :class:`TokenStore`, restoring what the SDK forgets between
    processes (see the module's docstring).

    Args:
        name: the server's name (for the lock and the messages).
        store: its token store.
        connecting: a connecting command: no browser; a 401 that a refresh cannot cure
            raises :class:`ProbeFailed` ``auth_required``.
        scope: the scopes to ask for (default: what the server advertises).
        **kwargs: those of ``OAuthClientProvider``.
    """

    def __init__(
        self,
        name: str,
        store: TokenStore,
        *args: Any,
        connecting: bool = False,
        scope: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._setup(name, store, connecting=connecting, scope=scope)

    def _setup(self, name: str, store: TokenStore, *, connecting: bool, scope: str | None) -> None:
        self.name = name
        self.store = store
        self.connecting = connecting
        self.scope = scope
        self.reauthorizes = False  # whether a 401 may be answered without a person
        self._guard = anyio.Lock()

    # --- what the SDK forgets between processes ------------------------------------------------

    async def _initialize(self) -> None:
        await super()._initialize()
        record = self.store.current()
        context = self.context
        if record is None:
            return
        if context.oauth_metadata is None and record.auth_server:
            with contextlib.suppress(ValueError):
                context.oauth_metadata = OAuthMetadata.model_validate(record.auth_server)
        if context.protected_resource_metadata is None and record.resource:
            with contextlib.suppress(ValueError):
                resource = ProtectedResourceMetadata.model_validate(record.resource)
                context.protected_resource_metadata = resource
                context.auth_server_url = str(resource.authorization_servers[0])
        context.token_expiry_time = record.valid_until() if record.has_tokens else None

    def _note_metadata(self) -> None:
        context = self.context
        self.store.note_metadata(context.oauth_metadata, context.protected_resource_metadata)

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        self._note_metadata()
        await super()._handle_token_response(await self._checked(response))

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        self._note_metadata()
        return await super()._handle_refresh_response(await self._checked(response))

    async def _checked(self, response: httpx2.Response) -> httpx2.Response:
        """A successful token response, checked before anything of it is kept: its tokens
        fit in a header (:func:`~mcpctl.auth.records.token_problem`), and an ``expires_in``
        that is no sane lifetime is dropped (unknown: the token is used until refused).

        Raises:
            SignInError: an unusable token (a sign-in); ProbeFailed ``auth_required`` for a
                connecting command.
        """
        if response.status_code not in (200, 201):
            return response
        try:
            data = json.loads(await response.aread())
        except ValueError:
            return response  # not JSON: the SDK says so
        if not isinstance(data, dict):
            return response
        for name in ("access_token", "refresh_token"):
            if name == "refresh_token" and data.get(name) is None:
                continue
            problem = token_problem(data.get(name))
            if problem is not None:
                what = f"the authorization server sent an unusable {name}: it {problem}"
                if self.connecting:
                    raise self.failure(f"renewing the sign-in failed: {what}")
                raise failed(self.name, f"{what}; nothing was stored")
        lifetime = sane_lifetime(data.get("expires_in"))
        if lifetime is None:
            data.pop("expires_in", None)
        else:
            data["expires_in"] = max(1, round(lifetime))
        return httpx2.Response(
            response.status_code,
            headers={"Content-Type": "application/json"},
            content=json.dumps(data).encode(),
            request=response.request,
        )

    async def _perform_authorization(self) -> httpx2.Request:
        if self.scope:
            self.context.client_metadata.scope = self.scope
        return await super()._perform_authorization()

    # --- the flow ---------------------------------------------------------------------------

    def _should_refresh(self) -> bool:
        return not self.context.is_token_valid() and self.context.can_refresh_token()

    def _access_token(self) -> str | None:
        tokens = self.context.current_tokens
        return tokens.access_token if tokens is not None and tokens.access_token else None

    def failure(self, message: str, hint: str | None = None) -> ProbeFailed:
        """The error of a run that needs a new sign-in."""
        hint = hint or sign_in_hint(self.name)
        return ProbeFailed(self.name, "auth_required", message, hint=hint)

    def _why_no_tokens(self) -> str:
        record = self.store.record
        if record is None:
            return "the server needs a sign-in, and there is none stored"
        if not record.bound_to(self.store.url):
            return "the stored sign-in is for another URL (the entry's url changed)"
        if record.sign_in_needed:
            return record.sign_in_needed
        if record.expired() and not record.refresh_token:
            return "the sign-in has expired, and there is no refresh token to renew it"
        return "the server refused the stored sign-in"

    async def _after_refresh(self, response: httpx2.Response) -> None:
        if await self._handle_refresh_response(response):
            return
        if response.status_code in (400, 401):  # invalid_grant, invalid_client
            await self.store.mark_sign_in_needed(REFUSED_REFRESH)
            if self.connecting:
                raise self.failure(REFUSED_REFRESH + " (its refresh token was revoked or expired)")
            return
        raise self.failure(
            f"renewing the sign-in failed: the authorization server answered HTTP "
            f"{response.status_code}",
            hint=f"try again later; if it persists, {sign_in_hint(self.name)}",
        )

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        try:
            async with self._guard:
                if not self._initialized:
                    await self._initialize()
                if self._should_refresh():
                    async with refresh_lock(self.name):
                        await self._initialize()  # another process may have just refreshed
                        if self._should_refresh():
                            await self._after_refresh((yield await self._refresh_token()))
            inner = super()._auth_flow(request)
            try:
                outgoing = await inner.__anext__()
                while True:
                    response = yield outgoing
                    if outgoing is request and self._intercepts(response):
                        break
                    try:
                        outgoing = await inner.asend(response)
                    except StopAsyncIteration:
                        return
            finally:
                await inner.aclose()
            # The server refused the stored tokens (revoked, or expired early): renew them once,
            # unless another process already did, and send the request again.
            if response.status_code == 403:
                raise self.failure("the server asks for more scopes than the stored sign-in has")
            rejected = self._access_token()
            async with self._guard, refresh_lock(self.name):
                await self._initialize()
                current = self._access_token()
                if current is None or current == rejected:
                    if not self.context.can_refresh_token():
                        raise self.failure(self._why_no_tokens())
                    await self._after_refresh((yield await self._refresh_token()))
            self._add_auth_header(request)
            if _wants_sign_in((yield request)):
                raise self.failure("the server refused the renewed sign-in")
        except KeyringUnavailableError as exc:
            if not self.connecting:
                raise
            raise self.failure(f"the sign-in cannot be read: {exc.message}", exc.hint) from None
        except OAuthFlowError as exc:
            if not self.connecting:
                raise
            raise self.failure(f"the OAuth flow failed: {exc}") from None

    def _intercepts(self, response: httpx2.Response) -> bool:
        """Whether a refusal of the request is this class's to handle, not the SDK's (which
        would start a sign-in in a browser)."""
        return self.connecting and not self.reauthorizes and _wants_sign_in(response)


def client_credentials_provider(
    name: str,
    store: TokenStore,
    url: str,
    client_id: str,
    client_secret: str,
    *,
    scope: str | None = None,
    issuer: str | None = None,
    connecting: bool = False,
) -> StoredOAuthProvider:
    """The SDK's ``ClientCredentialsOAuthProvider`` (machine to machine, no browser) over
    ``store``."""
    from mcpctl.sdk import ClientCredentialsOAuthProvider

    class ClientCredentials(StoredOAuthProvider, ClientCredentialsOAuthProvider):
        def __init__(self) -> None:
            with warnings.catch_warnings():  # no issuer yet: whichever discovery finds
                warnings.simplefilter("ignore")
                ClientCredentialsOAuthProvider.__init__(
                    self, url, store, client_id, client_secret,
                    token_endpoint_auth_method="client_secret_post",  # noqa: S106 -- a method's name
                    scope=scope, issuer=issuer,
                )  # fmt: skip
            self._setup(name, store, connecting=connecting, scope=scope)
            self.reauthorizes = True

    return ClientCredentials()
