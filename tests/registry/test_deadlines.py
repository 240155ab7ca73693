"""Nothing hangs: slow, silent and throttling registries against the client, the concurrent
sync and the refresh before a command (a local fake registry on 127.0.0.1)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from mcpctl.registry import DiscoveryCache, RegistryClient, RegistryError
from mcpctl.registry.client import retry_after_seconds
from mcpctl.registry.install import plan_add
from mcpctl.registry.sources import RegistrySource
from mcpctl.registry.syncing import SyncFailure, SyncOutcome, refresh, sync_many, sync_source
from tests.registry.server import Registry, make_record, running

Fixture = tuple[Registry, str]
SLACK = 3.0  # seconds allowed past a deadline on a loaded machine


def gave_up_after(message: str) -> float:
    """The time a message says was waited."""
    found = re.search(r"gave up after (\d+\.\d) s", message)
    assert found, message
    return float(found.group(1))


@pytest.fixture
def start() -> Iterator[Callable[..., tuple[Registry, str]]]:
    """Starts small registries (``start("a", mode=..., delay=...)``), stopped at the end."""
    with ExitStack() as stack:

        def make(name: str, **attrs: Any) -> tuple[Registry, str]:
            reg = Registry([make_record(f"io.{name}/server", title=f"{name} server")])
            url = stack.enter_context(running(reg))
            for key, value in attrs.items():
                setattr(reg, key, value)
            return reg, url

        yield make


# --- one request: the whole of it within its time ---------------------------------------


@pytest.mark.parametrize("mode", ["drip", "drip_headers"])
def test_a_registry_dripping_bytes_is_given_up_at_the_deadline(
    start: Callable[..., Fixture], mode: str
) -> None:
    # One byte every 0.5 s: every read is quick, the response never ends (about 20 s).
    reg, url = start("drip", mode=mode)
    began = time.monotonic()
    with pytest.raises(RegistryError) as caught, RegistryClient(url, timeout=2) as client:
        client.get_json("/servers")
    waited = time.monotonic() - began
    assert 2 <= waited < 2 + SLACK
    said = gave_up_after(caught.value.message)
    assert 1.9 <= said <= waited + 0.1, caught.value.message
    assert "timed out" in caught.value.message and reg.answered == 0


def test_a_hanging_registry_costs_its_timeout_once_and_says_so(
    start: Callable[..., Fixture],
) -> None:
    reg, url = start("hang", mode="hang")
    began = time.monotonic()
    with pytest.raises(RegistryError) as caught, RegistryClient(url, timeout=1.5) as client:
        client.get_json("/servers")
    waited = time.monotonic() - began
    assert 1.5 <= waited < 1.5 + SLACK
    assert abs(gave_up_after(caught.value.message) - waited) < 0.5, caught.value.message
    assert len(reg.requests) == 1  # no retry that cannot finish in time


def test_retry_after_longer_than_the_time_left_gives_up_at_once(
    start: Callable[..., Fixture],
) -> None:
    reg, url = start("throttled", mode="retry_after", retry_after="3600")
    slept: list[float] = []
    with pytest.raises(RegistryError) as caught:
        RegistryClient(url, timeout=10, sleep=slept.append).get_json("/servers")
    assert slept == [] and len(reg.requests) == 1
    message = caught.value.message
    assert "HTTP 429" in message and "3600 s" in message and gave_up_after(message) < 1, message
    # With the real clock too: nothing near an hour, nor the 10 s of the limit.
    began = time.monotonic()
    with pytest.raises(RegistryError, match="3600 s"):
        RegistryClient(url, timeout=10).get_json("/servers")
    assert time.monotonic() - began < SLACK


def test_retry_after_that_fits_is_waited_and_retried(registry: Fixture) -> None:
    reg, url = registry
    reg.fail_first, reg.first_retry_after = 1, "1.5"
    slept: list[float] = []
    page = RegistryClient(url, timeout=5, sleep=slept.append).get_json("/servers")
    assert slept == [1.5] and len(page["servers"]) == 30
    reg.fail_first = 1  # the same wait does not fit in 1 s
    with pytest.raises(RegistryError, match=r"retry in 1\.5 s, more than the [01]\.\d s left"):
        RegistryClient(url, timeout=1, sleep=slept.append).get_json("/servers")
    assert slept == [1.5]


def test_retry_after_as_an_http_date() -> None:
    now = 1_445_412_480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds(" 12 ") == 12.0 and retry_after_seconds("-5") == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_a_client_deadline_bounds_every_page(registry: Fixture) -> None:
    # 255 records are 3 pages of 100 at 0.8 s each; the deadline leaves time for 2 at most.
    reg, url = registry
    reg.delay = 0.8
    began = time.monotonic()
    client = RegistryClient(url, timeout=10, deadline=time.monotonic() + 1.2)
    with pytest.raises(RegistryError) as caught:
        list(client.iter_records())
    waited = time.monotonic() - began
    assert 1.2 <= waited < 1.2 + SLACK
    assert reg.answered < 3
    # The time said is the time spent on the registry, the pages read included.
    assert abs(gave_up_after(caught.value.message) - waited) < 0.5, caught.value.message


# --- several registries at once ---------------------------------------------------------


def test_registries_sync_at_the_same_time(start: Callable[..., Fixture]) -> None:
    # Each answers after 2 s, and only once the other's request has arrived too (a barrier
    # of two): one after the other, the first would wait 5 s for the barrier, then 2 s.
    barrier = threading.Barrier(2)
    (a, url_a), (b, url_b) = (start(n, delay=2.0, barrier=barrier) for n in ("a", "b"))
    sources = [RegistrySource("a", "http", url_a), RegistrySource("b", "http", url_b)]
    cache = DiscoveryCache.memory()
    began = time.monotonic()
    results = sync_many(cache, sources, timeout=10)
    assert time.monotonic() - began < 4.0  # 2 s, not 2 + 2 (nor 5 + 2)
    assert not barrier.broken
    assert [type(r) for r in results] == [SyncOutcome, SyncOutcome]
    assert [r.registry for r in results] == ["a", "b"]
    assert cache.count("a") == cache.count("b") == 1 and a.answered == b.answered == 1


def test_a_registry_named_twice_is_synced_once(start: Callable[..., Fixture]) -> None:
    reg, url = start("once")
    source = RegistrySource("once", "http", url)
    results = sync_many(DiscoveryCache.memory(), [source, source], timeout=5)
    assert len(results) == 1 and len(reg.requests) == 1


def ignores_deadlines(url: str, **kw: Any) -> RegistryClient:
    """A client that waits 30 s whatever it is told: only the caller's deadline is left."""
    return RegistryClient(url, timeout=30)


