"""Pinned versions against the registries' latest: ``outdated`` and ``upgrade``.

An entry added from a registry records ``source`` (registry, server name, pinned version).
Upgrading converts the latest version again, the same way (package type or remote), and
keeps what the user set on the entry: its non-secret values, description, timeout,
sensitivity, tool filter and enabled state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from mcpctl.config.model import ServerEntry
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.registry.convert import Conversion, entry_from_server_json
from mcpctl.registry.records import Record, version_key

__all__ = ["Update", "carried_over", "find_updates", "plan_upgrades", "upgrade_entry"]

_PACKAGE_OF_COMMAND = {"npx": "npm", "uvx": "pypi", "docker": "oci", "dnx": "nuget"}


@dataclass(frozen=True)
class Update:
    """A server whose registry has a newer version than the pinned one."""

    name: str
    registry: str
    server: str
    pinned: str
    latest: str
    record: Record


def find_updates(
    entries: dict[str, ServerEntry], cache: DiscoveryCache
) -> tuple[list[Update], list[str], list[str]]:
    """(outdated, up to date, not found in the cache) among entries that have a ``source``."""
    outdated: list[Update] = []
    current: list[str] = []
    unknown: list[str] = []
    for name, entry in entries.items():
        src = entry.source
        if src is None:
            continue
        versions = cache.versions(src.name, [src.registry])
        live = [(reg, rec) for reg, rec in versions if rec.status not in ("deleted",)]
        if not live:
            unknown.append(name)
            continue
        marked = [pair for pair in live if pair[1].is_latest]
        reg, latest = marked[0] if marked else live[0]
        if version_key(latest.version) > version_key(src.version):
            outdated.append(Update(name, reg, src.name, src.version, latest.version, latest))
        else:
            current.append(name)
    return outdated, current, unknown


def upgrade_entry(entry: ServerEntry, update: Update) -> Conversion:
    """The entry converted again from the latest version, keeping the user's settings.

    Raises:
        UsageError: the new version cannot be converted (e.g. only an mcpb bundle now).
    """
    prefer: Literal["package", "remote"] = "remote" if entry.is_remote else "package"
    package_type = _PACKAGE_OF_COMMAND.get(entry.command or "") if not entry.is_remote else None

    def convert(env: dict[str, str]) -> Conversion:
        return entry_from_server_json(
            update.record, registry=update.registry, prefer=prefer, package_type=package_type,
            env=env, headers=dict(entry.headers),
        )  # fmt: skip

    conversion = convert(dict(entry.env))
    if conversion.missing:
        # Values given when the server was added went into its arguments or URL, not its
        # env: take them from there rather than asking again.
        kept = carried_over(entry, conversion)
        if kept:
            conversion = convert({**entry.env, **kept})
    conversion.entry = replace(
        conversion.entry,
        description=entry.description or conversion.entry.description,
        timeout=entry.timeout,
        sensitive=entry.sensitive,
        enabled=entry.enabled,
        tools=entry.tools,
        cwd=entry.cwd if not entry.is_remote else None,
        allow_literal=entry.allow_literal,
    )
    return conversion


def carried_over(entry: ServerEntry, conversion: Conversion) -> dict[str, str]:
    """Values of ``conversion``'s missing inputs that ``entry`` already holds.

    A missing input is a ``${NAME}`` in the new entry's arguments or URL. Its value is the
    one after the same ``--flag`` in the old arguments, the one at the same position when
    the old arguments are as many, or the matching part of the old URL.
    """
    names = {m.name for m in conversion.missing}
    found: dict[str, str] = {}
    new, old = list(conversion.entry.args), list(entry.args)
    for i, arg in enumerate(new):
        name = arg[2:-1] if arg.startswith("${") and arg.endswith("}") else ""
        if name not in names:
            continue
        flag = new[i - 1] if i > 0 and new[i - 1].startswith("-") else None
        if flag is not None and flag in old[:-1]:
            found[name] = old[old.index(flag) + 1]
        elif flag is None and len(old) == len(new):
            found[name] = old[i]
    url, before = conversion.entry.url, entry.url
    if url and before:
        parts = re.split(r"(\$\{[^}]*\})", url)  # text, ${NAME}, text, ...
        wanted = [p[2:-1] for p in parts[1::2]]
        if any(n in names for n in wanted):
            pattern = "".join(
                re.escape(p) if i % 2 == 0 else "([^/?#]+)" for i, p in enumerate(parts)
            )
            match = re.fullmatch(pattern, before)
            if match:
                for n, value in zip(wanted, match.groups(), strict=True):
                    if n in names:
                        found[n] = value
    return found


def plan_upgrades(
    entries: dict[str, ServerEntry], updates: list[Update], extra_env: dict[str, str] | None = None
) -> dict[str, ServerEntry]:
    """The new entry of every update, all or none.

    Raises:
        MissingInputError: a new version needs a value nobody gave (``extra_env`` supplies it).
        UsageError: a new version cannot be converted, or converts to an invalid entry.
    """
    from mcpctl.config.checks import entry_from_data
    from mcpctl.errors import MissingInputError, UsageError

    planned: dict[str, ServerEntry] = {}
    for u in updates:
        base = replace(entries[u.name], env={**entries[u.name].env, **(extra_env or {})})
        conversion = upgrade_entry(base, u)
        if conversion.missing:
            flags = " ".join(m.flag for m in conversion.missing)
            raise MissingInputError(
                f"{u.name}: {u.server}@{u.latest} needs new values: {flags}",
                hint=f"mcpctl upgrade {u.name} {flags}",
            )
        _, issues = entry_from_data(u.name, conversion.entry.to_data())
        if issues:
            raise UsageError(f"{u.name}: the new version converts to an invalid entry: "
                             f"{issues[0].message}")  # fmt: skip
        planned[u.name] = conversion.entry
    return planned
