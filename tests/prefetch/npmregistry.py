"""A small npm registry on 127.0.0.1 that real npm installs from.

Packages are made here: a tarball (``package/package.json`` and a ``bin.js``) per version,
served at ``/NAME/-/NAME-VERSION.tgz`` with its real ``dist.integrity``, under the document
``/NAME``. ``/-/ping`` answers. ``tarball_delay`` holds every tarball back that many seconds
(a slow first download), ended early by :meth:`Registry.release`.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import io
import json
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

#: A bin that prints a line and exits.
PRINTS = "#!/usr/bin/env node\nconsole.log('fake package {name} {version} ran');\n"
#: A bin that starts and never answers (a server that hangs).
HANGS = "#!/usr/bin/env node\nsetInterval(() => {{}}, 1000);\n"


def tarball(name: str, version: str, bin_js: str, scripts: dict[str, str] | None = None) -> bytes:
    manifest: dict[str, Any] = {"name": name, "version": version, "bin": {name: "bin.js"}}
    if scripts:
        manifest["scripts"] = scripts
    files = {
        "package/package.json": json.dumps(manifest).encode(),
        "package/bin.js": bin_js.format(name=name, version=version).encode(),
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o755
            info.mtime = 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def integrity_of(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


class Registry:
    """The packages served (mutable between requests) and what was asked."""

    def __init__(self) -> None:
        self.base = ""
        self.docs: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}
        self.requests: list[str] = []
        self.tarball_delay = 0.0
        self.released = threading.Event()
        self.lock = threading.Lock()

    def publish(
        self, name: str, version: str, bin_js: str = PRINTS, *,
        scripts: dict[str, str] | None = None, latest: bool = True,
    ) -> str:  # fmt: skip
        """Publish ``name@version``; its integrity."""
        data = tarball(name, version, bin_js, scripts)
        path = f"/{name}/-/{name}-{version}.tgz"
        with self.lock:
            self.files[path] = data
            doc = self.docs.setdefault(name, {"name": name, "dist-tags": {}, "versions": {}})
            entry: dict[str, Any] = {
                "name": name, "version": version, "bin": {name: "bin.js"},
                "dist": {"tarball": self.base + path, "integrity": integrity_of(data),
                         "shasum": hashlib.sha1(data).hexdigest()},  # noqa: S324 -- npm's shasum
            }  # fmt: skip
            if scripts:
                entry["scripts"] = scripts
                entry["hasInstallScript"] = True
            doc["versions"][version] = entry
            if latest:
                doc["dist-tags"]["latest"] = version
        return integrity_of(data)

    def release(self) -> None:
        """Let held-back tarballs go."""
        self.released.set()


@contextlib.contextmanager
def serving(registry: Registry | None = None) -> Iterator[Registry]:
    """Serve ``registry`` on 127.0.0.1 for the block (its ``base`` is the URL)."""
    registry = registry or Registry()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            path = urlsplit(self.path).path
            with registry.lock:
                registry.requests.append(path)
            if path == "/-/ping":
                self.answer(200, b"{}", "application/json")
                return
            if path in registry.files:
                if registry.tarball_delay:
                    registry.released.wait(registry.tarball_delay)
                self.answer(200, registry.files[path], "application/octet-stream")
                return
            with registry.lock:
                doc = registry.docs.get(unquote(path.strip("/")))
                body = json.dumps(doc).encode() if doc is not None else None
            if body is None:
                self.answer(404, b'{"error": "Not found"}', "application/json")
                return
            self.answer(200, body, "application/json")

        def answer(self, status: int, body: bytes, kind: str) -> None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    registry.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield registry
    finally:
        registry.release()
        server.shutdown()
        server.server_close()
        thread.join(10)
