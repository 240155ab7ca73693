"""Starting a stdio server (the environment it gets: a short allowlist of mcpctl's, plus what
its entry says) and stopping it with everything that came from it."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from mcpctl import procs
from mcpctl.config.model import ServerEntry
from mcpctl.probe import probe
from mcpctl.probe.spawn import (
    DEFAULT_INHERITED_ENV,
    StdioDiagnostics,
    child_env,
    spawn_server,
    stop_server,
)
from mcpctl.reaper import REGISTRY
from tests.conftest import SERVERS

PY = sys.executable
CANARY = "canary-secret-6f0c1d"  # in mcpctl's environment, named by no entry


def environ_server(out: Path, **fields: Any) -> ServerEntry:
    """misbehave.py environ: writes the environment it got to ``out``, then serves."""
    return ServerEntry(
        command=PY, args=(str(SERVERS / "misbehave.py"), "environ", str(out)), timeout=30000,
        **fields,
    )  # fmt: skip


def seen_by_server(entry: ServerEntry, out: Path) -> dict[str, str]:
    r = anyio.run(lambda: probe("env", entry))
    assert r.healthy, (r.error, r.stderr)
    seen: dict[str, str] = json.loads(out.read_text())
    return seen


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPCTL_TEST_CANARY", CANARY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CANARY)
    monkeypatch.setenv("HOME", "/home/someone")


def test_a_server_sees_the_allowlist_and_its_env_never_our_secrets(
    canary: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOR_ENTRY", "resolved-value")
    out = tmp_path / "env.json"
    seen = seen_by_server(environ_server(out, env={"API_URL": "${FOR_ENTRY}"}), out)
    assert CANARY not in json.dumps(seen)
    assert "MCPCTL_TEST_CANARY" not in seen and "AWS_SECRET_ACCESS_KEY" not in seen
    assert seen["API_URL"] == "resolved-value"
    assert seen["HOME"] == "/home/someone"
    assert "PATH" in seen
    # Python adds a few of its own on start-up (LC_CTYPE under the C locale): nothing of ours.
    ours = set(seen) - {"LC_CTYPE"}
    assert ours <= {*DEFAULT_INHERITED_ENV, "API_URL"}, ours


def test_inherit_env_names_let_those_through(
    canary: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    out = tmp_path / "env.json"
    seen = seen_by_server(environ_server(out, inherit_env=("HTTPS_PROXY", "NOT_SET_X")), out)
    assert seen["HTTPS_PROXY"] == "http://proxy.example:3128"
    assert "NOT_SET_X" not in seen
    assert CANARY not in json.dumps(seen)


def test_inherit_env_true_passes_everything(canary: None, tmp_path: Path) -> None:
    out = tmp_path / "env.json"
    seen = seen_by_server(environ_server(out, inherit_env=True, env={"HOME": "/elsewhere"}), out)
    assert seen["MCPCTL_TEST_CANARY"] == CANARY
    assert seen["HOME"] == "/elsewhere"  # the entry's env wins over ours


def test_child_env_rules() -> None:
    ours = {
        "PATH": "/usr/bin", "HOME": "/h", "TERM": "xterm", "GITHUB_TOKEN": "ghp_x",
        "SHELL": "() { :; }; echo pwned", "EDITOR": "vi",
    }  # fmt: skip
    plain = ServerEntry(command="x", env={"A": "1"})
    assert child_env(plain, ours) == {"PATH": "/usr/bin", "HOME": "/h", "TERM": "xterm", "A": "1"}
    named = ServerEntry(command="x", inherit_env=("GITHUB_TOKEN", "MISSING"), env={"HOME": "/e"})
    assert child_env(named, ours) == {
        "PATH": "/usr/bin", "HOME": "/e", "TERM": "xterm", "GITHUB_TOKEN": "ghp_x",
    }  # fmt: skip
    assert child_env(ServerEntry(command="x", inherit_env=True), ours) == ours
    assert child_env(ServerEntry(command="x", inherit_env=()), ours) == child_env(
        ServerEntry(command="x"), ours
    )


TRUST = {
    "SSL_CERT_FILE": "/etc/ssl/corporate-ca.pem", "SSL_CERT_DIR": "/etc/ssl/corporate",
    "REQUESTS_CA_BUNDLE": "/etc/ssl/corporate-ca.pem", "NODE_EXTRA_CA_CERTS": "/etc/ssl/x.pem",
    "HTTPS_PROXY": "http://proxy.corp.example:3128", "HTTP_PROXY": "http://proxy:3128",
    "NO_PROXY": "localhost,.corp", "https_proxy": "http://proxy:3128", "no_proxy": "localhost",
}  # fmt: skip


def test_trust_and_proxy_settings_reach_every_server(
    canary: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A machine that trusts its CA through SSL_CERT_FILE: uvx needs it, as by hand.
    for name, value in TRUST.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "env.json"
    seen = seen_by_server(environ_server(out), out)
    assert {k: seen.get(k) for k in TRUST} == TRUST
    assert CANARY not in json.dumps(seen) and "AWS_SECRET_ACCESS_KEY" not in seen


def test_a_server_that_needs_the_ca_bundle_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/corporate-ca.pem")
    needs = ServerEntry(command=PY, args=(str(SERVERS / "misbehave.py"), "needs", "SSL_CERT_FILE",
                                          "error: invalid peer certificate: UnknownIssuer"))  # fmt: skip
    r = anyio.run(lambda: probe("uvx-like", needs))
    assert r.healthy, (r.error, r.stderr)


def test_a_password_in_a_proxy_url_is_redacted(
    cli: Any, config_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import write_config

    password = "Pr0xyPassw0rd-7f3a"
    monkeypatch.setenv("HTTPS_PROXY", f"http://alice:{password}@proxy.corp.example:3128")
    write_config(config_path, {"p": {"command": PY, "args": [
        str(SERVERS / "misbehave.py"), "proxy-password"]}})  # fmt: skip
    for args in (["health", "p"], ["health", "p", "--json"], ["doctor", "p"]):
        r = cli(*args)
        assert r.exit_code == 1, r.stdout + r.stderr
        assert "proxy refused" in r.stdout + r.stderr  # the server's own words are shown...
        assert password not in r.stdout + r.stderr  # ...without the password it was given


# --- what mutation testing found unpinned -------------------------------------------------

# A server stand-in that says it is up (on stdout), then reads stdin until it is closed; with
# "stay", it outlives stdin's end; with "hold", it ignores SIGTERM too.
STAND_IN = """
import os, signal, sys
mode = sys.argv[1]
if mode == "hold":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print(os.getcwd(), os.getsid(0), os.environ.get("FOR_ENTRY", ""), flush=True)
sys.stderr.write("started\\n")
sys.stderr.flush()
sys.stdin.read()
if mode == "quit":
    sys.exit(4)
