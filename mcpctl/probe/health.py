"""Health probes: connect, initialize, list every page of tools, ping -- many servers at once.

A probe runs inside the server's timeout. Failures become a :class:`ProbeError` with a stable
code and a hint (:mod:`mcpctl.probe.failures`), never an exception: one bad server never
breaks the report of the others.

This module imports the MCP SDK only inside the functions that connect, so that a missing
command is reported in milliseconds, before the SDK's second of imports.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.config.placeholders import MissingPolicy, SecretSource
from mcpctl.errors import PlaceholderError
from mcpctl.probe.eras import Era, EraMemory
from mcpctl.probe.failures import classify, precheck, timeout_error
from mcpctl.probe.spawn import ProbeError
from mcpctl.probe.tools import ToolInfo, list_all_tools

if TYPE_CHECKING:
    from anyio import CapacityLimiter
    from anyio.abc import Process

    from mcpctl.config.placeholders import ResolvedEntry
    from mcpctl.probe.spawn import StdioDiagnostics

__all__ = [
    "ProbeError",
    "ProbeResult",
    "ServerKind",
    "Speaking",
    "default_concurrency",
    "probe",
    "probe_all",
]

T = TypeVar("T")
ServerKind = Literal["internal", "external"]


@dataclass
class ProbeResult:
    """The health of one server (the shape the orchestrator of docs/config.md reports, and more).

    ``listing_ttl_ms`` and ``listing_scope`` are the tool listing's caching hints (the
    stateless era's; ``None`` when the server gave none); ``from_cache`` is the age in
    seconds of a listing served from :class:`mcpctl.probe.listcache.ListingCache` instead
    of a probe.
    """

    name: str
    type: ServerKind = "external"
    transport: str = "stdio"
    available: bool = False
    healthy: bool = False
    latency_ms: dict[str, float] = field(default_factory=dict)
    server_name: str | None = None
    server_version: str | None = None
    protocol_version: str | None = None
    era: Era | None = None
    capabilities: list[str] = field(default_factory=list)
    tool_count: int | None = None
    tools: list[ToolInfo] = field(default_factory=list)
    listing_ttl_ms: int | None = None
    listing_scope: str | None = None
    from_cache: float | None = None
    error: ProbeError | None = None
    stderr: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self, *, with_tools: bool = False) -> dict[str, Any]:
        """JSON form: ``name, available, healthy, type`` first, as that orchestrator reports."""
        data: dict[str, Any] = {
            "name": self.name,
            "available": self.available,
            "healthy": self.healthy,
            "type": self.type,
            "transport": self.transport,
            "latency_ms": {k: round(v, 1) for k, v in self.latency_ms.items()},
            "server": {"name": self.server_name, "version": self.server_version},
            "protocol_version": self.protocol_version,
            "protocol": self.era.to_dict() if self.era is not None else None,
            "capabilities": self.capabilities,
            "tool_count": self.tool_count,
            "error": self.error.to_dict() if self.error else None,
        }
        if self.listing_ttl_ms is not None or self.from_cache is not None:
            data["listing_cache"] = {
                "ttl_ms": self.listing_ttl_ms,
                "scope": self.listing_scope,
                "age_s": None if self.from_cache is None else round(self.from_cache, 1),
            }
        if self.warnings:
            data["warnings"] = self.warnings
        if self.stderr:
            data["stderr"] = self.stderr
        if with_tools:
            data["tools"] = [t.to_dict() for t in self.tools]
        return data


def default_concurrency(transport: str = "stdio") -> int:
    """How many servers to probe at once (spawned ones: how many may be starting at once).

    Spawned servers spend their start-up on the CPU (a Python server imports for over a
    second): more of them at once than CPUs only adds contention -- measured here, 20
    mcp-server-time probes cost 10-15 % more CPU at 4-8 at a time than at 3 on 2 cores.
    So stdio gets one more than the CPU count; remote probes mostly wait on the network
    and get 4 per CPU (8 to 32).
    """
    cpus = os.cpu_count() or 1
    if transport == "stdio":
        return max(2, cpus + 1)
    return max(8, min(32, 4 * cpus))


def max_running(starting: int) -> int:
    """How many spawned servers may run at once, most of them waiting (each holds memory)."""
    return max(16, 4 * starting)


def _capabilities(caps: Any) -> list[str]:
    names = ("tools", "resources", "prompts", "logging", "completions", "experimental")
    return [n for n in names if getattr(caps, n, None) is not None]


async def probe(
    name: str,
    entry: ServerEntry,
    *,
    kind: ServerKind = "external",
    timeout: float | None = None,
    policy: MissingPolicy = "error",
    secrets: SecretSource | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
) -> ProbeResult:
    """Probe one server: connect, settle the protocol era, list every page of tools, and
    ping a server of the handshake era (the stateless one has no ping).

    ``protocol`` and ``eras`` are those of :func:`mcpctl.probe.connect.connect`. Never
    raises for a failing server: the result says what failed. The whole probe, server
    shutdown included, ends within ``timeout`` (default: the entry's) plus a second.
    """
    return await _probe(name, entry, kind, timeout, policy, secrets, Speaking(protocol, eras))


@dataclass(frozen=True)
class Speaking:
    """Which protocol era to speak (``None``: the entry's, else ``auto``) and where detected
    eras are remembered (see :func:`mcpctl.probe.connect.connect`)."""

    protocol: ProtocolMode | None = None
    eras: EraMemory | None = None


async def _probe(
    name: str,
    entry: ServerEntry,
    kind: ServerKind,
    timeout: float | None,
    policy: MissingPolicy,
    secrets: SecretSource | None,
    speaking: Speaking,
    started_server: tuple[Process, ResolvedEntry] | None = None,
    done: Callable[[], None] | None = None,
    diag: StdioDiagnostics | None = None,
) -> ProbeResult:
    result = ProbeResult(name=name, type=kind, transport=entry.effective_transport)
    started = time.perf_counter()
    early = precheck(entry)
    if early is not None:
        result.error = early
        result.latency_ms["total"] = (time.perf_counter() - started) * 1000
        return result
    import anyio

    from mcpctl.probe.connect import connect
    from mcpctl.probe.spawn import StdioDiagnostics

    seconds = timeout if timeout is not None else entry.timeout_ms / 1000
    if diag is None and not entry.is_remote:
        diag = StdioDiagnostics()
    process, resolved = started_server if started_server else (None, None)
    try:
        with anyio.fail_after(seconds):
            async with connect(
                name, entry, timeout=seconds, policy=policy, secrets=secrets,
                diagnostics=diag, process=process, resolved=resolved,
                protocol=speaking.protocol, eras=speaking.eras,
            ) as conn:  # fmt: skip
                result.transport = conn.transport
                result.available = True
                result.era = conn.era
                result.latency_ms["connect"] = conn.connect_ms
                exchange = "initialize" if conn.era.name == "legacy" else "discover"
                result.latency_ms[exchange] = conn.negotiate_ms
                info = conn.server_info
                if info is not None:
                    result.server_name, result.server_version = info.name, info.version
                result.protocol_version = conn.era.version
                result.capabilities = _capabilities(conn.capabilities)
                t0 = time.perf_counter()
                if "tools" in result.capabilities:
                    result.tools = await list_all_tools(conn)
                result.tool_count = len(result.tools)
                if conn.era.name == "modern":  # the handshake era has no caching hints
                    result.listing_ttl_ms = conn.listing.ttl_ms
                    result.listing_scope = conn.listing.cache_scope
                t1 = time.perf_counter()
                result.latency_ms["list_tools"] = (t1 - t0) * 1000
                if conn.era.name == "legacy":
                    await conn.session.send_ping()
                    result.latency_ms["ping"] = (time.perf_counter() - t1) * 1000
                result.warnings = list(conn.listing.warnings)
                result.healthy = True
                if done is not None:
                    done()  # the answer is in: the shutdown need not hold a slot
    except TimeoutError:
        result.error = timeout_error(seconds, diag)
    except Exception as exc:  # classified below: one server's failure is data, not a crash
        result.error = classify(exc, entry, diag, name)
    if diag is not None and (result.error is not None or not result.healthy):
        result.stderr = diag.tail()
    if result.error is not None:
        result.healthy = False
    result.latency_ms["total"] = (time.perf_counter() - started) * 1000
    return result


async def probe_all(
    entries: Mapping[str, ServerEntry] | Iterable[tuple[str, ServerEntry, ServerKind]],
    *,
    concurrency: int | None = None,
    timeout: float | None = None,
    policy: MissingPolicy = "error",
    secrets: SecretSource | None = None,
    on_result: Callable[[ProbeResult], object] | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
) -> list[ProbeResult]:
    """Probe many servers at once, in input order.

    At most ``concurrency`` at a time (default: :func:`default_concurrency`, separately for
    spawned and remote servers). For spawned servers that bounds the ones *starting*: a
    server's start-up slot is freed as soon as its answer is in, or once it is only waiting
    (:func:`mcpctl.probe.reaper.until_waiting`), so that servers that hang do not delay the
    others; at most :func:`max_running` run at once.

    ``entries`` is a name -> entry mapping (all external) or (name, entry, kind) triples.
    The first stdio servers are started before the MCP SDK is imported, so that they boot
    while mcpctl loads it. ``on_result`` is called with each result as it comes in (for
    progress), in the event loop's thread. ``protocol`` and ``eras`` are those of
    :func:`mcpctl.probe.connect.connect`.
    """
    speaking = Speaking(protocol, eras)

    def work(name: str, entry: ServerEntry, kind: ServerKind, *rest: Any) -> Awaitable[ProbeResult]:
        return _probe(name, entry, kind, timeout, policy, secrets, speaking, *rest)

    return await run_all(
        entries, work, concurrency=concurrency, policy=policy, secrets=secrets, on_done=on_result
    )


#: Probes one server: (name, entry, kind) and, for a spawned one, the process started early
#: (or ``None``), the function that frees its start-up slot, and its stderr diagnostics.
Work = Callable[..., Awaitable[T]]


async def run_all(
    entries: Mapping[str, ServerEntry] | Iterable[tuple[str, ServerEntry, ServerKind]],
    work: Work[T],
    *,
    concurrency: int | None = None,
    policy: MissingPolicy = "error",
    secrets: SecretSource | None = None,
    on_done: Callable[[T], object] | None = None,
) -> list[T]:
    """``work`` done for many servers at once, the way :func:`probe_all` probes; the results
    in input order (``on_done`` is called with each as it comes in)."""
    import anyio

    items: list[tuple[str, ServerEntry, ServerKind]] = (
        [(n, e, "external") for n, e in entries.items()]
        if isinstance(entries, Mapping)
        else list(entries)
    )
    stdio_limit = concurrency or default_concurrency("stdio")
    results: list[T | None] = [None] * len(items)
    started = await start_first(items, stdio_limit, policy, secrets)
    if started or any(entry.is_remote for _, entry, _ in items):
        import mcpctl.probe.connect  # noqa: F401 -- the SDK's import, while those servers boot

    starting = anyio.CapacityLimiter(stdio_limit)
    running = anyio.CapacityLimiter(max_running(stdio_limit))
    remote = anyio.CapacityLimiter(concurrency or default_concurrency("remote"))

    async def one(i: int, name: str, entry: ServerEntry, kind: ServerKind) -> None:
        if entry.is_remote:
            async with remote:
                results[i] = done = await work(name, entry, kind)
        else:
            async with running:
                results[i] = done = await start_slot(starting, lambda release, diag: work(
                    name, entry, kind, started.pop(i, None), release, diag
                ))  # fmt: skip
        if on_done is not None:
            on_done(done)

    try:
        async with anyio.create_task_group() as tg:
            for i, (name, entry, kind) in enumerate(items):
                tg.start_soon(one, i, name, entry, kind)
    finally:
        from mcpctl.probe.spawn import stop_server

        if started:  # never handed over (cancelled early): stopped all at once
            with anyio.CancelScope(shield=True):
                async with anyio.create_task_group() as tg:
                    for process, _ in started.values():
                        tg.start_soon(stop_server, process)
    return [r for r in results if r is not None]


async def start_slot(
    limiter: CapacityLimiter,
    probe_with: Callable[[Callable[[], None], StdioDiagnostics], Awaitable[T]],
) -> T:
    """Run a stdio probe holding a start-up slot of ``limiter`` until the server answers or
    is only waiting, whichever comes first."""
    import anyio

    from mcpctl.probe.reaper import until_waiting
    from mcpctl.probe.spawn import StdioDiagnostics

    token = object()
    await limiter.acquire_on_behalf_of(token)
    held = True

    def release() -> None:
        nonlocal held
        if held:
            held = False
            limiter.release_on_behalf_of(token)

    diag = StdioDiagnostics()

    async def release_when_waiting() -> None:
        await until_waiting(lambda: diag.pid)
        release()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(release_when_waiting)
            result = await probe_with(release, diag)
            tg.cancel_scope.cancel()
        return result
    finally:
        release()


async def start_first(
    items: list[tuple[str, ServerEntry, ServerKind]],
    limit: int,
    policy: MissingPolicy,
    secrets: SecretSource | None,
) -> dict[int, tuple[Process, ResolvedEntry]]:
    """Start up to ``limit`` stdio servers that look startable; failures are left to _probe."""
    from mcpctl.config.placeholders import resolve_entry
    from mcpctl.probe.spawn import spawn_server

    started: dict[int, tuple[Process, ResolvedEntry]] = {}
    for i, (name, entry, _) in enumerate(items):
        if len(started) >= limit:
            break
        if entry.is_remote or precheck(entry) is not None:
            continue
        try:
            resolved = resolve_entry(name, entry, policy=policy, secrets=secrets)
            if resolved is None:
                continue
            started[i] = (await spawn_server(resolved.entry), resolved)
        except (PlaceholderError, OSError):
            continue  # _probe reports it, with the right code
    return started
