"""Signing in (``mcpctl auth NAME``): the browser and a loopback callback, a pasted address,
or the client-credentials grant.

The SDK's provider is driven by a real MCP request -- ``initialize`` (a GET of the event
stream for an SSE server) -- so discovery starts from the server's 401: protected-resource
metadata, then the authorization server's; the client is the entry's own ``client_id``, else
a client ID metadata document, else a dynamic registration; PKCE S256, ``state`` checked, the
``resource`` parameter. The answer comes to ``http://127.0.0.1:PORT/callback`` (a free port,
or the entry's ``callback_port``), or is pasted on stdin -- whichever comes first.

Nothing is stored unless tokens arrive; then they replace whatever was stored for the server.
"""

from __future__ import annotations

import contextlib
import html
import os
import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from anyio.abc import SocketAttribute, SocketStream
from anyio.streams.memory import MemoryObjectSendStream

from mcpctl.auth.oauth import (
    OAuthFlowError,
    StoredOAuthProvider,
    client_credentials_provider,
    client_metadata,
    configured_client,
)
from mcpctl.auth.secrets import SecretStore
from mcpctl.auth.tokens import OAuthRecord, TokenStore
from mcpctl.config.model import AuthConfig
from mcpctl.errors import OutsideError, SignInError, UsageError

__all__ = ["Answer", "SignIn", "has_display", "parse_answer", "sign_in"]

DEFAULT_TIMEOUT = 300.0
REQUEST_TIMEOUT = 30.0
MAX_REQUEST = 16 * 1024
Say = Callable[[str], None]


def has_display() -> bool:
    """Whether a browser can be opened here (a graphical session, or macOS)."""
    return sys.platform == "darwin" or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


@dataclass(frozen=True)
class Answer:
    """What the authorization server sent back through the browser."""

    code: str | None = None
    state: str | None = None
    iss: str | None = None
    error: str | None = None
    error_description: str | None = None


