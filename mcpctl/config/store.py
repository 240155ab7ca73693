"""The only writer of user files: lock, re-read, change, atomic replace, backups, undo.

Every change to a config file goes through :meth:`ConfigStore.update`:

1. take an exclusive lock (``flock``; ``filelock`` where there is none) on
   ``<state dir>/locks/<digest>.lock``, the digest being of the file's resolved path, so
   concurrent ``mcpctl`` processes (and the daemon) queue instead of losing writes. The
   lock is never beside the file: nothing is left in the user's work tree, and a lock on
   the file itself would not survive the atomic replace (step 5);
2. re-read the file under the lock and refuse to touch it if it is not valid JSON
   or has duplicate keys (rewriting would silently drop data);
3. apply the change to the raw JSON object -- entries mcpctl did not touch, key order
   and top-level ``$`` keys stay exactly as they were;
4. keep the previous bytes under the state dir's ``backups/`` (the last 20), for undo
   (:mod:`mcpctl.config.backups` decides their layout; this module writes them);
5. write a temporary file in the same directory, fsync it, give it the old file's
   permissions, and ``os.replace`` it over the file: readers see the old or the new
   content, never a mix, even if the process is killed mid-write.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from mcpctl.config.backups import Backup, BackupHistory
from mcpctl.config.edits import AddOutcome, ServerEdits
from mcpctl.config.guards import refuse_control_characters, refuse_literal_secrets
from mcpctl.config.jsontext import dump_config, splice_canonical
from mcpctl.config.loader import Document, read_document
from mcpctl.config.safefile import read_file, refuse_unreadable
from mcpctl.errors import (
    ConfigError,
    ConfigInvalidError,
    LockTimeoutError,
    McpctlError,
    NothingToUndoError,
    ReadOnlyError,
    StorageError,
    UndoConflictError,
    UsageError,
)
from mcpctl.paths import Paths, lock_key

__all__ = [
    "AddOutcome",
    "Backup",
    "ConfigStore",
    "FileStore",
    "UndoOutcome",
    "acquire_lock",
    "atomic_write",
    "io_error",
    "write_json",
]

T = TypeVar("T")
KEEP_BACKUPS = 20
DEFAULT_LOCK_TIMEOUT = 15.0


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


def _drop_old_lock(target: Path) -> None:
    """Remove the empty ``.<file>.lock`` older versions left beside the file (in the user's
    work tree, where it showed in ``git status``); anything else of that name is kept."""
    old = target.parent / f".{target.name}.lock"
    with contextlib.suppress(OSError):
        st = old.lstat()
        if stat.S_ISREG(st.st_mode) and st.st_size == 0:
            old.unlink()


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


def _write_private(path: Path, content: bytes) -> None:
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


class UndoOutcome(NamedTuple):
    """What :meth:`ConfigStore.undo` restored."""

    action: str
    time: float
    removed_file: bool
    remaining: int


class FileStore:
    """Safe, concurrent, undoable replacement of one file: lock, re-read, change, atomic
    replace, backups.

    The base of :class:`ConfigStore`; on its own it edits files whose format belongs to
    another tool (a client's config, for ``render --install``) through :meth:`replace`.

    Args:
        path: the file (it may not exist yet; the first write creates it).
        backups: the folder for this file's backups; ``None`` disables backups and undo.
        lock_timeout: seconds to wait for another writer (``MCPCTL_LOCK_TIMEOUT``).
        locks: the folder of the lock files (default: ``locks/`` in the state dir, which
            ``MCPCTL_HOME`` moves); writers of one file must share it to take turns.
    """

    #: The command that undoes a change of this file, for hints.
    undo_command = "mcpctl undo"
    #: What a file that cannot be read safely raises (not a regular file, too large).
    refuse_error: type[McpctlError] = UsageError

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        backups: Path | None = None,
        lock_timeout: float | None = None,
        keep_backups: int = KEEP_BACKUPS,
        locks: Path | None = None,
    ) -> None:
        self.path = Path(path)
        self.locks = locks
        self.backups = backups
        self.keep_backups = keep_backups
        self._backups = (
            BackupHistory(backups, limit=keep_backups, write=_write_private)
            if backups is not None
            else None
        )
        if lock_timeout is None:
            lock_timeout = float(os.environ.get("MCPCTL_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT))
        self.lock_timeout = lock_timeout

    # --- the one write path -----------------------------------------------------------

    def _real(self) -> Path:
        return Path(os.path.realpath(self.path))

    def _check_writable(self, target: Path) -> None:
        refuse_unreadable(self.path, error=self.refuse_error)  # the name the user knows
        directory = target.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise io_error(exc, directory, "create") from None
        # A read-only mode is a statement of intent; honour it even for root.
        try:
            st = target.stat()
        except FileNotFoundError:
            pass
        else:
            if not st.st_mode & 0o222:
                raise ReadOnlyError(
                    f"{target} is read-only (mode {stat.S_IMODE(st.st_mode):04o})",
                    hint=f"make it writable first: chmod u+w {target}",
                )
        dst = directory.stat()
        if not dst.st_mode & 0o222 or not os.access(directory, os.W_OK | os.X_OK):
            raise ReadOnlyError(
                f"cannot write in {directory}: the directory is read-only",
                hint="mcpctl replaces the file atomically, so its directory must be writable",
            )

    def lock_path(self) -> Path:
        """The lock file writers of this file take turns on (in the state dir's ``locks/``,
        named by a digest of the file's resolved path)."""
        if self.locks is not None:
            return self.locks / f"{lock_key(self.path)}.lock"
        return Paths.from_env().lock_for(self.path)

    def _lock_file(self) -> Path:
        """:meth:`lock_path`, its folder created owner-only, refused when it is not a file."""
        path = self.lock_path()
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
                f"cannot lock {self.path}: its lock {path} is a {kind}",
                hint=f"remove {path}; mcpctl creates it again as a plain file",
            )
        return path

    @contextlib.contextmanager
    def _locked(self, target: Path) -> Iterator[None]:
        """Hold the file's exclusive lock (after checking it can be written at all)."""
        self._check_writable(target)
        path = self._lock_file()
        try:
            release = acquire_lock(path, self.lock_timeout)
        except TimeoutError:
            raise self._busy() from None
        except OSError as exc:
            raise io_error(exc, path, "lock") from None
        try:
            _drop_old_lock(target)
            yield
        finally:
            release()

    def _busy(self) -> LockTimeoutError:
        return LockTimeoutError(
            f"another process has been changing {self.path} for {self.lock_timeout:g} s",
            hint="retry, or raise MCPCTL_LOCK_TIMEOUT",
        )

    def _remove_stale_temps(self, target: Path) -> None:
        # Under the lock no other writer is mid-write: any temp file is a leftover
        # of a killed process.
        for leftover in target.parent.glob(f".{target.name}.*.tmp"):
            leftover.unlink(missing_ok=True)

    def _land(self, target: Path, before: Document, content: bytes, action: str, *,
              mode: int | None = None) -> None:  # fmt: skip
        """Write ``content`` over ``target`` (holding the lock), keeping ``before`` for undo."""
        seq = None
        if self._backups is not None:
            try:
                seq = self._backups.keep(target, before)
            except OSError as exc:
                raise io_error(exc, self._backups.folder, "write in") from None
        try:
            atomic_write(target, content, mode=mode)
        except BaseException:
            if self._backups is not None and seq is not None:
                self._backups.drop(seq)  # the change did not happen
            raise
        # Only a change that landed enters the history: a writer killed before the
        # rename leaves the file as it was and no undo step for what never happened.
        if self._backups is not None and seq is not None:
            self._backups.record(seq, self.path, before, content, action)

    def replace(
        self,
        change: Callable[[bytes | None], bytes | None],
        *,
        action: str,
        mode: int | None = None,
    ) -> bool:
        """Replace the file with what ``change`` makes of its bytes (``None``: no file yet).

        ``change`` runs under the lock; returning ``None`` or the same bytes writes nothing.
        ``mode`` sets the new file's permissions (default: the old file's). Returns whether
        the file was written.

        Raises:
            UsageError (ConfigError for the config): the file is not a regular file (a FIFO,
                a device) or is over the size limit (``MCPCTL_MAX_FILE_BYTES``).
            ReadOnlyError: the file or its directory cannot be written.
            LockTimeoutError: another writer held the lock too long.
            StorageError: any other I/O failure; the file is unchanged.
        """
        target = self._real()
        with self._locked(target):
            self._remove_stale_temps(target)
            current = read_file(target, error=self.refuse_error)
            content = change(current)
            if content is None or content == current:
                return False
            before = Document(self.path, {}, current is not None, current or b"")
            self._land(target, before, content, action, mode=mode)
            return True

    def history(self) -> list[Backup]:
        """The saved versions, oldest first (at most ``keep_backups``)."""
        return self._backups.history() if self._backups is not None else []

    def undo(self, *, force: bool = False) -> UndoOutcome:
        """Restore the file as it was before mcpctl's last change (repeat to go further).

        Raises:
            NothingToUndoError: no backup is left.
            UndoConflictError: the file was edited after that change (``force`` overrides).
            ReadOnlyError, LockTimeoutError, StorageError: as for :meth:`update`.
        """
        target = self._real()
        with self._locked(target):
            self._remove_stale_temps(target)
            history = self.history()
            if not history:
                raise NothingToUndoError(
                    f"no earlier version of {self.path} is saved",
                    hint="mcpctl keeps the last 20 versions of files it changed itself",
                )
            last = history[-1]
            current = read_file(target, error=self.refuse_error)
            current_hash = hashlib.sha256(current).hexdigest() if current is not None else None
            if not force and current_hash != last.after_sha256:
                raise UndoConflictError(
                    f"{self.path} was changed after mcpctl's last change ({last.action}); "
                    "undoing would lose those edits",
                    hint=f"run '{self.undo_command} --force' to restore the saved version anyway",
                )
            if last.existed:
                try:
                    content = last.path.read_bytes()
                except OSError as exc:
                    raise io_error(exc, last.path, "read") from None
                atomic_write(target, content)
            else:
                target.unlink(missing_ok=True)
            if self._backups is not None:
                self._backups.drop(last.seq)
            return UndoOutcome(last.action, last.time, not last.existed, len(history) - 1)


class ConfigStore(FileStore, ServerEdits):
    """Safe, concurrent edits of one ``external-mcps.json`` (see :class:`FileStore`)."""

    refuse_error = ConfigError

    @classmethod
    def from_paths(cls, paths: Paths) -> ConfigStore:
        """The store of the config file ``paths`` resolves to, with its backups."""
        config = paths.config
        return cls(config, backups=paths.backups_for(config), locks=paths.locks_dir)

    # --- reading ------------------------------------------------------------------

    def read(self) -> Document:
        """The file's JSON object as written (empty when the file does not exist).

        Raises:
            ConfigSyntaxError: not valid JSON (with line and column).
            StorageError: cannot be read.
        """
        return read_document(self.path)

    def update(
        self,
        change: Callable[[dict[str, Any]], T],
        *,
        action: str,
        allow_secrets: bool = False,
    ) -> T:
        """Apply ``change`` to the file's JSON object under the lock and save it.

        ``change`` gets a copy of the object (entries are copies too) and edits it in
        place; if the object is unchanged afterwards nothing is written. An entry the change
        adds or alters must not hold a literal secret (a token, a password in a URL, a
        credential in ``auth`` that is not a ``${VAR}`` placeholder) unless
        ``allow_secrets`` says the caller really means to write one.

        Raises:
            PlaintextSecretError: a changed entry holds a literal secret; nothing is written.
            InvalidEntryError: a changed entry holds a control character; nothing is written.
            ConfigSyntaxError: the current file is not valid JSON; it is left alone.
            ConfigInvalidError: the file has duplicate keys; it is left alone.
            ReadOnlyError: the file or its directory cannot be written.
            LockTimeoutError: another writer held the lock too long.
            StorageError: any other I/O failure; the file is unchanged.
        """
        target = self._real()
        with self._locked(target):
            self._remove_stale_temps(target)
            doc = read_document(target)
            if doc.duplicates:
                raise ConfigInvalidError(
                    f"{self.path} defines {doc.duplicates[0]!r} more than once; "
                    "mcpctl will not rewrite it and drop one of them",
                    hint="remove the duplicate by hand (mcpctl validate shows where)",
                )
            data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in doc.data.items()}
            result = change(data)
            if data == doc.data:
                return result  # nothing to do: no write, no backup, no new file
            refuse_control_characters(doc.data, data)
            if not allow_secrets:
                refuse_literal_secrets(doc.data, data)
            self._land(target, doc, self._render(doc, data), action)
            return result

    def _render(self, doc: Document, data: dict[str, Any]) -> bytes:
        # When the file is byte for byte what mcpctl last wrote, it is canonical, and the
        # entries a change did not touch can be copied instead of encoded again.
        last = self._backups.last_written() if self._backups is not None else None
        if doc.raw and last is not None and last == hashlib.sha256(doc.raw).hexdigest():
            spliced = splice_canonical(doc.raw, doc.data, data)
            if spliced is not None:
                return spliced
        return dump_config(data)
