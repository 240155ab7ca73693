"""The code a stdio server runs, pinned: which package and version, and its integrity.

A lock file's configuration fingerprints pin what mcpctl was told to run; ``npx -y pkg``
still runs whatever ``pkg`` is today. :func:`parse_spec` reads the artifact from a command
line (``npx``, ``uvx``, ``pipx run``, ``docker run``), :func:`resolve_packages` asks the
registries what it is now -- the npm registry's ``dist.integrity``, PyPI's sha256 of the
distribution (a wheel preferred), a local image's digest -- and :func:`diff_packages` says
what moved since the lock was saved: a new version (``moved``), the same version with other
bytes (``republished``). :func:`pin_entries` writes a lock's versions into the commands.

Lookups use the registries' public metadata (:mod:`mcpctl.registry.metadata`), cached in the
cache dir; offline, the cache answers and the result says from when.

This module holds the differences; the rest is split by what it does, and re-exported here:
:mod:`~mcpctl.snapshot.packagespec` (reading command lines), :mod:`~mcpctl.snapshot.packagepins`
(pins, their lock-file form, pinning commands), :mod:`~mcpctl.snapshot.packageresolve`
(asking the registries).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcpctl.snapshot.packagepins import (
    UNRESOLVED,
    PackagePin,
    pin_entries,
    pins_from_data,
    pins_to_data,
)
from mcpctl.snapshot.packageresolve import Resolution, resolve_packages
from mcpctl.snapshot.packagespec import PackageSpec, parse_spec, specs_of

__all__ = [
    "UNRESOLVED",
    "PackageChange",
    "PackagePin",
    "PackageSpec",
    "Resolution",
    "compare_packages",
    "diff_packages",
    "parse_spec",
    "pin_entries",
    "pins_from_data",
    "pins_to_data",
    "resolve_packages",
    "specs_of",
]

ChangeKind = Literal["moved", "republished", "unpinned", "unresolved"]


@dataclass(frozen=True)
class PackageChange:
    """What one server's package did since the lock: ``moved`` to another version (or
    package), ``republished`` (the same version, other bytes), ``unpinned`` (a warning: the
    spec names no version, so what runs can change any day), ``unresolved`` (it could not be
    looked up now)."""

    server: str
    kind: ChangeKind
    old: str | None = None
    new: str | None = None
    pinned: bool = False
    reason: str | None = None

    @property
    def fails(self) -> bool:
        """Whether ``--exit-code`` fails on it."""
        return self.kind in ("moved", "republished")

    @property
    def message(self) -> str:
        """``moved 1.2.0 → 1.3.0 (unpinned)``, ``republished: same version, different
        integrity``..."""
        if self.kind == "moved":
            return f"moved {self.old} → {self.new} ({'pinned' if self.pinned else 'unpinned'})"
        if self.kind == "republished":
            return f"republished: same version ({self.new}), different integrity"
        if self.kind == "unpinned":
            return f"unpinned spec {self.new!r}: what runs can change any day"
        return f"unresolved: {self.reason}"

    def to_data(self) -> dict[str, Any]:
        """The JSON view."""
        return {"server": self.server, "kind": self.kind, "old": self.old, "new": self.new,
                "pinned": self.pinned, "reason": self.reason,
                "message": self.message}  # fmt: skip


def _version_text(pin: PackagePin) -> str:
    return pin.version or pin.integrity or "?"


def diff_packages(
    old: Mapping[str, PackagePin], new: Mapping[str, PackagePin]
) -> list[PackageChange]:
    """What each server's package did from the lock (``old``) to now (``new``), by server:
    moved and republished are changes; unpinned and unresolved are warnings."""
    out: list[PackageChange] = []
    for server in sorted(new):
        now = new[server]
        before = old.get(server)
        if not now.resolved:
            out.append(PackageChange(server, "unresolved", pinned=now.pinned, reason=now.reason))
        elif before is not None and before.resolved:
            if (before.ecosystem, before.name) != (now.ecosystem, now.name):
                out.append(PackageChange(server, "moved", before.label, now.label, now.pinned))
            elif before.version != now.version:
                out.append(PackageChange(server, "moved", _version_text(before),
                                         _version_text(now), now.pinned))  # fmt: skip
            elif None not in (before.integrity, now.integrity) and (
                before.integrity != now.integrity
            ):
                out.append(PackageChange(server, "republished", now.version, now.version,
                                         now.pinned))  # fmt: skip
        if not now.pinned:
            out.append(PackageChange(server, "unpinned", new=_spec_text(now)))
    return out


def _spec_text(pin: PackagePin) -> str:
    if pin.ecosystem == "npm":
        return f"{pin.name}@{pin.spec}" if pin.spec else pin.name
    return f"{pin.name}{pin.spec}"


def compare_packages(
    recorded: Mapping[str, PackagePin] | None, now: Resolution, *, source: str | None
) -> tuple[list[PackageChange], list[str]]:
    """What each package did since the lock read from ``source`` (``None``: there is no
    earlier snapshot) recorded ``recorded`` (``None``: it records none), and the warnings:
    the registries' own, a lock without packages, each unpinned spec."""
    warnings = list(now.warnings)
    if source is not None and recorded is None:
        warnings.append(
            f"packages were not compared: {source} records none; save it with --packages"
        )
    changes = diff_packages(recorded or {}, now.pins)
    warnings += [f"{c.server}: {c.message}" for c in changes if c.kind == "unpinned"]
    return changes, warnings
