"""The root command: global options, the command groups, and errors -> exit codes.

This is the only place where exceptions become messages and exit codes: McpctlError -> its
code; a usage error -> 2; SIGINT (Ctrl-C), SIGTERM or SIGHUP -> 128 + the signal's number
(130, 143, 129); anything else -> 1 with a one-line message (``MCPCTL_DEBUG=1`` shows the
traceback).
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any, NoReturn

import typer
from typer.core import TyperOption

from mcpctl._version import __version__
from mcpctl.cli import output
from mcpctl.cli.commandgroup import CommandGroup
from mcpctl.cli.output import STATE
from mcpctl.config import trustguard
from mcpctl.config.redaction import forget as forget_secrets
from mcpctl.errors import ExitCode, InternalError, Interrupted, McpctlError, UsageError
from mcpctl.results import Result
from mcpctl.stdstreams import leave, reader_gone
from mcpctl.stopsignals import stop_signals

__all__ = [
    "COMMAND_MODULES",
    "build_command",
    "full_app",
    "main",
    "run",
]

HELP = """Manage the external MCP servers of your AI agents (external-mcps.json).

Config file: --config, else $MCPCTL_CONFIG, else the nearest external-mcps.json from
the current directory upwards, else the one in your user config dir.

Exit codes: 0 success, 1 the thing checked is not OK, 2 bad usage or input,
3 an outside failure (file system, network, keyring).
"""


# Which module defines each top-level command: a command line that names one imports only
# that module (tests/cli/test_app.py keeps this map in step with the modules).
COMMAND_MODULES = {
    "add": "servers", "remove": "servers", "enable": "servers", "disable": "servers",
    "undo": "history", "list": "listing", "get": "listing",
    "validate": "validate", "schema": "validate",
    "health": "health", "tools": "tools", "call": "tools",
    "registry": "registry", "discover": "registry", "show": "registry",
    "outdated": "updates", "upgrade": "updates", "secret": "secret", "auth": "auth",
    "render": "render", "import": "importing",
    "snapshot": "snapshot", "report": "startupreport", "watch": "watch",
    "doctor": "doctor", "completion": "completion", "run": "run", "group": "groups",
    "prefetch": "prefetch", "trust": "trust", "untrust": "trust", "serve": "serve",
}  # fmt: skip
MODULES = (
    "servers", "listing", "history", "validate", "health", "tools", "registry", "updates",
    "secret", "auth", "render", "importing", "snapshot", "startupreport", "watch", "doctor",
    "completion", "run", "groups", "prefetch", "trust", "serve",
)  # fmt: skip


def _group(module: str) -> typer.Typer:
    from importlib import import_module

    group: typer.Typer = import_module(f"mcpctl.cli.{module}").app
    return group


def _version(value: bool) -> None:
    if value:
        if STATE.json:
            output.print_json(Result("version", {"version": __version__}).envelope())
        else:
            print(f"mcpctl {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Root callback: global options are attached by build_command."""


def _new_app() -> typer.Typer:
    root = typer.Typer(
        name="mcpctl",
        help=HELP,
        cls=CommandGroup,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )
    root.callback()(_root)
    return root


def full_app() -> typer.Typer:
    """The root app with every command group."""
    root = _new_app()
    for module in MODULES:
        root.add_typer(_group(module))
    return root


_VALUE_OPTIONS = {"--config"}


def _remember(ctx: Any, param: Any, value: Any) -> Any:
    if param.name == "config":
        if value is not None:
            STATE.config = value
    elif param.name == "verbose":
        STATE.verbose += 1 if value else 0
    elif value:
        setattr(STATE, param.name, True)
    return value


def _global_options() -> list[TyperOption]:
    common: dict[str, Any] = {"expose_value": False, "callback": _remember, "is_eager": True}
    return [
        TyperOption(
            param_decls=["--config", "config"], metavar="PATH", default=None,
            help="Config file to use (default: $MCPCTL_CONFIG, then the nearest "
            "external-mcps.json upwards, then the user config dir).", **common,
        ),
        TyperOption(
            param_decls=["--json", "json"], is_flag=True, default=False,
            help="Print one JSON document (the mcpctl envelope) on stdout.", **common,
        ),
        TyperOption(
            param_decls=["-q", "--quiet", "quiet"], is_flag=True, default=False,
            help="Print only data and errors.", **common,
        ),
        TyperOption(
            param_decls=["-v", "--verbose", "verbose"], is_flag=True, default=False,
            help="Say more on stderr.", **common,
        ),
    ]  # fmt: skip


