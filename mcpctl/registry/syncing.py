"""Syncing registries into the discovery cache: one, or several at once within a deadline.

Each registry is read in a thread of its own (the HTTP client is synchronous), so a slow
registry delays nobody; the records come back to the calling thread, which alone writes the
cache (one SQLite connection, one writer, one transaction per registry). A deadline bounds
the whole: every request gets at most what is left of it, and a registry that has not
answered when it passes is given up on -- its cache kept, its failure remembered, so the
commands of the next few minutes answer from the cache without waiting for it again.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from mcpctl.errors import RegistryError, UsageError
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.registry.client import RegistryClient, load_file_registry
from mcpctl.registry.records import Record
from mcpctl.registry.sources import (
    DEFAULT_TTL,
    RETRY_AFTER_FAILURE,
    RegistrySource,
    age,
    is_stale,
)

__all__ = [
    "MAX_THREADS",
    "REFRESH_TIMEOUT",
    "REQUEST_TIMEOUT",
    "SYNC_TIMEOUT",
    "RefreshReport",
    "SyncFailure",
    "SyncOutcome",
    "refresh",
    "sync_many",
    "sync_source",
]

REQUEST_TIMEOUT = 10.0
"""Seconds one request may take in all (connecting, the whole response, retries)."""
REFRESH_TIMEOUT = 15.0
"""Seconds the commands that refresh before answering (discover, show, add, outdated,
upgrade) give all the registries together, by default."""
SYNC_TIMEOUT = 120.0
"""Seconds ``mcpctl registry sync`` gives all the registries together, by default."""
MAX_THREADS = 16

Mode = Literal["full", "incremental", "file"]


@dataclass(frozen=True)
class SyncOutcome:
    """What a sync of one registry did; ``warnings``: the redirects that took its requests to
    another host (the records came from there)."""

    registry: str
    mode: Mode
    records: int
    seconds: float
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class SyncFailure:
    """A registry that could not be synced (its cache is unchanged)."""

    registry: str
    error: RegistryError | UsageError
    seconds: float


@dataclass(frozen=True)
class _Fetched:
    mode: Mode
    records: list[Record]
    cursor_time: str = ""
    warnings: tuple[str, ...] = ()


def _fetch(
    source: RegistrySource,
    state: tuple[float, str] | None,
    *,
    full: bool,
    client_factory: Callable[..., RegistryClient],
    timeout: float,
    deadline: float | None,
) -> _Fetched:
    """Read one registry (no cache access: this runs in a worker thread)."""
    if source.kind != "http":
        return _Fetched("file", load_file_registry(Path(source.location)))
    since = None if full or state is None or not state[1] else state[1]
    with client_factory(source.location, timeout=timeout, deadline=deadline) as client:
        records = list(client.iter_records(updated_since=since))
        moved = client.redirects
    newest = max((r.updated_at for r in records), default="") or (state[1] if state else "")
    warnings = tuple(
        f"registry {source.id!r}: {asked} redirected to another host, {there}, which answered"
        for asked, there in moved
    )
    return _Fetched("full" if since is None else "incremental", records, newest, warnings)


def _store(cache: DiscoveryCache, registry: str, fetched: _Fetched, started: float) -> SyncOutcome:
    if fetched.mode == "incremental":
        cache.apply(registry, fetched.records, cursor_time=fetched.cursor_time)
        count = len(fetched.records)
    else:
        count = cache.replace(registry, fetched.records, cursor_time=fetched.cursor_time)
    elapsed = time.perf_counter() - started
    return SyncOutcome(registry, fetched.mode, count, elapsed, fetched.warnings)


def sync_source(
    cache: DiscoveryCache,
    source: RegistrySource,
    *,
    full: bool = False,
    client_factory: Callable[..., RegistryClient] = RegistryClient,
    timeout: float = REQUEST_TIMEOUT,
    deadline: float | None = None,
) -> SyncOutcome:
    """Bring the cache up to date with one registry, in this thread.

    The first sync of an HTTP registry pages through everything; later ones ask only for
    what changed since the newest ``updatedAt`` seen (deletions included). Each request
    takes at most ``timeout`` seconds, and none goes past ``deadline`` (a
    :func:`time.monotonic` time). On failure the cache keeps what it had.

    Raises:
        RegistryError: the registry could not be read (the cache is unchanged).
        UsageError: a file registry is unreadable.
    """
    started = time.perf_counter()
    fetched = _fetch(source, cache.sync_state(source.id), full=full,
                     client_factory=client_factory, timeout=timeout, deadline=deadline)  # fmt: skip
    return _store(cache, source.id, fetched, started)


def _in_threads(jobs: dict[str, Callable[[], Any]], deadline: float) -> Iterator[tuple[str, Any]]:
    """Run ``jobs`` in daemon threads; yield (key, result or exception) as each ends, until
    all have or ``deadline`` (monotonic) passes. Jobs still running are left to end on
    their own (they are given the same deadline); jobs not started by then never start."""
    todo: queue.SimpleQueue[tuple[str, Callable[[], Any]]] = queue.SimpleQueue()
    done: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    for item in jobs.items():
        todo.put(item)

    def work() -> None:
        while time.monotonic() < deadline:
            try:
                key, job = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((key, job()))
            except Exception as exc:  # handed to the calling thread, which decides
                done.put((key, exc))

    for _ in range(min(MAX_THREADS, len(jobs))):
        threading.Thread(target=work, name="mcpctl-registry-sync", daemon=True).start()
    for _ in jobs:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        try:
            yield done.get(timeout=left)
        except queue.Empty:
            return


def sync_many(
    cache: DiscoveryCache,
    sources: Iterable[RegistrySource],
    *,
    full: bool = False,
    timeout: float = SYNC_TIMEOUT,
    client_factory: Callable[..., RegistryClient] = RegistryClient,
) -> list[SyncOutcome | SyncFailure]:
    """Sync several registries at once, all within ``timeout`` seconds; one result each,
    in the order given (a registry named twice is synced once).

    Each request takes at most :data:`REQUEST_TIMEOUT` seconds and nothing goes past the
    deadline; a registry that has not answered by then is a :class:`SyncFailure` saying
    how long it was waited for. A registry that could not be read (a ``RegistryError``:
    network, HTTP status, deadline) is remembered with :meth:`DiscoveryCache.note_failure`.
    """
    unique = {s.id: s for s in sources}
    started, clock = time.monotonic(), time.perf_counter()
    deadline = started + timeout
    fetch = partial(_fetch, full=full, client_factory=client_factory,
                    timeout=min(REQUEST_TIMEOUT, timeout), deadline=deadline)  # fmt: skip
    jobs: dict[str, Callable[[], Any]] = {
        s.id: partial(fetch, s, cache.sync_state(s.id)) for s in unique.values()
    }
    results: dict[str, SyncOutcome | SyncFailure] = {}
    for key, value in _in_threads(jobs, deadline):
        if isinstance(value, RegistryError | UsageError):
            results[key] = SyncFailure(key, value, time.monotonic() - started)
        elif isinstance(value, BaseException):
            raise value
        else:
            results[key] = _store(cache, key, value, clock)
    for key in unique:
        if key not in results:
            waited = time.monotonic() - started
            message = f"timed out: no complete answer within {timeout:g} s"
            error = RegistryError(
                f"{message}; gave up after {waited:.1f} s",
                hint=f"'mcpctl registry sync {key} --timeout 2m' gives it longer",
            )
            results[key] = SyncFailure(key, error, waited)
    for result in results.values():
        if isinstance(result, SyncFailure) and isinstance(result.error, RegistryError):
            cache.note_failure(result.registry)
    return [results[key] for key in unique]


@dataclass
class RefreshReport:
    """What refreshing the cache before a search did.

    ``warnings`` holds one line per registry that could not be read (whether it failed now
    or a few minutes ago), and one per redirect that took a sync to another host;
    ``failed`` the registries that could not be read with nothing cached at all, and
    ``unreachable`` all that could not be read.
    """

    synced: list[SyncOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    unreachable: list[str] = field(default_factory=list)


def refresh(
    cache: DiscoveryCache,
    sources: Iterable[RegistrySource],
    *,
    force: bool = False,
    offline: bool = False,
    ttl: float = DEFAULT_TTL,
    timeout: float = REFRESH_TIMEOUT,
    client_factory: Callable[..., RegistryClient] = RegistryClient,
) -> RefreshReport:
    """Sync the registries whose cache is stale (all with ``force``; none ``offline``), all
    at once and within ``timeout`` seconds in all.

    A registry that fails, or has not answered when the time is up, keeps its previous
    cache (with a warning); one that has nothing cached at all is listed in ``failed``. A
    registry that failed less than :data:`RETRY_AFTER_FAILURE` seconds ago is not tried
    again (unless ``force``): its warning says how long ago. Each registry is refreshed,
    and warned about, once, however often it appears in ``sources``.
    """
    unique = {s.id: s for s in sources}
    has_data = {key: cache.sync_state(key) is not None for key in unique}
    notes: dict[str, str] = {}
    synced: dict[str, SyncOutcome] = {}
    due: list[RegistrySource] = []
    for source in unique.values():
        if offline:
            if not has_data[source.id] and source.kind != "builtin":
                notes[source.id] = f"registry {source.id!r} has never been synced (offline)"
            elif not has_data[source.id]:
                synced[source.id] = sync_source(cache, source)
            continue
        if not (force or is_stale(cache, source, ttl)):
            continue
        failed_at = cache.last_failure(source.id)
        now = time.time()
        if not force and failed_at is not None and now - failed_at < RETRY_AFTER_FAILURE:
            # Offline machines stay fast: no new attempt for a few minutes after a failure.
            how = "using cached data" if has_data[source.id] else "no cached data"
            notes[source.id] = (
                f"registry {source.id!r} was unreachable {age(now - failed_at)}; {how} "
                f"('mcpctl registry sync {source.id}' tries again now)"
            )
            continue
        due.append(source)
    for result in sync_many(cache, due, timeout=timeout, client_factory=client_factory):
        if isinstance(result, SyncOutcome):
            synced[result.registry] = result
            continue
        if isinstance(result.error, UsageError):
            cache.note_failure(result.registry)  # an unreadable file: not at once again either
        note = f"registry {result.registry!r}: {result.error.message}"
        notes[result.registry] = note + ("; using cached data" if has_data[result.registry] else "")
    report = RefreshReport(synced=[synced[k] for k in unique if k in synced])
    for outcome in report.synced:
        report.warnings += outcome.warnings
    for key in unique:
        if key in notes:
            report.warnings.append(notes[key])
            report.unreachable.append(key)
            if not has_data[key]:
                report.failed.append(key)
    return report
