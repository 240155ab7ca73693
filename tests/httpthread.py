"""A local HTTP server in a thread of the test: for tests whose server is a few handlers of
``http.server`` (a registry, a package index, a remote MCP server's outer layers)."""

from __future__ import annotations

import ssl
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

#: How often the serving loop looks whether it is to stop (s).
POLL_INTERVAL = 0.01


@contextmanager
def serving_http(
    handler: type[BaseHTTPRequestHandler], tls: tuple[Path, Path] | None = None
) -> Iterator[str]:
    """``handler`` served on 127.0.0.1 (a free port) for the block, over https with ``tls``
    (certificate and key files): its base URL. Shut down and joined when the block ends,
    however it ends (the serving loop looks for the shutdown every ``POLL_INTERVAL`` s:
    ``serve_forever``'s default, half a second, would be the wait of every test's end)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = Thread(target=server.serve_forever, args=(POLL_INTERVAL,), daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def reply(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: Mapping[str, str]
) -> None:
    """Send ``status``, ``headers`` and ``body`` (with its length, but on a 304). A client
    that hung up first is not the test's failure."""
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    if status != 304:
        handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    with suppress(BrokenPipeError, ConnectionResetError):
        handler.wfile.write(body)
