"""Health probes: connect, initialize, list every page of tools, ping -- many servers at once.

A probe runs inside the server's timeout. Failures become a :class:`ProbeError` with a stable
code and a hint (:mod:`mcpctl.probe.failures`), never an exception: one bad server never
breaks the report of the others. Each result has a :class:`HealthStatus`, the verdict a
client would show: ``healthy``, ``degraded`` (it answered, but a list failed, its tool list
had to be repaired, or it was slow), ``needs_auth``, ``unhealthy`` or ``unavailable``.

The result and its verdict are :mod:`mcpctl.probe.healthstatus`, the loop over many servers
:mod:`mcpctl.probe.fanout`; their public names are importable from here too.

This module imports the MCP SDK only inside the functions that connect, so that a missing
command is reported in milliseconds, before the SDK's second of imports.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.config.placeholders import MissingPolicy, SecretSource
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.eras import EraMemory
from mcpctl.probe.failures import classify, list_failed, precheck, timeout_error
from mcpctl.probe.fanout import default_concurrency, max_running, run_all, start_first, start_slot
from mcpctl.probe.healthstatus import (
    DEFAULT_SLOW,
    FAILING,
    HealthStatus,
    ProbeResult,
    ServerKind,
    failing_states,
    judge,
)
from mcpctl.probe.toolinfo import list_all_tools

if TYPE_CHECKING:
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
    "max_running",
    "probe",
    "probe_all",
    "run_all",
    "start_first",
    "start_slot",
]


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
        judge(result, speaking.slow)
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
