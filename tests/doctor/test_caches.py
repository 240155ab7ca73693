"""The age of each registry's cache, and the snapshot (both read, never written)."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mcpctl.doctor.caches import _open_read_only, _recorded_at, check_registries, check_snapshot
from mcpctl.paths import Paths
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.registry.records import Record, record_from_json
from mcpctl.snapshot.files import save_snapshot
from mcpctl.snapshot.model import McpRecord, ServerState, Snapshot
from tests.registry.server import make_record


@pytest.fixture
def paths(isolated: Path) -> Paths:
    return Paths.from_env()


def synced(paths: Paths, *registries: str, ago: float = 0.0) -> None:
    cache = DiscoveryCache.open(paths.discovery_cache)
    for registry in registries:
        cache.replace(registry, [])
        cache.conn.execute(
            "UPDATE registries SET synced_at = ? WHERE id = ?", (time.time() - ago, registry)
        )
    cache.close()


def codes(paths: Paths) -> dict[str | None, tuple[str, str]]:
    return {f.subject: (f.code, f.severity) for f in check_registries(paths)}


def test_no_cache_yet_is_info_and_stays_uncreated(paths: Paths) -> None:
    [finding] = check_registries(paths)
    assert (finding.code, finding.severity) == ("cache_empty", "info")
    assert finding.fix is not None and "mcpctl registry sync" in finding.fix
    assert not paths.discovery_cache.exists()


def test_fresh_and_never_synced(paths: Paths) -> None:
    synced(paths, "builtin", ago=30)
    assert codes(paths) == {
        "official": ("cache_never_synced", "info"),
        "builtin": ("cache_fresh", "ok"),
    }
    finding = next(f for f in check_registries(paths) if f.subject == "builtin")
    assert finding.details["records"] == 0 and finding.details["age_seconds"] == 30
    assert "synced 30 s ago" in finding.message
    never = next(f for f in check_registries(paths) if f.subject == "official")
    assert never.fix == "mcpctl registry sync official"


def test_older_than_the_time_to_live_is_stale(paths: Paths) -> None:
    synced(paths, "official", "builtin", ago=2 * 86400)
    # The built-in catalog ships with the package: once synced it does not age.
    assert codes(paths) == {
        "official": ("cache_stale", "info"),
        "builtin": ("cache_fresh", "ok"),
    }
    stale = next(f for f in check_registries(paths) if f.subject == "official")
    assert "synced 2 d ago" in stale.message and stale.fix == "mcpctl registry sync official"


def test_a_failed_sync_is_a_warning(paths: Paths) -> None:
    synced(paths, "official", ago=7200)
    cache = DiscoveryCache.open(paths.discovery_cache)
    cache.note_failure("official", at=time.time() - 120)
    cache.close()
    finding = next(f for f in check_registries(paths) if f.subject == "official")
    assert (finding.code, finding.severity) == ("cache_sync_failed", "warning")
    assert "failed 2 min ago" in finding.message


def test_user_registries_are_checked_too(paths: Paths, tmp_path: Path) -> None:
    catalog = tmp_path / "team.json"
    catalog.write_text("[]")
    paths.registries.parent.mkdir(parents=True)
    paths.registries.write_text(json.dumps({"registries": [{"id": "team", "file": str(catalog)}]}))
    synced(paths, "builtin")
    assert codes(paths)["team"] == ("cache_never_synced", "info")


def test_a_broken_registries_file_is_an_error(paths: Paths) -> None:
    paths.registries.parent.mkdir(parents=True)
    paths.registries.write_text("{not json")
    [finding] = check_registries(paths)
    assert (finding.code, finding.severity) == ("registries_invalid", "error")
    assert finding.fix is not None and str(paths.registries) in finding.fix


def test_a_file_that_is_no_cache_is_reported_not_rebuilt(paths: Paths) -> None:
    paths.discovery_cache.parent.mkdir(parents=True)
    paths.discovery_cache.write_bytes(b"this is not a database" * 100)
    [finding] = check_registries(paths)
    assert (finding.code, finding.severity) == ("cache_unreadable", "warning")
    assert paths.discovery_cache.read_bytes().startswith(b"this is not a database")


def test_no_snapshot_yet(paths: Paths) -> None:
    [finding] = check_snapshot(paths)
    assert (finding.code, finding.severity) == ("snapshot_none", "info")
    assert finding.details["path"] == str(paths.snapshot)


def test_a_snapshot_and_its_age(
    paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPCTL_SNAPSHOT", str(tmp_path / "lock.json"))
    taken = datetime(2025, 1, 1, tzinfo=UTC)
    stamp = taken.isoformat().replace("+00:00", "Z")
    save_snapshot(
        Snapshot(stamp, {"a": McpRecord("a"), "b": McpRecord("b")}), tmp_path / "lock.json"
    )
    [finding] = check_snapshot(paths, now=taken.timestamp() + 3 * 3600)
    assert (finding.code, finding.severity) == ("snapshot_found", "info")
    assert f"{tmp_path / 'lock.json'}: 2 servers, recorded 3 h ago" == finding.message
    assert finding.details["age_seconds"] == 3 * 3600 and finding.details["probed"] is False


def test_a_snapshot_that_is_not_one(paths: Paths) -> None:
    paths.snapshot.parent.mkdir(parents=True)
    paths.snapshot.write_text("[1, 2]")
    [finding] = check_snapshot(paths)
    assert (finding.code, finding.severity) == ("snapshot_unreadable", "info")
    assert paths.snapshot.read_text() == "[1, 2]"


# --- what mutation testing found unpinned ----------------------------------------------------


def record(name: str, version: str = "1.0.0") -> Record:
    found = record_from_json(make_record(name, version))
    assert found is not None
    return found


def local_time(at: float) -> str:
    return datetime.fromtimestamp(at).astimezone().isoformat(timespec="seconds")


def test_a_fresh_registry_s_finding_whole(paths: Paths) -> None:
    cache = DiscoveryCache.open(paths.discovery_cache)
    cache.replace("official", [record("io.example/a"), record("io.example/b")])
    cache.replace("builtin", [record("io.example/c")])
    at = time.time() - 90
    cache.conn.execute("UPDATE registries SET synced_at = ? WHERE id = 'official'", (at,))
    cache.close()
    found = {f.subject: f for f in check_registries(paths)}
    official = found["official"]
    assert official.section == "registries" and official.fix is None
    assert official.message == "official: 2 records, synced 1 min ago"
    assert dict(official.details) == {
        "registry": "official",
        "kind": "http",
        "synced_at": local_time(at),
        "age_seconds": 90,
        "records": 2,
    }
    assert found["builtin"].details["records"] == 1
    assert found["builtin"].details["kind"] == "builtin"


def test_a_registry_never_synced_whole(paths: Paths) -> None:
    synced(paths, "builtin")
    never = next(f for f in check_registries(paths) if f.subject == "official")
    assert never.section == "registries"
    assert never.message == "official: never synced"
    assert dict(never.details) == {"registry": "official", "kind": "http"}


def test_a_stale_registry_s_words_and_fix(paths: Paths) -> None:
    synced(paths, "official", ago=3 * 3600)
    stale = next(f for f in check_registries(paths) if f.subject == "official")
    assert stale.message == (
        "official: 0 records, synced 3 h ago, older than 1 h (discover refreshes it when used)"
    )
    assert stale.section == "registries" and stale.details["age_seconds"] == 3 * 3600


def test_a_failed_sync_s_words_fix_and_details(paths: Paths) -> None:
    synced(paths, "official", ago=7200)
    cache = DiscoveryCache.open(paths.discovery_cache)
    cache.note_failure("official", at=time.time() - 120)
    cache.close()
    finding = next(f for f in check_registries(paths) if f.subject == "official")
    assert finding.section == "registries"
    assert finding.message == (
        "official: the last sync failed 2 min ago; using the cache (0 records, synced 2 h ago)"
    )
    assert finding.fix == "check the network or the file, then 'mcpctl registry sync official'"
    assert finding.details["age_seconds"] == 7200 and finding.details["records"] == 0


def test_a_sync_in_the_future_is_zero_seconds_old(paths: Paths) -> None:
    synced(paths, "official", ago=-600)  # another machine's clock
    finding = next(f for f in check_registries(paths) if f.subject == "official")
    assert finding.details["age_seconds"] == 0
    assert finding.code == "cache_fresh"


def test_no_cache_yet_whole(paths: Paths) -> None:
    [finding] = check_registries(paths)
    file = paths.discovery_cache
    assert finding.section == "registries"
    assert finding.message == f"no discovery cache yet ({file})"
    assert finding.fix == "'mcpctl registry sync' fills it (discover does too, as needed)"
    assert dict(finding.details) == {"path": str(file)}


def test_a_broken_registries_file_whole(paths: Paths) -> None:
    paths.registries.parent.mkdir(parents=True)
    paths.registries.write_text("{not json")
    [finding] = check_registries(paths)
    assert finding.section == "registries"
    assert str(paths.registries) in finding.message
    assert dict(finding.details) == {"path": str(paths.registries)}


def test_a_registries_file_of_another_shape_says_so(paths: Paths) -> None:
    paths.registries.parent.mkdir(parents=True)
    paths.registries.write_text(json.dumps({"registries": "official"}))
    [finding] = check_registries(paths)
    assert finding.code == "registries_invalid"
    assert finding.message == f'{paths.registries} must hold {{"registries": [...]}}'
    assert finding.fix == f"fix or delete {paths.registries}"


def test_a_file_that_is_no_cache_whole(paths: Paths) -> None:
    paths.discovery_cache.parent.mkdir(parents=True)
    paths.discovery_cache.write_bytes(b"this is not a database" * 100)
    [finding] = check_registries(paths)
    file = paths.discovery_cache
    assert finding.section == "registries"
    assert finding.message.startswith(f"the discovery cache {file} cannot be read: ")
    assert finding.message.endswith("file is not a database")
    assert finding.fix == "'mcpctl registry sync' rebuilds a cache that is not valid"
    assert dict(finding.details) == {"path": str(file)}


def test_the_cache_is_opened_read_only(paths: Paths) -> None:
    synced(paths, "official")
    before = paths.discovery_cache.read_bytes()
    conn = _open_read_only(paths.discovery_cache)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM registries")
    finally:
        conn.close()
    check_registries(paths)
    assert paths.discovery_cache.read_bytes() == before


def test_no_snapshot_yet_whole(paths: Paths) -> None:
    [finding] = check_snapshot(paths)
    assert finding.section == "snapshot"
    assert finding.message == f"no snapshot yet ({paths.snapshot})"
    assert finding.fix == "'mcpctl snapshot save' records one, to see later what changed"
    assert dict(finding.details) == {"path": str(paths.snapshot)}


def test_a_snapshot_that_is_not_one_whole(paths: Paths) -> None:
    paths.snapshot.parent.mkdir(parents=True)
    paths.snapshot.write_text("[1, 2]")
    [finding] = check_snapshot(paths)
    assert finding.section == "snapshot"
    assert str(paths.snapshot) in finding.message
    assert finding.fix == "'mcpctl snapshot save' records a new one in its place"
    assert dict(finding.details) == {"path": str(paths.snapshot)}


def test_a_snapshot_s_finding_whole(paths: Paths) -> None:
    taken = datetime(2025, 1, 1, tzinfo=UTC)
    stamp = taken.isoformat().replace("+00:00", "Z")
    save_snapshot(Snapshot(stamp, {"a": McpRecord("a", probe=ServerState())}), paths.snapshot)
    [finding] = check_snapshot(paths, now=taken.timestamp() + 90)
    assert finding.section == "snapshot"
    assert finding.message == f"{paths.snapshot}: 1 server, probed, recorded 1 min ago"
    assert finding.fix == "'mcpctl snapshot diff' shows what changed since"
    assert dict(finding.details) == {
        "path": str(paths.snapshot),
        "timestamp": stamp,
        "servers": 1,
        "age_seconds": 90,
        "probed": True,
    }
    # a clock behind the snapshot's: recorded now, not in the future
    [finding] = check_snapshot(paths, now=taken.timestamp() - 50)
    assert finding.details["age_seconds"] == 0
    assert finding.message.endswith("recorded 0 s ago")


def test_a_snapshot_without_a_readable_time_is_as_old_as_its_file(paths: Paths) -> None:
    save_snapshot(Snapshot("", {}), paths.snapshot)
    written = paths.snapshot.stat().st_mtime
    [finding] = check_snapshot(paths, now=written + 7200)
    assert finding.details["timestamp"] is None
    assert finding.details["age_seconds"] == 7200
    assert finding.message == f"{paths.snapshot}: 0 servers, recorded 2 h ago"
    assert _recorded_at("not a time", paths.snapshot) == written
    assert _recorded_at("2025-01-01T00:00:00Z", paths.snapshot) == 1735689600.0


def test_a_snapshot_is_checked_with_the_clock_by_default(paths: Paths) -> None:
    save_snapshot(
        Snapshot(datetime.now(UTC).isoformat().replace("+00:00", "Z"), {}), paths.snapshot
    )
    [finding] = check_snapshot(paths)
    assert finding.details["age_seconds"] in (0, 1)


def test_a_cache_that_cannot_be_opened_is_reported(paths: Paths) -> None:
    paths.discovery_cache.mkdir(parents=True)  # a folder where the file should be
    [finding] = check_registries(paths)
    assert (finding.code, finding.severity) == ("cache_unreadable", "warning")
    assert " cannot be read: " in finding.message
    assert paths.discovery_cache.is_dir()
