"""Open an MCP client session to a configured server: the only importer of the MCP SDK.

Importing this module costs over a second (the SDK), so commands import it only once they
know they will connect. The transports (their table is :mod:`mcpctl.probe.transports`):

* **stdio** -- mcpctl spawns the server itself (in its own process group) rather than through
  the SDK's ``stdio_client``, to keep what a health checker needs: the tail of the server's
  stderr (read continuously, so a flooding server never blocks), a count of non-JSON lines on
  stdout, and a fast shutdown -- stdin closed and SIGTERM to the whole group at once, SIGKILL
  half a second later -- instead of the SDK's two-second grace period per server.
* **streamable-http** and **sse** -- the SDK's clients over an ``httpx2`` client carrying the
  entry's headers and auth. With a ``url`` and no ``transport``, streamable HTTP is tried
  first and SSE second; :attr:`Connection.transport` says which one answered.

Between the transport and the session, :func:`mcpctl.probe.tolerant.tolerant_streams`
repairs tool listings that real servers get slightly wrong.
"""

from __future__ import annotations

from mcpctl.probe import sdk

sdk.load()  # the client half only, when the mcpctl program asked for it

import contextlib  # noqa: E402 -- after the SDK is loaded
from collections.abc import AsyncIterator, Callable, Mapping  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import anyio  # noqa: E402
import httpx2  # noqa: E402
import mcp_types as types  # noqa: E402
from anyio.abc import Process  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.sse import sse_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402

from mcpctl._version import __version__  # noqa: E402
from mcpctl.config.model import ProtocolMode, ServerEntry  # noqa: E402
from mcpctl.config.placeholders import (  # noqa: E402
    MissingPolicy,
    ResolvedEntry,
    SecretSource,
    resolve_entry,
)
from mcpctl.errors import PlaceholderError, ProbeFailed, exception_leaves  # noqa: E402
from mcpctl.probe.eras import Era, EraMemory, effective_mode  # noqa: E402
from mcpctl.probe.negotiate import negotiate  # noqa: E402
from mcpctl.probe.spawn import StdioDiagnostics, spawn_error, spawn_server, stop_server  # noqa: E402
from mcpctl.probe.tasks import declaration  # noqa: E402
from mcpctl.probe.tolerant import Listing, tolerant_streams  # noqa: E402
from mcpctl.probe.transports import REMOTE_FALLBACKS, TRANSPORTS, Transport  # noqa: E402

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
STDERR_LINE_MAX = 400
# How much of a line is kept for redaction: a secret is redacted before the line is cut to
# STDERR_LINE_MAX, so a cut never leaves half a secret behind.
LINE_WINDOW = 16 * 1024
STDOUT_LINE_MAX = 16 * 1024 * 1024  # a line longer than this is not a message

Streams = tuple[Any, Any]
Opener = Callable[[ResolvedEntry, float, "StdioDiagnostics | None", "Process | None"],
                  contextlib.AbstractAsyncContextManager[Streams]]  # fmt: skip


