"""Command lines in the docs and help texts, checked against the app without running them.

:func:`shell_commands` finds the ``mcpctl`` commands in a line of shell, :func:`fenced_lines`
the shell lines of a Markdown page (and the ``run:``/``script:`` values of its CI YAML), and
:func:`check_command_line` parses one against the command tree: the tests use them so that
no example in ``--help`` or in ``docs/`` can go stale. A development tool, not part of the
mcpctl package.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["check_command_line", "fenced_lines", "shell_commands"]

_SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")", "|&"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def shell_commands(line: str) -> list[list[str]]:
    """The arguments of each ``mcpctl`` command in one line of shell (pipes, ``&&``,
    redirections and ``"$(...)"`` understood; ``VAR=value`` prefixes skipped)."""
    line = re.sub(r"(?<![\w-])\d+(?=[<>])", "", line)  # 2>&1: the descriptor is no argument
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    found: list[list[str]] = []
    segment: list[str] = []
    skip_next = False
    for token in [*tokens, ";"]:
        if skip_next:
            skip_next = False
            continue
        if token in _SEPARATORS:
            while segment and _ASSIGNMENT.match(segment[0]):
                segment.pop(0)
            if segment and Path(segment[0]).name == "mcpctl":
                found.append(segment[1:])
            segment = []
        elif token and set(token) <= set("<>&"):
            skip_next = True  # a redirection: its target is no argument
        else:
            for inner in re.findall(r"\$\(([^()]*)\)", token):
                found += shell_commands(inner)
            segment.append(token)
    return found


_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_SCRIPT_KEYS = {"run", "script", "before_script", "after_script"}


def _script_lines(text: str) -> list[str]:
    """Shell text as command lines: continued lines (a trailing backslash) joined."""
    found: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip().removeprefix("$ ")
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        line = pending + line
        pending = ""
        if line:
            found.append(line)
    if pending.strip():
        found.append(pending.strip())
    return found


def _yaml_scripts(document: Any) -> list[str]:
    """The shell text of every ``run:`` / ``script:`` value in a YAML document."""
    found: list[str] = []
    if isinstance(document, dict):
        for key, value in document.items():
            if key in _SCRIPT_KEYS:
                values = value if isinstance(value, list) else [value]
                found += [v for v in values if isinstance(v, str)]
            else:
                found += _yaml_scripts(value)
    elif isinstance(document, list):
        for item in document:
            found += _yaml_scripts(item)
    return found


def fenced_lines(markdown: str, languages: Sequence[str]) -> list[str]:
    """The shell lines in the fenced blocks of ``markdown`` written in ``languages``.

    ``sh``-like blocks are read line by line; of ``yaml`` blocks (CI workflows), the values of
    ``run:`` and ``script:`` keys.
    """
    import yaml

    found: list[str] = []
    for language, body in _FENCE.findall(markdown):
        if language not in languages:
            continue
        if language in ("yaml", "yml"):
            for script in _yaml_scripts(list(yaml.safe_load_all(body))):
                found += _script_lines(script)
        else:
            found += _script_lines(body)
    return found


def check_command_line(root: Any, args: Sequence[str]) -> None:
    """Parse ``mcpctl ARGS`` against the command tree ``root`` without running it.

    The line goes through the app's own parsing (``main``), on a copy of the tree whose
    commands do nothing: every group resolves its subcommand as it would, and no command runs.

    Raises:
        The parser's usage error (``exit_code`` 2): an unknown command or option, a missing
            or extra argument, a value the option's type refuses.
    """
    import contextlib
    import io

    from mcpctl.cli.output import STATE

    # --version and --help print and stop while parsing: that is a line that parses.
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            _inert(root).main(list(args), prog_name="mcpctl", standalone_mode=False)
        finally:
            STATE.reset()


def _inert(command: Any) -> Any:
    """A copy of ``command`` and its subcommands without their callbacks: parsed, never run."""
    import copy

    clone = copy.copy(command)
    clone.callback = None
    if hasattr(command, "commands"):
        clone.commands = {name: _inert(sub) for name, sub in command.commands.items()}
    return clone
