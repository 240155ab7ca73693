"""The small JSON files mcpctl keeps for itself: the era memory, the tool listings, the token
counts, the package metadata.

Each holds one object of records (``{"format": 1, KEY: {id: record}}``). They are caches: a
file that cannot be read -- missing, not a regular file (a FIFO planted in its place does not
hang the read), too large, not JSON, not the expected shape -- reads as no records, and one
that cannot be written is left as it was.

Several mcpctl processes (and a daemon) share them, so every change is a read-merge-write
under the file's lock (:func:`update_records`): what another process wrote meanwhile is kept.
The lock is waited for :data:`LOCK_TIMEOUT` seconds at most -- a cache is never worth
hanging a probe for: a write that cannot get the lock is skipped (a debug line says so), and
for :data:`STUCK_SECONDS` after that this process only tries the locks of its caches, without
waiting: one stuck writer costs a run one wait, whatever it holds. A write never
makes a file its reader would refuse: the oldest records are left out until it fits.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["LOCK_TIMEOUT", "fit_records", "read_records", "update_records", "write_records"]

#: Seconds a cache write waits for another process's (a few milliseconds, usually).
LOCK_TIMEOUT = 2.0
#: Seconds a lock that could not be had is not waited for again (only tried).
STUCK_SECONDS = 60.0

Records = dict[str, dict[str, Any]]
_log = logging.getLogger(__name__)
_stuck: list[float] = []  # when a lock last could not be had (once, for the last time)


def read_records(path: Path, key: str, max_bytes: int) -> Records:
    """The records under ``key`` in the file at ``path`` (object values only)."""
    from mcpctl.config.safefile import read_file
    from mcpctl.errors import McpctlError

    try:
        raw = read_file(path, limit=max_bytes)
    except McpctlError:
        return {}
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    found = data.get(key) if isinstance(data, dict) else None
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, dict)}


def fit_records(key: str, records: Records, max_bytes: int) -> tuple[bytes, Records]:
    """The file's bytes for ``records`` (ASCII JSON), the oldest (first) left out until they
    fit in ``max_bytes``, and the records kept; a record that cannot be encoded (nested
    deeper than the encoder goes) is left out too.

    Raises:
        ValueError: not even an empty file fits (``max_bytes`` is tiny).
    """
    encoded: list[tuple[str, str]] = []
    for k, v in records.items():
        try:
            encoded.append((k, json.dumps(v, ensure_ascii=True, separators=(",", ":"))))
        except (ValueError, TypeError, RecursionError):
            continue
    head = '{"format":1,' + json.dumps(key) + ":{"
    tail = "}}\n"
    room = max_bytes - len(head) - len(tail)
    if room < 0:
        raise ValueError(f"{max_bytes} bytes cannot hold a cache file")
    # Each record costs its key, a colon, its value and a comma; one that could never fit
    # goes first, then the oldest until the rest fits.
    sized = [(k, text, len(json.dumps(k)) + len(text) + 2) for k, text in encoded]
    sized = [item for item in sized if item[2] <= room]
    total = sum(size for _, _, size in sized)
    start = 0
    while total > room:
        total -= sized[start][2]
        start += 1
    kept = [(k, text) for k, text, _ in sized[start:]]
    text = head + ",".join(f"{json.dumps(k)}:{v}" for k, v in kept) + tail
    return text.encode("ascii"), {k: records[k] for k, _ in kept}


def write_records(path: Path, key: str, records: Records, max_bytes: int) -> None:
    """Replace the file at ``path`` with ``records`` under ``key`` (see :func:`fit_records`);
    never raises. Only for a file no other process writes: others use
    :func:`update_records`."""
    from mcpctl.config.store import atomic_write
    from mcpctl.errors import McpctlError

    with contextlib.suppress(OSError, McpctlError, ValueError):
        content, _ = fit_records(key, records, max_bytes)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, content, durable=False)


def update_records(
    path: Path,
    key: str,
    max_bytes: int,
    change: Callable[[Records], Records | None],
    *,
    lock_timeout: float = LOCK_TIMEOUT,
) -> Records | None:
    """Under the file's lock, read its records, let ``change`` make the new ones from them
    (``None``: nothing to write) and write those (as :func:`write_records` does).

    Returns the records the file now holds, or ``None`` when nothing was written: ``change``
    said so, or the lock could not be had within ``lock_timeout`` seconds, or the file cannot
    be written. Never raises for the file's sake (``change``'s own errors pass through).
    """
    lock = path.parent / f".{path.name}.lock"
    release = _lock(lock, lock_timeout)
    if release is None:
        return None
    try:
        records = change(read_records(path, key, max_bytes))
        if records is None:
            return None
        from mcpctl.config.store import atomic_write
        from mcpctl.errors import McpctlError

        try:
            content, kept = fit_records(key, records, max_bytes)
            atomic_write(path, content, durable=False)
        except (OSError, McpctlError, ValueError) as exc:
            _log.debug("%s was not written: %s", path, exc)
            return None
        return kept
    finally:
        release()


def _lock(lock: Path, timeout: float) -> Callable[[], None] | None:
    """The lock of a cache file, or ``None`` (with a debug line) when it cannot be had."""
    from mcpctl.config.store import acquire_lock

    if _stuck and time.monotonic() - _stuck[-1] < STUCK_SECONDS:
        timeout = 0.0  # a lock was stuck a moment ago: try, do not wait again
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        release = acquire_lock(lock, timeout)
    except TimeoutError:
        _stuck[:] = [time.monotonic()]
        _log.debug("%s is locked by another process: the cache write is skipped", lock)
        return None
    except OSError as exc:
        _log.debug("cannot lock %s: %s; the cache write is skipped", lock, exc)
        return None
    return release
