"""watch_config on a real file system: editors' ways of saving, bursts, invalid states, a
removed file, a slow consumer, cancellation and the thread wrapper. No mocks: real events."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.loader import read_config
from mcpctl.snapshot.watch import ConfigChange, watch_config, watch_config_callback

DEBOUNCE = 0.3
A = {"command": "echo"}
B = {"url": "http://127.0.0.1:9/mcp"}


def dump(data: dict[str, Any] | str) -> str:
    return data if isinstance(data, str) else json.dumps(data, indent=2) + "\n"


def save_renamed(path: Path, data: dict[str, Any] | str) -> None:
    """As vim (writebackup) and VS Code save: a temporary file, renamed over the old one."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(dump(data))
    os.replace(tmp, path)


class Watch:
    """The changes one watch_config yields, received with timeouts; ``done`` lets a held
    consumer go on (see :func:`watching`)."""

    def __init__(self, receive: Any, start: ConfigChange, done: anyio.Event) -> None:
        self.receive = receive
        self.start = start
        self.done = done
        self.got_at = 0.0

    async def next(self, timeout: float = 20.0) -> ConfigChange:
        with anyio.fail_after(timeout):
            change: ConfigChange = await self.receive.receive()
        self.got_at = time.monotonic()
        return change

    async def quiet(self, seconds: float = 0.8) -> None:
        with anyio.move_on_after(seconds):
            change = await self.receive.receive()
            pytest.fail(f"unexpected change set: {change.to_data()}")


def watching(
    path: Path,
    body: Callable[[Watch], Awaitable[None]],
    *,
    held: bool = False,
    debounce: float = DEBOUNCE,
    **options: Any,
) -> None:
    """Run ``body`` against a watch of ``path``; ``held``: the consumer is busy with the first
    change set until ``body`` calls ``w.done.set()`` (a slow one)."""

    async def main() -> None:
        send, receive = anyio.create_memory_object_stream[ConfigChange](100)
        started: list[ConfigChange] = []
        ready, done = anyio.Event(), anyio.Event()

        def on_ready(state: ConfigChange) -> None:
            started.append(state)
            ready.set()

        async def consume() -> None:
            changes = watch_config(path, debounce=debounce, on_ready=on_ready, **options)
            async with contextlib.aclosing(changes):
                async for change in changes:
                    await send.send(change)
                    if held:
                        await done.wait()

        with anyio.fail_after(60):  # generous: the machine may be busy
            async with anyio.create_task_group() as tg:
                tg.start_soon(consume)
                await ready.wait()
                await body(Watch(receive, started[0], done))
                tg.cancel_scope.cancel()

    anyio.run(main)


def test_a_burst_of_writes_gives_one_change_set(config_path: Path) -> None:
    config_path.write_text(dump({"a": A}))

    async def body(w: Watch) -> None:
        assert w.start.ok and sorted(w.start.snapshot.mcps) == ["a"]
        data: dict[str, Any] = {"a": A}
        for i in range(5):
            data[f"s{i}"] = A
            config_path.write_text(dump(data))
            await anyio.sleep(0.02)
        change = await w.next()
        assert change.ok and change.diff.added == [f"s{i}" for i in range(5)]
        assert change.diff.removed == [] and change.diff.changed == []
        assert sorted(change.config.entries) == ["a", "s0", "s1", "s2", "s3", "s4"]
        await w.quiet()

    watching(config_path, body)


def test_writes_spread_over_the_debounce_give_one_change_set_after_the_last(
    config_path: Path,
) -> None:
    # 100 ms apart, the writes reach the watcher one by one (the watcher library merges only
    # events closer than its 50 ms step): only the debounce makes them one change set. Loaded
    # on the burst's first event, the file would give a change set per write, the first
    # with one server added.
    config_path.write_text(dump({"a": A}))
    debounce = 1.0  # the writes take 0.3 s; a slow machine may stretch them well past that

    async def body(w: Watch) -> None:
        data: dict[str, Any] = {"a": A}
        started = time.monotonic()
        for i in range(4):
            if i:
                await anyio.sleep(0.1)
            data[f"s{i}"] = A
            config_path.write_text(dump(data))
        last_write, written = time.monotonic(), datetime.now().astimezone()
        assert last_write - started < debounce, "the machine was too slow to write a burst"
        change = await w.next()
        assert change.time >= written, "the file was loaded before the burst ended"
        assert change.ok and change.diff.added == ["s0", "s1", "s2", "s3"], change.to_data()
        assert sorted(change.config.entries) == ["a", "s0", "s1", "s2", "s3"]
        await w.quiet(1.5)  # no second change set: the later writes were in the first

    watching(config_path, body, debounce=debounce)


