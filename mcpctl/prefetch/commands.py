"""Running the package managers: several at once, each stopped whole, its output kept.

Each command leads a session of its own and is watched by a
:class:`mcpctl.reaper.CommandFamily`, so that when it ends -- it exited, it timed out,
the run was cancelled by SIGINT, SIGTERM or SIGHUP -- every process it started (an install
script, a ``node-gyp`` build) is stopped with it. Commands run side by side here: each one's
pid is known to the others' families as "not theirs" (a family adopts this process's
children from other sessions), and one lock orders the starts and the scans, so that a
command being started is never taken for another's orphan.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import anyio

from mcpctl import procs
from mcpctl.reaper import RESCAN_EVERY, CommandFamily

__all__ = ["CommandRun", "Commands", "meaningful_line", "runner_environment"]

TAIL_LINES = 60
LINE_MAX = 400

# Lines that say nothing about why a command failed.
_NOISE = re.compile(
    r"^(?:A complete log of this run can be found in|Note that you can also install from a|"
    r"tarball, folder, http url, or git url\.|If you are behind a proxy|"
    r"Run `?npm help|npm help |code E[A-Z0-9]+$|errno |syscall |hint: |"
    r"Verbose logs|For more information|See '?docker run --help)",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"^(?:npm (?:error|ERR!|warn|WARN)(?: \d{3})?|error:|Error:|×|╰─▶|\s+)+\s*")
_CAUSE = re.compile(r"^\s*(?:Caused by|cause):\s*(.+)$")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def meaningful_line(lines: Sequence[str]) -> str | None:
    """The last line of a package manager's output that says why it failed (npm's
    ``npm error`` lines, uv's ``error:``/``Caused by:``, docker's ``Error response``),
    without the decoration and the pointers to a log file; ``None`` when there is none."""
    errors = [ln for ln in lines if re.match(r"^\s*(npm (error|ERR!)|error|Error|×|╰─▶)", ln)]
    # uv: "error: Failed to fetch URL", then "  cause: ..." lines, the last the root cause.
    causes = [c.group(1) for ln in lines if (c := _CAUSE.match(ln))]
    for line in reversed(errors or list(lines)):
        text = _PREFIX.sub("", line).strip()
        if text and not _NOISE.match(text) and not re.fullmatch(r"[\d\s]*", text):
            return (f"{text}: {causes[-1]}" if causes else text)[:LINE_MAX]
    return None


@dataclass
class CommandRun:
    """How one command went: its exit ``code`` (``None``: it did not finish), its last
    lines of output, ``timed_out``, and its time."""

    argv: list[str]
    code: int | None = None
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    timed_out: bool = False
    error: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether it ran and exited 0."""
        return self.code == 0 and self.error is None and not self.timed_out


class Commands:
    """The commands of one run, started and stopped so that none takes another's processes
    for its own (see the module)."""

    def __init__(self) -> None:
        self._lock = anyio.Lock()
        self._roots: dict[int, float] = {}
        self._families: list[CommandFamily] = []

    async def run(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        timeout: float,
        on_line: Callable[[str], None] | None = None,
    ) -> CommandRun:
        """Run ``argv`` (no shell), stdin empty, stdout and stderr read line by line (each
        passed to ``on_line``); at most ``timeout`` seconds. A cancellation is raised once
        the command and all it started are stopped; any other failure is in the result."""
        run = CommandRun(list(argv))
        started = time.monotonic()
        async with self._lock:
            family = CommandFamily()
            family.before.update(self._roots)
            try:
                process = await anyio.open_process(
                    list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, cwd=cwd, env=dict(env),
                    start_new_session=True,  # its own group: stopped whole, not by the terminal
                )  # fmt: skip
            except OSError as exc:
                run.error = f"cannot run {argv[0]}: {exc.strerror or exc}"
                return run
            family.started(process.pid)
            stat = procs.read_stat(process.pid) if procs.available() else None
            if stat is not None:
                self._roots[process.pid] = stat.start
                for other in self._families:
                    other.before[process.pid] = stat.start
            self._families.append(family)
        try:
            with anyio.move_on_after(timeout) as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._read, process, run, on_line)
                    run.code = await self._wait(process, family)
            run.timed_out = scope.cancelled_caught
        finally:
            with anyio.CancelScope(shield=True):
                async with self._lock:
                    await family.stop(process)
                self._families.remove(family)
            run.seconds = round(time.monotonic() - started, 3)
        return run

    async def _wait(self, process: anyio.abc.Process, family: CommandFamily) -> int:
        code: int | None = None
        while code is None:
            with anyio.move_on_after(RESCAN_EVERY):
                code = await process.wait()
            if code is None:
                async with self._lock:
                    family.scan()
        return code

    @staticmethod
    async def _read(
        process: anyio.abc.Process, run: CommandRun, on_line: Callable[[str], None] | None
    ) -> None:
        stream = process.stdout
        if stream is None:
            return
        pending = b""
        with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                                 anyio.BrokenResourceError):  # fmt: skip
            async for chunk in stream:
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    _line(raw, run, on_line)
        if pending:
            _line(pending, run, on_line)


def _line(raw: bytes, run: CommandRun, on_line: Callable[[str], None] | None) -> None:
    text = _ANSI.sub("", raw.decode("utf-8", "replace")).rstrip("\r").rstrip()
    text = text.rsplit("\r", 1)[-1]
    if not text.strip():
        return
    run.tail.append(text[:LINE_MAX])
    if on_line is not None:
        on_line(text[:LINE_MAX])


def runner_environment(overlay: Mapping[str, str]) -> dict[str, str]:
    """This process's environment with ``overlay`` on top (what a client that passes its
    own environment gives the runner)."""
    return {**os.environ, **overlay}
