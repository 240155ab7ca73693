"""``watch --servers``: each change of what the servers offer, printed as it happens."""

from __future__ import annotations

import sys

from mcpctl.cli import output
from mcpctl.cli.asyncrun import run_async
from mcpctl.cli.common import Protocol
from mcpctl.cli.output import STATE
from mcpctl.errors import Interrupted

__all__ = ["follow_servers"]


def follow_servers(names: list[str], poll: float, protocol: Protocol | None) -> int:
    """``watch --servers``: print each event of :func:`mcpctl.snapshot.live.watch_servers`."""
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.cli.common import era_options, targets
    from mcpctl.cli.difftext import diff_lines
    from mcpctl.config.siblings import DEFAULT_MANIFEST_KEY
    from mcpctl.snapshot.diff import SnapshotDiff
    from mcpctl.snapshot.live import ServerEvent, watch_servers

    chosen, warnings = targets(names, "all", None, DEFAULT_MANIFEST_KEY)
    for warning in warnings:
        output.warn(warning)
    mode, eras = era_options(protocol)
    entries = {name: entry for name, entry, _ in chosen}

    def show(event: ServerEvent) -> None:
        if STATE.json:
            output.print_json_line(event.to_data())
            return
        stamp = event.time.isoformat(timespec="seconds")
        if event.kind == "connected":
            what = f"{event.tools} tools" if event.tools is not None else "connected"
            output.write_line(f"{stamp} {event.name} connected ({event.era}, {what})")
        elif event.kind == "disconnected":
            output.write_line(
                f"{stamp} {event.name} unavailable ({event.error}); retrying in "
                f"{event.retry_in:g} s"
            )
        elif event.change is not None:
            for line in diff_lines(SnapshotDiff(changed=[event.change])):
                output.write_line(f"{stamp} {line}")

    async def loop() -> None:
        async with watch_servers(
            entries, secrets=keyring_source(), protocol=mode, eras=eras, poll=poll
        ) as events:
            async for event in events:
                show(event)

    if not STATE.quiet:
        print(f"following {len(entries)} server(s)", file=sys.stderr, flush=True)
    try:
        run_async(loop, "Following…", spinner=False)
    except Interrupted:
        return 0  # a signal is how a watch ends: its servers are stopped by now
    return 0
