"""Open an MCP client session to a configured server, its protocol era settled.

Importing this module costs over a second (the MCP SDK, whose names come from
:mod:`mcpctl.sdk`), so commands import it only once they know they will connect. The
streams of each transport come from :mod:`mcpctl.probe.streams` (their table is
:mod:`mcpctl.config.transports`); with a ``url`` and no ``transport``, streamable HTTP is tried
first and SSE second (:attr:`Connection.transport` says which one answered). The era -- the
stateless revision or the ``initialize`` handshake -- is settled by
:func:`mcpctl.probe.negotiate.negotiate`.

Between the transport and the session, :func:`mcpctl.probe.listingrepair.tolerant_streams`
repairs tool listings that real servers get slightly wrong.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import httpx2
import mcp_types as types
from anyio.abc import Process

from mcpctl._version import __version__
from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.config.placeholders import (
    MissingPolicy,
    ResolvedEntry,
    SecretSource,
    resolve_entry,
)
from mcpctl.config.transports import REMOTE_FALLBACKS, TRANSPORTS, Transport
from mcpctl.errors import PlaceholderError
from mcpctl.probe import streams
from mcpctl.probe.eras import Era, EraMemory, effective_mode
from mcpctl.probe.failures import exception_leaves
from mcpctl.probe.listingrepair import Listing, tolerant_streams
from mcpctl.probe.negotiate import discover_timeout, handshake_instead, negotiate, sse_mismatch
from mcpctl.probe.spawn import StdioDiagnostics
from mcpctl.probe.streams import Opener, open_sse, open_stdio, open_streamable_http
from mcpctl.probe.tasks import declaration
from mcpctl.sdk import ClientSession, MCPError

__all__ = [
    "ClientSession",
    "Connection",
    "MCPError",
    "connect",
    "open_session",
    "open_sse",
    "open_stdio",
    "open_streamable_http",
]

CLIENT_INFO = types.Implementation(name="mcpctl", version=__version__)
T = TypeVar("T")


@dataclass
class Connection:
    """A session whose protocol era is settled, and how it was reached.

    ``era`` says which era and version it speaks; ``server_info``, ``capabilities`` and
    ``instructions`` are the server's whichever the era (from ``initialize`` or from
    ``server/discover``). ``listing`` holds what was repaired in the server's tool listings
    (as warnings) and each tool as the server sent it. ``ended`` is set once the server's
    side of the connection has ended (a stdio server exited or closed its output).

    Requests go through :meth:`request`, which may still change the era once (see there).
    """

    name: str
    session: ClientSession
    transport: Transport
    era: Era
    resolved: ResolvedEntry
    diagnostics: StdioDiagnostics | None = None
    connect_ms: float = 0.0
    negotiate_ms: float = 0.0
    listing: Listing = field(default_factory=Listing)
    ended: anyio.Event | None = None
    # How a stateless era that ``auto`` took on the server's word is checked, until the
    # first request has confirmed it; and where an era that changed is remembered.
    era_check: Callable[[], Awaitable[Era | None]] | None = field(default=None, repr=False)
    on_new_era: Callable[[Era], Awaitable[None]] | None = field(default=None, repr=False)

    async def request(self, send: Callable[[], Awaitable[T]]) -> T:
        """What ``send()`` (a request on :attr:`session`) returns.

        The first request of a connection that ``auto`` settled on the stateless era by the
        server's word (its discovery result, or the memory of one) confirms that era: when
        the server refuses it with an error and then answers ``initialize``, it speaks the
        handshake -- the request is made again that way, :attr:`era` is the handshake's
        (``detected: "fallback"``), and that is what is remembered once it worked.

        Raises:
            MCPError: the server refused the request (in the era it speaks).
        """
        check, self.era_check = self.era_check, None
        if check is None:
            return await send()
        try:
            return await send()
        except MCPError:
            era = await check()
            if era is None:
                raise
        self.era = era
        self.listing.protocol_version = era.version
        answer = await send()
        if self.on_new_era is not None:
            await self.on_new_era(era)
        return answer

    @property
    def server_info(self) -> types.Implementation | None:
        """The server's name and version (a stateless server may not say)."""
        return self.session.server_info

    @property
    def capabilities(self) -> types.ServerCapabilities:
        """What the server offers."""
        return self.session.server_capabilities or types.ServerCapabilities()

    @property
    def instructions(self) -> str | None:
        """The server's instructions for a model, if any."""
        return self.session.instructions

    @property
    def initialize_result(self) -> types.InitializeResult | None:
        """The handshake's result (``None`` for a connection in the stateless era)."""
        return self.session.initialize_result


