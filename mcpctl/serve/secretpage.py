"""A page on this machine where the user types a secret: the value goes from the browser to
the OS keyring, never through the MCP client or the model.

The MCP specification forbids a form (form-mode elicitation) for sensitive values: what a
form returns passes through the client, which may show it to the model or keep it in its
transcript. Its answer for secrets is URL mode: the client opens a page the server names,
and the value never enters the protocol. :class:`SecretPages` serves those pages:

* on 127.0.0.1 only, on a port chosen by the system, from a thread of its own (started on
  the first page, stopped by :meth:`SecretPages.close`);
* each page at a path holding 256 random bits, for one secret, for :data:`PAGE_TTL` seconds,
  taking one value (then it is gone); the form carries a second random value, which only
  the page itself knows;
* a request whose ``Host`` is not this address is refused (DNS rebinding), as is a POST
  whose ``Origin`` is another site, a body over 64 KiB, or any other method or path;
* the page says which secret it asks for and where the value goes; it loads nothing from
  elsewhere, is never cached, and cannot be framed.
"""

from __future__ import annotations

import html
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

from mcpctl.errors import McpctlError

__all__ = ["PAGE_TTL", "SecretPage", "SecretPages"]

#: How long a page takes a value (seconds).
PAGE_TTL = 600.0
#: The largest form the pages read.
MAX_BODY = 64 * 1024
_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'",
}


@dataclass
class SecretPage:
    """One page: the secret ``name`` it takes, and how it ended (``stored`` or ``error``)."""

    name: str
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    form_key: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    expires: float = field(default_factory=lambda: time.monotonic() + PAGE_TTL)
    done: threading.Event = field(default_factory=threading.Event)
    stored: bool = False
    error: str | None = None

    def finish(self, *, stored: bool, error: str | None = None) -> None:
        """End the page: the value was stored, or could not be."""
        self.stored, self.error = stored, error
        self.done.set()


class SecretPages:
    """The pages of one ``mcpctl serve``: ``store(name, value)`` keeps a submitted value."""

    def __init__(self, store: Callable[[str, str], None]) -> None:
        self._store = store
        self._pages: dict[str, SecretPage] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def open(self, name: str) -> tuple[SecretPage, str]:
        """A new page for secret ``name``, and its address (the server starts if need be).

        Raises:
            OSError: no loopback port could be had.
        """
        page = SecretPage(name)
        with self._lock:
            now = time.monotonic()
            for token in [t for t, p in self._pages.items() if now > p.expires]:
                del self._pages[token]
            if self._server is None:
                self._server = self._start()
            port = self._server.server_address[1]
            self._pages[page.token] = page
        return page, f"http://127.0.0.1:{port}/secret/{page.token}"

    def get(self, token: str) -> SecretPage | None:
        """The page of ``token``: a finished one until :meth:`drop` (the tool reads how it
        ended), an unfinished one until it expires."""
        with self._lock:
            page = self._pages.get(token)
            if page is not None and not page.done.is_set() and time.monotonic() > page.expires:
                del self._pages[token]
                return None
            return page

    def drop(self, page: SecretPage) -> None:
        """Forget ``page``: its address answers 404 from now on."""
        with self._lock:
            self._pages.pop(page.token, None)

    def close(self) -> None:
        """Stop serving pages (every page is gone)."""
        with self._lock:
            server, self._server = self._server, None
            self._pages.clear()
        if server is not None:
            server.shutdown()
            server.server_close()

    def _start(self) -> ThreadingHTTPServer:
        pages = self

        class Handler(_Handler):
            owner = pages

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(
            target=server.serve_forever, name="mcpctl-secret-pages", daemon=True
        ).start()
        return server

    def submit(self, page: SecretPage, value: str) -> None:
        """Keep ``value`` for ``page`` (in the keyring) and end the page."""
        try:
            self._store(page.name, value)
        except McpctlError as exc:  # the keyring refused: the page says so, the tool reports it
            page.finish(stored=False, error=exc.message or type(exc).__name__)
        else:
            page.finish(stored=True)


class _Handler(BaseHTTPRequestHandler):
    owner: SecretPages
    server_version = "mcpctl"
    sys_version = ""

    def log_message(self, format: str, *args: object) -> None:
        """Nothing: a request line holds the page's token."""

    def _port(self) -> int:
        address = self.server.server_address
        assert isinstance(address, tuple)  # an IPv4 server's (host, port)
        return int(address[1])

    def _host_ok(self) -> bool:
        port = self._port()
        return self.headers.get("Host") in (f"127.0.0.1:{port}", f"localhost:{port}")

    def _page(self) -> SecretPage | None:
        prefix = "/secret/"
        if not self.path.startswith(prefix) or not self._host_ok():
            return None
        page = self.owner.get(self.path[len(prefix) :])
        return page if page is not None and not page.done.is_set() else None

    def _send(self, status: int, body: str) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for key, value in _HEADERS.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        page = self._page()
        if page is None:
            self._send(404, _html("Not found", "<p>This page is gone (used, or expired).</p>"))
            return
        self._send(200, _form(page))

    def do_POST(self) -> None:
        page = self._page()
        if page is None:
            self._send(404, _html("Not found", "<p>This page is gone (used, or expired).</p>"))
            return
        origin = self.headers.get("Origin")
        port = self._port()
        if origin not in (None, "null", f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            self._send(403, _html("Refused", "<p>The form was sent from another site.</p>"))
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._send(413, _html("Too large", "<p>The value is too large.</p>"))
            return
        fields = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
        key = fields.get("form_key", [""])[0]
        value = fields.get("value", [""])[0]
        if not secrets.compare_digest(key.encode(), page.form_key.encode()):
            self._send(403, _html("Refused", "<p>This form is not the page's own.</p>"))
            return
        if not value:
            self._send(200, _form(page, "Type the value first."))
            return
        self.owner.submit(page, value)
        name = html.escape(page.name)
        if page.stored:
            text = f"<p>{name} is stored in your OS keyring. You can close this page.</p>"
            self._send(200, _html("Stored", text))
        else:
            why = html.escape(page.error or "")
            self._send(500, _html("Not stored", f"<p>{name} could not be stored: {why}</p>"))


def _html(title: str, body: str) -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>mcpctl: "
        f"{html.escape(title)}</title><style>body{{font-family:sans-serif;max-width:36em;"
        "margin:3em auto;padding:0 1em}input{font-size:1em;padding:.4em;width:100%}"
        f"button{{font-size:1em;padding:.4em 1em}}</style></head><body>{body}</body></html>"
    )


def _form(page: SecretPage, note: str = "") -> str:
    name = html.escape(page.name)
    warning = f"<p><strong>{html.escape(note)}</strong></p>" if note else ""
    return _html(
        f"the value of {page.name}",
        f"<h1>Enter the value of {name}</h1>"
        "<p>An agent asked mcpctl to keep this secret. What you type here goes to your OS "
        "keyring, on this machine; the agent and its client never see it. Servers get it "
        f"where their config says <code>${{{name}}}</code>.</p>{warning}"
        "<form method='post'>"
        f"<input type='hidden' name='form_key' value='{html.escape(page.form_key)}'>"
        "<p><input type='password' name='value' autocomplete='off' autofocus "
        f"aria-label='value of {name}'></p><p><button type='submit'>Store it</button></p>"
        "</form><p>Not expecting this? Close the page: nothing is stored.</p>",
    )
