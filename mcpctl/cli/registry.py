"""Finding servers: registry list/add/remove/sync, discover, show."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.output import STATE, Detail, Table
from mcpctl.errors import UsageError
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.registry.cache import DiscoveryCache
    from mcpctl.registry.sources import RegistrySource

app = typer.Typer()
REGISTRY_HELP = """Manage the registries mcpctl searches (official, builtin, and your own).

Examples:

  mcpctl registry list

  mcpctl registry add team ./approved-servers.json && mcpctl registry sync team
"""
registry_app = typer.Typer(help=REGISTRY_HELP, no_args_is_help=True)
app.add_typer(registry_app, name="registry")


class TransportKind(StrEnum):
    """Filter on how a server runs."""

    stdio = "stdio"
    remote = "remote"


def _paths() -> Any:
    from mcpctl.paths import Paths

    return Paths.from_env(STATE.config)


def _sources(wanted: list[str] | None = None) -> list[RegistrySource]:
    from mcpctl.registry.sources import load_sources

    sources = load_sources(_paths().registries)
    if wanted:
        known = {s.id: s for s in sources}
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise UsageError(
                f"no registry {unknown[0]!r}", hint="run 'mcpctl registry list' to see them"
            )
        return [known[w] for w in wanted]
    return sources


def _cache() -> DiscoveryCache:
    from mcpctl.registry.cache import DiscoveryCache

    return DiscoveryCache.open(_paths().discovery_cache)


def cache_and_sources(
    wanted: list[str] | None = None,
) -> tuple[DiscoveryCache, list[RegistrySource]]:
    """The discovery cache and the registries to use (all, or the ones named)."""
    return _cache(), _sources(wanted)


@registry_app.command("list")
def registry_list() -> int:
    """List the registries, with how much of each is cached and when it was synced.

    Examples:

      mcpctl registry list --json
    """
    from datetime import datetime

    cache = _cache()
    rows: list[dict[str, Any]] = []
    for src in _sources():
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
    from mcpctl.registry.sources import parse_location, save_sources

    source = parse_location(registry_id, location)
    sources = [s for s in _sources() if s.id != registry_id] + [source]
    save_sources(_paths().registries, sources)
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
    from mcpctl.registry.sources import save_sources

    sources = _sources()
    if registry_id not in {s.id for s in sources}:
        raise UsageError(f"no registry {registry_id!r}", hint="run 'mcpctl registry list'")
    save_sources(_paths().registries, [s for s in sources if s.id != registry_id])
    _cache().drop(registry_id)
    output.info(f"Removed registry {registry_id!r}")
    return output.emit(Result("registry remove", {"id": registry_id}))


@registry_app.command("sync")
def registry_sync(
    registry_ids: list[str] | None = typer.Argument(
        None, metavar="[ID]...", help="Registries (default: all)."
    ),
    full: bool = typer.Option(False, "--full", help="Page through everything, not only changes."),
    timeout: float = typer.Option(
        10.0, "--timeout", metavar="S", min=0.1, help="Seconds per request."
    ),
) -> int:
    """Bring the discovery cache up to date (first sync: everything; then only changes).

    Exit 3 when a registry could not be read (its previous cache is kept).

    Examples:

      mcpctl registry sync

      mcpctl registry sync official --full --json
    """
    from mcpctl.registry.sources import RegistryError, sync_source

    cache = _cache()
    done, errors = [], []
    for src in _sources(registry_ids):
        try:
            outcome = sync_source(cache, src, full=full, timeout=timeout)
        except (RegistryError, UsageError) as exc:
            errors.append(
                {"code": exc.code, "message": f"{src.id}: {exc.message}", "hint": exc.hint}
            )
            continue
        done.append({"registry": outcome.registry, "mode": outcome.mode,
                     "records": outcome.records, "seconds": round(outcome.seconds, 3)})  # fmt: skip
        output.info(
            f"Synced {src.id}: {outcome.records} records ({outcome.mode}, {outcome.seconds:.2f} s)"
        )
    result = Result("registry sync", {"synced": done}, errors=errors, exit_code=3 if errors else 0)
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
) -> int:
    """Search the registries for servers (ranked; from the local cache, refreshed hourly).

    Exit 0 with a warning when a registry failed but cached data was used; exit 3 when a
    registry asked for with --registry has nothing at all.

    Examples:

      mcpctl discover filesystem

      mcpctl discover github --transport remote --json

      mcpctl discover --registry builtin --offline

      mcpctl discover postgres --export discovered_servers.json
    """
    from mcpctl.registry.sources import refresh as refresh_cache

    if refresh and offline:
        raise UsageError("--refresh and --offline contradict each other")
    sources = _sources(registry)
    cache = _cache()
    report = refresh_cache(cache, sources, force=refresh, offline=offline)
    hits = cache.search(
        query, registries=[s.id for s in sources],
        transport=transport.value if transport else None, package_type=package_type,
        all_status=all_status, limit=limit,
    )  # fmt: skip
    errors = []
    if registry and report.failed:
        message = f"no data from {', '.join(report.failed)}"
        errors.append({"code": "registry_unavailable", "message": message, "hint": None})
    data: dict[str, Any] = {"query": query, "results": [h.to_dict() for h in hits]}
    warnings = list(report.warnings)
    if export is not None:
        data["exported"] = _export(cache, hits, export, warnings)
    result = Result("discover", data, warnings, errors, 3 if errors else 0)

    def human(_: Result) -> Table:
        rows = [
            [h.name, h.version, ",".join(h.transports), "yes" if h.needs_secrets else "",
             ",".join(h.registries), h.description[:80]]
            for h in hits
        ]  # fmt: skip
        return Table(["NAME", "VERSION", "TRANSPORTS", "SECRETS", "REGISTRY", "DESCRIPTION"], rows,
                     f"no servers match {query!r}" if query else "no servers cached")  # fmt: skip

    return output.emit(result, human)


def _export(cache: DiscoveryCache, hits: list[Any], path: Path, warnings: list[str]) -> int:
    """Write the hits as seed-003 descriptors (readable back as a file registry)."""
    import json

    from mcpctl.registry.convert import default_name, descriptor
    from mcpctl.registry.sources import find_record
    from mcpctl.config.store import atomic_write

    items: list[dict[str, Any]] = []
    taken: set[str] = set()
    for hit in hits:
        reg, rec = find_record(cache, hit.name, hit.registries[0])
        name = default_name(rec.name, taken)
        try:
            items.append(descriptor(rec, reg, name))
        except UsageError as exc:
            warnings.append(f"not exported: {exc.message}")
            continue
        taken.add(name)
    atomic_write(path, (json.dumps(items, indent=2, ensure_ascii=False) + "\n").encode())
    output.info(f"Wrote {len(items)} descriptors to {path}")
    return len(items)


@app.command("show")
def show(
    spec: str = typer.Argument(..., metavar="SERVER[@VERSION]", help="The server's registry name."),
    registry: str | None = typer.Option(
        None, "--registry", "-r", metavar="ID", help="Only this registry."
    ),
    offline: bool = typer.Option(False, "--offline", help="Never touch the network."),
) -> int:
    """Show everything needed to decide: description, versions, packages, remotes, inputs.

    Examples:

      mcpctl show io.github.modelcontextprotocol/time

      mcpctl show io.github.modelcontextprotocol/filesystem@2026.8.31 --json
    """
    from mcpctl.registry.records import clean_text, describe_delivery, describe_inputs
    from mcpctl.registry.sources import find_record
    from mcpctl.registry.sources import refresh as refresh_cache

    cache = _cache()
    report = refresh_cache(cache, _sources([registry] if registry else None), offline=offline)
    reg, rec = find_record(cache, spec, registry)
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

    return output.emit(Result("show", data, report.warnings), human)


def _config_entries() -> dict[str, Any]:
    from mcpctl.config.loader import build_config, read_document

    config, _ = build_config(read_document(_paths().config).data)
    return dict(config.entries)


@app.command("outdated")
def outdated(
    offline: bool = typer.Option(False, "--offline", help="Compare with the cache only."),
) -> int:
    """List servers added from a registry whose pinned version is behind the latest.

    Exit 1 when something is outdated (for CI).

    Examples:

      mcpctl outdated

      mcpctl outdated --json | jq -r '.data.outdated[].name'
    """
    from mcpctl.registry.sources import refresh as refresh_cache
    from mcpctl.registry.updates import find_updates

    entries = _config_entries()
    cache = _cache()
    wanted = sorted({e.source.registry for e in entries.values() if e.source is not None})
    known = {s.id for s in _sources()}
    report = refresh_cache(cache, _sources([w for w in wanted if w in known]), offline=offline)
    updates, current, unknown = find_updates(entries, cache)
    warnings = report.warnings + [f"{n}: its registry entry is not in the cache" for n in unknown]
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
    result = Result("outdated", data, warnings, exit_code=1 if updates else 0)
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
) -> int:
    """Move servers added from a registry to the latest version (one write, undoable).

    Keeps the entry's own settings (values, description, timeout, tool filter, enabled).

    Examples:

      mcpctl upgrade --dry-run

      mcpctl upgrade github time
    """
    from mcpctl.cli.servers import _parse_pairs, _store
    from mcpctl.errors import ServerNotFoundError
    from mcpctl.registry.sources import refresh as refresh_cache
    from mcpctl.registry.updates import find_updates, plan_upgrades

    entries = _config_entries()
    for name in names or []:
        if name not in entries:
            raise ServerNotFoundError(f"no server {name!r}", hint="run 'mcpctl list'")
        if entries[name].source is None:
            raise UsageError(f"{name!r} was not added from a registry: nothing to upgrade")
    cache = _cache()
    report = refresh_cache(cache, _sources(), offline=offline)
    updates, _, _ = find_updates(entries, cache)
    if names:
        updates = [u for u in updates if u.name in names]
    planned = plan_upgrades(entries, updates, _parse_pairs(env, "=", "--env", "KEY=VALUE"))
    rows = [{"name": u.name, "from": u.pinned, "to": u.latest} for u in updates]
    if planned and not dry_run:
        store = _store()

        def apply(doc: dict[str, Any]) -> None:
            for name, new in planned.items():
                doc[name] = new.to_data()

        store.update(apply, action="upgrade " + " ".join(planned))
        for r in rows:
            output.info(f"Upgraded {r['name']}: {r['from']} -> {r['to']}")
    elif not planned:
        output.info("Nothing to upgrade")
    data = {"dry_run": dry_run, "upgrades": rows}
    table = Table(
        ["NAME", "FROM", "TO"],
        [[r["name"], r["from"], r["to"]] for r in rows],
        "nothing to upgrade",
    )
    return output.emit(
        Result("upgrade", data, report.warnings), lambda _: table if dry_run else None
    )
