"""The v0.1 client against a real local HTTP registry, syncing, and refreshing before use."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from mcpctl.registry import DiscoveryCache, RegistryClient, RegistryError
from mcpctl.registry import client as client_module
from mcpctl.registry.client import MAX_REDIRECTS, OFFLINE_HINT, Document, host_of
from mcpctl.registry.sources import RETRY_AFTER_FAILURE, RegistrySource, age
from mcpctl.registry.syncing import refresh, sync_source
from tests.httpthread import reply, serving_http
from tests.registry.server import OFFICIAL, Registry, fast_client, make_record
from tests.tlsserver import make_certificate, make_key, write_pem

Fixture = tuple[Registry, str]


def quick(url: str, **kw: Any) -> RegistryClient:
    return fast_client(url, deadline=kw.get("deadline"))


def give_up_fast(url: str, **kw: Any) -> RegistryClient:
    return fast_client(url, timeout=0.5, retries=1, deadline=kw.get("deadline"))


@pytest.mark.parametrize("cursor_key", ["nextCursor", "next_cursor"])
def test_full_sync_pages_through_everything(registry: Fixture, cursor_key: str) -> None:
    reg, url = registry
    reg.cursor_key = cursor_key  # the official spelling, and the older one
    cache = DiscoveryCache.memory()
    outcome = sync_source(cache, RegistrySource("local", "http", url), client_factory=quick)
    assert outcome.mode == "full" and outcome.records == 255
    assert sum("/v0.1/servers?" in r for r in reg.requests) == 3  # 100 + 100 + 55
    hits = cache.search("weather")
    assert hits[0].name == "io.example/weather" and hits[0].version == "1.2.0"


def test_incremental_sync_applies_changes_and_deletions(registry: Fixture) -> None:
    reg, url = registry
    cache = DiscoveryCache.memory()
    source = RegistrySource("local", "http", url)
    sync_source(cache, source, client_factory=quick)
    reg.records[0]["_meta"][OFFICIAL].update(status="deleted", updatedAt="2025-12-24T00:00:00Z")
    reg.records.append(make_record("io.example/new-thing", updated="2025-12-24T00:00:01Z"))
    reg.changed()
    reg.requests.clear()
    outcome = sync_source(cache, source, client_factory=quick)
    assert outcome.mode == "incremental" and outcome.records == 2
    assert all("updated_since=" in r for r in reg.requests)
    assert cache.search("new-thing")[0].name == "io.example/new-thing"
    assert not [h for h in cache.search("server-000") if h.name == "io.example/server-000"]
    assert cache.search("server-000", all_status=True)[0].status == "deleted"


def test_retries_honour_retry_after(registry: Fixture) -> None:
    reg, url = registry
    reg.fail_first = 2
    slept: list[float] = []
    client = RegistryClient(url, timeout=2, sleep=slept.append)
    assert len(list(client.iter_records())) == 255
    assert slept == [0.0, 0.0]


@pytest.mark.parametrize(("mode", "needle"), [
    ("500", "HTTP 500"), ("invalid_json", "not valid JSON"), ("huge", "larger than"),
    ("hang", "timed out: no complete answer; gave up after 0.[5-9] s"),
])  # fmt: skip
def test_faults_raise_registry_error_and_keep_the_cache(
    registry: Fixture, mode: str, needle: str
) -> None:
    reg, url = registry
    cache = DiscoveryCache.memory()
    source = RegistrySource("local", "http", url)
    sync_source(cache, source, client_factory=give_up_fast)
    before = cache.count("local")
    reg.mode = mode
    # The time limit covers the whole response: 50 MB on a loaded machine needs more than
    # the 0.5 s that is plenty for the hanging registry.
    limit = 0.5 if mode == "hang" else 5.0
    start = time.monotonic()
    with pytest.raises(RegistryError, match=needle):
        sync_source(cache, source, full=True, timeout=limit,
                    client_factory=lambda url, **kw: fast_client(url, retries=1, **kw))  # fmt: skip
    assert time.monotonic() - start < limit + 3.5
    assert cache.count("local") == before


def test_wrong_field_types_are_skipped(registry: Fixture) -> None:
    reg, url = registry
    reg.mode = "wrong_types"
    assert list(fast_client(url).iter_records()) == []


def test_nothing_listening_fails_fast() -> None:
    start = time.monotonic()
    with pytest.raises(RegistryError, match="cannot reach"):
        list(fast_client("http://127.0.0.1:9").iter_records())
    assert time.monotonic() - start < 3


def test_versions_and_quoted_names(registry: Fixture) -> None:
    _, url = registry
    client = fast_client(url)
    assert sorted(r.version for r in client.versions("io.example/weather")) == ["1.0.0", "1.2.0"]
    assert client.version("io.example/weather").version == "1.2.0"
    with pytest.raises(RegistryError, match="404"):
        client.version("io.example/nope")


# --- refreshing before a command -----------------------------------------------------


def test_refresh_uses_cache_when_a_registry_fails(registry: Fixture) -> None:
    reg, url = registry
    cache = DiscoveryCache.memory()
    src = RegistrySource("local", "http", url)
    assert refresh(cache, [src], force=True, client_factory=quick).failed == []
    reg.mode = "500"
    report = refresh(cache, [src], force=True, client_factory=give_up_fast)
    assert report.failed == [] and report.unreachable == ["local"]
    assert len(report.warnings) == 1 and "using cached data" in report.warnings[0]


def test_an_unreachable_registry_is_not_retried_at_once(registry: Fixture) -> None:
    reg, url = registry
    cache = DiscoveryCache.memory()
    src = RegistrySource("local", "http", url)
    refresh(cache, [src], force=True, client_factory=quick)
    reg.mode = "500"
    report = refresh(cache, [src], force=True, client_factory=give_up_fast)
    assert "using cached data" in report.warnings[0]
    reg.requests.clear()
    report = refresh(cache, [src], ttl=0)  # stale, but it failed a moment ago
    assert reg.requests == [] and "unreachable" in report.warnings[0]
    assert "mcpctl registry sync local" in report.warnings[0]
    reg.mode = None
    assert refresh(cache, [src], force=True, client_factory=quick).synced  # tried again now
    assert cache.last_failure("local") is None


def test_a_registry_named_twice_is_refreshed_and_warned_about_once() -> None:
    cache = DiscoveryCache.memory()
    dead = RegistrySource("dead", "http", "http://127.0.0.1:9")
    report = refresh(cache, [dead, dead], client_factory=give_up_fast)
    assert len(report.warnings) == 1 and "cannot reach" in report.warnings[0]
    assert report.failed == report.unreachable == ["dead"]
    report = refresh(cache, [dead, dead, dead])
    assert len(report.warnings) == 1 and "unreachable" in report.warnings[0]
    assert report.failed == ["dead"]


@pytest.mark.parametrize(("ago", "said"), [
    (0.2, "0 s ago"), (5, "5 s ago"), (59.6, "59 s ago"), (61, "1 min ago"),
    (125, "2 min ago"), (RETRY_AFTER_FAILURE - 1, "4 min ago"),
])  # fmt: skip
def test_the_warning_says_how_long_ago_it_failed(ago: float, said: str) -> None:
    cache = DiscoveryCache.memory()
    dead = RegistrySource("dead", "http", "http://127.0.0.1:9")
    cache.note_failure("dead", at=time.time() - ago)
    report = refresh(cache, [dead])
    assert report.warnings == [
        f"registry 'dead' was unreachable {said}; no cached data "
        "('mcpctl registry sync dead' tries again now)"
    ]


def test_a_failure_older_than_the_pause_is_tried_again() -> None:
    cache = DiscoveryCache.memory()
    dead = RegistrySource("dead", "http", "http://127.0.0.1:9")
    cache.note_failure("dead", at=time.time() - RETRY_AFTER_FAILURE - 1)
    report = refresh(cache, [dead], client_factory=give_up_fast)
    assert len(report.warnings) == 1 and "cannot reach" in report.warnings[0]
    assert time.time() - (cache.last_failure("dead") or 0) < 5


def test_age_units() -> None:
    assert [age(s) for s in (-3, 0, 59.9, 60, 3599, 3600, 86399, 86400 * 3)] == [
        "0 s ago", "0 s ago", "59 s ago", "1 min ago", "59 min ago", "1 h ago", "23 h ago",
        "3 d ago",
    ]  # fmt: skip


# --- what mutation testing found unpinned -----------------------------------------------------


class Scripted:
    """A registry on 127.0.0.1 answering each path from a script: ``answers[path]`` is a list
    of ``(status, body, headers)`` handed out in turn (the last one repeats); every request's
    path and headers are kept."""

    def __init__(self, answers: dict[str, list[tuple[int, bytes, dict[str, str]]]]) -> None:
        self.answers = answers
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.lock = threading.Lock()

    def paths(self) -> list[str]:
        with self.lock:
            return [p for p, _ in self.seen]


@contextlib.contextmanager
def scripted(
    answers: dict[str, list[tuple[int, bytes, dict[str, str]]]],
    tls: tuple[Path, Path] | None = None,
) -> Iterator[tuple[str, Scripted]]:
    """Serve ``answers`` (over https with ``tls``: certificate and key) for the block."""
    site = Scripted(answers)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            with site.lock:
                site.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                script = site.answers.get(urlsplit(self.path).path) or [(404, b"{}", {})]
                status, body, headers = script.pop(0) if len(script) > 1 else script[0]
            reply(self, status, body, headers)

    with serving_http(Handler, tls) as url:
        yield url, site


def page(*names: str, cursor: str | None = None, key: str = "nextCursor") -> bytes:
    meta: dict[str, Any] = {"count": len(names)}
    if cursor is not None:
        meta[key] = cursor
    return json.dumps({"servers": [make_record(n) for n in names], "metadata": meta}).encode()


OK: dict[str, str] = {}


@pytest.mark.parametrize(("url", "host"), [
    ("https://Registry.Example.COM/v0.1", "registry.example.com"),
    ("https://user:secret@registry.example.com:8443/x", "registry.example.com:8443"),
    ("http://[::1]:8080/", "[::1]:8080"),
    ("http://[::1]/", "[::1]"),
    ("http://example.com:notaport/", "example.com"),
    ("not a url", ""),
])  # fmt: skip
def test_host_of_names_a_host_as_a_person_does(url: str, host: str) -> None:
    assert host_of(url) == host


@pytest.mark.parametrize("base", ["{url}", "{url}/", "{url}/v0.1", "{url}/v0.1/"])
def test_the_api_prefix_is_added_once(base: str) -> None:
    with scripted({"/v0.1/servers": [(200, page("io.example/a"), OK)]}) as (url, site):
        with fast_client(base.format(url=url)) as client:
            assert [r.name for r in client.iter_records()] == ["io.example/a"]
        assert site.paths() == ["/v0.1/servers?limit=100"]


def test_pages_ask_for_100_with_the_cursor_the_change_time_and_the_search() -> None:
    answers = [(200, page("io.example/a", cursor="c1"), OK),
               (200, page("io.example/b", cursor="c2", key="next_cursor"), OK),
               (200, page("io.example/c"), OK)]  # fmt: skip
    with scripted({"/v0.1/servers": answers}) as (url, site):
        with fast_client(url) as client:
            names = [r.name for r in client.iter_records(updated_since="2025-01-01", search="w")]
        assert names == ["io.example/a", "io.example/b", "io.example/c"]
        queries = [parse_qs(urlsplit(p).query) for p in site.paths()]
        assert [q.get("cursor") for q in queries] == [None, ["c1"], ["c2"]]
        for q in queries:
            assert q["limit"] == ["100"] and q["updated_since"] == ["2025-01-01"]
            assert q["search"] == ["w"]


def test_a_repeated_cursor_ends_the_listing() -> None:
    answers = [(200, page("io.example/a", cursor="same"), OK),
               (200, page("io.example/b", cursor="same"), OK),
               (200, page("io.example/c"), OK)]  # fmt: skip
    with scripted({"/v0.1/servers": answers}) as (url, site):
        with fast_client(url) as client:
            assert [r.name for r in client.iter_records()] == ["io.example/a", "io.example/b"]
        assert len(site.paths()) == 2


@pytest.mark.parametrize("meta", [[], "x", None, {"nextCursor": 5}, {"nextCursor": ""}])
def test_a_page_without_a_usable_cursor_is_the_last(meta: Any) -> None:
    body = json.dumps({"servers": [make_record("io.example/a")], "metadata": meta}).encode()
    with scripted({"/v0.1/servers": [(200, body, OK)]}) as (url, site):
        with fast_client(url) as client:
            assert [r.name for r in client.iter_records()] == ["io.example/a"]
        assert len(site.paths()) == 1


@pytest.mark.parametrize("body", [b"[]", b'{"servers": {}}', b'{"items": []}'])
def test_a_page_without_a_servers_list_is_an_error(body: bytes) -> None:
    with scripted({"/v0.1/servers": [(200, body, OK)]}) as (url, _):
        with fast_client(url) as client, pytest.raises(RegistryError) as caught:
            list(client.iter_records())
        assert caught.value.message == f"{url}: a page without a 'servers' list"


def test_versions_skip_what_is_not_a_record_and_tolerate_no_list() -> None:
    good = make_record("io.example/a b")
    body = json.dumps({"servers": [good, "text", {"server": {"name": 5}}]}).encode()
    path = "/v0.1/servers/io.example%2Fa%20b/versions"
    with scripted({path: [(200, body, OK)], "/v0.1/servers/x/versions": [(200, b"[]", OK)]}) as (
        url,
        site,
    ):
        with fast_client(url) as client:
            assert [r.name for r in client.versions("io.example/a b")] == ["io.example/a b"]
            assert client.versions("x") == []
        assert site.paths()[0] == path


def test_a_version_that_is_not_a_record_is_an_error() -> None:
    path = "/v0.1/servers/io.example%2Fa/versions/1.0%2F2"
    with scripted({path: [(200, b'{"server": {}}', OK)]}) as (url, site):
        with fast_client(url) as client, pytest.raises(RegistryError) as caught:
            client.version("io.example/a", "1.0/2")
        assert caught.value.message == f"{url}: io.example/a@1.0/2 is not a server record"
        assert site.paths() == [path]


@pytest.mark.parametrize(("status", "message"), [(404, "not found (404)"), (403, "HTTP 403"),
                                                 (400, "HTTP 400"), (418, "HTTP 418")])  # fmt: skip
def test_an_error_status_is_said_and_not_retried(status: int, message: str) -> None:
    with scripted({"/doc": [(status, b"{}", OK)]}) as (url, site):
        with fast_client(url) as client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert caught.value.message == f"{url}/doc: {message}"
        assert site.paths() == ["/doc"]


def test_a_document_with_a_byte_order_mark_and_its_etag() -> None:
    body = b"\xef\xbb\xbf" + json.dumps({"a": "\u00e9"}).encode()
    with scripted({"/doc": [(200, body, {"ETag": '"v1"'})]}) as (url, site):
        with fast_client(url) as client:
            doc = client.get_document(url + "/doc")
        assert doc == Document({"a": "\u00e9"}, '"v1"', None)
        ((_, headers),) = site.seen
        assert headers["accept"] == "application/json" and "if-none-match" not in headers


def test_a_conditional_request_answered_not_modified() -> None:
    with scripted({"/doc": [(304, b"", {"ETag": '"v2"'})]}) as (url, site):
        with fast_client(url) as client:
            doc = client.get_document(url + "/doc", etag='"v1"', accept="application/x-npm")
            assert doc == Document(None, '"v1"', None)
            with pytest.raises(RegistryError) as caught:
                client.get_document(url + "/doc")
        assert caught.value.message == f"{url}/doc: HTTP 304 to a request that was not conditional"
        first = site.seen[0][1]
        assert first["if-none-match"] == '"v1"' and first["accept"] == "application/x-npm"


def test_a_body_over_the_cap_is_refused_in_megabytes() -> None:
    with scripted({"/doc": [(200, b'["' + b"x" * (3 * 1_048_576) + b'"]', OK)]}) as (url, _):
        client = fast_client(url, max_bytes=2 * 1_048_576)
        with client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert caught.value.message == f"{url}/doc: response larger than 2 MB"
        with fast_client(url, max_bytes=3 * 1_048_576 + 4) as client:
            assert len(client.get_document(url + "/doc").data[0]) == 3 * 1_048_576


def test_retries_back_off_and_then_say_how_many_attempts() -> None:
    with scripted({"/doc": [(503, b"{}", OK)]}) as (url, site):
        slept: list[float] = []
        client = RegistryClient(url, timeout=30, retries=3, backoff=0.25, sleep=slept.append)
        with client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert slept == [0.25, 0.5, 1.0]
        assert len(site.paths()) == 4
        assert re.fullmatch(
            rf"{url}/doc: HTTP 503, still failing after 4 attempts \(\d+\.\d s\)",
            caught.value.message,
        )


def test_a_retry_after_then_success() -> None:
    answers = [(429, b"{}", {"Retry-After": "2"}), (502, b"{}", OK), (200, b"[1]", OK)]
    with scripted({"/doc": answers}) as (url, site):
        slept: list[float] = []
        with RegistryClient(url, timeout=30, retries=2, sleep=slept.append) as client:
            assert client.get_document(url + "/doc").data == [1]
        assert slept == [2.0, 1.0]  # as asked; then the backoff of the second attempt
        with RegistryClient(url, timeout=30, retries=0, sleep=slept.append) as client:
            site.answers["/doc"] = [(500, b"{}", OK)]
            with pytest.raises(RegistryError, match="still failing after 1 attempts"):
                client.get_document(url + "/doc")


def test_a_retry_after_longer_than_the_time_left_gives_up_at_once() -> None:
    with scripted({"/doc": [(429, b"{}", {"Retry-After": "30"})]}) as (url, site):
        slept: list[float] = []
        client = RegistryClient(url, timeout=5, sleep=slept.append)
        with client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert slept == [] and site.paths() == ["/doc"]
        assert re.fullmatch(
            rf"{url}/doc: HTTP 429; it asks to retry in 30 s, more than the [0-5]\.\d s left; "
            r"gave up after \d+\.\d s",
            caught.value.message,
        )


def test_a_retry_after_in_fractions_is_said_to_a_tenth() -> None:
    with scripted({"/doc": [(503, b"{}", {"Retry-After": "30.25"})]}) as (url, _):
        client = RegistryClient(url, timeout=5, sleep=lambda s: None)
        with client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert "; it asks to retry in 30.2 s, more than the " in caught.value.message


def test_no_time_left_for_the_backoff() -> None:
    with scripted({"/doc": [(500, b"{}", OK)]}) as (url, _):
        client = RegistryClient(url, timeout=5, backoff=10, sleep=lambda s: None)
        with client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert "HTTP 500; no time left to retry; gave up after" in caught.value.message


def test_a_deadline_already_past_asks_nothing() -> None:
    with scripted({"/doc": [(200, b"[]", OK)]}) as (url, site):
        client = fast_client(url, deadline=time.monotonic() - 1)
        with client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert site.paths() == []
        assert re.fullmatch(gave_up(url + "/doc"), caught.value.message)
        assert caught.value.hint == "check the network, or use --offline to search the cache"


def test_cannot_reach_names_the_registry_and_hints_offline() -> None:
    with fast_client("http://127.0.0.1:9") as client, pytest.raises(RegistryError) as caught:
        client.get_json("/servers")
    assert caught.value.message.startswith("cannot reach http://127.0.0.1:9: ")
    assert caught.value.hint == "check the network, or use --offline to search the cache"


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_on_the_same_host_is_followed_without_a_warning(status: int) -> None:
    answers = {"/v0.1/servers": [(status, b"", {"Location": " /moved/v0.1/servers?limit=100 "})],
               "/moved/v0.1/servers": [(200, page("io.example/a"), OK)]}  # fmt: skip
    with scripted(answers) as (url, site):
        with fast_client(url) as client:
            assert [r.name for r in client.iter_records(search="q")] == ["io.example/a"]
            assert client.redirects == []
        # The location is a whole URL: the first request's query is not added again.
        assert site.paths() == ["/v0.1/servers?limit=100&search=q", "/moved/v0.1/servers?limit=100"]


def test_redirects_to_another_host_are_remembered_once_each() -> None:
    with scripted({"/doc": [(200, b"[2]", OK)]}) as (there, _):
        hop = {"/doc": [(302, b"", {"Location": there + "/doc"})]}
        with scripted(hop) as (front, _):
            front2 = front.replace("127.0.0.1", "localhost")
            with fast_client(front) as client:
                doc = client.get_document(front + "/doc")
                assert doc == Document([2], None, (host_of(front), host_of(there)))
                client.get_document(front + "/doc")
                assert client.get_document(there + "/doc").redirect is None
                client.get_document(front2 + "/doc")
                assert client.redirects == [(host_of(front), host_of(there)),
                                            (host_of(front2), host_of(there))]  # fmt: skip


def test_not_modified_from_another_host_says_it_came_from_there() -> None:
    with scripted({"/doc": [(304, b"", OK)]}) as (there, _):
        hop = {"/doc": [(302, b"", {"Location": there + "/doc"})]}
        with scripted(hop) as (front, _), fast_client(front) as client:
            doc = client.get_document(front + "/doc", etag='"v1"')
        assert doc == Document(None, '"v1"', (host_of(front), host_of(there)))


def test_a_redirect_to_an_address_without_a_port_is_followed() -> None:
    with scripted({"/doc": [(302, b"", {"Location": "http://127.0.0.1/doc"})]}) as (url, _):
        with fast_client(url) as client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert "redirects to" not in caught.value.message  # followed: port 80 answers no JSON


def test_a_registry_address_with_a_path_keeps_it() -> None:
    answers = {"/X/v0.1/servers": [(200, b'{"servers": []}', OK)]}
    with scripted(answers) as (url, site), fast_client(url + "/X/") as client:
        assert client.get_json("/servers") == {"servers": []}
        assert site.paths() == ["/X/v0.1/servers"]


def test_a_redirect_back_to_the_first_host_is_no_redirect() -> None:
    # start -> away -> start: the answer came from the host asked.
    answers: dict[str, list[tuple[int, bytes, dict[str, str]]]] = {"/home": [(200, b"[3]", OK)]}
    with scripted(answers) as (home, _), scripted({}) as (away, away_site):
        answers["/start"] = [(302, b"", {"Location": away + "/away"})]
        away_site.answers["/away"] = [(307, b"", {"Location": home + "/home"})]
        with fast_client(home) as client:
            doc = client.get_document(home + "/start")
            assert doc == Document([3], None, None)
            assert client.redirects == [(host_of(home), host_of(away))]


def test_the_redirect_limit_counts_hops() -> None:
    chain = {f"/{i}": [(302, b"", {"Location": f"/{i + 1}"})] for i in range(MAX_REDIRECTS)}
    chain[f"/{MAX_REDIRECTS}"] = [(200, b"[5]", OK)]
    with scripted(chain) as (url, site):
        with fast_client(url) as client:
            assert client.get_document(url + "/0").data == [5]
        assert len(site.paths()) == MAX_REDIRECTS + 1


@pytest.mark.parametrize(("location", "shown", "why"), [
    ("https://:80/", "https://:80", "not a valid address"),
    ("http://@/", "http://", "not a valid address"),
    ("ftp://127.0.0.1/x", "ftp:", "only http and https are followed"),
    ("http://[::1", "an address that cannot be read", "not a valid address"),
    ("http://127.0.0.1:99999/", "an address that cannot be read", "not a valid address"),
])  # fmt: skip
def test_a_redirect_that_cannot_be_followed_says_where_and_why(
    location: str, shown: str, why: str
) -> None:
    with scripted({"/doc": [(301, b"", {"Location": location})]}) as (url, _):
        with fast_client(url) as client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert caught.value.message == f"{url}/doc: HTTP 301 redirects to {shown}: {why}"
        assert caught.value.hint == (
            "check the registry's address: use the one it redirects to if you trust it"
        )


@pytest.mark.parametrize(("status", "headers", "why"), [
    (302, OK, "without a Location to follow"),
    (307, {**OK, "Location": ""}, "without a Location to follow"),
    (300, {**OK, "Location": "/other"}, "(only 301, 302, 303, 307 and 308 are followed)"),
    (399, OK, "(only 301, 302, 303, 307 and 308 are followed)"),
])  # fmt: skip
def test_a_move_that_cannot_be_followed_is_no_answer(
    status: int, headers: dict[str, str], why: str
) -> None:
    # The body of a 3xx is a page about the move: read as the registry's answer, an empty
    # object would be a registry with no servers.
    with scripted({"/doc": [(status, b"{}", headers)]}) as (url, site):
        with fast_client(url) as client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert caught.value.message == f"{url}/doc: HTTP {status} {why}"
        assert site.paths() == ["/doc"]


def test_a_redirect_to_https_is_followed() -> None:
    with scripted({"/doc": [(301, b"", {"Location": "https://127.0.0.1:9/doc"})]}) as (url, _):
        with fast_client(url) as client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert caught.value.message.startswith("cannot reach ")  # followed: nothing there


def test_get_json_sends_its_parameters_and_refuses_a_304() -> None:
    answers = {"/v0.1/servers": [(200, b'{"servers": []}', OK)], "/v0.1/old": [(304, b"", OK)],
               "/v0.1/bad": [(500, b"{}", OK)]}  # fmt: skip
    with scripted(answers) as (url, site):
        with fast_client(url, retries=0) as client:
            assert client.get_json("/servers", {"search": "w x"}) == {"servers": []}
            with pytest.raises(RegistryError) as caught:
                client.get_json("/old")
            assert caught.value.message.endswith("HTTP 304 to a request that was not conditional")
            with pytest.raises(RegistryError) as caught:
                client.get_json("/bad")
            assert re.fullmatch(rf"{url}/v0.1/bad: HTTP 500, still failing after 1 attempts "
                                r"\(\d\.\d s\)", caught.value.message)  # fmt: skip
        assert site.paths()[0] == "/v0.1/servers?search=w+x"


def test_one_redirect_past_the_limit_is_refused() -> None:
    chain = {f"/{i}": [(302, b"", {"Location": f"/{i + 1}"})] for i in range(MAX_REDIRECTS + 1)}
    chain[f"/{MAX_REDIRECTS + 1}"] = [(200, b"[6]", OK)]
    with scripted(chain) as (url, site):
        with fast_client(url) as client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/0")
        assert caught.value.message == (
            f"{url}/0: HTTP 302 redirects to {url}: more than {MAX_REDIRECTS} redirects"
        )
        assert len(site.paths()) == MAX_REDIRECTS + 1


def test_https_is_never_redirected_down_to_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = make_key()
    cert_path, key_path = write_pem(
        make_certificate("127.0.0.1", key, None, (-1, 30), ca=True), key, tmp_path, "registry"
    )
    monkeypatch.setenv("SSL_CERT_FILE", str(cert_path))
    with scripted({"/doc": [(200, b"[1]", OK)]}) as (plain, plain_site):
        answers = {"/down": [(302, b"", {"Location": plain + "/doc"})],
                   "/up": [(307, b"", {"Location": "/doc"})], "/doc": [(200, b"[2]", OK)]}  # fmt: skip
        with scripted(answers, tls=(cert_path, key_path)) as (secure, _):
            with fast_client(secure) as client:
                assert client.get_document(secure + "/up").data == [2]  # https to https
                with pytest.raises(RegistryError) as caught:
                    client.get_document(secure + "/down")
            assert caught.value.message == (
                f"{secure}/down: HTTP 302 redirects to {plain}: a redirect from https to http "
                "is refused (the answer could be altered)"
            )
        assert plain_site.paths() == []
        # From http, a redirect to http is followed.
        hop = {"/hop": [(302, b"", {"Location": plain + "/doc"})]}
        with scripted(hop) as (front, _), fast_client(front) as client:
            assert client.get_document(front + "/hop").data == [1]


# --- the time limits: a connection unanswered, a registry that stalls ------------------------


@contextlib.contextmanager
def unanswered() -> Iterator[str]:
    """An address on 127.0.0.1 whose connections get no answer: a listener whose queue of one
    (``listen(0)``) is already full and never accepted, so that Linux drops the SYN of any
    further connection. The listener is closed after 10 s at the latest (the next SYN is then
    refused), so that a client without a connection limit still ends."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        host, port = listener.getsockname()
        filler = socket.create_connection((host, port), timeout=10)
        closer = threading.Timer(10, listener.close)
        closer.start()
        try:
            yield f"http://{host}:{port}"
        finally:
            closer.cancel()
            closer.join(10)
            filler.close()


