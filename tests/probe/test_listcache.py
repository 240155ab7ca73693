"""Tool listings kept as long as the server says (ttlMs), and served without starting it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.probe.health import probe_all
from mcpctl.probe.listcache import ListingCache, cached_or_probed
from tests.conftest import SERVERS, write_config

PY = sys.executable


def modern(log: Path, ttl_ms: int, *extra: str) -> ServerEntry:
    env = {"MODERN_SERVER_LOG": str(log), "MODERN_SERVER_TTL_MS": str(ttl_ms)}
    return ServerEntry(command=PY, args=(str(SERVERS / "modern.py"), *extra), env=env)


def methods(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def listed(entries: dict[str, ServerEntry], cache: ListingCache) -> list:
    chosen = [(name, entry, "external") for name, entry in entries.items()]
    return anyio.run(lambda: cached_or_probed(chosen, cache, timeout=30))


def test_a_fresh_listing_is_served_without_starting_the_server(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    cache = ListingCache.in_dir(tmp_path)
    first = listed({"m": modern(log, 60_000)}, cache)
    assert first[0].healthy and first[0].from_cache is None
    assert first[0].listing_ttl_ms == 60_000 and first[0].listing_scope == "public"
    assert methods(log).count("tools/list") == 1
    again = listed({"m": modern(log, 60_000)}, ListingCache.in_dir(tmp_path))
    assert again[0].from_cache is not None and again[0].from_cache >= 0
    assert {t.name for t in again[0].tools} == {t.name for t in first[0].tools}
    assert again[0].to_dict()["listing_cache"]["age_s"] is not None
    assert methods(log).count("tools/list") == 1  # not started again


def test_a_listing_without_a_lifetime_is_stale_at_once(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    cache = ListingCache.in_dir(tmp_path)
    listed({"m": modern(log, 0)}, cache)
    again = listed({"m": modern(log, 0)}, ListingCache.in_dir(tmp_path))
    assert again[0].from_cache is None
    assert methods(log).count("tools/list") == 2


def test_a_handshake_server_gives_no_caching_hints(tmp_path: Path) -> None:
    raw = ServerEntry(command=PY, args=(str(SERVERS / "raw.py"),))
    results = anyio.run(lambda: probe_all({"r": raw}, timeout=30))
    assert results[0].healthy and results[0].listing_ttl_ms is None


def test_a_failed_probe_falls_back_to_the_stale_listing_with_its_age(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    entry = modern(log, 0)
    cache = ListingCache.in_dir(tmp_path)
    listed({"m": entry}, cache)
    # The same configuration, now failing: its command disappears.
    script = tmp_path / "server.py"
    script.write_text((SERVERS / "modern.py").read_text())
    moving = ServerEntry(command=PY, args=(str(script),), env=dict(entry.env))
    # A lifetime of 0 ms: kept, but stale at once (a lifetime of 1 ms may not have passed
    # by the next line on a fast machine).
    listed({"m": moving}, cache)
    script.unlink()
    results = listed({"m": moving}, ListingCache.in_dir(tmp_path))
    assert results[0].healthy and results[0].from_cache is not None, results[0]
    assert any("listed" in w and "ago" in w for w in results[0].warnings)


def test_another_configuration_does_not_see_the_listing(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    cache = ListingCache.in_dir(tmp_path)
    listed({"m": modern(log, 60_000)}, cache)
    other = listed({"m": modern(log, 60_000, "modern")}, ListingCache.in_dir(tmp_path))
    assert other[0].from_cache is None


@pytest.mark.parametrize("kind", ["fifo", "directory", "huge", "garbage", "list"])
def test_a_hostile_cache_file_reads_as_empty(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "tool-listings.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "huge":
        path.write_bytes(b" " * (17 * 1024 * 1024))
    elif kind == "garbage":
        path.write_bytes(b"\xff{not json")
    else:
        path.write_text("[1, 2]")
    # O_NONBLOCK: a FIFO does not hang the read (pytest's timeout would say so).
    assert ListingCache(path).get(modern(tmp_path / "m.log", 1)) is None


def test_tools_cached_on_the_command_line(cli, config_path: Path, tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    write_config(config_path, {"m": modern(log, 60_000).to_data()})
    first = cli("tools", "--cached", "--json")
    assert first.exit_code == 0, first.stderr
    again = cli("tools", "--cached", "--json")
    assert again.exit_code == 0
    servers = again.json["data"]["servers"]
    assert servers[0]["cached_age_s"] is not None
    assert {t["tool"] for t in again.json["data"]["tools"]} == {"echo", "add", "ask"}
    assert methods(log).count("tools/list") == 1
    # The budget gate judges a cached listing without starting the server.
    cost = again.json["data"]["tokens"]["total"]
    assert cost > 0 and servers[0]["tokens"]["total"] == cost
    assert cli("tools", "--cached", "--budget", str(cost)).exit_code == 0
    over = cli("tools", "--cached", "--budget", str(cost - 1), "--json")
    assert over.exit_code == 1 and over.json["errors"][0]["code"] == "over_budget"
    assert methods(log).count("tools/list") == 1


def test_all_fresh_serves_every_listing_or_none(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    cache = ListingCache.in_dir(tmp_path)
    fresh, stale = modern(log, 3_600_000), modern(log, 0, "modern")
    listed({"f": fresh, "s": stale}, cache)
    started = methods(log)
    again = ListingCache.in_dir(tmp_path)
    served = again.all_fresh([("f", fresh, "external")])
    assert served is not None and served[0].name == "f" and served[0].from_cache is not None
    assert [t.name for t in served[0].tools] == ["echo", "add", "ask"]
    # One stale listing among them: the caller must probe (None), and nothing started here.
    assert again.all_fresh([("f", fresh, "external"), ("s", stale, "external")]) is None
    assert methods(log) == started


# --- what mutation testing found unpinned (docs/testing.md) ------------------------------
# Listings put and read back without a server (ProbeResult made here).

import json  # noqa: E402
import time  # noqa: E402

from mcpctl.probe.childenv import ProbeError  # noqa: E402
from mcpctl.probe.healthstatus import ProbeResult  # noqa: E402
from mcpctl.probe.listcache import (  # noqa: E402
    LISTINGS_FILENAME,
    MAX_SERVERS,
    MAX_TOOLS,
    CachedListing,
)
from mcpctl.probe.toolinfo import ToolInfo  # noqa: E402

ENTRY = ServerEntry(command="some-server", args=("--flag",))
BUILD = ToolInfo("build", "Builds.", {"type": "object"}, "Build",
                 {"execution": {"taskSupport": "optional"}})  # fmt: skip


def result(name: str = "s", tools: list[ToolInfo] | None = None, **fields: object) -> ProbeResult:
    return ProbeResult(name, available=True, healthy=True,  # type: ignore[arg-type]
                       tools=[BUILD] if tools is None else tools,
                       protocol_version="2026-07-28", **fields)  # fmt: skip


def test_a_cached_listings_age_and_freshness() -> None:
    listing = CachedListing([], listed_at=1000.0, ttl_ms=5000, scope="public")
    assert listing.age(1003.0) == 3.0 and listing.age(900.0) == 0.0
    assert listing.fresh(1004.999) and not listing.fresh(1005.0)
    assert not CachedListing([], 1000.0).fresh(1000.0)  # no lifetime: stale at once
    assert listing.to_dict(1002.26) == {"age_s": 2.3, "ttl_ms": 5000, "scope": "public",
                                        "fresh": True}  # fmt: skip
    now = CachedListing([], time.time() - 10, ttl_ms=60_000)
    assert 10 <= now.age() < 70 and now.fresh() and now.to_dict()["fresh"]


def test_a_listing_put_is_read_back_whole(tmp_path: Path) -> None:
    cache = ListingCache.in_dir(tmp_path)
    before = time.time()
    cache.put_results([(ENTRY, result(listing_ttl_ms=60_000, listing_scope="private"))])
    for reader in (cache, ListingCache.in_dir(tmp_path)):
        found = reader.get(ENTRY)
        assert found is not None
        assert before <= found.listed_at <= time.time()
        assert (found.ttl_ms, found.scope, found.protocol_version) == (
            60_000, "private", "2026-07-28")  # fmt: skip
        (tool,) = found.tools
        assert tool == BUILD and tool.task_support == "optional"
    assert (tmp_path / LISTINGS_FILENAME).exists()
    assert ListingCache.in_dir(tmp_path).get(ServerEntry(command="other")) is None


def test_failed_or_cached_results_are_not_kept(tmp_path: Path) -> None:
    cache = ListingCache.in_dir(tmp_path)
    failed = result(error=ProbeError("timeout", "no answer"))
    cache.put_results([(ENTRY, failed), (ServerEntry(command="b"), result(from_cache=1.0))])
    assert not (tmp_path / LISTINGS_FILENAME).exists()
    assert cache.get(ENTRY) is None


def test_at_most_max_tools_per_server_and_max_servers_are_kept(tmp_path: Path) -> None:
    many = [ToolInfo(f"t{i}", "", {}) for i in range(MAX_TOOLS + 5)]
    cache = ListingCache.in_dir(tmp_path)
    cache.put_results([(ENTRY, result(tools=many))])
    found = ListingCache.in_dir(tmp_path).get(ENTRY)
    assert found is not None and len(found.tools) == MAX_TOOLS
    entries = [ServerEntry(command="srv", args=(str(i),)) for i in range(MAX_SERVERS + 3)]
    cache.put_results([(e, result()) for e in entries])
    fresh = ListingCache.in_dir(tmp_path)
    assert [fresh.get(e) is None for e in entries[:4]] == [True, True, True, False]
    assert cache.get(entries[2]) is None and cache.get(entries[-1]) is not None


def test_put_keeps_what_another_process_kept_meanwhile(tmp_path: Path) -> None:
    first, second = ListingCache.in_dir(tmp_path), ListingCache.in_dir(tmp_path)
    assert first.get(ENTRY) is None and second.get(ENTRY) is None
    other = ServerEntry(command="other")
    first.put_results([(ENTRY, result())])
    second.put_results([(other, result())])
    assert second.get(ENTRY) is not None and second.get(other) is not None


def test_put_where_nothing_can_be_written_keeps_the_listing_in_memory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    cache = ListingCache.in_dir(tmp_path / "file" / "cache")
    cache.put_results([(ENTRY, result(listing_ttl_ms=1000))])
    found = cache.get(ENTRY)
    assert found is not None and found.ttl_ms == 1000


def plant(tmp_path: Path, record: object) -> ListingCache:
    from mcpctl.probe.eras import era_key

    path = tmp_path / LISTINGS_FILENAME
    path.write_text(json.dumps({"format": 1, "listings": {era_key(ENTRY): record}}))
    return ListingCache(path)


@pytest.mark.parametrize(
    "record",
    [
        {"listed_at": "yesterday", "tools": []},
        {"listed_at": 1.0, "tools": {"a": {}}},
        {"tools": []},
        {"listed_at": 1.0},
        ["listed_at", 1.0],
    ],
)
def test_a_record_that_makes_no_sense_is_no_listing(tmp_path: Path, record: object) -> None:
    assert plant(tmp_path, record).get(ENTRY) is None


def test_what_a_record_holds_is_read_field_by_field(tmp_path: Path) -> None:
    tools = [
        {"name": "ok", "description": "d", "input_schema": {"type": "object"}, "title": "T",
         "task_support": "required"},
        {"name": "bare"},
        {"name": "odd", "description": 5, "input_schema": [1], "title": 7, "task_support": 1},
        {"description": "no name"},
        {"name": 3},
        "not a tool",
    ]  # fmt: skip
    found = plant(tmp_path, {"listed_at": 7, "tools": tools, "ttl_ms": 1000, "scope": "public",
                             "protocol_version": "2025-11-25"}).get(ENTRY)  # fmt: skip
    assert found is not None
    assert found.listed_at == 7.0 and isinstance(found.listed_at, float)
    assert (found.ttl_ms, found.scope, found.protocol_version) == (1000, "public", "2025-11-25")
    assert [t.name for t in found.tools] == ["ok", "bare", "odd"]
    ok, bare, odd = found.tools
    assert (ok.description, ok.input_schema, ok.title, ok.task_support) == (
        "d", {"type": "object"}, "T", "required")  # fmt: skip
    assert ok.raw == {"execution": {"taskSupport": "required"}}
    assert (bare.description, bare.input_schema, bare.title, bare.raw) == ("", {}, None, {})
    assert (odd.description, odd.input_schema, odd.title, odd.raw) == ("5", {}, None, {})


@pytest.mark.parametrize(
    ("fields", "ttl", "scope", "version"),
    [
        ({"ttl_ms": -1, "scope": "shared", "protocol_version": 5}, None, None, None),
        ({"ttl_ms": True, "scope": "private"}, None, "private", None),
        ({"ttl_ms": 1.5}, None, None, None),
        ({"ttl_ms": 0}, 0, None, None),
    ],
)
def test_bogus_caching_hints_are_none(
    tmp_path: Path, fields: dict[str, object], ttl: object, scope: object, version: object
) -> None:
    found = plant(tmp_path, {"listed_at": 1.0, "tools": [], **fields}).get(ENTRY)
    assert found is not None and (found.ttl_ms, found.scope, found.protocol_version) == (
        ttl, scope, version)  # fmt: skip


def test_only_max_tools_of_a_record_are_read(tmp_path: Path) -> None:
    tools = [{"name": f"t{i}"} for i in range(MAX_TOOLS + 1)]
    found = plant(tmp_path, {"listed_at": 1.0, "tools": tools}).get(ENTRY)
    assert found is not None and len(found.tools) == MAX_TOOLS


def test_a_cached_result_says_what_was_listed(tmp_path: Path) -> None:
    remote = ServerEntry(url="https://mcp.example.com/mcp")
    cache = ListingCache.in_dir(tmp_path)
    cache.put_results([(remote, result(listing_ttl_ms=3_600_000, listing_scope="public"))])
    (served,) = cache.all_fresh([("gh", remote, "internal")]) or []
    assert (served.name, served.type, served.transport) == ("gh", "internal", "streamable-http")
    assert served.available and served.healthy and served.error is None
    assert (served.protocol_version, served.tool_count, served.tools) == ("2026-07-28", 1, [BUILD])
    assert (served.listing_ttl_ms, served.listing_scope) == (3_600_000, "public")
    assert served.from_cache is not None and 0 <= served.from_cache < 60
    assert cache.all_fresh([]) == []


def aged(tmp_path: Path, seconds: float) -> ListingCache:
    return plant(tmp_path, {"listed_at": time.time() - seconds, "tools": [{"name": "old"}]})


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(30, "30 s ago"), (89, "89 s ago"), (95, "2 min ago"), (3000, "50 min ago"),
     (5500, "1.5 h ago"), (36 * 3600 - 200, "35.9 h ago"), (36 * 3600 + 60, "1.5 days ago"),
     (10 * 86400, "10.0 days ago")],
)  # fmt: skip
def test_a_failed_probe_falls_back_to_a_stale_listing_saying_how_old(
    tmp_path: Path, seconds: float, said: str
) -> None:
    cache = aged(tmp_path, seconds)
    gone = ServerEntry(command="mcpctl-no-such-program")

    async def served() -> list[ProbeResult]:
        with anyio.fail_after(30):
            return await cached_or_probed(
                [("gone", gone, "external"), ("entry", ENTRY, "external")], cache, timeout=10
            )

    first, second = anyio.run(served)
    assert first.name == "gone" and first.error is not None  # nothing cached: the failure
    assert second.name == "entry" and second.from_cache is not None
    assert [t.name for t in second.tools] == ["old"]
    assert second.warnings == [
        f"the probe failed (command_not_found: command 'some-server' not found on PATH); "
        f"these tools were listed {said}"
    ]


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(89.4, "89 s ago"), (90, "2 min ago"), (90.5, "2 min ago"), (5399, "90 min ago"),
     (5400, "1.5 h ago"), (5430, "1.5 h ago"), (126209, "35.1 h ago"),
     (129600, "1.5 days ago"), (129610, "1.5 days ago"), (86405184, "1000.1 days ago")],
)  # fmt: skip
def test_how_old_a_listing_is_in_words(seconds: float, said: str) -> None:
    from mcpctl.probe.listcache import _ago

    assert _ago(seconds) == said


def test_fresh_listings_are_served_in_order_and_the_rest_probed(tmp_path: Path) -> None:
    cache = ListingCache.in_dir(tmp_path)
    cache.put_results([(ENTRY, result(listing_ttl_ms=3_600_000))])
    gone = ServerEntry(command="mcpctl-no-such-program")

    async def served() -> list[ProbeResult]:
        with anyio.fail_after(30):
            chosen = [("a", ENTRY, "internal"), ("gone", gone, "external")]
            return await cached_or_probed(chosen, cache, timeout=10)  # type: ignore[arg-type]

    first, second = anyio.run(served)
    assert (first.name, first.type, first.from_cache is not None) == ("a", "internal", True)
    assert second.name == "gone" and second.error is not None


def test_a_failed_result_before_others_does_not_stop_the_rest(tmp_path: Path) -> None:
    cache = ListingCache.in_dir(tmp_path)
    failed = result(error=ProbeError("timeout", "no answer"))
    cache.put_results([(ServerEntry(command="b"), failed), (ENTRY, result())])
    assert ListingCache.in_dir(tmp_path).get(ENTRY) is not None
    tools = [{"name": 3}, {"name": "kept"}]
    found = plant(tmp_path, {"listed_at": 1.0, "tools": tools}).get(ENTRY)
    assert found is not None and [t.name for t in found.tools] == ["kept"]


def test_a_stale_listing_kept_keeps_the_servers_kind(tmp_path: Path) -> None:
    cache = aged(tmp_path, 100)

    async def served() -> list[ProbeResult]:
        with anyio.fail_after(30):
            return await cached_or_probed([("e", ENTRY, "internal")], cache, timeout=10)

    (kept,) = anyio.run(served)
    assert kept.from_cache is not None and kept.type == "internal"


def test_the_probes_options_reach_the_probes(tmp_path: Path) -> None:
    cache = ListingCache.in_dir(tmp_path)
    gone = ServerEntry(command="mcpctl-no-such-program")
    told: list[str] = []

    async def served() -> list[ProbeResult]:
        with anyio.fail_after(30):
            chosen = [("gone", gone, "external")]
            return await cached_or_probed(chosen, cache, on_result=lambda r: told.append(r.name))  # type: ignore[arg-type]

    (only,) = anyio.run(served)
    assert only.error is not None and told == ["gone"]


def test_a_listing_put_again_is_the_newest_when_servers_are_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.probe import listcache

    monkeypatch.setattr(listcache, "MAX_SERVERS", 2)
    a, b, c = (ServerEntry(command="srv", args=(n,)) for n in "abc")
    cache = ListingCache.in_dir(tmp_path)
    for entry in (a, b, a, c):
        cache.put_results([(entry, result())])
    fresh = ListingCache.in_dir(tmp_path)
    assert [fresh.get(e) is not None for e in (a, b, c)] == [True, False, True]


def test_the_cache_is_read_within_its_own_size_limit_not_the_config_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ListingCache.in_dir(tmp_path).put_results([(ENTRY, result())])
    monkeypatch.setenv("MCPCTL_MAX_FILE_BYTES", "100")  # files a user hands over, not ours
    assert ListingCache.in_dir(tmp_path).get(ENTRY) is not None
