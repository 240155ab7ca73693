"""Health probes: connect, initialize, list every page of tools, ping -- many servers at once.

A probe runs inside the server's timeout. Failures become a :class:`ProbeError` with a stable
code and a hint (:mod:`mcpctl.probe.failures`), never an exception: one bad server never
breaks the report of the others. Each result has a :class:`HealthStatus`, the verdict a
client would show: ``healthy``, ``degraded`` (it answered, but a list failed, its tool list
had to be repaired, or it was slow), ``needs_auth``, ``unhealthy`` or ``unavailable``.

This module imports the MCP SDK only inside the functions that connect, so that a missing
command is reported in milliseconds, before the SDK's second of imports.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.config.placeholders import MissingPolicy, SecretSource
from mcpctl.errors import InvalidEntryError, PlaceholderError, UsageError, closest
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.eras import Era, EraMemory
from mcpctl.probe.failures import classify, list_failed, precheck, timeout_error
from mcpctl.probe.toolinfo import ToolInfo, list_all_tools

if TYPE_CHECKING:
    from anyio import CapacityLimiter
    from anyio.abc import Process

    from mcpctl.config.placeholders import ResolvedEntry
    from mcpctl.probe.connect import Connection
    from mcpctl.probe.spawn import StdioDiagnostics

__all__ = [
    "DEFAULT_SLOW",
    "FAILING",
    "HealthStatus",
    "ProbeError",
    "ProbeResult",
    "ServerKind",
    "Speaking",
    "default_concurrency",
    "failing_states",
    "probe",
    "probe_all",
]

T = TypeVar("T")
ServerKind = Literal["internal", "external"]

#: Seconds a request may take before a server counts as slow (``degraded``).
DEFAULT_SLOW = 2.0


class HealthStatus(StrEnum):
    """The verdict on one server, as a client would show it.

    ``healthy``: it answered everything, in time. ``degraded``: it answered, but a list
    failed (tools, prompts or resources), mcpctl had to repair its tool list, or a request
    took longer than the slow limit. ``needs_auth``: it asks for a sign-in, or the OAuth
    sign-in its entry uses is missing or can no longer be renewed (error ``auth_required``).
    ``unhealthy``: it answered, then failed. ``unavailable``: it could not be reached or
    started.
    """

    healthy = "healthy"
    degraded = "degraded"
    needs_auth = "needs_auth"
    unhealthy = "unhealthy"
    unavailable = "unavailable"


#: The states that fail a health check unless told otherwise: all but ``healthy``.
FAILING = frozenset(s for s in HealthStatus if s is not HealthStatus.healthy)


def failing_states(names: Iterable[str]) -> frozenset[HealthStatus]:
    """The states that fail a health check, from names (each may be a comma-separated
    list); ``unhealthy`` includes ``unavailable`` (a server that could not even be reached
    is no healthier than one that failed once reached). No names: :data:`FAILING`.

    Raises:
        UsageError: a name that is not a failing state.
    """
    choices = [s.value for s in HealthStatus if s in FAILING]
    chosen: set[HealthStatus] = set()
    for name in (part.strip() for text in names for part in text.split(",")):
        if not name:
            continue
        if name.lower() not in choices:
            guess = closest(name, choices)
            raise UsageError(
                f"--fail-on {name!r} is not a state"
                + (f" (did you mean {guess!r}?)" if guess else ""),
                hint=f"choose among {', '.join(choices)} (comma-separated, or the option repeated)",
            )
        chosen.add(HealthStatus(name.lower()))
    if HealthStatus.unhealthy in chosen:
        chosen.add(HealthStatus.unavailable)
    return frozenset(chosen) or FAILING


#: The requests a slow limit applies to, by their key in ``latency_ms``, as people name them.
_STEPS = {
    "list_tools": "tools/list",
    "list_prompts": "prompts/list",
    "list_resources": "resources/list",
    "ping": "ping",
}


@dataclass
class ProbeResult:
    """The health of one server (the shape the orchestrator of docs/config.md reports, and more).

    ``prompt_count`` and ``resource_count`` count the first page of each list, when the
    server offers it and the list succeeded (not in :meth:`to_dict`: ``mcpctl doctor NAME``
    shows them). ``listing_ttl_ms`` and ``listing_scope`` are the tool listing's caching hints (the
    stateless era's; ``None`` when the server gave none); ``from_cache`` is the age in
    seconds of a listing served from :class:`mcpctl.probe.listcache.ListingCache` instead
    of a probe.

    :attr:`status` is the verdict; ``healthy`` keeps its first meaning -- the probe went
    through, the tool list is known -- so it is true for a server that is ``degraded`` only
    by a failed prompt or resource list, a repair or slowness, and false for one whose
    ``tools/list`` failed (``error`` code ``list_failed``). ``degraded`` holds the reasons
    of a degraded server that has no error, one line each.
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
    prompt_count: int | None = None
    resource_count: int | None = None
    tools: list[ToolInfo] = field(default_factory=list)
    listing_ttl_ms: int | None = None
    listing_scope: str | None = None
    from_cache: float | None = None
    error: ProbeError | None = None
    stderr: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)

    @property
    def status(self) -> HealthStatus:
        """The verdict: see :class:`HealthStatus`."""
        error = self.error
        if error is not None:
            if error.code == "auth_required":
                return HealthStatus.needs_auth
            if error.code == "list_failed":
                return HealthStatus.degraded
            return HealthStatus.unhealthy if self.available else HealthStatus.unavailable
        if not self.healthy:
            return HealthStatus.unhealthy if self.available else HealthStatus.unavailable
        return HealthStatus.degraded if self.degraded else HealthStatus.healthy

    @property
    def reasons(self) -> list[str]:
        """Why it is not healthy, one line each: the error, then what degraded it."""
        first = [f"{self.error.code}: {self.error.message}"] if self.error is not None else []
        return first + self.degraded

    def to_dict(self, *, with_tools: bool = False) -> dict[str, Any]:
        """JSON form: ``name, available, healthy, type`` first, as that orchestrator reports;
        then ``status`` (see :class:`HealthStatus`)."""
        data: dict[str, Any] = {
            "name": self.name,
            "available": self.available,
            "healthy": self.healthy,
            "type": self.type,
            "status": self.status.value,
            "degraded": self.degraded,
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
    slow: float | None = DEFAULT_SLOW,
) -> ProbeResult:
    """Probe one server: connect, settle the protocol era, list every page of tools, list
    the first page of prompts and of resources when it offers them, and ping a server of the
    handshake era (the stateless one has no ping).

    ``protocol`` and ``eras`` are those of :func:`mcpctl.probe.connect.connect`. ``slow``:
    the seconds a request may take before the server is ``degraded`` (``None``: no limit);
    the handshake, which includes a spawned server's start-up, is not held to it. Never
    raises for a failing server: the result says what failed. The whole probe, server
    shutdown included, ends within ``timeout`` (default: the entry's) plus a second.
    """
    speaking = Speaking(protocol, eras, slow)
    return await _probe(name, entry, kind, timeout, policy, secrets, speaking)


