"""A small daemon on mcpctl: report the MCP servers at start-up, then every config change.

    python examples/daemon.py [--config FILE] [--snapshot FILE] [--no-probe]
                              [--max-changes N] [--timeout SECONDS]

At start-up it loads the config, probes every enabled server the user approved (a
project's file runs nothing until ``mcpctl trust``; the user's own file needs no approval),
compares what it found with the snapshot saved last time, prints the report and saves the
new snapshot. Then it watches
the config file and prints each change set, until Ctrl-C or SIGTERM (exit 0), or until
--max-changes change sets or --timeout seconds of watching. Copy it and put your own actions
where it prints.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from pathlib import Path

import anyio

from mcpctl import Config, McpctlError, Paths, TrustStore, load_config
from mcpctl.auth.secrets import keyring_source
from mcpctl.snapshot.diff import diff_snapshots
from mcpctl.snapshot.files import load_snapshot, save_snapshot
from mcpctl.snapshot.probing import take_snapshot_async
from mcpctl.snapshot.startupreport import build_report, render_changes, render_text
from mcpctl.snapshot.watch import watch_config


def say(text: str) -> None:
    """Print at once: the output is often a pipe to a log collector."""
    print(text, flush=True)


async def start_up(config: Path, snapshot_file: Path, probe: bool) -> Config:
    """The start-up report: what is configured, what answered, what changed since last time."""
    loaded = load_config(config)  # never raises: bad entries are skipped with a problem each
    entries = loaded.config.entries
    # Only what the user approved is started: a cloned repository's file is not theirs.
    trust = TrustStore.from_paths().check(config, entries)
    waiting = trust.waiting()
    if waiting:
        say(f"warning: {trust.notice()}")
        entries = {name: entry for name, entry in entries.items() if name not in waiting}
    # Placeholders resolve from the environment, then the keyring; a failed server is data.
    current = await take_snapshot_async(entries, probe=probe, secrets=keyring_source())
    try:
        previous = load_snapshot(snapshot_file)  # None the first time
    except McpctlError as exc:  # not a snapshot, or unreadable: start afresh
        say(f"warning: {exc.message}")
        previous = None
    diff = diff_snapshots(previous, current)
    since = previous.timestamp if previous is not None else None
    report = build_report(entries, current, diff, since=since, problems=loaded.warnings)
    say(render_text(report))
    try:
        save_snapshot(current, snapshot_file)  # what the next start compares with
    except McpctlError as exc:
        say(f"warning: the snapshot was not saved: {exc.message}")
    return loaded.config


async def watch(config: Path, loaded: Config, max_changes: int | None) -> None:
    """Print each change set of the config file (``max_changes``: stop after that many)."""
    seen = 0
    # initial: an edit made while the servers were probed is the first change set.
    changes = watch_config(config, initial=loaded, on_ready=lambda _: say(f"watching {config}"))
    async with contextlib.aclosing(changes):
        async for change in changes:
            when = change.time.isoformat(timespec="seconds")
            if change.problem is not None:  # invalid or gone: the last good config holds
                say(f"{when} config problem: {change.problem}")
            lines = render_changes(change.diff)
            if lines:
                say(f"{when} {len(lines)} change(s), {len(change.snapshot.mcps)} servers:")
                for line in lines:
                    say(f"  {line}")
            for warning in change.warnings:
                say(f"  warning: {warning}")
            seen += 1
            if max_changes is not None and seen >= max_changes:
                return


async def main(options: argparse.Namespace) -> None:
    paths = Paths.from_env(options.config)
    config = paths.config
    snapshot_file = Path(options.snapshot) if options.snapshot else paths.snapshot
    async with anyio.create_task_group() as tg:

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    say(f"stopping ({signal.Signals(signum).name})")
                    tg.cancel_scope.cancel()  # servers being probed are stopped too
                    return

        async def run() -> None:
            loaded = await start_up(config, snapshot_file, options.probe)
            # The time limit is the watch's: a slow start-up still gets its report out.
            with anyio.move_on_after(options.timeout):
                await watch(config, loaded, options.max_changes)
            tg.cancel_scope.cancel()  # done: stop listening for signals

        tg.start_soon(stop_on_signal)
        tg.start_soon(run)
    say("stopped")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="the config file (default: as mcpctl finds it)")
    parser.add_argument("--snapshot", help="the snapshot file (default: mcpctl's)")
    parser.add_argument(
        "--no-probe", dest="probe", action="store_false", help="do not start the servers"
    )
    parser.add_argument("--max-changes", type=int, help="stop after N change sets")
    parser.add_argument("--timeout", type=float, help="stop after watching for this many seconds")
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse_args(sys.argv[1:]))
