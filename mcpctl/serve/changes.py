"""The changes an agent may ask ``mcpctl serve`` for, each planned before the user is asked.

A :class:`Change` holds the form's message (what will be written, what will run) and what
applying it does. Planning refuses at once what the write would refuse (a literal secret, an
invalid entry or name, a name taken, an unknown server): the user is never asked to approve
a change that cannot land. Applying goes through :class:`~mcpctl.config.store.ConfigStore`
(lock, re-read, atomic write, backup, undo), which checks everything again.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from mcpctl.serve.consent import entry_block, from_registry, runs_block
from mcpctl.serve.marks import one_line
from mcpctl.serve.workspace import Workspace

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = [
    "Change",
    "plan_add",
    "plan_add_from_registry",
    "plan_remove",
    "plan_toggle",
    "undo_command",
]

INTRO = "The agent asks mcpctl to change your MCP servers. Nothing is written unless you approve."


@dataclass(frozen=True)
class Change:
    """A planned change: ``action`` names it, ``message`` is the form's text, ``apply``
    writes it and says what it did."""

    action: str
    message: str
    apply: Callable[[], str]


def undo_command(workspace: Workspace) -> str:
    """The command that reverts the last change of the config in use."""
    override = workspace.paths.config_override
    return "mcpctl undo" + (f" --config {shlex.quote(str(override))}" if override else "")


def _form(*parts: str) -> str:
    return "\n\n".join([INTRO, *(p for p in parts if p)])


def plan_add(workspace: Workspace, name: str, entry: ServerEntry) -> Change:
    """Add server ``name``.

    Raises:
        ServerExistsError: ``name`` is taken.
        InvalidEntryError, PlaintextSecretError: the write would refuse the entry.
        and the errors of :meth:`Workspace.read`.
    """
    from mcpctl.config.edits import checked_entry
    from mcpctl.errors import ServerExistsError

    checked_entry(name, entry)
    config = workspace.read()
    if name in config.config.entries:
        raise ServerExistsError(
            f"server {name!r} already exists in {config.path}",
            hint="choose another name, or remove it first",
        )
    store = workspace.store()
    message = _form(
        f"Add the server {name!r} to {store.path}, written as:\n{entry_block(name, entry)}",
        runs_block(entry) + "\nNothing runs now.",
        f"Revert it with: {undo_command(workspace)}",
    )

    def apply() -> str:
        outcome = store.add(name, entry)
        made = " (the file was created)" if outcome.created_file else ""
        return f"added {name!r} to {store.path}{made}"

    return Change(f"add {name}", message, apply)


def plan_add_from_registry(
    workspace: Workspace,
    server: str,
    *,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    prefer: Literal["package", "remote"] | None = None,
) -> Change | str:
    """Add ``server`` (``SERVER[@VERSION]``) from a registry, or say why nothing needs to
    change (it is configured already). Blocking (the registries): run it in a thread.

    Raises:
        UsageError: no such server or version, or nothing mcpctl can install.
        MissingInputError: the server needs values that ``env``/``headers`` do not give.
        InvalidEntryError, PlaintextSecretError: the write would refuse the entry.
        and the errors of :meth:`Workspace.read`.
    """
    from mcpctl.config.edits import checked_entry
    from mcpctl.registry.cache import DiscoveryCache
    from mcpctl.registry.install import apply_add
    from mcpctl.registry.install import plan_add as plan
    from mcpctl.registry.sources import load_sources

    entries = workspace.read().config.entries
    cache = DiscoveryCache.open(workspace.paths.discovery_cache)
    sources = load_sources(workspace.paths.registries)
    found = plan(
        cache, sources, server, entries, name=name, env=env, headers=headers, prefer=prefer
    )
    if found.unchanged:
        return (
            f"{found.record.name} is already configured as {found.existing!r}; nothing "
            "changed (give another name to add a second copy)"
        )
    checked_entry(found.name, found.entry)
    store = workspace.store()
    record = found.record
    secrets = found.conversion.secrets
    message = _form(
        f"Add {one_line(record.name)} {one_line(record.version)} from the registry "
        f"{found.registry} to {store.path} as the server {found.name!r}, written as:\n"
        f"{entry_block(found.name, found.entry)}",
        runs_block(found.entry) + "\nNothing runs now.",
        f"The registry describes it as: {from_registry(record.description, found.registry)}"
        if record.description
        else "",
        f"It needs these secrets before it works: {', '.join(secrets)}" if secrets else "",
        f"Revert it with: {undo_command(workspace)}",
    )

    def apply() -> str:
        apply_add(store, found)
        done = f"added {found.name!r} ({record.name} {record.version}) to {store.path}"
        if secrets:
            done += f"; it needs the secrets {', '.join(secrets)} (secret_set, or the environment)"
        return done

    return Change(f"add {found.name}", message, apply)


def plan_toggle(workspace: Workspace, name: str, enabled: bool) -> Change | str:
    """Enable or disable server ``name``, or say it already is.

    Raises:
        ServerNotFoundError: no server of that name.
        and the errors of :meth:`Workspace.read`.
    """
    entry = workspace.read().entry(name)
    verb = "enable" if enabled else "disable"
    if entry.enabled == enabled:
        return f"{name!r} is already {verb}d; nothing changed"
    store = workspace.store()
    if enabled:
        effect = runs_block(entry) + "\nClients start it again (after they reload their servers)."
    else:
        effect = "Clients stop starting it; the entry is kept, and can be enabled again."
    message = _form(
        f"{verb.capitalize()} the server {name!r} in {store.path}:\n{entry_block(name, entry)}",
        effect,
        f"Revert it with: {undo_command(workspace)}",
    )

    def apply() -> str:
        changed = store.set_enabled(name, enabled)
        return f"{verb}d {name!r} in {store.path}" if changed else f"{name!r} was already {verb}d"

    return Change(f"{verb} {name}", message, apply)


def plan_remove(workspace: Workspace, name: str) -> Change:
    """Remove server ``name``.

    Raises:
        ServerNotFoundError: no server of that name.
        and the errors of :meth:`Workspace.read`.
    """
    entry = workspace.read().entry(name)
    store = workspace.store()
    message = _form(
        f"Remove the server {name!r} from {store.path}; this entry goes:\n"
        f"{entry_block(name, entry)}",
        "Nothing runs. Clients stop starting it.",
        f"Revert it with: {undo_command(workspace)}",
    )

    def apply() -> str:
        store.remove([name])
        return f"removed {name!r} from {store.path}"

    return Change(f"remove {name}", message, apply)
