"""The registries mcpctl knows (``registries.json``), and finding a server in the cache.

Two are built in: ``official`` (the official MCP Registry's HTTP API) and ``builtin`` (a small
starter catalog shipped in the package, so discovery works with no network). Users add
HTTP registries that speak the same API, or local JSON files (air-gapped teams, curated
internal catalogs, ``discover --export`` files). Syncing them into the cache is
:mod:`mcpctl.registry.syncing`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcpctl.errors import UsageError
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.registry.records import Record

__all__ = [
    "BUILTIN_FILE",
    "DEFAULT_TTL",
    "RETRY_AFTER_FAILURE",
    "RegistrySource",
    "add_source",
    "age",
    "change_sources",
    "find_record",
    "is_stale",
    "load_sources",
    "parse_location",
    "remove_source",
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
        UsageError: registries.json exists but is not valid, is not a regular file (a
            FIFO, a device) or is over the size limit.
        StorageError: it cannot be read.
    """
    from mcpctl.config.safefile import read_file

    return _parse_sources(path, read_file(path))


def _parse_sources(path: Path, raw: bytes | None) -> list[RegistrySource]:
    sources = {s.id: s for s in DEFAULTS}
    if raw is None:
        return list(sources.values())
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
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


def _dump_sources(sources: Sequence[RegistrySource]) -> bytes:
    """registries.json's bytes: the user's registries, and tombstones for removed defaults."""
    from mcpctl.config.jsontext import dump_config

    ids = {s.id for s in sources}
    items: list[dict[str, Any]] = [s.to_dict() for s in sources if s not in DEFAULTS]
    items += [{"id": d.id, "removed": True} for d in DEFAULTS if d.id not in ids]
    return dump_config({"registries": items})


def change_sources(
    path: Path,
    change: Callable[[list[RegistrySource]], list[RegistrySource]],
    *,
    locks: Path | None = None,
) -> list[RegistrySource]:
    """Read registries.json, apply ``change`` and write what it returns, all under the
    file's lock, so that two commands changing it at once both land. Returns the
    registries as written.

    Raises:
        UsageError: registries.json is not valid, not a regular file or too large.
        ReadOnlyError, LockTimeoutError, StorageError: it cannot be written.
    """
    from mcpctl.config.filestore import FileStore

    changed: list[RegistrySource] = []

    def apply(current: bytes | None) -> bytes:
        changed[:] = change(_parse_sources(path, current))
        return _dump_sources(changed)

    FileStore(path, locks=locks).replace(apply, action="registries")
    return changed


def add_source(path: Path, source: RegistrySource, *, locks: Path | None = None) -> None:
    """Add ``source`` to registries.json (replacing a registry of the same id).

    Raises:
        the errors of :func:`change_sources`.
    """
    change_sources(path, lambda now: [s for s in now if s.id != source.id] + [source],
                   locks=locks)  # fmt: skip


def remove_source(path: Path, registry_id: str, *, locks: Path | None = None) -> None:
    """Remove the registry ``registry_id`` (a default one is remembered as removed).

    Raises:
        UsageError: there is no such registry.
        and the errors of :func:`change_sources`.
    """

    def without(now: list[RegistrySource]) -> list[RegistrySource]:
        if registry_id not in {s.id for s in now}:
            raise UsageError(f"no registry {registry_id!r}", hint="run 'mcpctl registry list'")
        return [s for s in now if s.id != registry_id]

    change_sources(path, without, locks=locks)


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
    offline: bool = False,
) -> tuple[str, Record]:
    """(registry, record) for ``NAME[@VERSION]`` from the cache (latest when no version).

    ``unavailable`` names registries that could not be read just now: when the server is
    not found, the error says it may be in one of them. ``offline`` says the cache was not
    refreshed on purpose: the error says only the cache was searched.

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
        if offline:
            if unavailable:
                have = "has" if len(unavailable) == 1 else "have"
                hint = (
                    f"{listed} {have} never been synced: 'mcpctl registry sync {unavailable[0]}' "
                    "when online"
                )
            else:
                hint = (f"did you mean {guesses[0]!r}? " if guesses else "") + (
                    "the cache may be out of date: 'mcpctl registry sync' when online, or leave "
                    "out --offline"
                )
            raise UsageError(
                f"no server {name!r} in the registries' cache (offline: the network was not used)",
                hint=hint,
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
