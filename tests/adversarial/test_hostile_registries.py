"""What a package registry or an MCP registry can still do: name a version that is no
version, and redirect a lookup elsewhere.

Real HTTP servers on 127.0.0.1 (and 127.0.0.2, another host on the loopback): the npm
registry and PyPI JSON API of tests/snapshot/pkgserver.py, the MCP registry of
tests/registry/server.py, and redirectors in front of them (one over TLS, with a CA this
process trusts through SSL_CERT_FILE).
"""

from __future__ import annotations

import contextlib
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import pytest

from mcpctl.errors import RegistryError
from mcpctl.httpclient import BoundedClient
from mcpctl.registry.client import MAX_REDIRECTS, RegistryClient
from tests.conftest import Cli, write_config
from tests.registry.server import Registry, make_record, running
from tests.snapshot.pkgserver import Packages, serving
from tests.tlsserver import make_certificate, make_key, write_pem

# --- servers -------------------------------------------------------------------------------


class Redirector:
    """What a redirecting server was asked: the paths, in order."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.lock = threading.Lock()


@contextlib.contextmanager
def redirecting(
    location: Callable[[str], str],
    *,
    host: str = "127.0.0.1",
    tls: tuple[Path, Path] | None = None,
    status: int = 302,
    delay: float = 0.0,
) -> Iterator[tuple[str, Redirector]]:
    """A server on ``host`` answering every GET with ``status`` to ``location(path)`` (after
    ``delay`` seconds); its base URL (https with ``tls``: certificate and key) and what it
    was asked."""
    seen = Redirector()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            with seen.lock:
                seen.paths.append(self.path)
            time.sleep(delay)
            self.send_response(status)
            self.send_header("Location", location(self.path))
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer((host, 0), Handler)
    scheme = "http"
    if tls is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{scheme}://{host}:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture
def packages() -> Iterator[tuple[Packages, str]]:
    """An npm registry and PyPI on 127.0.0.1 (not yet the ones mcpctl uses)."""
    found = Packages()
    found.publish_npm("plain", "1.0.0", latest=False)
    found.publish_npm("plain", "1.4.0")
    found.publish_pypi("demo-time", "1.0")
    with serving(found) as url:
        yield found, url


@pytest.fixture
def trusted_tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that this process trusts (SSL_CERT_FILE)."""
    key = make_key()
    cert = make_certificate("127.0.0.1", key, None, (-1, 30), ca=True)
    cert_path, key_path = write_pem(cert, key, tmp_path, "registry")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_path))
    return cert_path, key_path


