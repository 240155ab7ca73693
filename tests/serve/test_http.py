"""``mcpctl serve --http``: streamable HTTP on a loopback address, behind a bearer token
printed once on stderr; both protocol eras; refused elsewhere (exit 2) and on a port in use
(exit 3)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import MCPCTL, Cli, stop_process
from tests.serve.conftest import ERAS, Answers, Served, basic_server, structured


@dataclass
class Listening:
    proc: subprocess.Popen[str]
    url: str
    token: str

    @asynccontextmanager
    async def client(
        self, *, mode: str = "legacy", token: str | None = None, answers: Answers | None = None
    ) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {token or self.token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=90) as http:
            transport = streamable_http_client(self.url, http_client=http)
            async with Client(transport, mode=mode, elicitation_callback=answers) as client:
                yield client


def start(served: Served, *args: str) -> Listening:
    proc = subprocess.Popen(
        [*MCPCTL, "--config", str(served.config), "serve", "--http", "127.0.0.1:0", *args],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=served.env, cwd=served.tmp,
    )  # fmt: skip
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while not any("bearer token" in line for line in lines):
        assert time.monotonic() < deadline, lines
        line = proc.stderr.readline()
        assert line or proc.poll() is None, f"serve ended: {lines} {proc.communicate()}"
        lines.append(line)
    url = next(line for line in lines if "listening on" in line).split("listening on ")[1].strip()
    token = next(line for line in lines if "bearer token" in line).rsplit(": ", 1)[1].strip()
    return Listening(proc, url, token)


@pytest.fixture
def listening(served: Served) -> Iterator[Any]:
    started: list[Listening] = []

    def go(*args: str) -> Listening:
        started.append(start(served, *args))
        return started[-1]

    yield go
    for item in started:
        stop_process(item.proc)


def post(url: str, headers: dict[str, str]) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
    req = urllib.request.Request(url, data=body, headers={  # noqa: S310 -- loopback
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        **headers,
    })  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:  # noqa: S310
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.parametrize("mode", ERAS)
def test_both_eras_over_http_with_the_token(served: Served, listening: Any, mode: str) -> None:
    served.write({"basic": basic_server()})
    server = listening("--allow-changes")
    answers = Answers()

    async def go() -> tuple[str, list[str], dict[str, Any]]:
        async with server.client(mode=mode, answers=answers) as client:
            names = [s["name"] for s in structured(await client.call_tool("list_servers", {}))[
                "servers"]]  # fmt: skip
            disabled = structured(await client.call_tool("disable_server", {"name": "basic"}))
            return client.protocol_version, names, disabled

    version, names, disabled = anyio.run(go)
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert names == ["basic"] and disabled["applied"] and len(answers.asked) == 1
    assert served.read()["basic"]["enabled"] is False
    assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")


def test_without_the_token_401(served: Served, listening: Any) -> None:
    served.write({})
    server = listening()
    assert post(server.url, {}) == 401
    assert post(server.url, {"Authorization": "Bearer " + "x" * len(server.token)}) == 401
    assert post(server.url, {"Authorization": server.token}) == 401  # no scheme
    # Past the gate: the request reaches the MCP endpoint (which wants a session first).
    assert post(server.url, {"Authorization": f"Bearer {server.token}"}) == 400
    port = server.url.split(":")[2].split("/")[0]
    # DNS rebinding: the right token from a page served under another name is refused.
    headers = {"Authorization": f"Bearer {server.token}", "Host": f"evil.example:{port}"}
    assert post(server.url, headers) == 421


def test_the_token_is_new_each_time(served: Served, listening: Any) -> None:
    served.write({})
    assert listening().token != listening().token


@pytest.mark.parametrize("address", ["0.0.0.0:8765", ":8765", "192.168.1.5:8765",
                                     "example.com:8765", "[::]:8765", "127.0.0.1"])  # fmt: skip
def test_a_non_loopback_address_is_refused(cli: Cli, address: str) -> None:
    r = cli("serve", "--http", address)
    assert r.exit_code == 2, r.stderr
    assert "--http" in r.stderr


def test_a_port_in_use_exits_3(cli: Cli) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r = cli("serve", "--http", f"127.0.0.1:{port}")
    assert r.exit_code == 3, r.stderr
    assert f"127.0.0.1:{port} is in use" in r.stderr


def test_json_does_not_apply(cli: Cli) -> None:
    r = cli("serve", "--json")
    assert r.exit_code == 2 and "--json does not apply" in r.stdout


def test_a_signal_stops_it_with_exit_0(served: Served, listening: Any) -> None:
    served.write({})
    server = listening()
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=30) == 0