@dataclass(frozen=True)
class Speaking:
    """Which protocol era to speak (``None``: the entry's, else ``auto``) and where detected
    eras are remembered (see :func:`mcpctl.probe.connect.connect`); ``slow``: the seconds a
    request may take before the server is ``degraded`` (``None``: no limit)."""

    protocol: ProtocolMode | None = None
    eras: EraMemory | None = None
    slow: float | None = DEFAULT_SLOW


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

    async def work(conn: Connection) -> None:
        await _list_and_ping(conn, result, entry, diag, name)

    failure, diag = await on_connection(
        name, entry, work, timeout=timeout, policy=policy, secrets=secrets, speaking=speaking,
        started_server=started_server, done=done, diag=diag,
    )  # fmt: skip
    if failure is not None:  # else the work's own verdict stands (a failed tools list)
        result.error = failure
    if diag is not None and (result.error is not None or not result.healthy):
        result.stderr = diag.tail()
    if result.error is not None:
        result.healthy = False
        if result.error.code != "list_failed":
            result.degraded = []  # it failed: what else was wrong no longer matters
    elif result.healthy:
        _judge(result, speaking.slow)
    # One clock, doctor's too: from the server's start (its process spawned, perhaps before
    # this probe began; a remote one: the probe's start) to the probe's end.
    if diag is not None and diag.started_at is not None:
        started = min(started, diag.started_at)
    result.latency_ms["total"] = (time.perf_counter() - started) * 1000
    return result


