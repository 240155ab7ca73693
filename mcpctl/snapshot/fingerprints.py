"""Fingerprints: SHA-256 of canonical JSON (RFC 8785), of entries and of what servers send.

A tool is fingerprinted whole -- name, title, description, inputSchema, outputSchema,
annotations, icons, ``_meta`` -- as the server sent it: pinning only what an approval dialog
shows misses most of the changes a server can make to what a tool does.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from mcpctl.config.model import ServerEntry

__all__ = ["canonical_json", "entry_fields", "fingerprint", "fingerprint_entry", "fingerprint_tool"]


def canonical_json(value: Any) -> bytes:
    """``value`` as RFC 8785 canonical JSON (sorted keys, no spaces, ECMAScript numbers).

    Raises:
        ValueError: a value JSON cannot hold (NaN, infinity, a non-string key, an object).
    """
    import rfc8785

    try:
        return rfc8785.dumps(value)
    except rfc8785.IntegerDomainError:
        try:  # beyond 2**53 (an int64 bound in a schema): the double a JavaScript parser reads
            doubles = _as_doubles(value)
        except OverflowError as exc:
            raise ValueError(f"cannot be fingerprinted: {exc}") from None
        return canonical_json(doubles)
    except (rfc8785.CanonicalizationError, TypeError) as exc:
        raise ValueError(f"cannot be fingerprinted: {exc}") from None


def _as_doubles(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _as_doubles(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_doubles(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53 - 1:
        return float(value)
    return value


def fingerprint(value: Any) -> str:
    """``sha256:`` and the hex SHA-256 of ``value``'s canonical JSON."""
    return "sha256:" + hashlib.sha256(canonical_json(value)).hexdigest()


def fingerprint_tool(tool: Mapping[str, Any]) -> str:
    """The fingerprint of a tool (or prompt, or resource template) as the server sent it:
    the whole object, every field included."""
    return fingerprint(dict(tool))


def entry_fields(entry: ServerEntry) -> dict[str, Any]:
    """An entry's configuration as written (placeholders unresolved, never a resolved
    secret), without ``enabled``: a snapshot holds the enabled servers only."""
    data = entry.to_data()
    data.pop("enabled", None)
    return data


def fingerprint_entry(entry: ServerEntry) -> str:
    """The fingerprint of an entry's configuration (see :func:`entry_fields`)."""
    return fingerprint(entry_fields(entry))
