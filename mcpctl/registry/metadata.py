"""Package metadata from the npm registry and PyPI's JSON API, kept in the cache dir.

Each document is fetched with the registry client's limits (one time limit per request,
retries within it, the size cap) and a deadline for all of them together; several are
fetched at once, each in a thread of its own. A document is kept -- reduced to what a lock
needs -- with its ETag and the time it was fetched: the next fetch asks for it with
``If-None-Match`` (a 304 costs no body), and when the registry cannot be reached the kept
copy answers, with its age, so the caller can say it checked against the cache. A document
that a redirect had to fetch from another host says so (:attr:`Fetched.redirect`, kept with
the copy); a redirect to another scheme is refused (:mod:`mcpctl.registry.client`).

The cache is a cache: a file that cannot be read is empty, one that cannot be written is
left as it was (:mod:`mcpctl.config.cachefiles`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpctl.errors import RegistryError
from mcpctl.registry.client import OFFLINE_HINT, RegistryClient

__all__ = [
    "NPM_REGISTRY",
    "PYPI_URL",
    "Fetched",
    "MetadataCache",
    "fetch_all",
    "npm_registry",
    "pypi_url",
]

NPM_REGISTRY = "https://registry.npmjs.org"
PYPI_URL = "https://pypi.org"
MAX_BYTES = 16 * 1024 * 1024  # the cache file
MAX_DOCUMENTS = 500  # kept, the most recently fetched first to stay
MAX_THREADS = 8
#: The abbreviated npm document: dist-tags and each version's dist, without the READMEs.
NPM_ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8"


def npm_registry(environ: Mapping[str, str] | None = None) -> str:
    """The npm registry's base URL (``MCPCTL_NPM_REGISTRY``, else the public one)."""
    env = os.environ if environ is None else environ
    return (env.get("MCPCTL_NPM_REGISTRY") or NPM_REGISTRY).rstrip("/")


def pypi_url(environ: Mapping[str, str] | None = None) -> str:
    """PyPI's base URL (``MCPCTL_PYPI_URL``, else the public one)."""
    env = os.environ if environ is None else environ
    return (env.get("MCPCTL_PYPI_URL") or PYPI_URL).rstrip("/")


@dataclass(frozen=True)
class Fetched:
    """One document: ``data`` (reduced), when it was fetched (a Unix time), and whether it
    came from the cache because the registry could not be reached (``offline``). ``error``
    (with ``data`` ``None``) says why there is none. ``redirect`` is ``(host asked, host
    that answered)`` when the registry redirected the request to another host."""

    data: Any
    fetched_at: float
    offline: bool = False
    error: str | None = None
    redirect: tuple[str, str] | None = None


@dataclass
class MetadataCache:
    """Reduced documents by URL, with their ETag and fetch time, in one JSON file."""

    path: Path | None
    records: dict[str, dict[str, Any]]

    @classmethod
    def load(cls, path: Path | None) -> MetadataCache:
        """The cache kept in the file ``path`` (``None``: an in-memory one; the user's is
        :attr:`mcpctl.paths.Paths.package_metadata`)."""
        if path is None:
            return cls(None, {})
        from mcpctl.config.cachefiles import read_records

        return cls(path, read_records(path, "documents", MAX_BYTES))

    def get(self, url: str) -> tuple[Any, str | None, float] | None:
        """(data, ETag, fetched at) of ``url``, if kept."""
        record = self.records.get(url)
        if record is None or "data" not in record:
            return None
        at = record.get("fetched_at")
        etag = record.get("etag")
        return (record["data"], etag if isinstance(etag, str) else None,
                float(at) if isinstance(at, int | float) else 0.0)  # fmt: skip

    def redirect(self, url: str) -> tuple[str, str] | None:
        """(host asked, host that answered) of the kept copy of ``url``, when a redirect
        took its request to another host."""
        found = (self.records.get(url) or {}).get("redirect")
        if isinstance(found, list) and len(found) == 2 and all(isinstance(h, str) for h in found):
            return found[0], found[1]
        return None

    def put(
        self,
        url: str,
        data: Any,
        etag: str | None,
        at: float,
        redirect: tuple[str, str] | None = None,
    ) -> None:
        """Keep ``data`` for ``url`` (and where a redirect took its request)."""
        self.records[url] = {"data": data, "etag": etag, "fetched_at": at}
        if redirect is not None:
            self.records[url]["redirect"] = list(redirect)

    def save(self) -> None:
        """Write the file (the most recent :data:`MAX_DOCUMENTS`); never raises."""
        if self.path is None:
            return
        from mcpctl.config.cachefiles import update_records

        def when(item: tuple[str, dict[str, Any]]) -> float:
            at = item[1].get("fetched_at")
            return float(at) if isinstance(at, int | float) else 0.0

        def merge(known: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
            merged = {**known, **self.records}
            kept = sorted(merged.items(), key=when, reverse=True)[:MAX_DOCUMENTS]
            return dict(sorted(kept))

        update_records(self.path, "documents", MAX_BYTES, merge)


Reducer = Callable[[Any], Any]
_Keep = tuple[Any, str | None, tuple[str, str] | None]  # data, ETag, redirect


def fetch_all(
    wanted: Mapping[str, Reducer],
    cache: MetadataCache,
    *,
    timeout: float = 10.0,
    deadline: float | None = None,
    client_factory: Callable[..., RegistryClient] = RegistryClient,
    now: Callable[[], float] = time.time,
) -> dict[str, Fetched]:
    """The documents at the URLs of ``wanted``, each reduced by its function (which raises
    ``ValueError`` for a document it cannot read), fetched at once; the cache is updated in
    memory (the caller saves it).

    A registry that cannot be reached, or does not answer by the deadline, is answered from
    the cache (``offline``); with nothing kept, the document's ``error`` says so. Never
    raises for what a registry does or sends.
    """
    if not wanted:
        return {}

    def one(url: str) -> tuple[str, Fetched, _Keep | None]:
        kept = cache.get(url)
        etag = kept[1] if kept is not None else None
        accept = NPM_ACCEPT if "/pypi/" not in url else None
        try:
            with client_factory(url, timeout=timeout, deadline=deadline) as client:
                document = client.get_document(url, etag=etag, accept=accept)
        except RegistryError as exc:
            offline = exc.hint == OFFLINE_HINT
            if offline and kept is not None:
                moved = cache.redirect(url)
                return url, Fetched(kept[0], kept[2], offline=True, redirect=moved), None
            why = exc.message + ("; nothing cached" if offline else "")
            return url, Fetched(None, now(), offline=offline, error=why), None
        moved = document.redirect
        if document.data is None and kept is not None:  # 304: the kept copy is current
            return url, Fetched(kept[0], now(), redirect=moved), (kept[0], etag, moved)
        try:
            data = wanted[url](document.data)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            why = f"{url}: unexpected answer: {exc}"
            return url, Fetched(None, now(), error=why, redirect=moved), None
        return url, Fetched(data, now(), redirect=moved), (data, document.etag, moved)

    out: dict[str, Fetched] = {}
    workers = min(MAX_THREADS, len(wanted))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mcpctl-packages") as pool:
        for url, fetched, keep in pool.map(one, sorted(wanted)):
            out[url] = fetched
            if keep is not None:
                cache.put(url, keep[0], keep[1], fetched.fetched_at, keep[2])
    return out