def parse_answer(text: str) -> Answer | None:
    """The answer in a redirect address (or just its query), or ``None`` if it holds none."""
    text = text.strip()
    query = urlsplit(text).query if "://" in text else text.lstrip("?")
    values = {k: v[0] for k, v in parse_qs(query).items() if v}
    if "code" not in values and "error" not in values:
        return None
    return Answer(
        code=values.get("code"),
        state=values.get("state"),
        iss=values.get("iss"),
        error=values.get("error"),
        error_description=values.get("error_description"),
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
    return SignInError(f"signing in to {request.name} failed: {message}", hint=hint)


async def sign_in(request: SignIn, say: Say) -> OAuthRecord:
    """Sign in; the stored record.

    ``say`` shows a line to the person signing in (the authorization URL among them).

    Raises:
        McpctlError: denied, wrong ``state``, no answer in time, a failed OAuth step.
        UsageError: the entry lacks what the grant needs; the callback port is taken.
        OutsideError: the server cannot be reached.
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
    expected: dict[str, str | None] = {}

    async def on_redirect(url: str) -> None:
        expected["state"] = parse_qs(urlsplit(url).query).get("state", [None])[0]
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
        from mcp.shared.auth import AuthorizationCodeResult

        with anyio.move_on_after(request.timeout):
            answer = await received.receive()
            return AuthorizationCodeResult(code=_check(request, answer, expected.get("state")),
                                           state=answer.state, iss=answer.iss)  # fmt: skip
        raise _failed(
            request,
            f"no answer within {_duration(request.timeout)}",
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
        tg.start_soon(_serve, listener, sent, expected)
        if request.paste:
            tg.start_soon(_read_pasted, sent, say)
        try:
            await _drive(request, provider, store)
        except Exception as exc:  # raised below as it is, not in the task group's group
            failure.append(exc)
        finally:
            tg.cancel_scope.cancel()
    if failure:
        raise failure[0]
    assert store.record is not None
    return store.record


def _check(request: SignIn, answer: Answer, state: str | None) -> str:
    """The authorization code of ``answer``, or the reason there is none."""
    if answer.error:
        detail = f": {answer.error_description}" if answer.error_description else ""
        if answer.error == "access_denied":
            raise _failed(
                request,
                f"access was denied ({answer.error}{detail})",
                hint=f"run 'mcpctl auth {request.name}' again and allow access",
            )
        raise _failed(request, f"the authorization server answered {answer.error}{detail}")
    if state is None or answer.state != state:
        raise _failed(
            request,
            "the answer does not carry the state this sign-in sent, so it is not the answer to "
            "it (an old tab, or a forged link); nothing was stored",
            hint=f"run 'mcpctl auth {request.name}' again and use the address it prints",
        )
    if not answer.code:
        raise _failed(request, "the answer carries no authorization code")
    return answer.code


async def _client_credentials(request: SignIn) -> OAuthRecord:
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
    return store.record


async def _drive(request: SignIn, provider: StoredOAuthProvider, store: TokenStore) -> None:
    """Make the MCP request that starts the flow; fail unless it ended with stored tokens."""
    timeout = httpx2.Timeout(REQUEST_TIMEOUT)
    try:
        async with httpx2.AsyncClient(
            headers=request.headers, timeout=timeout, auth=provider
        ) as client:
            status = await _touch(client, request)
    except OAuthFlowError as exc:
        raise _failed(request, str(exc)) from None
    except httpx2.TimeoutException:
        raise OutsideError(f"{request.url} did not answer within {REQUEST_TIMEOUT:g} s") from None
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


# --- the answer: the loopback callback, or a pasted address --------------------------------


_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>mcpctl</title></head>
<body style="font-family: sans-serif; margin: 3em"><h1>{title}</h1><p>{text}</p></body></html>
"""


async def _serve(
    listener: Any, sent: MemoryObjectSendStream[Answer], expected: dict[str, str | None]
) -> None:
    async def handle(stream: SocketStream) -> None:
        with contextlib.suppress(Exception):
            async with stream:
                await _answer_one(stream, sent, expected)

    await listener.serve(handle)


async def _answer_one(
    stream: SocketStream, sent: MemoryObjectSendStream[Answer], expected: dict[str, str | None]
) -> None:
    data = b""
    with anyio.move_on_after(10):
        while b"\r\n\r\n" not in data and len(data) < MAX_REQUEST:
            data += await stream.receive(4096)
    method, _, rest = data.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
    target = rest.partition(" ")[0]
    path, _, query = target.partition("?")
    if method != "GET" or path != "/callback":
        await _respond(stream, "404 Not Found", "Not found", "This is mcpctl's sign-in callback.")
        return
    answer = parse_answer(query) or Answer(error="invalid_request",
                                           error_description="no code in the answer")  # fmt: skip
    if answer.error:
        title, text = "Sign-in failed", f"The authorization server answered: {answer.error}."
    elif expected.get("state") is None or answer.state != expected.get("state"):
        title, text = (
            "Sign-in refused",
            "This answer does not belong to the sign-in mcpctl started.",
        )
    else:
        title, text = "Signed in", "mcpctl has the answer; you can close this tab."
    await _respond(stream, "200 OK", title, text)
    await sent.send(answer)


async def _respond(stream: SocketStream, status: str, title: str, text: str) -> None:
    body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
    await stream.send(head.encode() + body)


async def _read_pasted(sent: MemoryObjectSendStream[Answer], say: Say) -> None:
    """Answers pasted on stdin (read by a daemon thread: a blocked read never holds mcpctl)."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        try:
            for line in sys.stdin:
                lines.put(line)
        except (OSError, ValueError):
            pass
        lines.put(None)

    threading.Thread(target=read, name="mcpctl-paste", daemon=True).start()
    while True:
        try:
            line = lines.get_nowait()
        except queue.Empty:
            await anyio.sleep(0.1)
            continue
        if line is None:
            return  # end of input: the callback may still come
        if not line.strip():
            continue
        answer = parse_answer(line)
        if answer is None:
            say(
                "That is not the address the browser was sent to (it has no code=); paste it again."
            )
            continue
        await sent.send(answer)


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"
