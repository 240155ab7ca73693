"""``mcpctl serve`` stops every server it started, descendants too (a child in its group, one
that called setsid, the grandchild of a double fork), when its client goes away (stdin
closes) and on SIGINT, SIGTERM and SIGHUP -- while a probe is still running -- and exits 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.test_signals import MODES, SIGNALS, hanging_family, read_pids, wait_gone
from tests.conftest import MCPCTL, stop_process
from tests.serve.conftest import Served

pytestmark = pytest.mark.slow


def messages(*items: dict[str, Any]) -> str:
    return "".join(json.dumps({"jsonrpc": "2.0", **item}) + "\n" for item in items)


HANDSHAKE = messages(
    {"id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}},
    {"method": "notifications/initialized"},
    {"id": 2, "method": "tools/call", "params": {"name": "health", "arguments": {}}},
)  # fmt: skip


def serving(served: Served, tmp_path: Path) -> tuple[subprocess.Popen[str], list[Path]]:
    config, files = hanging_family(tmp_path)
    served.write(config)

    def signals() -> None:  # a terminal's defaults, whatever the test runner's are
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_DFL)

    proc = subprocess.Popen(
        [*MCPCTL, "--config", str(served.config), "serve"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=served.env,
        preexec_fn=signals,  # noqa: PLW1509
    )  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(HANDSHAKE)
    proc.stdin.flush()
    return proc, files


def test_the_client_going_away_stops_every_server_and_descendant(
    served: Served, tmp_path: Path
) -> None:
    proc, files = serving(served, tmp_path)
    try:
        pids = [pid for f in files for pid in read_pids(f, proc)]  # the probe is under way
        assert len(pids) == 2 * len(MODES)
        assert proc.stdin is not None
        proc.stdin.close()  # the client went away
        assert proc.wait(timeout=60) == 0, proc.communicate()
        assert wait_gone(pids) == []
    finally:
        stop_process(proc)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_stop_signal_stops_every_server_and_descendant(
    served: Served, tmp_path: Path, sig: signal.Signals
) -> None:
    proc, files = serving(served, tmp_path)
    try:
        pids = [pid for f in files for pid in read_pids(f, proc)]
        proc.send_signal(sig)
        assert proc.wait(timeout=60) == 0, proc.communicate()
        assert wait_gone(pids) == []
    finally:
        stop_process(proc)


def test_over_http_a_signal_stops_the_probes_too(served: Served, tmp_path: Path) -> None:
    import threading

    import anyio

    from tests.serve.test_http import start

    config, files = hanging_family(tmp_path)
    served.write(config)
    server = start(served)
    failures: list[BaseException] = []

    def call() -> None:  # the request stays open while its servers hang
        async def go() -> None:
            async with server.client() as client:
                await client.call_tool("health", {})

        try:
            anyio.run(go)
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    try:
        pids = [pid for f in files for pid in read_pids(f, server.proc)]
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=60) == 0
        assert wait_gone(pids) == []
    finally:
        stop_process(server.proc)
        thread.join(timeout=60)
    assert os.getpid()  # this process is left alone


def test_what_a_probe_left_behind_is_stopped_once_the_call_ends(
    served: Served, tmp_path: Path
) -> None:
    # A server whose child double-forks and leaves a grandchild in a session of its own,
    # then serves well: nothing ties the grandchild to it. serve adopted it (a subreaper)
    # and stops it after the call, without waiting for its own end.
    import anyio
    import anyio.to_thread

    from tests.conftest import SERVERS
    from tests.serve.conftest import PY

    pids_file = tmp_path / "daemon.pids"
    served.write({"d": {"command": PY, "args": [str(SERVERS / "misbehave.py"), "daemon",
                                                str(pids_file)]}})  # fmt: skip

    async def go() -> tuple[str, list[int]]:
        async with served.client() as client:
            result = await client.call_tool("health", {})
            assert result.structured_content is not None
            status = result.structured_content["servers"][0]["status"]
            pids = [int(p) for p in pids_file.read_text().split()]
            return status, await anyio.to_thread.run_sync(wait_gone, pids)

    status, left = anyio.run(go)
    assert status == "healthy"
    assert left == []
