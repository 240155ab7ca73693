"""What a rendering starts from besides the config: a template document and a lock file.

:func:`load_template` reads the base document the servers go under (``render --template``),
with ``<name>.local.json`` beside it merged over it (:func:`merge_documents`);
:func:`load_pins` reads the tools a lock file pinned (``render --pinned``), for
:func:`mcpctl.render.render`'s ``pinned``. Both files may come from elsewhere (a cloned
repository): they are read through :mod:`mcpctl.config.safefile`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcpctl.errors import UsageError

__all__ = ["load_pins", "load_template", "merge_documents"]


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


def load_pins(path: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The tools a lock file pinned, per server, and warnings.

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
        return {}, [f"{path} has no probe data, so it pins no tool (save it with --probe)"]
    return pinned_tools(found), []
