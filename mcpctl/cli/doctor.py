"""Checking the setup: doctor."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from mcpctl.cli import output
from mcpctl.cli.common import PROTOCOL, Protocol
from mcpctl.cli.output import STATE, Lines
from mcpctl.errors import ExitCode
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.doctor.findings import DoctorReport
    from mcpctl.doctor.server import ServerDiagnosis

app = typer.Typer()

MARKS = {"ok": "✓", "info": "·", "warning": "!", "error": "✗"}
WORDS = {"ok": "ok", "info": "info", "warning": "warn", "error": "FAIL"}
#: A step's status, as a finding's severity is shown.
STEP_SEVERITY = {"passed": "ok", "failed": "error", "skipped": "skip"}


@app.command("doctor")
def doctor(
    name: str | None = typer.Argument(
        None,
        metavar="[NAME]",
        help="Diagnose this one server layer by layer, starting it (default: check the whole "
        "setup, starting no server).",
    ),
    timeout: str | None = typer.Option(
        None,
        "--timeout",
        metavar="DURATION",
        help="With NAME: the time each network step and the probe may take: 10s, 500ms, 2m; "
        "a bare number is seconds (default: the entry's).",
    ),
    protocol: Protocol | None = PROTOCOL,
) -> int:
    """Check what mcpctl and the servers need, without starting any server; or, with NAME,
    diagnose one server layer by layer.

    Reports the config file in use (and how it was chosen) and whether it validates; where
    each ${VAR} placeholder of the enabled servers resolves from (environment, keyring,
    default -- never its value); the programs the stdio servers run on (npx/node, uvx/uv,
    docker, python), with their versions; the keyring; the OAuth sign-ins; the age of each
    registry's cache; and the last snapshot. The only processes started are the runtimes'
    --version. Every finding that is not ok says how to fix it. Exit 1 when something is
    broken (an error), else 0.

    With NAME, the server's layers are checked in order, each with its time, what was seen
    and, when it fails, how to fix it; the first that fails stops the run and the next one
    it would check is named. A stdio server: config, placeholders (where each ${VAR} comes
    from, never its value), command (installed; an npx/uvx/docker package or image cached),
    spawn, protocol (the era and version spoken), lists. A remote one: config, placeholders,
    resolve, connect, tls (https), http, auth (OAuth metadata and the sign-in), protocol,
    lists. Exit 0 when every step passed, 1 when one failed.

    Examples:

      mcpctl doctor

      mcpctl doctor --json | jq -r '.data.findings[] | select(.severity == "error") | .fix'

      mcpctl --config ci/external-mcps.json doctor

      mcpctl doctor github

      mcpctl doctor docs --json | jq -r '.data.steps[] | select(.status == "failed") | .fix'
    """
    if name is not None:
        return doctor_server(name, timeout, protocol)
    if timeout is not None or protocol is not None:
        from mcpctl.cli.flagvalues import duration_option
        from mcpctl.errors import UsageError

        duration_option(timeout, [])  # a bad duration is named as everywhere else
        flag = "--timeout" if timeout is not None else "--protocol"
        raise UsageError(f"{flag} applies to one server: mcpctl doctor NAME {flag} ...")
    from mcpctl.doctor.run import run_doctor

    report = run_doctor(STATE.config)
    exit_code = ExitCode.OK if report.ok else ExitCode.FAILED
    errors: list[dict[str, object]] = [
        {"code": f.code, "message": f.message, "hint": f.fix}
        for f in report.findings
        if f.severity == "error"
    ]
    if STATE.json:
        return output.emit(Result("doctor", report.to_dict(), errors=errors, exit_code=exit_code))
    return output.emit(
        Result("doctor", report.to_dict(), exit_code=exit_code), lambda _: render(report)
    )


def _marks() -> tuple[dict[str, str], int | None]:
    """Symbols on a UTF-8 terminal, with the terminal's width to wrap at; words and one line
    per finding wherever the output is piped (it is read back, grepped)."""
    if not output.stdout_is_tty():
        return WORDS, None
    import shutil

    width = shutil.get_terminal_size().columns
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    return (MARKS if encoding == "utf8" else WORDS), width


def _wrapped(first: str, rest: str, text: str, width: int | None) -> list[str]:
    if width is None:
        return [first + text]
    import textwrap

    return textwrap.wrap(
        text, width=max(40, width - 1), initial_indent=first, subsequent_indent=rest,
        break_on_hyphens=False, break_long_words=False,
    )  # fmt: skip


def render(report: DoctorReport) -> Lines:
    """The findings grouped by section, a mark each (and how to fix it), then a summary."""
    from mcpctl.doctor.findings import SECTIONS

    marks, width = _marks()
    pad = " " * max(len(m) for m in marks.values())
    lines: list[str] = []
    for section, title in SECTIONS.items():
        found = report.section(section)
        if not found:
            continue
        lines.append(title)
        for finding in found:
            mark = f"  {marks[finding.severity]:<{len(pad)}} "
            lines += _wrapped(mark, f"  {pad} ", finding.message, width)
            if finding.fix and finding.severity != "ok":
                lines += _wrapped(f"  {pad}   fix: ", f"  {pad}        ", finding.fix, width)
        lines.append("")
    lines.append(summary(report))
    return Lines(lines)


def summary(report: DoctorReport) -> str:
    """``12 ok, 2 info, 1 warning, 1 error: something is broken``."""
    counts = report.counts
    parts = [f"{counts['ok']} ok", f"{counts['info']} info"]
    parts.append(f"{counts['warning']} warning{'' if counts['warning'] == 1 else 's'}")
    parts.append(f"{counts['error']} error{'' if counts['error'] == 1 else 's'}")
    if not report.ok:
        verdict = "something is broken; fix the errors above"
    elif counts["warning"]:
        verdict = "nothing is broken; the warnings are worth a look"
    else:
        verdict = "everything looks fine"
    return f"{', '.join(parts)}: {verdict}"


# --- doctor NAME -------------------------------------------------------------------------


def doctor_server(name: str, timeout: str | None, protocol: Protocol | None) -> int:
    """``mcpctl doctor NAME``: one server, layer by layer."""
    from mcpctl.cli.asyncrun import run_async
    from mcpctl.cli.common import era_options
    from mcpctl.cli.flagvalues import duration_option
    from mcpctl.doctor.server import diagnose_server_async

    warnings: list[str] = []
    seconds = duration_option(timeout, warnings)
    mode, eras = era_options(protocol)
    diagnosis: ServerDiagnosis = run_async(
        lambda: diagnose_server_async(
            name, STATE.config, timeout=seconds, protocol=mode, eras=eras
        ),
        f"Diagnosing {name}",
    )
    failed = diagnosis.failed
    exit_code = ExitCode.OK if failed is None else ExitCode.FAILED
    errors: list[dict[str, object]] = []
    if failed is not None:
        errors.append({"code": f"{failed.id}_failed", "message": f"{name}: {failed.detail}",
                       "hint": failed.fix})  # fmt: skip
    data = diagnosis.to_dict()
    if STATE.json:
        return output.emit(Result("doctor", data, warnings, errors, exit_code))
    return output.emit(
        Result("doctor", data, warnings, exit_code=exit_code), lambda _: render_server(diagnosis)
    )


def render_server(diagnosis: ServerDiagnosis) -> Lines:
    """One line per step (mark, id, time, detail; the fix below a failed one), then what it
    would check next."""
    marks, width = _marks()
    marks = {**marks, "skip": "-" if marks is MARKS else "skip"}
    mark_width = max(len(m) for m in marks.values())
    id_width = max(len(s.id) for s in diagnosis.steps)
    lines = [f"{diagnosis.name} ({diagnosis.transport})"]
    for step in diagnosis.steps:
        mark = marks[STEP_SEVERITY[step.status]]
        took = f"{step.ms:.0f} ms" if step.status != "skipped" else ""
        first = f"  {mark:<{mark_width}} {step.id:<{id_width}} {took:>8}  "
        rest = " " * len(first)
        text = step.detail if step.status != "skipped" else "not checked"
        lines += _wrapped(first, rest, text, width)
        if step.fix and step.status == "failed":
            lines += _wrapped(rest + "fix: ", rest + "     ", step.fix, width)
    lines.append("")
    failed = diagnosis.failed
    if failed is None:
        total = sum(s.ms for s in diagnosis.steps)
        lines.append(f"all {len(diagnosis.steps)} steps passed ({total:.0f} ms)")
    else:
        after = f"; next it would check: {diagnosis.next}" if diagnosis.next else ""
        lines.append(f"{diagnosis.name}: failed at {failed.id}{after}")
    return Lines(lines)
