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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

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

if TYPE_CHECKING:
    from mcpctl.sdk import OAuthContext

__all__ = [
    "OAuthFlowError",
    "PinnedScopeMetadata",
    "ProviderState",
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


def _is_token_request(request: httpx2.Request) -> bool:
    """Whether the flow sent this to the token endpoint: the only request of OAuth with a
    ``grant_type`` form field (a code exchange, a refresh, a client-credentials grant)."""
    if request.method != "POST":
        return False
    try:
        form = parse_qs(request.content.decode("utf-8", "replace"))
    except httpx2.RequestNotRead:  # a streamed body: none of the flow's
        return False
    return "grant_type" in form


def _should_refresh(context: OAuthContext) -> bool:
    return not context.is_token_valid() and context.can_refresh_token()


def _access_token(context: OAuthContext) -> str | None:
    tokens = context.current_tokens
    return tokens.access_token if tokens is not None and tokens.access_token else None


def _authorize(request: httpx2.Request, context: OAuthContext) -> None:
    """Put the current access token on ``request`` (what the SDK does before it sends one)."""
    token = _access_token(context)
    if token is not None:
        request.headers["Authorization"] = f"Bearer {token}"


def _pin_scope(context: OAuthContext, scope: str | None) -> None:
    """Keep ``scope``, when given, as what the provider asks for (see
    :class:`PinnedScopeMetadata`)."""
    metadata = context.client_metadata
    if scope is None or (isinstance(metadata, PinnedScopeMetadata) and metadata._pinned == scope):
        return
    pinned = PinnedScopeMetadata.model_validate(
        metadata.model_dump(exclude_unset=True) | {"scope": scope}
    )
    pinned._pinned = scope
    context.client_metadata = pinned


@dataclass
class ProviderState:
    """mcpctl's own part of a :class:`StoredOAuthProvider`, held in one attribute
    (``provider.mcpctl``) so that none of its names can meet one the SDK's provider has or
    adds.

    ``reauthorizes``: whether a 401 may be answered without a person (a new
    client-credentials grant).
    """

    name: str
    store: TokenStore
    connecting: bool = False
    reauthorizes: bool = False
    guard: anyio.Lock = field(default_factory=anyio.Lock)

    def failure(self, message: str, hint: str | None = None) -> ProbeFailed:
        """The error of a run that needs a new sign-in."""
        hint = hint or sign_in_hint(self.name)
        return ProbeFailed(self.name, "auth_required", message, hint=hint)

    def why_no_tokens(self) -> str:
        """Why the stored sign-in cannot be used or renewed (a failure's message)."""
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

    def intercepts(self, response: httpx2.Response) -> bool:
        """Whether a refusal of the request is mcpctl's to handle, not the SDK's (which
        would start a sign-in in a browser)."""
        return self.connecting and not self.reauthorizes and _wants_sign_in(response)

    async def checked(self, context: OAuthContext, response: httpx2.Response) -> httpx2.Response:
        """A token response, checked before the SDK keeps anything of it: the metadata the
        flow discovered is noted first (stored with the tokens); a successful response's
        tokens fit in a header (:func:`~mcpctl.auth.records.token_problem`), and an
        ``expires_in`` that is no sane lifetime is dropped (unknown: the token is used until
        refused).

        Raises:
            SignInError: an unusable token (a sign-in); ProbeFailed ``auth_required`` for a
                connecting command.
        """
        self.store.note_metadata(context.oauth_metadata, context.protected_resource_metadata)
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


class StoredOAuthProvider(OAuthClientProvider):
    """The SDK's provider over a :class:`TokenStore`, restoring what the SDK forgets between
    processes (see the module's docstring).

    Everything is given through the SDK's public constructor (the storage, the redirect and
    callback handlers, the client metadata); two of its private methods are overridden, each
    where no public hook exists, and ``tests/auth/test_sdk_contract.py`` fails when the SDK
    changes one of them. mcpctl's own state is :attr:`mcpctl` (a :class:`ProviderState`), its
    own helpers are module functions or ``_mcpctl_`` methods: no name of the SDK's is taken.

    Args:
        name: the server's name (for the lock and the messages).
        store: its token store.
        connecting: a connecting command: no browser; a 401 that a refresh cannot cure
            raises :class:`ProbeFailed` ``auth_required``.
        scope: the scopes to ask for (default: what the server advertises).
        **kwargs: those of ``OAuthClientProvider``.
    """

    mcpctl: ProviderState

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
        self.mcpctl = ProviderState(name, store, connecting=connecting)
        _pin_scope(self.context, scope)

    # Kept: the SDK's step that loads the storage into its context (run by its flow and by
    # the one below). The storage protocol has no place for the expiry and the metadata,
    # and no public hook runs after the load.
    async def _initialize(self) -> None:
        await super()._initialize()
        record = self.mcpctl.store.current()
        context = self.context
        if record is None:
            return
        # The stored metadata is that of the stored tokens, so it wins over what the context
        # holds: another process may have signed in anew meanwhile, at another server.
        if record.auth_server:
            with contextlib.suppress(ValueError):
                context.oauth_metadata = OAuthMetadata.model_validate(record.auth_server)
        if record.resource:
            with contextlib.suppress(ValueError):
                resource = ProtectedResourceMetadata.model_validate(record.resource)
                context.protected_resource_metadata = resource
                context.auth_server_url = str(resource.authorization_servers[0])
        context.token_expiry_time = record.valid_until() if record.has_tokens else None

    # A refresh is the SDK's own (``_refresh_token`` builds it, ``_handle_refresh_response``
    # keeps its answer): called, not overridden, so a change to either fails loudly.
    async def _mcpctl_after_refresh(self, response: httpx2.Response) -> None:
        state = self.mcpctl
        response = await state.checked(self.context, response)
        if await self._handle_refresh_response(response):
            return
        if response.status_code in (400, 401):  # invalid_grant, invalid_client
            await state.store.mark_sign_in_needed(REFUSED_REFRESH)
            if state.connecting:
                raise state.failure(REFUSED_REFRESH + " (its refresh token was revoked or expired)")
            return
        raise state.failure(
            f"renewing the sign-in failed: the authorization server answered HTTP "
            f"{response.status_code}",
            hint=f"try again later; if it persists, {sign_in_hint(state.name)}",
        )

    # Kept: the flow proper, which the SDK's public ``async_auth_flow`` drives (following the
    # redirects of the flow's own requests). No public hook lets a refresh wait for another
    # process's, check a token response before the SDK keeps it, or keep a 401 from becoming
    # a browser sign-in; so this wraps the SDK's flow and passes its requests through.
    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        state = self.mcpctl
        context = self.context
        try:
            async with state.guard:
                if not self._initialized:
                    await self._initialize()
                if _should_refresh(context):
                    async with refresh_lock(state.name):
                        await self._initialize()  # another process may have just refreshed
                        if _should_refresh(context):
                            await self._mcpctl_after_refresh((yield await self._refresh_token()))
            inner = super()._auth_flow(request)
            try:
                outgoing = await inner.__anext__()
                while True:
                    response = yield outgoing
                    if outgoing is request and state.intercepts(response):
                        break
                    if _is_token_request(outgoing):
                        response = await state.checked(context, response)
                    try:
                        outgoing = await inner.asend(response)
                    except StopAsyncIteration:
                        return
            finally:
                await inner.aclose()
            # The server refused the stored tokens (revoked, or expired early): renew them once,
            # unless another process already did, and send the request again.
            if response.status_code == 403:
                raise state.failure("the server asks for more scopes than the stored sign-in has")
            rejected = _access_token(context)
            async with state.guard, refresh_lock(state.name):
                await self._initialize()
                current = _access_token(context)
                if current is None or current == rejected:
                    if not context.can_refresh_token():
                        raise state.failure(state.why_no_tokens())
                    await self._mcpctl_after_refresh((yield await self._refresh_token()))
            _authorize(request, context)
            if _wants_sign_in((yield request)):
                raise state.failure("the server refused the renewed sign-in")
        except KeyringUnavailableError as exc:
            if not state.connecting:
                raise
            raise state.failure(f"the sign-in cannot be read: {exc.message}", exc.hint) from None
        except OAuthFlowError as exc:
            if not state.connecting:
                raise
            raise state.failure(f"the OAuth flow failed: {exc}") from None


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
            self.mcpctl = ProviderState(name, store, connecting=connecting, reauthorizes=True)
            _pin_scope(self.context, scope)

    return ClientCredentials()
