"""A local registry on 127.0.0.1 speaking the official v0.1 API shape, with fault modes.

Serves ``GET /v0.1/servers`` (opaque cursors, ``limit``, ``search``, ``updated_since`` with
deletions, ``version=latest``), ``/v0.1/servers/{name}/versions`` and
``/versions/{version}``. Faults: ``429`` (with Retry-After, for the first N requests),
``500``, ``hang``, ``invalid_json``, ``huge`` (a 50 MB body), ``wrong_types``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
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


class Registry:
    """The data and behaviour of one fake registry (mutable between requests)."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records
        self.mode: str | None = None
        self.fail_first = 0
        self.requests: list[str] = []
        self.version = 0
        self._memo: dict[Any, list[dict[str, Any]]] = {}

    def page(self, query: dict[str, list[str]]) -> dict[str, Any]:
        items = self.filtered(query)
        limit = min(int(query.get("limit", ["30"])[0]), 100)
        cursor = query.get("cursor", [None])[0]
        start = int(base64.urlsafe_b64decode(cursor).decode()) if cursor else 0
        chunk = items[start : start + limit]
        meta: dict[str, Any] = {"count": len(chunk)}
        if start + limit < len(items):
            meta["nextCursor"] = base64.urlsafe_b64encode(str(start + limit).encode()).decode()
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

        def do_GET(self) -> None:
            registry.requests.append(self.path)
            if registry.fail_first > 0:
                registry.fail_first -= 1
                self.send(429, b'{"error": "slow down"}', headers={"Retry-After": "0"})
                return
            mode = registry.mode
            if mode == "500":
                self.send(500, b'{"error": "boom"}')
                return
            if mode == "hang":
                time.sleep(5)
                self.send(200, b"{}")
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
                self.send(200, json.dumps(registry.page(query)).encode())
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