def _requested(argv: Sequence[str]) -> str | None:
    """The top-level command ``argv`` names, if it names a known one."""
    args = iter(argv)
    for arg in args:
        if arg in _VALUE_OPTIONS:
            next(args, None)
        elif not arg.startswith("-"):
            return arg if arg in COMMAND_MODULES else None
        elif arg == "--":
            return None
    return None


def build_command(argv: Sequence[str] | None = None) -> Any:
    """The click command tree, with the global options on the root and on every command.

    Given ``argv``, only the command it names is built: turning every command's
    signature into click parameters is a measurable share of a fast command's time.
    """
    name = _requested(argv) if argv is not None else None
    if name is not None:
        slim = _new_app()
        group = _group(COMMAND_MODULES[name])
        for info in group.registered_commands:
            if info.name == name:
                slim.registered_commands.append(info)
        for sub in group.registered_groups:
            if sub.name == name:
                slim.registered_groups.append(sub)
        root = typer.main.get_command(slim)
    else:
        root = typer.main.get_command(full_app())
    root.params.extend(_global_options())
    root.help = output.reflow(root.help)
    stack = list(getattr(root, "commands", {}).values())
    while stack:
        command = stack.pop()
        command.params.extend(_global_options())
        command.help = output.reflow(command.help)
        stack.extend(getattr(command, "commands", {}).values())
    return root


def _wants_json(args: Sequence[str]) -> bool:
    head = list(args)[: list(args).index("--")] if "--" in args else list(args)
    return "--json" in head


def _fail(error: McpctlError) -> int:
    if STATE.json:
        try:
            envelope = Result.from_error(STATE.command, error).envelope()
            output.print_json(envelope, keep=error.subjects)
            return error.exit_code
        except OSError:  # stdout cannot take it (a full disk): stderr still may
            pass
    output.error(error)
    return error.exit_code


def _output_failed(exc: OSError) -> int:
    # The output could not be written (a full disk, a quota, an I/O error): not a bug, and
    # stdout is of no use to say so; the same exit code as a failed flush at exit.
    with contextlib.suppress(OSError):
        sys.stderr.write(f"error: the output could not be written: {exc.strerror or exc}\n")
    return ExitCode.FLUSH_FAILED


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """While a command runs, each stop signal raises :class:`Interrupted` (main thread only)."""
    previous: dict[signal.Signals, Any] = {}
    with contextlib.suppress(ValueError):  # not the main thread: signals are not ours
        for sig in stop_signals():
            previous[sig] = signal.signal(sig, _raise_interrupted)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def _interrupted(exc: Interrupted) -> int:
    print(exc.message, file=sys.stderr)
    if STATE.json:
        envelope = Result(STATE.command, None, [], [exc.to_dict()], exc.exit_code).envelope()
        output.print_json(envelope)
    return exc.exit_code


