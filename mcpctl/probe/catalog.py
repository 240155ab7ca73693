"""What a server offers, whole: who it is, its instructions, and every tool, prompt and
resource template as it sent them -- the material of a snapshot's fingerprints.

A catalog connects the way a health probe does (:mod:`mcpctl.probe.health`: the same
connection, timeouts, start-up slots and failure codes), then lists every page of tools, and
of prompts and resource templates when the server says it has them. Definitions are kept as
JSON objects, every field included (``_meta``, ``icons``, ``outputSchema``...): a tool is
what all of it says, not only its name and description. No SDK type leaves this module.

A failing server gives a :class:`Catalog` with ``error`` set (the probe's stable code),
never an exception: one bad server never breaks the catalog of the others.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.config.placeholders import SecretSource
from mcpctl.probe.eras import Era, EraMemory
from mcpctl.probe.failures import one_line
from mcpctl.probe.health import ServerKind, Speaking, on_connection
from mcpctl.probe.pages import MAX_PAGES

if TYPE_CHECKING:
    from anyio.abc import Process

    from mcpctl.config.placeholders import ResolvedEntry
    from mcpctl.probe.connect import Connection
    from mcpctl.probe.spawn import ProbeError, StdioDiagnostics

__all__ = ["MAX_PAGES", "Catalog", "catalog", "catalog_all", "catalog_of"]


@dataclass
class Catalog:
    """What one server offers (``error``: the probe's failure code; then nothing is known)."""

    name: str
    type: ServerKind = "external"
    transport: str = "stdio"
    server_info: dict[str, Any] | None = None
    protocol_version: str | None = None
    era: Era | None = None
    instructions: str | None = None
    capabilities: list[str] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    resource_templates: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    message: str | None = None
    hint: str | None = None
    stderr: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    latency_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the server was reached and listed."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "name": self.name,
            "type": self.type,
            "transport": self.transport,
            "serverInfo": self.server_info,
            "protocolVersion": self.protocol_version,
            "protocol": self.era.to_dict() if self.era is not None else None,
            "instructions": self.instructions,
            "capabilities": self.capabilities,
            "tools": self.tools,
            "prompts": self.prompts,
            "resourceTemplates": self.resource_templates,
            "error": None
            if self.error is None
            else {"code": self.error, "message": self.message, "hint": self.hint},
            "warnings": self.warnings,
        }


async def catalog(
    name: str,
    entry: ServerEntry,
    *,
    kind: ServerKind = "external",
    timeout: float | None = None,
    secrets: SecretSource | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
) -> Catalog:
    """Connect to one server and list what it offers (every page, up to :data:`MAX_PAGES`).

    Never raises for a failing server: the catalog's ``error`` says what failed. The whole
    run, server shutdown included, ends within ``timeout`` (default: the entry's) plus a
    second. ``protocol`` and ``eras`` are those of :func:`mcpctl.probe.connect.connect`.
    """
    return await _catalog(name, entry, kind, timeout, secrets, Speaking(protocol, eras))


async def catalog_all(
    entries: Mapping[str, ServerEntry] | Iterable[tuple[str, ServerEntry, ServerKind]],
    *,
    concurrency: int | None = None,
    timeout: float | None = None,
    secrets: SecretSource | None = None,
    on_result: Callable[[Catalog], object] | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
) -> dict[str, Catalog]:
    """The catalogs of many servers, by name, in input order.

    At once as :func:`mcpctl.probe.health.probe_all` probes: at most ``concurrency``
    spawned servers starting at a time (a start-up slot is freed once a server has answered
    or only waits), remote ones bounded separately. ``entries`` is a name -> entry mapping
    (all external) or (name, entry, kind) triples. ``on_result`` is called with each
    catalog as it comes in (for progress). ``protocol`` and ``eras`` are those of
    :func:`mcpctl.probe.connect.connect`.
    """
    from mcpctl.probe.health import run_all

    speaking = Speaking(protocol, eras)

    def work(name: str, entry: ServerEntry, kind: ServerKind, *rest: Any) -> Awaitable[Catalog]:
        return _catalog(name, entry, kind, timeout, secrets, speaking, *rest)

    results = await run_all(
        entries, work, concurrency=concurrency, secrets=secrets, on_done=on_result
    )
    return {r.name: r for r in results if r is not None}


