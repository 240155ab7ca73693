"""``mcpctl list``, answered before the CLI framework loads.

Importing typer (and the click it builds on) alone costs about four times the interpreter's
start-up, more than everything ``list`` does; and ``mcpctl list --json`` is what scripts and
orchestrators run, with a start-up budget (bench/README.md). So a command line that is
``list`` with only its usual options -- ``--json``, ``-q``/``--quiet``, ``--config FILE``,
``--enabled``, ``--group GROUP`` -- is answered here (:func:`answer`), by the very code the
full command runs (:func:`show_list`), and with the same output, exit code and envelope.
Anything else -- help, ``-v``, an option spelled differently, and any failure to report
(a config that cannot be read, an unknown group) -- goes to the full CLI, which answers it as
it always does: nothing has been printed by then.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcpctl.cli import output
from mcpctl.cli.common import entry_summary, entry_target, group_selection, read_config
from mcpctl.cli.output import STATE, Table
from mcpctl.results import Result
from mcpctl.stdstreams import reader_gone

__all__ = ["answer", "list_args", "show_list"]


def show_list(enabled_only: bool, groups: Sequence[str]) -> int:
    """What ``mcpctl list`` prints (the global options already in :data:`STATE`); returns
    the exit code.

    Raises:
        GroupNotFoundError: no server is in one of ``groups``.
        and the errors of :func:`mcpctl.cli.common.read_config`.
    """
    loaded = read_config()
    path = loaded.path
    members = group_selection(loaded.config.entries, groups)
    servers = [
        entry_summary(name, entry)
        for name, entry in loaded.config.entries.items()
        if (entry.enabled or not enabled_only) and (members is None or name in members)
    ]
    data = {"config": str(path), "exists": loaded.exists, "servers": servers}
    warnings = loaded.warnings
    if not loaded.exists:  # nothing to list, and why: never silence (exit 0, as gh/kubectl)
        from mcpctl.config.loader import missing_config_note

        warnings += [note for note in [missing_config_note(path)] if note]
    result = Result("list", data, warnings=warnings)

    def human(_: Result) -> Table:
        rows = [
            [
                s["name"],
                s["transport"],
                "yes" if s["enabled"] else "no",
                entry_target(s),
                s.get("description") or "",
            ]
            for s in servers
        ]
        empty = f"no servers in {path}" if loaded.exists else f"no config file yet ({path})"
        return Table(["NAME", "TRANSPORT", "ENABLED", "TARGET", "DESCRIPTION"], rows, empty)

    return output.emit(result, human)


class _Args:
    """A plain ``list`` command line, parsed."""

    __slots__ = ("config", "enabled", "groups", "json", "quiet")

    def __init__(self) -> None:
        self.config: str | None = None
        self.json = self.quiet = self.enabled = False
        self.groups: list[str] = []


def list_args(argv: Sequence[str]) -> _Args | None:
    """``argv`` parsed when it is ``list`` with only the options :func:`answer` takes (the
    global ones before or after the command, ``--enabled`` and ``--group`` after it, each
    value a word of its own or after ``=``); ``None`` for any other command line."""
    found = _Args()
    listed = False
    args = iter(argv)
    for arg in args:
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg == "list" and not listed:
            listed = True
        elif arg == "--json":
            found.json = True
        elif arg in ("-q", "--quiet"):
            found.quiet = True
        elif arg == "--enabled" and listed:
            found.enabled = True
        elif name in ("--config", "--group") and (listed or name == "--config"):
            value = inline if eq else next(args, None)
            if not value or value.startswith("-"):
                return None
            if name == "--group":
                found.groups.append(value)
            elif found.config is None:
                found.config = value
            else:
                return None  # named twice: the full CLI decides which counts
        else:
            return None
    return found if listed else None


def answer(argv: Sequence[str]) -> int | None:
    """Run ``mcpctl list`` for ``argv`` when it is a plain one (:func:`list_args`): the exit
    code, once its output is written; ``None`` when the full CLI is to answer ``argv``."""
    parsed = list_args(argv)
    if parsed is None:
        return None
    STATE.json, STATE.quiet, STATE.config = parsed.json, parsed.quiet, parsed.config
    STATE.argv = list(argv)
    STATE.command = "list"
    try:
        return show_list(parsed.enabled, parsed.groups)
    except KeyboardInterrupt:
        return 130  # 128 + SIGINT, as the full CLI says it
    except BrokenPipeError:  # the reader went away (mcpctl list | head -1): its choice
        return reader_gone()
    except Exception:  # an error to report (raised before anything was printed)
        return None