signal.pause()
"""


def stand_in(mode: str, **fields: Any) -> ServerEntry:
    return ServerEntry(command=PY, args=("-c", STAND_IN, mode), **fields)


async def first_line(process: Any) -> str:
    with anyio.fail_after(30):
        line = b""
        while not line.endswith(b"\n"):
            line += await process.stdout.receive(1)
    return line.decode().strip()


def test_a_server_is_started_in_its_session_in_its_folder_with_its_env(tmp_path: Path) -> None:
    from mcpctl.probe.spawn import spawn_server, stop_server

    entry = stand_in("stay", cwd=str(tmp_path), env={"FOR_ENTRY": "the entry's"})

    async def go() -> tuple[int, list[str]]:
        process = await spawn_server(entry)
        try:
            assert process.stdin is not None and process.stderr is not None  # all three piped
            said = (await first_line(process)).split(" ", 2)
        finally:
            await stop_server(process)
        return process.pid, said

    pid, (cwd, session, env) = anyio.run(go)
    assert cwd == str(tmp_path)
    assert int(session) == pid  # a session (and so a group) of its own
    assert env == "the entry's"


def test_a_missing_program_is_a_file_not_found_error_naming_it(tmp_path: Path) -> None:
    import errno

    from mcpctl.probe.spawn import spawn_server

    command = str(tmp_path / "no-such-server")
    with pytest.raises(FileNotFoundError) as caught:
        anyio.run(lambda: spawn_server(ServerEntry(command=command)))
    assert caught.value.errno == errno.ENOENT
    assert caught.value.strerror == os.strerror(errno.ENOENT)
    assert caught.value.filename == command


@pytest.mark.parametrize(
    ("mode", "by_itself", "returncode"),
    [
        ("stay", False, -signal.SIGTERM),  # stopped by SIGTERM once its stdin is closed
        ("hold", False, -signal.SIGKILL),  # SIGTERM ignored: killed after the grace
        ("quit", True, 4),  # it exits by itself once its stdin is closed
    ],
)
def test_stopping_a_server_says_how_it_ended(mode: str, by_itself: bool, returncode: int) -> None:
    from mcpctl.probe.spawn import StdioDiagnostics, spawn_server, stop_server

    diag = StdioDiagnostics()

    async def go() -> tuple[int, tuple[bool, int | None]]:
        process = await spawn_server(stand_in(mode))
        await first_line(process)
        if mode == "quit":  # its stdout ends with it: the stop lets it exit on its own
            assert process.stdin is not None
            await process.stdin.aclose()
            diag.stdout_closed = True
            with anyio.fail_after(30):
                while process.returncode is None:
                    await anyio.sleep(0.01)
        with anyio.fail_after(30):
            await stop_server(process, diag)
            ended = (diag.exited_by_itself, diag.returncode)
            await stop_server(process)  # safe to call again
        return process.pid, ended

    pid, ended = anyio.run(go)
    assert ended == (by_itself, returncode)
    assert procs.read_stat(pid) is None  # gone and reaped


def stopped_after_its_stdout_ends(code: str) -> Any:
    """The diagnostics of a server running ``code``, stopped once its stdout ended."""
    from mcpctl.probe.spawn import StdioDiagnostics, spawn_server, stop_server

    diag = StdioDiagnostics(stdout_closed=True)

    async def go() -> None:
        process = await spawn_server(ServerEntry(command=PY, args=("-c", code)))
        with anyio.fail_after(30):
            assert process.stdout is not None
            with pytest.raises(anyio.EndOfStream):
                await process.stdout.receive()
            await stop_server(process, diag)

    anyio.run(go)
    return diag


def test_a_server_that_closed_its_stdout_is_given_time_to_exit_by_itself() -> None:
    """A server that ends its stdout and exits a moment later is seen to exit by itself,
    not stopped."""

    diag = stopped_after_its_stdout_ends(
        "import os, sys, time; os.close(1); time.sleep(0.05); sys.exit(5)"
    )
    assert (diag.exited_by_itself, diag.returncode) == (True, 5)


def test_a_server_that_closed_its_stdout_but_stays_is_stopped() -> None:

    diag = stopped_after_its_stdout_ends("import os, signal; os.close(1); signal.pause()")
    assert (diag.exited_by_itself, diag.returncode) == (False, -signal.SIGTERM)


def test_stderr_keeps_its_last_lines() -> None:
    from mcpctl.probe.spawn import STDERR_KEEP_LINES, StdioDiagnostics

    diag = StdioDiagnostics()
    for n in range(STDERR_KEEP_LINES + 5):
        diag.stderr.append(f"line {n}")
    tail = diag.tail()
    assert tail == [f"line {n}" for n in range(5, STDERR_KEEP_LINES + 5)]
    tail.append("mine")  # a copy
    assert len(diag.stderr) == STDERR_KEEP_LINES


@pytest.mark.parametrize("how", ["on-the-entrys-path", "relative-to-its-folder"])
def test_the_program_is_found_as_the_entry_says(tmp_path: Path, how: str) -> None:
    """On the PATH of the entry's own env (not ours), or a relative path from its cwd."""
    from mcpctl.probe.spawn import spawn_server, stop_server

    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "serve-here"
    program.write_text(f"#!/bin/sh\nexec \"{PY}\" -c '{STAND_IN}' stay\n")
    program.chmod(0o755)
    if how == "on-the-entrys-path":
        entry = ServerEntry(command="serve-here", env={"PATH": f"{folder}:{os.defpath}"})
    else:
        entry = ServerEntry(command="./bin/serve-here", cwd=str(tmp_path))

    async def go() -> str:
        process = await spawn_server(entry)
        try:
            return await first_line(process)
        finally:
            await stop_server(process)

    assert anyio.run(go).split(" ")[0] == str(tmp_path if entry.cwd else Path.cwd())


