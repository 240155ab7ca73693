"""The history of the config: undo (and its list of saved versions)."""

from __future__ import annotations

import typer

from mcpctl.cli import output
from mcpctl.cli.common import config_store
from mcpctl.cli.output import Table
from mcpctl.results import Result

app = typer.Typer()


@app.command("undo")
def undo(
    force: bool = typer.Option(
        False, "--force", help="Restore even if the file was edited by hand since."
    ),
    list_versions: bool = typer.Option(
        False, "--list", help="Show the saved versions instead of restoring one."
    ),
) -> int:
    """Restore the config as it was before mcpctl's last change.

    mcpctl keeps the last 20 versions of each file it changes; run undo again to go
    further back. A file edited by hand since mcpctl's change is left alone unless
    --force.

    Examples:

      mcpctl undo

      mcpctl undo --list
    """
    from datetime import datetime

    store = config_store()
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
