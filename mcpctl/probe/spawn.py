"""Starting and stopping stdio servers, without the MCP SDK.

Kept apart from :mod:`mcpctl.probe.connect` (which imports the SDK, over a second here) so that
:func:`mcpctl.probe.probe_all` can start the first servers before that import: servers boot
while mcpctl loads the SDK, instead of after it.

A server gets a minimal environment (:func:`child_env`) and runs in its own session and
process group. Stopping one closes its stdin and sends SIGTERM to its whole family at once
(what a host does once it has its answer): its group, and on Linux every process that came
from it, a child that left the group with ``setsid`` included (:mod:`mcpctl.probe.reaper`);
then SIGKILL after half a second, and the zombies are reaped: no process mcpctl started
outlives the probe. :func:`become_subreaper` and :func:`reap_orphans` also catch what a
server's children leave behind after a double fork.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import anyio
from anyio.abc import Process

from mcpctl.config.model import ServerEntry
from mcpctl.probe import procs
from mcpctl.probe.reaper import (
    GONE_WAIT,
    KILL_GRACE,
    REGISTRY,
    become_subreaper,
    family_now,
    reap_dead,
    reap_orphans,
    until_waiting,
)

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
]

STDERR_KEEP_LINES = 20
STDERR_LINE_MAX = 400

# What a server inherits from mcpctl's environment unless its entry asks for more: the MCP
# SDK's list (mcp.client.stdio.DEFAULT_INHERITED_ENV_VARS), enough for launchers such as npx
# and uvx to find their caches. The SDK is not imported here: servers start before it is.
DEFAULT_INHERITED_ENV: tuple[str, ...] = (
    ("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
     "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE")
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
)  # fmt: skip


class ProbeError(NamedTuple):
    """Why a server failed, with a stable ``code`` and a ``hint`` for humans."""

    code: str
    message: str
    hint: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        """JSON form."""
        return {"code": self.code, "message": self.message, "hint": self.hint}


_INSTALL_HINTS = {
    "npx": "install Node.js (it provides npx)",
    "node": "install Node.js",
    "uvx": "install uv (it provides uvx): pip install uv",
    "uv": "install uv: pip install uv",
    "docker": "install Docker, or use the server's npm/PyPI package",
    "python": "install Python 3",
    "python3": "install Python 3",
}


def command_not_found(command: str) -> ProbeError:
    """The error for an executable that is not there."""
    hint = _INSTALL_HINTS.get(Path(command).name, f"install {command!r} or fix the path")
    where = "on PATH" if os.sep not in command else f"at {command}"
    return ProbeError("command_not_found", f"command {command!r} not found {where}", hint)


def spawn_error(exc: OSError, entry: ServerEntry) -> ProbeError:
    """The error for a server that could not be started."""
    if isinstance(exc, FileNotFoundError):
        if entry.cwd and not Path(entry.cwd).is_dir():
            return ProbeError("spawn_failed", f"working directory {entry.cwd!r} does not exist",
                              "fix the entry's cwd")  # fmt: skip
        return command_not_found(str(entry.command))
    return ProbeError("spawn_failed", f"cannot start {entry.command!r}: {exc.strerror or exc}",
                      "check that the command is executable")  # fmt: skip


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

    def tail(self) -> list[str]:
        """The last lines of stderr (each capped)."""
        return list(self.stderr)


def child_env(entry: ServerEntry, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment: a few variables of ours, with the entry's (resolved) on top.

    Of mcpctl's environment (``environ``, default ``os.environ``) the server gets only
    :data:`DEFAULT_INHERITED_ENV` (skipping exported shell functions), plus what the entry's
    ``inherit_env`` asks for: the names it lists, or everything when it is ``true``. A
    secret mcpctl happens to have reaches a server only when its entry names it.
    """
    source = os.environ if environ is None else environ
    if entry.inherit_env is True:
        return {**source, **entry.env}
    env = {
        name: source[name]
        for name in DEFAULT_INHERITED_ENV
        if name in source and not source[name].startswith("()")
    }
    if isinstance(entry.inherit_env, tuple):
        env.update((name, source[name]) for name in entry.inherit_env if name in source)
    return {**env, **entry.env}


async def spawn_server(entry: ServerEntry) -> Process:
    """Start a (resolved) stdio entry in its own session and group, with piped stdio.

    Raises:
        OSError: the command cannot be started (FileNotFoundError when it is missing).
    """
    assert entry.command is not None
    process = await anyio.open_process(
        [entry.command, *entry.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=entry.cwd,
        env=child_env(entry),
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
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                await process.stdin.aclose()
        members = family_now(process.pid)  # before it dies: its children still point to it
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
