"""The signals that stop a command: SIGINT, SIGTERM and SIGHUP alike."""

from __future__ import annotations

import signal

__all__ = ["stop_signals"]


def stop_signals() -> list[signal.Signals]:
    """SIGINT, SIGTERM and SIGHUP, where they exist, less those ignored (``nohup``, ``&``)."""
    found = (getattr(signal, name, None) for name in ("SIGINT", "SIGTERM", "SIGHUP"))
    return [s for s in found if s is not None and signal.getsignal(s) is not signal.SIG_IGN]
