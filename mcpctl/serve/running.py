"""Running ``mcpctl serve`` until it is told to stop, and stopping everything it started.

Over stdio the server ends when its input ends (the client went away); over HTTP when it
is stopped. SIGINT, SIGTERM and SIGHUP end either. Whatever way it ends, every server a tool
started is stopped first, its descendants too: the tool calls still running are cancelled
and their probes unwind (each stops its server's whole family); meanwhile this process is a
child subreaper (Linux), so the grandchild of a double fork is adopted, then stopped at the
end (and after each probing call, once no other one runs). The secret pages close.

    run(workspace)                                   # stdio, until stdin closes
    run(workspace, http=endpoint, announce=print)    # HTTP, until a signal
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from mcpctl.serve.workspace import Workspace
from mcpctl.stopsignals import stop_signals

if TYPE_CHECKING:
    from mcpctl.serve.http import Endpoint

__all__ = ["GRACE", "run"]

#: Seconds an HTTP server may take to finish its open requests once stopped.
GRACE = 3.0


def run(
    workspace: Workspace,
    *,
    http: Endpoint | None = None,
    announce: Callable[[str], None] | None = None,
) -> int | None:
    """Serve until the client goes away (stdio) or a stop signal; returns the signal's
    number, or ``None`` when the input ended.

    ``announce`` is told, once, where an HTTP server listens and its token.

    Raises:
        PortInUseError, OutsideError: the HTTP address cannot be listened on.
    """
    import threading

    import anyio
    import anyio.abc

    from mcpctl import procs, reaper
    from mcpctl.serve.secrets import close_pages

    main_thread = threading.current_thread() is threading.main_thread()
    wanted = stop_signals() if main_thread else []
    handlers = {sig: signal.getsignal(sig) for sig in wanted}
    received: list[int] = []
    sock = None
    if http is not None:
        from mcpctl.serve.http import bind

        sock = bind(http)  # before anything starts: a port in use is said at once

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            stop: list[Callable[[], None]] = [tg.cancel_scope.cancel]

            async def on_signal(*, task_status: anyio.abc.TaskStatus[None]) -> None:
                with anyio.open_signal_receiver(*wanted) as signals:
                    task_status.started()
                    async for signum in signals:
                        received.append(signum)
                        stop[0]()
                        return

            if wanted:
                await tg.start(on_signal)  # the signals are this loop's before anything runs
            if sock is None:
                await _stdio(workspace)
            else:
                await _http(workspace, sock, announce, stop)
            tg.cancel_scope.cancel()  # the input ended: the calls still running go too

    was_subreaper = procs.is_subreaper()
    reaper.become_subreaper()
    try:
        anyio.run(main)
    finally:
        for sig in wanted:  # a signal now waits until the leftovers are stopped
            signal.signal(sig, lambda signum, _: received.append(signum))
        try:
            close_pages()
            reaper.reap_orphans()
            if not was_subreaper:
                reaper.become_subreaper(False)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
            if sock is not None:
                with suppress(OSError):
                    sock.close()
    return received[0] if received else None


async def _stdio(workspace: Workspace) -> None:
    """Serve over stdin and stdout until stdin ends (or this is cancelled).

    The SDK's transport, given stdin lines of :class:`_StdinLines`: a read waiting on a
    client that sends nothing does not hold up the end (the SDK's own reader would wait for
    the next line before a signal could end the server).
    """
    from mcpctl.sdk import stdio_server
    from mcpctl.serve.app import build_server

    server = build_server(workspace)
    low = server._lowlevel_server  # what MCPServer.run_stdio_async runs (the SDK's Client too)
    with _StdinLines.claimed() as lines:
        async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
            await low.run(read, write, low.create_initialization_options())


class _StdinLines:
    """The lines of stdin, read in a worker thread that a cancellation leaves behind."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    @classmethod
    @contextlib.contextmanager
    def claimed(cls) -> Iterator[_StdinLines]:
        """stdin's lines from a private descriptor, while descriptor 0 reads the null device:
        nothing started meanwhile (a runtime's ``--version``) reads the client's messages."""
        import fcntl
        import io

        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        # closefd=False: a worker thread may still wait on it when serving ends.
        stream = io.TextIOWrapper(os.fdopen(private, "rb", closefd=False), encoding="utf-8",
                                  errors="replace")  # fmt: skip
        try:
            yield cls(stream)
        finally:
            with suppress(OSError):
                os.dup2(private, 0)

    def __aiter__(self) -> _StdinLines:
        return self

    async def __anext__(self) -> str:
        import anyio.to_thread

        line: str = await anyio.to_thread.run_sync(self._stream.readline, abandon_on_cancel=True)
        if not line:
            raise StopAsyncIteration
        return line


async def _http(
    workspace: Workspace,
    sock: Any,
    announce: Callable[[str], None] | None,
    stop: list[Callable[[], None]],
) -> None:
    """Serve over HTTP on ``sock`` until ``stop[0]()``: then the open requests get
    :data:`GRACE` seconds, and are cancelled after."""
    import anyio
    import uvicorn

    from mcpctl.sdk import TransportSecuritySettings
    from mcpctl.serve.app import build_server
    from mcpctl.serve.http import BearerGate, Endpoint, new_token

    host, port = sock.getsockname()[:2]
    endpoint = Endpoint(host, port)
    token = new_token()
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[endpoint.authority, f"localhost:{port}"],
        allowed_origins=[f"http://{endpoint.authority}", f"http://localhost:{port}"],
    )
    app = build_server(workspace).streamable_http_app(transport_security=security, host=host)
    config = uvicorn.Config(
        BearerGate(app, token),
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=max(1, int(GRACE)),
    )
    server = _quiet_server(config)

    def shut() -> None:
        server.should_exit = True

    stop[0] = shut
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: server.serve(sockets=[sock]))
        while not server.started:  # said once it answers (the socket already listens)
            if server.should_exit:
                return
            await anyio.sleep(0.02)
        if announce is not None:
            announce(f"mcpctl serve: listening on {endpoint.url}")
            how = "shown once; send it as 'Authorization: Bearer TOKEN'"
            announce(f"bearer token ({how}): {token}")


def _quiet_server(config: Any) -> Any:
    """uvicorn's server, without its own signal handling: :func:`run` stops it."""
    import contextlib

    import uvicorn

    class Quiet(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

    return Quiet(config)
