"""The tool listings servers sent, kept as long as they said they may be (``tools --cached``).

A server of the stateless era (2026-07-28) says how long a listing stays fresh (``ttlMs``) and
whether it may be shared (``cacheScope``); one of the handshake era says nothing, so its
listing is stale at once. :class:`ListingCache` keeps the last listing of each server
configuration (keyed like the era memory: a digest of the entry as written, so any change
of command, URL, headers or credentials' placeholders starts afresh), and
:func:`cached_or_probed` serves fresh listings without starting their servers and probes the
rest -- falling back to a stale listing, with its age, when the probe fails.

Nothing secret is kept: tool definitions as listed, and the server's name. A "private" listing
is kept in the user's own cache directory, which nobody shares.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpctl.config.cachefiles import read_records, update_records
from mcpctl.config.model import ServerEntry
from mcpctl.probe.eras import era_key
from mcpctl.probe.health import ProbeResult, ServerKind
from mcpctl.probe.tools import ToolInfo

__all__ = ["LISTINGS_FILENAME", "CachedListing", "ListingCache", "cached_or_probed"]

LISTINGS_FILENAME = "tool-listings.json"
MAX_BYTES = 16 * 1024 * 1024
MAX_SERVERS = 200  # listings kept, the most recently listed first to stay
MAX_TOOLS = 1000  # per server


@dataclass(frozen=True)
class CachedListing:
    """One server's tools as last listed, and for how long they stay fresh.

    ``ttl_ms`` is ``None`` when the server gave no caching hint (stale at once).
    """

    tools: list[ToolInfo]
    listed_at: float
    ttl_ms: int | None = None
    scope: str | None = None
    protocol_version: str | None = None

    def age(self, now: float | None = None) -> float:
        """Seconds since the listing was taken."""
        return max(0.0, (time.time() if now is None else now) - self.listed_at)

    def fresh(self, now: float | None = None) -> bool:
        """Whether the server said the listing may still be used."""
        return self.ttl_ms is not None and self.age(now) * 1000 < self.ttl_ms

    def to_dict(self, now: float | None = None) -> dict[str, Any]:
        """JSON form of the caching facts (not the tools)."""
        return {
            "age_s": round(self.age(now), 1),
            "ttl_ms": self.ttl_ms,
            "scope": self.scope,
            "fresh": self.fresh(now),
        }


@dataclass
class ListingCache:
    """The last tool listing of each server configuration, in one JSON file (a cache: a file
    that cannot be read is empty, one that cannot be written is left as it was)."""

    path: Path
    _data: dict[str, dict[str, Any]] | None = field(default=None, repr=False)

    @classmethod
    def in_dir(cls, cache_dir: Path) -> ListingCache:
        """The cache kept in ``cache_dir`` (the user cache directory)."""
        return cls(cache_dir / LISTINGS_FILENAME)

    def get(self, entry: ServerEntry) -> CachedListing | None:
        """The last listing of ``entry``, if any."""
        found = self._load().get(era_key(entry))
        return _listing(found) if isinstance(found, dict) else None

    def all_fresh(
        self, chosen: Iterable[tuple[str, ServerEntry, ServerKind]]
    ) -> list[ProbeResult] | None:
        """The results of ``chosen`` servers when every one has a fresh listing, else
        ``None`` (then :func:`cached_or_probed` probes the others): no event loop, no
        server, when nothing needs a probe."""
        now = time.time()
        served = []
        for name, entry, kind in chosen:
            found = self.get(entry)
            if found is None or not found.fresh(now):
                return None
            served.append(_from_cache(name, entry, kind, found, now))
        return served

    def put_results(self, results: Iterable[tuple[ServerEntry, ProbeResult]]) -> None:
        """Keep the listing of every healthy result (one write for them all, merged under
        the file's lock with what other processes kept meanwhile)."""
        listed: dict[str, dict[str, Any]] = {}
        for entry, result in results:
            if result.error is not None or result.from_cache is not None:
                continue
            listed[era_key(entry)] = {
                "listed_at": time.time(),
                "ttl_ms": result.listing_ttl_ms,
                "scope": result.listing_scope,
                "protocol_version": result.protocol_version,
                "tools": [t.to_dict() for t in result.tools[:MAX_TOOLS]],
            }
        if not listed:
            return

        def merge(data: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
            for key, record in listed.items():
                data.pop(key, None)
                data[key] = record
            while len(data) > MAX_SERVERS:
                del data[next(iter(data))]
            return data

        written = update_records(self.path, "listings", MAX_BYTES, merge)
        self._data = written if written is not None else merge(dict(self._load()))

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._data is None:
            self._data = read_records(self.path, "listings", MAX_BYTES)
        return self._data


def _listing(raw: dict[str, Any]) -> CachedListing | None:
    listed_at, tools = raw.get("listed_at"), raw.get("tools")
    if not isinstance(listed_at, int | float) or not isinstance(tools, list):
        return None
    ttl = raw.get("ttl_ms")
    infos = []
    for t in tools[:MAX_TOOLS]:
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            continue
        schema = t.get("input_schema")
        title = t.get("title")
        support = t.get("task_support")  # what the tool said of tasks, as it said it
        execution = {"execution": {"taskSupport": support}} if isinstance(support, str) else {}
        infos.append(
            ToolInfo(
                t["name"], str(t.get("description") or ""),
                schema if isinstance(schema, dict) else {},
                title if isinstance(title, str) else None, execution,
            )
        )  # fmt: skip
    version = raw.get("protocol_version")
    return CachedListing(
        infos,
        float(listed_at),
        ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0 else None,
        raw.get("scope") if raw.get("scope") in ("public", "private") else None,
        version if isinstance(version, str) else None,
    )


async def cached_or_probed(
    chosen: list[tuple[str, ServerEntry, ServerKind]],
    cache: ListingCache,
    **probe_options: Any,
) -> list[ProbeResult]:
    """The tools of ``chosen`` servers: a fresh cached listing as it is (no server started),
    the others probed (:func:`mcpctl.probe.health.probe_all` with ``probe_options``); a probe
    that fails falls back to the stale listing, with a warning saying how old it is.
    Results are in input order; a cached one has ``from_cache`` set (its age in seconds).
    """
    from mcpctl.probe.health import probe_all

    now = time.time()
    served: dict[str, ProbeResult] = {}
    stale: dict[str, CachedListing] = {}
    to_probe: list[tuple[str, ServerEntry, ServerKind]] = []
    for name, entry, kind in chosen:
        found = cache.get(entry)
        if found is not None and found.fresh(now):
            served[name] = _from_cache(name, entry, kind, found, now)
            continue
        if found is not None:
            stale[name] = found
        to_probe.append((name, entry, kind))
    probed = await probe_all(to_probe, **probe_options) if to_probe else []
    entries = {name: entry for name, entry, _ in chosen}
    cache.put_results((entries[r.name], r) for r in probed)
    for r in probed:
        old = stale.get(r.name)
        if r.error is not None and old is not None:
            kept = _from_cache(r.name, entries[r.name], r.type, old, now)
            kept.warnings.append(
                f"the probe failed ({r.error.code}: {r.error.message}); these tools were "
                f"listed {_ago(old.age(now))}"
            )
            served[r.name] = kept
        else:
            served[r.name] = r
    return [served[name] for name, _, _ in chosen if name in served]


def _from_cache(
    name: str, entry: ServerEntry, kind: ServerKind, found: CachedListing, now: float
) -> ProbeResult:
    return ProbeResult(
        name=name, type=kind, transport=entry.effective_transport, available=True,
        healthy=True, protocol_version=found.protocol_version, tool_count=len(found.tools),
        tools=list(found.tools), listing_ttl_ms=found.ttl_ms, listing_scope=found.scope,
        from_cache=found.age(now),
    )  # fmt: skip


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 36 * 3600:
        return f"{seconds / 3600:.1f} h ago"
    return f"{seconds / 86400:.1f} days ago"
