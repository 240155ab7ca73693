"""An OAuth-protected MCP server in a thread of the test: the MCP
endpoint ``/mcp``, its protected-resource metadata, and an authorization server on the same
origin (metadata, registration, an authorize endpoint that approves at once, a token endpoint
for both grants). Fast to start, and every request it gets is kept for the test to read.

Ways to misbehave are attributes: :attr:`AuthServer.mcp_status` (what ``/mcp`` answers to a
valid token), :attr:`AuthServer.open` (``/mcp`` answers without asking for a sign-in),
:attr:`AuthServer.token_answer` (the token endpoint's status and body),
:attr:`AuthServer.trickle` (the token endpoint sends its body one byte at a time, until the
client hangs up), :attr:`AuthServer.metadata` (members added to the authorization server's
metadata), :attr:`AuthServer.iss` (the ``iss`` its answers carry).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.httpthread import reply

JSON = {"Content-Type": "application/json"}


@dataclass
class Seen:
    """One request the server got."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode()).items()}

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class AuthServer:
    """The server's state; :func:`auth_server` runs it."""

    base: str = ""
    mcp_status: int = 200
    open: int | None = None  # a status /mcp answers with, whatever the token
    session: str | None = None  # the Mcp-Session-Id /mcp answers a valid request with
    token_answer: tuple[int, Any] | None = None
    trickle: bool = False
    post_status: int | None = None  # what a POST to /mcp answers, whatever the token
    delete_status: int | None = 200  # None: the connection is dropped without an answer
    scopes_supported: list[str] | None = None  # in the protected-resource metadata
    deny: bool = False  # the authorize endpoint answers access_denied
    published: bool = True  # whether the authorization server's metadata is served
    metadata: dict[str, Any] = field(default_factory=dict)
    iss: str | None = None
    seen: list[Seen] = field(default_factory=list)
    valid: set[str] = field(default_factory=set)
    hang_up: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def requests(self, method: str, path: str) -> list[Seen]:
        return [s for s in self.seen if s.method == method and s.path == path]

    def authorization_server(self) -> dict[str, Any]:
        base = self.base
        return {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "registration_endpoint": f"{base}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
            **self.metadata,
        }

    def tokens(self, form: dict[str, str]) -> dict[str, Any]:
        access = "AT-" + secrets.token_hex(8)
        self.valid.add(access)
        answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer",
                                  "expires_in": 3600, "refresh_token": "RT-" + secrets.token_hex(8)}  # fmt: skip
        if form.get("scope"):
            answer["scope"] = form["scope"]
        return answer


def _handler(server: AuthServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # a body sent after its headers is not held back

        def _seen(self) -> Seen:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path = urlsplit(self.path).path
            seen = Seen(self.command, path, {k.lower(): v for k, v in self.headers.items()}, body)
            server.seen.append(seen)
            return seen

        def _mcp(self) -> None:
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            if server.open is not None:
                reply(self, server.open, b"{}", JSON)
            elif token in server.valid:
                headers = dict(JSON)
                if server.session:
                    headers["Mcp-Session-Id"] = server.session
                reply(self, server.mcp_status, b"{}", headers)
            else:
                meta = f"{server.base}/.well-known/oauth-protected-resource/mcp"
                challenge = f'Bearer resource_metadata="{meta}"'
                reply(self, 401, b"", {"WWW-Authenticate": challenge})

        def do_GET(self) -> None:
            seen = self._seen()
            if seen.path.startswith("/.well-known/oauth-protected-resource"):
                meta: dict[str, Any] = {"resource": server.url,
                                        "authorization_servers": [server.base]}  # fmt: skip
                if server.scopes_supported is not None:
                    meta["scopes_supported"] = server.scopes_supported
                reply(self, 200, json.dumps(meta).encode(), JSON)
            elif seen.path.startswith("/.well-known/") and not server.published:
                reply(self, 404, b"{}", JSON)
            elif seen.path.startswith("/.well-known/oauth-authorization-server"):
                reply(self, 200, json.dumps(server.authorization_server()).encode(), JSON)
            elif seen.path == "/authorize":
                query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                answer = {"code": "code-" + secrets.token_hex(4), "state": query["state"]}
                if server.deny:
                    answer = {"error": "access_denied", "error_description": "no",
                              "state": query["state"]}  # fmt: skip
                if server.iss is not None:
                    answer["iss"] = server.iss
                location = f"{query['redirect_uri']}?{urlencode(answer)}"
                reply(self, 302, b"", {"Location": location})
            elif seen.path == "/mcp":
                self._mcp()
            else:
                reply(self, 404, b"{}", JSON)

        def do_DELETE(self) -> None:
            self._seen()
            if server.delete_status is None:
                self.close_connection = True
                return
            reply(self, server.delete_status, b"", {})

        def do_POST(self) -> None:
            seen = self._seen()
            if seen.path == "/mcp" and server.post_status is not None:
                reply(self, server.post_status, b"{}", JSON)
            elif seen.path == "/mcp":
                self._mcp()
            elif seen.path == "/register":
                client = {**seen.json, "client_id": "client-" + secrets.token_hex(4)}
                if client.get("token_endpoint_auth_method") == "client_secret_post":
                    client["client_secret"] = "registered-secret"
                reply(self, 201, json.dumps(client).encode(), JSON)
            elif seen.path == "/token":
                self._token(seen.form)
            else:
                reply(self, 404, b"{}", JSON)

        def _token(self, form: dict[str, str]) -> None:
            if server.trickle:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                while not server.hang_up.is_set():
                    try:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                    except OSError:
                        return
                    time.sleep(0.05)
                return
            status, body = server.token_answer or (200, server.tokens(form))
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            reply(self, status, data, JSON)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def auth_server() -> Iterator[AuthServer]:
    """An :class:`AuthServer` served for the block (on a free port of 127.0.0.1), shut down
    and joined when the block ends, however it ends."""
    server = AuthServer()
    http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    # Polled often: shutting down waits for the next poll (half a second by default).
    thread = threading.Thread(target=http.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    server.base = f"http://127.0.0.1:{http.server_address[1]}"
    try:
        yield server
    finally:
        server.hang_up.set()  # before the server waits for its handlers
        http.shutdown()
        http.server_close()
        thread.join(10)
