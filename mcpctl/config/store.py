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

The pieces: :mod:`~mcpctl.config.locking` (step 1), :mod:`~mcpctl.config.filestore` (steps 1,
2, 4 and 5 for any file, and undo), :mod:`~mcpctl.config.atomicwrite` (step 5); this module
adds what is particular to the config's JSON (steps 2 and 3) and keeps the file's trust.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, TypeVar

from mcpctl.config.atomicwrite import atomic_write, io_error, write_json
from mcpctl.config.backups import Backup
from mcpctl.config.edits import AddOutcome, ServerEdits
from mcpctl.config.filestore import FileStore, UndoOutcome, update_trust_record
from mcpctl.config.jsontext import dump_config, splice_canonical
from mcpctl.config.loader import Document, read_document
from mcpctl.config.locking import acquire_lock
from mcpctl.config.writerefusals import refuse_control_characters, refuse_literal_secrets
from mcpctl.errors import ConfigError, ConfigInvalidError
from mcpctl.paths import Paths

__all__ = [
    "AddOutcome",
    "Backup",
    "ConfigStore",
    "FileStore",
    "UndoOutcome",
    "acquire_lock",
    "atomic_write",
    "io_error",
    "update_trust_record",
    "write_json",
]

T = TypeVar("T")


class ConfigStore(FileStore, ServerEdits):
    """Safe, concurrent edits of one ``external-mcps.json`` (see :class:`FileStore`)."""

    refuse_error = ConfigError
    #: The trust record the changes keep (:mod:`mcpctl.config.trustkeep`), and mcpctl's
    #: config dir, whose files need none (``None``: the environment's).
    trust_record: Path | None = None
    config_dir: Path | None = None

    @classmethod
    def from_paths(cls, paths: Paths) -> ConfigStore:
        """The store of the config file ``paths`` resolves to, with its backups."""
        from mcpctl.config.trustrecord import RECORD_NAME

        config = paths.config
        store = cls(config, backups=paths.backups_for(config), locks=paths.locks_dir)
        if paths.home is not None:
            store.trust_record = paths.state_dir / RECORD_NAME
            store.config_dir = paths.config_dir
        return store

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
        authored: Collection[str] = (),
    ) -> T:
        """Apply ``change`` to the file's JSON object under the lock and save it.

        ``change`` gets a copy of the object (entries are copies too) and edits it in
        place; if the object is unchanged afterwards the file is not written (a server of
        ``authored`` is still approved). An entry the change
        adds or alters must not hold a literal secret (a token, a password in a URL, a
        credential in ``auth`` that is not a ``${VAR}`` placeholder) unless
        ``allow_secrets`` says the caller really means to write one.

        The change keeps the file's trust (:mod:`mcpctl.config.trust`): a server it adds, or
        one of ``authored`` (servers the change writes in full for the user, as ``add
        --force``), is approved; a server it alters stays as trusted as it was.

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
                # Nothing to write (no backup, no new file), but a server written in full
                # for the user is theirs even when it reads as it did.
                if authored:
                    self._keep_trust(target, doc.data, data, authored)
                return result
            refuse_control_characters(doc.data, data)
            if not allow_secrets:
                refuse_literal_secrets(doc.data, data)
            # Recorded first: a failure leaves the file as it was; a crash between the two
            # leaves approved a content the user asked for.
            self._keep_trust(target, doc.data, data, authored)
            self._land(target, doc, self._render(doc, data), action)
            return result

    def _keep_trust(
        self, target: Path, before: dict[str, Any], after: dict[str, Any],
        authored: Collection[str],
    ) -> None:  # fmt: skip
        """Record what the change keeps approved (nothing for the user's own file)."""
        from mcpctl.config.trustkeep import keep_edit, touched
        from mcpctl.config.trustrecord import RECORD_NAME, is_own
        from mcpctl.quickpaths import user_dir

        config_dir = self.config_dir or Path(user_dir("config"))
        if is_own(target, config_dir) or not touched(before, after, authored):
            return
        record = self.trust_record or Path(user_dir("state")) / RECORD_NAME
        real = os.path.realpath(target)
        update_trust_record(
            record, lambda files: keep_edit(files, real, before, after, authored),
            locks=self.locks,
        )  # fmt: skip

    def _render(self, doc: Document, data: dict[str, Any]) -> bytes:
        # When the file is byte for byte what mcpctl last wrote, it is canonical, and the
        # entries a change did not touch can be copied instead of encoded again.
        last = self._backups.last_written() if self._backups is not None else None
        if doc.raw and last is not None and last == hashlib.sha256(doc.raw).hexdigest():
            spliced = splice_canonical(doc.raw, doc.data, data)
            if spliced is not None:
                return spliced
        return dump_config(data)
