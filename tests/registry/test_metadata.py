"""Package metadata: the npm and PyPI base URLs, the documents kept with their ETag and time,
and fetching several at once against a local registry (304s, redirects, offline answers from
the cache, documents that cannot be read)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from mcpctl.registry import metadata
from mcpctl.registry.client import RegistryClient
from mcpctl.registry.metadata import (
    NPM_ACCEPT,
    NPM_REGISTRY,
    PYPI_URL,
    Fetched,
    MetadataCache,
    fetch_all,
    npm_registry,
    pypi_url,
)
from tests.conftest import reserved_port
from tests.httpthread import reply, serving_http


class Site:
    """What the local registry serves, and the headers of each request it saw."""

    def __init__(self) -> None:
        self.docs: dict[str, Any] = {}
        self.redirects: dict[str, str] = {}  # path -> whole URL
        self.status: dict[str, int] = {}  # path -> an error status
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.lock = threading.Lock()

    def headers_of(self, path: str) -> list[dict[str, str]]:
        with self.lock:
            return [h for p, h in self.seen if p == path]


@contextlib.contextmanager
def serving(site: Site) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 for the block; its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            with site.lock:
                site.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                moved = site.redirects.get(self.path)
                status = site.status.get(self.path)
                doc = site.docs.get(self.path)
            if moved is not None:
                self.answer(302, b"", location=moved)
            elif status is not None:
                self.answer(status, b"{}")
            elif doc is None:
                self.answer(404, b"{}")
            else:
                body = json.dumps(doc).encode()
                etag = '"' + hashlib.sha256(body).hexdigest()[:12] + '"'
                if self.headers.get("If-None-Match") == etag:
                    self.answer(304, b"", etag=etag)
                else:
                    self.answer(200, body, etag=etag)

        def answer(
            self, status: int, body: bytes, *, etag: str | None = None, location: str = ""
        ) -> None:
            headers = {"Content-Type": "application/json"}
            if etag:
                headers["ETag"] = etag
            if location:
                headers["Location"] = location
            reply(self, status, body, headers)

    with serving_http(Handler) as base:
        yield base


@pytest.fixture
def site() -> Iterator[tuple[Site, str]]:
    """A local registry and its base URL."""
    s = Site()
    with serving(s) as base:
        yield s, base


def same(data: Any) -> Any:
    return data


def clock(value: float) -> Any:
    return lambda: value


# --- the base URLs ----------------------------------------------------------------------------


def test_the_public_registries_by_default() -> None:
    assert npm_registry({}) == NPM_REGISTRY == "https://registry.npmjs.org"
    assert pypi_url({}) == PYPI_URL == "https://pypi.org"
    assert npm_registry({"MCPCTL_NPM_REGISTRY": ""}) == NPM_REGISTRY
    assert pypi_url({"MCPCTL_PYPI_URL": ""}) == PYPI_URL


def test_the_base_urls_from_the_environment_without_a_trailing_slash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = {"MCPCTL_NPM_REGISTRY": "http://npm.local/x/", "MCPCTL_PYPI_URL": "http://py.local//"}
    assert npm_registry(env) == "http://npm.local/x"
    assert pypi_url(env) == "http://py.local"
    env = {"MCPCTL_NPM_REGISTRY": "http://h/XX/", "MCPCTL_PYPI_URL": "http://h/pypi-X/"}
    assert npm_registry(env) == "http://h/XX"
    assert pypi_url(env) == "http://h/pypi-X"
    monkeypatch.setenv("MCPCTL_NPM_REGISTRY", "http://npm.here/")
    monkeypatch.setenv("MCPCTL_PYPI_URL", "http://py.here/")
    assert npm_registry() == "http://npm.here"
    assert pypi_url() == "http://py.here"


# --- the cache --------------------------------------------------------------------------------


def test_a_document_kept_is_read_back_with_its_etag_time_and_redirect() -> None:
    cache = MetadataCache.load(None)
    assert cache.path is None and cache.records == {}
    assert cache.get("u") is None and cache.redirect("u") is None
    cache.put("u", {"v": 1}, '"e"', 12.5)
    assert cache.get("u") == ({"v": 1}, '"e"', 12.5)
    assert cache.records["u"] == {"data": {"v": 1}, "etag": '"e"', "fetched_at": 12.5}
    assert cache.redirect("u") is None
    cache.put("w", None, None, 3, ("a.example", "b.example"))
    assert cache.get("w") == (None, None, 3.0)
    assert cache.redirect("w") == ("a.example", "b.example")
    assert cache.records["w"]["redirect"] == ["a.example", "b.example"]
    cache.save()  # no file: nothing to write, no error


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"etag": '"e"', "fetched_at": 1.0}, None),  # no data
        ({"data": 1, "etag": 5, "fetched_at": "x"}, (1, None, 0.0)),
        ({"data": 1}, (1, None, 0.0)),
        ({"data": 1, "fetched_at": 7}, (1, None, 7.0)),
    ],
)
def test_a_record_read_from_a_file_tolerates_odd_fields(
    record: dict[str, Any], expected: Any
) -> None:
    cache = MetadataCache(None, {"u": record})
    assert cache.get("u") == expected


@pytest.mark.parametrize(
    ("redirect", "expected"),
    [
        (["a", "b"], ("a", "b")),
        (["a"], None),
        (["a", "b", "c"], None),
        (["a", 2], None),
        ("a b", None),
        ({"a": "b"}, None),
    ],
)
def test_only_a_pair_of_hosts_is_a_redirect(redirect: Any, expected: Any) -> None:
    cache = MetadataCache(None, {"u": {"data": 1, "redirect": redirect}})
    assert cache.redirect("u") == expected


def test_saved_documents_are_read_back_and_merged_with_another_process(tmp_path: Path) -> None:
    path = tmp_path / "metadata.json"
    first = MetadataCache.load(path)
    assert first.records == {}
    first.put("b", {"n": 1}, '"1"', 10.0, ("x", "y"))
    first.save()
    other = MetadataCache.load(path)
    assert other.get("b") == ({"n": 1}, '"1"', 10.0)
    assert other.redirect("b") == ("x", "y")
    first.put("a", {"n": 2}, None, 20.0)
    other.put("c", {"n": 3}, None, 30.0)
    other.save()
    first.save()  # keeps what the other one wrote
    data = json.loads(path.read_text())
    assert list(data["documents"]) == ["a", "b", "c"]  # by URL
    again = MetadataCache.load(path)
    assert again.get("c") == ({"n": 3}, None, 30.0)
    assert again.get("a") == ({"n": 2}, None, 20.0)


def test_the_most_recently_fetched_documents_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metadata, "MAX_DOCUMENTS", 3)
    path = tmp_path / "metadata.json"
    cache = MetadataCache.load(path)
    for i, at in enumerate([5.0, 0.5, 4.0, 0.2, 0.3]):
        cache.put(f"u{i}", i, None, at)
    cache.records["odd"] = {"data": 9, "fetched_at": "never"}  # read as 0: the oldest
    cache.save()
    kept = MetadataCache.load(path).records
    assert sorted(kept) == ["u0", "u1", "u2"]


def test_a_cache_file_that_is_not_json_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "metadata.json"
    path.write_text("{not json")
    assert MetadataCache.load(path).records == {}


# --- fetching ---------------------------------------------------------------------------------


def test_nothing_wanted_fetches_nothing() -> None:
    assert fetch_all({}, MetadataCache.load(None)) == {}


def test_documents_are_fetched_reduced_and_kept(site: tuple[Site, str]) -> None:
    s, base = site
    s.docs["/pkg"] = {"name": "pkg", "readme": "long"}
    s.docs["/pypi/demo/json"] = {"info": {"version": "1.0"}}
    cache = MetadataCache.load(None)
    npm, py = f"{base}/pkg", f"{base}/pypi/demo/json"
    wanted = {npm: lambda d: d["name"], py: lambda d: d["info"]["version"]}
    out = fetch_all(wanted, cache, now=clock(100.0))
    assert out == {npm: Fetched("pkg", 100.0), py: Fetched("1.0", 100.0)}
    assert cache.get(npm)[0::2] == ("pkg", 100.0)
    assert cache.get(py)[0::2] == ("1.0", 100.0)
    assert cache.get(npm)[1] is not None  # its ETag
    # npm's abbreviated document is asked for; PyPI's JSON API gets the client's default
    assert s.headers_of("/pkg")[0]["accept"] == NPM_ACCEPT
    assert s.headers_of("/pypi/demo/json")[0]["accept"] == "application/json"
    assert "if-none-match" not in s.headers_of("/pkg")[0]


def test_a_document_unchanged_is_answered_304_and_the_kept_copy_used(
    site: tuple[Site, str],
) -> None:
    s, base = site
    s.docs["/pkg"] = {"name": "pkg"}
    url = f"{base}/pkg"
    cache = MetadataCache.load(None)
    fetch_all({url: same}, cache, now=clock(100.0))
    etag = cache.get(url)[1]
    reduced: list[Any] = []
    out = fetch_all({url: reduced.append}, cache, now=clock(200.0))
    assert s.headers_of("/pkg")[1]["if-none-match"] == etag
    assert reduced == []  # a 304 has no body to reduce
    assert out[url] == Fetched({"name": "pkg"}, 200.0)
    assert cache.get(url) == ({"name": "pkg"}, etag, 200.0)  # checked again now


def test_a_redirect_to_another_host_is_said_and_kept(site: tuple[Site, str]) -> None:
    s, base = site
    port = base.rsplit(":", 1)[1]
    s.docs["/pkg"] = {"name": "pkg"}
    s.redirects["/old"] = f"http://localhost:{port}/pkg"
    url = f"{base}/old"
    cache = MetadataCache.load(None)
    out = fetch_all({url: same}, cache, now=clock(5.0))
    moved = (f"127.0.0.1:{port}", f"localhost:{port}")
    assert out[url] == Fetched({"name": "pkg"}, 5.0, redirect=moved)
    assert cache.redirect(url) == moved
    # revalidated through the same redirect: the 304 says it too
    out = fetch_all({url: same}, cache, now=clock(6.0))
    assert out[url] == Fetched({"name": "pkg"}, 6.0, redirect=moved)
    assert cache.redirect(url) == moved


def test_a_document_the_reducer_cannot_read_is_an_error_and_not_kept(
    site: tuple[Site, str],
) -> None:
    s, base = site
    s.docs["/pkg"] = {"name": "pkg"}
    url = f"{base}/pkg"
    cache = MetadataCache.load(None)
    for error in (ValueError("no versions"), TypeError("t"), KeyError("k"), AttributeError("a")):

        def reduce(data: Any, error: Exception = error) -> Any:
            raise error

        out = fetch_all({url: reduce}, cache, now=clock(7.0))
        assert out[url] == Fetched(None, 7.0, error=f"{url}: unexpected answer: {error}")
    assert cache.get(url) is None


def test_an_unreachable_registry_is_answered_from_the_cache(site: tuple[Site, str]) -> None:
    s, base = site
    s.docs["/pkg"] = {"name": "pkg"}
    port = base.rsplit(":", 1)[1]
    moved = ("a", f"localhost:{port}")
    with reserved_port() as free:  # bound, never listening: the connection is refused
        closed = f"http://127.0.0.1:{free}"
        url = f"{closed}/pkg"
        cache = MetadataCache.load(None)
        cache.put(url, {"name": "old"}, '"e"', 50.0, moved)
        out = fetch_all({url: same}, cache, timeout=5, now=clock(60.0))
        assert out[url] == Fetched({"name": "old"}, 50.0, offline=True, redirect=moved)
        assert cache.get(url) == ({"name": "old"}, '"e"', 50.0)  # left as it was

        fresh = MetadataCache.load(None)
        out = fetch_all({url: same}, fresh, timeout=5, now=clock(60.0))
    got = out[url]
    assert got.data is None and got.offline is True and got.fetched_at == 60.0
    assert got.error is not None and got.error.startswith(f"cannot reach {closed}")
    assert got.error.endswith("; nothing cached")
    assert fresh.get(url) is None


def test_a_registry_that_answers_an_error_is_not_answered_from_the_cache(
    site: tuple[Site, str],
) -> None:
    _, base = site
    url = f"{base}/gone"
    cache = MetadataCache.load(None)
    cache.put(url, {"name": "old"}, None, 50.0)
    out = fetch_all({url: same}, cache, now=clock(60.0))
    assert out[url] == Fetched(None, 60.0, error=f"{url}: not found (404)")
    assert cache.get(url) == ({"name": "old"}, None, 50.0)


def test_each_request_gets_the_time_limits_given(site: tuple[Site, str]) -> None:
    s, base = site
    s.docs["/a"] = {"n": 1}
    s.docs["/b"] = {"n": 2}
    made: list[tuple[str, float, float | None]] = []
    lock = threading.Lock()

    def factory(url: str, *, timeout: float, deadline: float | None) -> RegistryClient:
        with lock:
            made.append((url, timeout, deadline))
        return RegistryClient(url, timeout=timeout, deadline=deadline)

    end = time.monotonic() + 30
    urls = {f"{base}/a": same, f"{base}/b": same}
    out = fetch_all(
        urls, MetadataCache.load(None), timeout=7.5, deadline=end, client_factory=factory
    )
    assert {u: f.data for u, f in out.items()} == {f"{base}/a": {"n": 1}, f"{base}/b": {"n": 2}}
    assert sorted(made) == [(f"{base}/a", 7.5, end), (f"{base}/b", 7.5, end)]


def test_a_deadline_already_past_answers_from_the_cache(site: tuple[Site, str]) -> None:
    s, base = site
    s.docs["/pkg"] = {"name": "new"}
    url = f"{base}/pkg"
    cache = MetadataCache.load(None)
    cache.put(url, {"name": "old"}, None, 50.0)
    out = fetch_all({url: same}, cache, deadline=time.monotonic() - 1, now=clock(60.0))
    assert out[url] == Fetched({"name": "old"}, 50.0, offline=True)


def test_many_documents_at_once(site: tuple[Site, str]) -> None:
    s, base = site
    for i in range(20):
        s.docs[f"/p{i}"] = {"i": i}
    wanted = {f"{base}/p{i}": same for i in range(20)}
    out = fetch_all(wanted, MetadataCache.load(None), now=clock(1.0))
    assert out == {f"{base}/p{i}": Fetched({"i": i}, 1.0) for i in range(20)}


def test_the_cache_file_has_its_own_size_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "metadata.json"
    cache = MetadataCache.load(path)
    cache.put("u", {"long": "x" * 500}, None, 1.0)
    cache.save()
    monkeypatch.setenv("MCPCTL_MAX_FILE_BYTES", "100")  # the config files' limit, not the cache's
    assert MetadataCache.load(path).get("u") == ({"long": "x" * 500}, None, 1.0)


def test_a_document_changed_since_it_was_kept_is_fetched_again(site: tuple[Site, str]) -> None:
    s, base = site
    s.docs["/pkg"] = {"v": 1}
    url = f"{base}/pkg"
    cache = MetadataCache.load(None)
    fetch_all({url: same}, cache, now=clock(1.0))
    old_etag = cache.get(url)[1]
    s.docs["/pkg"] = {"v": 2}
    out = fetch_all({url: same}, cache, now=clock(2.0))
    assert out[url] == Fetched({"v": 2}, 2.0)
    data, etag, at = cache.get(url)
    assert (data, at) == ({"v": 2}, 2.0) and etag not in (None, old_etag)


def test_a_document_that_cannot_be_read_still_says_where_it_came_from(
    site: tuple[Site, str],
) -> None:
    s, base = site
    port = base.rsplit(":", 1)[1]
    s.docs["/pkg"] = {"name": "pkg"}
    s.redirects["/old"] = f"http://localhost:{port}/pkg"
    url = f"{base}/old"

    def refuse(data: Any) -> Any:
        raise ValueError("no versions")

    out = fetch_all({url: refuse}, MetadataCache.load(None), now=clock(3.0))
    moved = (f"127.0.0.1:{port}", f"localhost:{port}")
    assert out[url] == Fetched(None, 3.0, error=f"{url}: unexpected answer: no versions",
                               redirect=moved)  # fmt: skip


def test_documents_are_fetched_eight_at_a_time() -> None:
    """However many cores: eight requests at once, no fewer (each waits for the other seven
    here) and no more."""
    from mcpctl.registry.client import Document

    lock = threading.Lock()
    gate = threading.Barrier(metadata.MAX_THREADS, timeout=30)
    active = [0, 0]  # now, most at once

    class Gated:
        def __init__(self, url: str, **_: object) -> None:
            pass

        def __enter__(self) -> Gated:
            return self

        def __exit__(self, *_: object) -> None:
            pass

        def get_document(self, url: str, **_: object) -> Document:
            with lock:
                active[0] += 1
                active[1] = max(active)
            gate.wait()
            with lock:
                active[0] -= 1
            return Document({"url": url})

    assert metadata.MAX_THREADS == 8
    wanted = {f"http://127.0.0.1:9/p{i:02d}": same for i in range(16)}
    out = fetch_all(wanted, MetadataCache.load(None), client_factory=Gated, now=clock(1.0))
    assert [f.data for f in out.values()] == [{"url": u} for u in sorted(wanted)]
    assert active == [0, 8]
