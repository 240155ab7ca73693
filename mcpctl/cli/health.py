"""Probing servers: health (and --watch)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.auth.secrets import keyring_source
from mcpctl.cli import output
from mcpctl.cli.asyncrun import run_async
from mcpctl.cli.common import (
    GROUP,
    INTERNAL_ROOT,
    MANIFEST_KEY,
    PROTOCOL,
    Protocol,
    era_options,
    missing_config,
    protocol_cell,
    targets,
)
from mcpctl.cli.completion import remember_probed
from mcpctl.cli.flagvalues import duration_option
from mcpctl.cli.output import STATE, Table
from mcpctl.cli.progress import progress
from mcpctl.errors import ExitCode, ProbeFailed
from mcpctl.results import Result
from mcpctl.text import plural, stderr_cause

if TYPE_CHECKING:
    from mcpctl.config.model import ProtocolMode, ServerEntry
    from mcpctl.probe.eras import EraMemory
    from mcpctl.probe.health import ProbeResult

app = typer.Typer()


class Scope(StrEnum):
    """Which servers."""

    all = "all"
    internal = "internal"
    external = "external"


#: The states ``--fail-on`` accepts (those of mcpctl.probe.health.FAILING), for completion.
FAIL_ON_CHOICES = ["degraded", "needs_auth", "unhealthy", "unavailable"]
#: How many reasons the table shows without -v.
REASONS_SHOWN = 1


def status(r: ProbeResult) -> str:
    """``healthy``, ``degraded``, ``needs_auth``, ``unhealthy`` (it answered, then failed) or
    ``unavailable``: see :class:`mcpctl.probe.health.HealthStatus`."""
    return r.status.value


def _counts(results: list[ProbeResult]) -> dict[str, int]:
    from mcpctl.probe.health import HealthStatus

    return {s.value: sum(r.status is s for r in results) for s in HealthStatus}


def _health_data(
    results: list[ProbeResult], scope: Scope, fail_on: list[str], slow: float
) -> dict[str, Any]:
    counts = _counts(results)
    return {
        "scope": scope.value,
        "summary": {
            "total": len(results),
            "healthy": counts["healthy"],
            "unhealthy": len(results) - counts["healthy"],
            "by_status": counts,
        },
        "fail_on": fail_on,
        "slow_ms": round(slow * 1000),
        "mcps": [r.to_dict() for r in results],
    }


@app.command("health")
def health(
    names: list[str] | None = typer.Argument(
        None, metavar="[NAME]...", help="Servers (default: all enabled); with --as: the FILE."
    ),
    scope: Scope = typer.Option(Scope.all, "--scope", help="all, internal or external."),
    timeout: str | None = typer.Option(
        None,
        "--timeout",
        metavar="DURATION",
        help="Per-server timeout: 10s, 500ms, 2m; a bare number is seconds (default: each "
        "entry's).",
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        metavar="N",
        help="Servers probed at once (default: CPUs+1 spawned, 4 per CPU remote); a spawned "
        "server counts only while it starts, not while it waits.",
    ),
    watch: bool = typer.Option(
        False,
        "--watch",
        help="Re-probe periodically: a live table on a terminal, else one line per change.",
    ),
    interval: str = typer.Option(
        "60",
        "--interval",
        metavar="DURATION",
        help="Time between rounds with --watch: 30s, 5m; a bare number is seconds (60s).",
    ),
    slow: str = typer.Option(
        "2s",
        "--slow",
        metavar="DURATION",
        help="A server whose requests (after the handshake) take longer is degraded: 500ms, "
        "2s; a bare number is seconds.",
    ),
    fail_on: list[str] | None = typer.Option(
        None,
        "--fail-on",
        metavar="STATES",
        help="Exit 1 only for these states: degraded, needs_auth, unhealthy (includes "
        "unavailable), unavailable; comma-separated or repeated (default: all but healthy).",
    ),
    group: list[str] = GROUP,
    protocol: Protocol | None = PROTOCOL,
    internal_root: Path | None = INTERNAL_ROOT,
    manifest_key: str = MANIFEST_KEY,
    as_client: str | None = typer.Option(
        None,
        "--as",
        metavar="CLIENT",
        help="Probe the servers of CLIENT's config file (the one argument: FILE, default: the "
        "client's own) as that client starts them (its environment, its approvals), beside "
        "plain health; --group keeps the servers of those groups.",
    ),
) -> int:
    """Probe servers: spawn or connect, settle the protocol era, list tools, ping.

    Each server is spoken to in its own era: the stateless revision (2026-07-28) when it
    answers server/discover, else the initialize handshake; the era is remembered per server,
    so a server that ignores discovery costs its wait once. -v shows the protocol version
    spoken; --protocol pins an era.

    Each server is healthy, degraded (it answered, but a list failed, mcpctl had to repair
    its tool list, or a request took longer than --slow), needs_auth (it asks for a sign-in:
    mcpctl auth NAME), unhealthy (it answered, then failed) or unavailable (not reached).

    Every enabled server is probed at once (bounded), each within its own timeout. Exit 0
    when all are healthy, 1 when any is degraded, needs_auth, unhealthy or unavailable;
    --fail-on narrows that (--fail-on unhealthy: only unhealthy or unavailable servers fail).
    SIGINT, SIGTERM or SIGHUP stop every server and exit 128 + the signal's number. With
    --watch, redraws one table in place on a terminal (state,
    latency, a sparkline of the last probes, time since the last change); piped or with --json,
    prints one line (or JSON object) per change. It runs until Ctrl-C (or SIGTERM, SIGHUP:
    exit 0).

    Examples:

      mcpctl health

      mcpctl health github time --timeout 10s --json

      mcpctl health --slow 500ms --fail-on unhealthy,needs_auth

      mcpctl health --watch --interval 30s --json >> health.jsonl

      mcpctl health legacy-server --protocol legacy -v

      mcpctl health --as cursor

      mcpctl health --as claude-code .mcp.json --group work

      mcpctl health --group work
    """
    from mcpctl.probe.health import HealthStatus, failing_states, probe_all

    warnings: list[str] = []
    seconds = duration_option(timeout, warnings)
    every = duration_option(interval, warnings, flag="--interval")
    limit = duration_option(slow, warnings, flag="--slow")
    assert limit is not None  # --slow has a default
    failing = failing_states(fail_on or [])
    if as_client is not None:
        return _health_as(as_client, names or [], watch, scope, seconds, concurrency, protocol,
                          internal_root, manifest_key, warnings, group)  # fmt: skip
    chosen, more = targets(names or [], scope.value, internal_root, manifest_key, group)
    warnings += more + missing_config()
    mode, eras = era_options(protocol)
    if watch:
        return _watch(chosen, warnings, every or 60.0, seconds, concurrency, (mode, eras), limit)
    with progress(f"Probing {plural(len(chosen), 'server')}", total=len(chosen)) as tick:
        results: list[ProbeResult] = run_async(
            lambda: probe_all(
                chosen,
                concurrency=concurrency,
                timeout=seconds,
                secrets=keyring_source(),
                on_result=lambda _: tick.advance(),
                protocol=mode,
                eras=eras,
                slow=limit,
            ),
            what="",
            spinner=False,
        )
    remember_probed(results, chosen)  # for `mcpctl call NAME <TAB>` and `tools --cached`
    for r in results:
        warnings += [f"{r.name}: {w}" for w in r.warnings]
    failed = [r for r in results if r.status in failing]
    # The envelope's errors are those that fail the run; a tolerated one stays in its mcp.
    errors = [
        ProbeFailed(r.name, r.error.code, r.error.message, hint=r.error.hint).to_dict()
        for r in failed
        if r.error is not None
    ]
    exit_code = ExitCode.FAILED if failed else ExitCode.OK
    names_on = [s.value for s in HealthStatus if s in failing]
    data = _health_data(results, scope, names_on, limit)
    result = Result("health", data, warnings, errors, exit_code)
    if STATE.json:
        return output.emit(result)
    # The table first; then hints, stderr tails and the summary on stderr.
    output.emit(Result("health", result.data, warnings), lambda _: _health_table(results))
    _health_notes(results)
    return exit_code


def _health_as(
    client: str,
    args: list[str],
    watch: bool,
    scope: Scope,
    seconds: float | None,
    concurrency: int | None,
    protocol: Protocol | None,
    internal_root: Path | None,
    manifest_key: str,
    warnings: list[str],
    groups: list[str],
) -> int:
    """``health --as CLIENT [FILE]`` (see :mod:`mcpctl.cli.health_as`)."""
    from mcpctl.cli.health_as import health_as
    from mcpctl.errors import UsageError

    if watch:
        raise UsageError("--as probes once: drop --watch")
    return health_as(
        client, args, scope=scope.value, timeout=seconds, concurrency=concurrency,
        speaking=era_options(protocol), internal_root=internal_root,
        manifest_key=manifest_key, warnings=warnings, groups=groups,
    )  # fmt: skip


def reason_cell(r: ProbeResult, wide: bool) -> str:
    """Why a server is not healthy: every reason with -v, else the first and how many more."""
    reasons = r.reasons
    if wide or len(reasons) <= REASONS_SHOWN:
        return "; ".join(reasons)
    return f"{'; '.join(reasons[:REASONS_SHOWN])} (+{len(reasons) - REASONS_SHOWN} more, -v)"


def _health_table(results: list[ProbeResult]) -> Table:
    from mcpctl.cli.health_live import STYLES

    wide = STATE.verbose > 0
    rows = []
    for r in results:
        latency = f"{r.latency_ms.get('total', 0):.0f} ms"
        tools = str(r.tool_count) if r.tool_count is not None else "-"
        row = [r.name, r.type, r.transport, status(r), tools, latency, reason_cell(r, wide)]
        if wide:
            row.insert(3, protocol_cell(r.era))
        rows.append(row)
    columns = ["NAME", "TYPE", "TRANSPORT", "STATUS", "TOOLS", "LATENCY", "REASON"]
    if wide:
        columns.insert(3, "PROTOCOL")
    return Table(columns, rows, "no servers to probe", styles={columns.index("STATUS"): STYLES})


def _health_notes(results: list[ProbeResult]) -> None:
    for r in results:
        if r.error and r.error.hint:
            output.warn(f"{r.name}: {r.error.hint}")
        for line in stderr_cause(r.stderr):  # what says why, as doctor and errors pick it
            output.warn(f"{r.name} stderr: {line}")
    if results:
        counts = _counts(results)
        noun = "server" if len(results) == 1 else "servers"
        rest = "".join(f", {n} {state}" for state, n in counts.items() if n and state != "healthy")
        output.info(f"{len(results)} {noun}: {counts['healthy']} healthy{rest}")


def _watch(
    chosen: list[tuple[str, ServerEntry, Any]],
    warnings: list[str],
    interval: float,
    timeout: float | None,
    concurrency: int | None,
    speaking: tuple[ProtocolMode | None, EraMemory],
    slow: float,
) -> int:
    import time
    from datetime import datetime

    import anyio

    from mcpctl.cli.health_live import Board
    from mcpctl.errors import Interrupted
    from mcpctl.probe.health import probe_all
    from mcpctl.reaper import reap_orphans

    for w in warnings:
        output.warn(w)
    # On a terminal, one table redrawn in place; piped or --json, one line per change.
    board = Board([name for name, _, _ in chosen], interval) if output.live_wanted() else None

    def emit_line(event: dict[str, Any]) -> None:
        if STATE.json:
            output.print_json_line(event)
            return
        reasons = event.get("reasons") or []
        reason = f" ({reasons[0]})" if reasons else ""
        was = event["previous"] or "new"
        output.write_line(f"{event['time']} {event['name']} {was} -> {event['status']}{reason}")

    async def loop() -> None:
        last: dict[str, str] = {}
        while True:
            if board is not None:
                board.probing()
            results = await probe_all(
                chosen, concurrency=concurrency, timeout=timeout, secrets=keyring_source(),
                protocol=speaking[0], eras=speaking[1], slow=slow,
            )  # fmt: skip
            reap_orphans()  # what the round's servers left behind, before the next one
            now = datetime.now().astimezone().isoformat(timespec="seconds")
            for r in results:
                state = status(r)
                if board is not None:
                    latency = r.latency_ms.get("total")
                    board.record(r.name, state, latency, reason_cell(r, True), time.monotonic())
                elif last.get(r.name) != state:
                    emit_line({
                        "time": now, "name": r.name, "status": state,
                        "previous": last.get(r.name), "healthy": r.healthy,
                        "error": r.error.to_dict() if r.error else None,
                        "degraded": r.degraded, "reasons": r.reasons,
                    })  # fmt: skip
                last[r.name] = state
            if board is not None:
                board.waiting(time.monotonic())
            await anyio.sleep(interval)

    try:
        if board is None:
            run_async(loop, "Watching…", spinner=False)
        else:
            with output.live(board):
                run_async(loop, "Watching…", spinner=False)
    except Interrupted:
        return 0  # a signal is how a watch ends: its servers are stopped by now
    return 0
