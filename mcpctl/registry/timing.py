"""The time limits of registry requests: the wait a ``Retry-After`` asks for, and one limit for
a whole request, enforced by cutting its connections when time is up.

A read timeout applies to each read, so a registry that trickles bytes never trips it;
:class:`Cutoff` shuts the client's sockets (:class:`Sockets`) down at the request's end, which
also wakes a read blocked in another thread.
"""

from __future__ import annotations

import contextlib
import email.utils
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Cutoff", "Sockets", "retry_after_seconds"]


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds (``None``: absent or unreadable).

    Both forms are read: a number of seconds, or an HTTP date (``now`` is a Unix time).
    """
    if not value:
        return None
    text = value.strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


class Sockets:
    """The sockets of one client's connections, and cutting them when time is up.

    A read timeout applies to each read, so a registry that trickles bytes never trips it;
    cutting the socket (``shutdown``, which also wakes a read blocked in another thread)
    ends the request at its deadline whatever the registry sends.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """The ``trace`` extension of each request: remembers each new connection's socket."""
        if event.endswith("connect_tcp.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                with self._lock:
                    self._open = [s for s in self._open if s.fileno() != -1] + [sock]

    def cut(self) -> None:
        """Shut every connection down (a blocked read returns at once)."""
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


@dataclass
class Cutoff:
    """Cuts the client's connections at ``end`` unless stopped first."""

    sockets: Sockets
    end: float
    fired: bool = False
    _timer: threading.Timer | None = field(default=None, repr=False)

    def __enter__(self) -> Cutoff:
        self._timer = threading.Timer(max(0.0, self.end - time.monotonic()), self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def _fire(self) -> None:
        self.fired = True
        self.sockets.cut()

    def __exit__(self, *exc: object) -> None:
        assert self._timer is not None
        self._timer.cancel()
