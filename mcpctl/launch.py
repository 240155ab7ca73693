"""``mcpctl run NAME``: become a configured stdio server, with its secrets resolved.

A client (Claude Desktop, an IDE, an orchestrator) is told to start ``mcpctl run NAME``
instead of the server's own command. mcpctl reads its config, resolves the entry's
``${VAR}`` placeholders as ``health`` does (the environment first, then the OS keyring),
builds the same minimal environment (:func:`mcpctl.probe.childenv.child_env`), changes to
the entry's ``cwd`` and replaces itself with the server (``execvpe``): same PID, the
client's stdin, stdout and stderr, signals and exit status go straight to the server. A
secret kept in the keyring thus reaches the server without ever being written into the
client's config file.

Before the exec, nothing is written on stdout (it is the client's MCP channel): errors go to
stderr only, redacted. The program's fast path (:func:`main`, called from
:mod:`mcpctl.__main__`) imports neither typer, rich, pydantic, anyio nor the MCP SDK, so the
server starts within a few interpreter start-ups of the client's request: a plain entry is
read and resolved by :func:`mcpctl.config.quickentry.plain_entry`, and anything else (or any
failure) goes through the config model, which explains it.

A module of its own, beside the packages it uses: the server's environment comes from
:mod:`mcpctl.probe` and the keyring from :mod:`mcpctl.auth`, and the probe package does not
import the auth one (which builds on the probe's SDK).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing itself is not worth its import on the way to exec
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import NoReturn

    from mcpctl.config.model import ServerEntry
    from mcpctl.config.placeholders import SecretSource
    from mcpctl.config.quickentry import PlainEntry
    from mcpctl.errors import McpctlError

__all__ = ["exec_server", "fast_args", "main"]

# The entries of the config read, whose secrets an error must hide: registered for redaction
# only when something fails (the redaction module is not worth its import on the way to exec).
_LOADED: list[ServerEntry] = []

# Signals Python ignores for itself; an exec'd program must not inherit that (subprocess
# restores them the same way).
_RESTORED_SIGNALS = ("SIGPIPE", "SIGXFSZ")


def fast_args(argv: Sequence[str]) -> tuple[str, str | None] | None:
    """``(NAME, config)`` when ``argv`` is exactly ``run NAME`` with at most a ``--config``
    (``run NAME --config FILE``, ``run NAME --config=FILE``, ``--config FILE run NAME``);
    ``None`` for anything else (help, other options: the full CLI answers those)."""
    args = list(argv)
    config: str | None = None
    if args[:1] == ["--config"] and len(args) >= 2:
        config, args = args[1], args[2:]
    elif args[:1] and args[0].startswith("--config="):
        config, args = args[0].partition("=")[2], args[1:]
    if len(args) < 2 or args[0] != "run" or args[1].startswith("-"):
        return None
    name, rest = args[1], args[2:]
    if config is None and len(rest) == 2 and rest[0] == "--config":
        config, rest = rest[1], []
    elif config is None and len(rest) == 1 and rest[0].startswith("--config="):
        config, rest = rest[0].partition("=")[2], []
    if rest or config == "" or (config is not None and config.startswith("-")):
        return None
    return name, config


def _entry(name: str, config: str | None, environ: Mapping[str, str]) -> ServerEntry:
    """The entry ``name`` of the config in use, checked to be a stdio server one may run."""
    from mcpctl.config.loader import read_config
    from mcpctl.errors import UsageError
    from mcpctl.paths import Paths

    loaded = read_config(Paths.from_env(config).config, must_exist=True)
    _LOADED[:] = loaded.config.entries.values()
    entry = loaded.entry(name)
    if entry.is_remote:
        raise UsageError(
            f"{name} is a remote server ({entry.url}): mcpctl run starts stdio servers",
            hint="a client connects to a remote server by its URL",
        )
    if not entry.enabled:
        raise UsageError(f"{name} is disabled", hint=f"mcpctl enable {name}")
    return entry


def exec_server(
    name: str,
    *,
    config: str | None = None,
    environ: Mapping[str, str] | None = None,
    secrets: SecretSource | None = None,
) -> NoReturn:
    """Replace this process with the stdio server ``name`` of the config in use.

    The entry's placeholders resolve from ``environ`` (default ``os.environ``), then from
    ``secrets`` (default: the OS keyring, opened only for a name the environment lacks); the
    server gets :func:`~mcpctl.probe.childenv.child_env`'s environment and the entry's ``cwd``.
    Returns only by raising, with this process's working directory and signals as they were.

    Args:
        name: the server's name in the config.
        config: the config file (default: ``MCPCTL_CONFIG``, then the usual search; see
            :class:`~mcpctl.paths.Paths`).
        environ: the environment to resolve placeholders from and to pass on.
        secrets: where placeholders missing from ``environ`` are looked up.

    Raises:
        ConfigNotFoundError, ConfigSyntaxError, ConfigError, StorageError: the config file
            cannot be read.
        ServerNotFoundError: no server ``name`` (the hint names the closest one).
        ConfigInvalidError: the entry breaks the config model.
        UsageError: the entry is a remote server, or is disabled.
        PlaceholderError: a placeholder has no value anywhere.
        InvalidEntryError: the resolved entry holds what no process can be given (a NUL
            character, a lone surrogate).
        CommandNotFoundError: the server's command is not installed.
        ProbeFailed: the command cannot be started (not executable, cwd missing...).
    """
    env = os.environ if environ is None else environ
    secrets = secrets if secrets is not None else _keyring()
    plain = _plain(name, config, env, secrets)
    if plain is not None:
        from contextlib import suppress

        from mcpctl.probe.serverenv import server_env

        # On failure (a NUL character in an argument is a ValueError) the full path below
        # fails the same way, and explains it.
        with suppress(OSError, ValueError):
            _exec(plain.argv, server_env(plain.env, plain.inherit_env, env), plain.cwd)
    _exec_checked(name, config, env, secrets)


def _keyring() -> SecretSource:
    """The OS keyring as a secret source, opened on its first look-up; each name is looked up
    once, though both paths may ask."""
    opened: list[SecretSource] = []
    seen: dict[str, str | None] = {}

    def lookup(name: str) -> str | None:
        if name not in seen:
            if not opened:
                from mcpctl.auth.secrets import keyring_source

                opened.append(keyring_source())
            seen[name] = opened[0](name)
        return seen[name]

    return lookup


def _plain(
    name: str, config: str | None, env: Mapping[str, str], secrets: SecretSource
) -> PlainEntry | None:
    from mcpctl.config.quickentry import plain_entry
    from mcpctl.quickpaths import config_path

    chosen = config if config is not None else os.environ.get("MCPCTL_CONFIG")
    if not chosen:  # the full path reports a missing file; this one only reads named ones
        return None
    return plain_entry(name, config_path(chosen), env, secrets)


def _exec_checked(
    name: str, config: str | None, env: Mapping[str, str], secrets: SecretSource
) -> NoReturn:
    """The full path: the config model, its errors, the entry resolved and started."""
    from mcpctl.config.placeholders import resolve_entry
    from mcpctl.errors import McpctlError
    from mcpctl.probe.childenv import child_env

    _LOADED.clear()
    try:
        entry = _entry(name, config, env)
        resolved = resolve_entry(name, entry, policy="error", environ=env, secrets=secrets)
        assert resolved is not None  # the "error" policy raises instead
        run = resolved.entry
        assert run.command is not None
        try:
            _exec([run.command, *run.args], child_env(run, env), run.cwd)
        except OSError as exc:
            from mcpctl.probe.childenv import spawn_error
            from mcpctl.probe.failures import as_exception

            raise as_exception(name, spawn_error(exc, run)) from None
    except McpctlError:
        from mcpctl.config.redaction import register_config

        register_config(_LOADED, env)  # whatever prints the error hides every entry's secrets
        raise


def _exec(argv: list[str], env: dict[str, str], cwd: str | None) -> NoReturn:
    """``execvpe`` with Python's ignored signals restored; raises ``OSError`` with this
    process's working directory and signals as they were."""
    import signal

    here = os.getcwd() if cwd else None  # noqa: PTH109 -- pathlib is not worth its import
    restored: dict[int, object] = {}
    try:
        if cwd:
            os.chdir(cwd)
        for sig_name in _RESTORED_SIGNALS:
            sig = getattr(signal, sig_name, None)
            if sig is not None:
                restored[sig] = signal.signal(sig, signal.SIG_DFL)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os.execvpe(argv[0], argv, env)  # noqa: S606 -- no shell: the entry's argv as is
    except OSError:
        for sig, handler in restored.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        if here is not None:
            os.chdir(here)
        raise


