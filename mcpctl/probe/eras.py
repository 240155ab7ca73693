"""The two protocol eras, which one to speak, and the memory of which one each server spoke.

MCP has two eras: the handshake revisions (``initialize``, sessions, ``ping``; up to
2025-11-25) and the stateless revisions from 2026-07-28 (``server/discover``, every request
carrying its version in ``_meta``). :func:`mcpctl.probe.negotiate.negotiate` decides which
one a connection speaks; this module holds what it decides with and does not import the SDK:

* :data:`ProtocolMode` -- ``auto`` (detect), ``modern`` or ``legacy`` (pinned), from the
  ``--protocol`` flag or an entry's ``protocol`` field;
* :class:`Era` -- what a connection ended up speaking;
* :class:`EraMemory` -- the era each server configuration spoke last, kept in the state
  directory, so that a handshake-only server that stays silent on ``server/discover``
  costs its discovery timeout once, not on every probe.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcpctl.config.cachefiles import read_records, update_records
from mcpctl.config.model import PROTOCOL_MODES, ProtocolMode

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = [
    "ERA_NAMES",
    "PROTOCOL_MODES",
    "Era",
    "EraMemory",
    "EraName",
    "ProtocolMode",
    "effective_mode",
    "era_key",
    "kept_versions",
]

EraName = Literal["modern", "legacy"]
ERA_NAMES: tuple[EraName, ...] = ("modern", "legacy")

MEMORY_FILENAME = "protocol-eras.json"
MEMORY_MAX_BYTES = 1024 * 1024
MEMORY_MAX_ENTRIES = 500  # server configurations remembered, the most recently learnt kept
#: Versions kept of what a server says it serves, and the longest kept (a revision is a date,
#: ``2025-11-25``): whatever a server sends, one entry stays under a kilobyte.
MAX_VERSIONS = 16
MAX_VERSION_CHARS = 32
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def kept_versions(versions: Iterable[object]) -> tuple[str, ...]:
    """What is kept of the versions a server names: strings of at most
    :data:`MAX_VERSION_CHARS` characters, each once, revisions (dates) first, at most
    :data:`MAX_VERSIONS` of them, in the server's order."""
    names = [v for v in versions if isinstance(v, str) and 0 < len(v) <= MAX_VERSION_CHARS]
    unique = list(dict.fromkeys(names))
    chosen = set([v for v in unique if _DATE.fullmatch(v)][:MAX_VERSIONS])
    chosen.update([v for v in unique if v not in chosen][: MAX_VERSIONS - len(chosen)])
    return tuple(v for v in unique if v in chosen)


@dataclass(frozen=True)
class Era:
    """What one connection speaks.

    Attributes:
        name: ``modern`` (2026-07-28 and later, no handshake) or ``legacy`` (``initialize``).
        version: the protocol version spoken.
        supported: the versions the server said it serves (``server/discover``'s list, or
            the ``supported`` list of an unsupported-version error); empty when it said none.
        detected: how the era was chosen: ``pinned`` (``--protocol`` or the entry),
            ``remembered`` (the last probe's), ``discovered`` (``server/discover`` answered),
            ``fallback`` (it did not: the handshake worked).
    """

    name: EraName
    version: str
    supported: tuple[str, ...] = ()
    detected: str = "discovered"

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "era": self.name,
            "version": self.version,
            "supported": list(self.supported),
            "detected": self.detected,
        }


def effective_mode(requested: ProtocolMode | None, entry: ServerEntry) -> ProtocolMode:
    """The mode a connection uses: the one asked for, else the entry's, else ``auto``."""
    if requested is not None:
        return requested
    return entry.protocol or "auto"


def era_key(entry: ServerEntry) -> str:
    """The key an entry's era is remembered under: a digest of its configuration as written
    (placeholders unresolved), so a changed command, URL or transport is probed afresh."""
    data = entry.to_data()
    data.pop("enabled", None)
    data.pop("allow_literal", None)  # says what may be written, not how to connect
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass
class EraMemory:
    """The era each server configuration spoke when last reached, kept in one JSON file.

    It is a cache: a file that cannot be read (missing, not a regular file, too large, not
    JSON) is an empty memory, and one that cannot be written is left as it was. Nothing in
    it is secret: keys are digests of entries as written, values are era names and versions
    (at most :data:`MAX_VERSIONS` of :data:`MAX_VERSION_CHARS` characters: one server cannot
    swell the file past what it is read with). Processes share the file: each change is
    merged into it under its lock (:func:`mcpctl.config.cachefiles.update_records`), and
    threads may share one memory.
    """

    path: Path | None = None
    _eras: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    _loaded: bool = field(default=False, repr=False)
    _mutex: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def in_dir(cls, state_dir: Path) -> EraMemory:
        """The memory kept in ``state_dir`` (the user state directory)."""
        return cls(state_dir / MEMORY_FILENAME)

    def recall(self, entry: ServerEntry) -> Era | None:
        """The era ``entry`` spoke last, if it is remembered."""
        with self._mutex:
            self._load()
            found = self._eras.get(era_key(entry))
        if not isinstance(found, dict):
            return None
        name, version = found.get("era"), found.get("version")
        if name not in ERA_NAMES or not isinstance(version, str):
            return None
        if len(version) > MAX_VERSION_CHARS:
            return None
        supported = found.get("supported")
        versions = kept_versions(supported) if isinstance(supported, list) else ()
        return Era(name, version, versions, "remembered")

    def remember(self, entry: ServerEntry, era: Era) -> None:
        """Record the era ``entry`` spoke (written at once when it is news; the file's lock
        is waited for a moment at most, so call it from a worker thread in an event loop)."""
        key = era_key(entry)
        record = {"era": era.name, "version": era.version,
                  "supported": list(kept_versions(era.supported))}  # fmt: skip
        with self._mutex:
            self._load()
            known = self._eras.get(key)
            if isinstance(known, dict) and all(known.get(k) == v for k, v in record.items()):
                return
            self._eras.pop(key, None)
            self._eras[key] = mine = {**record, "at": int(time.time())}
        if self.path is None:
            return

        # Another process may have remembered other servers since this one read the file.
        def merge(merged: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
            merged.pop(key, None)
            merged[key] = mine
            while len(merged) > MEMORY_MAX_ENTRIES:
                del merged[next(iter(merged))]
            return merged

        # Not under the mutex: a wait for the file's lock must not hold up recall().
        written = update_records(self.path, "eras", MEMORY_MAX_BYTES, merge)
        if written is not None:
            with self._mutex:
                self._eras.update((k, v) for k, v in written.items() if k != key)

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            self._eras = _read(self.path) if self.path is not None else {}


def _read(path: Path) -> dict[str, dict[str, Any]]:
    return read_records(path, "eras", MEMORY_MAX_BYTES)


def describe_versions(versions: Sequence[str], limit: int = 100) -> str:
    """``2025-06-18, 2025-11-25`` (or ``none named``) in about ``limit`` characters at most,
    whatever a server names: each version cut to :data:`MAX_VERSION_CHARS` characters, and
    the list cut with how many there are (``..., 2025-06-18, … (5,000 in all)``)."""
    if not versions:
        return "none named"
    shown: list[str] = []
    size = 0
    for version in versions:
        text = version
        if len(text) > MAX_VERSION_CHARS:
            text = text[: MAX_VERSION_CHARS - 1] + "…"
        if shown and size + len(text) > limit:
            break
        shown.append(text)
        size += len(text) + 2
    if len(shown) < len(versions):
        shown.append(f"… ({len(versions):,} in all)")
    return ", ".join(shown)