@pytest.mark.parametrize("style", ["rename", "backup-then-write"])
def test_editor_saves(config_path: Path, style: str) -> None:
    config_path.write_text(dump({"a": A}))

    async def body(w: Watch) -> None:
        new = {"a": {"command": "echo", "args": ["hi"]}, "b": B}
        if style == "rename":
            save_renamed(config_path, new)
        else:  # vim with backupcopy=no: the old file becomes the backup, a new one is written
            os.replace(config_path, config_path.with_name(config_path.name + "~"))
            config_path.write_text(dump(new))
        change = await w.next()
        assert change.ok and change.diff.added == ["b"]
        assert [(c.name, c.fields) for c in change.diff.changed] == [("a", ["args"])]
        await w.quiet(0.6)

    watching(config_path, body)


def test_truncate_then_write(config_path: Path) -> None:
    config_path.write_text(dump({"a": A}))

    async def body(w: Watch) -> None:
        with config_path.open("r+") as f:  # as an editor that writes in place
            f.truncate(0)
            f.flush()
            await anyio.sleep(0.05)
            f.write(dump({"a": A, "b": B}))
        change = await w.next()
        assert change.ok and change.diff.added == ["b"]
        # A slow writer: the empty file is seen, reported once, then the complete one.
        with config_path.open("r+") as f:
            f.truncate(0)
            f.flush()
            problem = await w.next()
            assert problem.problem is not None and "empty" in problem.problem
            assert problem.diff.empty and sorted(problem.config.entries) == ["a", "b"]
            f.write(dump({"b": B}))
        change = await w.next()
        assert change.ok and change.diff.removed == ["a"] and change.diff.added == []

    watching(config_path, body)


def test_delete_then_recreate(config_path: Path) -> None:
    config_path.write_text(dump({"a": A, "b": B}))

    async def body(w: Watch) -> None:
        config_path.unlink()
        gone = await w.next()
        assert gone.problem == f"{config_path} was removed; waiting for it to come back"
        assert sorted(gone.snapshot.mcps) == ["a", "b"]  # the last good state stays
        config_path.write_text(dump({"b": B, "c": A}))
        back = await w.next()
        assert back.ok and back.diff.added == ["c"] and back.diff.removed == ["a"]
        # Gone and back as it was: nothing changed, but the file is good again.
        config_path.unlink()
        assert (await w.next()).problem is not None
        config_path.write_text(dump({"b": B, "c": A}))
        again = await w.next()
        assert again.ok and again.diff.empty

    watching(config_path, body)


def test_invalid_json_is_reported_once_and_the_last_good_state_stays(config_path: Path) -> None:
    config_path.write_text(dump({"a": A}))

    async def body(w: Watch) -> None:
        save_renamed(config_path, '{"a": {"command": "echo"},')
        problem = await w.next()
        assert problem.problem is not None and not problem.ok
        assert problem.problem.startswith(f"{config_path}:")
        assert (
            "invalid JSON" in problem.problem and "keeping the last good state" in problem.problem
        )
        assert problem.diff.empty and sorted(problem.config.entries) == ["a"]
        save_renamed(config_path, "{ not json at all")  # another invalid state: not repeated
        await w.quiet(0.8)
        save_renamed(config_path, {"a": A, "b": B})
        change = await w.next()
        assert change.ok and change.diff.added == ["b"]  # against the last good state

    watching(config_path, body)


def test_each_change_is_diffed_against_the_latest_state(config_path: Path) -> None:
    config_path.write_text(dump({"a": A}))

    async def body(w: Watch) -> None:
        save_renamed(config_path, {"a": A, "b": B})
        assert (await w.next()).diff.added == ["b"]
        save_renamed(config_path, {"a": A, "b": B, "c": A})
        second = await w.next()
        assert second.diff.added == ["c"] and second.diff.removed == []
        save_renamed(config_path, {"c": A})
        third = await w.next()
        assert third.diff.removed == ["a", "b"] and sorted(third.snapshot.mcps) == ["c"]

    watching(config_path, body)


def test_an_edit_that_changes_nothing_is_not_yielded(config_path: Path) -> None:
    config_path.write_text(json.dumps({"a": A, "b": B}))

    async def body(w: Watch) -> None:
        save_renamed(config_path, json.dumps({"b": B, "a": A}, indent=4))  # order, spaces
        config_path.write_text(json.dumps({"a": A, "b": B}))  # the same again
        await w.quiet(0.8)
        save_renamed(config_path, {"a": A, "b": {**B, "enabled": False}})
        change = await w.next()
        assert change.diff.removed == ["b"]  # a disabled server is not in the snapshot

    watching(config_path, body)


def test_a_change_saved_while_the_last_is_handled_comes_after(config_path: Path) -> None:
    config_path.write_text(dump({"a": A}))

    async def body(w: Watch) -> None:
        save_renamed(config_path, {"a": A, "b": B})
        first = await w.next()
        assert first.diff.added == ["b"]
        # The consumer is busy with it; two saves meanwhile come in the next change set.
        save_renamed(config_path, {"a": A, "b": B, "c": A})
        save_renamed(config_path, {"b": B, "c": A})
        w.done.set()
        second = await w.next()
        assert second.diff.added == ["c"] and second.diff.removed == ["a"]
        await w.quiet(0.6)

    watching(config_path, body, held=True)