def test_the_deadline_holds_even_when_a_client_does_not(start: Callable[..., Fixture]) -> None:
    _, url = start("stuck", mode="hang")
    cache = DiscoveryCache.memory()
    began = time.monotonic()
    [result] = sync_many(cache, [RegistrySource("stuck", "http", url)], timeout=1,
                         client_factory=ignores_deadlines)  # fmt: skip
    waited = time.monotonic() - began
    assert isinstance(result, SyncFailure) and 1 <= waited < 1 + SLACK
    assert "no complete answer within 1 s" in result.error.message
    assert abs(gave_up_after(result.error.message) - waited) < 0.5
    assert cache.last_failure("stuck") is not None  # remembered: not waited for again soon


def test_refresh_answers_within_its_deadline_and_does_not_wait_again(
    start: Callable[..., Fixture],
) -> None:
    fast_reg, fast_url = start("fast")
    slow_reg, slow_url = start("slow")
    fast = RegistrySource("fast", "http", fast_url)
    slow = RegistrySource("slow", "http", slow_url)
    cache = DiscoveryCache.memory()
    assert refresh(cache, [fast, slow], force=True, timeout=5).warnings == []
    slow_reg.mode = "hang"
    began = time.monotonic()
    report = refresh(cache, [fast, slow], force=True, timeout=2)
    waited = time.monotonic() - began
    assert 2 <= waited < 2 + SLACK
    assert [s.registry for s in report.synced] == ["fast"] and fast_reg.answered == 2
    assert report.unreachable == ["slow"] and report.failed == []
    [warning] = report.warnings
    assert warning.startswith("registry 'slow': ") and warning.endswith("; using cached data")
    assert waited - 1 <= gave_up_after(warning) <= waited
    assert cache.count("slow") == 1  # its cache is kept
    # The next command, a moment later, does not wait for it again.
    asked = len(slow_reg.requests)
    began = time.monotonic()
    report = refresh(cache, [fast, slow], ttl=0, timeout=2)
    assert time.monotonic() - began < 1.5
    assert len(slow_reg.requests) == asked
    [warning] = report.warnings
    assert re.fullmatch(r"registry 'slow' was unreachable [0-2] s ago; using cached data "
                        r"\('mcpctl registry sync slow' tries again now\)", warning), warning  # fmt: skip


def test_refresh_without_any_cache_of_the_slow_registry(start: Callable[..., Fixture]) -> None:
    _, fast_url = start("fast")
    _, slow_url = start("slow", mode="drip")
    cache = DiscoveryCache.memory()
    sources = [RegistrySource("slow", "http", slow_url), RegistrySource("fast", "http", fast_url)]
    report = refresh(cache, sources, timeout=1.5)
    assert report.failed == report.unreachable == ["slow"]
    assert [s.registry for s in report.synced] == ["fast"]
    assert cache.search("server")[0].name == "io.fast/server"


def test_plan_add_refreshes_within_its_timeout(
    start: Callable[..., Fixture], tmp_path: Any
) -> None:
    _, url = start("hang", mode="hang")
    cache = DiscoveryCache.memory()
    catalog = tmp_path / "team.json"
    catalog.write_text('[{"name": "io.team/tool", "version": "1.0.0", "packages": '
                       '[{"registryType": "npm", "identifier": "@team/tool", "version": "1.0.0"}]}]')  # fmt: skip
    sources = [RegistrySource("hang", "http", url), RegistrySource("team", "file", str(catalog))]
    began = time.monotonic()
    plan = plan_add(cache, sources, "io.team/tool", {}, refresh_timeout=1.0)
    assert time.monotonic() - began < 1 + SLACK
    assert plan.registry == "team" and plan.entry.args == ("-y", "@team/tool@1.0.0")
    assert len([w for w in plan.warnings if "'hang'" in w]) == 1


def test_sync_source_honours_a_deadline(start: Callable[..., Fixture]) -> None:
    _, url = start("drip", mode="drip")
    began = time.monotonic()
    with pytest.raises(RegistryError, match="gave up after"):
        sync_source(DiscoveryCache.memory(), RegistrySource("drip", "http", url),
                    deadline=time.monotonic() + 1)  # fmt: skip
    assert time.monotonic() - began < 1 + SLACK
