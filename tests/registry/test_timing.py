"""The time limits of registry requests: Retry-After read, and connections cut at the end."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx2
import pytest

from mcpctl.registry.timing import Cutoff, Sockets, retry_after_seconds
from tests.registry.server import Registry, make_record, running

PATIENCE = 10.0  # seconds a loaded machine gets for what should be at once


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("120", 120.0), (" 1.5 ", 1.5), ("0", 0.0), ("-5", 0.0),
     ("Wed, 21 Oct 2015 07:28:30 GMT", 30.0), ("Wed, 21 Oct 2015 08:28:00 +0100", 0.0),
     ("Wed, 21 Oct 2015 07:28:00 +0000", 0.0), ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0)],
)  # fmt: skip
def test_retry_after_in_seconds_or_as_a_date(value: str, seconds: float) -> None:
    now = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert retry_after_seconds(value, now=now) == seconds


@pytest.mark.parametrize(
    "value", [None, "", "   ", "soon", "Wed, 21 Oct 2015 07:28:30 -0000", "Wed, 99 Foo"]
)
def test_retry_after_absent_unreadable_or_without_a_zone_is_none(value: str | None) -> None:
    assert retry_after_seconds(value, now=0.0) is None


def test_retry_after_as_a_date_is_measured_from_the_clock_by_default() -> None:
    soon = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 100))
    wait = retry_after_seconds(soon)
    assert wait is not None and 90 <= wait <= 100


@pytest.fixture
def hanging() -> Iterator[str]:
    """A registry that accepts requests and never answers."""
    reg = Registry([make_record("io.x/server")])
    reg.mode = "hang"
    with running(reg) as url:
        yield url


def request_in_background(url: str, sockets: Sockets) -> tuple[threading.Thread, list[object]]:
    """GET ``url`` in a thread, its connections traced by ``sockets``; what it ended with."""
    ended: list[object] = []

    def get() -> None:
        try:
            with httpx2.Client(timeout=60) as client:
                ended.append(client.get(f"{url}/v0.1/servers", extensions={"trace": sockets.trace}))
        except httpx2.HTTPError as exc:
            ended.append(exc)

    thread = threading.Thread(target=get, daemon=True)
    thread.start()
    return thread, ended


def wait_for(condition: object, patience: float = PATIENCE) -> bool:
    end = time.monotonic() + patience
    while time.monotonic() < end:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_cutting_the_sockets_ends_a_read_blocked_in_another_thread(hanging: str) -> None:
    sockets = Sockets()
    thread, ended = request_in_background(hanging, sockets)
    assert wait_for(lambda: sockets._open)  # the connection was remembered
    assert not ended
    began = time.monotonic()
    sockets.cut()
    thread.join(PATIENCE)
    assert not thread.is_alive() and time.monotonic() - began < PATIENCE
    assert len(ended) == 1 and isinstance(ended[0], httpx2.HTTPError)


def test_only_new_connections_are_remembered_and_closed_ones_forgotten(hanging: str) -> None:
    sockets = Sockets()
    sockets.trace("connection.connect_tcp.started", {})
    sockets.trace("connection.connect_tcp.complete", {"return_value": None})
    assert sockets._open == []
    first, _ = request_in_background(hanging, sockets)
    assert wait_for(lambda: len(sockets._open) == 1)
    sockets.cut()
    first.join(PATIENCE)
    assert wait_for(lambda: sockets._open[0].fileno() == -1)
    second, _ = request_in_background(hanging, sockets)
    assert wait_for(lambda: sockets._open and sockets._open[0].fileno() != -1)
    assert len(sockets._open) == 1
    sockets.cut()
    second.join(PATIENCE)
    assert not second.is_alive()


def test_a_cutoff_fires_at_its_end(hanging: str) -> None:
    sockets = Sockets()
    thread, ended = request_in_background(hanging, sockets)
    assert wait_for(lambda: sockets._open)
    began = time.monotonic()
    with Cutoff(sockets, began + 0.3) as watch:
        thread.join(PATIENCE)
    assert watch.fired and time.monotonic() - began >= 0.3
    assert isinstance(ended[0], httpx2.HTTPError)


def test_a_cutoff_past_its_end_fires_at_once() -> None:
    with Cutoff(Sockets(), time.monotonic() - 5) as watch:
        assert watch._timer is not None and watch._timer.interval == 0
        assert wait_for(lambda: watch.fired)
    began = time.monotonic()
    with Cutoff(Sockets(), began + 0.5) as watch:
        assert watch._timer is not None and 0 < watch._timer.interval <= 0.5


def test_cutting_connections_already_closed_is_quiet() -> None:
    sockets = Sockets()
    reg = Registry([make_record("io.x/server")])
    with running(reg) as url, httpx2.Client(timeout=30) as client:
        response = client.get(f"{url}/v0.1/servers", extensions={"trace": sockets.trace})
        assert response.status_code == 200
    assert len(sockets._open) == 1 and sockets._open[0].fileno() == -1
    sockets.cut()  # a cutoff firing after the request ended: no error


def test_a_cutoff_left_before_its_end_never_fires(hanging: str) -> None:
    sockets = Sockets()
    thread, ended = request_in_background(hanging, sockets)
    assert wait_for(lambda: sockets._open)
    with Cutoff(sockets, time.monotonic() + 0.2) as watch:
        pass
    assert watch._timer is not None
    watch._timer.join(PATIENCE)  # cancelled: it ends without firing
    assert not watch.fired and not ended and thread.is_alive()
    assert watch._timer.daemon  # a forgotten timer never holds the process
    sockets.cut()
    thread.join(PATIENCE)
