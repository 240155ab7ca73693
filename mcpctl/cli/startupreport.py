"""The start-up summary: report."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.asyncrun import run_async
from mcpctl.cli.common import (
    GROUP,
    INTERNAL_ROOT,
    MANIFEST_KEY,
    PROTOCOL,
    Protocol,
    era_options,
    group_selection,
    paths,
    read_config,
    require_trusted,
)
from mcpctl.cli.flagvalues import duration_option
from mcpctl.cli.output import STATE, Lines
from mcpctl.errors import ExitCode, McpctlError, UsageError
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.snapshot.model import Snapshot

app = typer.Typer()


class Format(StrEnum):
    """Output formats of report."""

    text = "text"
    markdown = "markdown"
    json = "json"


@app.command("report")
def report(
    probe: bool = typer.Option(
        False, "--probe", help="Probe every server: health, tool counts, changed tools."
    ),
    fmt: Format = typer.Option(
        Format.text, "--format", help="text (a chat message), markdown, or json (the envelope)."
    ),
    snapshot: Path | None = typer.Option(
        None,
        "--snapshot",
        metavar="FILE",
        help="The previous snapshot (default: $MCPCTL_SNAPSHOT, else last-known-mcps.json in "
        "the state dir).",
    ),
    save: bool = typer.Option(
        False, "--save", help="Store the current snapshot in that file after reporting."
    ),
    timeout: str | None = typer.Option(
        None,
        "--timeout",
        metavar="DURATION",
        help="Per-server timeout with --probe: 10s, 500ms, 2m; a bare number is seconds "
        "(default: each entry's).",
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", min=1, metavar="N", help="Servers probed at once with --probe."
    ),
    protocol: Protocol | None = PROTOCOL,
    group: list[str] = GROUP,
    internal_root: Path | None = INTERNAL_ROOT,
    manifest_key: str = MANIFEST_KEY,
) -> int:
    """Summarize the servers and what changed since the last snapshot.

    Counts the servers (internal and external), lists each external one with its
    description and, with --probe, its tools; then the changes since the previous snapshot
    (+ added, - removed, ~ changed, ! a tool definition that changed in place) and the
    servers that failed. The text fits a chat message; --format markdown suits Slack or
    GitHub. Without --probe nothing is started and tool counts are not shown.

    --save stores the current snapshot after reporting, as a daemon does at start-up;
    save with --probe, or the next report cannot tell which tools changed. Exit 0, or 1
    with --probe when a server is not healthy (failed, needs a sign-in, or degraded: mcpctl
    had to repair what it sent or could not list something; as health); a snapshot that
    cannot be saved is reported after the summary, exit 3.

    With --group, the report covers the group's servers only (no internal ones), compared
    with their records in the snapshot; --save then needs a file of the group's own
    (--snapshot FILE).

    Examples:

      mcpctl report

      mcpctl report --probe --save --format markdown

      mcpctl report --probe --snapshot mcps.lock.json --json

      mcpctl report --group work
    """
    from mcpctl.config.siblings import discover_internal
    from mcpctl.snapshot.diff import diff_snapshots
    from mcpctl.snapshot.files import load_snapshot, save_snapshot
    from mcpctl.snapshot.startupreport import build_report, render_markdown, render_text

    if fmt is Format.json:
        STATE.json = True
    warnings: list[str] = []
    seconds = duration_option(timeout, warnings)
    if save and group and snapshot is None:
        raise UsageError(
            "--group records only the group's servers: the last-known snapshot keeps them all",
            hint="write the group's snapshot to a file of its own: --snapshot FILE",
        )
    loaded = read_config()
    members = group_selection(loaded.config.entries, group)
    internal: dict[str, ServerEntry] = {}
    if internal_root is not None and members is None:
        internal, found = discover_internal(internal_root, manifest_key)
        warnings += found
    external: dict[str, ServerEntry] = {}
    for name, entry in loaded.config.entries.items():
        if members is not None and name not in members:
            continue
        if name in internal:
            warnings.append(
                f"external server {name!r} has the name of an internal one and is skipped"
            )
        else:
            external[name] = entry
    if probe:
        require_trusted(loaded, [name for name, entry in external.items() if entry.enabled])
    where = snapshot.expanduser() if snapshot is not None else paths().snapshot
    previous = load_snapshot(where)
    if previous is not None and members is not None:
        kept = set(members)
        previous = replace(previous, mcps={n: r for n, r in previous.mcps.items() if n in kept})
    current = _current(external, internal, probe, seconds, concurrency, protocol)
    summary = build_report(
        external,
        current,
        diff_snapshots(previous, current),
        internal=internal,
        since=previous.timestamp if previous is not None else None,
        problems=loaded.warnings,
    )
    exit_code: int = ExitCode.FAILED if probe and summary.unhealthy else ExitCode.OK
    errors: list[dict[str, object]] = []
    if save:
        if previous is not None and previous.probed and not current.probed:
            warnings.append(
                f"{where} now holds no tool definitions; save with --probe so that the next "
                "report can tell which tools changed"
            )
        try:
            save_snapshot(current, where)
        except McpctlError as exc:  # the summary is still worth printing
            errors.append(exc.to_dict())
            exit_code = exc.exit_code
    data: dict[str, Any] = {
        **summary.to_data(),
        "snapshot_file": str(where),
        "saved": save and not errors,
    }
    if STATE.json:
        # In text the config's problems are part of the summary (it may be posted alone).
        warnings = loaded.warnings + warnings
    render = render_markdown if fmt is Format.markdown else render_text
    text = render(summary)
    code = output.emit(
        Result("report", data, warnings, errors, exit_code),
        lambda _: Lines(text.splitlines()),
    )
    if data["saved"]:
        output.info(f"saved the snapshot to {where}")
    return code


def _current(
    external: dict[str, ServerEntry],
    internal: dict[str, ServerEntry],
    probe: bool,
    timeout: float | None,
    concurrency: int | None,
    protocol: Protocol | None,
) -> Snapshot:
    """The snapshot of now: the config's, and with ``probe`` what each server offers."""
    if not probe:
        from mcpctl.snapshot.model import snapshot_of_config

        return snapshot_of_config(external, internal=internal)
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.snapshot.probing import take_snapshot_async

    count = len([e for e in (*external.values(), *internal.values()) if e.enabled])
    mode, eras = era_options(protocol)
    taken: Snapshot = run_async(
        lambda: take_snapshot_async(
            external,
            internal=internal,
            probe=True,
            concurrency=concurrency,
            timeout=timeout,
            secrets=keyring_source(),
            protocol=mode,
            eras=eras,
        ),
        what=f"Probing {count} server{'s' if count != 1 else ''}…",
    )
    return taken
