"""``run_stdio``, doctor's start of a stdio server: the process started and timed, then
probed as ``mcpctl health`` probes it; a start the OS refuses raised as one redacted line
with its fix."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import ResolvedEntry
from mcpctl.probe.eras import EraMemory
from mcpctl.probe.layers import LayerFailed, StdioRun, run_stdio
from tests.conftest import SERVERS, alive

PY = sys.executable
DEADLINE = 60  # seconds: generous, the machine may be busy


def timed(name: str, entry: ServerEntry, **options: object) -> tuple[StdioRun, float]:
    """The run, and the milliseconds ``run_stdio`` took from its call to its return."""
    resolved = ResolvedEntry(name, entry)

    async def started() -> tuple[StdioRun, float]:
        with anyio.fail_after(DEADLINE):
            t0 = time.perf_counter()
            done = await run_stdio(name, entry, resolved, timeout=30.0, secrets=None, **options)  # type: ignore[arg-type]
            return done, (time.perf_counter() - t0) * 1000

    return anyio.run(started)


def run(name: str, entry: ServerEntry, **options: object) -> StdioRun:
    return timed(name, entry, **options)[0]


def test_a_server_started_then_probed_by_its_name() -> None:
    entry = ServerEntry(command=PY, args=(str(SERVERS / "basic.py"),))
    memory = EraMemory()
    started, elapsed_ms = timed("basic", entry, eras=memory)
    result = started.result
    assert result.healthy and result.error is None, (result.error, result.stderr)
    assert (result.name, result.type, result.transport) == ("basic", "external", "stdio")
    assert result.tools  # listed, as health lists them
    # The process's id, in the run and in its diagnostics.
    assert isinstance(started.pid, int) and started.pid > 0
    assert started.diagnostics.pid == started.pid
    assert started.diagnostics.started_at is not None
    # The start alone is timed, in milliseconds (a fork and exec take more than 0.1 ms);
    # the probe's latency starts with it, not after it (so it holds the start's time:
    # a bound that does not depend on how busy the machine is).
    assert 0.1 < started.spawn_ms < elapsed_ms
    assert started.spawn_ms <= result.latency_ms["total"] <= elapsed_ms
    # The server the probe spoke to is the one started, and it is stopped once probed.
    assert not alive(started.pid)
    # The era spoken is remembered in the memory given.
    assert memory.recall(entry) is not None


def test_the_protocol_asked_for_is_spoken() -> None:
    entry = ServerEntry(command=PY, args=(str(SERVERS / "basic.py"),))
    result = run("basic", entry, protocol="legacy").result
    assert result.healthy, (result.error, result.stderr)
    assert result.era is not None and result.era.name == "legacy"


def test_a_server_that_exits_is_a_result_not_a_raise() -> None:
    entry = ServerEntry(command=PY, args=("-c", "import sys; sys.exit(3)"))
    started = run("quits", entry)
    assert not started.result.healthy
    assert started.result.error is not None
    assert started.result.error.code == "server_exited"


def test_a_start_the_os_refuses_is_one_line_with_its_fix(tmp_path: Path) -> None:
    program = tmp_path / "server"
    program.write_bytes(b"\x00\x01 not a program\n")  # executable, but no format exec knows
    program.chmod(0o755)
    with pytest.raises(LayerFailed) as caught:
        run("bad", ServerEntry(command=str(program)))
    assert caught.value.message == f"cannot start {str(program)!r}: Exec format error"
    assert caught.value.fix == "check that the command is executable"


def test_a_refused_start_hides_the_entrys_secrets(tmp_path: Path) -> None:
    secret = "sk-test-0f1e2d3c4b5a69788796a5b4"
    folder = tmp_path / secret
    folder.mkdir()
    command = str(folder / "server")  # missing: not found at that path
    entry = ServerEntry(command=command)
    resolved = ResolvedEntry("gone", entry, secret_values=frozenset({secret}))

    async def started() -> StdioRun:
        with anyio.fail_after(DEADLINE):
            return await run_stdio("gone", entry, resolved, timeout=30.0, secrets=None)

    with pytest.raises(LayerFailed) as caught:
        anyio.run(started)
    assert secret not in caught.value.message
    assert caught.value.message == (
        f"command {command.replace(secret, '****')!r} not found at "
        f"{command.replace(secret, '****')}"
    )
    assert os.sep in caught.value.message
