"""The discovery cache: registry records in SQLite, searchable with FTS5.

One row per (registry, server name, version), with the raw document, its status and whether
it is the latest version, and an FTS5 index of the latest versions (slug, title, description,
namespace). :meth:`DiscoveryCache.search` ranks matches and merges a server found in several
registries into one result (:mod:`mcpctl.registry.search`).

Writes are transactions; SQLite's own locking (with a busy timeout) lets two processes sync
at once without corrupting anything. The cache is a cache: :meth:`DiscoveryCache.open`
rebuilds a file that is not a valid cache instead of failing.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcpctl.errors import StorageError
from mcpctl.registry.records import Record, slug_of, version_key
from mcpctl.registry.search import SearchHit, search

__all__ = ["DiscoveryCache", "SearchHit"]

SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS registries (
    id TEXT PRIMARY KEY, synced_at REAL NOT NULL, cursor_time TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS servers (
    id INTEGER PRIMARY KEY,
    registry TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL,
    status TEXT NOT NULL, is_latest INTEGER NOT NULL, updated_at TEXT NOT NULL,
    title TEXT NOT NULL, description TEXT NOT NULL, slug TEXT NOT NULL,
    transports TEXT NOT NULL, package_types TEXT NOT NULL, needs_secrets INTEGER NOT NULL,
    doc TEXT NOT NULL,
    UNIQUE (registry, name, version)
);
CREATE INDEX IF NOT EXISTS servers_latest ON servers (is_latest, name);
-- The namespace (io.github.someone) is its own, lightly weighted column: most names share
-- "io.github", and a search for "github" wants servers about GitHub, not all of them.
CREATE VIRTUAL TABLE IF NOT EXISTS servers_fts USING fts5(
    slug, title, description, namespace, content='', tokenize='unicode61 remove_diacritics 2'
);
"""


def _use_wal(conn: sqlite3.Connection, patience: float = 5.0) -> None:
    """Switch to WAL (readers never wait for a sync); it persists in the file.

    The switch takes an exclusive lock without SQLite's busy handler, so two processes
    opening a new cache at once see "database is locked": wait for the other's switch.
    """
    deadline = time.monotonic() + patience
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise
            if time.monotonic() > deadline:
                return  # the default journal is slower for readers, never wrong
            time.sleep(0.02)


