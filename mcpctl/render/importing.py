"""``mcpctl import``: find other tools' MCP configs and bring their servers in.

:func:`scan` looks in every client's documented locations on this OS; :func:`plan_import`
decides, entry by entry, what an import does (add, skip, rename, overwrite) and which
literal secrets must move to the keyring first; :func:`apply_import` carries a plan out
through the store, which still refuses any literal secret that would reach the file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcpctl.errors import KeyringUnavailableError, McpctlError, UsageError

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.config.store import ConfigStore
    from mcpctl.render.base import ClientTarget, Parsed, Places, Target

__all__ = [
    "Found",
    "ImportItem",
    "OnConflict",
    "apply_import",
    "client_targets",
    "here",
    "plan_import",
    "read_source",
    "scan",
]

OnConflict = Literal["skip", "rename", "overwrite"]
Action = Literal["add", "overwrite", "rename", "skip", "unchanged"]


@dataclass
class Found:
    """One config file of another tool, and the servers in it."""

    source: str
    path: Path
    scope: str
    servers: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class ImportItem:
    """What importing one server does."""

    name: str  # as the source calls it
    action: Action
    entry: ServerEntry | None = None
    as_name: str | None = None  # the name it gets here (a rename, or the same)
    secrets: dict[str, str] = field(default_factory=dict)  # variable -> literal value
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON view (never the secret values, only their variable names)."""
        return {
            "name": self.name,
            "action": self.action,
            "as": self.as_name,
            "secrets": sorted(self.secrets),
            "reason": self.reason,
        }


def here(environ: Mapping[str, str] | None = None) -> Places:
    """This machine's :class:`~mcpctl.render.base.Places`: the home, the working folder, the OS."""
    from mcpctl.render.base import Places

    env = os.environ if environ is None else environ
    return Places(Path.home(), Path.cwd(), sys.platform, dict(env))


def client_targets() -> list[ClientTarget]:
    """Every target that has a config file of its own (the import sources)."""
    from mcpctl.render.targets import get_target, target_names

    found: list[ClientTarget] = []
    for name in target_names():
        target = get_target(name)
        if hasattr(target, "locations"):
            found.append(target)  # type: ignore[arg-type]
    return found


def scan(places: Places) -> list[Found]:
    """Every known client config that exists under ``places``, with its servers.

    A file that cannot be read or parsed is reported with its error, never raised.
    """
    results: list[Found] = []
    seen: set[tuple[str, Path]] = set()
    for target in client_targets():
        for scope in ("user", "project"):
            for path in target.locations(scope, places):
                if (target.name, path) in seen or not path.is_file():
                    continue
                seen.add((target.name, path))
                found = Found(target.name, path, scope)
                try:
                    parsed = _parse(target, path)
                except McpctlError as exc:
                    found.error = exc.message
                else:
                    found.servers = list(parsed.entries)
                    found.warnings = parsed.warnings
                results.append(found)
    return results


def read_source(source: str, path: Path | None, places: Places) -> tuple[Path, Parsed]:
    """The entries of ``source``'s file: ``path``, or the first of its locations that exists.

    Raises:
        UsageError: an unknown source, no file found, or the file is not the source's format.
        StorageError: the file cannot be read.
    """
    from mcpctl.render.targets import get_target

    target = get_target(source)
    if path is None:
        if not hasattr(target, "locations"):
            raise UsageError(
                f"{source} has no config file of its own to look for", hint="give its PATH"
            )
        client: ClientTarget = target  # type: ignore[assignment]
        candidates = [*client.locations("project", places), *client.locations("user", places)]
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            looked = ", ".join(str(p) for p in candidates) or "nowhere on this OS"
            raise UsageError(f"no {source} config found (looked in {looked})", hint="give its PATH")
    try:
        return path, _parse(target, path)
    except UsageError as exc:
        if exc.message.startswith(str(path)):
            raise
        raise UsageError(f"{path}: {exc.message}", hint=exc.hint) from None


def _read(path: Path) -> str:
    """The text of another tool's config file (a regular file within the size limit).

    Raises:
        UsageError: not a regular file, too large, or not UTF-8 (with the line and column).
        StorageError: it cannot be read.
    """
    from mcpctl.config.safefile import decode_text, read_file

    raw = read_file(path)
    if raw is None:
        raise UsageError(f"{path} does not exist")
    return decode_text(raw, path)


def _parse(target: Target, path: Path) -> Parsed:
    """``target``'s reading of the file at ``path`` (with the limits of
    :mod:`mcpctl.render.readers`).

    Raises:
        UsageError: it cannot be read (see :func:`_read`), or is not the target's format, or
            is over a limit (nested too deeply, an alias bomb).
        StorageError: it cannot be read.
    """
    return target.parse(_read(path))


