"""The result envelope shared by the CLI's ``--json`` and the library.

Every command produces one :class:`Result`; ``--json`` prints :meth:`Result.envelope`:
``{"mcpctl": 1, "command": ..., "ok": bool, "data": ..., "warnings": [...], "errors": [...]}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpctl.errors import McpctlError

__all__ = ["ENVELOPE_VERSION", "Result"]

ENVELOPE_VERSION = 1


@dataclass
class Result:
    """The outcome of one command.

    ``exit_code`` is 0 or 1 (the thing checked is not OK); errors raised as
    :class:`McpctlError` carry their own exit codes.
    """

    command: str
    data: Any = None
    warnings: list[str] = field(default_factory=list)
    errors: list[dict[str, object]] = field(default_factory=list)
    exit_code: int = 0

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
