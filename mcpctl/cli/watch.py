"""Following the config file as it is edited: watch."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.asyncrun import run_async
from mcpctl.cli.common import PROTOCOL, Protocol, paths
from mcpctl.cli.flagvalues import parse_duration
from mcpctl.cli.output import STATE
from mcpctl.errors import Interrupted, McpctlError, UsageError

if TYPE_CHECKING:
    from mcpctl.config.model import Config
    from mcpctl.snapshot.watch import ConfigChange

app = typer.Typer()


@app.command("watch")
def watch(
    debounce: str = typer.Option(
        "0.5", "--debounce", metavar="DURATION",
        help="Wait this long after a save for the rest of a burst of writes: 200ms, 1s; a bare "
        "number is seconds.",
    ),
    target: str | None = typer.Option(
        None, "--render", metavar="TARGET", help="Re-render TARGET into -o FILE on each change."
    ),
    out: Path | None = typer.Option(
        None, "--output", "-o", metavar="FILE", help="The file --render writes (atomically)."
    ),
    command: str | None = typer.Option(
        None, "--exec", metavar="CMD",
        help="Run CMD on each valid change with the change set as JSON on stdin (split like a "
        "shell would, run without one).",
    ),
    exec_timeout: str = typer.Option(
        "30s", "--exec-timeout", metavar="DURATION",
        help="Stop a --exec run that takes longer: 30s, 2m; a bare number is seconds.",
    ),
    servers: bool = typer.Option(
        False, "--servers",
        help="Follow the servers instead: keep a connection to each and print each change of "
        "their tools, prompts and resource templates as it happens.",
    ),
    names: list[str] = typer.Option(
        [], "--server", metavar="NAME", help="With --servers, only these (repeatable)."
    ),
    poll: str = typer.Option(
        "60s", "--poll", metavar="DURATION",
        help="With --servers, how often to list again a server that cannot say when it changes: "
        "60s, 5m; a bare number is seconds.",
    ),
    protocol: Protocol | None = PROTOCOL,
) -> int:  # fmt: skip
    """Follow the config file: print each change as it is saved, until Ctrl-C.

    One line per server added (+), removed (-) or changed (~, with the fields that
    changed); with --json one JSON object per change set (JSON Lines). An invalid or removed
    file is reported once and otherwise ignored: the last good state stays current. A file
    that does not exist yet is waited for. --render keeps a rendered file up to date; --exec
    runs a command on each valid change, one at a time (a change saved meanwhile comes
    next); what the command leaves running in the background is stopped when it exits.
    Ctrl-C, SIGTERM or SIGHUP stop it (exit 0), a running --exec included.

    With --servers it follows the enabled servers instead: one connection each, in whichever
    protocol era it speaks, and a line (or JSON object) when one connects, goes away (it is
    retried, backing off up to a minute) or changes what it offers -- with the same
    field-level diff as snapshot diff, "!" before a definition changed in place.

    Examples:

      mcpctl watch

      mcpctl watch --json >> changes.jsonl

      mcpctl watch --render mcp-proxy -o proxy.json

      mcpctl watch --exec "systemctl --user reload mcp-proxy" --debounce 1

      mcpctl watch --servers --json >> server-changes.jsonl
    """
    import shlex

    every, note = parse_duration(poll, flag="--poll")
    if servers:
        if note:
            output.warn(note)
        if target is not None or command is not None:
            raise UsageError("--servers follows the servers; --render and --exec follow the file")
        from mcpctl.cli.watch_servers import follow_servers

        return follow_servers(names, every, protocol)
    if names:
        raise UsageError("--server NAME goes with --servers")

    seconds, note = parse_duration(debounce, flag="--debounce")
    limit, limit_note = parse_duration(exec_timeout, flag="--exec-timeout")
    if (target is None) != (out is None):
        raise UsageError("--render TARGET and -o FILE go together")
    argv: list[str] | None = None
    if command is not None:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise UsageError(f"--exec CMD cannot be split: {exc}") from None
        if not argv:
            raise UsageError("--exec needs a command")
    path = paths().config
    if target is not None and out is not None:
        from mcpctl.render.targets import get_target

        get_target(target)  # an unknown name fails now, not at the first change
        if out.absolute() == path.absolute():
            raise UsageError("-o FILE is the config file itself")
    for warning in (note, limit_note):
        if warning:
            output.warn(warning)
    watcher = _Watcher(path, seconds, target, out, argv, limit)
    try:
        run_async(watcher.loop, "Watching…", spinner=False)
    except Interrupted:
        return 0  # a signal is how a watch ends: a running --exec is stopped by now
    except BrokenPipeError:  # the reader went away (watch --json | head -1): done
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


class _Watcher:
    """The loop: print each change set, then render and run --exec, one change at a time."""

    def __init__(
        self, path: Path, debounce: float, target: str | None, out: Path | None,
        argv: list[str] | None, limit: float,
    ) -> None:  # fmt: skip
        self.path, self.debounce = path, debounce
        self.target, self.out, self.argv, self.limit = target, out, argv, limit
        self.shown: dict[str, tuple[str, ...]] = {}  # warnings printed last: a lasting one once

    async def loop(self) -> None:
        import contextlib
        import threading

        import anyio

        from mcpctl.snapshot.watch import watch_config

        stop = threading.Event()

        async def stop_on_cancel() -> None:
            # A signal cancels the loop; this stops the file watcher's thread at once.
            try:
                await anyio.sleep_forever()
            finally:
                stop.set()

        failed: list[Exception] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(stop_on_cancel)
            changes = watch_config(
                self.path, debounce=self.debounce, stop=stop, on_ready=self.ready
            )
            try:
                async with contextlib.aclosing(changes):
                    async for change in changes:
                        await self.handle(change)
            except Exception as exc:  # raised as it is below, not in an exception group
                failed.append(exc)
            tg.cancel_scope.cancel()
        if failed:
            raise failed[0]

    def ready(self, state: ConfigChange) -> None:
        """The watch is in place: say so, and render what is there."""
        if not STATE.quiet:
            print(f"watching {output.clean(str(self.path))}", file=sys.stderr, flush=True)
        if state.ok and self.target is not None:
            self.render(state.config)

    async def handle(self, change: ConfigChange) -> None:
        """One change set: print it, then render and run --exec if it is a valid change."""
        from mcpctl.config.redaction import register_config

        register_config(change.config.entries.values())  # output hides its secrets too
        self.show(change)
        if not change.ok:
            return
        if self.target is not None:
            self.render(change.config)
        if self.argv is not None and not change.diff.empty:
            await self.run(change)

    def show(self, change: ConfigChange) -> None:
        """Print a change set: JSON Lines, or one timestamped line per server."""
        if STATE.json:
            output.print_json_line(_data(change))
            return
        stamp = change.time.isoformat(timespec="seconds")
        if change.problem is not None:
            output.warn(f"{stamp} {change.problem}")
            return
        diff = change.diff
        lines = [f"+ {name}" for name in diff.added] + [f"- {name}" for name in diff.removed]
        lines += [f"~ {c.name} ({', '.join(c.fields)})" for c in diff.changed]
        for line in lines or [f"{change.path} is valid again (nothing changed)"]:
            output.write_line(f"{stamp} {line}")
        self.warn_once("config", list(change.warnings))

    def warn_once(self, about: str, warnings: list[str]) -> None:
        """Warnings, unless the same ones were printed last time."""
        if tuple(warnings) != self.shown.get(about, ()):
            for warning in warnings:
                output.warn(warning)
        self.shown[about] = tuple(warnings)

    def render(self, config: Config) -> None:
        """Render into -o FILE (written only when it differs); a failure is reported."""
        from mcpctl.auth.secrets import keyring_source
        from mcpctl.config.atomicwrite import atomic_write
        from mcpctl.config.safefile import read_text_file
        from mcpctl.render import render as render_target
        from mcpctl.render.base import grouped
        from mcpctl.render.delivery import Launcher

        assert self.target is not None and self.out is not None
        event: dict[str, Any] = {"event": "render", "target": self.target, "file": str(self.out)}
        try:
            rendered = render_target(
                self.target, config.entries, secrets=keyring_source(),
                launcher=Launcher.for_config(self.path),
            )  # fmt: skip
            changed = read_text_file(self.out) != rendered.text
            if changed:
                mode = 0o600 if rendered.holds_secrets else None
                atomic_write(self.out, rendered.text.encode("utf-8"), mode=mode)
        except McpctlError as exc:
            event.update(ok=False, error=exc.message)
            if STATE.json:
                output.print_json_line(_stamped(event))
            else:
                output.warn(f"render {self.target} failed: {exc.message}; watching on")
            return
        event.update(ok=True, changed=changed, warnings=rendered.warnings)
        if STATE.json:
            output.print_json_line(_stamped(event))
            return
        self.warn_once("render", grouped(rendered.warnings))
        if changed:
            output.info(f"Wrote {self.out} ({self.target})")

    async def run(self, change: ConfigChange) -> None:
        """Run --exec with the change set on stdin; a failure is reported, not fatal. What the
        command started is stopped when it ends, even what it left running in the background."""
        from mcpctl.snapshot.watch import ChangeCommand

        assert self.argv is not None
        text = output.clean(json.dumps(_data(change)), one_line=True)  # as printed
        # A signal too: the command and all it started are stopped before the watch goes on
        # or ends.
        run = await ChangeCommand(self.argv, timeout=self.limit).run(text.encode("utf-8") + b"\n")
        event: dict[str, Any] = {"event": "exec", "command": run.command}
        if run.seconds is not None:
            event["seconds"] = run.seconds
        self.report_exec(event, run.exit_code, run.error)

    def report_exec(self, event: dict[str, Any], code: int | None, error: str | None) -> None:
        """The outcome of an --exec run: a JSON line, or a warning when it failed."""
        event.update(ok=error is None, exit_code=code, error=error)
        if STATE.json:
            output.print_json_line(_stamped(event))
        elif error is not None:
            output.warn(f"--exec: {error}; watching on")
        else:
            output.debug(f"--exec {event['command']} took {event['seconds']} s")


def _data(change: ConfigChange) -> dict[str, Any]:
    """A change set as a JSON line and as --exec reads it."""
    return {"event": "change", **change.to_data()}


def _stamped(event: dict[str, Any]) -> dict[str, Any]:
    from datetime import datetime

    now = datetime.now().astimezone().isoformat(timespec="seconds")
    return {"event": event["event"], "time": now, **event}
