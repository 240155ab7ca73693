"""Many servers at once, without the SDK: how many start at a time, the first started before
the work begins (real processes: ``cat``, which waits on its stdin), the results in input
order, and no process left running however the work ends."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import PlaceholderError
from mcpctl.probe import fanout
from mcpctl.probe.fanout import default_concurrency, max_running, run_all, start_first, start_slot
from mcpctl.probe.spawn import StdioDiagnostics, stop_server

DEADLINE = 60  # seconds: generous, the machine may be busy
CAT = shutil.which("cat") or "cat"
REMOTE = ServerEntry(url="https://mcp.example.com/mcp")


def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await fn(*args, **kwargs)

    return anyio.run(bounded)


@pytest.mark.parametrize(
    ("cpus", "stdio", "remote"),
    [(None, 2, 8), (1, 2, 8), (2, 3, 8), (3, 4, 12), (4, 5, 16), (8, 9, 32), (16, 17, 32)],
)
def test_how_many_servers_at_once(
    monkeypatch: pytest.MonkeyPatch, cpus: int | None, stdio: int, remote: int
) -> None:
    monkeypatch.setattr(fanout.os, "cpu_count", lambda: cpus)
    assert default_concurrency() == stdio
    assert default_concurrency("stdio") == stdio
    assert default_concurrency("streamable-http") == remote


def test_how_many_spawned_servers_may_run_at_once() -> None:
    assert [max_running(n) for n in (1, 2, 4, 5, 8)] == [16, 16, 16, 20, 32]


def test_the_results_come_in_input_order_and_each_is_told_as_it_comes() -> None:
    finished: list[str] = []
    release = {name: anyio.Event() for name in ("a", "b", "c")}

    async def work(name: str, entry: ServerEntry, kind: str) -> tuple[str, str]:
        await release[name].wait()
        if name == "c":
            release["a"].set()
        if name == "a":
            release["b"].set()
        return name, kind

    async def go() -> list[Any]:
        release["c"].set()
        entries = {"a": REMOTE, "b": REMOTE, "c": REMOTE}
        return await run_all(entries, work, on_done=lambda r: finished.append(r[0]))

    assert run(go) == [("a", "external"), ("b", "external"), ("c", "external")]
    assert finished == ["c", "a", "b"]


def test_the_kind_of_each_server_is_handed_on() -> None:
    async def work(name: str, entry: ServerEntry, kind: str) -> tuple[str, str]:
        return name, kind

    items = [("x", REMOTE, "managed"), ("y", REMOTE, "external")]
    assert run(run_all, items, work) == [("x", "managed"), ("y", "external")]
    assert run(run_all, {}, work) == []


def test_remote_servers_are_bounded_by_the_concurrency() -> None:
    now = most = 0

    async def work(name: str, entry: ServerEntry, kind: str) -> str:
        nonlocal now, most
        now += 1
        most = max(most, now)
        await anyio.sleep(0.01)
        now -= 1
        return name

    entries = {f"s{i}": REMOTE for i in range(7)}
    assert run(run_all, entries, work, concurrency=3) == list(entries)
    assert most == 3


def stdio(*args: str, **kwargs: Any) -> ServerEntry:
    return ServerEntry(command=CAT, args=args, **kwargs)


def test_the_first_stdio_servers_are_started_before_the_work_and_handed_to_it() -> None:
    got: dict[str, Any] = {}

    async def work(name: str, entry: ServerEntry, kind: str, *stdio: Any) -> str:
        if not stdio:
            got[name] = "remote"
            return name
        early, release, diag = stdio
        process = early[0] if early is not None else None  # (process, its resolved entry)
        got[name] = (process, diag.started_at)
        if process is not None:
            assert process.returncode is None  # running when handed over
            await stop_server(process)
        release()
        return name

    entries = {"a": stdio(), "remote": REMOTE, "b": stdio(), "c": stdio()}
    assert run(run_all, entries, work, concurrency=2) == ["a", "remote", "b", "c"]
    assert got["a"][0] is not None and got["b"][0] is not None  # the first two
    assert got["c"] == (None, None)  # past the limit: the work starts it
    assert isinstance(got["a"][1], float) and got["a"][1] <= got["b"][1]
    assert got["remote"] == "remote"


def test_servers_never_handed_over_are_stopped(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    server = ServerEntry(command="sh", args=("-c", f"echo $$ >> {pids}; exec cat"))

    missing = ServerEntry(command=str(tmp_path / "nope"))  # not started early
    handed: list[str] = []

    async def work(name: str, *rest: Any) -> str:
        handed.append(name)
        if name != "boom":
            await anyio.sleep_forever()  # holds its start-up slot
        raise RuntimeError(f"{name} failed")

    # The two start-up slots held by the two servers that were not started early, and a
    # remote one failing: the two started early are never handed over.
    items = [(n, e, "external") for n, e in [("first", missing), ("second", missing),
             ("a", server), ("b", server), ("boom", REMOTE)]]  # fmt: skip
    with pytest.raises(BaseException) as caught:
        run(run_all, items, work, concurrency=2)
    assert caught.group_contains(RuntimeError, match="boom failed")
    assert sorted(handed) == ["boom", "first", "second"]
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) == 2
    for pid in started:  # stopped and reaped: no such process any more
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_start_first_starts_only_what_looks_startable(tmp_path: Path) -> None:
    items = [
        ("remote", REMOTE, "external"),
        ("missing", ServerEntry(command=str(tmp_path / "nope")), "external"),
        ("unset", stdio("${MCPCTL_TEST_UNSET_VARIABLE}"), "external"),
        ("ok", stdio(), "managed"),
        ("ok2", stdio(), "external"),
        ("ok3", stdio(), "external"),
    ]
    spawned_at: dict[int, float] = {}

    async def go() -> dict[int, Any]:
        found = await start_first(items, 2, "error", None, spawned_at)
        try:
            return {i: (p.returncode, resolved.name) for i, (p, resolved) in found.items()}
        finally:
            for process, _ in found.values():
                await stop_server(process)

    assert run(go) == {3: (None, "ok"), 4: (None, "ok2")}
    assert sorted(spawned_at) == [3, 4]
    skipped = [items[2]]

    async def skip() -> dict[int, Any]:
        return await start_first(skipped, 2, "skip", None)

    assert run(skip) == {}
    with pytest.raises(PlaceholderError):
        from mcpctl.config.placeholders import resolve_entry

        resolve_entry("unset", items[2][1], policy="error")


def test_a_start_up_slot_is_held_until_released_and_freed_once() -> None:
    async def go() -> list[float]:
        limiter = anyio.CapacityLimiter(1)
        seen: list[float] = []

        async def probe_with(release: Callable[[], None], diag: StdioDiagnostics) -> str:
            seen.append(limiter.borrowed_tokens)
            release()
            seen.append(limiter.borrowed_tokens)
            release()  # a second release frees nothing more
            return "done"

        assert await start_slot(limiter, probe_with) == "done"
        seen.append(limiter.borrowed_tokens)

        async def failing(release: Callable[[], None], diag: StdioDiagnostics) -> str:
            seen.append(limiter.borrowed_tokens)
            raise ValueError("probe failed")

        with pytest.raises(BaseExceptionGroup) as caught:
            await start_slot(limiter, failing)
        assert caught.group_contains(ValueError, match="probe failed")
        seen.append(limiter.borrowed_tokens)
        return seen

    assert run(go) == [1, 0, 0, 1, 0]


def test_a_start_up_slot_is_freed_once_the_server_only_waits() -> None:
    async def go() -> bool:
        limiter = anyio.CapacityLimiter(1)
        freed = anyio.Event()

        async def probe_with(release: Callable[[], None], diag: StdioDiagnostics) -> bool:
            process = await fanout_spawn(stdio())
            try:
                diag.pid = process.pid  # cat waits on its stdin from the start
                while limiter.borrowed_tokens:
                    await anyio.sleep(0.05)
                freed.set()
                return True
            finally:
                await stop_server(process)

        return await start_slot(limiter, probe_with) and freed.is_set()

    assert run(go)


async def fanout_spawn(entry: ServerEntry) -> Any:
    from mcpctl.probe.spawn import spawn_server

    return await spawn_server(entry)


# --- what mutation testing found unpinned ---------------------------------------------------


def early(entries: Any, **kwargs: Any) -> dict[str, Any]:
    """run_all over ``entries``: for each server, whether its process was started before the
    work (and stopped here), with the entry and kind the work was handed."""
    got: dict[str, Any] = {}

    async def work(name: str, entry: ServerEntry, kind: str, *stdio: Any) -> str:
        started = stdio[0] if stdio else None
        if started is not None:
            await stop_server(started[0])
        got[name] = (started is not None, entry, kind)
        if stdio:
            stdio[1]()  # its start-up slot
        return name

    run(run_all, entries, work, **kwargs)
    return got


def test_by_default_as_many_stdio_servers_start_early_as_the_cpus_allow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fanout.os, "cpu_count", lambda: 2)  # 3 for stdio, 8 for remote
    entries = {f"s{i}": stdio() for i in range(5)}
    got = early(entries)
    assert [got[n][0] for n in entries] == [True, True, True, False, False]


def test_by_default_remote_servers_are_bounded_by_the_cpus(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fanout.os, "cpu_count", lambda: 2)
    now = most = 0
    everyone = anyio.Event()

    async def work(name: str, entry: ServerEntry, kind: str) -> str:
        nonlocal now, most
        now += 1
        most = max(most, now)
        if now == 8:
            everyone.set()
        with anyio.move_on_after(0.5):  # long enough for the others to pile up
            await everyone.wait()
        now -= 1
        return name

    entries = {f"s{i}": REMOTE for i in range(10)}
    assert run(run_all, entries, work) == list(entries)
    assert most == 8


def test_the_work_is_handed_each_servers_entry_and_kind() -> None:
    remote = ServerEntry(url="https://other.example.com/mcp")
    local = stdio("-u")
    got = early([("r", remote, "managed"), ("l", local, "managed")])
    assert got["r"] == (False, remote, "managed")
    assert got["l"] == (True, local, "managed")


def test_an_unset_variable_keeps_a_server_from_starting_early_by_default() -> None:
    entries = {"unset": stdio("${MCPCTL_TEST_UNSET_VARIABLE}"), "ok": stdio()}
    got = early(entries)
    assert (got["unset"][0], got["ok"][0]) == (False, True)
    # Skipped (policy "skip"): the next one is still started early.
    got = early(entries, policy="skip")
    assert (got["unset"][0], got["ok"][0]) == (False, True)


def test_a_secret_is_looked_up_before_a_server_starts_early() -> None:
    entries = {"secret": stdio("${MCPCTL_TEST_SECRET}")}
    asked: list[str] = []

    def secrets(name: str) -> str | None:
        asked.append(name)
        return "s3cret"

    got = early(entries, secrets=secrets)
    assert got["secret"][0] is True and "MCPCTL_TEST_SECRET" in asked


def pids_of(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def assert_gone(pids: list[int]) -> None:
    for pid in pids:  # stopped and reaped: no such process any more
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def lingering(pids: Path) -> ServerEntry:
    """A server that notes its pid and outlives its stdin's end (cat would exit then, as
    if stopped): only stop_server ends it."""
    return ServerEntry(command="sh", args=("-c", f"echo $$ >> {pids}; exec sleep 30"))


def test_servers_never_handed_over_are_stopped_when_the_run_is_cancelled(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    server = lingering(pids)
    missing = ServerEntry(command=str(tmp_path / "nope"))  # not started early

    async def work(name: str, *rest: Any) -> str:
        await anyio.sleep_forever()  # the first two hold both start-up slots
        raise AssertionError("unreachable")

    async def go() -> None:
        items = [(n, e, "external") for n, e in [("first", missing), ("second", missing),
                 ("a", server), ("b", server)]]  # fmt: skip
        with anyio.CancelScope() as scope:

            async def cancel_once_started() -> None:
                while len(pids_of(pids)) < 2:
                    await anyio.sleep(0.02)
                scope.cancel()

            async with anyio.create_task_group() as tg:
                tg.start_soon(cancel_once_started)
                await run_all(items, work, concurrency=2)

    run(go)
    started = pids_of(pids)
    assert len(started) == 2
    assert_gone(started)


def test_servers_started_early_are_stopped_when_starting_the_next_fails(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    server = lingering(pids)
    with_secret = ServerEntry(command=CAT, args=("${MCPCTL_TEST_SECRET}",))
    items = [("a", server, "external"), ("b", with_secret, "external")]

    def broken(name: str) -> str | None:
        raise RuntimeError("the secret store broke")

    async def failing() -> None:
        await start_first(items, 2, "error", broken)

    with pytest.raises(RuntimeError, match="the secret store broke"):
        run(failing)
    started = pids_of(pids)
    assert len(started) == 1
    assert_gone(started)

    # Cancelled while starting them: stopped all the same.
    pids.unlink()

    async def cancelled() -> bool:
        with anyio.CancelScope() as scope:

            def cancelling(name: str) -> str | None:
                scope.cancel()  # takes effect at the next start's first wait
                return "value"

            await start_first([*items, ("c", server, "external")], 3, "error", cancelling)
        return scope.cancelled_caught

    assert run(cancelled) is True
    started = pids_of(pids)
    assert len(started) == 1
    assert_gone(started)
