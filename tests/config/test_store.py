"""The store under concurrency, crashes and odd files."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
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
from tests.conftest import MCPCTL


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


@pytest.mark.slow
def test_fifty_concurrent_adds_all_land(tmp_path: Path) -> None:
    path = tmp_path / "external-mcps.json"
    path.write_text("{}\n")
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home"), "MCPCTL_LOCK_TIMEOUT": "120"}
    procs = [
        subprocess.Popen(
            [*MCPCTL, "--config", str(path), "add", f"s{i}", "--", "echo", str(i)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(50)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err.decode()
    data = json.loads(path.read_text())
    assert sorted(data) == sorted(f"s{i}" for i in range(50))
    assert all(data[f"s{i}"] == {"command": "echo", "args": [str(i)]} for i in range(50))
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def _writer(path: str, ready: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    # Widen the moment the temp file exists (before its fsync), so random kills
    # land mid-write however fast this machine validates and serialises.
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        time.sleep(0.01)
        real_fsync(fd)

    os.fsync = slow_fsync  # this is a forked child: the patch dies with it
    store = ConfigStore(path, backups=Path(path).parent / "backups")
    big = {f"s{i}": {"command": "echo", "args": ["x" * 200] * 20} for i in range(150)}
    ready.set()
    flip = 0
    while True:
        flip ^= 1
        content = big if flip else {"small": {"command": "x"}}
        store.update(lambda doc, c=content: (doc.clear(), doc.update(c)), action="flip")


@pytest.mark.slow
def test_sigkill_during_writes_never_corrupts(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    big = {f"s{i}": {"command": "echo", "args": ["x" * 200] * 20} for i in range(150)}
    allowed = {dump_config({}), dump_config(big), dump_config({"small": {"command": "x"}})}
    path.write_bytes(dump_config({}))
    ctx = multiprocessing.get_context("fork")
    rng = random.Random(1234)
    mid_write = 0
    for attempt in range(400):
        if attempt >= 100 and mid_write >= 3:
            break  # enough kills landed mid-write to prove something
        ready = ctx.Event()
        proc = ctx.Process(target=_writer, args=(str(path), ready), daemon=True)
        proc.start()
        try:
            assert ready.wait(10)
            time.sleep(rng.uniform(0, 0.05))
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.join(10)
        mid_write += any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
        content = path.read_bytes()
        assert content in allowed
        json.loads(content)
    assert mid_write > 0, "no kill landed during a write: the test proves nothing"
    # The next writer cleans the leftovers of killed ones, and the lock is free.
    ConfigStore(path).add("after", ServerEntry(command="x"), force=True)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


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


KILLED_BETWEEN_BACKUP_AND_RENAME = """
import os, signal, sys
from pathlib import Path
import mcpctl.config.store as store
from mcpctl.config.model import ServerEntry

real = store.atomic_write

def dying(path, content, **kw):
    if Path(path).name == "c.json":  # the backup is taken; the rename never happens
        (Path(path).parent / ".c.json.5a5a5a5a.tmp").write_bytes(content[:10])
        os.kill(os.getpid(), signal.SIGKILL)
    real(path, content, **kw)

store.atomic_write = dying
store.ConfigStore(sys.argv[1], backups=Path(sys.argv[2])).add("second", ServerEntry(command="y"))
"""


def test_a_writer_killed_before_the_rename_leaves_no_undo_step(tmp_path: Path) -> None:
    path, backups = tmp_path / "c.json", tmp_path / "backups"
    store = ConfigStore(path, backups=backups)
    store.add("first", ServerEntry(command="x"))
    before = path.read_bytes()
    r = subprocess.run([sys.executable, "-c", KILLED_BETWEEN_BACKUP_AND_RENAME, str(path),
                        str(backups)], capture_output=True, timeout=60)  # fmt: skip
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert path.read_bytes() == before
    assert (tmp_path / ".c.json.5a5a5a5a.tmp").exists()
    # The change never landed, so it is not in the history: undo takes back "add first"
    # (without --force) and clears the dead writer's temporary file.
    assert [b.action for b in store.history()] == ["add first"]
    outcome = store.undo()
    assert outcome.action == "add first" and outcome.removed_file and not path.exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    # The next change reuses the version number the dead writer took.
    store.add("third", ServerEntry(command="z"))
    assert [b.action for b in store.history()] == ["add third"]


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
