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
    NothingToUndoError,
    ReadOnlyError,
    ServerExistsError,
    StorageError,
    UndoConflictError,
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
    with pytest.raises(ConfigInvalidError) as caught:
        store.add("b", ServerEntry(command="x"))
    assert caught.value.message == (
        f"{path} defines 'a' more than once; mcpctl will not rewrite it and drop one of them"
    )
    assert caught.value.hint == "remove the duplicate by hand (mcpctl validate shows where)"


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
        with pytest.raises(LockTimeoutError) as caught:
            store.add("a", ServerEntry(command="x"))
        assert time.monotonic() - start < 5
    assert caught.value.message == f"another process has been changing {path} for 0.2 s"
    assert caught.value.hint == "retry, or raise MCPCTL_LOCK_TIMEOUT"
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
    # The file's lock, then (inside it) the trust record's: the new server is approved.
    assert acquired[0] == str(store.lock_path()) and len(acquired) == 2
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
    with pytest.raises(StorageError) as caught:
        ConfigStore(path, locks=tmp_path / "locks").add("a", ServerEntry(command="x"))
    assert caught.value.message.startswith(f"cannot create the lock folder {tmp_path / 'locks'}: ")
    assert path.read_text() == "{}"


def test_a_lock_that_cannot_be_looked_at_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A locks folder the user may not search (not reproducible as root, hence the stand-in).
    path = tmp_path / "c.json"
    path.write_text("{}")
    store = ConfigStore(path, locks=tmp_path / "locks")
    lock = store.lock_path()
    real_stat = os.stat

    def denied(file: object, *args: object, **kwargs: object) -> os.stat_result:
        if os.fsdecode(file) == str(lock):  # type: ignore[arg-type]
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_stat(file, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", denied)  # Path.lstat() asks os.stat
    with pytest.raises(ReadOnlyError) as caught:
        store.add("a", ServerEntry(command="x"))
    monkeypatch.undo()
    assert caught.value.message == f"cannot lock {lock}: Permission denied"
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


@pytest.mark.parametrize("mode", [0o444, 0o555])
def test_read_only_mode_is_honoured(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "c.json"
    path.write_text("{}")
    path.chmod(mode)
    with pytest.raises(ReadOnlyError) as caught:
        ConfigStore(path).add("a", ServerEntry(command="x"))
    assert caught.value.message == f"{path} is read-only (mode {mode:04o})"
    assert caught.value.hint == f"make it writable first: chmod u+w {path}"
    assert path.read_text() == "{}"


# 0o555: no write; 0o600: no way in, which root ignores (not a skip: CI runs as root and
# forbids skips), so that case runs only for other users.
_AS_ROOT = os.name != "posix" or os.geteuid() == 0


@pytest.mark.parametrize("mode", [0o555] if _AS_ROOT else [0o555, 0o600])
def test_a_read_only_directory_is_honoured(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    path = folder / "c.json"
    path.write_text("{}")
    folder.chmod(mode)
    try:
        with pytest.raises(ReadOnlyError) as caught:
            ConfigStore(path, locks=tmp_path / "locks").add("a", ServerEntry(command="x"))
    finally:
        folder.chmod(0o755)
    assert caught.value.message == f"cannot write in {folder}: the directory is read-only"
    assert caught.value.hint == (
        "mcpctl replaces the file atomically, so its directory must be writable"
    )
    assert path.read_text() == "{}"


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


# --- what mutation testing found unpinned ---------------------------------------------------


def test_undo_says_what_it_restored_and_what_is_left(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    store = ConfigStore(path, backups=tmp_path / "b")
    store.add("a", ServerEntry(command="x"))
    store.add("b", ServerEntry(command="y"))
    first = store.undo()
    assert (first.action, first.removed_file, first.remaining) == ("add b", False, 1)
    assert json.loads(path.read_text()) == {"a": {"command": "x"}}
    second = store.undo()
    assert (second.action, second.removed_file, second.remaining) == ("add a", True, 0)
    assert not path.exists()
    with pytest.raises(NothingToUndoError) as caught:
        store.undo()
    assert caught.value.message == f"no earlier version of {path} is saved"
    assert caught.value.hint == "mcpctl keeps the last 20 versions of files it changed itself"
    without = ConfigStore(tmp_path / "d.json")  # no backups: no history, nothing to undo
    without.add("a", ServerEntry(command="x"))
    assert without.history() == []
    with pytest.raises(NothingToUndoError):
        without.undo()


def test_undo_refuses_over_a_file_deleted_by_hand_unless_forced(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    store = ConfigStore(path, backups=tmp_path / "b")
    store.add("a", ServerEntry(command="x"))
    store.add("b", ServerEntry(command="y"))
    path.unlink()  # the user's own edit: gone
    with pytest.raises(UndoConflictError) as caught:
        store.undo()
    assert caught.value.message == (
        f"{path} was changed after mcpctl's last change (add b); undoing would lose those edits"
    )
    assert caught.value.hint == "run 'mcpctl undo --force' to restore the saved version anyway"
    assert not path.exists() and len(store.history()) == 2
    store.undo(force=True)
    assert json.loads(path.read_text()) == {"a": {"command": "x"}}
    path.unlink()
    outcome = store.undo(force=True)  # undoing the creation of a file already gone
    assert outcome.removed_file and not path.exists() and store.history() == []


def test_an_unreadable_backup_is_a_clear_error_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    store = ConfigStore(path, backups=tmp_path / "b")
    store.add("a", ServerEntry(command="x"))
    store.add("b", ServerEntry(command="y"))
    saved = store.history()[-1].path
    saved.unlink()
    saved.mkdir()  # cannot be read as a file
    before = path.read_bytes()
    with pytest.raises(StorageError) as caught:
        store.undo()
    assert caught.value.message.startswith(f"cannot read {saved}: ")
    assert path.read_bytes() == before and len(store.history()) == 2


def test_backups_on_another_file_system_are_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hard link cannot cross file systems: the saved version is then written from the
    # bytes read under the lock, and undo restores them exactly.
    def cross_device(src: object, dst: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    from mcpctl.config.store import FileStore

    target = tmp_path / "client.toml"
    target.write_bytes(b"# theirs\n")
    store = FileStore(target, backups=tmp_path / "backups")
    assert store.replace(lambda current: b"# ours\n", action="install")
    assert store.history()[-1].path.read_bytes() == b"# theirs\n"
    store.undo()
    assert target.read_bytes() == b"# theirs\n"
    config = ConfigStore(tmp_path / "c.json", backups=tmp_path / "b")
    config.add("a", ServerEntry(command="x"))
    config.add("b", ServerEntry(command="y"))
    config.undo()
    assert json.loads((tmp_path / "c.json").read_text()) == {"a": {"command": "x"}}


def test_backups_are_owner_only(tmp_path: Path) -> None:
    # They hold what the file held (a config may carry values the user wants private).
    path = tmp_path / "c.json"
    path.write_text("{}")
    path.chmod(0o644)
    store = ConfigStore(path, backups=tmp_path / "b")
    store.add("a", ServerEntry(command="x"))
    assert stat.S_IMODE((tmp_path / "b").stat().st_mode) == 0o700
    metas = list((tmp_path / "b").glob("*.meta.json"))
    assert metas and all(stat.S_IMODE(m.stat().st_mode) == 0o600 for m in metas)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # the file itself keeps its mode


def test_replace_gives_the_new_file_the_mode_asked_for(tmp_path: Path) -> None:
    from mcpctl.config.store import FileStore

    target = tmp_path / "client.json"
    target.write_text("{}")
    target.chmod(0o644)
    FileStore(target).replace(lambda current: b'{"secret": 1}', action="install", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_hand_edit_in_the_canonical_layout_is_still_rewritten_whole(tmp_path: Path) -> None:
    # Entries are copied as they stand only when the file is what mcpctl last wrote.
    path = tmp_path / "c.json"
    store = ConfigStore(path, backups=tmp_path / "b")
    store.add("a", ServerEntry(command="x"))
    path.write_text('{\n  "a": {"command": "x"},\n  "b": {"command": "y"}\n}\n')
    store.add("c", ServerEntry(command="z"))
    assert path.read_bytes() == dump_config(
        {"a": {"command": "x"}, "b": {"command": "y"}, "c": {"command": "z"}}
    )


def test_a_store_from_paths_locks_in_their_state_dir(tmp_path: Path, isolated: Path) -> None:
    # The daemon builds its own Paths: its writers and the CLI's must share one lock folder.
    from mcpctl.paths import Paths

    paths = Paths(home=tmp_path / "other-home", config_override=tmp_path / "c.json")
    store = ConfigStore.from_paths(paths)
    assert store.lock_path().parent == paths.locks_dir
    assert store.backups == paths.backups_for(paths.config)
    store.add("a", ServerEntry(command="x"))
    assert store.lock_path().is_file()


@pytest.mark.parametrize(
    ("code", "kind", "text"),
    [
        (errno.EACCES, ReadOnlyError, "Permission denied"),
        (errno.EROFS, ReadOnlyError, "Read-only file system"),
        (errno.ENOSPC, StorageError, "no space left on device"),
        (errno.EIO, StorageError, "Input/output error"),
    ],
)
def test_a_failed_write_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, kind: type, text: str
) -> None:
    path = tmp_path / "c.json"
    path.write_text("old")

    def refused(*args: object, **kwargs: object) -> int:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "open", refused)
    with pytest.raises(kind) as caught:
        atomic_write(path, b"new")
    monkeypatch.undo()
    assert type(caught.value) is kind
    assert caught.value.message == f"cannot write {path}: {text}"
    if kind is ReadOnlyError:
        assert caught.value.hint == "check the permissions of the file and its directory"
    assert path.read_text() == "old"


def test_a_failure_without_a_reason_is_still_described(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.json"
    path.write_text("old")

    def broken(fd: int, data: object) -> int:
        raise OSError("the disk went away")

    monkeypatch.setattr(os, "write", broken)
    with pytest.raises(StorageError) as caught:
        atomic_write(path, b"new")
    monkeypatch.undo()
    assert caught.value.message == f"cannot write {path}: the disk went away"
    assert path.read_text() == "old"


def test_a_file_emptied_by_mcpctl_takes_new_entries(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    store = ConfigStore(path, backups=tmp_path / "b")
    store.add("a", ServerEntry(command="x"))
    store.remove(["a"])
    assert path.read_text() == "{}\n"
    store.add("b", ServerEntry(command="y"))
    assert path.read_bytes() == dump_config({"b": {"command": "y"}})


def test_a_new_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    # 0666 less the umask, as any editor would create it: never executable.
    previous = os.umask(0o022)
    try:
        ConfigStore(tmp_path / "c.json").add("a", ServerEntry(command="x"))
        atomic_write(tmp_path / "other.json", b"{}\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "c.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "other.json").stat().st_mode) == 0o644


def test_a_file_planted_at_the_temporary_name_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.json"
    path.write_text("old")
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    monkeypatch.setattr(os, "urandom", lambda n: b"\x00" * n)
    (tmp_path / f".c.json.{'00' * 4}.tmp").symlink_to(victim)
    with pytest.raises(StorageError):
        atomic_write(path, b"new")
    assert victim.read_text() == "keep me" and path.read_text() == "old"


def test_a_config_write_reaches_the_disk_before_it_replaces_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed or powered off at any moment, the file is the old one or the whole new one.
    path = tmp_path / "c.json"
    path.write_text("{}")
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("fsync dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync file")
        real_fsync(fd)

    def replace(src: object, dst: object) -> None:
        events.append("replace")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    ConfigStore(path).add("a", ServerEntry(command="x"))
    # The trust record first (the new server is approved), then the file, each the same way.
    assert events == ["fsync file", "replace", "fsync dir"] * 2


def test_backups_that_cannot_be_written_stop_the_change(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("{}")
    (tmp_path / "b").write_text("a file where the backups folder should be")
    with pytest.raises(StorageError) as caught:
        ConfigStore(path, backups=tmp_path / "b").add("a", ServerEntry(command="x"))
    assert caught.value.message.startswith(f"cannot write in {tmp_path / 'b'}: ")
    assert path.read_text() == "{}"


def test_a_change_that_failed_leaves_no_saved_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.json"
    store = ConfigStore(path, backups=tmp_path / "b")
    store.add("a", ServerEntry(command="x"))
    saved = sorted(p.name for p in (tmp_path / "b").iterdir())
    real_open, real_write = os.open, os.write
    temporaries: set[int] = set()  # the new config's temporary files: the disk is full

    def opened(file: object, flags: int, *args: object, **kwargs: object) -> int:
        fd = real_open(file, flags, *args, **kwargs)  # type: ignore[arg-type]
        if Path(os.fsdecode(file)).name.startswith(".c.json."):  # type: ignore[arg-type]
            temporaries.add(fd)
        return fd

    def full_for_the_config(fd: int, data: object) -> int:
        if fd in temporaries:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", opened)
    monkeypatch.setattr(os, "write", full_for_the_config)
    with pytest.raises(StorageError, match="no space left"):
        store.add("b", ServerEntry(command="y"))
    monkeypatch.undo()
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == saved
    assert [b.action for b in store.history()] == ["add a"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_root_editing_a_users_file_leaves_it_theirs(tmp_path: Path) -> None:
    # sudo mcpctl ... on a user's config: the user can still edit it afterwards.
    path = tmp_path / "c.json"
    path.write_text("{}")
    os.chown(path, 4321, 4322)
    ConfigStore(path).add("a", ServerEntry(command="x"))
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (4321, 4322)
    assert json.loads(path.read_text()) == {"a": {"command": "x"}}


def test_a_file_that_cannot_be_given_back_is_still_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Someone else's file in a folder we may write: the new file is ours, as with any editor.
    path = tmp_path / "c.json"
    path.write_text("{}")
    real_getuid = os.getuid

    def not_allowed(fd: int, uid: int, gid: int) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "getuid", lambda: real_getuid() + 1)  # the file is not ours
    monkeypatch.setattr(os, "fchown", not_allowed)
    ConfigStore(path).add("a", ServerEntry(command="x"))
    assert json.loads(path.read_text()) == {"a": {"command": "x"}}


def test_a_write_the_system_cuts_short_is_carried_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # os.write may write less than asked (a signal, a pipe-like file system): the rest follows.
    real_write = os.write

    def a_few_bytes(fd: int, data: bytes) -> int:
        return real_write(fd, bytes(data[:7]))

    monkeypatch.setattr(os, "write", a_few_bytes)
    content = dump_config({"a": {"command": "x", "args": ["one", "two", "three"]}})
    atomic_write(tmp_path / "c.json", content)
    monkeypatch.undo()
    assert (tmp_path / "c.json").read_bytes() == content


def test_a_zero_lock_timeout_fails_at_once_instead_of_waiting(tmp_path: Path) -> None:
    from filelock import FileLock

    path = tmp_path / "c.json"
    path.write_text("{}")
    store = ConfigStore(path, lock_timeout=0)
    failures: list[BaseException] = []

    def write() -> None:
        try:
            store.add("a", ServerEntry(command="x"))
        except BaseException as exc:
            failures.append(exc)

    holder = FileLock(store.lock_path())
    with holder:
        writer = threading.Thread(target=write)
        writer.start()
        writer.join(60)
        gave_up = not writer.is_alive()
    writer.join(60)  # a writer that waited gets the lock now, and ends
    assert gave_up and [type(f) for f in failures] == [LockTimeoutError]
    assert path.read_text() == "{}"


@pytest.mark.skipif(sys.platform == "win32", reason="flock(2) is POSIX")
def test_a_lock_file_another_writer_creates_meanwhile_is_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.json"
    path.write_text("{}")
    store = ConfigStore(path)
    lock = store.lock_path()
    real_open = os.open

    def racing(file: object, flags: int, *args: object, **kwargs: object) -> int:
        if os.fsdecode(file) == str(lock) and not flags & os.O_CREAT and not lock.exists():  # type: ignore[arg-type]
            os.close(real_open(lock, os.O_RDWR | os.O_CREAT, 0o600))  # the other writer, now
            raise FileNotFoundError(errno.ENOENT, "No such file or directory")
        return real_open(file, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", racing)
    store.add("a", ServerEntry(command="x"))
    monkeypatch.undo()
    assert json.loads(path.read_text()) == {"a": {"command": "x"}} and lock.is_file()


@pytest.mark.skipif(sys.platform == "win32", reason="flock(2) is POSIX")
@pytest.mark.filterwarnings("ignore:flock not supported")
def test_without_flock_a_lock_file_held_by_another_writer_is_left_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where flock is missing, filelock holds a lock by the file's existence: a writer must
    # wait for it, not delete it.
    import fcntl

    def unsupported(fd: int, op: int) -> None:
        raise OSError(errno.ENOSYS, "flock not supported")

    path = tmp_path / "c.json"
    path.write_text("{}")
    store = ConfigStore(path, lock_timeout=0.2)
    store.lock_path().parent.mkdir(parents=True)
    store.lock_path().write_text("")  # another writer's, held
    monkeypatch.setattr(fcntl, "flock", unsupported)
    with pytest.raises(LockTimeoutError):
        store.add("a", ServerEntry(command="x"))
    assert store.lock_path().exists() and path.read_text() == "{}"


@pytest.mark.skipif(sys.platform == "win32", reason="no FIFOs")
def test_a_config_that_is_not_a_file_is_a_config_error_before_any_lock(tmp_path: Path) -> None:
    from mcpctl.config.store import FileStore
    from mcpctl.errors import ConfigError, UsageError

    path = tmp_path / "c.json"
    os.mkfifo(path)
    with pytest.raises(ConfigError) as caught:
        ConfigStore(path, lock_timeout=0).add("a", ServerEntry(command="x"))
    assert caught.value.message == f"{path} is a FIFO, not a regular file"
    with pytest.raises(UsageError):  # a client's file: the user named it on the command line
        FileStore(path, lock_timeout=0).replace(lambda current: b"{}", action="install")
    assert stat.S_ISFIFO(path.stat().st_mode)


def test_a_config_folder_that_cannot_be_made_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("")
    path = tmp_path / "not-a-folder" / "c.json"
    with pytest.raises(StorageError) as caught:
        ConfigStore(path).add("a", ServerEntry(command="x"))
    assert caught.value.message.startswith(f"cannot create {tmp_path / 'not-a-folder'}: ")


def test_the_environment_sets_how_long_a_writer_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from filelock import FileLock

    path = tmp_path / "c.json"
    path.write_text("{}")
    monkeypatch.setenv("MCPCTL_LOCK_TIMEOUT", "0.2")
    store = ConfigStore(path)
    with FileLock(store.lock_path()), pytest.raises(LockTimeoutError) as caught:
        store.add("a", ServerEntry(command="x"))
    assert caught.value.message == f"another process has been changing {path} for 0.2 s"


def test_the_number_of_saved_versions_is_bounded(tmp_path: Path) -> None:
    store = ConfigStore(tmp_path / "c.json", backups=tmp_path / "b", keep_backups=3)
    for name in "abcde":
        store.add(name, ServerEntry(command="x"))
    assert store.keep_backups == 3
    assert [b.action for b in store.history()] == ["add c", "add d", "add e"]


def test_write_json_makes_the_folders_and_writes_canonical_json(tmp_path: Path) -> None:
    # Snapshots and the registry's exports are written through it.
    from mcpctl.config.store import write_json

    path = tmp_path / "new" / "deeper" / "out.json"
    write_json(path, {"b": [1, 2], "a": "é"})
    assert path.read_bytes() == dump_config({"b": [1, 2], "a": "é"})
    write_json(path, {"c": 1}, mode=0o600)  # the folder is there already
    assert json.loads(path.read_text()) == {"c": 1}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    (tmp_path / "a-file").write_text("")
    with pytest.raises(StorageError) as caught:
        write_json(tmp_path / "a-file" / "out.json", {})
    assert caught.value.message.startswith(f"cannot create {tmp_path / 'a-file'}: ")


def test_read_gives_the_file_as_written(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    store = ConfigStore(path)
    assert store.read().data == {} and not store.read().exists
    path.write_text('{"b": {"command": "y"}, "a": {"command": "x"}}')
    assert list(store.read().data) == ["b", "a"] and store.read().exists
