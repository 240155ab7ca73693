"""What every write of the config refuses, whoever asks for it: the CLI, ``upgrade``, the daemon.

Only what a write adds or changes is looked at: a secret written by hand elsewhere in the
file -- or already in the entry being changed, at the same place -- does not block the
change (``validate`` reports it).
"""

from __future__ import annotations

from typing import Any

from mcpctl.config.controlchars import control_characters
from mcpctl.config.model import format_path
from mcpctl.config.redaction import (
    literal_secrets,
    named_literal_hint,
    named_literal_message,
    placeholder_hint,
)
from mcpctl.errors import InvalidEntryError, PlaintextSecretError

__all__ = ["refuse_control_characters", "refuse_literal_secrets"]


def _at(entry: object, path: tuple[str | int, ...]) -> object:
    for part in path:
        if isinstance(entry, dict) and isinstance(part, str):
            entry = entry.get(part)
        elif isinstance(entry, list) and isinstance(part, int) and part < len(entry):
            entry = entry[part]
        else:
            return None
    return entry


def refuse_literal_secrets(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Refuse a write whose new or changed entries hold a literal secret they did not hold
    before at the same place: a value that looks like a credential, or a literal under an
    ``env`` or ``headers`` key named like a secret that the entry's ``allow_literal`` does
    not list.

    Raises:
        PlaintextSecretError: naming where (never the value), with what to write instead.
    """
    for name, value in after.items():
        if name.startswith("$") or not isinstance(value, dict):
            continue
        old = before.get(name)
        if old == value:
            continue
        for found in literal_secrets(value):
            current = _at(value, found.path)
            if isinstance(old, dict) and _at(old, found.path) == current:
                continue  # there already: the write does not add it
            path = format_path((name, *found.path))
            if found.by_name:
                raise PlaintextSecretError(
                    named_literal_message(path, found),
                    hint=named_literal_hint(
                        name,
                        str(found.path[0]),
                        found.key,
                        current if isinstance(current, str) else "",
                    ),
                    subjects=(path, found.key),
                )
            raise PlaintextSecretError(
                f"{path} looks like a literal secret; mcpctl does not write secrets into the "
                "config file",
                hint=placeholder_hint(name, format_path(found.path), found.key),
                subjects=(path, format_path(found.path)),
            )


def refuse_control_characters(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Refuse a write whose new or changed entries hold a control character.

    Raises:
        InvalidEntryError: naming where, with the character shown escaped.
    """

    for name, value in after.items():
        if name.startswith("$") or before.get(name) == value:
            continue
        for path, char, _ in control_characters(name, value):
            raise InvalidEntryError(
                f"{format_path(path)} contains the control character {char}; mcpctl does not "
                "write terminal controls into the config file",
                hint="remove it (a shell may have put it there: check the quoting)",
            )
