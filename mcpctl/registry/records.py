"""Registry records as the official API serves them, read tolerantly.

A record is ``{"server": <server.json>, "_meta": {"io.modelcontextprotocol.registry/official":
{...}}}``; file registries may hold bare ``server.json`` documents too. Real data has quirks
(empty ``repository`` objects, ``version: "latest"`` in packages, unknown ``format`` values,
several ``$schema`` versions): everything here accepts them and never raises on a bad field.
Everything a registry sends is untrusted: :func:`clean_text` strips terminal escape sequences
and control characters (:func:`mcpctl.text.controls_re`: C0, DEL, C1, bidirectional controls,
zero-width characters, line separators, lone surrogates) from what is shown and searched;
the conversion to a config entry refuses them instead (:mod:`mcpctl.registry.convert`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mcpctl.text import controls_in

__all__ = [
    "OFFICIAL_META",
    "Record",
    "clean_text",
    "describe_delivery",
    "describe_inputs",
    "record_from_json",
    "slug_of",
    "version_key",
]

OFFICIAL_META = "io.modelcontextprotocol.registry/official"
# CSI, OSC (titles, hyperlinks) up to its terminator, DCS/SOS/PM/APC strings up to theirs,
# then any other two-character escape (ESC c resets the terminal); the control characters
# left over (a lone ESC, C1
# controls such as U+009B) are removed one by one.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
    r"|\x1b[PX^_][^\x1b]*\x1b\\"
    r"|\x1b[0-~]"
)


def clean_text(value: object, *, limit: int = 2000) -> str:
    """A registry string made safe to print: no escape sequences or control characters."""
    if not isinstance(value, str):
        return ""
    text = _ESCAPES.sub("", value)
    text = controls_in(text).sub("", text)
    return text[:limit]


def slug_of(name: str) -> str:
    """``io.github.user/my-server`` -> ``my-server`` (the last path segment)."""
    return name.rsplit("/", 1)[-1]


def version_key(version: str) -> tuple[Any, ...]:
    """Sort key for versions: numeric parts compare as numbers, pre-releases sort first."""
    main, _, pre = version.partition("-")
    parts: list[Any] = []
    for piece in re.split(r"[.+]", main):
        parts.append((0, int(piece), "") if piece.isdigit() else (1, 0, piece))
    return (tuple(parts), 0 if pre else 1, pre)


@dataclass(frozen=True)
class Record:
    """One version of one server, normalised for the cache."""

    name: str
    version: str
    status: str
    is_latest: bool | None  # None: the source does not say (file registries)
    updated_at: str
    server: dict[str, Any]

    @property
    def title(self) -> str:
        """Display title (falls back to the slug)."""
        return clean_text(self.server.get("title")) or slug_of(self.name)

    @property
    def description(self) -> str:
        """Description, cleaned."""
        return clean_text(self.server.get("description"))

    def transports(self) -> list[str]:
        """``stdio`` for packages (or the package's transport), remote types for remotes."""
        found: list[str] = []
        for pkg in _dicts(self.server.get("packages")):
            kind = clean_text(_dict(pkg.get("transport")).get("type"), limit=40) or "stdio"
            if kind not in found:
                found.append(kind)
        for remote in _dicts(self.server.get("remotes")):
            kind = clean_text(remote.get("type"), limit=40)
            if kind and kind not in found:
                found.append(kind)
        return found

    def package_types(self) -> list[str]:
        """``npm``, ``pypi``, ``oci``, ``nuget``, ``mcpb``... in document order."""
        out: list[str] = []
        for pkg in _dicts(self.server.get("packages")):
            kind = clean_text(pkg.get("registryType"), limit=40)
            if kind and kind not in out:
                out.append(kind)
        return out

    def needs_secrets(self) -> bool:
        """Whether some variable or header it needs is marked secret."""
        return any(item.get("isSecret") is True for item in _inputs(self.server))


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _dicts(value: object) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _inputs(server: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for pkg in _dicts(server.get("packages")):
        found += _dicts(pkg.get("environmentVariables"))
        found += _dicts(_dict(pkg.get("transport")).get("headers"))
    for remote in _dicts(server.get("remotes")):
        found += _dicts(remote.get("headers"))
    return found


def record_from_json(raw: object) -> Record | None:
    """A :class:`Record` from an API record or a bare ``server.json``; ``None`` if unusable."""
    if not isinstance(raw, dict):
        return None
    options = raw.get("options")
    if "transport" in raw and isinstance(options, dict) and isinstance(options.get("server"), dict):
        raw = {"server": options["server"]}  # a descriptor written by discover --export
    server = raw.get("server") if isinstance(raw.get("server"), dict) else raw
    assert isinstance(server, dict)
    name, version = server.get("name"), server.get("version")
    if not isinstance(name, str) or not clean_text(name).strip() or not isinstance(version, str):
        return None
    meta = _dict(_dict(raw.get("_meta")).get(OFFICIAL_META))
    status = clean_text(meta.get("status"), limit=40) or "active"
    latest = meta.get("isLatest") if isinstance(meta.get("isLatest"), bool) else None
    updated = meta.get("updatedAt") or meta.get("publishedAt") or ""
    return Record(
        name=clean_text(name, limit=200),
        version=clean_text(version, limit=100),
        status=status,
        is_latest=latest,
        updated_at=clean_text(updated, limit=60),
        server=server,
    )


def describe_inputs(server: dict[str, Any]) -> list[dict[str, Any]]:
    """Every value a server asks for (variables, arguments, headers), cleaned for display."""
    out: list[dict[str, Any]] = []

    def add(kind: str, item: dict[str, Any], name: object) -> None:
        out.append({
            "kind": kind,
            "name": clean_text(name),
            "required": item.get("isRequired") is True,
            "secret": item.get("isSecret") is True,
            "description": clean_text(item.get("description")),
        })  # fmt: skip

    for pkg in _dicts(server.get("packages")):
        for var in _dicts(pkg.get("environmentVariables")):
            add("env", var, var.get("name"))
        for arg in [*_dicts(pkg.get("runtimeArguments")), *_dicts(pkg.get("packageArguments"))]:
            kind = f"argument ({clean_text(arg.get('type')) or 'positional'})"
            add(kind, arg, arg.get("name") or arg.get("valueHint") or arg.get("value"))
    for remote in _dicts(server.get("remotes")):
        for header in _dicts(remote.get("headers")):
            add("header", header, header.get("name"))
    return out


def describe_delivery(server: dict[str, Any]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(packages, remotes) of a server, cleaned for display."""
    keys = ("registryType", "identifier", "version", "runtimeHint")
    packages = [{k: clean_text(p.get(k)) for k in keys} for p in _dicts(server.get("packages"))]
    remotes = [
        {"type": clean_text(r.get("type")), "url": clean_text(r.get("url"))}
        for r in _dicts(server.get("remotes"))
    ]
    return packages, remotes