def test_a_missing_file_is_waited_for(config_path: Path) -> None:
    async def body(w: Watch) -> None:
        expected = f"{config_path} does not exist yet; waiting for it"
        assert w.start.problem == expected and not w.start.snapshot.mcps
        assert (await w.next()).problem == expected
        save_renamed(config_path, {"a": A, "b": B})
        change = await w.next()
        assert change.ok and change.diff.added == ["a", "b"]

    watching(config_path, body)


def test_an_initial_config_is_the_baseline(config_path: Path) -> None:
    config_path.write_text(dump({"a": A}))
    config_path.with_name("old.json").write_text(dump({"a": A, "gone": B}))
    initial = read_config(config_path.with_name("old.json")).config

    async def body(w: Watch) -> None:
        assert sorted(w.start.snapshot.mcps) == ["a"]  # the state now, after the first look
        change = await w.next()
        assert change.diff.removed == ["gone"]

    watching(config_path, body, initial=initial)


def test_a_symlinked_config_follows_its_target(tmp_path: Path, config_path: Path) -> None:
    elsewhere = tmp_path / "dotfiles"
    elsewhere.mkdir()
    target = elsewhere / "mcps.json"
    target.write_text(dump({"a": A}))
    config_path.symlink_to(target)

    async def body(w: Watch) -> None:
        save_renamed(target, {"a": A, "b": B})  # edited where it really lives
        assert (await w.next()).diff.added == ["b"]
        other = elsewhere / "other.json"
        other.write_text(dump({"c": A}))
        config_path.unlink()
        config_path.symlink_to(other)  # the link now points elsewhere
        change = await w.next()
        assert change.diff.added == ["c"] and change.diff.removed == ["a", "b"]

    watching(config_path, body)


