"""Progress for long work: a spinner, or a bar when the amount is known, on stderr.

Shown only when stderr is an interactive terminal and the output is for a person: never
in a pipe, with ``--json`` or with ``-q``, so scripts and logs see nothing of it. It is
transient: when the work ends the line is erased, and the result is printed as usual.

While it is shown, :mod:`mcpctl.cli.output` prints warnings through its console, so that
they appear above the bar instead of through it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcpctl.cli.output import SHOWN_PROGRESS, STATE, active_console, clean

__all__ = ["Ticker", "active_console", "progress", "wanted"]


def wanted() -> bool:
    """Whether progress may be drawn now: stderr is a terminal and a person reads it."""
    return (
        sys.stderr.isatty()
        and os.environ.get("TERM") != "dumb"
        and not STATE.json
        and not STATE.quiet
        and not SHOWN_PROGRESS
    )


class Ticker:
    """What the work reports: one more item done, or what it is doing now."""

    def __init__(self, bar: Any = None, task: Any = None) -> None:
        self._bar = bar
        self._task = task

    def advance(self, amount: int = 1) -> None:
        """``amount`` more items done."""
        if self._bar is not None:
            self._bar.advance(self._task, amount)

    def describe(self, what: str) -> None:
        """Replace the description (already cleaned of secrets and control characters)."""
        if self._bar is not None:
            from rich.markup import escape

            self._bar.update(self._task, description=escape(what))


@contextmanager
def progress(what: str, total: int | None = None, *, delay: float = 0.3) -> Iterator[Ticker]:
    """Show ``what`` with a spinner (and ``done/total`` and a bar when ``total`` is given)
    while the block runs, from ``delay`` seconds in; a no-op ticker when progress is not
    :func:`wanted`."""
    if not wanted():
        yield Ticker()
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns: list[Any] = [SpinnerColumn(), TextColumn("{task.description}")]
    if total is not None:
        columns += [BarColumn(bar_width=24), MofNCompleteColumn()]
    columns.append(TimeElapsedColumn())
    bar = Progress(
        *columns,
        console=Console(stderr=True, highlight=False),
        transient=True,
        expand=False,
        redirect_stdout=False,  # data stays on stdout; only stderr writes go above the bar
    )
    task = bar.add_task(escape(clean(what, one_line=True)), total=total)
    # Drawn only once the work has taken a moment: quick work shows nothing, not a flash.
    timer = threading.Timer(delay, bar.start)
    timer.daemon = True
    SHOWN_PROGRESS.append(bar)
    timer.start()
    try:
        yield Ticker(bar, task)
    finally:
        timer.cancel()
        timer.join()
        SHOWN_PROGRESS.pop()
        bar.stop()  # erases the line (transient); harmless when it never started