def _use(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("MCPCTL_NPM_REGISTRY", url)
    monkeypatch.setenv("MCPCTL_PYPI_URL", url)


# --- versions that are no versions ---------------------------------------------------------

BOGUS = ["v\u2028\u001f1.2.3", "1.2.3\n", " 1.4.0", "v1.4.0", "1.4.0+build.7", "=1.4.0"]


@pytest.mark.parametrize("bogus", BOGUS)
def test_a_dist_tag_that_is_no_version_is_never_recorded_nor_rendered(
    bogus: str,
    cli: Cli,
    config_path: Path,
    packages: tuple[Packages, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found, url = packages
    _use(monkeypatch, url)
    found.npm["plain"]["dist-tags"]["latest"] = bogus
    found.npm["plain"]["versions"][bogus] = {"dist": {"integrity": "sha512-bogus"}}
    write_config(config_path, {"latest": {"command": "npx", "args": ["-y", "plain"]},
                               "range": {"command": "npx", "args": ["-y", "plain@^1"]}})  # fmt: skip
    r = cli("snapshot", "save", "--packages", "-o", "lock.json", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    host = url.removeprefix("http://")
    lock = Path("lock.json").read_text(encoding="utf-8")
    pins = json.loads(lock)["packages"]
    # Not recorded: the bare spec is unresolved, naming the registry and the value escaped...
    assert pins["latest"]["status"] == "unresolved" and "version" not in pins["latest"]
    assert f"the npm registry at {host}" in pins["latest"]["reason"]
    assert repr(bogus) in pins["latest"]["reason"]
    # ...and a range takes the highest real version, with a warning naming both.
    assert pins["range"]["version"] == "1.4.0"
    warnings = r.json["warnings"]
    assert any(w.startswith("range: plain:") and f"at {host}" in w and "not a version" in w
               for w in warnings), warnings  # fmt: skip
    assert any(w.startswith("latest: package plain unresolved") for w in warnings), warnings
    assert all(pin.get("version") != bogus for pin in pins.values())
    assert "\u2028" not in lock and "\x1f" not in lock  # shown escaped, never raw
    r = cli("render", "claude-desktop", "--pinned", "lock.json", "--secrets", "env", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    servers = json.loads(r.json["data"]["text"])["mcpServers"]
    assert servers["latest"]["args"] == ["-y", "plain"]  # unpinned, as configured
    assert servers["range"]["args"] == ["-y", "plain@1.4.0"]
    assert any("latest" in w and "rendered unpinned" in w for w in r.json["warnings"])


@pytest.mark.parametrize("bogus", ["1.2.3\n", "v\u2028\u001f1.2.3"])
def test_a_tampered_lock_puts_no_such_version_into_a_command(
    bogus: str, cli: Cli, config_path: Path
) -> None:
    write_config(config_path, {"s": {"command": "npx", "args": ["-y", "plain"]},
                               "p": {"command": "uvx", "args": ["demo-time"]}})  # fmt: skip
    pin = {"pinned": False, "version": bogus, "status": "resolved", "integrity": "sha512-x"}
    lock = {"version": 1, "timestamp": "2026-01-01T00:00:00Z", "mcps": [],
            "packages": {"s": {"ecosystem": "npm", "name": "plain", "spec": "", **pin},
                         "p": {"ecosystem": "pypi", "name": "demo-time", "spec": "", **pin}}}  # fmt: skip
    Path("lock.json").write_text(json.dumps(lock), encoding="utf-8")
    r = cli("render", "claude-desktop", "--pinned", "lock.json", "--secrets", "env", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    servers = json.loads(r.json["data"]["text"])["mcpServers"]
    assert servers["s"]["args"] == ["-y", "plain"]
    assert servers["p"]["args"] == ["demo-time"]
    assert sum("rendered unpinned" in w for w in r.json["warnings"]) == 2


def test_a_pypi_version_that_is_no_version_is_never_recorded(
    cli: Cli, config_path: Path, packages: tuple[Packages, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    found, url = packages
    _use(monkeypatch, url)
    found.publish_pypi("demo-time", "1.2.3\n")  # the latest, as PyPI's info.version
    write_config(config_path, {"bare": {"command": "uvx", "args": ["demo-time"]},
                               "range": {"command": "uvx", "args": ["demo-time>=1"]}})  # fmt: skip
    r = cli("snapshot", "save", "--packages", "-o", "lock.json", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    pins = json.loads(Path("lock.json").read_text(encoding="utf-8"))["packages"]
    host = url.removeprefix("http://")
    assert pins["bare"]["status"] == "unresolved"
    assert f"PyPI at {host}" in pins["bare"]["reason"] and "'1.2.3\\n'" in pins["bare"]["reason"]
    assert pins["range"]["version"] == "1.0"
    assert any(w.startswith("range: demo-time:") and f"PyPI at {host}" in w
               for w in r.json["warnings"]), r.json["warnings"]  # fmt: skip


def test_versions_that_are_no_versions_are_no_candidates(
    cli: Cli, config_path: Path, packages: tuple[Packages, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    found, url = packages
    _use(monkeypatch, url)
    for bogus in ("9.9.9\n", "v9.9.9", "9.9.9-\u202e", "99999999999999999999.0.0x"):
        found.npm["plain"]["versions"][bogus] = {"dist": {"integrity": "sha512-evil"}}
    write_config(config_path, {"s": {"command": "npx", "args": ["-y", "plain@>=1"]}})
    r = cli("snapshot", "save", "--packages", "-o", "lock.json", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert json.loads(Path("lock.json").read_text())["packages"]["s"]["version"] == "1.4.0"
    assert any("lists 4 versions that are not versions, ignored" in w
               for w in r.json["warnings"]), r.json["warnings"]  # fmt: skip


# --- redirects -------------------------------------------------------------------------------


def test_a_package_lookup_redirected_to_another_host_says_so_and_records_it(
    cli: Cli, config_path: Path, packages: tuple[Packages, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, url = packages
    with redirecting(lambda path: url + path, host="127.0.0.2") as (front, seen):
        _use(monkeypatch, front)
        write_config(config_path, {"s": {"command": "npx", "args": ["-y", "plain"]},
                                   "p": {"command": "uvx", "args": ["demo-time"]}})  # fmt: skip
        r = cli("snapshot", "save", "--packages", "-o", "lock.json", "--json")
        assert r.exit_code == 0, r.stdout + r.stderr
        assert seen.paths
        here, there = front.removeprefix("http://"), url.removeprefix("http://")
        for server, package, registry in (("s", "plain", "the npm registry"),
                                          ("p", "demo-time", "PyPI")):  # fmt: skip
            assert any(w.startswith(f"{server}: {package}: {registry} at {here} redirected")
                       and there in w for w in r.json["warnings"]), r.json["warnings"]  # fmt: skip
        pins = json.loads(Path("lock.json").read_text(encoding="utf-8"))["packages"]
        assert pins["s"]["version"] == "1.4.0"
        assert pins["s"]["redirect"] == pins["p"]["redirect"] == f"{here} -> {there}"
        # The same, in plain text.
        r = cli("snapshot", "save", "--packages", "-o", "again.json")
        assert f"redirected the lookup to another host, {there}" in r.stderr


def test_a_redirect_from_https_to_http_is_refused(
    cli: Cli,
    config_path: Path,
    packages: tuple[Packages, str],
    trusted_tls: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found, url = packages
    with redirecting(lambda path: url + path, tls=trusted_tls) as (front, seen):
        _use(monkeypatch, front)
        write_config(config_path, {"s": {"command": "npx", "args": ["-y", "plain"]}})
        r = cli("snapshot", "save", "--packages", "-o", "lock.json", "--json")
        assert r.exit_code == 0, r.stdout + r.stderr
        assert seen.paths == ["/plain"]
        assert found.requests == []  # the http one was never asked
        pin = json.loads(Path("lock.json").read_text(encoding="utf-8"))["packages"]["s"]
        assert pin["status"] == "unresolved" and "version" not in pin
        assert "redirects to http://127.0.0.1:" in pin["reason"]
        assert "from https to http is refused" in pin["reason"]


@pytest.mark.parametrize(
    "target",
    ["file:///etc/passwd", "ftp://127.0.0.1/plain", "javascript:alert(1)", "http://[::1",
     "gopher://127.0.0.2:70/"],
)  # fmt: skip
def test_a_redirect_to_another_scheme_is_refused(target: str) -> None:
    with redirecting(lambda _: target) as (front, seen):
        started = time.monotonic()
        with RegistryClient(front, timeout=5) as client, pytest.raises(RegistryError) as caught:
            client.get_document(front + "/plain")
        assert time.monotonic() - started < 5
        assert seen.paths == ["/plain"]
        message = caught.value.message
        assert "redirects to" in message
        assert "only http and https are followed" in message or "not a valid address" in message
        assert "passwd" not in message


def test_a_redirect_loop_ends_at_the_limit() -> None:
    with redirecting(lambda path: path + "x", status=307) as (front, seen):
        with RegistryClient(front, timeout=5) as client, pytest.raises(RegistryError) as caught:
            client.get_document(front + "/plain")
        assert f"more than {MAX_REDIRECTS} redirects" in caught.value.message
        assert len(seen.paths) == MAX_REDIRECTS + 1


def test_slow_redirects_share_one_deadline() -> None:
    """Each hop answers in 0.4 s, each well within a request's limit: the chain does not."""
    with redirecting(lambda path: path + "x", status=308, delay=0.4) as (front, seen):
        started = time.monotonic()
        with RegistryClient(front, timeout=1.0) as client, pytest.raises(RegistryError) as caught:
            client.get_document(front + "/plain")
        assert time.monotonic() - started < 1.0 + 1.0
        assert "timed out" in caught.value.message
        assert 2 <= len(seen.paths) <= MAX_REDIRECTS


def test_an_mcp_registry_redirected_to_another_host_says_so(cli: Cli) -> None:
    reg = Registry([make_record("io.example/weather", title="Weather")])
    with running(reg) as url, redirecting(lambda p: url + p, host="127.0.0.2") as (front, _):
        assert cli("registry", "add", "moved", front).exit_code == 0
        r = cli("registry", "sync", "moved", "--json")
        assert r.exit_code == 0, r.stdout + r.stderr
        assert r.json["data"]["synced"][0]["records"] == 1
        here, there = front.removeprefix("http://"), url.removeprefix("http://")
        assert any(w.startswith(f"registry 'moved': {here} redirected to another host, {there}")
                   for w in r.json["warnings"]), r.json["warnings"]  # fmt: skip
        # discover refreshes through the same path: the warning shows there too.
        r = cli("discover", "weather", "--refresh", "--json")
        assert r.exit_code == 0, r.stdout + r.stderr
        assert any(there in w for w in r.json["warnings"]), r.json["warnings"]


def test_an_mcp_registry_redirected_from_https_to_http_is_refused(
    cli: Cli, trusted_tls: tuple[Path, Path]
) -> None:
    reg = Registry([make_record("io.example/weather")])
    with running(reg) as url, redirecting(lambda p: url + p, tls=trusted_tls) as (front, _):
        assert cli("registry", "add", "down", front).exit_code == 0
        r = cli("registry", "sync", "down", "--json")
        assert r.exit_code == 3, r.stdout + r.stderr
        (error,) = r.json["errors"]
        assert "from https to http is refused" in error["message"]
        assert reg.requests == []


def test_the_bounded_client_follows_no_redirect() -> None:
    """Sign-in and doctor's metadata checks: a 3xx is the answer, wherever it points."""
    with (
        redirecting(lambda _: "http://127.0.0.1:9/") as (there, hits),
        redirecting(lambda p: there + p, host="127.0.0.2") as (front, seen),
    ):

        async def get() -> int:
            async with BoundedClient(limit=5) as client:
                response = await client.get(front + "/.well-known/oauth", follow_redirects=True)
                return response.status_code

        assert anyio.run(get) == 302
        assert seen.paths == ["/.well-known/oauth"]
        assert hits.paths == []
    with pytest.raises(ValueError, match="never follows"):
        BoundedClient(limit=1, follow_redirects=True)