@dataclass
class Connection:
    """A session whose protocol era is settled, and how it was reached.

    ``era`` says which era and version it speaks; ``server_info``, ``capabilities`` and
    ``instructions`` are the server's whichever the era (from ``initialize`` or from
    ``server/discover``). ``listing`` holds what was repaired in the server's tool listings
    (as warnings) and each tool as the server sent it.
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


# --- stdio ----------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def open_stdio(
    resolved: ResolvedEntry,
    timeout: float,
    diagnostics: StdioDiagnostics | None = None,
    process: Process | None = None,
) -> AsyncIterator[Streams]:
    """The streams of a stdio server (spawned here unless ``process`` is given).

    Raises:
        ProbeFailed: the server cannot be started (``command_not_found``, ``spawn_failed``).
    """
    entry = resolved.entry
    diag = diagnostics if diagnostics is not None else StdioDiagnostics()
    if process is None:
        try:
            process = await spawn_server(entry)
        except OSError as exc:
            error = spawn_error(exc, entry)
            raise ProbeFailed(resolved.name, error.code, error.message, hint=error.hint) from None
    diag.pid = process.pid
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](16)

    async def read_stdout() -> None:
        assert process.stdout is not None
        # Only each new chunk is searched for line ends, and a line longer than
        # STDOUT_LINE_MAX is noted once and its rest dropped: a flood costs linear time.
        buffer = bytearray()
        overlong = False  # inside a line already noted as too long
        async with read_writer:
            try:
                async for chunk in process.stdout:
                    *ends, tail = chunk.split(b"\n")
                    lines: list[bytes] = []
                    for part in ends:
                        if not overlong:
                            buffer += part
                            lines.append(bytes(buffer))
                        buffer.clear()
                        overlong = False
                    if not overlong:
                        buffer += tail
                        if len(buffer) > STDOUT_LINE_MAX:
                            note_garbage(bytes(buffer[:LINE_WINDOW]))
                            buffer.clear()
                            overlong = True
                    for raw in lines:
                        if not raw.strip():
                            continue
                        try:
                            message = types.jsonrpc_message_adapter.validate_json(
                                raw, by_name=False
                            )
                        except ValueError:
                            note_garbage(raw)
                            continue
                        await read_writer.send(SessionMessage(message))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                pass
            diag.stdout_closed = True

    def note_garbage(raw: bytes) -> None:
        diag.garbage_lines += 1
        if diag.first_garbage is None:
            diag.first_garbage = raw[:LINE_WINDOW].decode("utf-8", "replace")

    async def read_stderr() -> None:
        assert process.stderr is not None
        pending = b""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in process.stderr:
                diag.stderr_bytes += len(chunk)
                pending += chunk
                *lines, pending = pending.split(b"\n")
                # Kept as written for now: only the last lines survive, and they are
                # redacted (then cut) once the server has stopped, in finish() below.
                diag.stderr.extend(raw[:LINE_WINDOW].decode("utf-8", "replace") for raw in lines)
                if len(pending) > LINE_WINDOW:
                    diag.stderr.append(pending[:LINE_WINDOW].decode("utf-8", "replace"))
                    pending = b""
            if pending.strip():
                diag.stderr.append(pending[:LINE_WINDOW].decode("utf-8", "replace"))

    def finish() -> None:
        from mcpctl.config.redaction import redactor

        redact = redactor(extra=resolved.secret_values)

        def safe(text: str) -> str:
            text = redact(text)
            return text if len(text) <= STDERR_LINE_MAX else text[: STDERR_LINE_MAX - 1] + "…"

        lines = [safe(line) for line in diag.stderr]
        diag.stderr.clear()
        diag.stderr.extend(lines)
        if diag.first_garbage is not None:
            diag.first_garbage = safe(diag.first_garbage)

    async def write_stdin() -> None:
        assert process.stdin is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_stdout)
            tg.start_soon(read_stderr)
            tg.start_soon(write_stdin)
            try:
                yield read_stream, write_stream
            finally:
                await stop_server(process, diag)
                tg.cancel_scope.cancel()
        finish()
    finally:
        for stream in (read_stream, write_stream):
            with contextlib.suppress(Exception):
                await stream.aclose()


# --- remote ----------------------------------------------------------------------------


def _auth_headers(entry: ServerEntry, name: str) -> tuple[dict[str, str], httpx2.Auth | None]:
    headers = dict(entry.headers)
    auth = entry.auth
    if auth is None or auth.type == "none":
        return headers, None
    if auth.type == "oauth" and entry.url is not None:
        # The stored sign-in (mcpctl auth NAME), renewed when expired; never a browser: a run
        # that needs a new sign-in fails with ProbeFailed "auth_required".
        from mcpctl.auth.connecting import connecting_auth

        return headers, connecting_auth(name, entry.url, auth)
    if auth.type == "bearer" and auth.token is not None:
        headers["Authorization"] = f"Bearer {auth.token}"
    elif auth.type == "header" and auth.value is not None:
        headers[auth.name or "Authorization"] = auth.value
    elif auth.type == "basic":
        return headers, httpx2.BasicAuth(auth.username or "", auth.password or "")
    return headers, None


@contextlib.asynccontextmanager
async def open_streamable_http(
    resolved: ResolvedEntry,
    timeout: float,
    diagnostics: StdioDiagnostics | None = None,
    process: Process | None = None,
) -> AsyncIterator[Streams]:
    """The streams of a streamable-HTTP server, with the entry's headers and auth."""
    entry = resolved.entry
    assert entry.url is not None
    headers, auth = _auth_headers(entry, resolved.name)
    http_timeout = httpx2.Timeout(timeout, read=max(timeout, 30.0))
    async with (
        httpx2.AsyncClient(headers=headers, timeout=http_timeout, auth=auth) as client,
        streamable_http_client(entry.url, http_client=client) as streams,
    ):
        yield streams[0], streams[1]


