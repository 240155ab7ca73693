"""Syncing registries into the discovery cache: one (full, incremental, a file), several at
once within a deadline, and the refresh before a command (local registries on 127.0.0.1)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from mcpctl.errors import RegistryError, UsageError
from mcpctl.registry import DiscoveryCache, RegistryClient
from mcpctl.registry.client import host_of
from mcpctl.registry.sources import RegistrySource
from mcpctl.registry.syncing import (
    REQUEST_TIMEOUT,
    SyncFailure,
    SyncOutcome,
    refresh,
    sync_many,
    sync_source,
)
from tests.httpthread import serving_http
from tests.registry.server import OFFICIAL, Registry, fast_client, make_record, running

Fixture = tuple[Registry, str]


@pytest.fixture
def start() -> Iterator[Callable[..., Fixture]]:
    """Starts small registries (``start(record, ..., mode=...)``), stopped at the end."""
    with ExitStack() as stack:

        def make(*records: dict[str, Any], **attrs: Any) -> Fixture:
            reg = Registry(list(records))
            url = stack.enter_context(running(reg))
            for key, value in attrs.items():
                setattr(reg, key, value)
            return reg, url

        yield make


class Factory:
    """Makes real clients (short waits), keeping what each was asked for."""

    def __init__(self, **fixed: Any) -> None:
        self.fixed = fixed
        self.made: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, url: str, **kw: Any) -> RegistryClient:
        self.made.append((url, dict(kw)))
        return fast_client(url, **{**kw, **self.fixed})


def one(name: str, updated: str = "2025-12-01T00:00:00Z") -> dict[str, Any]:
    return make_record(name, updated=updated)


def write_catalog(path: Path, *records: dict[str, Any]) -> Path:
    path.write_text(json.dumps([r["server"] for r in records]), encoding="utf-8")
    return path


# --- one registry ----------------------------------------------------------------------------


def test_a_first_sync_is_full_and_keeps_the_newest_change_time(
    start: Callable[..., Fixture],
) -> None:
    reg, url = start(one("io.a/x", "2025-11-02T00:00:00Z"), one("io.a/y", "2025-11-05T00:00:00Z"),
                     one("io.a/z", "2025-11-03T00:00:00Z"))  # fmt: skip
    cache = DiscoveryCache.memory()
    outcome = sync_source(cache, RegistrySource("a", "http", url), client_factory=fast_client)
    assert (outcome.registry, outcome.mode, outcome.records) == ("a", "full", 3)
    assert outcome.warnings == () and 0 <= outcome.seconds < 10
    assert cache.sync_state("a") is not None
    assert cache.sync_state("a")[1] == "2025-11-05T00:00:00Z"  # type: ignore[index]
    assert not any("updated_since" in r for r in reg.requests)


def test_a_later_sync_asks_for_what_changed_since_the_newest_seen(
    start: Callable[..., Fixture],
) -> None:
    reg, url = start(one("io.a/x", "2025-11-02T00:00:00Z"), one("io.a/y", "2025-11-05T00:00:00Z"))
    cache = DiscoveryCache.memory()
    source = RegistrySource("a", "http", url)
    sync_source(cache, source, client_factory=fast_client)
    reg.requests.clear()
    nothing = sync_source(cache, source, client_factory=fast_client)
    assert (nothing.mode, nothing.records) == ("incremental", 0)
    assert reg.requests and all("updated_since=2025-11-05T00" in r for r in reg.requests)
    assert cache.sync_state("a")[1] == "2025-11-05T00:00:00Z"  # type: ignore[index]  # kept
    reg.records.append(one("io.a/new", "2025-11-09T00:00:00Z"))
    reg.changed()
    changed = sync_source(cache, source, client_factory=fast_client)
    assert (changed.mode, changed.records) == ("incremental", 1)
    assert cache.sync_state("a")[1] == "2025-11-09T00:00:00Z"  # type: ignore[index]
    assert cache.count("a") == 3
    # full=True reads everything again, and counts every row.
    reg.requests.clear()
    again = sync_source(cache, source, full=True, client_factory=fast_client)
    assert (again.mode, again.records) == ("full", 3)
    assert not any("updated_since" in r for r in reg.requests)


def test_a_sync_hands_its_time_limits_to_the_client(start: Callable[..., Fixture]) -> None:
    _, url = start(one("io.a/x"))
    factory = Factory()
    deadline = time.monotonic() + 30
    sync_source(DiscoveryCache.memory(), RegistrySource("a", "http", url), timeout=4.5,
                deadline=deadline, client_factory=factory)  # fmt: skip
    assert factory.made == [(url, {"timeout": 4.5, "deadline": deadline})]


def test_a_file_registry_is_read_whole(tmp_path: Path) -> None:
    path = write_catalog(tmp_path / "team.json", one("io.team/a"), one("io.team/b"))
    cache = DiscoveryCache.memory()
    outcome = sync_source(cache, RegistrySource("team", "file", str(path)))
    assert (outcome.registry, outcome.mode, outcome.records) == ("team", "file", 2)
    write_catalog(path, one("io.team/a"))
    again = sync_source(cache, RegistrySource("team", "file", str(path)))
    assert (again.mode, again.records) == ("file", 1) and cache.count("team") == 1
    with pytest.raises(UsageError):
        sync_source(cache, RegistrySource("gone", "file", str(tmp_path / "gone.json")))


def test_a_sync_redirected_to_another_host_says_which_answered(
    start: Callable[..., Fixture],
) -> None:
    _, there = start(one("io.a/x"))

    class Moved(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", there + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()

    with serving_http(Moved) as served:
        front = served.replace("127.0.0.1", "localhost")
        cache = DiscoveryCache.memory()
        outcome = sync_source(cache, RegistrySource("m", "http", front), client_factory=fast_client)
        assert outcome.records == 1
        assert outcome.warnings == (
            f"registry 'm': {host_of(front)} redirected to another host, {host_of(there)}, "
            "which answered",
        )
        report = refresh(cache, [RegistrySource("m", "http", front)], force=True,
                         client_factory=fast_client)  # fmt: skip
        assert report.warnings == list(outcome.warnings)


# --- several at once -------------------------------------------------------------------------


def test_several_registries_one_result_each_in_the_order_given(
    start: Callable[..., Fixture], tmp_path: Path
) -> None:
    _, good = start(one("io.g/x"), one("io.g/y"))
    bad_reg, bad = start(one("io.b/x"), mode="500")
    team = RegistrySource("team", "file", str(write_catalog(tmp_path / "t.json", one("io.t/a"))))
    broken = RegistrySource("broken", "file", str(tmp_path / "missing.json"))
    sources = [RegistrySource("bad", "http", bad), team, RegistrySource("good", "http", good),
               broken, team]  # fmt: skip
    cache = DiscoveryCache.memory()
    factory = Factory(retries=0)
    results = sync_many(cache, sources, timeout=60, client_factory=factory)
    assert [(type(r), r.registry) for r in results] == [
        (SyncFailure, "bad"), (SyncOutcome, "team"), (SyncOutcome, "good"),
        (SyncFailure, "broken"),
    ]  # fmt: skip
    assert isinstance(results[0], SyncFailure) and isinstance(results[0].error, RegistryError)
    assert "HTTP 500" in results[0].error.message and 0 <= results[0].seconds < 30
    assert isinstance(results[3], SyncFailure) and isinstance(results[3].error, UsageError)
    assert results[1].records == 1 and results[2].records == 2  # type: ignore[union-attr]
    assert cache.count("good") == 2 and cache.count("team") == 1 and cache.count("bad") == 0
    # A registry that could not be read is remembered; an unreadable file is not (here).
    assert cache.last_failure("bad") is not None
    assert cache.last_failure("broken") is None and cache.last_failure("good") is None
    # Each request gets at most REQUEST_TIMEOUT, and all of them the one deadline.
    assert sorted(url for url, _ in factory.made) == sorted([bad, good])
    deadlines = {kw["deadline"] for _, kw in factory.made}
    assert len(deadlines) == 1 and {kw["timeout"] for _, kw in factory.made} == {REQUEST_TIMEOUT}
    assert 0 < deadlines.pop() - time.monotonic() <= 60
    assert bad_reg.requests


def test_a_short_sync_gives_each_request_no_more_than_the_whole(
    start: Callable[..., Fixture],
) -> None:
    _, url = start(one("io.a/x"))
    factory = Factory()
    began = time.monotonic()
    [result] = sync_many(DiscoveryCache.memory(), [RegistrySource("a", "http", url)], timeout=4,
                         client_factory=factory)  # fmt: skip
    assert isinstance(result, SyncOutcome)
    [(_, kw)] = factory.made
    assert kw["timeout"] == 4 and began + 4 <= kw["deadline"] <= time.monotonic() + 4


def test_a_registry_not_answering_in_time_is_given_up_with_a_hint(
    start: Callable[..., Fixture],
) -> None:
    _, url = start(one("io.a/x"), mode="hang")
    cache = DiscoveryCache.memory()
    [result] = sync_many(cache, [RegistrySource("slow", "http", url)], timeout=0.5,
                         client_factory=lambda u, **kw: RegistryClient(u, timeout=30))  # fmt: skip
    assert isinstance(result, SyncFailure) and isinstance(result.error, RegistryError)
    assert result.error.message.startswith("timed out: no complete answer within 0.5 s; gave up")
    assert result.error.hint == "'mcpctl registry sync slow --timeout 2m' gives it longer"
    assert result.seconds >= 0.5
    assert cache.last_failure("slow") is not None


def test_a_bug_in_a_client_is_not_taken_for_a_registry_failure(
    start: Callable[..., Fixture],
) -> None:
    _, url = start(one("io.a/x"))

    def broken(url: str, **kw: Any) -> RegistryClient:
        raise KeyError("a bug")

    with pytest.raises(KeyError, match="a bug"):
        sync_many(DiscoveryCache.memory(), [RegistrySource("a", "http", url)], timeout=5,
                  client_factory=broken)  # fmt: skip


def test_nothing_to_sync() -> None:
    assert sync_many(DiscoveryCache.memory(), [], timeout=1) == []


# --- the refresh before a command ------------------------------------------------------------


def test_offline_nothing_is_asked_and_a_registry_never_synced_is_said(
    start: Callable[..., Fixture], tmp_path: Path
) -> None:
    reg, url = start(one("io.a/x"))
    builtin_file = write_catalog(tmp_path / "builtin.json", one("io.builtin/a"))
    cache = DiscoveryCache.memory()
    sources = [RegistrySource("a", "http", url), RegistrySource("bi", "builtin", str(builtin_file))]
    report = refresh(cache, sources, offline=True, force=True, client_factory=fast_client)
    assert reg.requests == []
    assert report.warnings == ["registry 'a' has never been synced (offline)"]
    assert report.failed == report.unreachable == ["a"]
    # The built-in registry is a file shipped with mcpctl: read even offline.
    assert [s.registry for s in report.synced] == ["bi"] and cache.count("bi") == 1
    # Once synced, offline says nothing and asks nothing.
    refresh(cache, sources, client_factory=fast_client)
    reg.requests.clear()
    report = refresh(cache, sources, offline=True, force=True, client_factory=fast_client)
    assert report.warnings == report.failed == report.unreachable == []
    assert report.synced == [] and reg.requests == []


def test_only_stale_registries_are_synced_unless_forced(start: Callable[..., Fixture]) -> None:
    reg_a, url_a = start(one("io.a/x"))
    reg_b, url_b = start(one("io.b/x"))
    cache = DiscoveryCache.memory()
    a, b = RegistrySource("a", "http", url_a), RegistrySource("b", "http", url_b)
    report = refresh(cache, [b, a], client_factory=fast_client)
    assert [s.registry for s in report.synced] == ["b", "a"]  # in the order given
    assert report.warnings == report.failed == report.unreachable == []
    reg_a.requests.clear()
    reg_b.requests.clear()
    assert refresh(cache, [a, b], client_factory=fast_client).synced == []
    assert reg_a.requests == reg_b.requests == []
    assert [s.registry for s in refresh(cache, [a], ttl=0, client_factory=fast_client).synced] == [
        "a"
    ]
    assert reg_b.requests == []
    assert [s.registry for s in refresh(cache, [a, b], force=True,
                                        client_factory=fast_client).synced] == ["a", "b"]  # fmt: skip


def test_a_recent_failure_is_tried_again_when_forced(start: Callable[..., Fixture]) -> None:
    reg, url = start(one("io.a/x"))
    cache = DiscoveryCache.memory()
    cache.note_failure("a")
    source = RegistrySource("a", "http", url)
    report = refresh(cache, [source], client_factory=fast_client)
    assert reg.requests == [] and report.failed == ["a"]
    assert "no cached data" in report.warnings[0]
    report = refresh(cache, [source], force=True, client_factory=fast_client)
    assert [s.registry for s in report.synced] == ["a"] and report.warnings == []


def test_an_unreadable_file_registry_is_warned_about_and_not_read_again_at_once(
    tmp_path: Path,
) -> None:
    path = write_catalog(tmp_path / "team.json", one("io.team/a"))
    cache = DiscoveryCache.memory()
    team = RegistrySource("team", "file", str(path))
    assert refresh(cache, [team], force=True).warnings == []
    path.write_text("not json", encoding="utf-8")
    report = refresh(cache, [team], force=True)
    [warning] = report.warnings
    assert warning.startswith("registry 'team': ") and warning.endswith("; using cached data")
    assert report.unreachable == ["team"] and report.failed == []
    assert cache.last_failure("team") is not None
    report = refresh(cache, [team], ttl=0)
    assert "was unreachable" in report.warnings[0] and report.synced == []


def test_a_failing_registry_without_a_cache_is_failed(start: Callable[..., Fixture]) -> None:
    _, bad = start(one("io.b/x"), mode="500")
    _, good = start(one("io.g/x"))
    cache = DiscoveryCache.memory()
    sources = [RegistrySource("bad", "http", bad), RegistrySource("good", "http", good)]
    report = refresh(cache, sources, client_factory=Factory(retries=0))
    assert [s.registry for s in report.synced] == ["good"]
    [warning] = report.warnings
    assert warning.startswith(f"registry 'bad': {bad}/v0.1/servers") and "HTTP 500" in warning
    assert not warning.endswith("using cached data")
    assert report.failed == report.unreachable == ["bad"]


def test_a_deleted_record_stays_marked_after_an_incremental_refresh(
    start: Callable[..., Fixture],
) -> None:
    reg, url = start(one("io.a/x", "2025-11-01T00:00:00Z"), one("io.a/y", "2025-11-01T00:00:00Z"))
    cache = DiscoveryCache.memory()
    source = RegistrySource("a", "http", url)
    refresh(cache, [source], client_factory=fast_client)
    reg.records[0]["_meta"][OFFICIAL].update(status="deleted", updatedAt="2025-11-02T00:00:00Z")
    reg.changed()
    [outcome] = refresh(cache, [source], ttl=0, client_factory=fast_client).synced
    assert (outcome.mode, outcome.records) == ("incremental", 1)
    assert [h.name for h in cache.search("io.a")] == ["io.a/y"]


def test_a_fresh_or_recently_failed_registry_does_not_stop_the_others(
    start: Callable[..., Fixture],
) -> None:
    reg_a, url_a = start(one("io.a/x"))
    reg_b, url_b = start(one("io.b/x"))
    reg_c, url_c = start(one("io.c/x"))
    a, b, c = (RegistrySource(n, "http", u) for n, u in (("a", url_a), ("b", url_b), ("c", url_c)))
    cache = DiscoveryCache.memory()
    refresh(cache, [a], client_factory=fast_client)
    cache.note_failure("b")
    # a is fresh, b failed a moment ago (nothing cached), c was never synced.
    report = refresh(cache, [a, b, c], client_factory=fast_client)
    assert [s.registry for s in report.synced] == ["c"] and reg_c.requests
    assert report.warnings == [
        "registry 'b' was unreachable 0 s ago; no cached data "
        "('mcpctl registry sync b' tries again now)"
    ]
    assert report.unreachable == report.failed == ["b"] and reg_b.requests == []
    refresh(cache, [b], force=True, client_factory=fast_client)
    cache.note_failure("b")
    reg_a.requests.clear()
    reg_b.requests.clear()
    # Stale all, b failed a moment ago (its cache kept): the others are synced.
    report = refresh(cache, [b, a], ttl=0, client_factory=fast_client)
    assert [s.registry for s in report.synced] == ["a"]
    assert report.warnings == [
        "registry 'b' was unreachable 0 s ago; using cached data "
        "('mcpctl registry sync b' tries again now)"
    ]
    assert report.unreachable == ["b"] and report.failed == []
    assert reg_b.requests == [] and reg_a.requests


def test_a_sync_many_with_full_reads_everything_again(start: Callable[..., Fixture]) -> None:
    reg, url = start(one("io.a/x"), one("io.a/y"))
    cache = DiscoveryCache.memory()
    source = RegistrySource("a", "http", url)
    [first] = sync_many(cache, [source], timeout=10, client_factory=fast_client)
    [again] = sync_many(cache, [source], timeout=10, client_factory=fast_client)
    reg.requests.clear()
    [full] = sync_many(cache, [source], full=True, timeout=10, client_factory=fast_client)
    assert [r.mode for r in (first, again, full)] == ["full", "incremental", "full"]  # type: ignore[union-attr]
    assert full.records == 2 and not any("updated_since" in r for r in reg.requests)  # type: ignore[union-attr]


def test_refresh_hands_its_time_and_its_client_to_the_sync(start: Callable[..., Fixture]) -> None:
    _, url = start(one("io.a/x"))
    factory = Factory()
    began = time.monotonic()
    report = refresh(DiscoveryCache.memory(), [RegistrySource("a", "http", url)], timeout=3,
                     client_factory=factory)  # fmt: skip
    assert [s.registry for s in report.synced] == ["a"]
    [(_, kw)] = factory.made
    assert kw["timeout"] == 3 and began + 3 <= kw["deadline"] <= time.monotonic() + 3


def test_a_registry_that_fails_with_nothing_cached_says_only_why(
    start: Callable[..., Fixture],
) -> None:
    _, bad = start(one("io.b/x"), mode="500")
    report = refresh(DiscoveryCache.memory(), [RegistrySource("bad", "http", bad)],
                     client_factory=Factory(retries=0))  # fmt: skip
    [warning] = report.warnings
    assert re.fullmatch(rf"registry 'bad': {bad}/v0.1/servers: HTTP 500, still failing after "
                        r"1 attempts \(\d+\.\d s\)", warning), warning  # fmt: skip


def test_a_sync_given_up_on_leaves_no_thread_that_keeps_mcpctl_running(
    start: Callable[..., Fixture],
) -> None:
    _, url = start(one("io.a/x"), mode="hang")
    before = set(threading.enumerate())
    began = time.monotonic()
    [result] = sync_many(DiscoveryCache.memory(), [RegistrySource("a", "http", url)],
                         timeout=0.5,
                         client_factory=lambda u, **kw: RegistryClient(u, timeout=30))  # fmt: skip
    assert isinstance(result, SyncFailure) and 0.5 <= result.seconds < 10
    assert time.monotonic() - began < 10
    left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert left and all(t.daemon for t in left)  # still waiting, and not holding the exit


def test_a_registry_with_nothing_yet_syncs_and_is_read_whole_again_later(
    start: Callable[..., Fixture],
) -> None:
    """A first sync that brings nothing is no failure, and leaves no time to ask from: the
    next sync reads everything again, and then asks only for what changed."""
    reg, url = start()
    cache = DiscoveryCache.memory()
    source = RegistrySource("a", "http", url)
    outcome = sync_source(cache, source, client_factory=fast_client)
    assert (outcome.mode, outcome.records) == ("full", 0)
    assert cache.sync_state("a") is not None and cache.sync_state("a")[1] == ""  # type: ignore[index]
    reg.records.append(one("io.a/x", "2025-11-02T00:00:00Z"))
    reg.changed()
    reg.requests.clear()
    later = sync_source(cache, source, client_factory=fast_client)
    assert (later.mode, later.records) == ("full", 1)
    assert not any("updated_since" in r for r in reg.requests)
