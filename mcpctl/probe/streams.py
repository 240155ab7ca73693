"""The streams of a connection, one opener per transport (:data:`mcpctl.config.transports.
TRANSPORTS` names each transport's opener here).

* **stdio** -- mcpctl spawns the server itself (in its own process group) rather than through
  the SDK's ``stdio_client``, to keep what a health checker needs: the tail of the server's
  stderr (read continuously, so a flooding server never blocks), a count of non-JSON lines on
  stdout, and a fast shutdown -- stdin closed and SIGTERM to the whole group at once, SIGKILL
  half a second later -- instead of the SDK's two-second grace period per server.
* **streamable-http** and **sse** -- the SDK's clients over an ``httpx2`` client carrying the
  entry's headers and auth.

Imported by :mod:`mcpctl.probe.connect`, after the SDK is loaded.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx2
from anyio.abc import Process

from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import ResolvedEntry
from mcpctl.errors import ProbeFailed
from mcpctl.probe.listingrepair import TooDeep, parse_message, too_deep_answer
from mcpctl.probe.spawn import StdioDiagnostics, spawn_error, spawn_server, stop_server
from mcpctl.sdk import SessionMessage, sse_client, streamable_http_client

__all__ = ["Opener", "Streams", "open_sse", "open_stdio", "open_streamable_http"]

STDERR_LINE_MAX = 400
# How much of a line is kept for redaction: a secret is redacted before the line is cut to
# STDERR_LINE_MAX, so a cut never leaves half a secret behind.
LINE_WINDOW = 16 * 1024
STDOUT_LINE_MAX = 16 * 1024 * 1024  # a line longer than this is not a message

Streams = tuple[Any, Any]
Opener = Callable[[ResolvedEntry, float, "StdioDiagnostics | None", "Process | None"],
                  contextlib.AbstractAsyncContextManager[Streams]]  # fmt: skip


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
        if diag.started_at is None:
            diag.started_at = time.perf_counter()
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
                            message = SessionMessage(parse_message(raw))
                        except TooDeep as exc:  # JSON, but deeper than can be read
                            answer = too_deep_answer(exc)
                            if answer is None:
                                note_garbage(raw)
                                continue
                            message = answer  # its request fails at once, saying why
                        except ValueError:
                            note_garbage(raw)
                            continue
                        await read_writer.send(message)
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
    """The streams of a streamable-HTTP server, with the entry's headers and auth.

    The SDK answers a request refused with HTTP 401 with a stand-in error that says nothing
    of the status or of the server's ``WWW-Authenticate`` challenge: such a failure is raised
    as the ``httpx2.HTTPStatusError`` of that 401 instead, so that it is classified as one.
    """
    entry = resolved.entry
    assert entry.url is not None
    headers, auth = _auth_headers(entry, resolved.name)
    http_timeout = httpx2.Timeout(timeout, read=max(timeout, 30.0))
    refused: list[httpx2.Response] = []  # the last response, when it was a 401

    async def note(response: httpx2.Response) -> None:
        refused[:] = [response] if response.status_code == 401 else []

    hooks: dict[str, list[Callable[..., Any]]] = {"response": [note]}
    try:
        async with (
            httpx2.AsyncClient(
                headers=headers, timeout=http_timeout, auth=auth, event_hooks=hooks
            ) as client,
            streamable_http_client(entry.url, http_client=client) as streams,
        ):
            yield streams[0], streams[1]
    except Exception as exc:
        if refused and _stand_in_for_status(exc):
            response = refused[0]
            raise httpx2.HTTPStatusError(
                "401 Unauthorized", request=response.request, response=response
            ) from exc
        raise


def _stand_in_for_status(exc: BaseException) -> bool:
    """Whether ``exc`` is the SDK's stand-in for an HTTP error status (and not a failure
    mcpctl already explained, such as a sign-in that is needed)."""
    from mcpctl.probe.failures import exception_leaves
    from mcpctl.sdk import MCPError

    leaves = exception_leaves(exc)
    if any(isinstance(leaf, ProbeFailed) for leaf in leaves):
        return False
    return any(isinstance(leaf, MCPError) for leaf in leaves)


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