class DiscoveryCache:
    """The SQLite discovery cache (one file, any number of registries)."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None = None) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    def open(cls, path: Path | str) -> DiscoveryCache:
        """Open (creating or rebuilding as needed) the cache at ``path``.

        Raises:
            StorageError: the file cannot be opened or created (permissions, I/O, locked).
        """
        file = Path(path)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            try:
                return cls._connect(file)
            except sqlite3.OperationalError:
                raise  # busy, read-only, I/O: the file may be fine, and in use elsewhere
            except sqlite3.DatabaseError:
                # Not a valid cache (corrupt, another program's or version's file): start over.
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(f"{file}{suffix}").unlink(missing_ok=True)
                return cls._connect(file)
        except (OSError, sqlite3.Error) as exc:
            raise StorageError(
                f"cannot open the discovery cache {file}: {exc}",
                hint="check the permissions of that folder, or remove the file to rebuild it",
            ) from None

    @classmethod
    def memory(cls) -> DiscoveryCache:
        """An in-memory cache (tests, one-off use)."""
        return cls._connect(None)

    @classmethod
    def _connect(cls, file: Path | None) -> DiscoveryCache:
        conn = sqlite3.connect(str(file) if file else ":memory:", timeout=30, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 30000")
        if file is not None:
            _use_wal(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.executescript(_SCHEMA)
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        elif row[0] != str(SCHEMA_VERSION):
            raise sqlite3.DatabaseError("cache schema from another mcpctl version")
        return cls(conn, file)

    def close(self) -> None:
        """Close the database."""
        self.conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # --- writing ------------------------------------------------------------------------

    def _delete_name(self, db: sqlite3.Connection, registry: str, name: str) -> None:
        for rowid, rname, slug, title, desc, latest in db.execute(
            "SELECT id, name, slug, title, description, is_latest FROM servers"
            " WHERE registry = ? AND name = ?",
            (registry, name),
        ).fetchall():
            if latest:
                db.execute(
                    "INSERT INTO servers_fts (servers_fts, rowid, slug, title, description,"
                    " namespace) VALUES ('delete', ?, ?, ?, ?, ?)",
                    (rowid, slug, title, desc, _namespace(rname)),
                )
        db.execute("DELETE FROM servers WHERE registry = ? AND name = ?", (registry, name))

    def replace(self, registry: str, records: Iterable[Record], *, cursor_time: str = "") -> int:
        """Replace everything cached for ``registry`` (a full sync); returns the row count."""
        by_name = _group(records)
        with self._transaction() as db:
            for rowid, name, slug, title, desc in db.execute(
                "SELECT id, name, slug, title, description FROM servers"
                " WHERE registry = ? AND is_latest = 1",
                (registry,),
            ).fetchall():
                db.execute(
                    "INSERT INTO servers_fts (servers_fts, rowid, slug, title, description,"
                    " namespace) VALUES ('delete', ?, ?, ?, ?, ?)",
                    (rowid, slug, title, desc, _namespace(name)),
                )
            db.execute("DELETE FROM servers WHERE registry = ?", (registry,))
            count = self._write_groups(db, registry, by_name)
            self._mark_synced(db, registry, cursor_time)
        return count

    def apply(self, registry: str, records: Iterable[Record], *, cursor_time: str = "") -> int:
        """Apply an incremental sync: changed versions replace, deleted ones stay marked."""
        changed = _group(records)
        with self._transaction() as db:
            merged: dict[str, dict[str, Record]] = {}
            for name in changed:
                merged[name] = {
                    rec.version: rec
                    for rec in (
                        _row_record(r)
                        for r in db.execute(
                            "SELECT name, version, status, is_latest, updated_at, doc FROM servers"
                            " WHERE registry = ? AND name = ?",
                            (registry, name),
                        )
                    )
                }
                for rec in changed[name]:
                    merged[name][rec.version] = rec
                self._delete_name(db, registry, name)
            count = self._write_groups(
                db, registry, {n: list(v.values()) for n, v in merged.items()}
            )
            self._mark_synced(db, registry, cursor_time)
        return count

    def _write_groups(
        self, db: sqlite3.Connection, registry: str, groups: dict[str, list[Record]]
    ) -> int:
        # Explicit ids let both tables be filled with executemany (one call each).
        next_id = int(db.execute("SELECT coalesce(max(id), 0) FROM servers").fetchone()[0]) + 1
        rows: list[tuple[Any, ...]] = []
        fts: list[tuple[Any, ...]] = []
        for versions in groups.values():
            latest = _latest(versions)
            for rec in versions:
                title, desc, slug = rec.title, rec.description, slug_of(rec.name)
                rows.append((
                    next_id, registry, rec.name, rec.version, rec.status, int(rec is latest),
                    rec.updated_at, title, desc, slug, ",".join(rec.transports()),
                    ",".join(rec.package_types()), int(rec.needs_secrets()),
                    # ASCII: a lone surrogate from a registry's JSON cannot be UTF-8.
                    json.dumps(rec.server, separators=(",", ":")),
                ))  # fmt: skip
                if rec is latest:
                    fts.append((next_id, slug, title, desc, _namespace(rec.name)))
                next_id += 1
        db.executemany(
            "INSERT INTO servers (id, registry, name, version, status, is_latest, updated_at,"
            " title, description, slug, transports, package_types, needs_secrets, doc)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        db.executemany(
            "INSERT INTO servers_fts (rowid, slug, title, description, namespace)"
            " VALUES (?,?,?,?,?)",
            fts,
        )
        return len(rows)

    def _mark_synced(self, db: sqlite3.Connection, registry: str, cursor_time: str) -> None:
        db.execute("DELETE FROM meta WHERE key = ?", (f"failed:{registry}",))
        db.execute(
            "INSERT INTO registries (id, synced_at, cursor_time) VALUES (?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET synced_at = excluded.synced_at,"
            " cursor_time = CASE WHEN excluded.cursor_time != '' THEN excluded.cursor_time"
            " ELSE registries.cursor_time END",
            (registry, time.time(), cursor_time),
        )

    def drop(self, registry: str) -> None:
        """Forget a registry entirely."""
        with self._transaction() as db:
            self._drop(db, registry)

    def _drop(self, db: sqlite3.Connection, registry: str) -> None:
        for (name,) in db.execute(
            "SELECT DISTINCT name FROM servers WHERE registry = ?", (registry,)
        ).fetchall():
            self._delete_name(db, registry, name)
        db.execute("DELETE FROM registries WHERE id = ?", (registry,))

    # --- reading ------------------------------------------------------------------------

    def note_failure(self, registry: str, at: float | None = None) -> None:
        """Remember that a sync of ``registry`` failed ``at`` (a Unix time; default: now).

        Commands do not try it again for a few minutes; a successful sync forgets it.
        """
        self.conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            (f"failed:{registry}", str(time.time() if at is None else at)),
        )

    def last_failure(self, registry: str) -> float | None:
        """When a sync of ``registry`` last failed, unless it has succeeded since."""
        row = self.conn.execute(
            "SELECT value FROM meta WHERE key = ?", (f"failed:{registry}",)
        ).fetchone()
        return float(row[0]) if row else None

    def sync_state(self, registry: str) -> tuple[float, str] | None:
        """(when it was last synced, the newest ``updatedAt`` seen) or ``None``."""
        row = self.conn.execute(
            "SELECT synced_at, cursor_time FROM registries WHERE id = ?", (registry,)
        ).fetchone()
        return (float(row[0]), str(row[1])) if row else None

    def count(self, registry: str | None = None) -> int:
        """Rows cached (for one registry, or all)."""
        if registry is None:
            return int(self.conn.execute("SELECT count(*) FROM servers").fetchone()[0])
        return int(
            self.conn.execute(
                "SELECT count(*) FROM servers WHERE registry = ?", (registry,)
            ).fetchone()[0]
        )

    def search(
        self,
        query: str = "",
        *,
        registries: Iterable[str] | None = None,
        transport: str | None = None,
        package_type: str | None = None,
        all_status: bool = False,
        limit: int = 20,
    ) -> list[SearchHit]:
        """Ranked latest versions matching ``query`` (all of them when it is empty).

        See :func:`mcpctl.registry.search.search` for the ranking.
        """
        return search(
            self.conn, _bindable(query),
            registries=[_bindable(r) for r in registries] if registries is not None else None,
            transport=transport, package_type=_bindable(package_type) if package_type else None,
            all_status=all_status, limit=limit,
        )  # fmt: skip

    def versions(
        self, name: str, registries: Iterable[str] | None = None
    ) -> list[tuple[str, Record]]:
        """Every cached version of one server: (registry, record), newest first."""
        sql = "SELECT registry, name, version, status, is_latest, updated_at, doc FROM servers"
        sql += " WHERE name = ?"
        args: list[Any] = [_bindable(name)]
        wanted = [_bindable(r) for r in registries] if registries is not None else None
        if wanted is not None:
            sql += f" AND registry IN ({','.join('?' * len(wanted))})"
            args += wanted
        out = [(row[0], _row_record(row[1:])) for row in self.conn.execute(sql, args)]
        return sorted(out, key=lambda item: version_key(item[1].version), reverse=True)

    def names_like(self, text: str, limit: int = 5) -> list[str]:
        """Server names for "did you mean" suggestions."""
        rows = self.conn.execute(
            "SELECT DISTINCT name FROM servers WHERE slug = ? OR name LIKE ? LIMIT ?",
            (_bindable(slug_of(text)), _bindable(f"%{text}%"), limit),
        ).fetchall()
        return [r[0] for r in rows]


def _bindable(text: str) -> str:
    """``text`` as SQLite can take it: a lone surrogate (undecodable bytes of a command
    line) is not UTF-8, and would raise instead of matching nothing."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _namespace(name: str) -> str:
    return name.rpartition("/")[0]


def _group(records: Iterable[Record]) -> dict[str, list[Record]]:
    groups: dict[str, dict[str, Record]] = {}
    for rec in records:
        groups.setdefault(rec.name, {})[rec.version] = rec
    return {name: list(versions.values()) for name, versions in groups.items()}


def _latest(versions: list[Record]) -> Record | None:
    """The version the registry marks latest, else the highest version number."""
    marked = [r for r in versions if r.is_latest]
    if marked:
        return marked[-1]
    return max(versions, key=lambda r: version_key(r.version)) if versions else None


def _row_record(row: Any) -> Record:
    name, version, status, latest, updated, doc = row
    return Record(name, version, status, bool(latest), updated, json.loads(doc))
