"""The bounded HTTP client: one deadline for all of each request, a cap on its body.

It hooks httpx2's ``AsyncClient._send_single_request`` (see mcpctl/httpclient.py for why no
public hook will do): the first test fails loudly when httpx2 changes that method, the others
check the behaviour through a real server on 127.0.0.1 that trickles or floods its answer.
"""

from __future__ import annotations

import contextlib
import inspect
import socket
import threading
import time
from collections.abc import Callable, Iterator

import anyio
import httpx2
import pytest

from mcpctl.httpclient import BoundedClient, ResponseTooLarge, StepTimeout


def test_httpx2_still_sends_every_request_through_the_hooked_method() -> None:
    method = getattr(httpx2.AsyncClient, "_send_single_request", None)
    assert method is not None and inspect.iscoroutinefunction(method), (
        "httpx2.AsyncClient._send_single_request is gone or changed: mcpctl/httpclient.py "
        "must find another place to bound each request"
    )
    assert list(inspect.signature(method).parameters) == ["self", "request"]


def serve(answer: Callable[[socket.socket], None]) -> Iterator[str]:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.recv(65536)
                with contextlib.suppress(OSError):  # the client went away: as meant
                    answer(conn)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/x"
    finally:
        stop.set()
        thread.join(timeout=10)
        listener.close()


def trickle(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
    for _ in range(100):  # a byte every 0.3 s: each read is quick, the whole is not
        conn.sendall(b"x")
        time.sleep(0.3)


def flood(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n")
    for _ in range(1000):
        conn.sendall(b"x" * 10_000)


def small(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    yield from serve(request.param)


async def get(url: str, limit: float, max_bytes: int = 1_000_000) -> httpx2.Response:
    async with BoundedClient(limit=limit, max_bytes=max_bytes) as client:
        return await client.get(url)


@pytest.mark.parametrize("server", [trickle], indirect=True)
def test_a_trickled_answer_ends_at_the_deadline(server: str) -> None:
    started = time.monotonic()
    with pytest.raises(StepTimeout, match="did not answer in full within 2 s"):
        anyio.run(get, server, 2.0)
    assert time.monotonic() - started < 20  # not the 30 s the trickle takes


@pytest.mark.parametrize("server", [flood], indirect=True)
def test_a_body_over_the_cap_is_refused(server: str) -> None:
    with pytest.raises(ResponseTooLarge, match="more than 100000 bytes"):
        anyio.run(get, server, 30.0, 100_000)


@pytest.mark.parametrize("server", [small], indirect=True)
def test_a_small_answer_is_read_whole(server: str) -> None:
    response = anyio.run(get, server, 30.0)
    assert response.status_code == 200 and response.content == b"ok"
