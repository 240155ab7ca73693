"""The changes the CLI and the daemon make to a config file: add, remove, enable, disable,
and the groups of servers.

Each is one call of :meth:`ConfigStore.update <mcpctl.config.store.ConfigStore.update>`, so
each is locked, atomic, undoable and refuses literal secrets.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from mcpctl.config.checks import check_group_name, check_name, entry_from_data
from mcpctl.config.model import ENTRY_FIELDS, ServerEntry, format_path
from mcpctl.errors import (
    ConfigInvalidError,
    GroupNotFoundError,
    InvalidEntryError,
    ServerExistsError,
    ServerNotFoundError,
)

__all__ = ["AddOutcome", "ServerEdits", "checked_entry", "with_allowed_literals"]

T = TypeVar("T")


class AddOutcome(NamedTuple):
    """What :meth:`ServerEdits.add` did."""

    name: str
    replaced: bool
    created_file: bool


def with_allowed_literals(entry: ServerEntry, keys: Iterable[str]) -> ServerEntry:
    """``entry`` with ``keys`` added to its ``allow_literal`` (each must be one of its
    ``env`` keys, one of its ``headers`` in any case, or a flag of its ``args`` named like a
    secret, as ``--api-key``).

    Raises:
        InvalidEntryError: a key is in neither ``env`` nor ``headers``.
    """
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return entry
    from mcpctl.config.redaction import secret_flag_values

    headers = {k.lower() for k in entry.headers}
    flags = {flag for _, flag in secret_flag_values(entry.args)}
    for key in wanted:
        if key not in entry.env and key.lower() not in headers and key not in flags:
            have = [*entry.env, *entry.headers, *sorted(flags)]
            raise InvalidEntryError(
                f"allow_literal names {key!r}, which is neither an env variable, a header nor "
                "a secret flag of the entry's arguments",
                hint=f"its keys: {', '.join(have)}" if have else "it has no env or headers",
                subjects=(key,),
            )
    merged = tuple(dict.fromkeys([*entry.allow_literal, *wanted]))
    return replace(entry, allow_literal=merged)


def checked_entry(name: str, entry: ServerEntry, *, allow_secrets: bool = False) -> dict[str, Any]:
    """The JSON object :meth:`ServerEdits.add` would write for ``entry``, refused as the
    write would refuse it: before anyone is asked to approve a change that cannot land.

    Raises:
        InvalidEntryError: the name or the entry breaks the model, or holds a control
            character.
        PlaintextSecretError: the entry holds a literal secret (unless ``allow_secrets``).
    """
    from mcpctl.config.writerefusals import refuse_control_characters, refuse_literal_secrets

    data = _modelled(name, entry)
    refuse_control_characters({}, {name: data})
    if not allow_secrets:
        refuse_literal_secrets({}, {name: data})
    return data


def _modelled(name: str, entry: ServerEntry) -> dict[str, Any]:
    """``entry``'s JSON object, once its name and fields are checked against the model.

    Raises:
        InvalidEntryError: the name or the entry breaks the model.
    """
    if (why := check_name(name)) is not None:
        raise InvalidEntryError(why)
    data = entry.to_data()
    _, issues = entry_from_data(name, data)
    if issues:
        first = issues[0]
        raise InvalidEntryError(f"{format_path(first.path)}: {first.message}", hint=first.hint)
    return data


class ServerEdits:
    """Edits of single servers, on top of a store's ``update`` (a mixin of ConfigStore)."""

    path: Path

    def update(
        self,
        change: Callable[[dict[str, Any]], T],
        *,
        action: str,
        allow_secrets: bool = False,
        authored: Collection[str] = (),
    ) -> T:
        """Apply ``change`` under the lock and save it (implemented by the store)."""
        raise NotImplementedError

    def add(
        self,
        name: str,
        entry: ServerEntry,
        *,
        force: bool = False,
        allow_secrets: bool = False,
        allow_literal: Iterable[str] = (),
    ) -> AddOutcome:
        """Add (or with ``force`` replace) one server.

        ``allow_literal`` names ``env`` or ``headers`` keys named like secrets whose literal
        values are not secrets: they join the entry's ``allow_literal`` (kept in the file,
        so later writes and ``validate`` accept them too).

        Raises:
            InvalidEntryError: the name or the entry breaks the model, or ``allow_literal``
                names a key the entry does not have.
            ServerExistsError: the name is taken and ``force`` is false.
            PlaintextSecretError: the entry holds a literal secret (``allow_secrets`` to
                write it anyway; ``allow_literal`` for a non-secret under a secret's name).
            and the errors of :meth:`update`.
        """
        if (why := check_name(name)) is not None:
            raise InvalidEntryError(why)
        entry = with_allowed_literals(entry, allow_literal)
        data = _modelled(name, entry)
        existed_before = self.path.exists()

        def change(doc: dict[str, Any]) -> bool:
            replaced = name in doc
            if replaced and not force:
                raise ServerExistsError(
                    f"server {name!r} already exists in {self.path}",
                    hint=f"use --force to replace it, or 'mcpctl remove {name}' first",
                )
            doc[name] = data
            return replaced

        replaced = self.update(
            change, action=f"add {name}", allow_secrets=allow_secrets, authored=(name,)
        )
        return AddOutcome(name, replaced, not existed_before)

    def remove(self, names: Iterable[str], *, missing_ok: bool = False) -> list[str]:
        """Remove servers by name, all or none; returns the names removed.

        Raises:
            ServerNotFoundError: a name is not in the file (unless ``missing_ok``).
            and the errors of :meth:`update`.
        """
        wanted = list(dict.fromkeys(names))

        def change(doc: dict[str, Any]) -> list[str]:
            missing = [n for n in wanted if n not in doc or n.startswith("$")]
            if missing and not missing_ok:
                raise ServerNotFoundError.for_names(missing, _names(doc), self.path)
            removed = [n for n in wanted if n not in missing]
            for n in removed:
                del doc[n]
            return removed

        return self.update(change, action="remove " + " ".join(wanted))

    def set_enabled(self, name: str, enabled: bool) -> bool:
        """Enable or disable a server; returns whether anything changed.

        Raises:
            ServerNotFoundError: no server of that name.
            ConfigInvalidError: the entry is not a JSON object.
            and the errors of :meth:`update`.
        """
        return bool(self.set_enabled_many([name], enabled))

    def set_enabled_many(self, names: Iterable[str], enabled: bool) -> list[str]:
        """Enable or disable servers in one write, all or none (an unknown name changes
        nothing); returns the names whose state changed, in the order given.

        Raises:
            ServerNotFoundError: a name is not a server of the file (every such name, with
                the closest known one).
            ConfigInvalidError: an entry is not a JSON object.
            and the errors of :meth:`update`.
        """
        wanted = list(dict.fromkeys(names))

        def change(doc: dict[str, Any]) -> list[str]:
            missing = [n for n in wanted if n not in doc or n.startswith("$")]
            if missing:
                raise ServerNotFoundError.for_names(missing, _names(doc), self.path)
            changed = []
            for name in wanted:
                entry = doc[name]
                if not isinstance(entry, dict):
                    raise ConfigInvalidError(f"server {name!r} is not a JSON object")
                if (entry.get("enabled", True) is not False) == enabled:
                    continue
                if enabled:
                    entry.pop("enabled", None)  # true is the default: keep the file minimal
                else:
                    entry["enabled"] = False
                changed.append(name)
            return changed

        verb = "enable" if enabled else "disable"
        return self.update(change, action=f"{verb} " + " ".join(wanted))

    def add_to_group(self, group: str, names: Iterable[str]) -> list[str]:
        """Put servers in ``group`` (all or none); returns the ones that were not in it yet.

        Raises:
            InvalidEntryError: ``group`` is not a valid name.
            ServerNotFoundError: a name is not a server of the file.
            ConfigInvalidError: an entry is not a JSON object, or its ``groups`` is not a
                list of names.
            and the errors of :meth:`update`.
        """
        if (why := check_group_name(group)) is not None:
            raise InvalidEntryError(why, subjects=(group,))
        wanted = list(dict.fromkeys(names))

        def change(doc: dict[str, Any]) -> list[str]:
            missing = [n for n in wanted if n not in doc or n.startswith("$")]
            if missing:
                raise ServerNotFoundError.for_names(missing, _names(doc), self.path)
            added = []
            for name in wanted:
                current = _groups_of(doc, name)
                if group not in current:
                    doc[name] = _with_groups(doc[name], [*current, group])
                    added.append(name)
            return added

        return self.update(change, action=f"group add {group} " + " ".join(wanted))

    def remove_from_group(self, group: str, names: Sequence[str] = ()) -> list[str]:
        """Take servers out of ``group``, or with no ``names`` every member (the group is
        dissolved; the servers stay); returns the servers taken out.

        Raises:
            GroupNotFoundError: no server is in ``group``.
            ServerNotFoundError: a name is not a server of the file.
            ConfigInvalidError: an entry is not a JSON object, or its ``groups`` is not a
                list of names.
            and the errors of :meth:`update`.
        """
        wanted = list(dict.fromkeys(names))

        def change(doc: dict[str, Any]) -> list[str]:
            missing = [n for n in wanted if n not in doc or n.startswith("$")]
            if missing:
                raise ServerNotFoundError.for_names(missing, _names(doc), self.path)
            index = _group_index(doc)
            if group not in index:
                raise GroupNotFoundError.for_groups([group], index)
            removed = []
            for name in wanted or index[group]:
                current = _groups_of(doc, name)
                if group in current:
                    doc[name] = _with_groups(doc[name], [g for g in current if g != group])
                    removed.append(name)
            return removed

        action = f"group remove {group}" + "".join(f" {n}" for n in wanted)
        return self.update(change, action=action)


