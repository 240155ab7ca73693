"""``mcpctl health --watch`` on a terminal: one table redrawn in place.

Each server's state (coloured: see :data:`STYLES`), why it is not healthy, its latency in
the last round, a sparkline of its last probes (a cross for a failed one) and how long it
has been in its state. The board is redrawn every half second (so the times move) from
whatever the rounds have recorded; the rounds run in the event loop's thread, the redraw in
rich's, hence the lock.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from mcpctl.cli.output import clean

__all__ = ["Board", "Track", "ago", "sparkline"]

#: How many of the last probes a sparkline shows.
HISTORY = 20
BARS = "▁▂▃▄▅▆▇█"
FAILED = "×"
#: The colour of each state (``mcpctl health``'s table uses them too).
STYLES = {
    "healthy": "green",
    "degraded": "yellow",
    "needs_auth": "magenta",
    "unhealthy": "red",
    "unavailable": "red",
}
#: The states in which a server answered (its latency is shown).
ANSWERED = ("healthy", "degraded")


def sparkline(latencies: list[float | None]) -> str:
    """One character per probe, scaled between the window's fastest and slowest answer;
    ``None`` (no answer) is :data:`FAILED`."""
    answered = [v for v in latencies if v is not None]
    low, high = (min(answered), max(answered)) if answered else (0.0, 0.0)
    span = high - low

    def bar(value: float | None) -> str:
        if value is None:
            return FAILED
        if span <= 0:
            return BARS[0]
        return BARS[min(len(BARS) - 1, int((value - low) / span * len(BARS)))]

    return "".join(bar(v) for v in latencies)


def ago(seconds: float) -> str:
    """``45s``, ``3m 05s``, ``2h 10m``, ``3d 4h``: a duration at a glance."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h {s % 3600 // 60:02d}m"
    return f"{s // 86400}d {s % 86400 // 3600}h"


@dataclass
class Track:
    """One server on the board."""

    name: str
    status: str = "-"
    since: float | None = None  # when it entered its state (time.monotonic())
    latency_ms: float | None = None
    error: str = ""
    history: deque[float | None] = field(default_factory=lambda: deque(maxlen=HISTORY))


class Board:
    """What the live view shows, fed one round of probes at a time."""

    def __init__(self, names: list[str], interval: float) -> None:
        self.interval = interval
        self.rounds = 0
        self.next_round: float | None = None  # None: a round is running
        self._tracks = {name: Track(name) for name in names}
        self._lock = threading.Lock()

    def probing(self) -> None:
        """A round starts."""
        with self._lock:
            self.next_round = None

    def record(
        self, name: str, status: str, latency_ms: float | None, error: str, now: float
    ) -> bool:
        """One server's probe in this round; whether its state changed."""
        with self._lock:
            track = self._tracks.setdefault(name, Track(name))
            changed = track.status != status
            if changed:
                track.status, track.since = status, now
            track.latency_ms = latency_ms if status in ANSWERED else None
            track.history.append(track.latency_ms)
            track.error = error
            return changed

    def waiting(self, now: float) -> None:
        """A round ended; the next one starts in :attr:`interval` seconds."""
        with self._lock:
            self.rounds += 1
            self.next_round = now + self.interval

    def tracks(self) -> list[Track]:
        """A copy of every server's track, in the order given."""
        with self._lock:
            return [
                Track(t.name, t.status, t.since, t.latency_ms, t.error, deque(t.history))
                for t in self._tracks.values()
            ]

    def __rich__(self) -> Any:
        return self.render(time.monotonic())

    def render(self, now: float) -> Any:
        """The table as of ``now`` (rich renderables; names and errors cleaned)."""
        from rich.table import Table
        from rich.text import Text

        from mcpctl.config.redaction import redactor

        redact = redactor()  # one for the whole table: it is redrawn twice a second
        tracks = self.tracks()
        healthy = sum(t.status == "healthy" for t in tracks)
        with self._lock:
            rounds, next_round = self.rounds, self.next_round
        when = "probing…" if next_round is None else f"next round in {ago(next_round - now)}"
        caption = (
            f"{healthy}/{len(tracks)} healthy · round {rounds + (next_round is None)} · "
            f"every {ago(self.interval)} · {when} · Ctrl-C to stop"
        )
        table = Table(caption=caption, caption_justify="left", expand=False)
        for column in ("NAME", "STATUS", "LATENCY", f"LAST {HISTORY}", "SINCE", "REASON"):
            table.add_column(column, no_wrap=column != "REASON", overflow="fold")
        for t in tracks:
            style = STYLES.get(t.status, "")
            latency = "-" if t.latency_ms is None else f"{t.latency_ms:.0f} ms"
            since = "-" if t.since is None else ago(now - t.since)
            table.add_row(
                Text(clean(t.name, redact, one_line=True)),
                Text(t.status, style=style),
                latency,
                Text(sparkline(list(t.history)), style=style),
                since,
                Text(clean(t.error, redact, one_line=True), style="dim"),
            )
        return table
