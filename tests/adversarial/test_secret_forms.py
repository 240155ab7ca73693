"""Secrets in the forms other programs write them: percent-encoded, JSON-escaped, base64.

An authorization server that echoes the token request in its error hands the client secret
back form-encoded (``quote_plus``), where a redaction of the raw value finds nothing. Here
such a server (on 127.0.0.1, in a thread of the test) refuses every token request and quotes
the request's body and ``Authorization`` header; ``mcpctl auth`` runs as a real process,
plain, ``-v`` and ``--json``: neither the configured client secret nor the one the server
issued by dynamic registration shows, in any form.
"""

from __future__ import annotations

import base64
import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote_plus, urlencode, urlsplit

import pytest

from mcpctl.config.redaction import Redactor, secret_forms
from tests.adversarial.secretforms import fragments, leaks_of
from tests.auth.conftest import Browser, Mcpctl, finish, mcpctl  # noqa: F401 -- the fixture

pytestmark = pytest.mark.slow

# Lowercase and made to need escaping: no pattern finds it, only the knowledge of its forms.
CONFIGURED = f"canary{uuid.uuid4().hex}/+ =&~é"
ISSUED = f"issued{uuid.uuid4().hex}"


class EchoingServer(ThreadingHTTPServer):
    """A resource server and its authorization server, on one origin, that refuse every token
    request with an error quoting it."""

    daemon_threads = True
    token_bodies: list[str]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: EchoingServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> str:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length).decode("utf-8", "replace")

    def do_GET(self) -> None:
        origin = self.server.origin
        path = urlsplit(self.path).path
        if path.startswith("/.well-known/oauth-protected-resource"):
            self._json(200, {"resource": f"{origin}/mcp", "authorization_servers": [origin]})
        elif path == "/.well-known/oauth-authorization-server":
            self._json(200, {
                "issuer": origin,
                "authorization_endpoint": f"{origin}/authorize",
                "token_endpoint": f"{origin}/token",
                "registration_endpoint": f"{origin}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "client_credentials"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_post"],
            })  # fmt: skip
        elif path == "/authorize":
            query = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
            answer = urlencode({"code": "the-code", "state": query.get("state", "")})
            self.send_response(302)
            self.send_header("Location", f"{query['redirect_uri']}?{answer}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._unauthorized()

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        body = self._body()
        if path == "/register":
            asked = json.loads(body)
            self._json(201, {
                **asked,
                "client_id": "registered-client",
                "client_secret": ISSUED,
                "token_endpoint_auth_method": "client_secret_post",
            })  # fmt: skip
        elif path == "/token":
            self.server.token_bodies.append(body)
            said = f"cannot parse {body!s} (authorization: {self.headers.get('Authorization')})"
            self._json(400, {"error": "invalid_request", "error_description": said})
        else:
            self._unauthorized()

    def _unauthorized(self) -> None:
        metadata = f"{self.server.origin}/.well-known/oauth-protected-resource/mcp"
        self._json(
            401,
            {"error": "unauthorized"},
            {"WWW-Authenticate": f'Bearer resource_metadata="{metadata}"'},
        )


@pytest.fixture
def echoing() -> Iterator[EchoingServer]:
    server = EchoingServer(("127.0.0.1", 0), Handler)
    server.token_bodies = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def assert_hidden(value: str, *outputs: str) -> None:
    for text in outputs:
        for fragment in fragments(value):
            assert fragment not in text, (fragment, text[-3000:])


@pytest.mark.parametrize("flags", [(), ("-v",), ("--json",)], ids=["plain", "-v", "--json"])
def test_an_echoed_client_secret_never_shows(
    mcpctl: Mcpctl,  # noqa: F811 -- the fixture
    echoing: EchoingServer,
    flags: tuple[str, ...],
) -> None:
    mcpctl.env["BOT_SECRET"] = CONFIGURED
    entry = {"url": f"{echoing.origin}/mcp", "auth": {"type": "oauth", "client_id": "bot",
             "client_secret": "${BOT_SECRET}"}}  # fmt: skip
    mcpctl.config({"bot": entry})
    outcome = mcpctl(*flags, "auth", "bot", "--grant", "client_credentials")
    assert outcome.code != 0
    # The server did echo it, form-encoded: the output is redacted, not spared.
    assert echoing.token_bodies and quote_plus(CONFIGURED) in echoing.token_bodies[0]
    assert "****" in outcome.stdout + outcome.stderr
    assert_hidden(CONFIGURED, outcome.stdout, outcome.stderr)


def test_a_registered_client_secret_never_shows(
    mcpctl: Mcpctl,  # noqa: F811 -- the fixture
    echoing: EchoingServer,
) -> None:
    mcpctl.config({"reg": {"url": f"{echoing.origin}/mcp", "auth": {"type": "oauth"}}})
    for flags in ((), ("-v",)):
        browser = Browser()
        proc = mcpctl.start(*flags, "auth", "reg", "--no-browser")
        try:
            browser.read_address(proc)
            browser.deliver(browser.authorize())
        finally:
            stdout = finish(proc)
        stderr = browser.rest()
        assert proc.returncode != 0, stderr
        # The server issued it and had it back in a token request, which it echoed.
        assert any(ISSUED in body for body in echoing.token_bodies), echoing.token_bodies
        assert "****" in stdout + stderr, stderr
        assert_hidden(ISSUED, stdout, stderr)


def test_every_form_is_redacted() -> None:
    """The forms looked for (here computed by hand) are each hidden, inside other text."""
    redact = Redactor([CONFIGURED, ISSUED])
    for value in (CONFIGURED, ISSUED):
        assert value in secret_forms(value)
        for written, fragment in leaks_of(value):
            shown = redact(f"before {written} after")
            assert fragment not in shown, (written, shown)
            assert shown.startswith("before ") and shown.endswith(" after")
        basic = base64.b64encode(f"some-client:{value}".encode()).decode()
        assert redact.known(basic).startswith(basic[:16])  # the name's part is left as it was
        assert "****" in redact.known(basic)


def test_nothing_else_is_redacted() -> None:
    redact = Redactor(["s3cr3t-value-x"])
    text = "an ordinary line with s3cr3t and value-x and c2VjcmV0 and %2F"
    assert redact(text) == text
