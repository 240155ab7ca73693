"""What several command modules share: locations, the config and its trust, shared options,
the servers a command targets, registries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpctl.cli import output
from mcpctl.cli.output import STATE
from mcpctl.errors import UsageError
from mcpctl.paths import Paths

if TYPE_CHECKING:
    from mcpctl.config.loader import LoadResult
    from mcpctl.config.model import ProtocolMode, ServerEntry
    from mcpctl.config.siblings import Scope
    from mcpctl.config.store import ConfigStore
    from mcpctl.probe.eras import Era, EraMemory
    from mcpctl.registry.cache import DiscoveryCache
    from mcpctl.registry.sources import RegistrySource

# Also GROUP, INTERNAL_ROOT, MANIFEST_KEY and PROTOCOL: typer options, built on first use
# (__getattr__), so that a command answered before the CLI framework loads can use this module.
__all__ = [
    "MANIFEST_HELP",
    "Protocol",
    "cache",
    "config_store",
    "entry_summary",
    "entry_target",
    "era_options",
    "group_selection",
    "missing_config",
    "paths",
    "read_config",
    "require_trusted",
    "sources",
    "targets",
]

MANIFEST_HELP = "package.json key of the manifest (the orchestrator convention: docs/config.md)."
# The options several commands share, as typer.Option(*args, **kwargs).
_OPTIONS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "INTERNAL_ROOT": (
        (None, "--internal-root"),
        {"envvar": "MCPCTL_INTERNAL_ROOT", "metavar": "DIR",
         "help": "Also use internal MCPs (an orchestrator's own servers): sub-folders of DIR "
         "whose package.json has a manifest."},
    ),
    "GROUP": (
        ([], "--group"),
        {"metavar": "GROUP",
         "help": "Only the servers of this group (mcpctl group list); repeat it for the servers "
         "of any of them."},
    ),
    # Its default (mcpctl.config.siblings.DEFAULT_MANIFEST_KEY) is set when it is built.
    "MANIFEST_KEY": ((None, "--manifest-key"), {"metavar": "KEY", "help": MANIFEST_HELP}),
    "PROTOCOL": (
        (None, "--protocol"),
        {"help": "Protocol era: auto (detect it, remembered per server), modern (2026-07-28 and "
         "later, no handshake) or legacy (the initialize handshake). Default: each entry's "
         '"protocol", else auto.'},
    ),
}  # fmt: skip


def __getattr__(name: str) -> Any:
    """GROUP, INTERNAL_ROOT, MANIFEST_KEY, PROTOCOL: each command's typer option, built when
    a command module is imported (the CLI framework is loaded then anyway)."""
    if name not in _OPTIONS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import typer

    args, kwargs = _OPTIONS[name]
    if name == "MANIFEST_KEY":
        from mcpctl.config.siblings import DEFAULT_MANIFEST_KEY

        args = (DEFAULT_MANIFEST_KEY, *args[1:])
    option = globals()[name] = typer.Option(*args, **kwargs)
    return option


class Protocol(StrEnum):
    """Which protocol era to speak."""

    auto = "auto"
    modern = "modern"
    legacy = "legacy"


def era_options(protocol: Protocol | None) -> tuple[ProtocolMode | None, EraMemory]:
    """The ``protocol`` and ``eras`` arguments of the probing functions, for ``--protocol``."""
    from mcpctl.probe.eras import EraMemory

    mode: ProtocolMode | None = protocol.value if protocol is not None else None
    return mode, EraMemory.in_dir(paths().state_dir)


def paths() -> Paths:
    """The locations of this invocation (``--config`` and the environment)."""
    return Paths.from_env(STATE.config)


def config_store() -> ConfigStore:
    """The store of the config file in use, with its backups."""
    from mcpctl.config.store import ConfigStore  # filelock and friends: not on read-only paths

    return ConfigStore.from_paths(paths())


def read_config() -> LoadResult:
    """The config for a command that reads it; a file named explicitly must exist.

    Raises:
        ConfigNotFoundError, ConfigSyntaxError, ConfigError, StorageError: see
        :func:`mcpctl.config.loader.read_config`.
    """
    import os

    from mcpctl.config.loader import read_config as read
    from mcpctl.config.redaction import register_config
    from mcpctl.config.trustrecord import file_reason
    from mcpctl.quickpaths import user_dir

    where = paths()
    loaded = read(where.config, must_exist=where.config_override is not None)
    register_config(loaded.config.entries.values())  # output hides every entry's secrets
    state = "exists" if loaded.exists else "not created yet"
    output.debug(f"config: {loaded.path} ({state})")
    # The user's own file, or one the environment trusts, costs nothing more.
    config_dir = where.config_dir if where.home is not None else user_dir("config")
    if loaded.config.entries and file_reason(loaded.path, config_dir, os.environ) is None:
        _hold_untrusted(where, loaded)
    return loaded


def _hold_untrusted(where: Paths, loaded: LoadResult) -> None:
    """Warn about the servers of the config that wait for approval, and refuse them in this
    process whatever way a command would start them (:mod:`mcpctl.config.trustguard`)."""
    from mcpctl.config import trustguard
    from mcpctl.config.trust import TrustStore

    trust = TrustStore.from_paths(where).check(loaded.path, loaded.config.entries)
    trustguard.hold(trust.refusals())
    notice = trust.notice()
    if notice is not None and notice not in STATE.notices:
        STATE.notices.append(notice)


def require_trusted(loaded: LoadResult | None, names: Iterable[str]) -> None:
    """Refuse to start, connect to or resolve a secret for servers ``names`` of the config
    (``loaded``; ``None``: read it) unless the file is trusted or they were approved.

    Raises:
        UntrustedConfigError: some wait for approval (``mcpctl trust``).
    """
    from mcpctl.config.trust import TrustStore

    loaded = loaded if loaded is not None else read_config()
    entries = loaded.config.entries
    chosen = {name: entries[name] for name in names if name in entries}
    TrustStore.from_paths(paths()).require(loaded.path, chosen)


def group_selection(entries: Mapping[str, ServerEntry], groups: Sequence[str]) -> list[str] | None:
    """The servers ``--group`` selects (the members of any of ``groups``, in file order), or
    ``None`` without ``--group``.

    Raises:
        GroupNotFoundError: no server is in one of ``groups`` (the hint lists the groups).
    """
    if not groups:
        return None
    from mcpctl.config.groups import group_members

    return group_members(entries, groups)


def targets(
    names: Sequence[str],
    scope: Scope,
    internal_root: Path | None,
    manifest_key: str,
    groups: Sequence[str] = (),
    *,
    gate: bool = True,
) -> tuple[list[tuple[str, ServerEntry, Any]], list[str]]:
    """The servers a probing command acts on (``names`` and the members of ``groups``), and
    warnings (bad entries, name clashes). ``gate``: refuse the config's servers that wait for
    approval (a caller that may start none passes ``False`` and checks them itself).

    Raises:
        ServerNotFoundError: a name is neither configured nor internal.
        GroupNotFoundError: no server is in one of ``groups``.
        UntrustedConfigError: ``gate``, and a chosen server of the config waits for approval.
        and the errors of :func:`read_config`.
    """
    from mcpctl.config.siblings import discover_internal, select_targets

    loaded = read_config()
    warnings = loaded.warnings
    internal: dict[str, ServerEntry] = {}
    if internal_root is not None:
        internal, found = discover_internal(internal_root, manifest_key)
        warnings += found
    chosen, more = select_targets(
        loaded.config.entries, internal, scope=scope, names=names, groups=groups
    )
    if gate:
        require_trusted(loaded, [name for name, _, kind in chosen if kind == "external"])
    return chosen, warnings + more


def sources(wanted: Sequence[str] | None = None) -> list[RegistrySource]:
    """The registries to use: all, or the ones named.

    Raises:
        UsageError: a named registry is not configured.
    """
    from mcpctl.registry.sources import load_sources

    found = load_sources(paths().registries)
    if wanted:
        wanted = list(dict.fromkeys(wanted))
        known = {s.id: s for s in found}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise UsageError(
                f"no registry {unknown[0]!r}", hint="run 'mcpctl registry list' to see them"
            )
        return [known[w] for w in wanted]
    return found


def cache() -> DiscoveryCache:
    """The discovery cache (created on first use)."""
    from mcpctl.registry.cache import DiscoveryCache

    return DiscoveryCache.open(paths().discovery_cache)


def entry_summary(name: str, entry: ServerEntry) -> dict[str, Any]:
    """An entry as commands print it (:func:`mcpctl.config.shown.entry_summary`)."""
    from mcpctl.config.shown import entry_summary as summary

    return summary(name, entry)


def entry_target(summary: dict[str, Any]) -> str:
    """The URL of a remote entry, or the command line of a stdio one."""
    from mcpctl.config.shown import entry_target as target

    return target(summary)


REGISTRY_TIMEOUT_HELP = (
    "How long the registries may take to answer, all together: 15s, 1m (a bare number is "
    "seconds; default 15s). Those that have not answered are used from the cache."
)


def protocol_cell(era: Era | None) -> str:
    """``2026-07-28`` or ``2025-11-25 (handshake)``; ``-`` when no era was settled."""
    if era is None:
        return "-"
    return era.version if era.name == "modern" else f"{era.version} (handshake)"


def missing_config() -> list[str]:
    """A warning when the config file in use does not exist (the command then has nothing of
    it to show; an empty result is no error, but silence would be wrong)."""
    from mcpctl.config.loader import missing_config_note

    note = missing_config_note(paths().config)
    return [note] if note else []