async def on_connection(
    name: str,
    entry: ServerEntry,
    work: Callable[[Connection], Awaitable[None]],
    *,
    timeout: float | None,
    secrets: SecretSource | None,
    speaking: Speaking,
    policy: MissingPolicy = "error",
    started_server: tuple[Process, ResolvedEntry] | None = None,
    done: Callable[[], None] | None = None,
    diag: StdioDiagnostics | None = None,
) -> tuple[ProbeError | None, StdioDiagnostics | None]:
    """Connect to one server as a probe does and run ``work`` on the connection, all within
    the probe's deadline (``timeout``, else the entry's).

    The frame health probes and catalogs share: the entry's precheck, the server spawned (or
    ``started_server`` adopted), the deadline, ``done`` called once the work is in (the
    shutdown need not hold a start-up slot). Returns the failure, classified into the probe's
    stable codes (``None`` when ``work`` finished), and the stdio diagnostics (stderr tail);
    one server's failure is data, never raised.
    """
    early = precheck(entry)
    if early is not None:
        return early, diag
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
                await work(conn)
                if done is not None:
                    done()
    except TimeoutError:
        error = timeout_error(seconds, diag)
        if diag is not None:  # a stdio server: perhaps it is still downloading its package
            from mcpctl.probe.coldstart import cold_start

            error = cold_start(name, entry, error, diag.tail())
        return error, diag
    except Exception as exc:  # classified: one server's failure is data, not a crash
        return classify(exc, entry, diag, name), diag
    return None, diag


async def _list_and_ping(
    conn: Connection, result: ProbeResult, entry: ServerEntry, diag: Any, name: str
) -> None:
    """The probe's requests once the era is settled; a list the server answers with an
    error degrades it (``list_failed`` for tools), any other failure raises."""
    result.transport = conn.transport
    result.available = True
    result.era = conn.era
    result.latency_ms["connect"] = conn.connect_ms
    exchange = "initialize" if conn.era.name == "legacy" else "discover"
    result.latency_ms[exchange] = conn.negotiate_ms
    result.protocol_version = conn.era.version
    result.capabilities = _capabilities(conn.capabilities)
    t0 = time.perf_counter()
    if "tools" in result.capabilities:
        try:
            result.tools = await list_all_tools(conn)
        except Exception as exc:  # an error answer degrades; anything else is re-raised
            error = list_failed("tools", exc, entry, diag, name)
            if error is None:
                raise
            result.error = error
    if result.error is None:
        result.tool_count = len(result.tools)
    # The first request may have found that a server that said it is stateless is not.
    result.era, result.protocol_version = conn.era, conn.era.version
    result.capabilities = _capabilities(conn.capabilities)
    info = conn.server_info
    if info is not None:
        result.server_name, result.server_version = info.name, info.version
    if conn.era.name == "modern":  # the handshake era has no caching hints
        result.listing_ttl_ms = conn.listing.ttl_ms
        result.listing_scope = conn.listing.cache_scope
    result.latency_ms["list_tools"] = (time.perf_counter() - t0) * 1000
    session = conn.session
    for what, key, offered, list_page in (
        ("prompts", "list_prompts", "prompts", session.list_prompts),
        ("resources", "list_resources", "resources", session.list_resources),
    ):
        if offered not in result.capabilities:
            continue
        t = time.perf_counter()
        try:
            page = await conn.request(list_page)
            count = len(getattr(page, what, None) or [])
            if what == "prompts":
                result.prompt_count = count
            else:
                result.resource_count = count
        except Exception as exc:  # as for tools: an error answer degrades
            error = list_failed(what, exc, entry, diag, name)
            if error is None:
                raise
            result.degraded.append(error.message)
        result.latency_ms[key] = (time.perf_counter() - t) * 1000
    if conn.era.name == "legacy":
        t = time.perf_counter()
        await session.send_ping()
        result.latency_ms["ping"] = (time.perf_counter() - t) * 1000
    result.warnings = list(conn.listing.warnings)
    result.healthy = result.error is None


