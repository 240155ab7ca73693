"""Shell completion: completion install / show.

The TAB presses themselves never come here: ``mcpctl __complete ...`` is answered by
:mod:`mcpctl.completion.protocol` before this CLI is imported (see mcpctl/__main__.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import common, output
from mcpctl.cli.commandgroup import CommandGroup
from mcpctl.cli.output import Lines
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.probe.health import ProbeResult

app = typer.Typer()
GROUP_HELP = """Complete mcpctl's commands, options, server and tool names with TAB.

Examples:

  mcpctl completion install

  mcpctl completion show zsh > ~/.zfunc/_mcpctl
"""
completion_app = typer.Typer(help=GROUP_HELP, no_args_is_help=True, cls=CommandGroup)
app.add_typer(completion_app, name="completion")


class Shell(StrEnum):
    """The shells mcpctl has a completion script for."""

    bash = "bash"
    zsh = "zsh"
    fish = "fish"


SHELL_ARG = typer.Argument(None, help="bash, zsh or fish (default: the shell of $SHELL).")


def remember_probed(
    results: Iterable[ProbeResult], chosen: Iterable[tuple[str, ServerEntry, Any]] = ()
) -> None:
    """Keep the tool names the servers that answered listed, for ``mcpctl call NAME <TAB>``
    (completion never starts a server), and with ``chosen`` (the probed entries) their
    listings, for ``tools --cached``. Never raises."""
    from mcpctl.completion.toolcache import remember_tools
    from mcpctl.probe.listcache import ListingCache

    results = list(results)
    listed = {r.name: [t.name for t in r.tools] for r in results if r.error is None}
    entries = {name: entry for name, entry, _ in chosen}
    if listed:
        with contextlib.suppress(OSError):  # the working directory went away
            where = common.paths()
            ttl = {r.name: r.listing_ttl_ms for r in results if r.error is None}
            remember_tools(where.cache_dir, where.config, listed, ttl)
            ListingCache.in_dir(where.cache_dir).put_results(
                (entries[r.name], r) for r in results if r.name in entries
            )


def _shell(shell: Shell | None) -> str:
    from mcpctl.completion.install import detect_shell

    return shell.value if shell is not None else detect_shell()


def _show(command: str, name: str) -> int:
    from mcpctl.completion.scripts import script

    text = script(name)
    data = {"shell": name, "script": text}
    return output.emit(Result(command, data), lambda _: Lines([text.rstrip("\n")]))


@completion_app.command("show")
def show(shell: Shell | None = SHELL_ARG) -> int:
    """Print the completion script of a shell (to load it yourself, or package it).

    Examples:

      eval "$(mcpctl completion show bash)"

      mcpctl completion show fish > ~/.config/fish/completions/mcpctl.fish
    """
    return _show("completion show", _shell(shell))


@completion_app.command("install")
def install(
    shell: Shell | None = SHELL_ARG,
    print_only: bool = typer.Option(
        False, "--print", help="Print the script instead of writing it."
    ),
) -> int:
    """Write the completion script where the shell looks for it, and say what else to do.

    bash: ${XDG_DATA_HOME:-~/.local/share}/bash-completion/completions/mcpctl;
    zsh: ~/.zfunc/_mcpctl (add that folder to fpath); fish:
    ~/.config/fish/completions/mcpctl.fish. An existing script is replaced.

    Examples:

      mcpctl completion install

      mcpctl completion install zsh

      mcpctl completion install fish --print
    """
    from mcpctl.completion.install import install as write_script

    name = _shell(shell)
    if print_only:
        return _show("completion install", name)
    done = write_script(name)
    output.info(f"Wrote the {name} completion script to {done.path}")
    data: dict[str, Any] = {"shell": name, "path": str(done.path), "next": done.next_steps}
    return output.emit(Result("completion install", data), lambda _: Lines(done.next_steps))
