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
    duration_option,
    era_options,
    group_selection,
    paths,
    read_config,
)
from mcpctl.cli.difftext import NOUNS, diff_lines
from mcpctl.cli.output import STATE, Lines
from mcpctl.cli.progress import progress
from mcpctl.errors import ExitCode, UsageError
from mcpctl.results import Result
from mcpctl.text import plural

if TYPE_CHECKING:
    from mcpctl.config.loader import LoadResult
    from mcpctl.snapshot.diff import SnapshotDiff
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
    from mcpctl.config.siblings import discover_internal, select_targets
    from mcpctl.snapshot.model import snapshot_of_config

    loaded = read_config()
    warnings = list(loaded.warnings)
    internal: dict[str, Any] = {}
    if internal_root is not None:
        internal, found = discover_internal(internal_root, manifest_key)
        warnings += found
    chosen, more = select_targets(loaded.config.entries, internal, groups=groups)
    warnings += more
    snapshot = snapshot_of_config(
        {n: e for n, e, kind in chosen if kind == "external"},
        internal={n: e for n, e, kind in chosen if kind == "internal"},
    )
    if probe and chosen:
        from mcpctl.auth.secrets import keyring_source
        from mcpctl.cli.common import require_trusted, run_async

        require_trusted(loaded, [n for n, _, kind in chosen if kind == "external"])
        from mcpctl.probe.catalog import catalog_all
        from mcpctl.snapshot.probing import add_probes

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
        for found in catalogs.values():
            warnings += [f"{found.name}: {w}" for w in found.warnings]
            if found.error is not None:
                hint = f" ({found.hint})" if found.hint else ""
                warnings.append(
                    f"{found.name}: probe failed: {found.error}: {found.message}{hint}; "
                    "what it offers is not recorded"
                )
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
        for name, pin in sorted(resolution.pins.items()):
            if not pin.resolved:
                warnings.append(f"{name}: package {pin.name} unresolved: {pin.reason}")
            elif not pin.pinned:
                warnings.append(
                    f"{name}: {pin.name} is not pinned in the config; recorded {pin.version}"
                    " as it resolves now"
                )
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
        from mcpctl.snapshot.packages import diff_packages

        new.packages = resolution.pins
        warnings += resolution.warnings
        recorded = old.packages if old is not None else None
        if old is not None and recorded is None:
            warnings.append(
                f"packages were not compared: {source} records none; save it with --packages"
            )
        package_changes = diff_packages(recorded or {}, resolution.pins)
        for item in package_changes:
            if item.kind == "unpinned":
                warnings.append(f"{item.server}: {item.message}")
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
        _sarif(changes, loaded, source, old is not None, notes) if fmt is DiffFormat.sarif else {}
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
        result, lambda _: Lines(diff_lines(changes) + _package_lines(package_changes))
    )
    if old is not None:
        output.info(_summary(changes, old.timestamp, moved))
    return code


def _package_lines(changes: list[PackageChange]) -> list[str]:
    """``! NAME: moved 1.2.0 → 1.3.0 (unpinned)``, ``? NAME: unresolved: ...`` (an unpinned
    spec is a warning, not a line)."""
    return [
        f"{'!' if c.fails else '?'} {c.server}: package {c.message}"
        for c in changes
        if c.kind != "unpinned"
    ]


def _group_needs_file(flag: str) -> UsageError:
    """The error of a group's snapshot about to be written over the last-known one."""
    return UsageError(
        "--group records only the group's servers: the last-known snapshot keeps them all",
        hint=f"write the group's snapshot to a file of its own: {flag}",
    )


def _sarif(
    changes: SnapshotDiff, loaded: LoadResult, against: Path, read: bool, notes: list[str]
) -> dict[str, Any]:
    """The SARIF log, with positions in the config and in the earlier snapshot (``read``:
    there is one; read before --save replaces it)."""
    from mcpctl.snapshot.sarif import (
        artifact_uri,
        config_positions,
        diff_sarif,
        snapshot_positions,
    )

    config_uri = artifact_uri(loaded.path) if loaded.exists else None
    raw = loaded.document.raw if loaded.document is not None else b""
    against_text = ""
    if read:
        from mcpctl.config.safefile import read_file
        from mcpctl.errors import McpctlError

        try:
            against_text = (read_file(against) or b"").decode("utf-8-sig")
        except (McpctlError, UnicodeDecodeError):
            against_text = ""  # read a moment ago: without positions then
    return diff_sarif(
        changes,
        config_uri=config_uri,
        config_positions=config_positions(raw.decode("utf-8-sig", "replace")) if raw else {},
        against_uri=artifact_uri(against) if read else None,
        against_positions=snapshot_positions(against_text) if against_text else {},
        notes=notes,
    )


# --- the human view -------------------------------------------------------------------------


def _summary(changes: SnapshotDiff, since: str, packages: Sequence[PackageChange] = ()) -> str:
    if changes.empty and not packages:
        return f"no changes since {since or 'the earlier snapshot'}"
    parts = [
        f"{len(group)} {what}"
        for group, what in (
            (changes.added, "added"), (changes.removed, "removed"), (changes.changed, "changed"),
        )
        if group
    ]  # fmt: skip
    if packages:
        parts.append(f"{plural(len(packages), 'package')} moved or republished")
    text = f"changes since {since or 'the earlier snapshot'}: {', '.join(parts)}"
    moved = changes.definitions_changed
    if moved:
        names = ", ".join(c.name for c in moved)
        text += f"; definitions changed in place on {names}: review them before use"
    return text
