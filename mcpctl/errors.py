"""The exceptions mcpctl raises, each with a stable ``code`` and an exit code.

Every error the library raises on purpose is an :class:`McpctlError`. The CLI turns
them into a message (or the JSON envelope) and an exit code in exactly one place,
``mcpctl.cli.app``. Codes are part of the scripting contract: they never change
meaning once released.

    McpctlError                        exit 1  error
    ├── UsageError                     exit 2  usage_error
    │   ├── ServerNotFoundError        exit 2  server_not_found
    │   ├── ServerExistsError          exit 2  server_exists
    │   ├── InvalidEntryError          exit 2  invalid_entry
    │   ├── PlaintextSecretError       exit 2  plaintext_secret
    │   ├── MissingInputError          exit 2  missing_input
    │   ├── NothingToUndoError         exit 2  nothing_to_undo
    │   └── UndoConflictError          exit 2  undo_conflict
    ├── ConfigError                    exit 2  config_error
    │   ├── ConfigSyntaxError          exit 2  config_syntax
    │   └── ConfigInvalidError         exit 2  config_invalid
    ├── PlaceholderError               exit 2  missing_variable
    └── OutsideError                   exit 3  outside_error
        ├── ReadOnlyError              exit 3  read_only
        ├── LockTimeoutError           exit 3  lock_timeout
        └── StorageError               exit 3  io_error

Exit codes follow DESIGN.md section 5: 1 the thing checked is not OK, 2 bad usage or
bad input, 3 an outside failure.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ConfigInvalidError",
    "ConfigSyntaxError",
    "InvalidEntryError",
    "LockTimeoutError",
    "McpctlError",
    "MissingInputError",
    "NothingToUndoError",
    "OutsideError",
    "PlaceholderError",
    "PlaintextSecretError",
    "ReadOnlyError",
    "ServerExistsError",
    "ServerNotFoundError",
    "StorageError",
    "UndoConflictError",
    "UsageError",
    "exception_leaves",
]


class McpctlError(Exception):
    """Root of every error mcpctl raises on purpose.

    Attributes:
        code: stable machine-readable identifier (``snake_case``).
        exit_code: the process exit code the CLI uses for it.
        message: one line for humans; never contains a secret.
        hint: what to do about it, or ``None``.
    """

    code = "error"
    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict[str, str | None]:
        """The error as it appears in the JSON envelope's ``errors`` list."""
        return {"code": self.code, "message": self.message, "hint": self.hint}


class UsageError(McpctlError):
    """The request cannot be carried out as given (bad flag, bad value, wrong name)."""

    code = "usage_error"
    exit_code = 2


class ServerNotFoundError(UsageError):
    """No server of that name in the config."""

    code = "server_not_found"


class ServerExistsError(UsageError):
    """A server of that name already exists (use ``force`` to replace it)."""

    code = "server_exists"


class InvalidEntryError(UsageError):
    """A server entry built from flags or code does not satisfy the config model."""

    code = "invalid_entry"


class PlaintextSecretError(UsageError):
    """A literal secret was about to be written into the config file."""

    code = "plaintext_secret"


class MissingInputError(UsageError):
    """A value is required and there is no terminal to ask for it."""

    code = "missing_input"


class NothingToUndoError(UsageError):
    """There is no backup of an earlier version to restore."""

    code = "nothing_to_undo"


class UndoConflictError(UsageError):
    """The file changed after mcpctl's last write, so undo would lose those edits."""

    code = "undo_conflict"


class ConfigError(McpctlError):
    """The config file cannot be used as it is."""

    code = "config_error"
    exit_code = 2


class ConfigSyntaxError(ConfigError):
    """The config file is not valid JSON (or not a JSON object).

    Attributes:
        path: the file.
        line: 1-based line of the problem.
        column: 1-based column of the problem.
    """

    code = "config_syntax"

    def __init__(
        self, message: str, *, path: str, line: int, column: int, hint: str | None = None
    ) -> None:
        super().__init__(f"{path}:{line}:{column}: {message}", hint=hint)
        self.path = path
        self.line = line
        self.column = column


class ConfigInvalidError(ConfigError):
    """The config file parses but an entry in it breaks the model."""

    code = "config_invalid"


class PlaceholderError(McpctlError):
    """A ``${VAR}`` placeholder has no value and the policy is ``error``.

    Attributes:
        variable: the missing variable's name (never its value).
    """

    code = "missing_variable"
    exit_code = 2

    def __init__(self, message: str, *, variable: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.variable = variable


class OutsideError(McpctlError):
    """Something outside mcpctl failed: the file system, the network, the keyring."""

    code = "outside_error"
    exit_code = 3


class ReadOnlyError(OutsideError):
    """The config file or its directory cannot be written."""

    code = "read_only"


class LockTimeoutError(OutsideError):
    """Another process held the config's lock for too long."""

    code = "lock_timeout"


class StorageError(OutsideError):
    """Reading or writing a file failed (disk full, I/O error, permission)."""

    code = "io_error"


def exception_leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or ``[exc]`` itself.

    Task groups (anyio, the MCP SDK) wrap a failure in groups; the cause is a leaf.
    """
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for sub in exc.exceptions:
            out.extend(exception_leaves(sub))
        return out
    return [exc]