@contextlib.asynccontextmanager
async def open_sse(
    resolved: ResolvedEntry,
    timeout: float,
    diagnostics: StdioDiagnostics | None = None,
    process: Process | None = None,
) -> AsyncIterator[Streams]:
    """The streams of an HTTP+SSE server, with the entry's headers and auth."""
    entry = resolved.entry
    assert entry.url is not None
    headers, auth = _auth_headers(entry, resolved.name)
    async with sse_client(
        entry.url, headers=headers, timeout=timeout, sse_read_timeout=max(timeout, 30.0), auth=auth
    ) as streams:
        yield streams[0], streams[1]


# --- sessions --------------------------------------------------------------------------


def _opener(transport: Transport) -> Opener:
    opener: Opener = globals()[TRANSPORTS[transport].opener]
    return opener


@dataclass(frozen=True)
class _Protocol:
    """How a connection settles its era (see :func:`mcpctl.probe.negotiate.negotiate`)."""

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
    protocol: _Protocol = _Protocol(),
) -> AsyncIterator[Connection]:
    started = anyio.current_time()
    listing = Listing()
    async with (
        _opener(transport)(resolved, timeout, diag, process) as (read_stream, write_stream),
        tolerant_streams(read_stream, write_stream, listing) as (reads, writes),
    ):
        connected = anyio.current_time()
        extensions, claims = declaration() if protocol.tasks else (None, None)
        async with ClientSession(
            reads, writes, read_timeout_seconds=timeout, client_info=CLIENT_INFO,
            elicitation_callback=protocol.elicitation, extensions=extensions, result_claims=claims,
            message_handler=protocol.message_handler,
        ) as session:  # fmt: skip
            era = await negotiate(
                session, name=name, mode=protocol.mode, transport=transport, timeout=timeout,
                remembered=protocol.remembered, pinned_by=protocol.pinned_by,
            )  # fmt: skip
            listing.protocol_version = era.version
            done = anyio.current_time()
            yield Connection(
                name=name,
                session=session,
                transport=transport,
                era=era,
                resolved=resolved,
                diagnostics=diag,
                connect_ms=(connected - started) * 1000,
                negotiate_ms=(done - connected) * 1000,
                listing=listing,
            )


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
    era that asks for input mid-call (:func:`mcpctl.probe.inputs.elicitation_callback`).
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
    how = _Protocol(
        mode, remembered, pinned_by, elicitation, tasks, message_handler=message_handler
    )
    async with _connection(name, entry, resolved, seconds, diagnostics, process, how) as conn:
        if eras is not None and mode == "auto":
            eras.remember(entry, conn.era)
        yield conn


@contextlib.asynccontextmanager
async def _connection(
    name: str,
    entry: ServerEntry,
    resolved: ResolvedEntry,
    seconds: float,
    diagnostics: StdioDiagnostics | None,
    process: Process | None,
    how: _Protocol,
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
