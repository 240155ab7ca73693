"""The checks of what mcpctl keeps between runs: the discovery cache and the snapshot.

Both are read, never written: the cache is opened read-only (doctor does not create one),
and a snapshot that cannot be read is reported, not replaced.
"""

from __future__ import annotations

import sqlite3
import time
from datetime import datetime
from pathlib import Path

from mcpctl.doctor.findings import Finding
from mcpctl.errors import StorageError, UsageError
from mcpctl.paths import Paths

__all__ = ["check_registries", "check_snapshot"]


def _open_read_only(file: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{file.absolute().as_uri()}?mode=ro", uri=True, timeout=5)


def check_registries(paths: Paths) -> list[Finding]:
    """How old each registry's cached data is (stale past its time to live)."""
    from mcpctl.registry.cache import DiscoveryCache
    from mcpctl.registry.sources import DEFAULT_TTL, age, is_stale, load_sources

    try:
        sources = load_sources(paths.registries)
    except UsageError as exc:
        return [
            Finding(
                "registries",
                "registries_invalid",
                "error",
                exc.message,
                fix=exc.hint or f"fix or delete {paths.registries}",
                details={"path": str(paths.registries)},
            )
        ]
    file = paths.discovery_cache
    if not file.exists():
        return [
            Finding(
                "registries",
                "cache_empty",
                "info",
                f"no discovery cache yet ({file})",
                fix="'mcpctl registry sync' fills it (discover does too, as needed)",
                details={"path": str(file)},
            )
        ]
    findings: list[Finding] = []
    conn = None
    try:
        conn = _open_read_only(file)
        cache = DiscoveryCache(conn, file)
        now = time.time()
        for source in sources:
            fix = f"mcpctl registry sync {source.id}"
            state = cache.sync_state(source.id)
            details: dict[str, str | int | float | None] = {
                "registry": source.id,
                "kind": source.kind,
            }
            if state is None:
                findings.append(
                    Finding(
                        "registries",
                        "cache_never_synced",
                        "info",
                        f"{source.id}: never synced",
                        fix=fix,
                        subject=source.id,
                        details=details,
                    )
                )
                continue
            synced_at = state[0]
            records = cache.count(source.id)
            details |= {
                "synced_at": datetime.fromtimestamp(synced_at)
                .astimezone()
                .isoformat(timespec="seconds"),
                "age_seconds": round(max(0.0, now - synced_at)),
                "records": records,
            }
            synced = f"{records} records, synced {age(now - synced_at)}"
            failed_at = cache.last_failure(source.id)
            if failed_at is not None:
                findings.append(
                    Finding(
                        "registries",
                        "cache_sync_failed",
                        "warning",
                        f"{source.id}: the last sync failed {age(now - failed_at)}; "
                        f"using the cache ({synced})",
                        fix=f"check the network or the file, then '{fix}'",
                        subject=source.id,
                        details=details,
                    )
                )
            elif is_stale(cache, source):
                ttl = f"{DEFAULT_TTL / 3600:g} h"
                findings.append(
                    Finding(
                        "registries",
                        "cache_stale",
                        "info",
                        f"{source.id}: {synced}, older than {ttl} (discover refreshes it "
                        "when used)",
                        fix=fix,
                        subject=source.id,
                        details=details,
                    )
                )
            else:
                findings.append(
                    Finding(
                        "registries",
                        "cache_fresh",
                        "ok",
                        f"{source.id}: {synced}",
                        subject=source.id,
                        details=details,
                    )
                )
    except sqlite3.Error as exc:
        return [
            Finding(
                "registries",
                "cache_unreadable",
                "warning",
                f"the discovery cache {file} cannot be read: {exc}",
                fix="'mcpctl registry sync' rebuilds a cache that is not valid",
                details={"path": str(file)},
            )
        ]
    finally:
        if conn is not None:
            conn.close()
    return findings


def _recorded_at(timestamp: str, path: Path) -> float:
    """When the snapshot was taken: its timestamp, else the file's modification time."""
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return path.stat().st_mtime


def check_snapshot(paths: Paths, now: float | None = None) -> list[Finding]:
    """Where the last-known snapshot is, whether there is one, and its age (info only)."""
    from mcpctl.registry.sources import age
    from mcpctl.snapshot.files import load_snapshot

    path = paths.snapshot
    details: dict[str, str | int | float | None] = {"path": str(path)}
    try:
        snapshot = load_snapshot(path)
    except (UsageError, StorageError) as exc:
        return [
            Finding(
                "snapshot",
                "snapshot_unreadable",
                "info",
                exc.message,
                fix="'mcpctl snapshot save' records a new one in its place",
                details=details,
            )
        ]
    if snapshot is None:
        return [
            Finding(
                "snapshot",
                "snapshot_none",
                "info",
                f"no snapshot yet ({path})",
                fix="'mcpctl snapshot save' records one, to see later what changed",
                details=details,
            )
        ]
    moment = now if now is not None else time.time()
    taken = _recorded_at(snapshot.timestamp, path)
    details |= {
        "timestamp": snapshot.timestamp or None,
        "servers": len(snapshot.mcps),
        "age_seconds": round(max(0.0, moment - taken)),
        "probed": snapshot.probed,
    }
    noun = "server" if len(snapshot.mcps) == 1 else "servers"
    probed = ", probed" if snapshot.probed else ""
    return [
        Finding(
            "snapshot",
            "snapshot_found",
            "info",
            f"{path}: {len(snapshot.mcps)} {noun}{probed}, recorded {age(moment - taken)}",
            fix="'mcpctl snapshot diff' shows what changed since",
            details=details,
        )
    ]