# --- sessions --------------------------------------------------------------------------


def _opener(transport: Transport) -> Opener:
    opener: Opener = getattr(streams, TRANSPORTS[transport].opener)
    return opener


@dataclass(frozen=True)
class _Options:
    """How a session is set up: how it settles its era (see
    :func:`mcpctl.probe.negotiate.negotiate`), and what it answers and declares."""

    mode: ProtocolMode = "auto"
    remembered: Era | None = None
    pinned_by: str = "--protocol"
    # Answers a handshake-era server's elicitation/create (and advertises that it can).
    elicitation: Any = None
    # Declares the tasks extension and accepts task handles (calls only; never a probe).
    tasks: bool = False
    # Receives the server's notifications (list changes, for a connection kept open).
    message_handler: Any = None


@contextlib.asynccontextmanager
async def _session(
    name: str,
    resolved: ResolvedEntry,
    transport: Transport,
    timeout: float,
    diag: StdioDiagnostics | None,
    process: Process | None = None,
    options: _Options = _Options(),
) -> AsyncIterator[Connection]:
    started = anyio.current_time()
    listing = Listing()
    ended = anyio.Event()
    async with (
        _opener(transport)(resolved, timeout, diag, process) as (read_stream, write_stream),
        tolerant_streams(read_stream, write_stream, listing, ended) as (reads, writes),
    ):
        connected = anyio.current_time()
        extensions, claims = declaration() if options.tasks else (None, None)
        async with ClientSession(
            reads, writes, read_timeout_seconds=timeout, client_info=CLIENT_INFO,
            elicitation_callback=options.elicitation, extensions=extensions, result_claims=claims,
            message_handler=options.message_handler,
        ) as session:  # fmt: skip
            era = await negotiate(
                session, name=name, mode=options.mode, transport=transport, timeout=timeout,
                remembered=options.remembered, pinned_by=options.pinned_by,
            )  # fmt: skip
            listing.protocol_version = era.version
            if diag is not None:
                diag.handshake_done = True
            done = anyio.current_time()
            conn = Connection(
                name=name,
                session=session,
                transport=transport,
                era=era,
                resolved=resolved,
                diagnostics=diag,
                connect_ms=(connected - started) * 1000,
                negotiate_ms=(done - connected) * 1000,
                listing=listing,
                ended=ended,
            )
            if options.mode == "auto" and era.name == "modern" and era.detected != "pinned":
                conn.era_check = functools.partial(
                    handshake_instead, session, discover_timeout(timeout)
                )
            yield conn


