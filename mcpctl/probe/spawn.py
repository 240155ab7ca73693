"""Starting and stopping stdio servers, without the MCP SDK.

Kept apart from :mod:`mcpctl.probe.connect` (which imports the SDK, over a second here) so that
:func:`mcpctl.probe.probe_all` can start the first servers before that import: servers boot
while mcpctl loads the SDK, instead of after it.

Servers run in their own process group. Stopping one closes its stdin and sends SIGTERM to
the whole group at once (what a host does once it has its answer), then SIGKILL after half a
second: no process mcpctl started outlives the probe.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import anyio
from anyio.abc import Process

from mcpctl.config.model import ServerEntry

__all__ = [
    "ProbeError",
    "StdioDiagnostics",
    "command_not_found",
    "spawn_error",
    "spawn_server",
    "stop_server",
]

STDERR_KEEP_LINES = 20
STDERR_LINE_MAX = 400
KILL_GRACE = 0.5


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


def child_env(entry: ServerEntry) -> dict[str, str]:
    """The server's environment: ours, with the entry's (resolved) variables on top.

    Like the hosts people use (Claude Code, Cursor), so launchers such as npx and uvx find
    their caches and proxies.
    """
    return {**os.environ, **entry.env}


async def spawn_server(entry: ServerEntry) -> Process:
    """Start a (resolved) stdio entry in its own process group, with piped stdio.

    Raises:
        OSError: the command cannot be started (FileNotFoundError when it is missing).
    """
    assert entry.command is not None
    return await anyio.open_process(
        [entry.command, *entry.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=entry.cwd,
        env=child_env(entry),
        start_new_session=True,
    )


def _kill_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _wait_exit(process: Process, seconds: float, poll: float = 0.01) -> None:
    with anyio.move_on_after(seconds):
        while process.returncode is None:
            await anyio.sleep(poll)


async def stop_server(process: Process, diag: StdioDiagnostics | None = None) -> None:
    """Stop a server and every process in its group; safe to call more than once."""
    diag = diag if diag is not None else StdioDiagnostics()
    with anyio.CancelScope(shield=True):
        if diag.stdout_closed:
            await _wait_exit(process, 0.2, 0.005)  # it may be exiting on its own: let it
        diag.exited_by_itself = process.returncode is not None
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                await process.stdin.aclose()
        _kill_group(process.pid, signal.SIGTERM)
        await _wait_exit(process, KILL_GRACE)
        # Children of the server live in its group: end them too, even if it is gone.
        _kill_group(process.pid, signal.SIGKILL)
        await _wait_exit(process, 1.0)
        diag.returncode = process.returncode
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(Exception):
                    await stream.aclose()
        with contextlib.suppress(Exception):
            await process.aclose()
