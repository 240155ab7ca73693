"""The environment a stdio server gets: a short allowlist of mcpctl's, plus what its entry says."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl import procs
from mcpctl.config.model import ServerEntry
from mcpctl.probe import probe
from mcpctl.probe.spawn import DEFAULT_INHERITED_ENV, child_env
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
