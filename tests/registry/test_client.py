"""The v0.1 client against a real local HTTP registry, syncing, and refreshing before use."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcpctl.registry import DiscoveryCache, RegistryClient, RegistryError
from mcpctl.registry.sources import RETRY_AFTER_FAILURE, RegistrySource, age
from mcpctl.registry.syncing import refresh, sync_source
from tests.registry.server import OFFICIAL, Registry, fast_client, make_record

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
