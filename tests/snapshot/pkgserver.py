"""A local npm registry and PyPI JSON API on 127.0.0.1, for package pins.

Serves ``GET /NAME`` (npm: ``dist-tags`` and ``versions[v].dist.integrity``, ``@scope%2fname``
too), ``/pypi/NAME/json`` and ``/pypi/NAME/VERSION/json`` (``info.version``, ``urls`` with
``digests.sha256``, ``releases``), with an ETag per document (``If-None-Match`` answers 304).
``mode``: ``invalid_json``, ``huge`` (a body over the client's cap), ``500``,
``no_version_docs`` (PyPI's per-version documents answer 404, as on some mirrors).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from tests.httpthread import reply, serving_http


def integrity(name: str, version: str, salt: str = "") -> str:
    return "sha512-" + hashlib.sha512(f"{name}@{version}{salt}".encode()).hexdigest()[:40]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Packages:
    """What the fake registries serve (mutable between requests)."""

    def __init__(self) -> None:
        self.npm: dict[str, dict[str, Any]] = {}
        self.pypi: dict[str, dict[str, list[dict[str, Any]]]] = {}
        self.pypi_latest: dict[str, str] = {}
        self.requests: list[str] = []
        self.not_modified = 0
        self.mode: str | None = None
        self.lock = threading.Lock()

    def publish_npm(self, name: str, version: str, *, latest: bool = True, salt: str = "") -> None:
        doc = self.npm.setdefault(name, {"name": name, "dist-tags": {}, "versions": {}})
        doc["versions"][version] = {
            "name": name, "version": version,
            "dist": {"integrity": integrity(name, version, salt), "shasum": "0" * 40,
                     "tarball": f"http://x/{name}-{version}.tgz"},
        }  # fmt: skip
        if latest:
            doc["dist-tags"]["latest"] = version

    def publish_pypi(self, name: str, version: str, *, latest: bool = True, salt: str = "") -> None:
        files = [
            {"filename": f"{name}-{version}.tar.gz", "packagetype": "sdist",
             "digests": {"sha256": sha256(f"sdist {name} {version}{salt}")}, "yanked": False},
            {"filename": f"{name.replace('-', '_')}-{version}-py3-none-any.whl",
             "packagetype": "bdist_wheel",
             "digests": {"sha256": sha256(f"wheel {name} {version}{salt}")}, "yanked": False},
        ]  # fmt: skip
        self.pypi.setdefault(name, {})[version] = files
        if latest:
            self.pypi_latest[name] = version

    def wheel_sha(self, name: str, version: str) -> str:
        return next(f["digests"]["sha256"] for f in self.pypi[name][version]
                    if f["packagetype"] == "bdist_wheel")  # fmt: skip

    def document(self, path: str) -> Any:
        parts = [unquote(p) for p in urlsplit(path).path.split("/") if p]
        if parts[:1] == ["pypi"] and len(parts) in (3, 4) and parts[-1] == "json":
            name = parts[1]
            releases = self.pypi.get(name)
            if releases is None:
                return None
            if len(parts) == 4 and self.mode == "no_version_docs":
                return None  # a mirror that serves only the project's document
            version = parts[2] if len(parts) == 4 else self.pypi_latest[name]
            if version not in releases:
                return None
            return {"info": {"name": name, "version": version}, "urls": releases[version],
                    "releases": releases if len(parts) == 3 else {}}  # fmt: skip
        return self.npm.get("/".join(parts))


@contextlib.contextmanager
def serving(packages: Packages) -> Iterator[str]:
    """Serve ``packages`` for the block; the base URL (npm at /, PyPI at /pypi)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            with packages.lock:
                packages.requests.append(self.path)
                mode = packages.mode
                doc = packages.document(self.path)
            if mode == "500":
                self.answer(500, b"{}")
                return
            if mode == "invalid_json":
                self.answer(200, b"{not json")
                return
            if mode == "huge":
                self.answer(200, b'{"a": "' + b"x" * (11 * 1024 * 1024) + b'"}')
                return
            if doc is None:
                self.answer(404, b'{"error": "Not found"}')
                return
            body = json.dumps(doc).encode()
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                with packages.lock:
                    packages.not_modified += 1
                self.answer(304, b"", etag)
                return
            self.answer(200, body, etag)

        def answer(self, status: int, body: bytes, etag: str | None = None) -> None:
            headers = {"Content-Type": "application/json"}
            if etag:
                headers["ETag"] = etag
            reply(self, status, body, headers)

    with serving_http(Handler) as base:
        yield base