def _names(doc: dict[str, Any]) -> list[str]:
    return [k for k in doc if not k.startswith("$")]


def _groups_of(doc: dict[str, Any], name: str) -> list[str]:
    """The ``groups`` of entry ``name`` as written.

    Raises:
        ConfigInvalidError: the entry is not an object, or its ``groups`` not a list of
            strings (an edit would hide the mistake).
    """
    entry = doc[name]
    if not isinstance(entry, dict):
        raise ConfigInvalidError(f"server {name!r} is not a JSON object")
    groups = entry.get("groups", [])
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise ConfigInvalidError(
            f"server {name!r} has a 'groups' that is not a list of names",
            hint="fix it by hand ('mcpctl validate' shows where)",
        )
    return groups


def _group_index(doc: dict[str, Any]) -> dict[str, list[str]]:
    """Group -> the servers of the raw document that name it (sorted by group)."""
    found: dict[str, list[str]] = {}
    for name, entry in doc.items():
        if name.startswith("$") or not isinstance(entry, dict):
            continue
        groups = entry.get("groups")
        if isinstance(groups, list):
            for group in dict.fromkeys(g for g in groups if isinstance(g, str)):
                found.setdefault(group, []).append(name)
    return {group: found[group] for group in sorted(found)}


def _with_groups(entry: dict[str, Any], groups: list[str]) -> dict[str, Any]:
    """``entry`` with ``groups`` (left out when empty), the key in its canonical place."""
    rest = {k: v for k, v in entry.items() if k != "groups"}
    if not groups:
        return rest
    place = ENTRY_FIELDS.index("groups")
    later = set(ENTRY_FIELDS[place + 1 :])
    out: dict[str, Any] = {}
    for key, value in rest.items():
        if key in later and "groups" not in out:
            out["groups"] = groups
        out[key] = value
    out.setdefault("groups", groups)
    return out
