"""The one renderer: results become a table, text or the JSON envelope.

Rules: data on stdout, diagnostics on stderr; rich output only
when stdout is a terminal (rich is imported only then); ``--json`` prints exactly one
JSON document; ``-q`` silences confirmations and warnings, never errors.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from typer.core import TyperGroup

from mcpctl.errors import McpctlError
from mcpctl.results import Result

__all__ = [
    "STATE",
    "CommandGroup",
    "Detail",
    "Lines",
    "State",
    "Table",
    "emit",
    "error",
    "info",
    "warn",
]


class State:
    """Global options of one invocation (set before or after the command name)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Back to defaults (the CLI may run several times in one process, as in tests)."""
        self.json = False
        self.quiet = False
        self.verbose = 0
        self.config: str | None = None
        self.command = "mcpctl"
        self.argv: list[str] = []


STATE = State()


class CommandGroup(TyperGroup):
    """Records which command runs (``registry add``), so errors can name it in the envelope."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None and cmd.name:
            parent = ctx.command_path.partition(" ")[2]
            STATE.command = f"{parent} {cmd.name}" if parent else cmd.name
        return name, cmd, rest


class Table(NamedTuple):
    """Rows for a table; piped output is tab-separated without a header (like ``gh``)."""

    columns: Sequence[str]
    rows: Sequence[Sequence[str]]
    empty: str = "nothing to show"
    title: str | None = None


class Detail(NamedTuple):
    """``key: value`` pairs for one object."""

    pairs: Sequence[tuple[str, str]]
    title: str | None = None


class Lines(NamedTuple):
    """Plain lines of text for stdout."""

    lines: Sequence[str] = ()


Human = Table | Detail | Lines | None


def stdout_is_tty() -> bool:
    """Whether stdout is an interactive terminal (and colour is wanted)."""
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _stderr_line(prefix: str, style: str, text: str) -> None:
    if sys.stderr.isatty() and os.environ.get("TERM") != "dumb":
        from rich.markup import escape

        _stderr_console().print(f"[{style}]{prefix}[/{style}] {escape(text)}")
    else:
        print(f"{prefix} {text}", file=sys.stderr)


def info(message: str) -> None:
    """A confirmation for humans, on stderr (silenced by ``-q`` and ``--json``)."""
    if STATE.quiet or STATE.json:
        return
    print(message, file=sys.stderr)


def debug(message: str) -> None:
    """Shown with ``-v``."""
    if STATE.verbose:
        print(f"debug: {message}", file=sys.stderr)


def warn(message: str) -> None:
    """A warning on stderr (silenced by ``-q``; in ``--json`` it goes in the envelope)."""
    if STATE.quiet or STATE.json:
        return
    _stderr_line("warning:", "yellow", message)


def error(err: McpctlError | str, hint: str | None = None) -> None:
    """An error on stderr: message, then the hint."""
    message = err.message if isinstance(err, McpctlError) else err
    hint = err.hint if isinstance(err, McpctlError) else hint
    _stderr_line("error:", "bold red", message)
    for line in getattr(err, "details", ()):
        _stderr_line("note:", "dim", line)
    if hint:
        _stderr_line("hint:", "cyan", hint)


def print_json(document: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _plain(human: Human) -> None:
    out = sys.stdout
    if isinstance(human, Table):
        for row in human.rows:
            out.write("\t".join(cell.replace("\t", " ").replace("\n", " ") for cell in row) + "\n")
    elif isinstance(human, Detail):
        width = max((len(k) for k, _ in human.pairs), default=0)
        for key, value in human.pairs:
            out.write(f"{key + ':':<{width + 1}} {value}\n")
    elif isinstance(human, Lines):
        for line in human.lines:
            out.write(line + "\n")


def _rich(human: Human) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False)
    if isinstance(human, Table):
        if not human.rows:
            _stderr_console().print(f"[dim]{escape(human.empty)}[/dim]")
            return
        from rich.table import Table as RichTable

        table = RichTable(title=human.title, box=None, header_style="bold", pad_edge=False)
        for column in human.columns:
            table.add_column(column, overflow="fold")
        for row in human.rows:
            table.add_row(*(escape(cell) for cell in row))
        console.print(table)
    elif isinstance(human, Detail):
        if human.title:
            console.print(f"[bold]{escape(human.title)}[/bold]")
        width = max((len(k) for k, _ in human.pairs), default=0)
        for key, value in human.pairs:
            console.print(f"[dim]{escape(key + ':'):<{width + 1}}[/dim] {escape(value)}")
    elif isinstance(human, Lines):
        for line in human.lines:
            console.print(escape(line))


def emit(result: Result, human: Callable[[Result], Human] | None = None) -> int:
    """Print ``result`` as JSON or for humans; returns the exit code."""
    STATE.command = result.command
    if STATE.json:
        print_json(result.envelope())
        return result.exit_code
    for warning in result.warnings:
        warn(warning)
    rendered = human(result) if human is not None else None
    if rendered is not None:
        if stdout_is_tty():
            _rich(rendered)
        else:
            _plain(rendered)
    for err in result.errors:
        error(err.get("message") or "", err.get("hint"))
    return result.exit_code
