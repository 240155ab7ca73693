"""The lock writers of one file take turns on: an exclusive ``flock`` on a lock file in
the state dir (``filelock`` where the system has no ``flock``).

``flock`` is taken directly because importing filelock costs a write command a tenth of
its time; filelock takes the same ``flock`` on POSIX, so processes using either exclude
each other. Where the lock lives and what it is named is for
:class:`~mcpctl.config.filestore.FileStore` to say; this module makes sure it is a plain file
and holds it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

from mcpctl.errors import StorageError

__all__ = ["acquire_lock", "drop_old_lock", "prepare_lock_file"]

_KINDS = {
    stat.S_IFDIR: "directory",
    stat.S_IFIFO: "FIFO",
    stat.S_IFLNK: "symbolic link",
    stat.S_IFSOCK: "socket",
    stat.S_IFCHR: "device",
    stat.S_IFBLK: "device",
}


# Errors of a flock(2) the file system does not support: filelock then decides (it falls
# back to a lock file's existence).
_NO_FLOCK = {errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOLCK, errno.EINVAL}
_POLL_S = 0.05


def _flock(path: Path, timeout: float) -> int | None:
    """An exclusive ``flock`` on ``path`` (created owner-only), as the open descriptor that
    holds it; ``None`` where flock is not available (Windows, some network file systems).

    filelock takes the same ``flock`` on POSIX, so processes using either exclude each other;
    importing it costs a 1,000-entry ``add`` a tenth of its time. Waits up to ``timeout``
    seconds (forever when negative), then raises :class:`TimeoutError`.
    """
    try:
        import fcntl
    except ImportError:  # Windows
        return None
    import time

    flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    created = False
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600)
            created = True
        except FileExistsError:  # another writer made it meanwhile
            fd = os.open(path, flags)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if timeout >= 0 and time.monotonic() >= deadline:
                    raise TimeoutError(path) from None
                time.sleep(_POLL_S)
            except OSError as exc:
                if exc.errno in _NO_FLOCK:
                    os.close(fd)
                    if created:  # filelock's fallback takes the file's existence for a lock
                        path.unlink(missing_ok=True)
                    return None
                raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


def acquire_lock(path: Path, timeout: float) -> Callable[[], None]:
    """Take the exclusive lock of the lock file ``path`` (``flock``; ``filelock`` where there
    is none), waiting up to ``timeout`` seconds (forever when negative); returns the
    function that releases it.

    Raises:
        TimeoutError: another process held it all that time.
        OSError: the lock file cannot be opened or created.
    """
    fd = _flock(path, timeout)
    if fd is not None:
        return lambda: os.close(fd)  # closing releases the flock
    from filelock import FileLock, Timeout  # ~40 ms of imports: only where flock is not

    lock = FileLock(path, timeout=timeout, mode=0o600)
    try:
        lock.acquire()
    except Timeout:
        raise TimeoutError(path) from None
    return lock.release


def prepare_lock_file(path: Path, locked: Path) -> Path:
    """The lock file ``path`` of the file ``locked``, its folder created owner-only.

    Raises:
        StorageError: ``path`` exists and is not a regular file (a directory, a FIFO...).
        ReadOnlyError, StorageError: the folder cannot be created or ``path`` examined.
    """
    from mcpctl.config.atomicwrite import io_error

    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise io_error(exc, path.parent, "create the lock folder") from None
    try:
        st = path.lstat()
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise io_error(exc, path, "lock") from None
    if not stat.S_ISREG(st.st_mode):
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
        raise StorageError(
            f"cannot lock {locked}: its lock {path} is a {kind}",
            hint=f"remove {path}; mcpctl creates it again as a plain file",
        )
    return path


def drop_old_lock(target: Path) -> None:
    """Remove the empty ``.<file>.lock`` older versions left beside the file (in the user's
    work tree, where it showed in ``git status``); anything else of that name is kept."""
    old = target.parent / f".{target.name}.lock"
    with contextlib.suppress(OSError):
        st = old.lstat()
        if stat.S_ISREG(st.st_mode) and st.st_size == 0:
            old.unlink()
