"""What ``validate`` found: the report, and the collector that keeps it readable.

A file can hold a million problems (one value of a million ``$X`` near-misses); a report of
all of them is hundreds of megabytes that nobody reads. The collector keeps the first
:data:`MAX_PROBLEMS` in document order and only counts the rest, and it finds out cheaply
that a problem is beyond the cut: every problem of a server entry lies after the entry's key,
so once the kept problems end before that key, the entry's problems are counted without
working out their line and column, formatting their path or building them at all
(:meth:`ProblemCollector.add_each`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mcpctl.config.jsonindex import Positions
from mcpctl.config.model import PathPart, Problem, format_path

__all__ = ["MAX_PROBLEMS", "ProblemCollector", "ValidationReport"]

MAX_PROBLEMS = 1000
Severity = Literal["error", "warning"]
PathT = tuple[PathPart, ...]


@dataclass
class ValidationReport:
    """The problems found in one file: the first :data:`MAX_PROBLEMS` in document order,
    and how many more there are.

    ``errors`` and ``warnings`` list the reported problems; ``error_count`` and
    ``warning_count`` count every problem, omitted ones included, and :attr:`ok` looks at all.
    """

    path: Path
    problems: list[Problem] = field(default_factory=list)
    servers: int = 0
    omitted_errors: int = 0
    omitted_warnings: int = 0

    @property
    def errors(self) -> list[Problem]:
        """The reported problems that make the file invalid."""
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        """The reported problems worth fixing that do not make the file invalid."""
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def omitted(self) -> int:
        """How many problems were found beyond the reported ones."""
        return self.omitted_errors + self.omitted_warnings

    @property
    def error_count(self) -> int:
        """Every error found, reported or not."""
        return len(self.errors) + self.omitted_errors

    @property
    def warning_count(self) -> int:
        """Every warning found, reported or not."""
        return len(self.warnings) + self.omitted_warnings

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return self.error_count == 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``validate --format json``)."""
        return {
            "file": str(self.path),
            "valid": self.ok,
            "servers": self.servers,
            "errors": self.error_count,
            "warnings": self.warning_count,
            "problems": [p.to_dict() for p in self.problems],
            "omitted": self.omitted,
        }


class ProblemCollector:
    """Collects problems, keeping the first ``limit`` in document order (see the module)."""

    def __init__(self, doc: Positions, limit: int = MAX_PROBLEMS) -> None:
        self.doc = doc
        self.limit = limit
        self.omitted_errors = 0
        self.omitted_warnings = 0
        # A max-heap of the kept problems by (line, column, order found), keys negated.
        self._kept: list[tuple[int, int, int, Problem]] = []
        self._count = 0

    def add(
        self,
        severity: Severity,
        code: str,
        path: PathT,
        message: str,
        *,
        hint: str | None = None,
        at_key: bool = False,
    ) -> None:
        """A problem at ``path`` (at its key with ``at_key``)."""
        if self._beyond_member(path):
            self._omit(severity, 1)
            return
        pos = self.doc.position(path, prefer_key=at_key)
        line, column = pos if pos else (None, None)
        self.keep(Problem(severity, code, message, format_path(path), line, column, hint))

    def add_each(
        self,
        severity: Severity,
        code: str,
        path: PathT,
        items: Sequence[str],
        message: Callable[[str], str],
        *,
        hint: str | None = None,
    ) -> None:
        """One problem per item, all at ``path``; ``message(item)`` is called only for the
        ones kept."""
        if not items:
            return
        if self._beyond_member(path):
            self._omit(severity, len(items))
            return
        pos = self.doc.position(path)
        line, column = pos if pos else (None, None)
        shown = format_path(path)
        for n, item in enumerate(items):
            # Same position, later order: once one is beyond the cut, so are the rest.
            if self._beyond((line or 0, column or 0)):
                self._omit(severity, len(items) - n)
                return
            self.keep(Problem(severity, code, message(item), shown, line, column, hint))

    def keep(self, problem: Problem) -> None:
        """Add a problem whose line and column are already known."""
        self._count += 1
        key = (-(problem.line or 0), -(problem.column or 0), -self._count, problem)
        if len(self._kept) < self.limit:
            heapq.heappush(self._kept, key)
        elif key > self._kept[0]:  # before the last kept one
            dropped = heapq.heapreplace(self._kept, key)[3]
            self._omit(dropped.severity, 1)
        else:
            self._omit(problem.severity, 1)

    def problems(self) -> list[Problem]:
        """The kept problems, in document order."""
        return [entry[3] for entry in sorted(self._kept, key=lambda e: e[:3], reverse=True)]

    def fill(self, report: ValidationReport) -> ValidationReport:
        """``report`` with the kept problems and the counts of the others."""
        report.problems = self.problems()
        report.omitted_errors += self.omitted_errors
        report.omitted_warnings += self.omitted_warnings
        return report

    def _beyond(self, pos: tuple[int, int]) -> bool:
        # Whether a problem at ``pos`` found now would sort after every kept one.
        if len(self._kept) < self.limit:
            return False
        last = self._kept[0]
        return (pos[0], pos[1]) >= (-last[0], -last[1])

    def _beyond_member(self, path: PathT) -> bool:
        if len(self._kept) < self.limit or not path or not isinstance(path[0], str):
            return False
        start = self.doc.member_position(path[0])
        return start is not None and self._beyond(start)

    def _omit(self, severity: str, n: int) -> None:
        if severity == "error":
            self.omitted_errors += n
        else:
            self.omitted_warnings += n
