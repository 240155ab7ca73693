"""Internal MCP servers: the sibling packages an orchestrator discovers by a manifest.

An agent orchestrator (docs/config.md, "The orchestrator convention") finds its own
servers (Guardian, Filer, Memorizer, ...) in the sub-folders of an MCPs root whose
``package.json`` carries a manifest under one key (``"annabelle"`` in that convention,
:data:`DEFAULT_MANIFEST_KEY`). The manifest has no published schema, so parsing is
tolerant: every field is optional and anything unusable is skipped with a warning, never an
error.

Understood manifest fields (all optional)::

    "annabelle": {
      "mcpName": "guardian",          # else "name", else the package name, else the folder
      "command": "node",              # default "node"
      "args": ["dist/index.js"],      # default [entrypoint or package "main" or dist/index.js]
      "entrypoint": "dist/index.js",
      "env": {"KEY": "value"},
      "timeout": 30000,               # milliseconds
      "sensitive": true,
      "description": "...",           # else the package's description
      "url": "http://127.0.0.1:8010/mcp",  # a remote internal server instead of a command
      "enabled": false                # skipped
    }
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from mcpctl.config.model import NAME_RE, ServerEntry

__all__ = ["DEFAULT_MANIFEST_KEY", "Scope", "discover_internal", "select_targets"]

DEFAULT_MANIFEST_KEY = "annabelle"


def _name(manifest: dict[str, Any], package: dict[str, Any], folder: Path) -> str:
    for candidate in (manifest.get("mcpName"), manifest.get("name"), package.get("name")):
        if isinstance(candidate, str) and candidate.strip():
            raw = candidate.strip().rsplit("/", 1)[-1]
            break
    else:
        raw = folder.name
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", raw).strip("-")[:64]
    return name or folder.name[:64]


def _strings(value: Any) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return None


def _entry(folder: Path, manifest: dict[str, Any], package: dict[str, Any]) -> ServerEntry:
    description = manifest.get("description", package.get("description"))
    timeout = manifest.get("timeout")
    env = manifest.get("env")
    common: dict[str, Any] = {
        "description": description if isinstance(description, str) else None,
        "timeout": timeout if type(timeout) is int and 0 < timeout <= 3_600_000 else None,
        "sensitive": manifest.get("sensitive") is True,
    }
    url = manifest.get("url")
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        return ServerEntry(url=url, **common)
    command = manifest.get("command")
    args = _strings(manifest.get("args"))
    if args is None:
        entry_point = manifest.get("entrypoint") or package.get("main") or "dist/index.js"
        args = [str(folder / entry_point)] if isinstance(entry_point, str) else []
    return ServerEntry(
        command=command if isinstance(command, str) and command.strip() else "node",
        args=tuple(args),
        env={k: v for k, v in env.items() if isinstance(v, str)} if isinstance(env, dict) else {},
        cwd=str(folder),
        **common,
    )


def discover_internal(
    root: Path, manifest_key: str = DEFAULT_MANIFEST_KEY
) -> tuple[dict[str, ServerEntry], list[str]]:
    """The internal servers under ``root`` (one per sub-folder with a manifest), and warnings.

    Never raises: unreadable folders and manifests are warnings.
    """
    servers: dict[str, ServerEntry] = {}
    warnings: list[str] = []
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError as exc:
        return {}, [f"cannot scan internal MCPs in {root}: {exc.strerror or exc}"]
    for folder in folders:
        package_file = folder / "package.json"
        if not package_file.is_file():
            continue
        try:
            package = json.loads(package_file.read_text("utf-8-sig"))
        except (OSError, ValueError) as exc:
            warnings.append(f"{package_file}: unreadable ({exc}); skipped")
            continue
        if not isinstance(package, dict) or manifest_key not in package:
            continue
        manifest = package[manifest_key]
        manifest = manifest if isinstance(manifest, dict) else {}
        if manifest.get("enabled") is False:
            continue
        name = _name(manifest, package, folder)
        if not NAME_RE.fullmatch(name):
            warnings.append(f"{package_file}: no usable server name; skipped")
            continue
        if name in servers:
            warnings.append(f"{package_file}: internal server {name!r} is defined twice; skipped")
            continue
        servers[name] = _entry(folder, manifest, package)
    return servers, warnings


Scope = Literal["all", "internal", "external"]


def select_targets(
    external: dict[str, ServerEntry],
    internal: dict[str, ServerEntry],
    *,
    scope: Scope = "all",
    names: Iterable[str] = (),
    include_disabled: bool = False,
    groups: Iterable[str] = (),
) -> tuple[list[tuple[str, ServerEntry, Literal["internal", "external"]]], list[str]]:
    """The servers to act on, in order (internal first), and warnings.

    An external server named like an internal one is skipped with a warning, as that
    orchestrator does. ``names`` selects servers (an unknown name raises), and so do
    ``groups`` (the members of each; with ``names``, the union); disabled servers are left
    out unless named or ``include_disabled``.

    Raises:
        ServerNotFoundError: a name in ``names`` is neither internal nor external.
        GroupNotFoundError: no external server belongs to a group in ``groups``.
    """
    from mcpctl.config.groups import group_members
    from mcpctl.errors import ServerNotFoundError

    warnings: list[str] = []
    merged: dict[str, tuple[ServerEntry, Literal["internal", "external"]]] = {}
    for name, entry in internal.items():
        merged[name] = (entry, "internal")
    for name, entry in external.items():
        if name in internal:
            warnings.append(
                f"external server {name!r} has the name of an internal one and is skipped"
            )
            continue
        merged[name] = (entry, "external")
    wanted = list(dict.fromkeys(names))
    missing = [name for name in wanted if name not in merged]
    if missing:
        raise ServerNotFoundError.for_names(missing, merged)
    chosen = wanted or list(merged)
    group_list = list(groups)
    if group_list:
        members = [n for n in group_members(external, group_list) if n not in internal]
        chosen = list(dict.fromkeys([*wanted, *members]))
    targets = []
    for name in chosen:
        entry, kind = merged[name]
        if scope not in ("all", kind):
            continue
        if not entry.enabled and not (include_disabled or name in wanted):
            continue
        targets.append((name, entry, kind))
    return targets, warnings
