"""Async work of a command, run to its end or stopped by a signal with all it started."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpctl.cli import output

__all__ = ["run_async"]


def run_async(fn: Callable[[], Any], what: str, *, spinner: bool = True) -> Any:
    """Run async work (it may start servers), with a spinner on a terminal unless ``spinner``
    is false.

    SIGINT, SIGTERM and SIGHUP cancel the work: every server it started is stopped the usual
    way, then :class:`mcpctl.errors.Interrupted` is raised. Meanwhile this process is a
    child subreaper (Linux): what a server's children leave behind (a double fork) is adopted
    here and stopped before this returns.
    """
    import signal
    import threading

    import anyio

    from mcpctl import procs, reaper
    from mcpctl.errors import Interrupted
    from mcpctl.probe.spawn import use_client_half
    from mcpctl.stopsignals import stop_signals

    use_client_half()  # this process is mcpctl's own: the SDK's client half is enough
    output.configure_logging()
    main_thread = threading.current_thread() is threading.main_thread()
    wanted = stop_signals() if main_thread else []
    received: list[int] = []
    outcome: list[Any] = []
    failure: list[Exception] = []

    async def work() -> None:
        with anyio.open_signal_receiver(*wanted) as signals:
            async with anyio.create_task_group() as tg:

                async def on_signal() -> None:
                    async for signum in signals:
                        received.append(signum)
                        tg.cancel_scope.cancel()  # the servers are stopped as the work unwinds
                        return

                async def run() -> None:
                    try:
                        outcome.append(await fn())
                    except Exception as exc:  # raised below as it is, not in an exception group
                        failure.append(exc)
                    finally:
                        tg.cancel_scope.cancel()

                if wanted:
                    tg.start_soon(on_signal)
                tg.start_soon(run)

    handlers = {sig: signal.getsignal(sig) for sig in wanted}
    was_subreaper = procs.is_subreaper()
    reaper.become_subreaper()
    try:
        if spinner:
            from mcpctl.cli.progress import progress

            with progress(what):  # shown only on a terminal, for a person
                anyio.run(work)
        else:
            anyio.run(work)
    finally:
        # A signal now waits until what the servers left behind is stopped too.
        for sig in wanted:
            signal.signal(sig, lambda signum, _: received.append(signum))
        try:
            reaper.reap_orphans()
            if not was_subreaper:
                reaper.become_subreaper(False)
        finally:
            for sig, handler in handlers.items():  # the event loop reset them to the defaults
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
    if received:
        raise Interrupted(received[0])
    if failure:
        raise failure[0]
    return outcome[0] if outcome else None
