"""What a rendering starts from besides the config: a template document and a lock file.

:func:`load_template` reads the base document the servers go under (``render --template``),
with ``<name>.local.json`` beside it merged over it (:func:`merge_documents`);
:func:`load_pins` reads the tools and packages a lock file pinned (``render --pinned``): the
tools for :func:`mcpctl.render.render`'s ``pinned``, the packages for :func:`pin_packages`,
which writes their versions into the entries rendered. Both files may come from elsewhere (a cloned
repository): they are read through :mod:`mcpctl.config.safefile`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpctl.errors import UsageError

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.snapshot.packages import PackagePin

__all__ = [
    "launched_unpinned",
    "load_pins",
    "load_template",
    "merge_documents",
    "pin_packages",
]


def load_template(path: Path) -> dict[str, Any]:
    """A template document, with ``<name>.local.json`` beside it merged over it when present.

    Raises:
        UsageError: the file is missing, not a regular file, too large, or not a JSON object.
        StorageError: it cannot be read.
    """
    base = _read_json(path)
    local = path.with_name(f"{path.stem}.local{path.suffix or '.json'}")
    if local.exists():
        base = merge_documents(base, _read_json(local))
    return base


def _read_json(path: Path) -> dict[str, Any]:
    from mcpctl.config.safefile import decode_text, loads_json, read_file

    raw = read_file(path)
    if raw is None:
        raise UsageError(f"template {path} does not exist")
    data = loads_json(decode_text(raw, path), path)
    if not isinstance(data, dict):
        raise UsageError(f"template {path} must be a JSON object")
    return data


def merge_documents(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` merged into a copy of ``base``: objects key by key, at every depth; any other
    value of ``over`` (a list included) replaces ``base``'s."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_documents(out[key], value)
        else:
            out[key] = value
    return out


def load_pins(
    path: Path,
) -> tuple[dict[str, list[str]] | None, dict[str, PackagePin] | None, list[str]]:
    """The tools a lock file pinned, per server (``None``: it pins no tool), the packages it
    recorded (``None``: none), and warnings.

    Raises:
        UsageError: there is no such file, or it is not a snapshot.
        StorageError: it cannot be read.
    """
    from mcpctl.snapshot.files import load_snapshot
    from mcpctl.snapshot.probing import pinned_tools

    found = load_snapshot(path)
    if found is None:
        raise UsageError(
            f"there is no lock file at {path}",
            hint=f"record one with: mcpctl snapshot save --probe -o {path}",
        )
    if not found.probed:
        if found.packages is not None:
            return None, found.packages, []
        return {}, None, [f"{path} has no probe data, so it pins no tool (save it with --probe)"]
    return pinned_tools(found), found.packages, []


def pin_packages(
    entries: Mapping[str, ServerEntry],
    only: Sequence[str],
    packages: Mapping[str, PackagePin] | None,
    lock: Path | None,
) -> tuple[Mapping[str, ServerEntry], list[str]]:
    """``entries`` with the package versions of the lock written in (the rendered ones), and
    warnings: a server the lock does not pin; a lock without packages."""
    if lock is None:
        return entries, []
    from mcpctl.snapshot.packages import pin_entries, specs_of

    chosen = {n: e for n, e in entries.items() if e.enabled and (not only or n in only)}
    if packages is None:
        if specs_of(chosen):
            return entries, [
                f"{lock} records no packages, so the versions the servers run are not pinned "
                "(save it with --packages)"
            ]
        return entries, []
    pinned, warnings = pin_entries(chosen, packages)
    return {**entries, **pinned}, warnings


def launched_unpinned(
    launched: Sequence[str], packages: Mapping[str, PackagePin] | None
) -> list[str]:
    """A warning for each server run through 'mcpctl run', which starts the command of the
    config, not the version the lock recorded."""
    if not packages:
        return []
    return [
        f"{name}: runs through 'mcpctl run', which starts the configured command: the "
        "version the lock recorded is not applied (--secrets env renders it pinned)"
        for name in launched
        if name in packages
    ]