def plan_import(
    entries: Mapping[str, ServerEntry],
    existing: Mapping[str, ServerEntry],
    *,
    on_conflict: OnConflict = "skip",
    only: Iterable[str] = (),
    taken_secrets: Callable[[str], str | None] = lambda _: None,
    allow_literal: Iterable[str] = (),
) -> list[ImportItem]:
    """What importing ``entries`` into a config holding ``existing`` does.

    Literal secrets in an entry -- values that look like credentials, and literals under
    ``env`` or ``headers`` keys named like secrets -- are replaced by ``${VAR}``
    placeholders; the item carries the values (to be stored in the keyring before the entry
    is written). ``taken_secrets`` gives the value a variable already has (in the keyring),
    so that a different secret gets a different name. ``allow_literal`` names keys whose
    literal values are no secrets: an entry that has one keeps its value, and the key in its
    ``allow_literal``.

    Raises:
        ServerNotFoundError: a name in ``only`` is not among ``entries``.
    """
    from mcpctl.errors import ServerNotFoundError

    wanted = list(dict.fromkeys(only))
    missing = [n for n in wanted if n not in entries]
    if missing:
        raise ServerNotFoundError.for_names(missing, entries)
    # A rename must not take the name of a server this same import adds later.
    names = set(existing) | {n for n in entries if not wanted or n in wanted}
    allowed = list(dict.fromkeys(allow_literal))
    claimed: dict[str, str] = {}  # variable -> value, over this whole import
    items: list[ImportItem] = []
    for name, entry in entries.items():
        if wanted and name not in wanted:
            continue
        clean, secrets = _lift_secrets(name, _allow(entry, allowed), claimed, taken_secrets)
        item = ImportItem(name, "add", clean, name, secrets)
        if name in existing:
            if existing[name] == clean:
                item.action, item.reason = "unchanged", "already configured the same way"
                item.secrets = {}
            elif on_conflict == "skip":
                item.action, item.reason = "skip", "a server of that name is configured"
                item.secrets = {}
            elif on_conflict == "overwrite":
                item.action = "overwrite"
            else:
                item.action, item.as_name = "rename", _free_name(name, names)
        names.add(item.as_name or name)
        items.append(item)
    return items


def _allow(entry: ServerEntry, keys: list[str]) -> ServerEntry:
    """``entry`` with those of ``keys`` it has in ``env`` or ``headers`` allowed literals."""
    from mcpctl.config.edits import with_allowed_literals

    headers = {k.lower() for k in entry.headers}
    present = [k for k in keys if k in entry.env or k.lower() in headers]
    return with_allowed_literals(entry, present)


def _free_name(name: str, taken: set[str]) -> str:
    for i in range(2, 10_000):
        candidate = f"{name[:60]}-{i}"
        if candidate not in taken:
            return candidate
    raise UsageError(f"no free name for {name!r}")  # pragma: no cover - 10,000 namesakes


def _lift_secrets(
    server: str,
    entry: ServerEntry,
    claimed: dict[str, str],
    taken: Callable[[str], str | None],
) -> tuple[ServerEntry, dict[str, str]]:
    """``entry`` with each literal secret replaced by a placeholder, and the values."""
    from mcpctl.config.checks import entry_from_data
    from mcpctl.config.redaction import literal_secrets, variable_name

    data = entry.to_data()
    found = literal_secrets(data)
    if not found:
        return entry, {}
    secrets: dict[str, str] = {}
    for path, key, _ in found:
        value = _get(data, path)
        prefix = ""
        if path[0] == "args" and key.startswith("-") and value.startswith(key + "="):
            prefix, value = key + "=", value[len(key) + 1 :]  # --token=VALUE keeps its flag
        base = variable_name(server, key.lstrip("-") if path[0] != "url" else f"{server}_url")
        var = _variable_for(base, value, claimed, taken)
        claimed[var] = secrets[var] = value
        _set(data, path, f"{prefix}${{{var}}}")
    clean, _ = entry_from_data(server, data)
    return (clean if clean is not None else entry), secrets


def _variable_for(
    base: str, value: str, claimed: dict[str, str], taken: Callable[[str], str | None]
) -> str:
    for i in range(1, 1000):
        var = base if i == 1 else f"{base}_{i}"
        have = claimed.get(var)
        if have is None:
            try:
                have = taken(var)
            except KeyringUnavailableError:  # storing the value fails and says why
                have = None
        if have is None or have == value:
            return var
    raise UsageError(f"no free variable name for {base}")  # pragma: no cover


def _get(data: Any, path: tuple[str | int, ...]) -> str:
    for part in path:
        data = data[part]
    return str(data)


def _set(data: Any, path: tuple[str | int, ...], value: str) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def apply_import(
    store: ConfigStore,
    items: list[ImportItem],
    *,
    keep_secret: Callable[[str, str], None] | None,
    source: str,
) -> list[ImportItem]:
    """Write the planned entries (one change, one undo step); returns the items as done.

    ``keep_secret(var, value)`` stores a lifted secret (the keyring); without one, or when
    it fails, the entries that need it are skipped with the reason.

    Raises:
        The store's errors (the file is then unchanged).
    """
    for item in items:
        if item.action in ("skip", "unchanged") or not item.secrets:
            continue
        if keep_secret is None:
            item.action, item.reason = "skip", "it holds a literal secret and no keyring is set"
            continue
        try:
            for var, value in item.secrets.items():
                keep_secret(var, value)
        except KeyringUnavailableError as exc:
            item.action = "skip"
            item.reason = f"it holds a literal secret and the keyring failed: {exc.message}"
    writes = {
        item.as_name or item.name: item.entry
        for item in items
        if item.action in ("add", "overwrite", "rename") and item.entry is not None
    }
    if writes:

        def change(doc: dict[str, Any]) -> None:
            for name, entry in writes.items():
                doc[name] = entry.to_data()

        store.update(change, action=f"import {source}", authored=list(writes))
    return items
