"""Reading and writing snapshot files (the last-known state, or a lock file)."""

from __future__ import annotations

from pathlib import Path

from mcpctl.errors import UsageError
from mcpctl.snapshot.model import Snapshot

__all__ = ["load_snapshot", "save_snapshot"]


def load_snapshot(path: Path) -> Snapshot | None:
    """The snapshot in ``path``, or ``None`` when there is no such file (the first boot).

    A lock file may come with a pull request: it is read as untrusted input (a regular file
    within the size limit, valid UTF-8 and JSON, no key written twice, every value of the
    type the format says).

    Raises:
        UsageError: the file is not a snapshot (this format or the orchestrator's plain one),
            with where and why; or it is not a regular file, or over the size limit.
        StorageError: it cannot be read.
    """
    from mcpctl.config.safefile import decode_text, loads_json, read_file

    raw = read_file(path)
    if raw is None:
        return None

    def fail(message: str, line: int, column: int) -> UsageError:
        return UsageError(f"{path} is not a snapshot: {message} (line {line}, column {column})")

    # Lone surrogates are kept: a server may send one in a description, and its lock file
    # must read back.
    data = loads_json(decode_text(raw, path, fail=fail), path, fail=fail, surrogates=True,
                      unique_keys=True)  # fmt: skip
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
    from mcpctl.config.atomicwrite import write_json
    from mcpctl.config.redaction import redactor

    data, _ = redactor(patterns=False).data(snapshot.to_data())
    write_json(path, data)
