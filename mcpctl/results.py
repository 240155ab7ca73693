"""The result envelope shared by the CLI's ``--json`` and the library.

Every command produces one :class:`Result`; ``--json`` prints :meth:`Result.envelope`:
``{"mcpctl": 1, "command": ..., "ok": bool, "data": ..., "warnings": [...], "errors": [...]}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpctl.errors import McpctlError

__all__ = ["ENVELOPE_VERSION", "Result"]

ENVELOPE_VERSION = 1


# The dataclass's methods are written out: generating them costs every command's start-up
# a millisecond (bench/README.md).
@dataclass(init=False, repr=False, eq=False)
class Result:
    """The outcome of one command.

    ``exit_code`` is 0 or 1 (the thing checked is not OK); errors raised as
    :class:`McpctlError` carry their own exit codes.
    """

    command: str
    data: Any
    warnings: list[str]
    errors: list[dict[str, object]]
    exit_code: int
    __hash__ = None  # type: ignore[assignment]  # mutable

    def __init__(
        self,
        command: str,
        data: Any = None,
        warnings: list[str] | None = None,
        errors: list[dict[str, object]] | None = None,
        exit_code: int = 0,
    ) -> None:
        self.command = command
        self.data = data
        self.warnings = [] if warnings is None else warnings
        self.errors = [] if errors is None else errors
        self.exit_code = exit_code

    def _values(self) -> tuple[Any, ...]:
        return (self.command, self.data, self.warnings, self.errors, self.exit_code)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, Result)
            return self._values() == other._values()
        return NotImplemented

    def __repr__(self) -> str:
        return (
            f"Result(command={self.command!r}, data={self.data!r}, warnings={self.warnings!r},"
            f" errors={self.errors!r}, exit_code={self.exit_code!r})"
        )

    @property
    def ok(self) -> bool:
        """True when the command succeeded and what it checked is fine."""
        return self.exit_code == 0 and not self.errors

    @classmethod
    def from_error(
        cls, command: str, error: McpctlError, warnings: list[str] | None = None
    ) -> Result:
        """The envelope of a command that failed with ``error``."""
        return cls(command, None, list(warnings or []), [error.to_dict()], error.exit_code)

    def envelope(self) -> dict[str, Any]:
        """The JSON document ``--json`` prints."""
        return {
            "mcpctl": ENVELOPE_VERSION,
            "command": self.command,
            "ok": self.ok,
            "data": self.data,
            "warnings": self.warnings,
            "errors": self.errors,
        }
