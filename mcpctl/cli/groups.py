"""Groups of servers: group add, remove, list."""

from __future__ import annotations

import typer

from mcpctl.cli import output
from mcpctl.cli.commandgroup import CommandGroup
from mcpctl.cli.common import config_store, read_config
from mcpctl.cli.output import Table
from mcpctl.results import Result

app = typer.Typer()
GROUP_HELP = """Put servers in named groups, to act on them together with --group.

A group is the servers whose entry lists it in "groups"; it exists while it has a member.
list, health, tools, render, snapshot and report take --group GROUP (repeatable) to act on
the members only.

Examples:

  mcpctl group add work github slack

  mcpctl group list

  mcpctl health --group work
"""
group_app = typer.Typer(help=GROUP_HELP, no_args_is_help=True, cls=CommandGroup)
app.add_typer(group_app, name="group")


@group_app.command("add")
def group_add(
    group: str = typer.Argument(..., help="The group (letters, digits, '-' and '_')."),
    names: list[str] = typer.Argument(..., metavar="NAME...", help="Servers to put in it."),
) -> int:
    """Put servers in a group (all or none: an unknown server changes nothing).

    Examples:

      mcpctl group add work github slack
    """
    store = config_store()
    added = store.add_to_group(group, names)
    for name in added:
        output.info(f"Added {name!r} to group {group!r} in {store.path}")
    if not added:
        output.info(f"Already in group {group!r}: {', '.join(dict.fromkeys(names))}")
    data = {"config": str(store.path), "group": group, "added": added}
    return output.emit(Result("group add", data))


@group_app.command("remove")
def group_remove(
    group: str = typer.Argument(..., help="The group."),
    names: list[str] | None = typer.Argument(
        None,
        metavar="[NAME...]",
        help="Servers to take out of it (none: every member, which dissolves the group).",
    ),
) -> int:
    """Take servers out of a group; with no NAME, dissolve the group (the servers stay).

    Examples:

      mcpctl group remove work slack

      mcpctl group remove work
    """
    store = config_store()
    wanted = names or []
    removed = store.remove_from_group(group, wanted)
    for name in removed:
        output.info(f"Removed {name!r} from group {group!r} in {store.path}")
    if not wanted:
        output.info(f"Dissolved group {group!r}")
    elif not removed:
        output.info(f"Not in group {group!r}: {', '.join(dict.fromkeys(wanted))}")
    data = {
        "config": str(store.path),
        "group": group,
        "removed": removed,
        "dissolved": not wanted,
    }
    return output.emit(Result("group remove", data))


@group_app.command("list")
def group_list() -> int:
    """List the groups and their members (never starts a server).

    Piped output is tab-separated: GROUP, SERVERS (comma-separated).

    Examples:

      mcpctl group list

      mcpctl group list --json | jq -r '.data.groups[].name'
    """
    from mcpctl.config.groups import group_index

    loaded = read_config()
    entries = loaded.config.entries
    index = group_index(entries)
    groups = [
        {"name": group, "servers": members, "enabled": [n for n in members if entries[n].enabled]}
        for group, members in index.items()
    ]
    data = {"config": str(loaded.path), "groups": groups}
    result = Result("group list", data, warnings=loaded.warnings)

    def human(_: Result) -> Table:
        rows = [
            [group, ", ".join(n if entries[n].enabled else f"{n} (disabled)" for n in members)]
            for group, members in index.items()
        ]
        return Table(["GROUP", "SERVERS"], rows, f"no groups in {loaded.path}")

    return output.emit(result, human)
