"""The exceptions mcpctl raises, each with a stable ``code`` and an exit code.

Every error the library raises is an :class:`McpctlError`; the class is the error's
identity (its ``code`` and ``exit_code`` are class attributes, never changed on an
instance). The CLI turns them into a message (or the JSON envelope) and an exit code in
exactly one place, ``mcpctl.cli.app``. Codes are part of the scripting contract: they never
change meaning once released.

    McpctlError                        exit 1  error
    ├── InternalError                  exit 1  internal_error
    ├── ToolError                      exit 1  tool_error
    ├── BudgetExceededError            exit 1  over_budget
    ├── NameCollisionError             exit 1  name_collision
    ├── SignInError                    exit 1  sign_in_failed
    ├── UsageError                     exit 2  usage_error
    │   ├── ServerNotFoundError        exit 2  server_not_found
    │   ├── GroupNotFoundError         exit 2  group_not_found
    │   ├── ServerExistsError          exit 2  server_exists
    │   ├── InvalidEntryError          exit 2  invalid_entry
    │   ├── PlaintextSecretError       exit 2  plaintext_secret
    │   ├── MissingInputError          exit 2  missing_input
    │   │   └── InputRequiredError     exit 2  input_required
    │   ├── NothingToUndoError         exit 2  nothing_to_undo
    │   ├── UndoConflictError          exit 2  undo_conflict
    │   ├── CommandNotFoundError       exit 2  command_not_found
    │   ├── ToolNotFoundError          exit 2  tool_not_found
    │   └── ToolArgumentsError         exit 2  invalid_arguments
    ├── ConfigError                    exit 2  config_error
    │   ├── ConfigNotFoundError        exit 2  config_not_found
    │   ├── ConfigSyntaxError          exit 2  config_syntax
    │   ├── ConfigInvalidError         exit 2  config_invalid
    │   └── UntrustedConfigError       exit 2  untrusted_config
    ├── PlaceholderError               exit 2  missing_variable
    │   ├── SkipServer                 exit 2  server_skipped
    │   └── SecretUnreachableError     exit 3  variable_unreachable
    └── OutsideError                   exit 3  outside_error
        ├── ProbeFailed                exit 3  probe_failed
        ├── KeyringUnavailableError    exit 3  keyring_unavailable
        ├── RegistryError              exit 3  registry_unavailable
        ├── ReadOnlyError              exit 3  read_only
        ├── LockTimeoutError           exit 3  lock_timeout
        ├── PortInUseError             exit 3  port_in_use
        └── StorageError               exit 3  io_error

Exit codes: 1 the thing checked is not OK, 2 bad usage or bad input, 3 an outside failure.

Beside the tree, not an error but the end of a command:

    Interrupted (a BaseException)      exit 128 + the signal's number  interrupted
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum
from os import PathLike

from mcpctl.text import closest

__all__ = [
    "BudgetExceededError",
    "CommandNotFoundError",
    "ConfigError",
    "ConfigInvalidError",
    "ConfigNotFoundError",
    "ConfigSyntaxError",
    "ExitCode",
    "GroupNotFoundError",
    "InputRequiredError",
    "InternalError",
    "Interrupted",
    "InvalidEntryError",
    "KeyringUnavailableError",
    "LockTimeoutError",
    "McpctlError",
    "MissingInputError",
    "NameCollisionError",
    "NothingToUndoError",
    "OutsideError",
    "PlaceholderError",
    "PlaintextSecretError",
    "PortInUseError",
    "ProbeFailed",
    "ReadOnlyError",
    "RegistryError",
    "SecretUnreachableError",
    "ServerExistsError",
    "ServerNotFoundError",
    "SignInError",
    "SkipServer",
    "StorageError",
    "ToolArgumentsError",
    "ToolError",
    "ToolNotFoundError",
    "UndoConflictError",
    "UntrustedConfigError",
    "UsageError",
]


class ExitCode(IntEnum):
    """The exit codes of every command (docs/commands.md#output-and-exit-codes); a signal
    adds its own (128 + its number)."""

    OK = 0
    #: The thing checked is not OK: an unhealthy server, drift, a validation problem.
    FAILED = 1
    #: Bad usage or bad input: an unknown server, an invalid config file, a literal secret.
    USAGE = 2
    #: A failure outside mcpctl: a read-only file, a lock held too long, the network.
    OUTSIDE = 3
    #: The output could not be flushed at exit (a full disk): the interpreter's own code.
    FLUSH_FAILED = 120


class McpctlError(Exception):
    """Root of every error mcpctl raises on purpose.

    Attributes:
        code: stable machine-readable identifier (``snake_case``).
        exit_code: the process exit code the CLI uses for it.
        message: one line for humans; never contains a secret.
        hint: what to do about it, or ``None``.
        subjects: what the message is about (a config path, a key name; never a value):
            output keeps them readable when it redacts the message and the hint.
    """

    code = "error"
    exit_code: int = ExitCode.FAILED

    def __init__(
        self, message: str, *, hint: str | None = None, subjects: Iterable[str] = ()
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.subjects = tuple(subjects)

    def to_dict(self) -> dict[str, object]:
        """The error as it appears in the JSON envelope's ``errors`` list."""
        return {"code": self.code, "message": self.message, "hint": self.hint}


class InternalError(McpctlError):
    """A bug in mcpctl: an exception nobody expected (the CLI's last resort)."""

    code = "internal_error"


class ToolError(McpctlError):
    """A tool answered a call with an error (the server works; the call did not)."""

    code = "tool_error"


class BudgetExceededError(McpctlError):
    """A tool catalog costs more tokens than the budget it was given (``tools --budget``)."""

    code = "over_budget"


class NameCollisionError(McpctlError):
    """Two tools that a host would expose under one name (``tools --collisions error``)."""

    code = "name_collision"


class SignInError(McpctlError):
    """An OAuth sign-in did not end with tokens (denied, wrong state, timed out, stopped)."""

    code = "sign_in_failed"


class UsageError(McpctlError):
    """The request cannot be carried out as given (bad flag, bad value, wrong name)."""

    code = "usage_error"
    exit_code = ExitCode.USAGE


class ServerNotFoundError(UsageError):
    """No server of that name in the config."""

    code = "server_not_found"

    @classmethod
    def for_names(
        cls,
        missing: Sequence[str],
        known: Iterable[str],
        where: str | PathLike[str] | None = None,
    ) -> ServerNotFoundError:
        """The error for ``missing`` names, with "did you mean" from ``known`` names."""
        names = list(known)
        guess = closest(missing[0], names) if missing and names else None
        hint = f"did you mean {guess!r}?" if guess else "run 'mcpctl list' to see the servers"
        listed = ", ".join(repr(n) for n in missing)
        noun = "server" if len(missing) == 1 else "servers"
        place = f" in {where}" if where is not None else ""
        return cls(f"no {noun} {listed}{place}", hint=hint)


class GroupNotFoundError(UsageError):
    """No server of the config belongs to a group of that name."""

    code = "group_not_found"

    @classmethod
    def for_groups(cls, missing: Sequence[str], known: Iterable[str]) -> GroupNotFoundError:
        """The error for ``missing`` groups, naming the groups there are."""
        groups = list(known)
        guess = closest(missing[0], groups) if missing and groups else None
        listed = ", ".join(repr(n) for n in missing)
        noun = "group" if len(missing) == 1 else "groups"
        if groups:
            hint = f"the groups: {', '.join(groups)}"
            if guess:
                hint = f"did you mean {guess!r}? {hint}"
        else:
            hint = "no server is in a group yet; add some with 'mcpctl group add GROUP NAME...'"
        return cls(f"no {noun} {listed}", hint=hint)


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


class InputRequiredError(MissingInputError):
    """A server asked for input (a form, or a page to visit) that nobody could give.

    Attributes:
        requests: what was asked, as JSON objects: each request's ``message``, ``mode``
            (``form`` or ``url``), its ``fields`` (name, type, required, choices) or ``url``.
        details: one line for a person per request (shown after the message).
    """

    code = "input_required"

    def __init__(
        self,
        message: str,
        requests: Sequence[dict[str, object]],
        *,
        hint: str | None = None,
        details: Sequence[str] = (),
    ) -> None:
        super().__init__(message, hint=hint)
        self.requests = list(requests)
        self.details = list(details)

    def to_dict(self) -> dict[str, object]:
        """The envelope's form, with what was asked."""
        return {**super().to_dict(), "requests": self.requests}


class NothingToUndoError(UsageError):
    """There is no backup of an earlier version to restore."""

    code = "nothing_to_undo"


class UndoConflictError(UsageError):
    """The file changed after mcpctl's last write, so undo would lose those edits."""

    code = "undo_conflict"


class CommandNotFoundError(UsageError):
    """A stdio server's executable is not installed (the fix is the user's)."""

    code = "command_not_found"


class ToolNotFoundError(UsageError):
    """The server has no tool of that name.

    Attributes:
        server: the server's name.
        tool: the tool asked for.
        available: the tools it has.
    """

    code = "tool_not_found"

    def __init__(self, server: str, tool: str, available: Sequence[str]) -> None:
        guess = closest(tool, available) if available else None
        hint = f"did you mean {guess!r}?" if guess else f"run 'mcpctl tools {server}'"
        super().__init__(f"server {server!r} has no tool {tool!r}", hint=hint)
        self.server = server
        self.tool = tool
        self.available = list(available)


class ToolArgumentsError(UsageError):
    """The arguments of a tool call do not match the tool's input schema."""

    code = "invalid_arguments"


class ConfigError(McpctlError):
    """The config file cannot be used as it is."""

    code = "config_error"
    exit_code = ExitCode.USAGE


class ConfigNotFoundError(ConfigError):
    """The config file named explicitly (``--config``, ``MCPCTL_CONFIG``) does not exist."""

    code = "config_not_found"


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


class UntrustedConfigError(ConfigError):
    """Servers of a config file nobody approved would be started, connected to or given a
    secret (a file from a cloned repository is someone else's words until ``mcpctl trust``).

    Attributes:
        path: the file.
        names: the servers that wait for approval.
    """

    code = "untrusted_config"

    def __init__(
        self,
        message: str,
        *,
        path: str,
        names: Sequence[str],
        hint: str | None = None,
        subjects: Iterable[str] = (),
    ) -> None:
        super().__init__(message, hint=hint, subjects=subjects)
        self.path = path
        self.names = tuple(names)


class PlaceholderError(McpctlError):
    """A ``${VAR}`` placeholder has no value and the policy is ``error``.

    Attributes:
        variable: the missing variable's name (never its value).
    """

    code = "missing_variable"
    exit_code = ExitCode.USAGE

    def __init__(self, message: str, *, variable: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.variable = variable


class SkipServer(PlaceholderError):
    """A variable has no value and the policy is ``skip``: leave the server out."""

    code = "server_skipped"

    def __init__(self, variable: str) -> None:
        super().__init__(f"variable {variable} is not set", variable=variable)


class SecretUnreachableError(PlaceholderError):
    """A variable is not in the environment and the keyring, where it may be stored, could
    not be asked (no D-Bus session, a locked or absent Secret Service): not the user's
    input but the place it lives is at fault, so exit 3, not "not set".

    Attributes:
        variable: the variable's name (never its value).
        reason: why the keyring could not be asked, as its backend said.
    """

    code = "variable_unreachable"
    exit_code = ExitCode.OUTSIDE

    def __init__(
        self, message: str, *, variable: str, reason: str, hint: str | None = None
    ) -> None:
        super().__init__(message, variable=variable, hint=hint)
        self.reason = reason


class OutsideError(McpctlError):
    """Something outside mcpctl failed: the file system, the network, a server."""

    code = "outside_error"
    exit_code = ExitCode.OUTSIDE


class ProbeFailed(OutsideError):
    """A server could not be started, reached or used.

    Attributes:
        server: the server's name.
        reason: why, as a stable code (``timeout``, ``server_exited``, ``auth_required``...:
            the codes of a health probe's ``error``).
        stderr: the last lines the server wrote on stderr (redacted), for stdio servers.
    """

    code = "probe_failed"

    def __init__(
        self,
        server: str,
        reason: str,
        message: str,
        *,
        hint: str | None = None,
        stderr: Sequence[str] = (),
    ) -> None:
        super().__init__(f"{server}: {message}", hint=hint)
        self.server = server
        self.reason = reason
        self.stderr = list(stderr)

    def to_dict(self) -> dict[str, object]:
        """The envelope's form, with the ``reason`` code."""
        return {**super().to_dict(), "reason": self.reason}

    @property
    def details(self) -> list[str]:
        """Lines worth showing after the message: what the server's stderr says of why
        (:func:`mcpctl.text.stderr_cause`)."""
        from mcpctl.text import stderr_cause

        return [f"{self.server} stderr: {line}" for line in stderr_cause(self.stderr)]


class KeyringUnavailableError(OutsideError):
    """No usable OS keyring, or it failed (mcpctl never falls back to a plaintext file).

    Attributes:
        reason: why, as the keyring's backend said (``"Environment variable
            DBUS_SESSION_BUS_ADDRESS is unset"``), or the message when it said nothing.
    """

    code = "keyring_unavailable"

    def __init__(self, message: str, *, hint: str | None = None, reason: str = "") -> None:
        super().__init__(message, hint=hint)
        self.reason = reason or message


class RegistryError(OutsideError):
    """A registry could not be read (network, HTTP status, bad data)."""

    code = "registry_unavailable"


class ReadOnlyError(OutsideError):
    """The config file or its directory cannot be written."""

    code = "read_only"


class LockTimeoutError(OutsideError):
    """Another process held the config's lock for too long."""

    code = "lock_timeout"


class PortInUseError(OutsideError):
    """The address to listen on is taken (another program listens there)."""

    code = "port_in_use"


class StorageError(OutsideError):
    """Reading or writing a file failed (disk full, I/O error, permission)."""

    code = "io_error"


class Interrupted(BaseException):
    """A stop signal (SIGINT, SIGTERM or SIGHUP) ended the command: exit 128 + its number.

    A BaseException like KeyboardInterrupt, so that no ``except Exception`` swallows it; unlike
    KeyboardInterrupt, typer lets it through instead of turning it into a silent exit 130.
    Commands that start servers raise it once every one of them is stopped.
    """

    code = "interrupted"

    def __init__(self, signum: int) -> None:
        import signal

        self.signal = signal.Signals(signum)
        self.message = f"interrupted by {self.signal.name}"
        super().__init__(self.message)

    @property
    def exit_code(self) -> int:
        """128 + the signal's number, as a shell reports a process the signal ended."""
        return 128 + int(self.signal)

    def to_dict(self) -> dict[str, object]:
        """The error as it appears in the JSON envelope's ``errors`` list."""
        return {"code": self.code, "message": self.message, "hint": None}
