"""The small JSON files mcpctl keeps for itself: the era memory, the tool listings.

Each holds one object of records (``{"format": 1, KEY: {id: record}}``). They are caches: a
file that cannot be read -- missing, not a regular file (a FIFO planted in its place does not
hang the read), too large, not JSON, not the expected shape -- reads as no records, and one
that cannot be written is left as it was. Writes go through the store's atomic replace.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

__all__ = ["read_records", "write_records"]


def read_records(path: Path, key: str, max_bytes: int) -> dict[str, dict[str, Any]]:
    """The records under ``key`` in the file at ``path`` (object values only)."""
    from mcpctl.config.safefile import read_file
    from mcpctl.errors import McpctlError

    try:
        raw = read_file(path, limit=max_bytes)
    except McpctlError:
        return {}
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    found = data.get(key) if isinstance(data, dict) else None
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, dict)}


def write_records(path: Path, key: str, records: dict[str, dict[str, Any]]) -> None:
    """Replace the file at ``path`` with ``records`` under ``key`` (ASCII JSON); never raises."""
    from mcpctl.config.store import atomic_write
    from mcpctl.errors import McpctlError

    text = json.dumps({"format": 1, key: records}, indent=1, ensure_ascii=True)
    with contextlib.suppress(OSError, McpctlError):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, (text + "\n").encode("ascii"), durable=False)
