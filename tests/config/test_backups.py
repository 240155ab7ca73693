"""The backup history of a config file: its numbering, what each version records, and what
is read back for ``undo`` and ``undo --list``."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from mcpctl.config.atomicwrite import atomic_write, write_private
from mcpctl.config.backups import BackupHistory
from mcpctl.config.loader import Document


def history(tmp_path: Path, limit: int = 20) -> BackupHistory:
    return BackupHistory(tmp_path / "backups", limit=limit, write=write_private)


def change(backups: BackupHistory, config: Path, new: bytes, action: str) -> int:
    """What the store does around one change of ``config``."""
    existed = config.exists()
    doc = Document(config, {}, existed, config.read_bytes() if existed else b"")
    seq = backups.keep(config, doc)
    atomic_write(config, new)  # replaced, as the store does: the hard link keeps the old
    backups.record(seq, config, doc, new, action)
    return seq


def test_versions_are_numbered_from_one_and_record_the_change(tmp_path: Path) -> None:
    backups = history(tmp_path)
    config = tmp_path / "c.json"
    assert backups.history() == [] and backups.last_written() is None
    before = time.time()
    assert change(backups, config, b"{}\n", "add a") == 1
    assert change(backups, config, b'{"a": 1}\n', "add é") == 2
    names = sorted(p.name for p in backups.folder.iterdir())
    assert names == ["000001.meta.json", "000002.json", "000002.meta.json"]  # 1 made the file
    assert (backups.folder / "000002.json").read_bytes() == b"{}\n"
    meta = json.loads((backups.folder / "000002.meta.json").read_bytes())
    assert meta["action"] == "add é" and meta["existed"] is True
    assert meta["config"] == str(config.absolute())
    assert before <= meta["time"] <= time.time()
    assert meta["after_sha256"] == hashlib.sha256(b'{"a": 1}\n').hexdigest()
    first, second = backups.history()
    assert (first.seq, first.action, first.existed) == (1, "add a", False)
    assert (second.seq, second.action, second.existed) == (2, "add é", True)
    assert second.time == meta["time"] and before <= first.time <= second.time
    assert second.after_sha256 == meta["after_sha256"]
    assert second.path == backups.folder / "000002.json"
    assert backups.last_written() == hashlib.sha256(b'{"a": 1}\n').hexdigest()


def test_numbering_goes_on_after_the_last_version_kept(tmp_path: Path) -> None:
    backups = history(tmp_path, limit=2)
    config = tmp_path / "c.json"
    for i in range(4):
        change(backups, config, f"{i}\n".encode(), f"change {i}")
    assert [b.seq for b in backups.history()] == [3, 4]
    backups.drop(4)
    assert change(backups, config, b"x\n", "again") == 4


def test_a_version_whose_record_is_unreadable_is_skipped_not_the_rest(tmp_path: Path) -> None:
    backups = history(tmp_path)
    config = tmp_path / "c.json"
    for i in range(3):
        change(backups, config, f"{i}\n".encode(), f"change {i}")
    (backups.folder / "000001.meta.json").write_text("{not json", "utf-8")
    assert [b.seq for b in backups.history()] == [2, 3]
    (backups.folder / "000003.meta.json").write_text("{not json", "utf-8")
    assert backups.last_written() is None  # the last change's digest is unknown


def test_a_record_with_fields_missing_reads_as_an_old_version(tmp_path: Path) -> None:
    backups = history(tmp_path)
    backups.folder.mkdir()
    (backups.folder / "000007.meta.json").write_text("{}", "utf-8")
    (backups.folder / "notes.meta.json").write_text("{}", "utf-8")  # not a version
    (only,) = backups.history()
    assert (only.seq, only.action, only.time, only.existed) == (7, "", 0.0, True)
    assert only.after_sha256 is None
    assert backups.last_written() is None
    (backups.folder / "000007.meta.json").write_text('{"after_sha256": 5}', "utf-8")
    assert backups.last_written() is None
    (backups.folder / "000007.meta.json").write_text('["after_sha256"]', "utf-8")
    assert backups.last_written() is None
    (backups.folder / "000008.meta.json").write_text('{"after_sha256": "ab"}', "utf-8")
    assert backups.last_written() == "ab"  # the newest version's