async def _catalog(
    name: str,
    entry: ServerEntry,
    kind: ServerKind,
    timeout: float | None,
    secrets: SecretSource | None,
    speaking: Speaking,
    started_server: tuple[Process, ResolvedEntry] | None = None,
    done: Callable[[], None] | None = None,
    diag: StdioDiagnostics | None = None,
) -> Catalog:
    result = Catalog(name, kind, entry.effective_transport)
    started = time.perf_counter()

    async def work(conn: Connection) -> None:
        result.transport = conn.transport
        await _list(conn, result)

    error, diag = await on_connection(
        name, entry, work, timeout=timeout, secrets=secrets, speaking=speaking,
        started_server=started_server, done=done, diag=diag,
    )  # fmt: skip
    if error is not None:
        _failed(result, error)
        if diag is not None:
            result.stderr = diag.tail()
    result.latency_ms = (time.perf_counter() - started) * 1000
    return result


def _failed(result: Catalog, error: ProbeError) -> None:
    result.error, result.message, result.hint = error.code, error.message, error.hint


async def catalog_of(conn: Connection) -> Catalog:
    """What the server of an open connection offers, listed now (every page).

    Raises:
        MCPError, OSError: the server failed or went away while listing.
    """
    result = Catalog(conn.name, transport=conn.transport)
    await _list(conn, result)
    return result


async def _list(conn: Connection, result: Catalog) -> None:
    caps = conn.capabilities
    result.capabilities = [
        n for n in ("tools", "resources", "prompts", "logging", "completions", "experimental")
        if getattr(caps, n, None) is not None
    ]  # fmt: skip
    session = conn.session
    if caps.tools is not None:
        tools = await _pages(result, "tools", session.list_tools, "tools", conn)
        # The tools as sent (before any repair): the tolerant relay kept each one.
        raw = conn.listing.raw_tools
        result.tools = [raw.get(t.name) or _json(t) for t in tools]
    if caps.prompts is not None:
        prompts = await _pages(result, "prompts", session.list_prompts, "prompts", conn)
        result.prompts = [_json(p) for p in prompts]
    if caps.resources is not None:
        templates = await _pages(
            result, "resource templates", session.list_resource_templates,
            "resource_templates", conn,
        )  # fmt: skip
        result.resource_templates = [_json(t) for t in templates]
    result.warnings += conn.listing.warnings
    # Settled now: the first request may have found a server that only said it is stateless.
    result.server_info = _json(conn.server_info) if conn.server_info is not None else None
    result.protocol_version = conn.era.version
    result.era = conn.era
    result.instructions = conn.instructions


async def _pages(
    result: Catalog,
    what: str,
    list_page: Callable[..., Awaitable[Any]],
    attr: str,
    conn: Connection | None = None,
) -> list[Any]:
    """Every item of every page (through ``conn``'s requests, when given); a method the
    server does not have lists nothing."""
    import mcp_types as types

    from mcpctl.probe.connect import MCPError
    from mcpctl.probe.pages import every_page

    later = False  # past the first page: a method not found then is a failure

    async def page(cursor: str | None) -> Any:
        nonlocal later
        later = cursor is not None
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        if conn is None:
            return await list_page(params=params)
        return await conn.request(lambda: list_page(params=params))

    try:
        return await every_page(page, attr, what, result.warnings)
    except MCPError as exc:
        if exc.code != types.METHOD_NOT_FOUND or later:
            raise
        message = one_line(exc.message, 120)
        result.warnings.append(f"it advertises {what} but cannot list them ({message})")
        return []


def _json(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data