def test_a_removed_directory_is_waited_for(tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    path = folder / "external-mcps.json"
    path.write_text(dump({"a": A}))

    async def body(w: Watch) -> None:
        shutil.rmtree(folder)
        assert (await w.next()).problem == f"{path} was removed; waiting for it to come back"
        folder.mkdir()
        path.write_text(dump({"a": A, "b": B}))
        change = await w.next()
        assert change.ok and change.diff.added == ["b"]

    watching(path, body)


def test_skipped_entries_are_warnings_and_no_value_is_in_the_data(config_path: Path) -> None:
    config_path.write_text(dump({"a": A}))
    secret = "sk-live-0123456789abcdefghij"

    async def body(w: Watch) -> None:
        save_renamed(config_path, {"a": {**A, "env": {"TOKEN": secret}}, "bad": {"args": []}})
        change = await w.next()
        assert [(c.name, c.fields) for c in change.diff.changed] == [("a", ["env"])]
        assert any("'bad'" in warning for warning in change.warnings)
        data = json.dumps(change.to_data())
        assert secret not in data
        assert change.to_data()["changed"] == [{"name": "a", "fields": ["env"]}]

    watching(config_path, body)


def no_new_thread(before: set[threading.Thread], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while set(threading.enumerate()) - before:
        if time.monotonic() > deadline:
            raise AssertionError(f"left running: {set(threading.enumerate()) - before}")
        time.sleep(0.02)
    return True


def test_cancelling_leaves_no_thread_behind(config_path: Path) -> None:
    config_path.write_text(dump({"a": A}))
    before = set(threading.enumerate())  # a thread of an earlier test may still be ending
    took: list[float] = []

    async def main() -> None:
        ready = anyio.Event()
        with anyio.fail_after(8):
            async with anyio.create_task_group() as tg:

                async def consume() -> None:
                    changes = watch_config(config_path, on_ready=lambda _: ready.set())
                    async for _ in changes:
                        pass

                tg.start_soon(consume)
                await ready.wait()
                assert set(threading.enumerate()) - before  # watchfiles' waiting thread
                start = time.monotonic()
                tg.cancel_scope.cancel()
            took.append(time.monotonic() - start)

    anyio.run(main)
    assert took[0] < 2.0
    assert no_new_thread(before)


def test_the_callback_wrapper_runs_until_stopped(config_path: Path) -> None:
    config_path.write_text(dump({"a": A}))
    before = set(threading.enumerate())  # a thread of an earlier test may still be ending
    stop = threading.Event()
    ready = threading.Event()
    seen: list[ConfigChange] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            watch_config_callback(
                config_path, seen.append, debounce=0.1, stop=stop, on_ready=lambda _: ready.set()
            )
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert ready.wait(5)
        save_renamed(config_path, {"a": A, "b": B})
        deadline = time.monotonic() + 4
        while not seen and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [c.diff.added for c in seen] == [["b"]]
    finally:
        stop.set()
        thread.join(timeout=3)
    assert not thread.is_alive() and not failed
    assert no_new_thread(before)


def test_a_negative_debounce_is_refused(config_path: Path) -> None:
    from mcpctl.errors import UsageError

    async def main() -> None:
        with pytest.raises(UsageError, match="debounce"):
            async for _ in watch_config(config_path, debounce=-1):
                pass

    anyio.run(main)


# --- the deciding parts, in-process: what counts as a change, what a problem says ---------


def state_of(path: Path, initial: Any = None) -> Any:
    from mcpctl.snapshot.watch import _State

    return _State(path, initial)


def test_the_state_at_start_is_the_baseline_and_only_a_real_change_counts(
    config_path: Path,
) -> None:
    from mcpctl.snapshot.watch import REMOVED

    config_path.write_text(dump({"a": A}))
    state = state_of(config_path)
    assert state.check(REMOVED) is None  # the state at start is not a change
    assert state.current().problem is None and sorted(state.current().snapshot.mcps) == ["a"]
    config_path.write_text(json.dumps({"a": A}))  # the same servers, other white space
    assert state.check(REMOVED) is None
    config_path.write_text(dump({"a": A, "b": B}))
    change = state.check(REMOVED)
    assert change is not None and change.ok and change.problem is None
    assert list(change.diff.added) == ["b"] and not change.diff.removed
    assert change.path == config_path and sorted(change.config.entries) == ["a", "b"]
    # The next change is diffed against this state, not the one at start.
    config_path.write_text(dump({"b": B}))
    change = state.check(REMOVED)
    assert change is not None and list(change.diff.removed) == ["a"] and not change.diff.added


def test_a_missing_file_is_said_once_and_its_servers_are_all_added_when_it_comes(
    config_path: Path,
) -> None:
    from mcpctl.snapshot.watch import ABSENT, REMOVED

    state = state_of(config_path)
    change = state.check(ABSENT)
    assert change is not None and not change.ok
    assert change.problem == f"{config_path} does not exist yet; waiting for it"
    assert change.path == config_path and change.to_data()["file"] == str(config_path)
    assert not change.diff.added and change.snapshot.mcps == {}
    assert state.check(REMOVED) is None  # said once
    config_path.write_text(dump({"a": A, "b": B}))
    change = state.check(REMOVED)
    assert change is not None and change.ok
    assert sorted(change.diff.added) == ["a", "b"]
    config_path.unlink()
    change = state.check(REMOVED)
    assert change is not None
    assert change.problem == f"{config_path} was removed; waiting for it to come back"
    assert sorted(change.config.entries) == ["a", "b"]  # the last good state stays


@pytest.mark.parametrize(
    ("servers", "kept"),
    [
        ({"a": A}, "keeping the last good state (1 server)"),
        ({"a": A, "b": B}, "keeping the last good state (2 servers)"),
        ({}, "keeping the last good state (0 servers)"),
    ],
)
def test_an_invalid_file_keeps_the_last_good_state_and_says_so(
    config_path: Path, servers: dict[str, Any], kept: str
) -> None:
    from mcpctl.snapshot.watch import REMOVED

    config_path.write_text(dump(servers))
    state = state_of(config_path)
    assert state.check(REMOVED) is None
    config_path.write_text('{"a": ')
    change = state.check(REMOVED)
    assert change is not None and change.problem is not None
    assert change.problem.endswith(f"; {kept}"), change.problem
    assert change.problem.startswith(f"{config_path}:1:7: invalid JSON"), change.problem
    assert not change.diff.added and not change.diff.removed and not change.diff.changed
    assert sorted(change.snapshot.mcps) == sorted(servers)
    config_path.write_text('{"a": 1')  # still invalid: said once
    assert state.check(REMOVED) is None
    # Valid again with what it had: a change set, empty, saying the file is good again.
    config_path.write_text(dump(servers))
    change = state.check(REMOVED)
    assert change is not None and change.ok and change.diff.empty
    assert state.check(REMOVED) is None  # and only once


def test_a_file_invalid_at_start_waits_for_a_valid_one(config_path: Path) -> None:
    from mcpctl.snapshot.watch import ABSENT, REMOVED

    config_path.write_text("[1, 2]")
    state = state_of(config_path)
    change = state.check(ABSENT)
    assert change is not None and change.problem is not None
    assert change.problem.endswith("; waiting for a valid file"), change.problem
    config_path.write_text(dump({"a": A}))
    change = state.check(REMOVED)
    assert change is not None and list(change.diff.added) == ["a"]


def test_each_kind_of_problem_is_said_when_it_changes(config_path: Path) -> None:
    from mcpctl.snapshot.watch import REMOVED

    config_path.write_text(dump({"a": A}))
    state = state_of(config_path)
    assert state.check(REMOVED) is None
    config_path.write_text("{")
    invalid = state.check(REMOVED)
    config_path.unlink()
    config_path.mkdir()  # not a file: unreadable
    unreadable = state.check(REMOVED)
    assert state.check(REMOVED) is None
    config_path.rmdir()
    missing = state.check(REMOVED)
    assert invalid is not None and unreadable is not None and missing is not None
    assert unreadable.problem is not None and unreadable.problem != invalid.problem
    assert unreadable.problem.endswith("; keeping the last good state (1 server)")
    assert missing.problem == f"{config_path} was removed; waiting for it to come back"


def test_an_initial_config_is_what_the_first_load_is_diffed_against(config_path: Path) -> None:
    from mcpctl.snapshot.watch import ABSENT

    config_path.write_text(dump({"a": A, "b": B}))
    initial = read_config(config_path).config
    config_path.write_text(dump({"a": A}))
    state = state_of(config_path, initial)
    assert sorted(state.current().snapshot.mcps) == ["a", "b"]
    change = state.check(ABSENT)
    assert change is not None and list(change.diff.removed) == ["b"]
    # The same as the initial config: nothing to say.
    state = state_of(config_path, read_config(config_path).config)
    assert state.check(ABSENT) is None


def test_a_change_carries_the_loaders_warnings(config_path: Path) -> None:
    from mcpctl.snapshot.watch import REMOVED

    config_path.write_text(dump({"a": A}))
    state = state_of(config_path)
    assert state.check(REMOVED) is None
    config_path.write_text(dump({"a": A, "b": B, "bad": {"args": []}}))
    change = state.check(REMOVED)
    assert change is not None and len(change.warnings) == 1 and "'bad'" in change.warnings[0]
    assert change.to_data()["warnings"] == list(change.warnings)


def test_the_json_view_of_a_change(config_path: Path) -> None:
    from mcpctl.snapshot.watch import REMOVED

    config_path.write_text(dump({"a": A, "c": A}))
    state = state_of(config_path)
    assert state.check(REMOVED) is None
    config_path.write_text(dump({"c": {"command": "cat"}, "b": B}))
    change = state.check(REMOVED)
    assert change is not None
    change = ConfigChange(
        change.diff, change.config, change.snapshot, path=config_path,
        time=datetime(2026, 1, 2, 3, 4, 5, 678000).astimezone(),
    )  # fmt: skip
    data = change.to_data()
    assert data == {
        "time": change.time.isoformat(timespec="seconds"),
        "file": str(config_path),
        "ok": True,
        "problem": None,
        "added": ["b"],
        "removed": ["a"],
        "changed": [{"name": "c", "fields": ["command"]}],
        "servers": ["b", "c"],
        "warnings": [],
    }
    assert data["time"].startswith("2026-01-02T03:04:05") and "." not in data["time"]
    problem = state.current("it broke")
    assert problem.to_data()["ok"] is False and problem.to_data()["problem"] == "it broke"
    assert problem.to_data()["servers"] == ["b", "c"]


def test_a_stop_flag_is_the_callers_or_its_own() -> None:
    from mcpctl.snapshot.watch import _Stop

    own = _Stop(None)
    assert not own.is_set()
    own.set()
    assert own.is_set()
    outer = threading.Event()
    stop = _Stop(outer)
    assert not stop.is_set()
    outer.set()
    assert stop.is_set()


def test_the_directory_is_watched_and_only_the_files_events_count(tmp_path: Path) -> None:
    from mcpctl.snapshot.watch import _only, _watched

    path = tmp_path / "external-mcps.json"
    dirs, names = _watched(path)
    directory = tmp_path.resolve()
    assert dirs == (directory,)
    assert names == {str(directory / path.name), str(directory)}
    keep = _only(names)
    assert keep(None, str(directory / path.name)) and keep(None, str(directory))
    assert not keep(None, str(directory / "other.json"))


def test_a_symlinked_file_has_its_targets_directory_watched_too(tmp_path: Path) -> None:
    from mcpctl.snapshot.watch import _watched

    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    (there / "real.json").write_text("{}")
    link = here / "external-mcps.json"
    link.symlink_to(there / "real.json")
    dirs, names = _watched(link)
    assert dirs == (here.resolve(), there.resolve())
    assert names == {
        str(here.resolve() / link.name), str(here.resolve()),
        str(there.resolve() / "real.json"), str(there.resolve()),
    }  # fmt: skip
    # A link to a file beside it: one directory, both names.
    beside = here / "beside.json"
    beside.symlink_to(here / "real-here.json")
    (here / "real-here.json").write_text("{}")
    dirs, names = _watched(beside)
    assert dirs == (here.resolve(),)
    assert names == {str(here.resolve() / "beside.json"), str(here.resolve()),
                     str(here.resolve() / "real-here.json")}  # fmt: skip
    # A link whose target's directory is missing: only the link's directory.
    dangling = here / "dangling.json"
    dangling.symlink_to(tmp_path / "gone" / "x.json")
    dirs, names = _watched(dangling)
    assert dirs == (here.resolve(),)
    assert str(tmp_path.resolve() / "gone") not in names
    assert str(tmp_path.resolve() / "gone" / "x.json") in names


def test_a_zero_debounce_is_taken(config_path: Path) -> None:
    stop = threading.Event()
    stop.set()

    async def main() -> None:
        async for _ in watch_config(config_path, debounce=0, stop=stop):
            pytest.fail("a set stop flag ends the watch before it starts")

    anyio.run(main)


def test_a_missing_directory_at_start_is_said_once_and_its_file_awaited(tmp_path: Path) -> None:
    path = tmp_path / "not-yet" / "external-mcps.json"
    stop = threading.Event()
    ready: list[ConfigChange] = []
    got: list[ConfigChange] = []

    async def main() -> None:
        async def consume() -> None:
            async for change in watch_config(path, debounce=0.05, stop=stop, on_ready=ready.append):
                got.append(change)

        async def until(count: int) -> None:
            while len(got) < count:
                await anyio.sleep(0.02)

        with anyio.fail_after(30):  # generous: the machine may be busy
            async with anyio.create_task_group() as tg:
                tg.start_soon(consume)
                await until(1)
                path.parent.mkdir()
                path.write_text(dump({"a": A}))
                await until(2)
                stop.set()

    anyio.run(main)
    absent = f"{path} does not exist yet; waiting for it"
    assert [change.problem for change in ready] == [absent]  # the state at start, once
    assert got[0].problem == absent
    assert got[1].ok and list(got[1].diff.added) == ["a"]


def test_an_unreadable_file_after_a_good_state_is_said(config_path: Path) -> None:
    from mcpctl.snapshot.watch import REMOVED

    config_path.write_text(dump({"a": A}))
    state = state_of(config_path)
    assert state.check(REMOVED) is None
    config_path.unlink()
    config_path.mkdir()  # not a file
    change = state.check(REMOVED)
    assert change is not None and change.problem is not None
    assert change.problem.endswith("; keeping the last good state (1 server)")
    assert state.check(REMOVED) is None  # said once


# --- the watch loop, in-process: watchfiles and the loop's sleeps stood in for ------------


class Scripted:
    """``watchfiles.awatch`` and ``anyio.sleep`` stood in for, so the loop runs at once: each
    watch the loop starts records its directories and options and takes the batches the test
    feeds it, one at a time; each sleep is recorded and returns at once (after ``on_sleep``,
    when set, has seen it)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import watchfiles

        self.watches: list[tuple[tuple[Path, ...], dict[str, Any]]] = []
        self.closed = 0
        self.sleeps: list[float] = []
        self.on_sleep: Callable[[float], None] | None = None
        self.send, self.receive = anyio.create_memory_object_stream[Any](0)
        self.idle: anyio.Event | None = None
        real_sleep = anyio.sleep

        async def sleep(seconds: float) -> None:
            self.sleeps.append(seconds)
            if self.on_sleep is not None:
                self.on_sleep(seconds)
            await real_sleep(0)

        monkeypatch.setattr(watchfiles, "awatch", self.awatch)
        monkeypatch.setattr(anyio, "sleep", sleep)

    def awatch(self, *dirs: Path, **options: Any) -> Any:
        self.watches.append((dirs, options))

        async def batches() -> Any:
            try:
                while True:
                    self.asks()
                    item = await self.receive.receive()
                    if isinstance(item, BaseException):
                        raise item
                    yield item
            finally:
                self.closed += 1

        return batches()

    def asks(self) -> None:
        """The loop waits for the next batch, or has ended."""
        if self.idle is not None:
            self.idle.set()

    async def feed(self, item: set[Any] | BaseException) -> None:
        """Hand the loop ``item`` (a batch of changes, or what its watch raises) and wait
        until it has dealt with it: it asks for the next batch, or it has ended."""
        self.idle = anyio.Event()
        await self.send.send(item)
        await self.idle.wait()


class Loop:
    """What one watch_config driven by :class:`Scripted` gave."""

    def __init__(self) -> None:
        self.ready: list[ConfigChange] = []
        self.got: list[ConfigChange] = []
        self.error: BaseException | None = None
        self.ended = False


def scripted(
    monkeypatch: pytest.MonkeyPatch,
    path: Path,
    body: Callable[[Scripted, Loop], Awaitable[None]],
    **options: Any,
) -> tuple[Scripted, Loop]:
    """Run ``body`` against a watch of ``path`` whose events are the ones it feeds."""
    fake = Scripted(monkeypatch)
    loop = Loop()

    async def main() -> None:
        async def consume() -> None:
            changes = watch_config(path, on_ready=loop.ready.append, **options)
            try:
                async with contextlib.aclosing(changes):
                    async for change in changes:
                        loop.got.append(change)
            except Exception as exc:  # the test reads it
                loop.error = exc
            finally:
                loop.ended = True
                fake.asks()

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(consume)
                await body(fake, loop)
                tg.cancel_scope.cancel()

    anyio.run(main)
    return fake, loop


def event(path: Path) -> set[Any]:
    from watchfiles import Change

    return {(Change.modified, str(path))}


@pytest.mark.parametrize(("debounce", "wait"), [(None, 0.45), (0.3, 0.25), (0, 0.0)])
def test_the_loop_loads_after_a_burst_and_only_then(
    monkeypatch: pytest.MonkeyPatch, config_path: Path, debounce: float | None, wait: float
) -> None:
    config_path.write_text(dump({"a": A}))
    options = {} if debounce is None else {"debounce": debounce}

    async def body(fake: Scripted, loop: Loop) -> None:
        await fake.feed(set())  # watchfiles' first timeout: the watch is in place
        assert [sorted(c.snapshot.mcps) for c in loop.ready] == [["a"]] and loop.ready[0].ok
        assert not loop.got and not fake.sleeps
        config_path.write_text(dump({"a": A, "b": B}))
        await fake.feed(event(config_path))
        # The rest of the burst waited for (the debounce less watchfiles' 50 ms step), then
        # the file loaded once.
        assert fake.sleeps == [pytest.approx(wait)]
        assert [c.diff.added for c in loop.got] == [["b"]]
        # A timeout with nothing seen: the file is not looked at, even changed.
        config_path.write_text(dump({"a": A, "b": B, "c": A}))
        await fake.feed(set())
        assert len(loop.got) == 1 and len(fake.sleeps) == 1
        await fake.feed(event(config_path))
        assert [c.diff.added for c in loop.got] == [["b"], ["c"]]
        assert len(fake.sleeps) == 2 and len(fake.watches) == 1  # the same watch all along

    fake, loop = scripted(monkeypatch, config_path, body, **options)
    assert len(loop.ready) == 1 and loop.error is None
    [(dirs, watch)] = fake.watches
    assert dirs == (config_path.parent.resolve(),)
    keep = watch.pop("watch_filter")
    assert keep(None, str(config_path.resolve())) and not keep(None, str(config_path) + "~")
    halt = watch.pop("stop_event")
    assert watch == {"step": 50, "rust_timeout": 500, "yield_on_timeout": True, "recursive": False}
    assert fake.closed == 1 and halt.is_set()  # closed, and its thread told to stop


def test_a_stop_set_during_a_burst_ends_the_watch_without_loading(
    monkeypatch: pytest.MonkeyPatch, config_path: Path
) -> None:
    config_path.write_text(dump({"a": A}))
    stop = threading.Event()

    def meanwhile(_: float) -> None:
        config_path.write_text(dump({"a": A, "b": B}))
        stop.set()

    async def body(fake: Scripted, loop: Loop) -> None:
        await fake.feed(set())
        fake.on_sleep = meanwhile
        await fake.feed(event(config_path))
        assert loop.ended and not loop.got

    fake, loop = scripted(monkeypatch, config_path, body, stop=stop)
    assert loop.error is None and len(fake.sleeps) == 1 and fake.closed == 1


def test_a_moved_link_is_watched_anew_and_looked_at_at_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    here, there, elsewhere = tmp_path / "here", tmp_path / "there", tmp_path / "elsewhere"
    for folder in (here, there, elsewhere):
        folder.mkdir()
    (there / "real.json").write_text(dump({"a": A}))
    (elsewhere / "other.json").write_text(dump({"c": A}))
    link = here / "external-mcps.json"
    link.symlink_to(there / "real.json")

    async def body(fake: Scripted, loop: Loop) -> None:
        await fake.feed(set())
        link.unlink()
        link.symlink_to(elsewhere / "other.json")
        await fake.feed(event(link))
        assert [(c.diff.added, c.diff.removed) for c in loop.got] == [(["c"], ["a"])]
        assert [dirs for dirs, _ in fake.watches] == [
            (here.resolve(), there.resolve()), (here.resolve(), elsewhere.resolve()),
        ]  # fmt: skip
        assert fake.closed == 1  # the old watch is closed
        # What happened between the two watches is looked at on the new one's first
        # timeout, with no event of its own.
        (elsewhere / "other.json").write_text(dump({"c": A, "d": B}))
        await fake.feed(set())
        assert [c.diff.added for c in loop.got] == [["c"], ["d"]]
        await fake.feed(set())  # and only then
        assert len(loop.got) == 2 and len(fake.sleeps) == 2

    fake, loop = scripted(monkeypatch, link, body)
    assert loop.error is None and len(loop.ready) == 1 and len(fake.watches) == 2


def test_a_directory_gone_as_its_watch_starts_is_waited_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "conf"
    folder.mkdir()
    path = folder / "external-mcps.json"
    path.write_text(dump({"a": A}))

    async def body(fake: Scripted, loop: Loop) -> None:
        def back_on_the_second_look(_: float) -> None:
            if len(fake.sleeps) == 2:
                folder.mkdir()
                path.write_text(dump({"a": A, "b": B}))

        await fake.feed(set())
        shutil.rmtree(folder)
        fake.on_sleep = back_on_the_second_look
        await fake.feed(FileNotFoundError(2, "No such file or directory"))
        removed = f"{path} was removed; waiting for it to come back"
        assert [c.problem for c in loop.got] == [removed]
        assert fake.sleeps == [0.5, 0.5] and len(fake.watches) == 2
        fake.on_sleep = None
        await fake.feed(set())  # the new watch's first timeout: the file is looked at
        assert len(loop.got) == 2 and loop.got[1].ok and loop.got[1].diff.added == ["b"]

    _, loop = scripted(monkeypatch, path, body)
    assert loop.error is None and [c.problem for c in loop.ready] == [None]


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (OSError(28, "No space left on device"), "No space left on device"),
        (OSError("inotify said no"), "inotify said no"),
    ],
)
def test_a_directory_that_cannot_be_watched_is_a_storage_error(
    monkeypatch: pytest.MonkeyPatch, config_path: Path, error: OSError, says: str
) -> None:
    from mcpctl.errors import StorageError

    async def body(fake: Scripted, loop: Loop) -> None:
        await fake.feed(error)
        assert loop.ended

    fake, loop = scripted(monkeypatch, config_path, body)
    assert isinstance(loop.error, StorageError)
    assert loop.error.message == f"cannot watch {config_path.parent.resolve()}: {says}"
    assert loop.error.hint == "on Linux, raise fs.inotify.max_user_watches/max_user_instances"
    assert fake.closed == 1 and fake.watches[0][1]["stop_event"].is_set()
    assert not loop.ready  # the watch never was in place


def test_an_initial_config_is_current_while_the_file_is_missing(config_path: Path) -> None:
    from mcpctl.snapshot.watch import ABSENT

    config_path.write_text(dump({"a": A, "b": B}))
    initial = read_config(config_path).config
    config_path.unlink()
    state = state_of(config_path, initial)
    change = state.check(ABSENT)
    assert change is not None and change.problem is not None
    assert change.config is initial and sorted(change.snapshot.mcps) == ["a", "b"]
    assert state.current().config is initial


def test_the_callback_wrapper_hands_on_its_arguments(
    monkeypatch: pytest.MonkeyPatch, config_path: Path
) -> None:
    from mcpctl.config.model import Config
    from mcpctl.snapshot import watch

    calls: list[tuple[Any, dict[str, Any]]] = []
    change = state_of(config_path).current("a problem")

    async def recorded(path: Any, **options: Any) -> Any:
        calls.append((path, options))
        yield change
        yield change

    monkeypatch.setattr(watch, "watch_config", recorded)
    seen: list[ConfigChange] = []
    stop, initial = threading.Event(), Config()

    def on_ready(_: ConfigChange) -> None:
        pass

    watch_config_callback(
        config_path, seen.append, debounce=0.2, stop=stop, initial=initial, on_ready=on_ready
    )
    watch_config_callback(config_path, seen.append)
    assert seen == [change] * 4
    assert calls == [
        (config_path, {"debounce": 0.2, "stop": stop, "initial": initial, "on_ready": on_ready}),
        (config_path, {"debounce": 0.5, "stop": None, "initial": None, "on_ready": None}),
    ]


def test_the_loop_diffs_the_first_load_against_an_initial_config(
    monkeypatch: pytest.MonkeyPatch, config_path: Path
) -> None:
    config_path.write_text(dump({"a": A, "gone": B}))
    initial = read_config(config_path).config
    config_path.write_text(dump({"a": A}))

    async def body(fake: Scripted, loop: Loop) -> None:
        await fake.feed(set())
        assert [sorted(c.snapshot.mcps) for c in loop.ready] == [["a"]]
        assert [c.diff.removed for c in loop.got] == [["gone"]]

    scripted(monkeypatch, config_path, body, initial=initial)


def test_the_loop_says_a_file_missing_at_start_and_one_removed_later(
    monkeypatch: pytest.MonkeyPatch, config_path: Path
) -> None:
    absent = f"{config_path} does not exist yet; waiting for it"

    async def body(fake: Scripted, loop: Loop) -> None:
        await fake.feed(set())
        assert [c.problem for c in loop.ready] == [absent]
        assert [c.problem for c in loop.got] == [absent]
        config_path.write_text(dump({"a": A}))
        await fake.feed(event(config_path))
        assert loop.got[-1].ok and loop.got[-1].diff.added == ["a"]
        config_path.unlink()
        await fake.feed(event(config_path))
        assert loop.got[-1].problem == f"{config_path} was removed; waiting for it to come back"
        assert sorted(loop.got[-1].snapshot.mcps) == ["a"] and len(loop.got) == 3

    scripted(monkeypatch, config_path, body)
