"""The age of each registry's cache, and the snapshot (both read, never written)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mcpctl.doctor.caches import check_registries, check_snapshot
from mcpctl.paths import Paths
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.snapshot.files import save_snapshot
from mcpctl.snapshot.model import McpRecord, Snapshot


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
