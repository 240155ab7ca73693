"""The backup history of a config file: the versions before mcpctl's last changes, for undo.

One folder per config file (see :meth:`mcpctl.paths.Paths.backups_for`); each change leaves
``NNNNNN.json`` (the bytes before it, absent when the change created the file) and
``NNNNNN.meta.json`` (what the change was, when, and the SHA-256 of the bytes it wrote, which
tells undo whether the file was edited by hand since). The store writes through the
``write`` function it passes in; this module only decides names, contents and pruning.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from mcpctl.config.jsontext import dump_config

if TYPE_CHECKING:
    from mcpctl.config.loader import Document

__all__ = ["Backup", "BackupHistory"]


class Backup(NamedTuple):
    """One saved version of a config file, from before a change mcpctl made."""

    seq: int
    action: str
    time: float
    existed: bool
    after_sha256: str | None
    path: Path


class BackupHistory:
    """The saved versions of one config file, in ``folder`` (the last ``limit`` of them)."""

    def __init__(self, folder: Path, *, limit: int, write: Callable[[Path, bytes], None]) -> None:
        self.folder = folder
        self.limit = limit
        self._write = write

    def _files(self) -> list[tuple[int, Path]]:
        if not self.folder.is_dir():
            return []
        found = []
        for meta in self.folder.glob("*.meta.json"):
            stem = meta.name.split(".", 1)[0]
            if stem.isdigit():
                found.append((int(stem), meta))
        return sorted(found)

    def last_written(self) -> str | None:
        """The SHA-256 of what mcpctl's last change wrote, if it is known."""
        files = self._files()
        if not files:
            return None
        try:
            meta = json.loads(files[-1][1].read_bytes())
        except (OSError, ValueError):
            return None
        digest = meta.get("after_sha256") if isinstance(meta, dict) else None
        return digest if isinstance(digest, str) else None

    def keep(self, target: Path, doc: Document) -> int:
        """Keep the current bytes of ``target`` before a change replaces them.

        Returns the version's sequence number; :meth:`record` enters it in the history once
        the change has landed (until then the version is invisible, and the next one
        reuses its number).

        Raises:
            OSError: the folder cannot be created (the store turns it into its error).
        """
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        existing = self._files()
        seq = existing[-1][0] + 1 if existing else 1
        copy = self.folder / f"{seq:06d}.json"
        copy.unlink(missing_ok=True)  # a version of a change that never landed
        if doc.exists:
            # The file is about to be replaced, not rewritten, so a hard link keeps the
            # old version for free; across file systems, copy it.
            try:
                os.link(target, copy)
            except OSError:
                self._write(copy, doc.raw)
        return seq

    def record(self, seq: int, config: Path, doc: Document, content: bytes, action: str) -> None:
        """Enter version ``seq`` in the history: the change that replaced it has landed."""
        meta = {
            "action": action,
            "time": time.time(),
            "config": str(config.absolute()),
            "existed": doc.exists,
            "after_sha256": hashlib.sha256(content).hexdigest(),
        }
        self._write(self.folder / f"{seq:06d}.meta.json", dump_config(meta))
        existing = self._files()
        for old_seq, _ in existing[: max(0, len(existing) - self.limit)]:
            self.drop(old_seq)

    def drop(self, seq: int) -> None:
        """Forget one saved version."""
        for suffix in (".meta.json", ".json"):
            (self.folder / f"{seq:06d}{suffix}").unlink(missing_ok=True)

    def history(self) -> list[Backup]:
        """The saved versions, oldest first."""
        out = []
        for seq, meta_path in self._files():
            try:
                meta = json.loads(meta_path.read_text("utf-8"))
            except (OSError, ValueError):
                continue
            out.append(
                Backup(
                    seq=seq,
                    action=str(meta.get("action", "")),
                    time=float(meta.get("time", 0)),
                    existed=bool(meta.get("existed", True)),
                    after_sha256=meta.get("after_sha256"),
                    path=meta_path.with_name(f"{seq:06d}.json"),
                )
            )
        return out