def _say(error: McpctlError) -> None:
    """``error:``, ``note:`` and ``hint:`` lines on stderr, redacted, controls escaped."""
    from mcpctl.config.redaction import redactor
    from mcpctl.text import escape_controls

    redact = redactor()
    lines = [("error:", error.message)]
    lines += [("note:", line) for line in getattr(error, "details", ())]
    lines += [("hint:", error.hint)] if error.hint else []
    text = "".join(f"{p} {escape_controls(redact(t))}\n" for p, t in lines)
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):  # nobody reads stderr: the exit code still tells
        pass


def main(argv: list[str]) -> int:
    """The fast path of ``mcpctl run NAME``: exec the server, or say why not on stderr.

    ``argv`` is the program's arguments (``["run", "NAME", "--config", "FILE"]``, see
    :func:`fast_args`). Returns the exit code, only when the server could not be started.
    """
    from mcpctl.errors import InternalError, McpctlError, UsageError

    parsed = fast_args(argv)
    try:
        if parsed is None:
            raise UsageError("usage: mcpctl run NAME [--config FILE]", hint="mcpctl run --help")
        exec_server(parsed[0], config=parsed[1])
    except McpctlError as exc:
        _say(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("MCPCTL_DEBUG"):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        _say(
            InternalError(
                f"internal error: {type(exc).__name__}: {first}",
                hint="this is a bug in mcpctl; run again with MCPCTL_DEBUG=1 and report it",
            )
        )
        return 1
