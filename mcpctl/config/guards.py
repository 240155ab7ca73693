"""What every write of the config refuses, whoever asks for it: the CLI, ``upgrade``, the daemon.

Only the entries a write adds or changes are looked at: a secret written by hand elsewhere in
the file does not block unrelated changes (``validate`` reports it).
"""

from __future__ import annotations

from typing import Any

from mcpctl.config.controlchars import control_characters
from mcpctl.config.model import format_path
from mcpctl.config.redaction import literal_secrets, placeholder_hint
from mcpctl.errors import InvalidEntryError, PlaintextSecretError

__all__ = ["refuse_control_characters", "refuse_literal_secrets"]


def refuse_literal_secrets(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Refuse a write whose new or changed entries hold a literal secret.

    Raises:
        PlaintextSecretError: naming where, with the placeholder to write instead.
    """
    for name, value in after.items():
        if name.startswith("$") or not isinstance(value, dict) or before.get(name) == value:
            continue
        for rel, key in literal_secrets(value):
            where = format_path(rel)
            raise PlaintextSecretError(
                f"{format_path((name, *rel))} looks like a literal secret; mcpctl does not "
                "write secrets into the config file",
                hint=placeholder_hint(name, where, key),
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
