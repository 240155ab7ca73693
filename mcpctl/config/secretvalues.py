"""The secret values this process has seen, and ``****`` in their place.

Every value a placeholder resolves to from the environment or the secret source is remembered
here for the rest of the process (:func:`resolved_values`): :mod:`mcpctl.config.placeholders`
remembers them as it resolves, :mod:`mcpctl.config.redaction` hides them in everything mcpctl
prints. Both import this module, which imports neither.
"""

from __future__ import annotations

import threading

__all__ = [
    "MIN_SECRET_LEN",
    "REDACTED",
    "forget_resolved",
    "redact_text",
    "remember",
    "resolved_values",
]

REDACTED = "****"

# Values shorter than this would redact half of any output: not worth hiding.
MIN_SECRET_LEN = 3
_seen: set[str] = set()
_seen_lock = threading.Lock()


def remember(value: str) -> None:
    """Keep ``value`` (a value a placeholder resolved to) among those output must not show."""
    if len(value) >= MIN_SECRET_LEN:
        with _seen_lock:
            _seen.add(value)


def forget_resolved() -> None:
    """Forget the values resolved so far (a new run of the CLI in the same process)."""
    with _seen_lock:
        _seen.clear()


def resolved_values() -> frozenset[str]:
    """Every value a placeholder resolved to in this process (from the environment or the
    secret source, never a default): what output must never show."""
    with _seen_lock:
        return frozenset(_seen)


def redact_text(text: str, values: frozenset[str] | set[str]) -> str:
    """``text`` with each of ``values`` (longest first) replaced by ``****``."""
    for value in sorted(values, key=len, reverse=True):
        if value:
            text = text.replace(value, REDACTED)
    return text
