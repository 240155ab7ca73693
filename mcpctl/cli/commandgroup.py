"""The command groups of the CLI (the root, ``registry``, ``secret``...), as click builds them."""

from __future__ import annotations

from typing import Any

from typer.core import TyperGroup

from mcpctl.cli.output import STATE

__all__ = ["CommandGroup"]


class CommandGroup(TyperGroup):
    """A command group: records which command runs (``registry add``), so errors can name it
    in the envelope; named alone, it prints its help (as ``--help`` does) and succeeds."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            args = [ctx.help_option_names[0]]
        rest: list[str] = super().parse_args(ctx, args)
        return rest

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None and cmd.name:
            parent = ctx.command_path.partition(" ")[2]
            STATE.command = f"{parent} {cmd.name}" if parent else cmd.name
        return name, cmd, rest