class Raw:
    """What a :func:`raw_registry` did with its connection: ``outcome`` once it is done."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.stop = threading.Event()
        self.outcome = "no connection"

    def result(self) -> str:
        """The outcome, once the registry is done with its connection (30 s at most)."""
        self.done.wait(30)
        return self.outcome


@contextlib.contextmanager
def raw_registry(serve: Callable[[socket.socket, Raw], str]) -> Iterator[tuple[str, Raw]]:
    """A registry on 127.0.0.1 that reads one request and hands its socket to ``serve`` (in
    a thread), which says what happened; ``stop`` is set when the block ends."""
    site = Raw()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(30)

    def run() -> None:
        try:
            conn, _ = listener.accept()
            with conn:
                conn.settimeout(30)
                request = b""
                while b"\r\n\r\n" not in request:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    request += chunk
                site.outcome = serve(conn, site)
        except OSError:
            pass
        finally:
            site.done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", site
    finally:
        site.stop.set()
        listener.close()
        thread.join(30)


def until_hung_up(conn: socket.socket) -> str:
    """Wait for the client to hang up (30 s at most)."""
    try:
        while conn.recv(4096):
            pass
    except TimeoutError:
        return "still there after 30 s"
    except OSError:
        pass
    return "hung up"


def trickle_headers(conn: socket.socket, site: Raw) -> str:
    """A status line, then a header line every 0.05 s (20 s in all): each read gets
    something, so no read timeout ever ends it."""
    try:
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        for i in range(400):
            if site.stop.wait(0.05):
                return "stopped"
            conn.sendall(f"X-Slow-{i}: 1\r\n".encode())
        conn.sendall(b"Content-Length: 2\r\n\r\n[]")
    except OSError:
        return "cut"
    return "sent everything"


class Unwatched:
    """A :class:`~mcpctl.registry.timing.Cutoff` that never cuts."""

    fired = False

    def __init__(self, sockets: object, end: float) -> None:
        pass

    def __enter__(self) -> Unwatched:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def gave_up(url: str) -> str:
    return rf"{re.escape(url)}: timed out: no complete answer; gave up after \d+\.\d s"


def test_a_connection_without_answer_is_given_up_at_the_connection_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The connection limit (3 s) is shorter than the request's: an unreachable registry is
    # said to be unreachable, not slow.
    monkeypatch.setattr(client_module, "CONNECT_TIMEOUT", 0.34)
    with (
        unanswered() as url,
        fast_client(url, timeout=5) as client,
        pytest.raises(RegistryError) as caught,
    ):
        client.get_json("/servers")
    assert caught.value.message == f"cannot reach {url}: no answer to the connection within 0.3 s"
    assert caught.value.hint == OFFLINE_HINT


@pytest.mark.parametrize("watched", [True, False])
def test_a_connection_without_answer_until_the_time_is_up_is_a_timeout(
    monkeypatch: pytest.MonkeyPatch, watched: bool
) -> None:
    # Known by the time, whether or not the connections' watch has fired.
    if not watched:
        monkeypatch.setattr(client_module, "Cutoff", Unwatched)
    with (
        unanswered() as url,
        fast_client(url, timeout=0.5) as client,
        pytest.raises(RegistryError) as caught,
    ):
        client.get_document(url + "/doc")
    assert re.fullmatch(gave_up(url + "/doc"), caught.value.message)
    assert caught.value.hint == OFFLINE_HINT


def test_headers_trickled_forever_are_cut_at_the_time_limit() -> None:
    # Each read gets a line within the read timeout: only cutting the connection ends it.
    with raw_registry(trickle_headers) as (url, site):
        with fast_client(url, timeout=0.5) as client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert site.result() == "cut"
    assert re.fullmatch(gave_up(url + "/doc"), caught.value.message)
    assert caught.value.hint == OFFLINE_HINT


def test_a_body_without_a_length_cut_at_the_time_limit_is_no_answer() -> None:
    # The end of the connection ends such a body: cut at the time limit, what came is
    # only the beginning of the answer, however well it reads.
    def start_then_stall(conn: socket.socket, site: Raw) -> str:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Connection: close\r\n\r\n[1]")  # fmt: skip
        return until_hung_up(conn)

    with raw_registry(start_then_stall) as (url, site):
        with fast_client(url, timeout=0.5) as client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert site.result() == "hung up"
    assert re.fullmatch(gave_up(url + "/doc"), caught.value.message)


def test_a_silent_registry_is_given_up_on_by_the_request_timeout_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Should the connections not be cut, the request's own timeout still ends it.
    monkeypatch.setattr(client_module, "Cutoff", Unwatched)
    with raw_registry(lambda conn, site: until_hung_up(conn)) as (url, site):
        with fast_client(url, timeout=0.5) as client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
        assert site.result() == "hung up"
    assert re.fullmatch(gave_up(url + "/doc"), caught.value.message)
    assert caught.value.hint == OFFLINE_HINT


class Clock:
    """A :func:`time.monotonic` for the client that stands still unless moved (it starts
    at a whole second of the real one, so that the time left is exact)."""

    def __init__(self) -> None:
        self.now = float(int(time.monotonic()))

    def monotonic(self) -> float:
        return self.now


Answer = Callable[[BaseHTTPRequestHandler, Clock], None]


@contextlib.contextmanager
def clocked_registry(monkeypatch: pytest.MonkeyPatch, answer: Answer) -> Iterator[str]:
    """A registry where ``answer`` answers each request, to a client whose clock is the
    :class:`Clock` handed to it (which ``answer`` may move on)."""
    clock = Clock()
    monkeypatch.setattr(client_module, "time", SimpleNamespace(monotonic=clock.monotonic))

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            answer(self, clock)

    with serving_http(Handler) as url:
        yield url


def retry_after(status: int, seconds: str, passes: float = 0.0) -> Answer:
    """``status`` with a ``Retry-After`` of ``seconds``, once the clock moved ``passes`` on."""

    def answer(handler: BaseHTTPRequestHandler, clock: Clock) -> None:
        clock.now += passes
        reply(handler, status, b"{}", {"Retry-After": seconds})

    return answer


def test_a_retry_after_taking_all_the_time_left_is_not_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Waiting all the time left would leave none for the request.
    slept: list[float] = []
    with clocked_registry(monkeypatch, retry_after(429, "60")) as url:
        client = RegistryClient(url, timeout=60, retries=1, sleep=slept.append)
        with client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
    assert slept == []
    assert caught.value.message == (
        f"{url}/doc: HTTP 429; it asks to retry in 60 s, more than the 60.0 s left; "
        "gave up after 0.0 s"
    )


def test_a_retry_after_when_the_time_is_already_up_says_none_is_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    with clocked_registry(monkeypatch, retry_after(503, "1", passes=90)) as url:
        client = RegistryClient(url, timeout=60, sleep=slept.append)
        with client, pytest.raises(RegistryError) as caught:
            client.get_document(url + "/doc")
    assert slept == []
    assert caught.value.message == (
        f"{url}/doc: HTTP 503; it asks to retry in 1 s, more than the 0.0 s left; "
        "gave up after 90.0 s"
    )


def test_a_body_that_comes_as_the_time_is_up_is_no_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    def late(handler: BaseHTTPRequestHandler, clock: Clock) -> None:
        clock.now += 60  # the request's whole time, to the instant
        reply(handler, 200, b"[1]", OK)

    with (
        clocked_registry(monkeypatch, late) as url,
        RegistryClient(url, timeout=60) as client,
        pytest.raises(RegistryError) as caught,
    ):
        client.get_document(url + "/doc")
    assert caught.value.message == (
        f"{url}/doc: timed out: no complete answer; gave up after 60.0 s"
    )


def test_a_connection_dropped_as_the_time_is_up_is_a_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Not "cannot reach": the registry was reached, and the time ran out.
    def dropped(handler: BaseHTTPRequestHandler, clock: Clock) -> None:
        clock.now += 60
        handler.close_connection = True  # no answer at all

    with (
        clocked_registry(monkeypatch, dropped) as url,
        RegistryClient(url, timeout=60) as client,
        pytest.raises(RegistryError) as caught,
    ):
        client.get_document(url + "/doc")
    assert caught.value.message == (
        f"{url}/doc: timed out: no complete answer; gave up after 60.0 s"
    )
    assert caught.value.hint == OFFLINE_HINT
