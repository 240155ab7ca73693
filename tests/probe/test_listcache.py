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
    entry = modern(log, 1)
    cache = ListingCache.in_dir(tmp_path)
    listed({"m": entry}, cache)
    # The same configuration, now failing: its command disappears.
    script = tmp_path / "server.py"
    script.write_text((SERVERS / "modern.py").read_text())
    moving = ServerEntry(command=PY, args=(str(script),), env=dict(entry.env))
    listed({"m": moving}, cache)  # a 1 ms lifetime: stale by the time it is asked again
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
