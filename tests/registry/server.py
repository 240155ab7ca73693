"""A local registry on 127.0.0.1 speaking the official v0.1 API shape, with fault modes.

Serves ``GET /v0.1/servers`` (opaque cursors in ``metadata.nextCursor``, or in ``next_cursor``
as older registries send them; ``limit``, ``search``, ``updated_since`` with deletions,
``version=latest``), ``/v0.1/servers/{name}/versions`` and ``/versions/{version}``. Faults: ``429`` (with Retry-After, for the first N requests),
``500``, ``invalid_json``, ``huge`` (a 50 MB body), ``wrong_types``, and the slow ones:
``hang`` (reads the request, never answers), ``drip`` (a valid page, one byte of the body
every ``drip_every`` seconds), ``drip_headers`` (the same, in the headers), ``retry_after``
(429 with ``Retry-After: <retry_after>``, every time), and ``delay`` (answers after that
many seconds, optionally once every request in ``barrier`` has arrived).

Slow handlers end when the registry's ``stop`` event is set: :func:`running` sets it when
its block ends, so no test leaves a handler behind.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from mcpctl.registry.client import RegistryClient

OFFICIAL = "io.modelcontextprotocol.registry/official"


def make_record(
    name: str,
    version: str = "1.0.0",
    *,
    description: str = "",
    title: str | None = None,
    updated: str = "2025-12-01T00:00:00Z",
    status: str = "active",
    latest: bool = True,
    packages: list[dict[str, Any]] | None = None,
    remotes: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    server: dict[str, Any] = {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": name,
        "description": description or f"The {name.rsplit('/', 1)[-1]} server",
        "version": version,
        "repository": {},
    }
    if title:
        server["title"] = title
    if packages is None and remotes is None:
        packages = [{"registryType": "npm", "identifier": f"@x/{name.rsplit('/', 1)[-1]}",
                     "version": version, "transport": {"type": "stdio"}}]  # fmt: skip
    if packages:
        server["packages"] = packages
    if remotes:
        server["remotes"] = remotes
    meta = {"status": status, "publishedAt": updated, "updatedAt": updated, "isLatest": latest}
    return {"server": server, "_meta": {OFFICIAL: meta}}


def fast_client(url: str, **kw: Any) -> RegistryClient:
    """A client for the fake registry: short timeout, no sleeping between retries."""
    return RegistryClient(url, timeout=kw.pop("timeout", 2.0), sleep=lambda s: None, **kw)


DRIP_BODY = b'{"servers": [], "metadata": {"count": 0}}'  # 41 bytes: 20 s at 2 bytes a second


class Registry:
    """The data and behaviour of one fake registry (mutable between requests)."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records
        self.mode: str | None = None
        self.fail_first = 0
        self.requests: list[str] = []
        self.version = 0
        self.stop = threading.Event()
        self.drip_every = 0.5
        self.retry_after = "3600"
        self.first_retry_after = "0"  # the Retry-After of the fail_first answers
        self.delay = 0.0
        self.barrier: threading.Barrier | None = None
        self.answered = 0  # pages answered (counted as sent; a dripped one once its last byte is)
        self.cursor_key = "nextCursor"  # older registries spell it next_cursor
        self._memo: dict[Any, list[dict[str, Any]]] = {}

    def page(self, query: dict[str, list[str]]) -> dict[str, Any]:
        items = self.filtered(query)
        limit = min(int(query.get("limit", ["30"])[0]), 100)
        cursor = query.get("cursor", [None])[0]
        start = int(base64.urlsafe_b64decode(cursor).decode()) if cursor else 0
        chunk = items[start : start + limit]
        meta: dict[str, Any] = {"count": len(chunk)}
        if start + limit < len(items):
            meta[self.cursor_key] = base64.urlsafe_b64encode(str(start + limit).encode()).decode()
        return {"servers": chunk, "metadata": meta}

    def filtered(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        """The records a query selects (memoised while the data does not change)."""
        key = (tuple(sorted((k, tuple(v)) for k, v in query.items() if k not in ("cursor", "limit"))),
               self.version)  # fmt: skip
        if key in self._memo:
            return self._memo[key]
        items = self.records
        since = query.get("updated_since", [None])[0]
        if since:
            items = [r for r in items if r["_meta"][OFFICIAL]["updatedAt"] > since]
        else:
            items = [r for r in items if r["_meta"][OFFICIAL]["status"] != "deleted"]
        search = query.get("search", [None])[0]
        if search:
            items = [r for r in items if search.lower() in r["server"]["name"].lower()]
        if query.get("version", [None])[0] == "latest":
            items = [r for r in items if r["_meta"][OFFICIAL]["isLatest"]]
        self._memo = {key: items}
        return items

    def changed(self) -> None:
        """Call after changing ``records`` in place (the memo is keyed by this counter)."""
        self.version += 1


@contextlib.contextmanager
def running(registry: Registry) -> Iterator[str]:
    """Serve ``registry`` for the block; its base URL. Slow handlers end with the block."""
    server, url = serve(registry)
    try:
        yield url
    finally:
        registry.stop.set()
        server.shutdown()
        server.server_close()


def serve(registry: Registry) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def send(self, status: int, body: bytes, ctype: str = "application/json",
                 headers: dict[str, str] | None = None) -> None:  # fmt: skip
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def drip(self, in_headers: bool) -> None:
            """A valid page, one byte at a time (in the headers or the body)."""
            head = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
            head += b"Content-Length: %d\r\n" % len(DRIP_BODY)
            pad = b"X-Pad: " + b"a" * 40 + b"\r\n\r\n"
            first, slow, last = (
                (head, pad, DRIP_BODY) if in_headers else (head + b"\r\n", DRIP_BODY, b"")
            )
            try:
                self.wfile.write(first)
                for i in range(len(slow)):
                    if registry.stop.wait(registry.drip_every):
                        return
                    self.wfile.write(slow[i : i + 1])
                self.wfile.write(last)
                registry.answered += 1
            except OSError:
                return  # the client gave up and cut the connection

        def do_GET(self) -> None:
            registry.requests.append(self.path)
            if registry.fail_first > 0:
                registry.fail_first -= 1
                self.send(
                    429,
                    b'{"error": "slow down"}',
                    headers={"Retry-After": registry.first_retry_after},
                )
                return
            mode = registry.mode
            if mode == "500":
                self.send(500, b'{"error": "boom"}')
                return
            if mode == "hang":
                registry.stop.wait(60)  # never answers; ends with the test
                return
            if mode in ("drip", "drip_headers"):
                self.drip(mode == "drip_headers")
                return
            if mode == "retry_after":
                self.send(429, b'{"error": "later"}', headers={"Retry-After": registry.retry_after})
                return
            if registry.barrier is not None:
                with contextlib.suppress(threading.BrokenBarrierError):
                    registry.barrier.wait(10)
            if registry.delay and registry.stop.wait(registry.delay):
                return
            if mode == "invalid_json":
                self.send(200, b'{"servers": [')
                return
            if mode == "huge":
                self.send(200, b'{"servers": ["' + b"x" * (50 * 1024 * 1024) + b'"]}')
                return
            if mode == "wrong_types":
                self.send(200, json.dumps({"servers": [{"server": {"name": 5, "version": []}},
                                                      "text", None], "metadata": []}).encode())  # fmt: skip
                return
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            path = parts.path
            if path == "/v0.1/servers":
                page = json.dumps(registry.page(query)).encode()
                # Counted before it is sent: a client that has read it may look at once.
                registry.answered += 1
                self.send(200, page)
                return
            if path.startswith("/v0.1/servers/"):
                rest = path[len("/v0.1/servers/") :]
                name_part, _, tail = rest.partition("/versions")
                name = unquote(name_part)
                versions = [r for r in registry.records if r["server"]["name"] == name]
                if not versions:
                    self.send(404, b'{"error": "not found"}')
                    return
                if tail in ("", "/"):
                    self.send(200, json.dumps({"servers": versions}).encode())
                    return
                wanted = unquote(tail.lstrip("/"))
                for r in versions:
                    if r["server"]["version"] == wanted or (
                        wanted == "latest" and r["_meta"][OFFICIAL]["isLatest"]
                    ):
                        self.send(200, json.dumps(r).encode())
                        return
                self.send(404, b'{"error": "no such version"}')
                return
            self.send(404, b"<html>not found</html>", "text/html")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
