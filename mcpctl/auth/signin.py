"""Signing in (``mcpctl auth NAME``): the browser and a loopback callback, a pasted address,
or the client-credentials grant.

The SDK's provider is driven by a real MCP request -- ``initialize`` (a GET of the event
stream for an SSE server) -- so discovery starts from the server's 401: protected-resource
metadata, then the authorization server's; the client is the entry's own ``client_id``, else
a client ID metadata document, else a dynamic registration; PKCE S256, ``state`` checked, the
``resource`` parameter. The answer comes to ``http://127.0.0.1:PORT/callback`` (a free port,
or the entry's ``callback_port``), or is pasted on stdin -- whichever comes first -- and is
checked (:mod:`mcpctl.auth.answer`) before its code is redeemed.

Nothing is stored unless tokens arrive; then they replace whatever was stored for the server.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from anyio.abc import SocketAttribute

from mcpctl.auth.answer import (
    Answer,
    Expected,
    belongs,
    check_answer,
    failed,
    ignored_note,
    parse_answer,
    read_pasted,
    serve_callback,
    shown,
)
from mcpctl.auth.oauth import (
    OAuthFlowError,
    StoredOAuthProvider,
    client_credentials_provider,
    client_metadata,
    configured_client,
)
from mcpctl.auth.oauthtokens import OAuthRecord, TokenStore
from mcpctl.auth.secrets import SecretStore
from mcpctl.config.model import AuthConfig
from mcpctl.errors import OutsideError, SignInError, UsageError
from mcpctl.httpclient import BoundedClient, ResponseTooLarge, StepTimeout

__all__ = ["Answer", "SignIn", "SignedIn", "has_display", "parse_answer", "sign_in", "step_limit"]

DEFAULT_TIMEOUT = 300.0
REQUEST_TIMEOUT = 30.0
Say = Callable[[str], None]
PASTED_IGNORED = (
    "That address does not carry the state this sign-in sent, so it is not its answer: "
    "ignored. Paste the address of this sign-in's browser tab."
)


def has_display() -> bool:
    """Whether a browser can be opened here (a graphical session, or macOS)."""
    return sys.platform == "darwin" or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


@dataclass
class SignIn:
    """What ``mcpctl auth NAME`` asks for.

    ``auth`` has its placeholders resolved. ``browser``: open one (when there is a display);
    ``paste``: also accept the redirect address on stdin. ``timeout``: seconds to wait for the
    answer.
    """

    name: str
    url: str
    auth: AuthConfig
    headers: dict[str, str] = field(default_factory=dict)
    transport: str | None = None
    scopes: tuple[str, ...] = ()
    grant: str = "authorization_code"
    browser: bool = True
    paste: bool = False
    timeout: float = DEFAULT_TIMEOUT
    client_metadata_url: str | None = None
    secrets: SecretStore | None = None


def _failed(request: SignIn, message: str, hint: str | None = None) -> SignInError:
    return failed(request.name, message, hint)


@dataclass
class SignedIn:
    """A sign-in that stored tokens: the ``record``, and ``warnings`` (answers ignored on the
    way, those without the ``state`` sent)."""

    record: OAuthRecord
    warnings: list[str] = field(default_factory=list)


async def sign_in(request: SignIn, say: Say) -> SignedIn:
    """Sign in; the stored record, and what was ignored on the way.

    ``say`` shows a line to the person signing in (the authorization URL among them). An
    answer without the ``state`` sent is ignored (counted in the warnings) while the real one
    is awaited. Each network step takes at most :func:`step_limit` in all.

    Raises:
        SignInError: denied (an error answer with the right ``state``); an answer from another
            authorization server than the one the browser was sent to (RFC 9207 ``iss``); no
            answer in time; a failed OAuth step; a token response with an unusable token, or
            a response over :data:`~mcpctl.httpclient.MAX_RESPONSE`.
        UsageError: the entry lacks what the grant needs; the callback port is taken.
        OutsideError: the server cannot be reached, or a step did not end in time.
    """
    if request.grant == "client_credentials":
        return await _client_credentials(request)
    port = request.auth.callback_port or 0
    try:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    except OSError as exc:
        raise UsageError(
            f"cannot listen for the sign-in's answer on 127.0.0.1:{port}: {exc.strerror or exc}",
            hint="free that port, or change the entry's auth.callback_port",
        ) from None
    port = int(listener.extra(SocketAttribute.local_port))  # noqa: S610 -- anyio, not Django
    redirect_uri = f"http://127.0.0.1:{port}/callback"
    metadata_url = request.client_metadata_url or request.auth.client_metadata_url
    scope = " ".join(request.scopes or request.auth.scopes) or None
    sent, received = anyio.create_memory_object_stream[Answer](8)
    expected = Expected()
    ignored = {False: 0, True: 0}  # answers without the right state: from the callback, pasted

    async def on_redirect(url: str) -> None:
        expected.state = parse_qs(urlsplit(url).query).get("state", [None])[0]
        # The server the browser goes to, as discovery found it: its answer must name it.
        metadata = provider.context.oauth_metadata
        expected.issuer = str(metadata.issuer) if metadata is not None else None
        expected.iss_required = bool(
            metadata is not None and metadata.authorization_response_iss_parameter_supported
        )
        say(f"To sign in to {request.name}, open this address in a browser:")
        say(url)
        more = (
            " -- or paste here the address it was sent to, then press Enter"
            if request.paste
            else ""
        )
        say(f"Waiting for the answer at {redirect_uri}{more}")
        if request.browser and has_display():
            import webbrowser

            await anyio.to_thread.run_sync(webbrowser.open, url, abandon_on_cancel=True)

    async def on_answer() -> Any:
        from mcpctl.sdk import AuthorizationCodeResult

        with anyio.move_on_after(request.timeout):
            while True:
                answer = await received.receive()
                if belongs(answer, expected):
                    code = check_answer(request.name, answer, expected)
                    return AuthorizationCodeResult(code=code, state=answer.state, iss=answer.iss)
                # Not this sign-in's (an old tab, a forged link): never believed, not even
                # its error; the real answer may still come.
                ignored[answer.pasted] += 1
                if answer.pasted:
                    say(PASTED_IGNORED)
        more = f" ({ignored_note(ignored[False], ignored[True])})" if any(ignored.values()) else ""
        raise _failed(
            request,
            f"no answer within {_duration(request.timeout)}{more}",
            hint="run it again, and finish the sign-in in the browser in time",
        )

    store = TokenStore(
        request.name, request.url, request.secrets,
        configured_client=configured_client(request.auth, redirect_uri), sign_in=True,
        redirect_uri=redirect_uri, client_metadata_url=metadata_url,
    )  # fmt: skip
    try:
        provider = StoredOAuthProvider(
            request.name, store, request.url,
            client_metadata(redirect_uri, scope=scope, secret=bool(request.auth.client_secret)),
            store, redirect_handler=on_redirect, callback_handler=on_answer,
            client_metadata_url=metadata_url, scope=scope,
        )  # fmt: skip
    except ValueError as exc:  # a client metadata URL that is not https with a path
        await listener.aclose()
        raise UsageError(str(exc)) from None
    failure: list[Exception] = []
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(serve_callback, listener, sent, expected)
        if request.paste:
            tg.start_soon(read_pasted, sent, say)
        try:
            await _drive(request, provider, store)
        except Exception as exc:  # raised below as it is, not in the task group's group
            failure.append(exc)
        finally:
            tg.cancel_scope.cancel()
    if failure:
        raise failure[0]
    assert store.record is not None
    warnings = [ignored_note(ignored[False], ignored[True])] if any(ignored.values()) else []
    return SignedIn(store.record, warnings)


async def _client_credentials(request: SignIn) -> SignedIn:
    auth = request.auth
    if not auth.client_id or not auth.client_secret:
        raise UsageError(
            f"the client-credentials grant needs the client_id and client_secret of "
            f"{request.name}'s auth",
            hint='set "client_id" and "client_secret": "${VAR}" in its "auth"',
        )
    scope = " ".join(request.scopes or auth.scopes) or None
    store = TokenStore(request.name, request.url, request.secrets,
                       configured_client=configured_client(auth), sign_in=True,
                       grant="client_credentials")  # fmt: skip
    provider = client_credentials_provider(
        request.name, store, request.url, auth.client_id, auth.client_secret, scope=scope
    )
    await _drive(request, provider, store)
    assert store.record is not None
    return SignedIn(store.record)


def step_limit(request: SignIn) -> float:
    """The time each network step of a sign-in may take in all (a metadata document, the
    registration, the token exchange, the MCP request): the ``timeout``, at most
    :data:`REQUEST_TIMEOUT`."""
    return min(request.timeout, REQUEST_TIMEOUT)


async def _drive(request: SignIn, provider: StoredOAuthProvider, store: TokenStore) -> None:
    """Make the MCP request that starts the flow; fail unless it ended with stored tokens."""
    limit = step_limit(request)
    try:
        async with BoundedClient(limit=limit, headers=request.headers, auth=provider) as client:
            status = await _touch(client, request)
    except OAuthFlowError as exc:  # its text may quote the server
        raise _failed(request, shown(str(exc))) from None
    except StepTimeout as exc:
        raise OutsideError(
            f"{_target(exc)} did not answer in full within {_duration(limit)}",
            hint="try again later; a server that trickles its answer is given up on",
        ) from None
    except httpx2.TimeoutException as exc:
        raise OutsideError(f"{_target(exc)} did not answer within {_duration(limit)}") from None
    except ResponseTooLarge as exc:
        raise _failed(
            request,
            f"{_target(exc)} answered with more than {exc.limit // (1024 * 1024)} MiB",
        ) from None
    except httpx2.HTTPError as exc:
        raise OutsideError(f"cannot reach {request.url}: {type(exc).__name__}: {exc}") from None
    if status in (401, 403):
        raise _failed(request, f"the server refused the new sign-in (HTTP {status})")
    if store.tokens_saved == 0:
        raise _failed(
            request,
            f"the server answered HTTP {status} without asking for a sign-in, so there is "
            "nothing to sign in to",
            hint="check the entry's url; a server that needs no sign-in needs no auth",
        )


def _target(exc: httpx2.HTTPError) -> str:
    """The request a failure is about, for a message (``POST http://…/token``)."""
    try:
        request = exc.request
    except RuntimeError:  # not set
        return "the server"
    url = request.url.copy_with(query=None, fragment=None)
    return shown(f"{request.method} {url}")


async def _touch(client: httpx2.AsyncClient, request: SignIn) -> int:
    """The status of an MCP ``initialize`` (or of an SSE server's event stream)."""
    import mcp_types

    from mcpctl._version import __version__

    if request.transport == "sse":
        return await _open_event_stream(client, request.url)
    message = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": mcp_types.LATEST_PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "mcpctl", "version": __version__},
        },
    }  # fmt: skip
    accept = {"Accept": "application/json, text/event-stream"}
    async with client.stream("POST", request.url, json=message, headers=accept) as response:
        status = response.status_code
        session = response.headers.get("mcp-session-id")
    if session:  # end the session just opened (a courtesy; the server would expire it)
        with contextlib.suppress(httpx2.HTTPError):
            await client.delete(request.url, headers={"Mcp-Session-Id": session})
    if request.transport is None and status in (404, 405):  # an SSE server, probably
        return await _open_event_stream(client, request.url)
    return status


async def _open_event_stream(client: httpx2.AsyncClient, url: str) -> int:
    async with client.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
        return response.status_code


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"
