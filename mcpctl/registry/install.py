"""Adding a server from a registry, and upgrading the ones added: plan, then apply.

A plan is everything decided before the file is touched -- the record found, the entry it
converts to, the name it gets, values asked for, whether it is configured already -- so a
caller (the CLI, the daemon) can show it, ask for what is missing through a callback, and
then apply it in one write through :class:`~mcpctl.config.store.ConfigStore`, which keeps
its rules (lock, literal secrets refused, backups for undo).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from mcpctl.config.model import ServerEntry
from mcpctl.errors import MissingInputError, ServerNotFoundError, UsageError
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.registry.convert import (
    Conversion,
    MissingInput,
    default_name,
    entry_from_server_json,
)
from mcpctl.registry.records import Record
from mcpctl.registry.sources import RegistrySource, find_record
from mcpctl.registry.syncing import REFRESH_TIMEOUT, refresh
from mcpctl.registry.updates import Update, find_updates, plan_upgrades

if TYPE_CHECKING:
    from mcpctl.config.store import AddOutcome, ConfigStore

__all__ = [
    "AddPlan",
    "Ask",
    "UpgradePlan",
    "apply_add",
    "apply_upgrade",
    "plan_add",
    "plan_upgrade",
]

Ask = Callable[[MissingInput], str]
"""Asks a person for one missing value (the CLI prompts on a terminal)."""


@dataclass
class AddPlan:
    """What adding a registry server would do.

    ``existing`` names an entry already added from the same registry server (any version);
    when ``unchanged`` is true, applying the plan changes nothing (the server is there).
    ``replace`` says applying it may replace the entry under ``name`` (the plan was made
    with ``force``).
    """

    name: str
    entry: ServerEntry
    registry: str
    record: Record
    conversion: Conversion
    existing: str | None = None
    unchanged: bool = False
    replace: bool = False
    warnings: list[str] = field(default_factory=list)


def _already_added(entries: Mapping[str, ServerEntry], registry: str, server: str) -> str | None:
    for name, entry in entries.items():
        src = entry.source
        if src is not None and src.registry == registry and src.name == server:
            return name
    return None


def plan_add(
    cache: DiscoveryCache,
    sources: Sequence[RegistrySource],
    spec: str,
    entries: Mapping[str, ServerEntry],
    *,
    registry: str | None = None,
    name: str | None = None,
    prefer: Literal["package", "remote"] | None = None,
    package_type: str | None = None,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    force: bool = False,
    ask: Ask | None = None,
    offline: bool = False,
    refresh_timeout: float = REFRESH_TIMEOUT,
) -> AddPlan:
    """Find ``spec`` (``SERVER[@VERSION]``) and plan its entry in a config of ``entries``.

    The cache is refreshed first when stale (never with ``offline``): all the registries at
    once, within ``refresh_timeout`` seconds in all (one that has not answered by then
    keeps its cache, with a warning). Inputs the registry has no default for are asked for
    with ``ask``, one by one. ``overrides`` replaces fields of the converted entry
    (``description``, ``timeout``, ``enabled``...).

    A server already added from the same registry server (any version) is left as it is
    (``unchanged``, ``existing`` names its entry; nothing is asked for) unless ``name`` asks
    for another copy under a new name, or ``force`` replaces it (under its own name, or
    under ``name``).

    Raises:
        UsageError: no such server or version, or nothing mcpctl can install.
        MissingInputError: values are missing and there is no ``ask``.
    """
    report = refresh(cache, sources, offline=offline, timeout=refresh_timeout)
    reg, record = find_record(
        cache, spec, registry, unavailable=report.unreachable, offline=offline
    )
    env, headers = dict(env or {}), dict(headers or {})

    def convert() -> Conversion:
        return entry_from_server_json(
            record, registry=reg, prefer=prefer, package_type=package_type,
            env=env, headers=headers,
        )  # fmt: skip

    existing = _already_added(entries, reg, record.name)
    unchanged = existing is not None and not force and name in (None, existing)
    conversion = convert()
    if conversion.missing and not unchanged:
        if ask is None:
            listed = "; ".join(
                f"{m.name} ({m.flag})" + (f": {m.description}" if m.description else "")
                for m in conversion.missing
            )
            raise MissingInputError(
                f"{record.name} needs values that have no default: {listed}",
                hint="pass them with the flags shown (there is no terminal to ask on)",
            )
        for missing in conversion.missing:
            target = headers if missing.flag.startswith("--header") else env
            target[missing.name] = ask(missing)
        conversion = convert()
    fields = dict(overrides or {})
    allowed = fields.pop("allow_literal", ())
    entry = replace(conversion.entry, **fields)
    if allowed and not unchanged:
        from mcpctl.config.edits import with_allowed_literals

        entry = with_allowed_literals(entry, allowed)
    if existing is not None and name in (None, existing):
        chosen = existing  # left as it is, or replaced with force
    else:
        chosen = name or default_name(record.name, set(entries))
    return AddPlan(
        name=chosen,
        entry=entry,
        registry=reg,
        record=record,
        conversion=conversion,
        existing=existing,
        unchanged=unchanged,
        replace=force,
        warnings=[*report.warnings, *conversion.notes],
    )


def apply_add(store: ConfigStore, plan: AddPlan, *, force: bool = False) -> AddOutcome | None:
    """Write a planned entry (``None`` when the plan changes nothing).

    Raises:
        ServerExistsError: the name is taken and neither the plan nor ``force`` replaces.
        and the errors of :meth:`ConfigStore.add` (literal secrets are refused there).
    """
    if plan.unchanged:
        return None
    return store.add(plan.name, plan.entry, force=force or plan.replace)


@dataclass
class UpgradePlan:
    """The upgrades found and the new entry of each (``entries``: name -> new entry)."""

    updates: list[Update]
    entries: dict[str, ServerEntry]
    warnings: list[str] = field(default_factory=list)


def plan_upgrade(
    cache: DiscoveryCache,
    sources: Sequence[RegistrySource],
    config: Mapping[str, ServerEntry],
    names: Iterable[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    offline: bool = False,
    refresh_timeout: float = REFRESH_TIMEOUT,
) -> UpgradePlan:
    """Which servers added from a registry are behind, and their entries at the latest version.

    ``names`` limits it to some servers (each must exist and come from a registry). The
    registries they come from are refreshed first when stale, within ``refresh_timeout``
    seconds in all.

    Raises:
        ServerNotFoundError: a name is not configured.
        UsageError: a named server was not added from a registry, or a new version cannot
            be converted.
        MissingInputError: a new version needs a value nobody gave (``env`` supplies it).
    """
    wanted = list(dict.fromkeys(names))
    missing = [n for n in wanted if n not in config]
    if missing:
        raise ServerNotFoundError.for_names(missing, config)
    for name in wanted:
        if config[name].source is None:
            raise UsageError(f"{name!r} was not added from a registry: nothing to upgrade")
    # Only the registries the servers concerned come from: the others cannot matter, and
    # an unreachable one would only add a warning.
    concerned = {
        entry.source.registry
        for name, entry in config.items()
        if entry.source is not None and (not wanted or name in wanted)
    }
    report = refresh(
        cache, [s for s in sources if s.id in concerned], offline=offline,
        timeout=refresh_timeout,
    )  # fmt: skip
    updates, _, _ = find_updates(dict(config), cache)
    if wanted:
        updates = [u for u in updates if u.name in wanted]
    planned = plan_upgrades(dict(config), updates, dict(env or {}))
    return UpgradePlan(updates, planned, list(report.warnings))


def apply_upgrade(store: ConfigStore, plan: UpgradePlan) -> bool:
    """Write every planned upgrade in one change (one undo step); whether anything changed.

    Raises:
        the errors of :meth:`ConfigStore.update` (literal secrets are refused there).
    """
    if not plan.entries:
        return False

    def change(doc: dict[str, Any]) -> None:
        for name, new in plan.entries.items():
            doc[name] = new.to_data()

    store.update(change, action="upgrade " + " ".join(plan.entries))
    return True
