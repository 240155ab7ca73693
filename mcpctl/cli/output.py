"""The one output path: results become a table, text or the JSON envelope.

Rules: data on stdout, diagnostics on stderr; rich output only when stdout is a terminal
(rich is imported only then); ``--json`` prints exactly one JSON document; ``-q`` silences
confirmations and warnings, never errors.

Everything mcpctl writes -- text, tables, JSON, warnings, errors, debug lines and the logs of
the libraries it uses -- goes through :func:`clean` (or :func:`print_json`): secrets are
replaced by ``****`` (:mod:`mcpctl.config.redaction`) and control characters that could
drive a terminal or disguise text (bidi controls, zero-width characters) are shown escaped
(:mod:`mcpctl.text`; ``\\u001b`` in JSON). Text from registries and servers is data, never
control.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from mcpctl.errors import McpctlError
from mcpctl.results import Result
from mcpctl.text import controls_in, escape_controls

if TYPE_CHECKING:
    import logging

    from mcpctl.config.redaction import Redactor

__all__ = [
    "SHOWN_PROGRESS",
    "STATE",
    "Detail",
    "Lines",
    "State",
    "Table",
    "active_console",
    "clean",
    "configure_logging",
    "emit",
    "error",
    "info",
    "live",
    "live_wanted",
    "print_json",
    "print_json_line",
    "stderr",
    "warn",
    "write_line",
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
        #: Warnings about what the command read (an untrusted config): in every result.
        self.notices: list[str] = []
        #: When the command started (:func:`time.monotonic`): a deadline the user gave runs
        #: from it. The program's own process sets it to the process's start, imports included.
        self.started = time.monotonic()


STATE = State()


# The rich Progress shown now, if any (at most one): :mod:`mcpctl.cli.progress` shows it, and
# what is printed on stderr meanwhile goes through its console (above the bar, not through it).
SHOWN_PROGRESS: list[Any] = []


def active_console() -> Any | None:
    """The console of the progress shown now (print through it), or ``None``."""
    return SHOWN_PROGRESS[-1].console if SHOWN_PROGRESS else None


def reflow(text: str | None) -> str | None:
    """A docstring's prose paragraphs on one line each, for the help screen to wrap; indented
    paragraphs (examples) and lists keep their lines."""
    if not text:
        return text
    import inspect

    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(
        p if any(line.startswith((" ", "\t", "- ", "* ", "\b")) for line in p.splitlines())
        else " ".join(line.strip() for line in p.splitlines())
        for p in paragraphs
    )  # fmt: skip


class Table(NamedTuple):
    """Rows for a table; piped output is tab-separated without a header (like ``gh``).

    ``styles``: for a column (by index), the rich style of a cell by its text (on a terminal).
    """

    columns: Sequence[str]
    rows: Sequence[Sequence[str]]
    empty: str = "nothing to show"
    title: str | None = None
    styles: Mapping[int, Mapping[str, str]] | None = None


class Detail(NamedTuple):
    """``key: value`` pairs for one object."""

    pairs: Sequence[tuple[str, str]]
    title: str | None = None


class Lines(NamedTuple):
    """Plain lines of text for stdout (``keep``: subjects they name, shown unredacted)."""

    lines: Sequence[str] = ()
    keep: Sequence[str] = ()


Human = Table | Detail | Lines | None


def stdout_is_tty() -> bool:
    """Whether stdout is an interactive terminal (and colour is wanted)."""
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def live_wanted() -> bool:
    """Whether a view redrawn in place may take stdout: a terminal, and not ``--json``."""
    return stdout_is_tty() and not STATE.json


@contextmanager
def live(view: Any) -> Iterator[None]:
    """Show ``view`` (a rich renderable, re-rendered on each refresh) on stdout, redrawn in
    place twice a second until the block ends; its last state stays on the screen."""
    from rich.console import Console
    from rich.live import Live

    with Live(view, console=Console(highlight=False), refresh_per_second=2, transient=False):
        yield


def _redactor() -> Redactor:
    from mcpctl.config.redaction import redactor

    return redactor()


def clean(
    text: str,
    redact: Redactor | None = None,
    *,
    one_line: bool = False,
    keep: Sequence[str] = (),
) -> str:
    """``text`` fit to print: secrets replaced, control characters shown escaped.

    ``keep``: the subjects the text names (config paths, key names), left readable.
    """
    text = (redact or _redactor())(text, keep)
    return escape_controls(text, keep_newlines=not one_line)


def _stderr_console() -> Any:
    shown = active_console()  # a progress bar on screen: print above it, not through it
    if shown is not None:
        return shown
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _stderr_line(
    prefix: str,
    style: str,
    text: str,
    redact: Redactor | None = None,
    keep: Sequence[str] = (),
) -> None:
    text = clean(text, redact, keep=keep)
    if sys.stderr.isatty() and os.environ.get("TERM") != "dumb":
        from rich.markup import escape

        _stderr_console().print(f"[{style}]{prefix}[/{style}] {escape(text)}")
    else:
        print(f"{prefix} {text}", file=sys.stderr)


def stderr(text: str) -> None:
    """``text`` (already clean) on stderr as it is, above any progress bar shown."""
    shown = active_console()
    if shown is not None:  # above the progress bar, whole (an address must stay copyable)
        shown.print(text, markup=False, highlight=False, soft_wrap=True)
    else:
        print(text, file=sys.stderr, flush=True)


def info(message: str) -> None:
    """A confirmation for humans, on stderr (silenced by ``-q`` and ``--json``)."""
    if STATE.quiet or STATE.json:
        return
    stderr(clean(message))


def debug(message: str) -> None:
    """Shown with ``-v``."""
    if STATE.verbose:
        stderr(f"debug: {clean(message)}")


def warn(message: str, redact: Redactor | None = None) -> None:
    """A warning on stderr (silenced by ``-q``; in ``--json`` it goes in the envelope)."""
    if STATE.quiet or STATE.json:
        return
    _stderr_line("warning:", "yellow", message, redact)


def error(err: McpctlError | str, hint: str | None = None) -> None:
    """An error on stderr: message, then the hint."""
    message = err.message if isinstance(err, McpctlError) else err
    hint = err.hint if isinstance(err, McpctlError) else hint
    keep = err.subjects if isinstance(err, McpctlError) else ()
    _stderr_line("error:", "bold red", message, keep=keep)
    for line in getattr(err, "details", ()):
        _stderr_line("note:", "dim", line, keep=keep)
    if hint:
        _stderr_line("hint:", "cyan", hint, keep=keep)


def _redacted(value: Any, redact: Redactor, keep: Sequence[str]) -> Any:
    # Strings are redacted one by one: a secret that happens to look like a number or a
    # keyword must not break the document.
    if isinstance(value, str):
        return redact(value, keep)
    if isinstance(value, dict):
        return {redact(str(k), keep): _redacted(v, redact, keep) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(v, redact, keep) for v in value]
    return value


def _json_text(document: Any, *, indent: int | None, keep: Sequence[str] = ()) -> str:
    if indent == 2:
        from mcpctl.jsonenc import encode_indented

        redact = _redactor()
        out: list[str] = []
        encode_indented(document, out, "", lambda text: redact(text, keep))
        text = "".join(out)
    else:
        text = json.dumps(_redacted(document, _redactor(), keep), indent=indent, ensure_ascii=False)
    # json.dumps escapes C0 controls but leaves DEL, C1, bidirectional controls, zero-width
    # characters, line separators and lone surrogates raw; they only occur inside strings,
    # where \\uXXXX is their JSON form.
    return controls_in(text).sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def print_json(document: Any, *, keep: Sequence[str] = ()) -> None:
    """One JSON document on stdout (``keep``: subjects left readable, see :func:`clean`)."""
    sys.stdout.write(_json_text(document, indent=2, keep=keep) + "\n")
    sys.stdout.flush()


def print_json_line(document: Any) -> None:
    """One JSON object on one line of stdout, flushed (streaming commands)."""
    sys.stdout.write(_json_text(document, indent=None) + "\n")
    sys.stdout.flush()


def write_line(text: str) -> None:
    """One line of text on stdout, flushed (streaming commands)."""
    sys.stdout.write(clean(text, one_line=True) + "\n")
    sys.stdout.flush()


class _CleanFormatter:
    """Formats library log records through :func:`clean` (URLs with keys, echoed headers)."""

    def __init__(self, base: logging.Formatter) -> None:
        self.base = base

    def format(self, record: logging.LogRecord) -> str:
        return clean(self.base.format(record))


def configure_logging(*, warnings: bool = False) -> None:
    """Route the logs of the libraries mcpctl uses: shown with ``-v`` (cleaned), else silenced.

    The MCP SDK logs connection failures with tracebacks (its client session under the bare
    name ``client``), and httpx2/httpcore2 log resolved URLs and headers at debug level:
    mcpctl reports failures itself. ``warnings``: without ``-v``, the other libraries'
    warnings and errors still reach stderr, cleaned (a long-running server's only report).
    """
    import logging

    if not STATE.verbose:
        for name in ("mcp", "client", "httpx2", "httpcore2"):
            lib = logging.getLogger(name)
            lib.addHandler(logging.NullHandler())
            lib.propagate = False
        if warnings:
            handler = logging.StreamHandler(sys.stderr)
            formatter = _CleanFormatter(logging.Formatter("warning: %(name)s: %(message)s"))
            handler.setFormatter(formatter)  # type: ignore[arg-type]
            root = logging.getLogger()
            root.handlers = [handler]
            root.setLevel(logging.WARNING)
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_CleanFormatter(logging.Formatter("debug: %(name)s: %(message)s")))  # type: ignore[arg-type]
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.DEBUG)


def _plain(human: Human) -> None:
    out = sys.stdout
    redact = _redactor()
    if isinstance(human, Table):
        for row in human.rows:
            out.write("\t".join(clean(cell, redact, one_line=True) for cell in row) + "\n")
    elif isinstance(human, Detail):
        width = max((len(k) for k, _ in human.pairs), default=0)
        for key, value in human.pairs:
            out.write(f"{clean(key + ':', redact):<{width + 1}} {clean(value, redact)}\n")
    elif isinstance(human, Lines):
        for line in human.lines:
            out.write(clean(line, redact, keep=human.keep) + "\n")


def _rich(human: Human) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False)
    redact = _redactor()

    keep = human.keep if isinstance(human, Lines) else ()

    def cell(text: str, *, one_line: bool = False) -> str:
        return escape(clean(text, redact, one_line=one_line, keep=keep))

    if isinstance(human, Table):
        if not human.rows:
            _stderr_console().print(f"[dim]{cell(human.empty)}[/dim]")
            return
        from rich.table import Table as RichTable

        title = cell(human.title) if human.title else None
        table = RichTable(title=title, box=None, header_style="bold", pad_edge=False)
        for column in human.columns:
            table.add_column(column, overflow="fold")
        styles = human.styles or {}
        for row in human.rows:
            cells = []
            for i, c in enumerate(row):
                text, style = cell(c, one_line=True), styles.get(i, {}).get(c)
                cells.append(f"[{style}]{text}[/{style}]" if style else text)
            table.add_row(*cells)
        console.print(table)
    elif isinstance(human, Detail):
        if human.title:
            console.print(f"[bold]{cell(human.title)}[/bold]")
        width = max((len(k) for k, _ in human.pairs), default=0)
        for key, value in human.pairs:
            console.print(f"[dim]{cell(key + ':'):<{width + 1}}[/dim] {cell(value)}")
    elif isinstance(human, Lines):
        for line in human.lines:
            console.print(cell(line))


def emit(
    result: Result, human: Callable[[Result], Human] | None = None, *, keep: Sequence[str] = ()
) -> int:
    """Print ``result`` as JSON or for humans; returns the exit code.

    ``keep``: subjects the result names (config paths), left readable in its JSON.
    """
    STATE.command = result.command
    if STATE.notices:
        result.warnings = [*STATE.notices, *(w for w in result.warnings if w not in STATE.notices)]
    if STATE.json:
        print_json(result.envelope(), keep=keep)
        return result.exit_code
    if result.warnings and not STATE.quiet:
        redact = _redactor()  # one for all: a render may warn about every server
        for warning in result.warnings:
            warn(warning, redact)
    rendered = human(result) if human is not None else None
    if rendered is not None:
        if stdout_is_tty():
            _rich(rendered)
        else:
            _plain(rendered)
    for err in result.errors:
        hint = err.get("hint")
        error(str(err.get("message") or ""), str(hint) if hint is not None else None)
    return result.exit_code
