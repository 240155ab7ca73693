"""The registries mcpctl knows (``registries.json``), and syncing them into the cache.

Two are built in: ``official`` (the official MCP Registry's HTTP API) and ``builtin`` (a small
starter catalog shipped in the package, so discovery works with no network). Users add
HTTP registries that speak the same API, or local JSON files (air-gapped teams, curated
internal catalogs, ``discover --export`` files).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mcpctl.errors import RegistryError, UsageError
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.registry.client import RegistryClient, load_file_registry
from mcpctl.registry.records import Record

__all__ = [
    "BUILTIN_FILE",
    "DEFAULT_TTL",
    "RefreshReport",
    "RegistrySource",
    "SyncOutcome",
    "age",
    "find_record",
    "is_stale",
    "load_sources",
    "parse_location",
    "refresh",
    "save_sources",
    "sync_source",
]

OFFICIAL_URL = "https://registry.modelcontextprotocol.io"
BUILTIN_FILE = Path(__file__).with_name("builtin.json")
DEFAULT_TTL = 3600.0
RETRY_AFTER_FAILURE = 300.0  # seconds before an unreachable registry is tried again
ID_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")


@dataclass(frozen=True)
class RegistrySource:
    """One registry: an HTTP endpoint speaking the official API, or a JSON file."""

    id: str
    kind: Literal["http", "file", "builtin"]
    location: str

    def to_dict(self) -> dict[str, str]:
        """JSON form (as stored in registries.json)."""
        key = "url" if self.kind == "http" else "file"
        return {"id": self.id, "kind": self.kind, key: self.location}


DEFAULTS = (
    RegistrySource("official", "http", OFFICIAL_URL),
    RegistrySource("builtin", "builtin", str(BUILTIN_FILE)),
)


def load_sources(path: Path) -> list[RegistrySource]:
    """The configured registries: the defaults, then the user's (which may override them).

    Raises:
        UsageError: registries.json exists but is not valid.
    """
    sources = {s.id: s for s in DEFAULTS}
    if path.exists():
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path} is not valid JSON: {exc}",
                             hint=f"fix or delete {path}") from None  # fmt: skip
        items = data.get("registries") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise UsageError(f'{path} must hold {{"registries": [...]}}')
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                continue
            if item.get("removed") is True:
                sources.pop(item["id"], None)
                continue
            if isinstance(item.get("url"), str):
                sources[item["id"]] = RegistrySource(item["id"], "http", item["url"])
            elif isinstance(item.get("file"), str):
                sources[item["id"]] = RegistrySource(item["id"], "file", item["file"])
    return list(sources.values())


def save_sources(path: Path, sources: list[RegistrySource]) -> None:
    """Write registries.json: the user's registries, and tombstones for removed defaults."""
    from mcpctl.config.store import write_json

    ids = {s.id for s in sources}
    items: list[dict[str, Any]] = [s.to_dict() for s in sources if s not in DEFAULTS]
    items += [{"id": d.id, "removed": True} for d in DEFAULTS if d.id not in ids]
    write_json(path, {"registries": items})


def parse_location(registry_id: str, location: str) -> RegistrySource:
    """A source from what the user typed: an http(s) URL or a path to a JSON file.

    Raises:
        UsageError: a bad id, or a location that is neither.
    """
    if not ID_RE.fullmatch(registry_id):
        raise UsageError(
            f"registry id {registry_id!r} must be 1-40 of lowercase letters, digits, '_' and '-'"
        )
    if location.startswith(("http://", "https://")):
        return RegistrySource(registry_id, "http", location.rstrip("/"))
    path = Path(location).expanduser()
    if not path.is_file():
        raise UsageError(f"{location} is neither an http(s) URL nor an existing file")
    return RegistrySource(registry_id, "file", str(path.resolve()))


@dataclass(frozen=True)
class SyncOutcome:
    """What a sync of one registry did."""

    registry: str
    mode: Literal["full", "incremental", "file"]
    records: int
    seconds: float


def sync_source(
    cache: DiscoveryCache,
    source: RegistrySource,
    *,
    full: bool = False,
    client_factory: Callable[..., RegistryClient] = RegistryClient,
    timeout: float = 10.0,
) -> SyncOutcome:
    """Bring the cache up to date with one registry.

    The first sync of an HTTP registry pages through everything; later ones ask only for
    what changed since the newest ``updatedAt`` seen (deletions included). On failure the
    cache keeps what it had.

    Raises:
        RegistryError: the registry could not be read (the cache is unchanged).
        UsageError: a file registry is unreadable.
    """
    started = time.perf_counter()
    if source.kind != "http":
        records = load_file_registry(Path(source.location))
        cache.replace(source.id, records)
        return SyncOutcome(source.id, "file", len(records), time.perf_counter() - started)
    state = cache.sync_state(source.id)
    since = None if full or state is None or not state[1] else state[1]
    with client_factory(source.location, timeout=timeout) as client:
        records = list(client.iter_records(updated_since=since))
    newest = max((r.updated_at for r in records), default="") or (state[1] if state else "")
    if since is None:
        count = cache.replace(source.id, records, cursor_time=newest)
        mode: Literal["full", "incremental", "file"] = "full"
    else:
        cache.apply(source.id, records, cursor_time=newest)
        count = len(records)
        mode = "incremental"
    return SyncOutcome(source.id, mode, count, time.perf_counter() - started)


