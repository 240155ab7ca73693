"""The read-only tools of ``mcpctl serve``: each a thin call into the library.

``list_servers`` reads the file; ``health``, ``doctor`` and ``tools`` start or connect to
servers (through :func:`~mcpctl.serve.workspace.before_spawn` first) and stop everything
they started before they return; ``search`` reads the registries' cache (refreshed when
stale); ``snapshot_diff`` compares with a snapshot or lock file. Each returns a model of
:mod:`mcpctl.serve.models`, cleaned (:func:`mcpctl.serve.marks.cleaned`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpctl.serve.marks import Untrusted, cleaned, untrusted
from mcpctl.serve.models import (
    Diagnosis,
    DiffResult,
    HealthResult,
    Listing,
    ProbeError,
    SearchHit,
    SearchResult,
    ServerHealth,
    ServerRow,
    ServerTools,
    Step,
    ToolRow,
    ToolsResult,
)
from mcpctl.serve.workspace import Workspace, before_spawn

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.probe.health import ProbeResult
    from mcpctl.probe.naming import PrefixStyle

__all__ = ["diagnose", "health", "list_servers", "search", "server_row", "snapshot_diff", "tools"]

#: How many search results at most.
MAX_RESULTS = 50


def server_row(name: str, entry: ServerEntry) -> ServerRow:
    """One entry as ``list_servers`` shows it."""
    from mcpctl.config.shown import entry_summary, entry_target
    from mcpctl.render.base import names_used
    from mcpctl.render.delivery import entry_texts

    summary = entry_summary(name, entry)
    # The description is apart, marked: it may be a registry's words, not the user's.
    shown = ("name", "transport", "enabled", "description")
    fields = {k: v for k, v in summary.items() if k not in shown}
    source = entry.source
    return ServerRow(
        name=name,
        state="enabled" if entry.enabled else "disabled",
        transport=entry.effective_transport,
        target=entry_target(summary),
        groups=list(entry.groups),
        secrets=names_used(entry_texts(entry)),
        description=untrusted(entry.description, "config"),
        source=None
        if source is None
        else {
            "registry": source.registry,
            "name": source.name,
            "version": source.version,
        },
        entry=fields,
    )


def list_servers(workspace: Workspace, group: str | None = None) -> Listing:
    """The servers of the config (a group's only, when given); nothing is started.

    Raises:
        GroupNotFoundError: no server is in ``group``.
        and the errors of :meth:`Workspace.read`.
    """
    loaded = workspace.read()
    entries = loaded.config.entries
    members: list[str] | None = None
    if group is not None:
        from mcpctl.config.groups import group_members

        members = group_members(entries, [group])
    rows = [server_row(n, e) for n, e in entries.items() if members is None or n in members]
    listing = Listing(
        config=str(loaded.path), exists=loaded.exists, servers=rows, problems=loaded.warnings
    )
    return cleaned(listing)


class _Probing:
    """The probing calls under way; when the last one ends, what their servers left behind
    (the grandchild of a double fork, adopted by this subreaper) is stopped: a long-running
    server does not wait for its own end for that."""

    running = 0

    async def __aenter__(self) -> None:
        _Probing.running += 1

    async def __aexit__(self, *exc: object) -> None:
        _Probing.running -= 1
        if _Probing.running == 0:
            import anyio.to_thread

            from mcpctl.reaper import reap_orphans

            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(reap_orphans)


def _chosen(
    workspace: Workspace, names: Sequence[str]
) -> tuple[list[tuple[str, ServerEntry, Any]], list[str]]:
    """The servers ``names`` select (default: every enabled one), past the spawn gate."""
    from mcpctl.config.siblings import select_targets

    loaded = workspace.read()
    chosen, warnings = select_targets(loaded.config.entries, {}, names=names)
    before_spawn(workspace, ((name, entry) for name, entry, _ in chosen))
    return chosen, loaded.warnings + warnings


#: The failures whose message is what the server (or its transport) answered, and mcpctl's
#: words for each: the answer itself comes apart, marked as the server's.
_ANSWERED = {
    "mcp_error": "the server answered with an error",
    "not_mcp": "what answered does not speak MCP",
    "connection_closed": "the server closed the connection",
}


def _quoting(text: str, server: str) -> tuple[str, Untrusted | None]:
    """mcpctl's part of a message, and the server's answer it quotes (``X/list failed:
    ANSWER``), marked as the server's."""
    head, sep, tail = text.partition(" failed: ")
    if sep and head.endswith("/list"):
        return f"{head} failed", untrusted(tail, f"server {server}")
    return text, None


def _error(result: ProbeResult) -> ProbeError | None:
    error = result.error
    if error is None:
        return None
    source = f"server {result.name}"
    if error.code in _ANSWERED:
        message, quoted = _ANSWERED[error.code], untrusted(error.message, source)
    else:
        message, quoted = _quoting(error.message, result.name)
    return ProbeError(code=error.code, message=message, hint=error.hint, quoted=quoted)


def _reasons(result: ProbeResult) -> tuple[list[str], list[Untrusted]]:
    """Why a server is degraded, in mcpctl's words, and what the server answered."""
    reasons: list[str] = []
    quoted: list[Untrusted] = []
    for text in result.degraded:
        reason, said = _quoting(text, result.name)
        reasons.append(reason)
        if said is not None:
            quoted.append(said)
    return reasons, quoted


def _server_info(result: ProbeResult) -> Any:
    if result.server_name is None and result.server_version is None:
        return None
    return untrusted(
        {"name": result.server_name, "version": result.server_version}, f"server {result.name}"
    )


async def health(
    workspace: Workspace, names: Sequence[str] = (), timeout: float | None = None
) -> HealthResult:
    """Probe servers at once (default: every enabled one), each within its timeout.

    Raises:
        ServerNotFoundError: a name is not configured.
        and the errors of :meth:`Workspace.read`.
    """
    from mcpctl.probe.health import HealthStatus, probe_all

    chosen, warnings = _chosen(workspace, names)
    async with _Probing():
        results = await probe_all(
            chosen, timeout=timeout, secrets=workspace.secrets(), eras=workspace.eras()
        )
    servers = [
        ServerHealth(
            name=r.name,
            status=r.status.value,
            transport=r.transport,
            protocol=r.protocol_version,
            tool_count=r.tool_count,
            latency_ms=round(r.latency_ms["total"], 1) if "total" in r.latency_ms else None,
            reasons=_reasons(r)[0],
            answered=_reasons(r)[1],
            error=_error(r),
            server_info=_server_info(r),
            stderr=untrusted(r.stderr[-10:], f"server {r.name}"),
        )
        for r in results
    ]
    for r in results:
        warnings += [f"{r.name}: {w}" for w in r.warnings]
    healthy = sum(r.status is HealthStatus.healthy for r in results)
    return cleaned(
        HealthResult(healthy=healthy, total=len(results), servers=servers, warnings=warnings)
    )


async def diagnose(workspace: Workspace, name: str, timeout: float | None = None) -> Diagnosis:
    """``doctor NAME``: one server checked layer by layer (it is started).

    Raises:
        ServerNotFoundError: ``name`` is not configured.
        and the errors of :meth:`Workspace.read`.
    """
    from mcpctl.doctor.server import diagnose_server_async

    entry = workspace.read().entry(name)
    before_spawn(workspace, [(name, entry)])
    async with _Probing():
        found = await diagnose_server_async(
            name, workspace.paths.config, timeout=timeout, eras=workspace.eras()
        )
    steps = [
        Step(
            id=s.id,
            status=s.status,
            ms=round(s.ms, 1),
            detail=s.own_detail,
            fix=s.fix,
            stderr=untrusted(list(s.stderr), f"server {name}"),
        )
        for s in found.steps
    ]
    return cleaned(
        Diagnosis(
            name=found.name, transport=found.transport, ok=found.ok, steps=steps, next=found.next
        )
    )


async def tools(
    workspace: Workspace,
    names: Sequence[str] = (),
    prefix: PrefixStyle = "none",
    timeout: float | None = None,
) -> ToolsResult:
    """The tools of servers as a host sees them, with the tokens each definition costs.

    Raises:
        ServerNotFoundError: a name is not configured.
        and the errors of :meth:`Workspace.read`.
    """
    import anyio.to_thread

    from mcpctl.probe.costs import catalog_costs
    from mcpctl.probe.health import probe_all
    from mcpctl.tokencount import TokenCountCache

    chosen, warnings = _chosen(workspace, names)
    async with _Probing():
        results = await probe_all(
            chosen, timeout=timeout, secrets=workspace.secrets(), eras=workspace.eras()
        )
    counts = TokenCountCache.in_dir(workspace.paths.cache_dir)
    # Counting takes as long as the probes were allowed to (as `mcpctl tools`); the rest is
    # estimated from its length.
    limit = timeout or max((e.timeout_ms / 1000 for _, e, _ in chosen), default=0.0)
    costs = await anyio.to_thread.run_sync(lambda: catalog_costs(
        results, {n: e.tools for n, e, _ in chosen}, prefix, counts=counts,
        deadline=time.monotonic() + limit,
    ))  # fmt: skip
    counts.save()
    rows = [
        ToolRow(
            name=t.name,
            server=t.server,
            tool=t.tool,
            exposed=t.exposed,
            tokens=t.tokens,
            tokens_estimated=t.estimated,
            params=t.params,
            description=untrusted(t.description, f"server {t.server}"),
            input_schema=untrusted(t.input_schema, f"server {t.server}"),
        )
        for t in costs.tools
    ]
    servers = [
        ServerTools(
            name=r.name, tokens=costs.totals.get(r.name), tool_count=r.tool_count, error=_error(r)
        )
        for r in results
    ]
    for r in results:
        warnings += [f"{r.name}: {w}" for w in r.warnings]
    collisions = [c.name for c in costs.collisions]
    return cleaned(
        ToolsResult(
            encoding=costs.encoding,
            total_tokens=costs.total,
            tools=rows,
            servers=servers,
            collisions=collisions,
            warnings=warnings,
        )
    )


def search(
    workspace: Workspace,
    query: str,
    *,
    transport: str | None = None,
    limit: int = 10,
    offline: bool = False,
) -> SearchResult:
    """The registries' servers matching ``query`` (the cache, synced first when stale).

    Blocking (SQLite, and the registries over the network): run it in a thread.

    Raises:
        UsageError: registries.json is not valid.
    """
    from mcpctl.registry.cache import DiscoveryCache
    from mcpctl.registry.sources import load_sources
    from mcpctl.registry.syncing import refresh

    sources = load_sources(workspace.paths.registries)
    cache = DiscoveryCache.open(workspace.paths.discovery_cache)
    report = refresh(cache, sources, offline=offline)
    hits = cache.search(
        query,
        registries=[s.id for s in sources],
        transport=transport,
        limit=max(1, min(limit, MAX_RESULTS)),
    )
    results = [
        SearchHit(
            name=h.name,
            version=h.version,
            status=h.status,
            transports=list(h.transports),
            package_types=list(h.package_types),
            needs_secrets=h.needs_secrets,
            registries=list(h.registries),
            title=untrusted(h.title, "registry " + ",".join(h.registries)),
            description=untrusted(h.description, "registry " + ",".join(h.registries)),
        )
        for h in hits
    ]
    return cleaned(SearchResult(query=query, results=results, warnings=list(report.warnings)))


def _server_change(change: Any, name: str) -> dict[str, Any]:
    """A changed server's JSON, what the server sent (old and new) marked as its words."""
    data: dict[str, Any] = change.to_data()
    if "serverInfo" in data:
        data["serverInfo"] = untrusted(data["serverInfo"], f"server {name}")
    data["changed"] = [
        {**item, "fields": untrusted(item["fields"], f"server {name}")} for item in data["changed"]
    ]
    return data


async def snapshot_diff(
    workspace: Workspace, against: str | None = None, probe: bool = False
) -> DiffResult:
    """What changed since the snapshot ``against`` (default: the last-known one); with
    ``probe``, every enabled server is probed and its tools compared too.

    Raises:
        UsageError: ``against`` names no snapshot, or a file that is not one.
        and the errors of :meth:`Workspace.read`.
    """
    from mcpctl.errors import UsageError
    from mcpctl.snapshot.diff import diff_snapshots
    from mcpctl.snapshot.files import load_snapshot
    from mcpctl.snapshot.probing import take_snapshot_async

    source = Path(against).expanduser() if against else workspace.paths.snapshot
    old = load_snapshot(source)
    if old is None and against:
        raise UsageError(
            f"there is no snapshot at {source}",
            hint=f"record one with: mcpctl snapshot save --probe -o {source}",
        )
    loaded = workspace.read()
    entries = loaded.config.entries
    if probe:
        before_spawn(workspace, ((n, e) for n, e in entries.items() if e.enabled))
    async with _Probing():
        new = await take_snapshot_async(
            entries, probe=probe, secrets=workspace.secrets(), eras=workspace.eras()
        )
    changes = diff_snapshots(old, new)
    notes: list[str] = []
    if old is None:
        notes.append("no earlier snapshot: nothing to compare")
    elif old.probed and not probe:
        notes.append(f"tools were not compared: {source} has them; call again with probe=true")
    elif probe and not old.probed:
        notes.append(f"tools were not compared: {source} has no probe data")
    data = changes.to_data()
    result = DiffResult(
        against=str(source),
        earlier=old.timestamp if old is not None else None,
        probed=probe,
        tools_compared=bool(probe and old is not None and old.probed),
        changed=not changes.empty,
        added=data.get("added", []),
        removed=data.get("removed", []),
        servers=[_server_change(c, c.name) for c in changes.changed],
        notes=notes,
        warnings=loaded.warnings,
    )
    return cleaned(result)
