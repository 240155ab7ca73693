"""One file replaced safely, and the trust record written the same way
(mcpctl.config.filestore); the config's own store is tested in test_store.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl.config.filestore import FileStore, UndoOutcome, update_trust_record
from mcpctl.errors import NothingToUndoError, StorageError
from mcpctl.paths import lock_key

DIGEST = "sha256:" + "0" * 64


def test_the_trust_record_is_written_owner_only_under_its_lock(tmp_path: Path) -> None:
    record = tmp_path / "state" / "trust.json"
    approved = str(tmp_path / "c.json")

    def approve(files: dict[str, dict[str, object]]) -> None:
        files[approved] = {"servers": {"a": [DIGEST]}}

    update_trust_record(record, approve, locks=tmp_path / "locks")
    assert record.stat().st_mode & 0o777 == 0o600
    document = json.loads(record.read_text())
    assert document["files"] == {approved: {"servers": {"a": [DIGEST]}}}
    assert [p.name for p in (tmp_path / "locks").iterdir()] == [f"{lock_key(record)}.lock"]

    def revoke(files: dict[str, dict[str, object]]) -> None:
        files.clear()

    update_trust_record(record, revoke, locks=tmp_path / "locks")
    assert json.loads(record.read_text())["files"] == {}


def test_a_change_of_the_record_returning_false_writes_nothing(tmp_path: Path) -> None:
    record = tmp_path / "trust.json"
    seen: list[dict[str, dict[str, object]]] = []

    def look(files: dict[str, dict[str, object]]) -> bool:
        seen.append(dict(files))
        files["/x"] = {"servers": {"a": [DIGEST]}}
        return False

    update_trust_record(record, look, locks=tmp_path / "locks")
    assert seen == [{}] and not record.exists()
    record.write_text("not json")  # garbage is an empty record, replaced by the next change
    update_trust_record(record, look, locks=tmp_path / "locks")
    assert record.read_text() == "not json"
    update_trust_record(record, lambda files: None, locks=tmp_path / "locks")
    assert json.loads(record.read_text())["files"] == {}


def test_a_record_that_is_not_a_file_says_how_to_start_again(tmp_path: Path) -> None:
    record = tmp_path / "trust.json"
    record.mkdir()
    with pytest.raises(StorageError) as caught:
        update_trust_record(record, lambda files: None, locks=tmp_path / "locks")
    assert caught.value.message == (
        f"cannot record what is trusted: {record} is a directory, not a regular file"
    )
    assert caught.value.hint == (
        f"remove {record} (then approve the files again with 'mcpctl trust')"
    )


def test_a_file_store_waits_15_s_and_keeps_20_versions_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCPCTL_LOCK_TIMEOUT", raising=False)
    store = FileStore(tmp_path / "f", locks=tmp_path / "locks")
    assert (store.lock_timeout, store.keep_backups, store.backups) == (15.0, 20, None)
    assert store.lock_path() == tmp_path / "locks" / f"{lock_key(tmp_path / 'f')}.lock"
    monkeypatch.setenv("MCPCTL_LOCK_TIMEOUT", "2.5")
    assert FileStore(tmp_path / "f").lock_timeout == 2.5
    assert FileStore(tmp_path / "f", lock_timeout=0).lock_timeout == 0


def test_without_backups_a_replace_leaves_nothing_to_undo(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "f", locks=tmp_path / "locks")
    assert store.replace(lambda current: b"new", action="install") is True
    assert (tmp_path / "f").read_bytes() == b"new" and store.history() == []
    with pytest.raises(NothingToUndoError) as caught:
        store.undo()
    assert caught.value.message == f"no earlier version of {tmp_path / 'f'} is saved"
    assert caught.value.hint == "mcpctl keeps the last 20 versions of files it changed itself"


def test_a_replace_that_changes_nothing_writes_nothing(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "f", backups=tmp_path / "b", locks=tmp_path / "locks")
    seen: list[bytes | None] = []

    def same(current: bytes | None) -> bytes | None:
        seen.append(current)
        return current

    assert store.replace(same, action="x") is False and not (tmp_path / "f").exists()
    (tmp_path / "f").write_bytes(b"mine")
    assert store.replace(same, action="x") is False
    assert store.replace(lambda current: None, action="x") is False
    assert seen == [None, b"mine"] and store.history() == []


def test_undo_restores_each_version_and_counts_what_is_left(tmp_path: Path) -> None:
    target = tmp_path / "f"
    store = FileStore(target, backups=tmp_path / "b", locks=tmp_path / "locks")
    store.replace(lambda current: b"one", action="first")
    store.replace(lambda current: b"two", action="second")
    assert [b.action for b in store.history()] == ["first", "second"]
    saved_at = store.history()[-1].time
    outcome = store.undo()
    assert outcome.time == saved_at  # when the change undone was made
    assert isinstance(outcome, UndoOutcome)
    assert (outcome.action, outcome.removed_file, outcome.remaining) == ("second", False, 1)
    assert target.read_bytes() == b"one"
    outcome = store.undo()
    assert (outcome.action, outcome.removed_file, outcome.remaining) == ("first", True, 0)
    assert not target.exists() and store.history() == []


def test_leftover_temporary_files_of_a_killed_writer_are_removed(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"old")
    (tmp_path / ".f.1a2b3c4d.tmp").write_bytes(b"half")
    (tmp_path / ".g.1a2b3c4d.tmp").write_bytes(b"another file's")
    store = FileStore(target, backups=tmp_path / "b", locks=tmp_path / "locks")
    store.replace(lambda current: b"new", action="x")
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == [".g.1a2b3c4d.tmp", "f"]
    (tmp_path / ".f.5e6f7a8b.tmp").write_bytes(b"half")
    store.undo()
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == [".g.1a2b3c4d.tmp", "f"]
    assert target.read_bytes() == b"old"