# --- stopping: the order of things, what fails on the way, what is left -------------------


@contextlib.asynccontextmanager
async def running(entry: ServerEntry) -> AsyncIterator[Process]:
    """A server spawned; ended (by its process object, never a pid reused) and closed on the
    way out, whatever the test's stop did."""
    process = await spawn_server(entry)
    try:
        yield process
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.kill()
            await process.aclose()


def end_by_pid(*pids: int) -> None:
    """Kill what a failed stop left of a family (unless gone or already dead)."""
    for pid in pids:
        stat = procs.read_stat(pid)
        if stat is not None and not stat.dead:
            os.kill(pid, signal.SIGKILL)


def stopped_with_killpg(
    monkeypatch: pytest.MonkeyPatch, killpg: Callable[[int, signal.Signals], None]
) -> StdioDiagnostics:
    """A server that exits at the end of its stdin, stopped with ``os.killpg`` stood in for."""
    diag = StdioDiagnostics()

    async def go() -> None:
        async with running(stand_in("quit")) as process:
            await first_line(process)
            with anyio.fail_after(60), monkeypatch.context() as patch:
                patch.setattr(os, "killpg", killpg)
                await stop_server(process, diag)

    anyio.run(go)
    return diag


def test_a_server_hears_its_stdin_end_before_any_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that exits cleanly at the end of its input is given that end first."""
    killpg = os.killpg

    def hold_sigterm_until_it_exits(pid: int, sig: signal.Signals) -> None:
        # SIGTERM waits until the server is gone by itself (its stdin closed), at most 30 s.
        deadline = time.monotonic() + 30
        while sig == signal.SIGTERM and time.monotonic() < deadline:
            stat = procs.read_stat(pid)
            if stat is None or stat.dead:
                break
            time.sleep(0.01)
        killpg(pid, sig)

    diag = stopped_with_killpg(monkeypatch, hold_sigterm_until_it_exits)
    assert diag.returncode == 4  # its own exit, not SIGTERM's


@pytest.mark.parametrize("failing", ["stdin", "stdout", "stderr", "process"])
def test_a_pipe_that_fails_to_close_does_not_fail_the_stop(
    monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    async def broken() -> None:
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    diag = StdioDiagnostics()

    async def go() -> None:
        async with running(stand_in("stay")) as process:
            await first_line(process)
            target = process if failing == "process" else getattr(process, failing)
            with anyio.fail_after(30), monkeypatch.context() as patch:
                patch.setattr(target, "aclose", broken)
                await stop_server(process, diag)
            for name in {"stdout", "stderr"} - {failing}:  # the others closed all the same
                with pytest.raises(anyio.ClosedResourceError):
                    await getattr(process, name).receive()

    anyio.run(go)
    assert diag.returncode == -signal.SIGTERM  # stopped all the same


def test_a_group_that_may_not_be_signalled_does_not_fail_the_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server whose group mcpctl may not signal (run as another user): the stop goes on,
    and the server still ends at the end of its stdin."""
    refused: list[signal.Signals] = []

    def not_permitted(pid: int, sig: signal.Signals) -> None:
        refused.append(sig)
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    diag = stopped_with_killpg(monkeypatch, not_permitted)
    assert refused == [signal.SIGTERM, signal.SIGKILL]
    assert diag.returncode == 4