@contextlib.asynccontextmanager
async def connect(
    name: str,
    entry: ServerEntry,
    *,
    timeout: float | None = None,
    policy: MissingPolicy = "error",
    environ: Mapping[str, str] | None = None,
    secrets: SecretSource | None = None,
    diagnostics: StdioDiagnostics | None = None,
    process: Process | None = None,
    resolved: ResolvedEntry | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
    elicitation: Any = None,
    tasks: bool = False,
    message_handler: Any = None,
) -> AsyncIterator[Connection]:
    """Connect to a server and settle the protocol era it speaks.

    ``timeout`` (seconds) bounds every request; it defaults to the entry's ``timeout``.
    The caller bounds the whole connection with a cancel scope if it needs a deadline.
    ``process`` is a stdio server already started with :func:`mcpctl.probe.spawn.spawn_server`
    from ``resolved`` (so a caller can start servers before paying for the SDK import);
    it is stopped when the block ends, like one started here.

    ``protocol`` pins the era (``modern``, ``legacy``) or detects it (``auto``); ``None``
    takes the entry's ``protocol`` field, else ``auto``. With ``eras``, a detected era is
    remembered per entry and tried first next time (and detected afresh if it fails).
    ``elicitation`` is the SDK session's elicitation callback, for a server of the handshake
    era that asks for input mid-call (:func:`mcpctl.probe.inputlog.elicitation_callback`).
    ``tasks`` declares the tasks extension (stateless era), so ``tools/call`` may answer with
    a task handle (:mod:`mcpctl.probe.tasks`); only for a connection that calls tools.
    ``message_handler`` receives the server's notifications (the SDK session's).

    Raises:
        PlaceholderError: a placeholder has no value (``policy="error"``).
        ProbeFailed: the server could not be started (with its ``reason``), or does not
            speak the pinned era (``protocol_mismatch``).
        MCPError: the server answered the handshake with an error.
        OSError, httpx2.HTTPError: other failures of the connection.
    """
    seconds = timeout if timeout is not None else entry.timeout_ms / 1000
    if resolved is None:
        resolved = resolve_entry(name, entry, policy=policy, environ=environ, secrets=secrets)
    if resolved is None:  # policy "skip": resolve_entry already knows which variable
        raise PlaceholderError(f"server {name!r} skipped: a variable is not set", variable="")
    mode = effective_mode(protocol, entry)
    remembered = eras.recall(entry) if eras is not None and mode == "auto" else None
    pinned_by = f"--protocol {mode}" if protocol is not None else f'its "protocol": "{mode}"'
    if mode == "modern" and entry.transport == "sse":  # refused before connecting
        raise sse_mismatch(name, pinned_by)
    how = _Options(mode, remembered, pinned_by, elicitation, tasks, message_handler=message_handler)
    async with _connection(name, entry, resolved, seconds, diagnostics, process, how) as conn:
        if eras is not None and mode == "auto":
            remember = functools.partial(_remember, eras, entry)
            await remember(conn.era)
            conn.on_new_era = remember
        yield conn


async def _remember(eras: EraMemory, entry: ServerEntry, era: Era) -> None:
    # In a worker thread: the memory's file lock may be waited for a moment, and other
    # probes of this event loop go on meanwhile.
    await anyio.to_thread.run_sync(eras.remember, entry, era)


@contextlib.asynccontextmanager
async def _connection(
    name: str,
    entry: ServerEntry,
    resolved: ResolvedEntry,
    seconds: float,
    diagnostics: StdioDiagnostics | None,
    process: Process | None,
    how: _Options,
) -> AsyncIterator[Connection]:
    transport = entry.effective_transport
    if not TRANSPORTS[transport].remote:
        diag = diagnostics if diagnostics is not None else StdioDiagnostics()
        async with _session(name, resolved, transport, seconds, diag, process, how) as conn:
            yield conn
        return
    if entry.transport is not None:
        async with _session(name, resolved, transport, seconds, None, None, how) as conn:
            yield conn
        return
    # No transport named: the current one first, then the older ones.
    first, *others = REMOTE_FALLBACKS
    async with contextlib.AsyncExitStack() as stack:
        try:
            conn = await stack.enter_async_context(
                _session(name, resolved, first, seconds, None, None, how)
            )
        except Exception as failure:
            if not others or not _worth_fallback(failure):
                raise
            conn = await stack.enter_async_context(
                _session(name, resolved, others[0], seconds, None, None, how)
            )
        yield conn


def _worth_fallback(exc: BaseException) -> bool:
    """Whether a failed streamable-HTTP attempt may mean "this server speaks SSE"."""
    for inner in exception_leaves(exc):
        if isinstance(inner, httpx2.HTTPStatusError) and inner.response.status_code in (
            400, 404, 405, 406, 415,
        ):  # fmt: skip
            return True
        if isinstance(inner, MCPError) and "401" not in inner.message:
            return True
    return False


@contextlib.asynccontextmanager
async def open_session(
    entry: ServerEntry,
    *,
    name: str = "server",
    timeout: float | None = None,
    policy: MissingPolicy = "error",
    secrets: SecretSource | None = None,
    protocol: ProtocolMode | None = None,
) -> AsyncIterator[ClientSession]:
    """A :class:`mcp.ClientSession` to ``entry`` whose era is settled (``protocol`` as in
    :func:`connect`), closed (and the server stopped) when the block ends.

    Raises:
        PlaceholderError: a placeholder has no value (``policy="error"``).
        ProbeFailed: the server could not be started (with its ``reason``), or does not
            speak the pinned era (``protocol_mismatch``).
        MCPError: the server answered the handshake with an error.
    """
    async with connect(
        name, entry, timeout=timeout, policy=policy, secrets=secrets, protocol=protocol
    ) as conn:
        yield conn.session