def main(argv: Sequence[str] | None = None, *, started: float | None = None) -> int:
    """Run mcpctl with ``argv`` (default: ``sys.argv[1:]``); returns the exit code.

    ``started``: when the command started (:func:`time.monotonic`), if before this call (the
    program's process start); a ``--timeout`` runs from it."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["__complete"]:  # a TAB press; mcpctl.__main__.run answers it sooner
        from mcpctl.completion.protocol import answer

        return answer(args[1:])
    STATE.reset()
    if started is not None:
        STATE.started = started
    forget_secrets()  # what an earlier run in this process resolved is not this run's
    trustguard.forget()  # and what it refused is this run's to decide again
    STATE.json = _wants_json(args)
    STATE.argv = args
    try:
        with _interruptible():
            command = build_command(args)
            if _COLLECTOR.paused:
                _COLLECTOR.resume()
            rv = command.main(args, prog_name="mcpctl", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except Interrupted as exc:
        return _interrupted(exc)
    except McpctlError as exc:
        return _fail(exc)
    except typer.TyperException as exc:  # what the parser raises: a usage error exits 2
        return _fail(_parse_error(exc))
    except (KeyboardInterrupt, typer.Abort):  # typer.Abort: a prompt got Ctrl-C or its input ended
        return _interrupted(Interrupted(signal.SIGINT))
    except BrokenPipeError:
        return reader_gone()
    except SystemExit as exc:
        # click turns a closed stdout into exit 1 itself; it is the reader's choice, not a
        # failure (the same as above and as `watch`).
        if isinstance(exc.__context__, OSError) and exc.__context__.errno == errno.EPIPE:
            return reader_gone()
        raise
    except OSError as exc:
        if exc.errno in _OUTPUT_ERRNOS and not os.environ.get("MCPCTL_DEBUG"):
            return _output_failed(exc)
        return _internal(exc)
    except Exception as exc:
        return _internal(exc)


# What writing the output may fail with when the device, not mcpctl, is at fault.
# EBADF: a stdout closed before the program started (mcpctl.stdstreams).
_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EBADF})


def _internal(exc: Exception) -> int:
    if os.environ.get("MCPCTL_DEBUG"):
        raise exc
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return _fail(
        InternalError(
            f"internal error: {type(exc).__name__}: {first}",
            hint="this is a bug in mcpctl; run again with MCPCTL_DEBUG=1 and report it",
        )
    )


def _parse_error(exc: typer.TyperException) -> McpctlError:
    """A command-line error as mcpctl's own: a usage error (click's exit code 2) or another.

    typer keeps its parser's exception classes private: what each error says is read from
    the attributes they document (``exit_code``, ``ctx``, ``option_name``).
    """
    message = exc.format_message()
    if exc.exit_code != 2:
        return McpctlError(message)
    hint = None
    ctx = getattr(exc, "ctx", None)
    if STATE.command == "add" and _unknown_option(exc, ctx):
        hint = "put '--' before the server's command: mcpctl add NAME [options] -- CMD ARGS..."
    elif ctx is not None:
        hint = f"see '{ctx.command_path} --help'"
    return UsageError(message, hint=hint)


def _unknown_option(exc: typer.TyperException, ctx: Any) -> bool:
    """Whether ``exc`` is about an option the command does not have (``add a npx -y pkg``)."""
    name = getattr(exc, "option_name", None)
    if name is None or ctx is None:
        return False
    return not any(name in (*p.opts, *p.secondary_opts) for p in ctx.command.get_params(ctx))


class _Collector:
    """The garbage collector, paused by the program for its start-up (:func:`run`)."""

    paused = False

    def resume(self) -> None:
        """Collect again from now on; what start-up made is kept out of every later pass
        (it lives as long as the process)."""
        self.paused = False
        gc.freeze()
        gc.enable()


_COLLECTOR = _Collector()


def _unraisable_quietly(unraisable: Any) -> None:
    """An exception Python cannot raise (in a ``__del__``, at a collection) is not shown.

    A stop signal may land while an object is half built -- an event loop whose
    ``__init__`` it cut short complains from ``__del__`` that it lacks an attribute -- and
    nothing can be done about it then: the program is stopping as asked. Without this the
    interpreter prints a traceback on stderr; ``MCPCTL_DEBUG=1`` keeps it.
    """


def run(*, collector_paused: bool = False) -> NoReturn:
    """The ``mcpctl`` program: :func:`main`, then exit with its code.

    ``collector_paused``: the caller turned the garbage collector off for the start-up; it
    is turned back on once the command is built, before it runs.

    The program leaves without the interpreter's teardown, which frees every module and
    object one by one: a tenth of a quick command's time, and 0.2-0.3 s once the MCP SDK
    (its pydantic schemas) is loaded. Everything mcpctl writes is closed before ``main``
    returns, every server it started has been stopped and its threads are daemons, so only
    the standard streams need flushing; a failed flush of stdout (a full disk) exits 120, as
    the interpreter would.
    """
    from mcpctl.procs import process_age

    _COLLECTOR.paused = collector_paused
    if not os.environ.get("MCPCTL_DEBUG"):
        sys.unraisablehook = _unraisable_quietly
    leave(main(started=time.monotonic() - process_age()))
