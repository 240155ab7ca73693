"""``mcpctl health --as CLIENT [FILE]``: probe a client's servers as that client starts them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpctl.cli import output
from mcpctl.cli.output import STATE, Table
from mcpctl.errors import ExitCode, ProbeFailed, UsageError
from mcpctl.results import Result
from mcpctl.text import plural

if TYPE_CHECKING:
    from mcpctl.config.model import ProtocolMode
    from mcpctl.probe.eras import EraMemory
    from mcpctl.render.clienthealth import AsClientHealth, AsClientRow

__all__ = ["health_as"]


def health_as(
    target: str,
    args: list[str],
    *,
    scope: str,
    timeout: float | None,
    concurrency: int | None,
    speaking: tuple[ProtocolMode | None, EraMemory],
    internal_root: Path | None,
    manifest_key: str,
    warnings: list[str],
    groups: list[str] | None = None,
) -> int:
    """Probe ``target``'s file (``args``: at most one FILE) beside plain ``health``; with
    ``groups``, only the servers of those groups of mcpctl's config.

    Raises:
        UsageError: not a client with a reader, more than one FILE, no such file.
        GroupNotFoundError: no server is in one of ``groups``.
        UntrustedConfigError: the client's file, or mcpctl's config, has servers waiting for
            approval.
    """
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.cli.asyncrun import run_async
    from mcpctl.cli.common import paths, targets
    from mcpctl.cli.progress import progress
    from mcpctl.config.trust import TrustStore
    from mcpctl.render.clientfile import client_target, read_client
    from mcpctl.render.clienthealth import health_as_client
    from mcpctl.render.clienttrust import require_client_trusted

    client_target(target)
    if len(args) > 1:
        raise UsageError(
            f"--as takes one FILE (the {target} config), not {len(args)} arguments",
            hint=f"mcpctl health --as {target} FILE",
        )
    file = Path(args[0]) if args else None
    if file is not None and not file.exists():
        raise UsageError(
            f"there is no file {file}",
            hint="with --as, the argument is the client's config file; every server in it "
            "is probed",
        )
    if file is not None and not file.is_file():  # a FIFO or a device would never end
        raise UsageError(f"{file} is not a regular file: give the client's config file")
    view = read_client(target, file)
    chosen, more = targets([], scope, internal_root, manifest_key, groups or ())  # type: ignore[arg-type]
    if groups:  # a group is mcpctl's: the client's servers of those names
        members = {name for name, _, _ in chosen}
        view.entries = {n: item for n, item in view.entries.items() if n in members}
    # A project's client file is someone else's words: nothing of it runs unless approved
    # (only the servers that would run: those of the groups asked for).
    require_client_trusted(view, TrustStore.from_paths(paths()))
    warnings += more
    # Plain health's probes come on top of the client's ones: no total to count down to.
    with progress(f"Probing {plural(len(view.entries), 'server')} as {target}") as tick:
        report: AsClientHealth = run_async(
            lambda: health_as_client(
                view, chosen, secrets=keyring_source(), concurrency=concurrency,
                timeout=timeout, protocol=speaking[0], eras=speaking[1],
                on_result=lambda _: tick.advance(),
            ),
            what="", spinner=False,
        )  # fmt: skip
    warnings += [f"{view.file}: {w}" for w in view.warnings]
    warnings += [w for w in report.warnings if w not in view.warnings]  # Claude Code's settings
    for row in report.rows:
        for r in (row.result, row.mcpctl_result):
            if r is not None:
                warnings += [
                    f"{r.name}: {w}" for w in r.warnings if f"{r.name}: {w}" not in warnings
                ]
    errors = [
        ProbeFailed(r.name, r.error.code, r.error.message, hint=r.error.hint).to_dict()
        for r in (row.result for row in report.rows)
        if r is not None and r.error is not None
    ]
    exit_code = ExitCode.OK if report.healthy else ExitCode.FAILED
    data = _data(report)
    result = Result("health", data, warnings, errors, exit_code)
    if STATE.json:
        return output.emit(result)
    output.emit(Result("health", data, warnings), lambda _: _table(report))
    _notes(report)
    return exit_code


def _data(report: AsClientHealth) -> dict[str, Any]:
    probed = [row for row in report.rows if row.result is not None]
    healthy = sum(row.verdict == "healthy" for row in probed)
    mcps = []
    for row in report.rows:
        item: dict[str, Any] = (
            row.result.to_dict()
            if row.result is not None
            else {"name": row.name, "available": False, "healthy": False, "error": None}
        )
        item["as"] = row.as_dict(report.target, report.file)
        ours = row.mcpctl_result
        item["as"]["mcpctl_error"] = ours.error.to_dict() if ours and ours.error else None
        mcps.append(item)
    return {
        "as": {"target": report.target, "file": str(report.file)},
        "summary": {
            "total": len(probed), "healthy": healthy, "unhealthy": len(probed) - healthy,
            "differ": sum(row.differs for row in report.rows),
            "pending_approval": sum(row.verdict == "pending_approval" for row in report.rows),
            "only_in_mcpctl": len(report.only_in_mcpctl),
            "only_in_client": len(report.only_in_client),
        },
        "mcps": mcps,
        "only_in_mcpctl": report.only_in_mcpctl,
        "only_in_client": report.only_in_client,
    }  # fmt: skip


def _table(report: AsClientHealth) -> Table:
    from mcpctl.cli.common import protocol_cell

    wide = STATE.verbose > 0
    rows = []
    for row in report.rows:
        r = row.result
        cells = [row.name, r.type if r else "-", r.transport if r else "-", row.verdict,
                 str(r.tool_count) if r and r.tool_count is not None else "-",
                 f"{r.latency_ms.get('total', 0):.0f} ms" if r else "-",
                 _mcpctl_cell(row),
                 f"{r.error.code}: {r.error.message}" if r and r.error else ""]  # fmt: skip
        if wide:
            cells.insert(3, protocol_cell(r.era) if r else "-")
        rows.append(cells)
    columns = ["NAME", "TYPE", "TRANSPORT", "STATUS", "TOOLS", "LATENCY", "MCPCTL", "ERROR"]
    if wide:
        columns.insert(3, "PROTOCOL")
    return Table(columns, rows, f"no servers in {report.file}")


def _mcpctl_cell(row: AsClientRow) -> str:
    """Plain ``health``'s verdict, marked when it differs from the client's."""
    if row.mcpctl is None:
        return "-"
    return f"{row.mcpctl} (differs)" if row.differs else row.mcpctl


def _notes(report: AsClientHealth) -> None:
    for row in report.rows:
        if row.reason:
            output.warn(f"{row.name}: {row.reason}")
        r = row.result
        if r is not None and r.error is not None and r.error.hint and not row.differs:
            output.warn(f"{r.name}: {r.error.hint}")
        for line in r.stderr[-5:] if r is not None else ():
            output.warn(f"{r.name} stderr: {line}")  # type: ignore[union-attr]
    target = report.target
    if report.only_in_mcpctl:
        names = ", ".join(report.only_in_mcpctl)
        output.info(f"only in mcpctl's config, not in {target}'s (not probed): {names}")
    if report.only_in_client:
        output.info(
            f"only in {target}'s config, not in mcpctl's: {', '.join(report.only_in_client)}"
        )
    probed = [row for row in report.rows if row.result is not None]
    healthy = sum(row.verdict == "healthy" for row in probed)
    differ = sum(row.differs for row in report.rows)
    waiting = sum(row.verdict == "pending_approval" for row in report.rows)
    line = (
        f"{plural(len(probed), 'server')} as {target}: {healthy} healthy, "
        f"{len(probed) - healthy} unhealthy; {differ} differ from mcpctl health"
    )
    if waiting:
        line += f"; {waiting} pending approval"
    output.info(line)