def _judge(result: ProbeResult, slow: float | None) -> None:
    """What degrades a server that answered everything: repairs, then slowness."""
    if result.warnings:
        count = len(result.warnings)
        result.degraded.append(
            f"mcpctl repaired its tool list ({count} problem{'s' if count != 1 else ''}: "
            f"{result.warnings[0]}{'; ...' if count > 1 else ''})"
        )
    if slow is None:
        return
    # Only the requests after the handshake count: a spawned server's handshake includes its
    # start-up, and detecting the era may wait on a server that ignores server/discover.
    steps = [k for k in _STEPS if k in result.latency_ms]
    if not steps:
        return
    slowest = max(steps, key=lambda k: result.latency_ms[k])
    took = result.latency_ms[slowest]
    if took > slow * 1000:
        result.degraded.append(
            f"slow: {_STEPS[slowest]} took {took:.0f} ms (the limit is {slow * 1000:.0f} ms)"
        )


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
    slow: float | None = DEFAULT_SLOW,
) -> list[ProbeResult]:
    """Probe many servers at once, in input order.

    At most ``concurrency`` at a time (default: :func:`default_concurrency`, separately for
    spawned and remote servers). For spawned servers that bounds the ones *starting*: a
    server's start-up slot is freed as soon as its answer is in, or once it is only waiting
    (:func:`mcpctl.reaper.until_waiting`), so that servers that hang do not delay the
    others; at most :func:`max_running` run at once.

    ``entries`` is a name -> entry mapping (all external) or (name, entry, kind) triples.
    The first stdio servers are started before the MCP SDK is imported, so that they boot
    while mcpctl loads it. ``on_result`` is called with each result as it comes in (for
    progress), in the event loop's thread. ``protocol`` and ``eras`` are those of
    :func:`mcpctl.probe.connect.connect`; ``slow`` is that of :func:`probe`.
    """
    speaking = Speaking(protocol, eras, slow)

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
    spawned_at: dict[int, float] = {}
    started = await start_first(items, stdio_limit, policy, secrets, spawned_at)
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

                def probe_with(release: Callable[[], None], diag: StdioDiagnostics) -> Any:
                    diag.started_at = spawned_at.pop(i, None)  # its latency's start
                    return work(name, entry, kind, started.pop(i, None), release, diag)

                results[i] = done = await start_slot(starting, probe_with)
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

    from mcpctl.probe.spawn import StdioDiagnostics
    from mcpctl.reaper import until_waiting

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
    spawned_at: dict[int, float] | None = None,
) -> dict[int, tuple[Process, ResolvedEntry]]:
    """Start up to ``limit`` stdio servers that look startable; failures are left to _probe.
    Should anything else go wrong, the servers started so far are stopped before it is
    raised: none is left running. ``spawned_at`` is told when each was started."""
    import anyio

    from mcpctl.config.placeholders import resolve_entry
    from mcpctl.probe.spawn import spawn_server, stop_server

    started: dict[int, tuple[Process, ResolvedEntry]] = {}
    try:
        for i, (name, entry, _) in enumerate(items):
            if len(started) >= limit:
                break
            if entry.is_remote or precheck(entry) is not None:
                continue
            try:
                resolved = resolve_entry(name, entry, policy=policy, secrets=secrets)
                if resolved is None:
                    continue
                at = time.perf_counter()
                started[i] = (await spawn_server(resolved.entry), resolved)
                if spawned_at is not None:
                    spawned_at[i] = at
            except (PlaceholderError, InvalidEntryError, OSError):
                continue  # _probe reports it, with the right code
    except BaseException:
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for process, _ in started.values():
                    tg.start_soon(stop_server, process)
        raise
    return started
