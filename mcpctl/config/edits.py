"""The changes the CLI and the daemon make to a config file: add, remove, enable, disable.

Each is one call of :meth:`ConfigStore.update <mcpctl.config.store.ConfigStore.update>`, so
each is locked, atomic, undoable and refuses literal secrets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from mcpctl.config.checks import check_name, entry_from_data
from mcpctl.config.model import ServerEntry, format_path
from mcpctl.errors import (
    ConfigInvalidError,
    InvalidEntryError,
    ServerExistsError,
    ServerNotFoundError,
)

__all__ = ["AddOutcome", "ServerEdits", "with_allowed_literals"]

T = TypeVar("T")


class AddOutcome(NamedTuple):
    """What :meth:`ServerEdits.add` did."""

    name: str
    replaced: bool
    created_file: bool


def with_allowed_literals(entry: ServerEntry, keys: Iterable[str]) -> ServerEntry:
    """``entry`` with ``keys`` added to its ``allow_literal`` (each must be one of its
    ``env`` keys, or one of its ``headers`` in any case).

    Raises:
        InvalidEntryError: a key is in neither ``env`` nor ``headers``.
    """
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return entry
    headers = {k.lower() for k in entry.headers}
    for key in wanted:
        if key not in entry.env and key.lower() not in headers:
            have = [*entry.env, *entry.headers]
            raise InvalidEntryError(
                f"allow_literal names {key!r}, which is neither an env variable nor a header "
                "of the entry",
                hint=f"its keys: {', '.join(have)}" if have else "it has no env or headers",
                subjects=(key,),
            )
    merged = tuple(dict.fromkeys([*entry.allow_literal, *wanted]))
    return replace(entry, allow_literal=merged)


class ServerEdits:
    """Edits of single servers, on top of a store's ``update`` (a mixin of ConfigStore)."""

    path: Path

    def update(
        self,
        change: Callable[[dict[str, Any]], T],
        *,
        action: str,
        allow_secrets: bool = False,
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
        data = entry.to_data()
        _, issues = entry_from_data(name, data)
        if issues:
            first = issues[0]
            raise InvalidEntryError(f"{format_path(first.path)}: {first.message}", hint=first.hint)
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

        replaced = self.update(change, action=f"add {name}", allow_secrets=allow_secrets)
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

        def change(doc: dict[str, Any]) -> bool:
            if name not in doc or name.startswith("$"):
                raise ServerNotFoundError.for_names([name], _names(doc), self.path)
            entry = doc[name]
            if not isinstance(entry, dict):
                raise ConfigInvalidError(f"server {name!r} is not a JSON object")
            was = entry.get("enabled", True) is not False
            if was == enabled:
                return False
            if enabled:
                entry.pop("enabled", None)  # true is the default: keep the file minimal
            else:
                entry["enabled"] = False
            return True

        verb = "enable" if enabled else "disable"
        return self.update(change, action=f"{verb} {name}")


def _names(doc: dict[str, Any]) -> list[str]:
    return [k for k in doc if not k.startswith("$")]
