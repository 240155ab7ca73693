"""The store under concurrency, crashes and odd files."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from mcpctl import ConfigStore, ServerEntry
from mcpctl.config.jsontext import dump_config
from mcpctl.config.store import atomic_write
from mcpctl.errors import (
    ConfigInvalidError,
    ConfigSyntaxError,
    InvalidEntryError,
    LockTimeoutError,
    ReadOnlyError,
    ServerExistsError,
)


def test_add_remove_enable_round_trip(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json", backups=tmp_path / "b")
    assert store.add("a", ServerEntry(command="x")).created_file
    with pytest.raises(ServerExistsError):
        store.add("a", ServerEntry(command="y"))
    assert store.add("a", ServerEntry(command="y"), force=True).replaced
    assert store.set_enabled("a", False) and not store.set_enabled("a", False)
    assert store.remove(["a"]) == ["a"]
    assert json.loads((tmp_path / "c.json").read_text()) == {}
    assert [b.action for b in store.history()] == ["add a", "add a", "disable a", "remove a"]


def test_invalid_entries_are_refused_before_locking(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json")
    with pytest.raises(InvalidEntryError):
        store.add("a", ServerEntry(command="x", url="https://h"))
    with pytest.raises(InvalidEntryError):
        store.add("bad name", ServerEntry(command="x"))
    assert not (tmp_path / "c.json").exists()


def test_refuses_to_rewrite_unreadable_or_ambiguous_files(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    store = ConfigStore(path)
    path.write_text("{not json")
    with pytest.raises(ConfigSyntaxError):
        store.add("a", ServerEntry(command="x"))
    assert path.read_text() == "{not json"
    path.write_text('{"a": {"command": "x"}, "a": {"command": "y"}}')
    with pytest.raises(ConfigInvalidError):
        store.add("b", ServerEntry(command="x"))


def test_no_change_writes_nothing(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json", backups=tmp_path / "b")
    assert store.remove(["x"], missing_ok=True) == []
    assert not (tmp_path / "c.json").exists() and store.history() == []


def test_lock_timeout(tmp_path: Path) -> None:
    from filelock import FileLock

    path = tmp_path / "c.json"
    path.write_text("{}")
    store = ConfigStore(path, lock_timeout=0.2)
    with FileLock(tmp_path / ".c.json.lock"):
        start = time.monotonic()
        with pytest.raises(LockTimeoutError):
            store.add("a", ServerEntry(command="x"))
        assert time.monotonic() - start < 5


def test_atomic_write_failure_leaves_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.json"
    path.write_text("old")

    def no_space(fd: int, data: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", no_space)
    with pytest.raises(Exception, match="no space left"):
        atomic_write(path, b"new")
    monkeypatch.undo()
    assert path.read_text() == "old"
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_read_only_mode_is_honoured(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("{}")
    path.chmod(0o444)
    with pytest.raises(ReadOnlyError):
        ConfigStore(path).add("a", ServerEntry(command="x"))


def test_dump_config_is_byte_identical_to_json_dumps() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
        max_leaves=25,
    )

    @settings(max_examples=300, deadline=None)
    @given(st.dictionaries(st.text(max_size=6), values, max_size=4))
    def check(data: dict) -> None:  # type: ignore[type-arg]
        expected = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        assert dump_config(data) == expected.encode("utf-8", "surrogatepass")

    check()


def test_lone_surrogates_survive_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"a": {"command": "x", "description": "\\ud800"}}')
    ConfigStore(path).add("b", ServerEntry(command="y"))
    data = json.loads(path.read_text())
    assert data["a"]["description"] == "\ud800" and "b" in data


def test_splice_canonical_equals_a_full_dump() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from mcpctl.config.jsontext import splice_canonical

    entry = st.fixed_dictionaries(
        {"command": st.text(max_size=5)},
        optional={"args": st.lists(st.text(max_size=4), max_size=3), "timeout": st.integers()},
    )
    docs = st.dictionaries(st.text(max_size=5), entry, max_size=5)

    @settings(max_examples=300, deadline=None)
    @given(docs, docs, st.randoms())
    def check(old: dict, extra: dict, rnd) -> None:  # type: ignore[type-arg, no-untyped-def]
        new = {k: v for k, v in old.items() if rnd.random() < 0.7}
        for k in list(new)[:1]:
            new[k] = {"command": "changed"}
        new.update(extra)
        spliced = splice_canonical(dump_config(old), old, new)
        assert spliced is None or spliced == dump_config(new)
        if old and all(not k.startswith(" ") for k in old):
            assert spliced == dump_config(new)

    check()


def test_hand_edited_file_is_rewritten_canonically(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    store = ConfigStore(path, backups=tmp_path / "b")
    store.add("a", ServerEntry(command="x"))
    path.write_text('{"a": {"command": "x"},\n  "b":{"command":"y"}}')  # a hand edit
    store.add("c", ServerEntry(command="z"))
    assert path.read_bytes() == dump_config(
        {"a": {"command": "x"}, "b": {"command": "y"}, "c": {"command": "z"}}
    )


def test_file_store_replaces_other_tools_files_with_undo(tmp_path: Path) -> None:
    from mcpctl.config.store import FileStore

    target = tmp_path / "client.toml"
    target.write_bytes(b"# theirs\n")
    store = FileStore(target, backups=tmp_path / "backups")
    seen: list[bytes | None] = []

    def change(current: bytes | None) -> bytes:
        seen.append(current)
        return b"# theirs\n[mcp_servers.a]\n"

    assert store.replace(change, action="install") is True
    assert seen == [b"# theirs\n"] and target.read_bytes() == b"# theirs\n[mcp_servers.a]\n"
    assert store.replace(change, action="install") is False, "same bytes: no write"
    assert [b.action for b in store.history()] == ["install"]
    store.undo()
    assert target.read_bytes() == b"# theirs\n"
    new = FileStore(tmp_path / "new.json", backups=tmp_path / "b2")
    assert new.replace(lambda cur: None if cur is not None else b"{}\n", action="create")
    assert (tmp_path / "new.json").stat().st_mode & 0o777 != 0
    new.undo()
    assert not (tmp_path / "new.json").exists(), "undoing a creation removes the file"
