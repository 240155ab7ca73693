"""Keeping servers added from a registry current: outdated, upgrade."""

from __future__ import annotations

import typer

from mcpctl.cli import common, flagvalues, output
from mcpctl.cli.common import cache, config_store, read_config, sources
from mcpctl.cli.flagvalues import parse_pairs
from mcpctl.cli.output import Table
from mcpctl.errors import ExitCode
from mcpctl.results import Result

app = typer.Typer()


@app.command("outdated")
def outdated(
    offline: bool = typer.Option(False, "--offline", help="Compare with the cache only."),
    timeout: str | None = typer.Option(
        None, "--timeout", metavar="DURATION", help=common.REGISTRY_TIMEOUT_HELP
    ),
) -> int:
    """List servers added from a registry whose pinned version is behind the latest.

    Exit 1 when something is outdated (for CI).

    Examples:

      mcpctl outdated

      mcpctl outdated --json | jq -r '.data.outdated[].name'
    """
    from mcpctl.registry.syncing import REFRESH_TIMEOUT, refresh
    from mcpctl.registry.updates import find_updates

    notes: list[str] = []
    seconds = flagvalues.duration_option(timeout, notes, default=REFRESH_TIMEOUT)
    loaded = read_config()
    entries = dict(loaded.config.entries)
    # Only the registries the entries come from (none when no entry has a source).
    wanted = {e.source.registry for e in entries.values() if e.source is not None}
    discovery = cache()
    concerned = [s for s in sources() if s.id in wanted]
    report = refresh(discovery, concerned, offline=offline, timeout=seconds)
    updates, current, unknown = find_updates(entries, discovery)
    warnings = notes + loaded.warnings + report.warnings
    warnings += [f"{n}: its registry entry is not in the cache" for n in unknown]
    data = {
        "outdated": [
            {
                "name": u.name,
                "registry": u.registry,
                "server": u.server,
                "pinned": u.pinned,
                "latest": u.latest,
            }
            for u in updates
        ],
        "current": current,
        "unknown": unknown,
    }
    table = Table(
        ["NAME", "SERVER", "PINNED", "LATEST", "REGISTRY"],
        [[u.name, u.server, u.pinned, u.latest, u.registry] for u in updates],
        "everything added from a registry is up to date",
    )
    result = Result(
        "outdated", data, warnings, exit_code=ExitCode.FAILED if updates else ExitCode.OK
    )
    return output.emit(result, lambda _: table)


@app.command("upgrade")
def upgrade(
    names: list[str] | None = typer.Argument(
        None, metavar="[NAME]...", help="Servers (default: all outdated)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would change; write nothing."),
    env: list[str] = typer.Option(
        [], "--env", "-e", metavar="KEY=VALUE", help="A value a new version needs (repeatable)."
    ),
    offline: bool = typer.Option(False, "--offline", help="Use the cache only."),
    timeout: str | None = typer.Option(
        None, "--timeout", metavar="DURATION", help=common.REGISTRY_TIMEOUT_HELP
    ),
) -> int:
    """Move servers added from a registry to the latest version (one write, undoable).

    Keeps the entry's own settings (values, description, timeout, tool filter, enabled).

    Examples:

      mcpctl upgrade --dry-run

      mcpctl upgrade github time
    """
    from mcpctl.registry.install import apply_upgrade, plan_upgrade
    from mcpctl.registry.syncing import REFRESH_TIMEOUT

    notes: list[str] = []
    seconds = flagvalues.duration_option(timeout, notes, default=REFRESH_TIMEOUT)
    loaded = read_config()
    plan = plan_upgrade(
        cache(), sources(), loaded.config.entries, names or [],
        env=parse_pairs(env, "=", "--env", "KEY=VALUE"), offline=offline,
        refresh_timeout=seconds,
    )  # fmt: skip
    rows = [{"name": u.name, "from": u.pinned, "to": u.latest} for u in plan.updates]
    if plan.entries and not dry_run:
        apply_upgrade(config_store(), plan)
        for r in rows:
            output.info(f"Upgraded {r['name']}: {r['from']} -> {r['to']}")
    elif not plan.entries:
        output.info("Nothing to upgrade")
    data = {"dry_run": dry_run, "upgrades": rows}
    table = Table(
        ["NAME", "FROM", "TO"],
        [[r["name"], r["from"], r["to"]] for r in rows],
        "nothing to upgrade",
    )
    return output.emit(
        Result("upgrade", data, notes + loaded.warnings + plan.warnings),
        lambda _: table if dry_run else None,
    )
