"""Starting and stopping stdio servers, without the MCP SDK.

Kept apart from :mod:`mcpctl.probe.connect` (which imports the SDK, over a second here) so that
:func:`mcpctl.probe.probe_all` can start the first servers before that import: servers boot
while mcpctl loads the SDK, instead of after it.

A server gets a minimal environment (:func:`~mcpctl.probe.childenv.child_env`: the start-up
helpers live in :mod:`mcpctl.probe.childenv`, which the launcher shares and which imports
neither anyio nor the SDK) and runs in its own session and process group. Stopping one
closes its stdin and sends SIGTERM to its whole family at once (what a host does once it has
its answer): its group, and every process that came from it (as psutil sees them, on Linux
and macOS alike), a child that left the group with ``setsid`` included
(:mod:`mcpctl.reaper`); then SIGKILL after half a
second, and the zombies are reaped: no process mcpctl started outlives the probe.
:func:`become_subreaper` and :func:`reap_orphans` also catch what a server's children leave
behind after a double fork.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
from collections import deque
from dataclasses import dataclass, field

import anyio
from anyio.abc import Process

from mcpctl import procs
from mcpctl.config.model import ServerEntry
from mcpctl.probe.childenv import (
    DEFAULT_INHERITED_ENV,
    ProbeError,
    child_env,
    command_not_found,
    spawn_error,
)
from mcpctl.probe.serverenv import find_program
from mcpctl.reaper import (
    GONE_WAIT,
    KILL_GRACE,
    REGISTRY,
    become_subreaper,
    family_now,
    reap_dead,
    reap_orphans,
    until_waiting,
)
from mcpctl.sdk import use_client_half  # the program's switch, for the CLI (no SDK importer)

__all__ = [
    "DEFAULT_INHERITED_ENV",
    "ProbeError",
    "StdioDiagnostics",
    "become_subreaper",
    "child_env",
    "command_not_found",
    "reap_orphans",
    "spawn_error",
    "spawn_server",
    "stop_server",
    "until_waiting",
    "use_client_half",
]

STDERR_KEEP_LINES = 20
STDERR_LINE_MAX = 400


@dataclass
class StdioDiagnostics:
    """What a spawned server said besides protocol messages, and how it ended."""

    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_KEEP_LINES))
    stderr_bytes: int = 0
    garbage_lines: int = 0
    first_garbage: str | None = None
    returncode: int | None = None
    pid: int | None = None
    stdout_closed: bool = False
    exited_by_itself: bool = False
    #: Whether the MCP handshake had finished: a server may also exit later, during a call.
    handshake_done: bool = False
    #: ``time.perf_counter()`` when the process was started: where a probe's latency starts.
    started_at: float | None = None

    def tail(self) -> list[str]:
        """The last lines of stderr (each capped)."""
        return list(self.stderr)


async def spawn_server(entry: ServerEntry) -> Process:
    """Start a (resolved) stdio entry in its own session and group, with piped stdio.

    Raises:
        OSError: the command cannot be started (FileNotFoundError when it is missing).
    """
    assert entry.command is not None
    env = child_env(entry)
    # The program doctor names (find_program), found on the server's own PATH.
    program = find_program(entry.command, env, entry.cwd)
    if program is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), entry.command)
    REGISTRY.prepare()
    process = await anyio.open_process(
        [program, *entry.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=entry.cwd,
        env=env,
        start_new_session=True,
    )
    REGISTRY.add(process.pid)
    return process


def _kill_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _wait_exit(process: Process, seconds: float, poll: float = 0.01) -> None:
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(poll)


async def stop_server(process: Process, diag: StdioDiagnostics | None = None) -> None:
    """Stop a server and every process of its family; safe to call more than once."""
    diag = diag if diag is not None else StdioDiagnostics()
    with anyio.CancelScope(shield=True):
        if diag.stdout_closed:
            await _wait_exit(process, 0.2, 0.005)  # it may be exiting on its own: let it
        diag.exited_by_itself = process.returncode is not None
        # Before its stdin ends (a server may exit at once then): its children still point to it.
        members = family_now(process.pid)
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                await process.stdin.aclose()
        _kill_group(process.pid, signal.SIGTERM)
        procs.signal_members(members.values(), signal.SIGTERM)
        await _wait_exit(process, KILL_GRACE)
        # Children of the server live in its group: end them too, even if it is gone.
        _kill_group(process.pid, signal.SIGKILL)
        members.update(family_now(process.pid) if members else {})
        procs.signal_members(members.values(), signal.SIGKILL)
        await _wait_exit(process, 1.0)
        with anyio.move_on_after(GONE_WAIT):
            while members := reap_dead(members, process.pid):
                await anyio.sleep(0.01)
        REGISTRY.stopped(process.pid, reaped=process.returncode is not None)
        diag.returncode = process.returncode
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(Exception):
                    await stream.aclose()
        with contextlib.suppress(Exception):
            await process.aclose()