def is_stale(cache: DiscoveryCache, source: RegistrySource, ttl: float = DEFAULT_TTL) -> bool:
    """Whether a registry's cached data is missing or older than ``ttl`` seconds."""
    if source.kind == "builtin":
        return cache.sync_state(source.id) is None
    state = cache.sync_state(source.id)
    return state is None or time.time() - state[0] > ttl


def find_record(
    cache: DiscoveryCache,
    spec: str,
    registry: str | None = None,
    *,
    unavailable: Sequence[str] = (),
) -> tuple[str, Record]:
    """(registry, record) for ``NAME[@VERSION]`` from the cache (latest when no version).

    ``unavailable`` names registries that could not be read just now: when the server is
    not found, the error says it may be in one of them.

    Raises:
        UsageError: no such server or version in the cache.
    """
    name, _, version = spec.partition("@")
    found = cache.versions(name, [registry] if registry else None)
    if not found:
        guesses = cache.names_like(name)
        hint = f"did you mean {guesses[0]!r}?" if guesses else "search with 'mcpctl discover'"
        if unavailable:
            listed = ", ".join(repr(u) for u in unavailable)
            hint = (
                f"it may be in {listed}, which could not be read; check the network, then "
                f"'mcpctl registry sync {unavailable[0]}'"
            )
        raise UsageError(f"no server {name!r} in the registries", hint=hint)
    if version and version != "latest":
        for reg, rec in found:
            if rec.version == version:
                return reg, rec
        versions = ", ".join(dict.fromkeys(r.version for _, r in found[:10]))
        raise UsageError(f"{name} has no version {version!r}", hint=f"versions: {versions}")
    latest = [(reg, rec) for reg, rec in found if rec.is_latest]
    return latest[0] if latest else found[0]


@dataclass
class RefreshReport:
    """What refreshing the cache before a search did.

    ``warnings`` holds one line per registry that could not be read (whether it failed now
    or a few minutes ago); ``failed`` the ones of those with nothing cached at all, and
    ``unreachable`` all of them.
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
    timeout: float = 10.0,
    client_factory: Callable[..., RegistryClient] = RegistryClient,
) -> RefreshReport:
    """Sync the registries whose cache is stale (all with ``force``; none ``offline``).

    A registry that fails keeps its previous cache (with a warning); one that has nothing
    cached at all is listed in ``failed``. A registry that failed less than
    :data:`RETRY_AFTER_FAILURE` seconds ago is not tried again (unless ``force``): its
    warning says how long ago. Each registry is refreshed, and warned about, once, however
    often it appears in ``sources``.
    """
    report = RefreshReport()
    unique = {s.id: s for s in sources}
    for source in unique.values():
        has_data = cache.sync_state(source.id) is not None
        if offline:
            if not has_data and source.kind != "builtin":
                report.warnings.append(f"registry {source.id!r} has never been synced (offline)")
                report.failed.append(source.id)
                report.unreachable.append(source.id)
            elif not has_data:
                report.synced.append(sync_source(cache, source))
            continue
        if not (force or is_stale(cache, source, ttl)):
            continue
        failed_at = cache.last_failure(source.id)
        now = time.time()
        if not force and failed_at is not None and now - failed_at < RETRY_AFTER_FAILURE:
            # Offline machines stay fast: no new attempt for a few minutes after a failure.
            how = "using cached data" if has_data else "no cached data"
            report.warnings.append(
                f"registry {source.id!r} was unreachable {age(now - failed_at)}; {how} "
                f"('mcpctl registry sync {source.id}' tries again now)"
            )
            report.unreachable.append(source.id)
            if not has_data:
                report.failed.append(source.id)
            continue
        try:
            report.synced.append(
                sync_source(cache, source, timeout=timeout, client_factory=client_factory)
            )
        except (RegistryError, UsageError) as exc:
            cache.note_failure(source.id)
            report.unreachable.append(source.id)
            if has_data:
                report.warnings.append(f"registry {source.id!r}: {exc.message}; using cached data")
            else:
                report.warnings.append(f"registry {source.id!r}: {exc.message}")
                report.failed.append(source.id)
    return report


def age(seconds: float) -> str:
    """How long ago, in the unit that fits: ``12 s ago``, ``3 min ago``, ``2 h ago``.

    Always rounded down (a failure 59 s ago is ``59 s ago``, 61 s ago ``1 min ago``); a
    time in the future (another machine's clock) is ``0 s ago``.
    """
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{int(seconds)} s ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} d ago"
