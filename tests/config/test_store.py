"""The store under concurrency, crashes and odd files."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import threading
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
    StorageError,
)
from mcpctl.paths import lock_key


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
    with FileLock(store.lock_path()):
        start = time.monotonic()
        with pytest.raises(LockTimeoutError):
            store.add("a", ServerEntry(command="x"))
        assert time.monotonic() - start < 5
    # The same file named another way (a symlink, a relative path) takes the same lock.
    (tmp_path / "link.json").symlink_to(path)
    with FileLock(store.lock_path()), pytest.raises(LockTimeoutError):
        ConfigStore(tmp_path / "link.json", lock_timeout=0.2).add("a", ServerEntry(command="x"))
    assert json.loads(path.read_text()) == {}


HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()  # until the test closes the pipe
"""


@pytest.mark.skipif(sys.platform == "win32", reason="flock(2) is POSIX")
def test_a_flock_held_by_another_process_makes_writers_wait(tmp_path: Path) -> None:
    # Another mcpctl (or a filelock user: the same flock) holding the lock.
    path = tmp_path / "c.json"
    path.write_text("{}")
    store = ConfigStore(path, lock_timeout=0.3)
    store.lock_path().parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(store.lock_path())],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(LockTimeoutError):
            store.add("a", ServerEntry(command="x"))
        assert json.loads(path.read_text()) == {}
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(60)
    store.add("a", ServerEntry(command="x"))  # released with its holder
    assert json.loads(path.read_text()) == {"a": {"command": "x"}}


@pytest.mark.skipif(sys.platform == "win32", reason="flock(2) is POSIX")
@pytest.mark.filterwarnings("ignore:flock not supported")  # filelock says it falls back
def test_without_flock_the_store_locks_with_filelock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    from filelock import FileLock

    def unsupported(fd: int, op: int) -> None:
        raise OSError(errno.ENOSYS, "flock not supported")

    path = tmp_path / "c.json"
    path.write_text("{}")
    store = ConfigStore(path, lock_timeout=0.2)
    monkeypatch.setattr(fcntl, "flock", unsupported)
    acquired: list[str] = []
    real_acquire = FileLock.acquire

    def acquire(self: FileLock, *args: object, **kwargs: object) -> object:
        acquired.append(str(self.lock_file))
        return real_acquire(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(FileLock, "acquire", acquire)
    store.add("a", ServerEntry(command="x"))
    assert acquired == [str(store.lock_path())]
    assert json.loads(path.read_text()) == {"a": {"command": "x"}}


def test_the_lock_is_in_the_state_dir_not_beside_the_file(tmp_path: Path, isolated: Path) -> None:
    # A library caller (no locks= given): the lock follows MCPCTL_HOME, set by the fixture.
    folder = tmp_path / "project"
    folder.mkdir()
    path = folder / "external-mcps.json"
    store = ConfigStore(path, backups=tmp_path / "backups")
    store.add("a", ServerEntry(command="x"))
    store.add("b", ServerEntry(command="y"))
    store.remove(["a"])
    store.undo()
    assert sorted(p.name for p in folder.iterdir()) == ["external-mcps.json"]
    lock = store.lock_path()
    assert lock.parent == Path(os.environ["MCPCTL_HOME"]) / "state" / "locks"
    assert lock.name == f"{lock_key(path)}.lock" and lock.is_file()
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert stat.S_IMODE(lock.parent.stat().st_mode) == 0o700
    assert ConfigStore(folder / ".." / "project" / "external-mcps.json").lock_path() == lock
    assert ConfigStore(tmp_path / "other.json").lock_path() != lock
    given = ConfigStore(path, locks=tmp_path / "my-locks")
    assert given.lock_path() == tmp_path / "my-locks" / lock.name


def test_writers_take_turns(tmp_path: Path) -> None:
    from filelock import FileLock

    path = tmp_path / "c.json"
    path.write_text("{}")
    store = ConfigStore(path, lock_timeout=120)
    failures: list[BaseException] = []

    def write() -> None:
        try:
            store.add("a", ServerEntry(command="x"))
        except BaseException as exc:
            failures.append(exc)

    holder = FileLock(store.lock_path())
    holder.acquire()
    writer = threading.Thread(target=write)
    writer.start()
    writer.join(0.5)
    assert writer.is_alive() and path.read_text() == "{}"  # it waits for the holder
    holder.release()
    writer.join(120)
    assert not writer.is_alive() and not failures
    assert json.loads(path.read_text()) == {"a": {"command": "x"}}


@pytest.mark.parametrize("kind", ["directory", "FIFO", "symbolic link"])
def test_a_hostile_lock_path_is_a_clear_error(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "c.json"
    path.write_text("{}")
    store = ConfigStore(path, lock_timeout=60)
    lock = store.lock_path()
    lock.parent.mkdir(parents=True)
    if kind == "directory":
        lock.mkdir()
    elif kind == "FIFO":
        os.mkfifo(lock)
    else:
        (tmp_path / "elsewhere").write_text("keep me")
        lock.symlink_to(tmp_path / "elsewhere")
    start = time.monotonic()
    with pytest.raises(StorageError) as caught:
        store.add("a", ServerEntry(command="x"))
    assert time.monotonic() - start < 30  # refused at once, not after the lock timeout
    assert caught.value.message == f"cannot lock {path}: its lock {lock} is a {kind}"
    assert caught.value.hint is not None and str(lock) in caught.value.hint
    assert path.read_text() == "{}"
    if kind == "symbolic link":
        assert (tmp_path / "elsewhere").read_text() == "keep me"


def test_a_lock_folder_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("{}")
    (tmp_path / "locks").write_text("")
    with pytest.raises(StorageError, match="cannot create the lock folder"):
        ConfigStore(path, locks=tmp_path / "locks").add("a", ServerEntry(command="x"))
    assert path.read_text() == "{}"


def test_the_lock_older_versions_left_beside_the_file_is_removed(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    old = tmp_path / ".c.json.lock"
    old.write_text("")
    ConfigStore(path).add("a", ServerEntry(command="x"))
    assert not old.exists()
    old.write_text("not ours: it has content")
    ConfigStore(path).add("b", ServerEntry(command="x"))
    assert old.read_text() == "not ours: it has content"


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
