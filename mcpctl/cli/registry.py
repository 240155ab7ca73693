"""Finding servers: registry list/add/remove/sync, discover, show."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import common, flagvalues, output
from mcpctl.cli.commandgroup import CommandGroup
from mcpctl.cli.output import Detail, Table
from mcpctl.cli.progress import progress
from mcpctl.errors import ExitCode, RegistryError, UsageError
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.registry.cache import DiscoveryCache

app = typer.Typer()
REGISTRY_HELP = """Manage the registries mcpctl searches (official, builtin, and your own).

Examples:

  mcpctl registry list

  mcpctl registry add team ./approved-servers.json && mcpctl registry sync team
"""
registry_app = typer.Typer(help=REGISTRY_HELP, no_args_is_help=True, cls=CommandGroup)
app.add_typer(registry_app, name="registry")


class TransportKind(StrEnum):
    """Filter on how a server runs."""

    stdio = "stdio"
    remote = "remote"


@registry_app.command("list")
def registry_list() -> int:
    """List the registries, with how much of each is cached and when it was synced.

    Examples:

      mcpctl registry list --json
    """
    from datetime import datetime

    cache = common.cache()
    rows: list[dict[str, Any]] = []
    for src in common.sources():
        state = cache.sync_state(src.id)
        synced = datetime.fromtimestamp(state[0]).isoformat(timespec="seconds") if state else None
        rows.append({**src.to_dict(), "cached": cache.count(src.id), "synced_at": synced})
    table = Table(
        ["ID", "KIND", "LOCATION", "CACHED", "SYNCED"],
        [
            [
                r["id"],
                r["kind"],
                r.get("url") or r.get("file", ""),
                str(r["cached"]),
                r["synced_at"] or "never",
            ]
            for r in rows
        ],
    )
    return output.emit(Result("registry list", {"registries": rows}), lambda _: table)


@registry_app.command("add")
def registry_add(
    registry_id: str = typer.Argument(..., metavar="ID", help="A short id (lowercase)."),
    location: str = typer.Argument(..., metavar="URL|FILE", help="An API base URL or a JSON file."),
) -> int:
    """Add a registry: an HTTP endpoint speaking the official API, or a local JSON file.

    Examples:

      mcpctl registry add acme https://mcp-registry.acme.internal

      mcpctl registry add team ./approved-servers.json
    """
    from mcpctl.registry.sources import add_source, parse_location

    source = parse_location(registry_id, location)
    where = common.paths()
    add_source(where.registries, source, locks=where.locks_dir)
    output.info(f"Added registry {registry_id!r} ({source.location})")
    return output.emit(Result("registry add", source.to_dict()))


@registry_app.command("remove")
def registry_remove(
    registry_id: str = typer.Argument(..., metavar="ID", help="The registry."),
) -> int:
    """Remove a registry (and its cached data); the built-in ones can be removed too.

    Examples:

      mcpctl registry remove official
    """
    from mcpctl.registry.sources import remove_source

    where = common.paths()
    remove_source(where.registries, registry_id, locks=where.locks_dir)
    common.cache().drop(registry_id)
    output.info(f"Removed registry {registry_id!r}")
    return output.emit(Result("registry remove", {"id": registry_id}))


SYNC_HELP = "For all the registries together: 30s, 5m (a bare number is seconds; default 2m)."


@registry_app.command("sync")
def registry_sync(
    registry_ids: list[str] | None = typer.Argument(
        None, metavar="[ID]...", help="Registries (default: all)."
    ),
    full: bool = typer.Option(False, "--full", help="Page through everything, not only changes."),
    timeout: str | None = typer.Option(None, "--timeout", metavar="DURATION", help=SYNC_HELP),
) -> int:
    """Bring the discovery cache up to date (first sync: everything; then only changes).

    The registries are synced at once; each request may take 10 s at most, and the whole
    sync --timeout. Exit 3 when a registry could not be read (its previous cache is kept,
    and other commands wait 5 minutes before trying it again).

    Examples:

      mcpctl registry sync

      mcpctl registry sync official --full --timeout 5m --json
    """
    from mcpctl.registry.syncing import SYNC_TIMEOUT, SyncFailure, sync_many

    warnings: list[str] = []
    seconds = flagvalues.duration_option(timeout, warnings, default=SYNC_TIMEOUT)
    srcs = common.sources(registry_ids)
    done, errors = [], []
    names = ", ".join(dict.fromkeys(s.id for s in srcs))
    with progress(f"Syncing {names}"):
        outcomes = sync_many(common.cache(), srcs, full=full, timeout=seconds)
    for outcome in outcomes:
        if isinstance(outcome, SyncFailure):
            exc = outcome.error
            errors.append(type(exc)(f"{outcome.registry}: {exc.message}", hint=exc.hint).to_dict())
            continue
        done.append({"registry": outcome.registry, "mode": outcome.mode,
                     "records": outcome.records, "seconds": round(outcome.seconds, 3)})  # fmt: skip
        warnings += outcome.warnings
        output.info(
            f"Synced {outcome.registry}: {outcome.records} records "
            f"({outcome.mode}, {outcome.seconds:.2f} s)"
        )
    result = Result(
        "registry sync",
        {"synced": done},
        warnings,
        errors,
        exit_code=ExitCode.OUTSIDE if errors else ExitCode.OK,
    )
    return output.emit(result)


@app.command("discover")
def discover(
    query: str = typer.Argument("", help="Words to search for (empty: list everything)."),
    registry: list[str] | None = typer.Option(
        None, "--registry", "-r", metavar="ID", help="Only these registries (repeatable)."
    ),
    transport: TransportKind | None = typer.Option(
        None, "--transport", help="stdio (a package) or remote."
    ),
    package_type: str | None = typer.Option(
        None, "--package-type", metavar="TYPE", help="npm, pypi, oci, nuget or mcpb."
    ),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=1000, help="How many results."),
    all_status: bool = typer.Option(
        False, "--all-status", help="Include deprecated and deleted servers."
    ),
    refresh: bool = typer.Option(
        False, "--refresh", help="Sync the registries first, whatever the cache's age."
    ),
    offline: bool = typer.Option(
        False, "--offline", help="Never touch the network: search the cache only."
    ),
    export: Path | None = typer.Option(
        None, "--export", metavar="FILE", help="Also write the matches as a discovery file."
    ),
    timeout: str | None = typer.Option(
        None, "--timeout", metavar="DURATION", help=common.REGISTRY_TIMEOUT_HELP
    ),
) -> int:
    """Search the registries for servers (ranked; from the local cache, refreshed hourly).

    Stale registries are synced first, all at once, within --timeout (15 s): one that is
    slow or failing is used from the cache, with a warning, and not tried again for 5
    minutes. Exit 0 with a warning when a registry failed but cached data was used; exit 3
    when a registry asked for with --registry has nothing at all.

    Examples:

      mcpctl discover filesystem

      mcpctl discover github --transport remote --json

      mcpctl discover --registry builtin --offline

      mcpctl discover postgres --export discovered_servers.json
    """
    from mcpctl.registry.syncing import REFRESH_TIMEOUT
    from mcpctl.registry.syncing import refresh as refresh_cache

    if refresh and offline:
        raise UsageError("--refresh and --offline contradict each other")
    warnings: list[str] = []
    seconds = flagvalues.duration_option(timeout, warnings, default=REFRESH_TIMEOUT)
    sources = common.sources(registry)
    cache = common.cache()
    with progress("Refreshing the registries' cache"):
        report = refresh_cache(cache, sources, force=refresh, offline=offline, timeout=seconds)
    hits = cache.search(
        query, registries=[s.id for s in sources],
        transport=transport.value if transport else None, package_type=package_type,
        all_status=all_status, limit=limit,
    )  # fmt: skip
    errors = []
    if registry and report.failed:
        failed = RegistryError(
            f"no data from {', '.join(report.failed)}",
            hint="check the network, or sync it later with 'mcpctl registry sync'",
        )
        errors.append(failed.to_dict())
    data: dict[str, Any] = {"query": query, "results": [h.to_dict() for h in hits]}
    warnings += report.warnings
    if export is not None:
        data["exported"] = _export(cache, hits, export, warnings)
    result = Result("discover", data, warnings, errors, 3 if errors else 0)

    def human(_: Result) -> Table:
        columns = ["NAME", "VERSION", "TRANSPORTS", "SECRETS", "REGISTRY", "DESCRIPTION"]
        rows = [
            [h.name, h.version, ",".join(h.transports), "yes" if h.needs_secrets else "",
             ",".join(h.registries), h.description]
            for h in hits
        ]  # fmt: skip
        if output.stdout_is_tty():
            from rich.console import Console

            columns, rows = fit_table(columns, rows, Console().width)
        else:
            rows = [[*row[:-1], row[-1][:80]] for row in rows]
        empty = f"no servers match {query!r}" if query else "no servers cached"
        return Table(columns, rows, empty)

    return output.emit(result, human)


# Dropped in this order when a terminal is too narrow for every column.
DROPPABLE = ("REGISTRY", "VERSION", "TRANSPORTS", "SECRETS")
MIN_DESCRIPTION = 20


def fit_table(
    columns: list[str], rows: list[list[str]], width: int
) -> tuple[list[str], list[list[str]]]:
    """Columns and rows a terminal ``width`` cells wide shows with every NAME on one line.

    The last column (DESCRIPTION) gives way first: it is cut short with "…". When it would
    get fewer than :data:`MIN_DESCRIPTION` cells, the :data:`DROPPABLE` columns are left
    out one by one, then the description itself. (The renderer folds cells that do not
    fit; a table no wider than the terminal has nothing to fold.)
    """
    from rich.cells import cell_len, set_cell_size

    cols = list(columns)
    table = [[*row[:-1], " ".join(row[-1].split())] for row in rows]

    def widths() -> list[int]:
        return [max([cell_len(c)] + [cell_len(r[i]) for r in table]) for i, c in enumerate(cols)]

    while cols:
        sizes = widths()
        # No box and no outer padding: one cell of padding on each inner side of a column.
        room = width - sum(sizes[:-1]) - 2 * (len(cols) - 1)
        if room >= min(MIN_DESCRIPTION, sizes[-1]):
            for row in table:
                if cell_len(row[-1]) > room:
                    row[-1] = set_cell_size(row[-1], room - 1).rstrip() + "…"
            break
        drop = next((c for c in DROPPABLE if c in cols), None)
        index = cols.index(drop) if drop is not None else len(cols) - 1
        del cols[index]
        for row in table:
            del row[index]
        if drop is None:
            break  # only NAME is left: it is what it is
    return cols, table


def _export(cache: DiscoveryCache, hits: list[Any], path: Path, warnings: list[str]) -> int:
    """Write the hits as discovery descriptors (readable back as a file registry)."""
    from mcpctl.config.atomicwrite import write_json
    from mcpctl.registry.export import descriptors
    from mcpctl.registry.sources import find_record

    items, notes = descriptors([find_record(cache, h.name, h.registries[0]) for h in hits])
    warnings += notes
    write_json(path, items)
    output.info(f"Wrote {len(items)} descriptors to {path}")
    return len(items)


@app.command("show")
def show(
    spec: str = typer.Argument(..., metavar="SERVER[@VERSION]", help="The server's registry name."),
    registry: str | None = typer.Option(
        None, "--registry", "-r", metavar="ID", help="Only this registry."
    ),
    offline: bool = typer.Option(False, "--offline", help="Never touch the network."),
    timeout: str | None = typer.Option(
        None, "--timeout", metavar="DURATION", help=common.REGISTRY_TIMEOUT_HELP
    ),
) -> int:
    """Show everything needed to decide: description, versions, packages, remotes, inputs.

    Examples:

      mcpctl show io.github.modelcontextprotocol/time

      mcpctl show io.github.modelcontextprotocol/filesystem@2026.8.31 --json
    """
    from mcpctl.registry.records import clean_text, describe_delivery, describe_inputs
    from mcpctl.registry.sources import find_record
    from mcpctl.registry.syncing import REFRESH_TIMEOUT
    from mcpctl.registry.syncing import refresh as refresh_cache

    warnings: list[str] = []
    seconds = flagvalues.duration_option(timeout, warnings, default=REFRESH_TIMEOUT)
    cache = common.cache()
    wanted = common.sources([registry] if registry else None)
    with progress("Refreshing the registries' cache"):
        report = refresh_cache(cache, wanted, offline=offline, timeout=seconds)
    reg, rec = find_record(cache, spec, registry, unavailable=report.unreachable, offline=offline)
    server = rec.server
    versions = [r.version for _, r in cache.versions(rec.name, [reg])]
    repo = server.get("repository")
    repo_url = clean_text(repo.get("url")) if isinstance(repo, dict) else ""
    packages, remotes = describe_delivery(server)
    inputs = describe_inputs(server)
    data: dict[str, Any] = {
        "name": rec.name,
        "title": rec.title,
        "description": rec.description,
        "version": rec.version,
        "status": rec.status,
        "registry": reg,
        "repository": repo_url or None,
        "website": clean_text(server.get("websiteUrl")) or None,
        "versions": versions,
        "packages": packages,
        "remotes": remotes,
        "inputs": inputs,
    }

    def human(_: Result) -> Detail:
        pairs: list[tuple[str, str]] = [
            ("name", rec.name),
            ("title", rec.title),
            ("version", f"{rec.version} ({rec.status})"),
            ("registry", reg),
            ("description", rec.description),
        ]
        if repo_url:
            pairs.append(("repository", repo_url))
        more = " ..." if len(versions) > 10 else ""
        pairs.append(("versions", ", ".join(versions[:10]) + more))
        for p in packages:
            text = " ".join(v for v in (p["registryType"], p["identifier"], p["version"]) if v)
            pairs.append(
                ("package", text + (f" (via {p['runtimeHint']})" if p["runtimeHint"] else ""))
            )
        for r in remotes:
            pairs.append(("remote", f"{r['type']} {r['url']}"))
        for i in inputs:
            flags = [f for f, on in (("required", i["required"]), ("secret", i["secret"])) if on]
            shown = f"{i['name']} ({', '.join(flags)})" if flags else str(i["name"])
            pairs.append((str(i["kind"]), f"{shown} {i['description']}".strip()))
        return Detail(pairs)

    return output.emit(Result("show", data, warnings + report.warnings), human)
