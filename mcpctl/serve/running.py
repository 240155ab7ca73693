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

import signal
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from mcpctl.serve.workspace import Workspace

if TYPE_CHECKING:
    from mcpctl.serve.http import Endpoint

__all__ = ["GRACE", "run", "stop_signals"]

#: Seconds an HTTP server may take to finish its open requests once stopped.
GRACE = 3.0


def stop_signals() -> list[signal.Signals]:
    """SIGINT, SIGTERM and SIGHUP, where they exist, less those ignored (``nohup``)."""
    found = (getattr(signal, name, None) for name in ("SIGINT", "SIGTERM", "SIGHUP"))
    return [s for s in found if s is not None and signal.getsignal(s) is not signal.SIG_IGN]


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

    from mcpctl.probe import procs, spawn
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

            async def on_signal() -> None:
                with anyio.open_signal_receiver(*wanted) as signals:
                    async for signum in signals:
                        received.append(signum)
                        stop[0]()
                        return

            if wanted:
                tg.start_soon(on_signal)
            if sock is None:
                await _stdio(workspace)
            else:
                await _http(workspace, sock, announce, stop)
            tg.cancel_scope.cancel()  # the input ended: the calls still running go too

    was_subreaper = procs.is_subreaper()
    spawn.become_subreaper()
    try:
        anyio.run(main)
    finally:
        for sig in wanted:  # a signal now waits until the leftovers are stopped
            signal.signal(sig, lambda signum, _: received.append(signum))
        try:
            close_pages()
            spawn.reap_orphans()
            if not was_subreaper:
                spawn.become_subreaper(False)
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
            if sock is not None:
                with suppress(OSError):
                    sock.close()
    return received[0] if received else None


async def _stdio(workspace: Workspace) -> None:
    from mcpctl.serve.app import build_server

    await build_server(workspace).run_stdio_async()


async def _http(
    workspace: Workspace,
    sock: Any,
    announce: Callable[[str], None] | None,
    stop: list[Callable[[], None]],
) -> None:
    """Serve over HTTP on ``sock`` until ``stop[0]()``: then the open requests get
    :data:`GRACE` seconds, and are cancelled after."""
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
    server = _Server(config)

    def shut() -> None:
        server.should_exit = True

    stop[0] = shut
    if announce is not None:
        announce(f"mcpctl serve: listening on {endpoint.url}")
        announce(f"bearer token (shown once; send it as 'Authorization: Bearer TOKEN'): {token}")
    await server.serve(sockets=[sock])


class _Server:
    """uvicorn's server, without its own signal handling: this module stops it."""

    def __new__(cls, config: Any) -> Any:
        import contextlib

        import uvicorn

        class Quiet(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Any:
                yield

        return Quiet(config)
