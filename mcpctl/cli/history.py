"""The history of the config: undo (and its list of saved versions)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mcpctl.cli import output
from mcpctl.cli.common import config_store
from mcpctl.cli.output import Table
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.config.store import FileStore

app = typer.Typer()


@app.command("undo")
def undo(
    force: bool = typer.Option(
        False, "--force", help="Restore even if the file was edited by hand since."
    ),
    list_versions: bool = typer.Option(
        False, "--list", help="Show the saved versions instead of restoring one."
    ),
    file: Path | None = typer.Option(
        None,
        "--file",
        metavar="FILE",
        help="Undo mcpctl's last change of another file (a client's config, after --install).",
    ),
) -> int:
    """Restore the config as it was before mcpctl's last change.

    mcpctl keeps the last 20 versions of each file it changes; run undo again to go
    further back. A file edited by hand since mcpctl's change is left alone unless
    --force.

    Examples:

      mcpctl undo

      mcpctl undo --list

      mcpctl undo --file ~/.cursor/mcp.json
    """
    from datetime import datetime

    store: FileStore = config_store()
    if file is not None:
        from mcpctl.cli.common import paths
        from mcpctl.config.store import FileStore

        store = FileStore(file, backups=paths().backups_for(file), locks=paths().locks_dir)
        store.undo_command = f"mcpctl undo --file {file}"
    if list_versions:
        history = store.history()
        items = [
            {"seq": b.seq, "action": b.action, "time": datetime.fromtimestamp(b.time).isoformat(
                timespec="seconds")}
            for b in reversed(history)
        ]  # fmt: skip
        result = Result("undo", {"config": str(store.path), "versions": items})
        return output.emit(
            result,
            lambda _: Table(
                ["#", "BEFORE", "SAVED"],
                [[str(i["seq"]), str(i["action"]), str(i["time"])] for i in items],
                empty=f"no saved versions of {store.path}",
            ),
        )
    outcome = store.undo(force=force)
    when = datetime.fromtimestamp(outcome.time).isoformat(timespec="seconds")
    what = "removed the file" if outcome.removed_file else "restored the previous version"
    output.info(f"Undid '{outcome.action}' ({when}): {what} of {store.path}")
    data = {
        "config": str(store.path),
        "undone": outcome.action,
        "time": when,
        "removed_file": outcome.removed_file,
        "remaining": outcome.remaining,
    }
    return output.emit(Result("undo", data))
