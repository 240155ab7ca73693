"""A lock file's package pins: :class:`PackagePin` (what a spec resolved to), its form in a
lock file (:func:`pins_to_data`, :func:`pins_from_data`), and :func:`pin_entries`, which
writes a lock's versions into the commands."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from mcpctl.config.model import ServerEntry
from mcpctl.snapshot.packagespec import PackageSpec, specs_of

__all__ = [
    "UNRESOLVED",
    "PackagePin",
    "pin_entries",
    "pin_warnings",
    "pins_from_data",
    "pins_to_data",
]

UNRESOLVED = "unresolved"


@dataclass(frozen=True)
class PackagePin:
    """What a server's spec resolved to: ``version`` and ``integrity`` (npm's
    ``dist.integrity``; ``sha256:<hex>`` of a PyPI distribution, ``file`` naming it; an
    image's digest), or ``status`` ``unresolved`` with the ``reason``. ``redirect``
    (``"registry.npmjs.org -> other.host"``) says that the registry redirected the lookup to
    another host, which answered."""

    ecosystem: str
    name: str
    spec: str
    pinned: bool
    version: str | None = None
    integrity: str | None = None
    file: str | None = None
    status: str = "resolved"
    reason: str | None = None
    redirect: str | None = None

    @property
    def resolved(self) -> bool:
        """Whether a version (or a digest) is known."""
        return self.status != UNRESOLVED

    @property
    def label(self) -> str:
        """``pkg 1.2.0`` (``image@sha256:...`` for an image without a version)."""
        return f"{self.name} {self.version or self.integrity or '?'}"

    def to_data(self) -> dict[str, Any]:
        """The JSON view (as written in a lock file)."""
        out: dict[str, Any] = {"ecosystem": self.ecosystem, "name": self.name,
                               "spec": self.spec, "pinned": self.pinned}  # fmt: skip
        for key in ("version", "integrity", "file"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["status"] = self.status
        for key in ("reason", "redirect"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def pins_to_data(pins: Mapping[str, PackagePin]) -> dict[str, Any]:
    """The ``packages`` section of a lock file (sorted by server)."""
    return {name: pins[name].to_data() for name in sorted(pins)}


def pin_warnings(pins: Mapping[str, PackagePin]) -> list[str]:
    """What a lock about to record ``pins`` should say: a package that did not resolve, and one
    the config does not pin (recorded as it resolves now), by server."""
    out: list[str] = []
    for name, pin in sorted(pins.items()):
        if not pin.resolved:
            out.append(f"{name}: package {pin.name} unresolved: {pin.reason}")
        elif not pin.pinned:
            out.append(
                f"{name}: {pin.name} is not pinned in the config; recorded {pin.version}"
                " as it resolves now"
            )
    return out


def pins_from_data(data: Any) -> dict[str, PackagePin]:
    """The pins of a lock file's ``packages`` section.

    Raises:
        ValueError: it is not an object of objects, or a value has the wrong type (the
            message says where).
    """
    if not isinstance(data, dict):
        raise ValueError("packages: expected an object")
    out: dict[str, PackagePin] = {}
    for server, item in data.items():
        if not isinstance(item, dict):
            raise ValueError(f"packages.{server}: expected an object")
        values: dict[str, Any] = {}
        for key in ("ecosystem", "name", "spec", "version", "integrity", "file", "status",
                    "reason", "redirect"):  # fmt: skip
            value = item.get(key)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"packages.{server}.{key}: expected a string")
            values[key] = value
        pinned = item.get("pinned", False)
        if not isinstance(pinned, bool):
            raise ValueError(f"packages.{server}.pinned: expected true or false")
        if not values["name"]:
            raise ValueError(f"packages.{server}.name: expected a string")
        out[server] = PackagePin(
            values["ecosystem"] or "npm", values["name"], values["spec"] or "", pinned,
            values["version"], values["integrity"], values["file"],
            values["status"] or "resolved", values["reason"], values["redirect"],
        )  # fmt: skip
    return out


def pin_entries(
    entries: Mapping[str, ServerEntry], pins: Mapping[str, PackagePin]
) -> tuple[dict[str, ServerEntry], list[str]]:
    """``entries`` with each package spec replaced by the version the lock recorded
    (``npx -y pkg@1.2.0``, ``uvx pkg==1.2.0``, ``uvx --from pkg==1.2.0 cmd``,
    ``image@sha256:...``), and a warning for each package-running server the lock does not
    pin (missing, unresolved, or another package now)."""
    out = dict(entries)
    warnings: list[str] = []
    for name, spec in specs_of(entries).items():
        pin = pins.get(name)
        if pin is None:
            warnings.append(f"{name}: not in the lock file's packages: rendered unpinned")
            continue
        if not pin.resolved or (pin.ecosystem, pin.name) != (spec.ecosystem, spec.name):
            why = (
                f"the lock records {pin.name}, the config runs {spec.name}"
                if pin.resolved
                else f"the lock could not resolve it ({pin.reason})"
            )
            warnings.append(f"{name}: {why}: rendered unpinned")
            continue
        token = _pinned_token(spec, pin)
        if token is None:
            warnings.append(
                f"{name}: the lock's {pin.version or pin.integrity!r} is not a version of "
                f"{spec.name}: rendered unpinned"
            )
            continue
        entry = entries[name]
        args = list(entry.args)
        args[spec.index] = token
        out[name] = replace(entry, args=tuple(args))
    return out, warnings


def _pinned_token(spec: PackageSpec, pin: PackagePin) -> str | None:
    """The spec naming the lock's version, or ``None`` when the lock holds no valid one (a
    lock file may come from anywhere: nothing but a version goes into a command)."""
    from mcpctl.snapshot.versions import is_npm_version, is_pypi_version

    version = pin.version or ""
    if spec.ecosystem == "npm":
        return f"{spec.name}@{version}" if is_npm_version(version) else None
    if spec.ecosystem == "pypi":
        return f"{spec.name}{spec.extras}=={version}" if is_pypi_version(version) else None
    if pin.integrity and re.fullmatch(r"sha256:[0-9a-f]{64}", pin.integrity):
        return f"{spec.name}@{pin.integrity}"
    return None
