"""``mcpctl serve --http HOST:PORT``: streamable HTTP on this machine only, behind a token.

* The address must be a loopback one (``127.0.0.1``, any of ``127.0.0.0/8``, ``[::1]`` or
  ``localhost``): mcpctl's tools start servers with the user's secrets, which nobody else
  may ask for. Anything else is refused (:class:`~mcpctl.errors.UsageError`, exit 2).
* Every request carries ``Authorization: Bearer TOKEN``, a token made at start (256 random
  bits) and printed once on stderr; without it: 401. The comparison takes the same time
  whatever the guess.
* The SDK's DNS-rebinding protection admits only this address in ``Host`` and ``Origin``.
* The socket is bound before anything else starts: a port in use is
  :class:`~mcpctl.errors.PortInUseError` (exit 3).

Both protocol eras are served at ``/mcp``: the SDK's session manager answers a request of
the stateless revision by itself and keeps a session for the ``initialize`` handshake.
"""

from __future__ import annotations

import errno
import hmac
import ipaddress
import secrets
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from mcpctl.errors import OutsideError, PortInUseError, UsageError

__all__ = ["BearerGate", "Endpoint", "bind", "loopback_endpoint", "new_token"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Where the MCP endpoint is.
PATH = "/mcp"
LOOPBACK_HINT = "use a loopback address and a port: --http 127.0.0.1:8765 (or [::1]:8765)"


@dataclass(frozen=True)
class Endpoint:
    """A loopback address to listen on (``host`` an IP address)."""

    host: str
    port: int

    @property
    def ipv6(self) -> bool:
        """Whether the host is an IPv6 address."""
        return ":" in self.host

    @property
    def authority(self) -> str:
        """``127.0.0.1:8765`` or ``[::1]:8765``."""
        return f"[{self.host}]:{self.port}" if self.ipv6 else f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The MCP endpoint's URL."""
        return f"http://{self.authority}{PATH}"

    def with_port(self, port: int) -> Endpoint:
        """The same host on ``port``."""
        return Endpoint(self.host, port)


def loopback_endpoint(text: str) -> Endpoint:
    """``--http``'s ``HOST:PORT``, when the host is a loopback one (``localhost`` is
    ``127.0.0.1``); port 0 picks a free port.

    Raises:
        UsageError: not ``HOST:PORT``, or the host is not a loopback address.
    """
    from mcpctl.render.listen import parse_listen

    value = text.strip()
    zero = value.endswith(":0")
    try:
        found = parse_listen(value[:-1] + "1" if zero else value)  # it wants a port from 1
    except UsageError as exc:
        raise UsageError(f"--http: {exc.message}", hint=LOOPBACK_HINT) from None
    port = 0 if zero else found.port
    host = found.host.lower().rstrip(".")
    if host == "localhost":
        return Endpoint("127.0.0.1", port)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        shown = host or "every interface"
        raise UsageError(
            f"--http {text!r} listens on {shown}: mcpctl serves on this machine only",
            hint=LOOPBACK_HINT,
        )
    return Endpoint(str(address), port)


def bind(endpoint: Endpoint) -> socket.socket:
    """A listening socket at ``endpoint``.

    Raises:
        PortInUseError: something else listens there.
        OutsideError: the address cannot be bound (another reason: permissions...).
    """
    family = socket.AF_INET6 if endpoint.ipv6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((endpoint.host, endpoint.port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(
                f"{endpoint.authority} is in use: another program listens there",
                hint="choose another port: --http 127.0.0.1:PORT",
            ) from None
        raise OutsideError(
            f"cannot listen on {endpoint.authority}: {exc.strerror or exc}",
            hint="choose another port: --http 127.0.0.1:PORT",
        ) from None
    sock.setblocking(False)
    return sock


def new_token() -> str:
    """A bearer token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


class BearerGate:
    """An ASGI app in front of ``app``: HTTP requests without ``Authorization: Bearer
    TOKEN`` get 401 (lifespan events pass)."""

    def __init__(self, app: App, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let the request through, or answer 401."""
        if scope.get("type") == "http":
            given = b""
            for key, value in scope.get("headers", ()):
                if key.lower() == b"authorization":
                    given = value
            if not hmac.compare_digest(given, self._expected):
                body = b'{"error": "unauthorized: Authorization: Bearer TOKEN is required"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="mcpctl"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
