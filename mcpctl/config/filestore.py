"""One file replaced safely by concurrent writers: lock, re-read, change, atomic replace,
backups, undo (:class:`FileStore`), and the trust record written the same way.

:class:`~mcpctl.config.store.ConfigStore` is a :class:`FileStore` that knows the config's
JSON; on its own a :class:`FileStore` edits files whose format belongs to another tool.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from mcpctl.config.atomicwrite import atomic_write, io_error, write_private
from mcpctl.config.backups import Backup, BackupHistory
from mcpctl.config.loader import Document
from mcpctl.config.locking import acquire_lock, drop_old_lock, prepare_lock_file
from mcpctl.config.safefile import read_file, refuse_unreadable
from mcpctl.errors import (
    LockTimeoutError,
    McpctlError,
    NothingToUndoError,
    ReadOnlyError,
    StorageError,
    UndoConflictError,
    UsageError,
)
from mcpctl.paths import Paths, lock_key

__all__ = ["FileStore", "UndoOutcome", "update_trust_record"]

KEEP_BACKUPS = 20
DEFAULT_LOCK_TIMEOUT = 15.0


def update_trust_record(
    record: Path,
    change: Callable[[dict[str, dict[str, object]]], object],
    *,
    locks: Path | None = None,
) -> None:
    """Apply ``change`` to the files of the trust record (:mod:`mcpctl.config.trustrecord`)
    under the record's lock, and save it; a change returning ``False`` writes nothing. A
    record that is not JSON of the expected shape is replaced (it trusted nothing).

    Raises:
        StorageError: the record is not a regular file, too large, or cannot be written.
        ReadOnlyError, LockTimeoutError: as for :meth:`FileStore.replace`.
    """
    from mcpctl.config.trustrecord import dump_record, load_record

    def apply(current: bytes | None) -> bytes | None:
        files = load_record(current)
        return None if change(files) is False else dump_record(files)

    try:
        FileStore(record, locks=locks).replace(apply, action="trust", mode=0o600)
    except UsageError as exc:  # not a regular file, too large: it cannot be replaced
        raise StorageError(
            f"cannot record what is trusted: {exc.message}",
            hint=f"remove {record} (then approve the files again with 'mcpctl trust')",
        ) from None


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
            BackupHistory(backups, limit=keep_backups, write=write_private)
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
        return prepare_lock_file(self.lock_path(), self.path)

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
            drop_old_lock(target)
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