def test_a_stop_is_not_cut_short_by_a_cancellation() -> None:
    """A probe cancelled (a timeout, Ctrl-C) while it stops its server still ends it."""
    diag = StdioDiagnostics()

    async def go() -> None:
        async with running(stand_in("hold")) as process:  # SIGTERM ignored: a grace to wait
            await first_line(process)
            with anyio.fail_after(30), anyio.CancelScope() as scope:
                scope.cancel()
                await stop_server(process, diag)

    anyio.run(go)
    assert diag.returncode == -signal.SIGKILL


def test_the_registry_forgets_a_stopped_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(REGISTRY, "unreaped", set())
    pids: list[int] = []

    async def go() -> None:
        async with running(stand_in("stay")) as process:
            pids.append(process.pid)
            assert process.pid in REGISTRY.running
            with anyio.fail_after(30):
                await stop_server(process)

    anyio.run(go)
    assert pids[0] not in REGISTRY.running
    assert REGISTRY.unreaped == set()  # reaped: nothing left for its process object


def test_a_server_that_outlives_its_stop_is_noted_unreaped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One that no signal ends (as a process stuck in the kernel): the orphan sweep must
    leave it to its process object, and no exit code is made up for it."""
    monkeypatch.setattr(REGISTRY, "unreaped", set())
    diag = StdioDiagnostics()
    pids: list[int] = []
    noted: list[set[int]] = []
    stopped = REGISTRY.stopped

    async def go() -> None:
        told = anyio.Event()

        def stopped_and_told(pid: int, *, reaped: bool) -> None:
            stopped(pid, reaped=reaped)
            told.set()

        async def end_it_once_noted(process: Process) -> None:
            try:
                with anyio.fail_after(30):
                    await told.wait()
                noted.append(set(REGISTRY.unreaped))
            finally:
                process.kill()  # lets the stop close its process object

        async with running(stand_in("hold")) as process:
            pids.append(process.pid)
            await first_line(process)
            with anyio.fail_after(60), monkeypatch.context() as patch:
                patch.setattr(os, "killpg", lambda pid, sig: None)
                patch.setattr(procs, "signal_members", lambda members, sig: None)
                patch.setattr(REGISTRY, "stopped", stopped_and_told)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(end_it_once_noted, process)
                    await stop_server(process, diag)

    anyio.run(go)
    assert noted == [{pids[0]}]
    assert pids[0] not in REGISTRY.running
    assert diag.returncode is None


# A server whose child leaves its session and group, and, told SIGTERM, starts a process of
# its own (a shutdown hook) before it can be killed: the family is looked at again.
HOOKED_CHILD = """
import os, signal, subprocess, sys
folder = sys.argv[1]
def write(name, pid):
    with open(os.path.join(folder, name + ".tmp"), "w") as f:
        f.write(str(pid))
    os.replace(os.path.join(folder, name + ".tmp"), os.path.join(folder, name))
