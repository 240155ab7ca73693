"""Reading and writing snapshot files (the last-known state, or a lock file)."""

from __future__ import annotations

import json
from pathlib import Path

from mcpctl.errors import StorageError, UsageError
from mcpctl.snapshot.model import Snapshot

__all__ = ["load_snapshot", "save_snapshot"]


def load_snapshot(path: Path) -> Snapshot | None:
    """The snapshot in ``path``, or ``None`` when there is no such file (the first boot).

    Raises:
        UsageError: the file is not a snapshot (this format or Annabelle's).
        StorageError: it cannot be read.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path} is not a snapshot: not valid JSON ({exc})") from None
    try:
        return Snapshot.from_data(data)
    except UsageError as exc:
        raise UsageError(f"{path} is {exc.message}", hint=exc.hint) from None


def save_snapshot(snapshot: Snapshot, path: Path) -> None:
    """Write ``snapshot`` to ``path`` atomically (sorted and stable: a lock file diffs well).

    No secret mcpctl resolved is written, in any of its forms: probing redacted what servers
    sent (:func:`~mcpctl.snapshot.probing.state_of`), and every string of the file is checked
    again here, keys included.

    Raises:
        ReadOnlyError, StorageError: it cannot be written (any old file is untouched).
    """
    from mcpctl.config.redaction import redactor
    from mcpctl.config.store import write_json

    data, _ = redactor(patterns=False).data(snapshot.to_data())
    write_json(path, data)
