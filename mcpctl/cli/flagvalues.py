"""Values of the options several commands share: ``KEY=VALUE`` pairs and durations.

A duration is ``30s``, ``500ms``, ``1.5s``, ``2m`` or ``1h``; a bare number is seconds, for
every option that takes one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import overload

from mcpctl.errors import UsageError

__all__ = ["BARE_SECONDS_WARN", "duration_option", "parse_duration", "parse_pairs"]


def parse_pairs(values: Sequence[str], sep: str, flag: str, example: str) -> dict[str, str]:
    """``KEY=VALUE`` (or ``Name: value``) options as a dict.

    Raises:
        UsageError: a value is not in the form ``example``.
    """
    pairs: dict[str, str] = {}
    for raw in values:
        key, found, value = raw.partition(sep)
        key = key.strip()
        if not found or not key:
            raise UsageError(f"{flag} {raw!r} is not in the form {example}")
        pairs[key] = value.strip() if sep == ":" else value
    return pairs


_DURATION_RE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*", re.IGNORECASE)
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
#: Over this many seconds a bare number gets a warning (milliseconds may have been meant).
BARE_SECONDS_WARN = 600


def parse_duration(text: str, *, flag: str = "--timeout") -> tuple[float, str | None]:
    """Seconds from ``30s``, ``500ms``, ``1.5s``, ``2m`` or ``1h``; a bare number is seconds,
    for every option that takes a duration.

    Returns the seconds and a warning when a bare number is implausible as seconds
    (``--timeout 30000``, where milliseconds were probably meant).

    Raises:
        UsageError: not a duration, zero or negative.
    """
    match = _DURATION_RE.fullmatch(text)
    if match is None:
        if re.fullmatch(r"\s*-.*", text):
            raise UsageError(
                f"{flag} {text!r} must be more than zero", hint="for example 500ms, 30s, 2m"
            )
        raise UsageError(
            f"{flag} {text!r} is not a duration",
            hint="a number of seconds, or one with a unit: 500ms, 30s, 1.5s, 2m",
        )
    number, unit = float(match[1]), (match[2] or "").lower()
    seconds = number * _UNIT_SECONDS[unit or "s"]
    if seconds <= 0:
        raise UsageError(f"{flag} {text!r} must be more than zero")
    if not math.isfinite(seconds):
        raise UsageError(f"{flag} {text!r} is too long", hint="for example 500ms, 30s, 2m")
    warning = None
    if not unit and number > BARE_SECONDS_WARN:
        warning = (
            f"{flag} {text.strip()} is read as {number:g} s ({number / 3600:.1f} h; a bare "
            f"number is seconds); write {number:g}ms for milliseconds"
        )
    return seconds, warning


@overload
def duration_option(
    text: str | None, warnings: list[str], *, flag: str = ..., default: float
) -> float: ...


@overload
def duration_option(
    text: str | None, warnings: list[str], *, flag: str = ..., default: None = None
) -> float | None: ...


def duration_option(
    text: str | None, warnings: list[str], *, flag: str = "--timeout", default: float | None = None
) -> float | None:
    """Seconds of a duration option (``default`` when not given), through
    :func:`parse_duration`; its warning about an implausible bare number goes to ``warnings``.

    Raises:
        UsageError: not a duration, zero or negative.
    """
    if text is None:
        return default
    seconds, note = parse_duration(text, flag=flag)
    if note:
        warnings.append(note)
    return seconds
