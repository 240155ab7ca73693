"""Many servers at once: how many are started at a time, and the loop that probes (or
catalogs) them all.

:func:`run_all` does one piece of work per server, at most :func:`default_concurrency` at a
time: for spawned servers that bounds the ones *starting* (:func:`start_slot` frees a slot
once the server answers or is only waiting), at most :func:`max_running` running at once;
:func:`start_first` starts the first stdio servers before the MCP SDK is imported, so that
they boot while mcpctl loads it. :func:`mcpctl.probe.health.probe_all` and the catalogs
(:mod:`mcpctl.probe.catalog`) run through it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import MissingPolicy, SecretSource
from mcpctl.errors import InvalidEntryError, PlaceholderError
from mcpctl.probe.failures import precheck
from mcpctl.probe.healthstatus import ServerKind

if TYPE_CHECKING:
    from anyio import CapacityLimiter
    from anyio.abc import Process

    from mcpctl.config.placeholders import ResolvedEntry
    from mcpctl.probe.spawn import StdioDiagnostics

__all__ = [
    "Work",
    "default_concurrency",
    "max_running",
    "run_all",
    "start_first",
    "start_slot",
]

T = TypeVar("T")


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
