"""Checking the setup: doctor."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from mcpctl.cli import output
from mcpctl.cli.output import STATE, Lines
from mcpctl.errors import ExitCode
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.doctor.findings import DoctorReport

app = typer.Typer()

MARKS = {"ok": "✓", "info": "·", "warning": "!", "error": "✗"}
WORDS = {"ok": "ok", "info": "info", "warning": "warn", "error": "FAIL"}


@app.command("doctor")
def doctor() -> int:
    """Check what mcpctl and the servers need, without starting any server.

    Reports the config file in use (and how it was chosen) and whether it validates; where
    each ${VAR} placeholder of the enabled servers resolves from (environment, keyring,
    default -- never its value); the programs the stdio servers run on (npx/node, uvx/uv,
    docker, python), with their versions; the keyring; the OAuth sign-ins; the age of each
    registry's cache; and the last snapshot. The only processes started are the runtimes'
    --version. Every finding that is not ok says how to fix it. Exit 1 when something is
    broken (an error), else 0.

    Examples:

      mcpctl doctor

      mcpctl doctor --json | jq -r '.data.findings[] | select(.severity == "error") | .fix'

      mcpctl --config ci/external-mcps.json doctor
    """
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
