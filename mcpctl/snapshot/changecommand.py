"""A command run on a change of the config file, the change set on its stdin: what ``mcpctl
watch --exec`` does; whatever the command started is stopped when it ends.



    hook = ChangeCommand(["systemctl", "--user", "reload", "mcp-proxy"], timeout=30)
    async for change in changes:
        if change.ok and not change.diff.empty:
            run = await hook.run(json.dumps(change.to_data()).encode() + b"\n")
            if not run.ok:
                log.warning(run.error)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anyio.abc import Process

__all__ = ["COMMAND_GRACE", "ChangeCommand", "CommandRun"]

COMMAND_GRACE = 1.0  # seconds between SIGTERM and SIGKILL for a ChangeCommand's processes


@dataclass(frozen=True)
class CommandRun:
    """How one run of a :class:`ChangeCommand` went.

    ``error`` says why it failed (``None``: it exited 0): it could not start, it exited with
    another code (``exit_code``), or it did not finish within the timeout and was stopped
    (``exit_code`` is then ``None``). ``seconds`` is how long it took, what it left behind
    stopped included (``None`` when it could not start). ``leftovers`` counts the processes
    it started that were found and stopped with it.
    """

    command: str
    exit_code: int | None = None
    error: str | None = None
    seconds: float | None = None
    leftovers: int = 0

    @property
    def ok(self) -> bool:
        """Whether it ran and exited 0 (``error`` is ``None``)."""
        return self.error is None


class ChangeCommand:
    """A command to run on a change, ``data`` (the change set) on its stdin: what
    ``mcpctl watch --exec`` does.

    Each :meth:`run` starts ``argv`` (no shell) in a session and process group of its own,
    writes ``data`` to its stdin and closes it, and waits for it, at most ``timeout``
    seconds (``None``: no limit). When it ends, however it ends (it exited, it timed out,
    the caller's task was cancelled), every process it started is stopped with it: SIGTERM,
    then SIGKILL ``grace`` seconds later, the zombies reaped -- a child that called
    ``setsid``, one that ignores SIGTERM, and (where this process is a child subreaper, see
    :func:`mcpctl.reaper.become_subreaper`) what it put in the background with a
    double fork or ``nohup`` before exiting at once
    (:class:`mcpctl.reaper.CommandFamily`). So nothing else should start children of
    this process in a new session while a command runs.

    Its stdout and stderr go to ``output`` (a file descriptor or a file with one), by
    default this process's stderr (``/dev/null`` when it has none). Run one at a time: a
    change saved meanwhile is for the next run.

    Raises:
        UsageError: ``argv`` is empty, or ``timeout`` or ``grace`` is negative.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None = 30.0,
        grace: float = COMMAND_GRACE,
        output: int | IO[Any] | None = None,
    ) -> None:
        from mcpctl.errors import UsageError

        if not argv:
            raise UsageError("the command is empty")
        if timeout is not None and timeout < 0:
            raise UsageError(f"timeout must be zero or more, not {timeout}")
        if grace < 0:
            raise UsageError(f"grace must be zero or more, not {grace}")
        self.argv = list(argv)
        self.timeout, self.grace, self.output = timeout, grace, output

    async def run(self, data: bytes) -> CommandRun:
        """Run the command once with ``data`` on its stdin, and stop all it started.

        A failure is in the result, never raised; a cancellation of the caller's task is
        raised once the command and its processes are stopped.
        """
        import subprocess
        import time

        import anyio

        from mcpctl.reaper import CommandFamily

        name = self.argv[0]
        started = time.monotonic()
        family = CommandFamily()  # before it starts: what is this process's already
        sink = self.output if self.output is not None else _stderr()
        try:
            process = await anyio.open_process(
                self.argv, stdin=subprocess.PIPE, stdout=sink, stderr=sink,
                start_new_session=True,  # its own group: stopped whole, not by the terminal
            )  # fmt: skip
        except OSError as exc:
            return CommandRun(name, error=f"cannot run {name}: {exc.strerror or exc}")
        family.started(process.pid)
        code: int | None = None
        error: str | None = None
        try:
            with anyio.move_on_after(self.timeout) as scope:
                await _feed(process, data)
                code = await family.wait(process)
            if scope.cancelled_caught:
                error = f"{name} did not finish within {self.timeout:g} s; stopped"
            elif code != 0:
                error = f"{name} exited with {code}"
        finally:
            # A cancellation too: the command and all it started (a setsid child, one that
            # ignores SIGTERM, a double fork's) are stopped before this returns or raises.
            leftovers = await family.stop(process, self.grace)
        seconds = round(time.monotonic() - started, 3)
        return CommandRun(name, code, error, seconds, leftovers)


def _stderr() -> Any:
    """This process's stderr for a command's output, or /dev/null when it has none."""
    import subprocess
    import sys

    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return subprocess.DEVNULL


async def _feed(process: Process, data: bytes) -> None:
    import anyio

    if process.stdin is None:
        return
    try:
        await process.stdin.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # it did not read its input: its exit code tells how it went
    finally:
        await process.stdin.aclose()