def on_term(*_):
    hook = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    write("hook", hook.pid)
signal.signal(signal.SIGTERM, on_term)
write("child", os.getpid())
while True:
    signal.pause()
"""
# A child that only waits (SIGTERM ends it), its pid in FOLDER/child.
SLEEPING_CHILD = """
import os, signal, sys
path = os.path.join(sys.argv[1], "child")
with open(path + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.replace(path + ".tmp", path)
signal.pause()
"""
WITH_CHILD = """
import signal, subprocess, sys
subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]], start_new_session=True)
if sys.argv[3:] == ["eof"]:
    sys.stdin.read()  # it exits at the end of its stdin
else:
    while True:
        signal.pause()
"""


async def pid_in(path: Path) -> int:
    with anyio.fail_after(30):
        while not path.exists():
            await anyio.sleep(0.01)
    return int(path.read_text())


def lingering(pid: int) -> bool:
    """Whether ``pid`` still runs, or is a zombie this process has not reaped."""
    stat = procs.read_stat(pid)
    return stat is not None and (not stat.dead or stat.ppid == os.getpid())


@pytest.mark.parametrize("subreaper", [False, True], ids=["plain", "subreaper"])
def test_what_a_family_starts_while_it_is_stopped_is_stopped_and_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, subreaper: bool
) -> None:
    """As a subreaper this process adopts them as they die: it reaps them too."""
    from mcpctl.probe.spawn import become_subreaper

    if subreaper and not become_subreaper():
        pytest.skip("this system has no child subreapers")
    killpg = os.killpg

    def once_the_hook_runs(pid: int, sig: signal.Signals) -> None:
        # SIGKILL only once the child's SIGTERM hook has started its process (at most 30 s).
        deadline = time.monotonic() + 30
        while sig == signal.SIGKILL and not (tmp_path / "hook").exists():
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        killpg(pid, sig)

    entry = ServerEntry(command=PY, args=("-c", WITH_CHILD, HOOKED_CHILD, str(tmp_path)))
    family: list[int] = []

    async def go() -> None:
        async with running(entry) as process:
            family.append(await pid_in(tmp_path / "child"))
            with anyio.fail_after(60), monkeypatch.context() as patch:
                patch.setattr(os, "killpg", once_the_hook_runs)
                await stop_server(process)
            family.append(await pid_in(tmp_path / "hook"))

    try:
        anyio.run(go)
        deadline = time.monotonic() + 30
        while (left := [p for p in family if lingering(p)]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert left == []
    finally:
        if subreaper:
            become_subreaper(False)
        end_by_pid(*family)


def test_a_member_that_outlives_its_kill_does_not_hold_the_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's child signals cannot end (as one stuck in the kernel): the stop still
    returns, after its wait for the family to be gone, not when that child ends."""
    entry = ServerEntry(command=PY, args=("-c", WITH_CHILD, SLEEPING_CHILD, str(tmp_path)))
    family: list[int] = []
    alive_after_the_stop: list[bool] = []

    async def go() -> None:
        async with running(entry) as process:
            child = await pid_in(tmp_path / "child")
            family.append(child)

            async def end_it_at_last() -> None:
                with anyio.move_on_after(30):  # only a stop that waits for it waits this long
                    await anyio.Event().wait()
                os.kill(child, signal.SIGKILL)

            with anyio.fail_after(60), monkeypatch.context() as patch:
                patch.setattr(procs, "signal_members", lambda members, sig: None)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(end_it_at_last)
                    await stop_server(process)
                    alive_after_the_stop.append(lingering(child))
                    tg.cancel_scope.cancel()

    try:
        anyio.run(go)
    finally:
        end_by_pid(*family)
    assert alive_after_the_stop == [True]


def test_a_server_that_exits_as_its_stdin_ends_leaves_no_child_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its child in a session of its own is traced to it before it can exit (no subreaper
    here: nothing else would find that child)."""
    entry = ServerEntry(command=PY, args=("-c", WITH_CHILD, SLEEPING_CHILD, str(tmp_path), "eof"))
    family: list[int] = []

    async def go() -> None:
        async with running(entry) as process:
            family.append(await pid_in(tmp_path / "child"))
            assert process.stdin is not None
            close = process.stdin.aclose

            async def closed_and_gone() -> None:  # the server exits before anything else
                await close()
                with anyio.fail_after(30):
                    while (stat := procs.read_stat(process.pid)) is not None and not stat.dead:
                        await anyio.sleep(0.01)

            with anyio.fail_after(60), monkeypatch.context() as patch:
                patch.setattr(process.stdin, "aclose", closed_and_gone)
                await stop_server(process)

    try:
        anyio.run(go)
        deadline = time.monotonic() + 30
        while (left := [p for p in family if lingering(p)]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert left == []
    finally:
        end_by_pid(*family)
