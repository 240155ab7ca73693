"""Snapshots: snapshot save and snapshot diff (lock files included)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.commandgroup import CommandGroup
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
)
from mcpctl.cli.difftext import NOUNS, diff_lines, diff_summary, package_lines
from mcpctl.cli.flagvalues import duration_option
from mcpctl.cli.output import STATE, Lines
from mcpctl.cli.progress import progress
from mcpctl.errors import ExitCode, UsageError
from mcpctl.results import Result
from mcpctl.text import plural

if TYPE_CHECKING:
    from mcpctl.config.loader import LoadResult
    from mcpctl.snapshot.model import Snapshot
    from mcpctl.snapshot.packages import PackageChange, Resolution

app = typer.Typer()
SNAPSHOT_HELP = """Record the enabled servers (and what they offer); show what changed since.

A snapshot pins each server's configuration and, with --probe, every tool, prompt and resource
template it offers, by fingerprint: a tool that changes in place (a rug pull) shows up.

Examples:

  mcpctl snapshot save --probe -o mcp-lock.json

  mcpctl snapshot diff --probe --against mcp-lock.json --exit-code
"""
snapshot_app = typer.Typer(help=SNAPSHOT_HELP, no_args_is_help=True, cls=CommandGroup)
app.add_typer(snapshot_app, name="snapshot")

NO_EARLIER = "no earlier snapshot: nothing to compare; --save records one"


class DiffFormat(StrEnum):
    """Output formats of snapshot diff."""

    text = "text"
    json = "json"
    sarif = "sarif"


SNAPSHOT_FILE = typer.Option(
    None,
    "--snapshot",
    metavar="FILE",
    help="The last-known snapshot (default: $MCPCTL_SNAPSHOT, else last-known-mcps.json in "
    "the state dir).",
)
PROBE = typer.Option(
    False, "--probe", help="Connect to each server and record its tools, prompts and templates."
)
TIMEOUT = typer.Option(
    None,
    "--timeout",
    metavar="DURATION",
    help="Per-server timeout with --probe: 10s, 500ms; a bare number is seconds (default: each "
    "entry's).",
)
CONCURRENCY = typer.Option(
    None, "--concurrency", min=1, metavar="N", help="Servers probed at once with --probe."
)
PACKAGES = typer.Option(
    False,
    "--packages",
    help="Also pin the package each stdio server runs (npx, uvx, pipx run, docker run): its "
    "exact version and integrity, from the npm registry, PyPI or the local image.",
)


def resolve_now(snapshot: Snapshot, loaded: LoadResult) -> Resolution:
    """What the package of each recorded stdio server resolves to now (the cache answers
    when the registries cannot be reached)."""
    from mcpctl.snapshot.packages import resolve_packages, specs_of

    entries = {n: e for n, e in loaded.config.entries.items() if n in snapshot.mcps}
    specs = specs_of(entries)
    if not specs:
        from mcpctl.snapshot.packages import Resolution

        return Resolution()
    with progress(f"Resolving {plural(len(specs), 'package')}", total=None):
        return resolve_packages(specs, cache_file=paths().package_metadata)


def take_now(
    probe: bool,
    timeout: float | None,
    concurrency: int | None,
    internal_root: Path | None,
    manifest_key: str,
    protocol: Protocol | None = None,
    groups: Sequence[str] = (),
) -> tuple[Snapshot, list[str], LoadResult]:
    """The snapshot of the enabled servers now (probed or not, in ``protocol``'s era; only
    the members of ``groups`` when given), warnings, and the config.

    Raises:
        GroupNotFoundError: no server is in one of ``groups``.
        the errors of :func:`mcpctl.cli.common.read_config`.
    """
    from mcpctl.snapshot.probing import snapshot_targets

    loaded = read_config()
    snapshot, chosen, more = snapshot_targets(
        loaded.config.entries, internal_root, manifest_key, groups
    )
    warnings = list(loaded.warnings) + more
    if probe and chosen:
        from mcpctl.auth.secrets import keyring_source
        from mcpctl.cli.asyncrun import run_async
        from mcpctl.cli.common import require_trusted

        require_trusted(loaded, [n for n, _, kind in chosen if kind == "external"])
        from mcpctl.probe.catalog import catalog_all
        from mcpctl.snapshot.probing import add_probes, catalog_warnings

        mode, eras = era_options(protocol)
        with progress(f"Probing {plural(len(chosen), 'server')}", total=len(chosen)) as tick:
            catalogs = run_async(
                lambda: catalog_all(
                    chosen,
                    concurrency=concurrency,
                    timeout=timeout,
                    secrets=keyring_source(),
                    on_result=lambda _: tick.advance(),
                    protocol=mode,
                    eras=eras,
                ),
                what="",
                spinner=False,
            )
        add_probes(snapshot, catalogs)
        warnings += catalog_warnings(catalogs)
    return snapshot, warnings, loaded


@snapshot_app.command("save")
def save(
    probe: bool = PROBE,
    out: Path | None = typer.Option(
        None, "--output", "-o", metavar="FILE", help="Write here (a lock file) instead."
    ),
    snapshot_file: Path | None = SNAPSHOT_FILE,
    timeout: str | None = TIMEOUT,
    concurrency: int | None = CONCURRENCY,
    protocol: Protocol | None = PROTOCOL,
    group: list[str] = GROUP,
    internal_root: Path | None = INTERNAL_ROOT,
    manifest_key: str = MANIFEST_KEY,
    packages: bool = PACKAGES,
) -> int:
    """Record the enabled servers: their configuration, and with --probe what each offers.

    Written to -o FILE, else --snapshot FILE, else $MCPCTL_SNAPSHOT, else the last-known
    snapshot in the state dir. The configuration is recorded as fingerprints; what servers
    send is recorded whole, with every secret mcpctl resolved for them replaced by ****
    (a definition that held one is flagged). A server that cannot be probed is recorded
    without its tools, with a warning. With --group, only the group's servers are recorded,
    into a file of their own (-o or --snapshot): the last-known snapshot keeps every server.

    Examples:

      mcpctl snapshot save

      mcpctl snapshot save --probe -o mcp-lock.json

      mcpctl snapshot save --probe --group work -o work-lock.json
    """
    from mcpctl.snapshot.diff import secrets_redacted
    from mcpctl.snapshot.files import save_snapshot
    from mcpctl.snapshot.packagepins import pin_warnings

    warnings: list[str] = []
    seconds = duration_option(timeout, warnings)
    target = out or snapshot_file
    if target is None and group:
        raise _group_needs_file("-o FILE")
    target = target or paths().snapshot
    snapshot, more, loaded = take_now(
        probe, seconds, concurrency, internal_root, manifest_key, protocol, group
    )
    warnings += more
    resolution = resolve_now(snapshot, loaded) if packages else None
    if resolution is not None:
        snapshot.packages = resolution.pins
        warnings += resolution.warnings
        warnings += pin_warnings(resolution.pins)
    redacted = secrets_redacted(snapshot)
    for item in redacted:
        what = f"{NOUNS[item.kind]} {item.name}: " if item.name is not None else ""
        warnings.append(f"{item.server}: {what}{item.message}")
    save_snapshot(snapshot, target)
    failed = sorted(
        name for name, r in snapshot.mcps.items() if r.probe is not None and r.probe.error
    )
    data = {
        "file": str(target),
        "timestamp": snapshot.timestamp,
        "servers": len(snapshot.mcps),
        "probed": probe,
        "probe_failed": failed,
        "secrets_redacted": [item.to_data() for item in redacted],
    }
    noun = "server" if len(snapshot.mcps) == 1 else "servers"
    what = f"{len(snapshot.mcps)} {noun}"
    if probe:
        what += f", {len(snapshot.mcps) - len(failed)} probed" + (
            f", {len(failed)} failed" if failed else ""
        )
    if resolution is not None:
        from mcpctl.snapshot.packages import pins_to_data

        data["packages"] = {"pins": pins_to_data(resolution.pins), **resolution.to_data()}
        what += f", {plural(len(resolution.pins), 'package')} recorded"
        if resolution.note:
            output.info(f"note: packages {resolution.note}")
    output.info(f"Wrote {target} ({what})")
    return output.emit(Result("snapshot save", data, warnings))


@snapshot_app.command("diff")
def diff(
    probe: bool = PROBE,
    save_after: bool = typer.Option(
        False, "--save", help="Then record the new snapshot where the old one was read from."
    ),
    exit_code: bool = typer.Option(
        False, "--exit-code", help="Exit 1 when anything changed (for CI)."
    ),
    against: Path | None = typer.Option(
        None, "--against", metavar="FILE", help="Compare with this snapshot (a lock file)."
    ),
    snapshot_file: Path | None = SNAPSHOT_FILE,
    fmt: DiffFormat = typer.Option(DiffFormat.text, "--format", help="text, json or sarif."),
    timeout: str | None = TIMEOUT,
    concurrency: int | None = CONCURRENCY,
    protocol: Protocol | None = PROTOCOL,
    group: list[str] = GROUP,
    internal_root: Path | None = INTERNAL_ROOT,
    manifest_key: str = MANIFEST_KEY,
    packages: bool = typer.Option(
        False,
        "--packages",
        help="Also resolve each stdio server's package again: a new version (moved) or the "
        "same version with other bytes (republished) is a change; an unpinned spec a warning.",
    ),
) -> int:
    """Show what changed since the last snapshot (or --against FILE).

    Servers added, removed or reconfigured, and with --probe tools, prompts and resource
    templates added, removed, renamed or changed in place. A definition that changed in
    place is flagged with "!": a server that silently changes what a tool says or does is
    how tool poisoning shows. With no earlier snapshot there is nothing to compare (an empty
    diff, not "everything added"). Exit 0, or 1 with --exit-code when anything changed.
    With --group, only the group's servers are compared (--save then needs a file of the
    group's own: --against or --snapshot). With --packages, each stdio server's package is
    resolved again and compared with the one recorded by snapshot save --packages: moved
    and republished packages count as changes (--exit-code exits 1); offline, the lock is
    checked against the cache, and the output says so.

    Examples:

      mcpctl snapshot diff

      mcpctl snapshot diff --probe --save

      mcpctl snapshot diff --probe --against mcp-lock.json --exit-code --format sarif

      mcpctl snapshot diff --packages --against mcp-lock.json --exit-code
    """
    from mcpctl.snapshot.diff import diff_snapshots
    from mcpctl.snapshot.files import load_snapshot, save_snapshot
    from mcpctl.snapshot.sarif import diff_sarif_of

    if fmt is DiffFormat.sarif and STATE.json:
        raise UsageError("--json and --format sarif are two formats: choose one")
    if fmt is DiffFormat.json:
        STATE.json = True
    warnings: list[str] = []
    seconds = duration_option(timeout, warnings)
    if save_after and group and against is None and snapshot_file is None:
        raise _group_needs_file("--snapshot FILE")
    source = against or snapshot_file or paths().snapshot
    old = load_snapshot(source)
    if old is None and against is not None:
        raise UsageError(
            f"there is no snapshot at {against}",
            hint=f"record one with: mcpctl snapshot save --probe -o {against}",
        )
    if save_after and old is not None and old.probed and not probe:
        raise UsageError(
            f"--save would drop the probe data of {source}", hint="add --probe to record it anew"
        )
    if save_after and old is not None and old.packages is not None and not packages:
        raise UsageError(
            f"--save would drop the package pins of {source}",
            hint="add --packages to record them anew",
        )
    new, more, loaded = take_now(
        probe, seconds, concurrency, internal_root, manifest_key, protocol, group
    )
    warnings += more
    if old is not None and group:
        members = set(group_selection(loaded.config.entries, group) or ())
        old = replace(old, mcps={n: r for n, r in old.mcps.items() if n in members})
    notes: list[str] = []
    package_changes: list[PackageChange] = []
    resolution = resolve_now(new, loaded) if packages else None
    if resolution is not None:
        from mcpctl.snapshot.packages import compare_packages

        new.packages = resolution.pins
        recorded = old.packages if old is not None else None
        package_changes, more = compare_packages(
            recorded, resolution, source=str(source) if old is not None else None
        )
        warnings += more
        if resolution.note:
            notes.append(resolution.note)
    if old is None:
        notes.append(NO_EARLIER)
    elif old.probed and not probe:
        warnings.append(
            f"tools were not compared: {source} has probe data; add --probe to compare them"
        )
    elif probe and not old.probed:
        warnings.append(f"tools were not compared: {source} has no probe data")
    changes = diff_snapshots(old, new)
    sarif = (
        diff_sarif_of(changes, loaded, source, read=old is not None, notes=notes)
        if fmt is DiffFormat.sarif
        else {}
    )
    if save_after:
        save_snapshot(new, source)
        output.info(f"Wrote {source}")
    moved = [c for c in package_changes if c.fails]
    changed = not changes.empty or bool(moved)
    code: int = ExitCode.FAILED if exit_code and changed else ExitCode.OK
    if fmt is DiffFormat.sarif:
        for line in warnings:
            output.warn(line)
        for note in notes:
            output.info(f"note: {note}")
        output.print_json(sarif)
        return code
    data: dict[str, Any] = {
        "against": str(source),
        "earlier": old.timestamp if old is not None else None,
        "now": new.timestamp,
        "probed": probe,
        "tools_compared": bool(probe and old is not None and old.probed),
        "saved": str(source) if save_after else None,
        "notes": notes,
        **changes.to_data(),
    }
    if resolution is not None:
        data["packages"] = {
            **resolution.to_data(),
            "compared": bool(old is not None and old.packages is not None),
            "changes": [c.to_data() for c in package_changes],
        }
    if not STATE.json:
        for note in notes:
            output.info(f"note: {note}")
    result = Result("snapshot diff", data, warnings, exit_code=code)
    code = output.emit(
        result, lambda _: Lines(diff_lines(changes) + package_lines(package_changes))
    )
    if old is not None:
        output.info(diff_summary(changes, old.timestamp, moved))
    return code


def _group_needs_file(flag: str) -> UsageError:
    """The error of a group's snapshot about to be written over the last-known one."""
    return UsageError(
        "--group records only the group's servers: the last-known snapshot keeps them all",
        hint=f"write the group's snapshot to a file of its own: {flag}",
    )
