"""Atomic file writes: a temporary file in the same directory, fsynced, given the old
file's permissions and owner, then renamed over the file, so a reader sees the old content
or the new, never a mix, even when the writer is killed mid-write.

The writes of user and state files all come here through :mod:`mcpctl.config.store`;
:func:`io_error` turns a failed file operation into the mcpctl error users see.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Any

from mcpctl.config.jsontext import dump_config
from mcpctl.errors import ReadOnlyError, StorageError

__all__ = ["atomic_write", "io_error", "write_json", "write_private"]


def io_error(exc: OSError, path: Path, action: str) -> Exception:
    """The mcpctl error for a failed file operation (read-only, disk full, other I/O)."""
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ReadOnlyError(
            f"cannot {action} {path}: {exc.strerror}",
            hint="check the permissions of the file and its directory",
        )
    if exc.errno == errno.ENOSPC:
        return StorageError(f"cannot {action} {path}: no space left on device")
    return StorageError(f"cannot {action} {path}: {exc.strerror or exc}")


def write_json(path: Path, data: Any, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` as canonical JSON, atomically (see :func:`atomic_write`).

    Raises:
        ReadOnlyError: the file or directory cannot be written.
        StorageError: any other I/O failure (the original file is untouched).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise io_error(exc, path.parent, "create") from None
    atomic_write(path, dump_config(data), mode=mode)


def write_private(path: Path, content: bytes) -> None:
    # Backups: owner-only, and not worth an fsync (the rename keeps them whole).
    atomic_write(path, content, mode=0o600, durable=False)


def atomic_write(
    path: Path, content: bytes, *, mode: int | None = None, durable: bool = True
) -> None:
    """Replace ``path`` with ``content`` atomically (same-directory temp file + fsync).

    ``mode`` defaults to the existing file's permissions, or 0666 minus the umask.
    ``durable=False`` skips the fsyncs (for files that may be lost in a crash, as
    backups may: the rename still makes them all-or-nothing).

    Raises:
        ReadOnlyError: the file or directory cannot be written.
        StorageError: any other I/O failure (the original file is untouched).
    """
    target = Path(os.path.realpath(path))
    directory = target.parent
    existing: os.stat_result | None
    try:
        existing = target.stat()
    except FileNotFoundError:
        existing = None
    tmp = directory / f".{target.name}.{os.urandom(4).hex()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise io_error(exc, target, "write") from None
    try:
        try:
            if mode is None and existing is not None:
                mode = stat.S_IMODE(existing.st_mode)
            if mode is not None:
                os.fchmod(fd, mode)
            if existing is not None and (existing.st_uid, existing.st_gid) != (
                os.getuid(),
                os.getgid(),
            ):
                # Not root: the new file is ours, as any editor would leave it.
                with contextlib.suppress(PermissionError):
                    os.fchown(fd, existing.st_uid, existing.st_gid)
            view = memoryview(content)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        tmp.replace(target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise io_error(exc, target, "write") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if not durable:
        return
    try:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the data itself is synced
    finally:
        os.close(dir_fd)
