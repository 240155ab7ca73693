"""Connecting to a configured server (mcpctl.probe.connect): the connection's fields, its
era settled and confirmed by the first request, placeholders, the eras remembered, and the
remote transports tried in turn. The stdio servers are tests/servers/scripted.py (raw
JSON-RPC, no SDK: quick to start), the remote ones a local HTTP server."""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import anyio
import httpx2
import mcp_types as types
import pytest

from mcpctl import __version__
from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import resolve_entry
from mcpctl.errors import PlaceholderError, ProbeFailed
from mcpctl.probe.connect import _worth_fallback, connect, open_session
from mcpctl.probe.eras import Era, EraMemory
from mcpctl.probe.spawn import StdioDiagnostics, spawn_server
from mcpctl.sdk import ClientSession, MCPError
from tests.conftest import SERVERS
from tests.httpthread import reply, serving_http

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
DEADLINE = 30  # seconds for one test's connection; the servers answer at once
MODERN_CACHE = {"ttlMs": 0, "cacheScope": "private", "resultType": "complete"}

INIT = {
    "result": {
        "protocolVersion": HANDSHAKE,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "3"},
        "instructions": "be brief",
    }
}
DISCOVER = {
    "result": {
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {}, "prompts": {}},
        "instructions": "stateless",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "2"}},
    }
}
NOT_FOUND = {"error": {"code": -32601, "message": "Method not found"}}
REFUSED = {"error": {"code": -32600, "message": "send initialize first"}}
TOOLS = {"result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}
MODERN_TOOLS = {"result": {**TOOLS["result"], **MODERN_CACHE}}


def scripted(script: dict[str, list[Any]], **kw: Any) -> ServerEntry:
    args = (str(SERVERS / "scripted.py"), json.dumps(script))
    return ServerEntry(command=sys.executable, args=args, **{"timeout": 20000, **kw})


def run(fn: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await fn()

    return anyio.run(bounded)


def received(conn: Any) -> list[str]:
    """The methods the server got, as it wrote them on stderr (known once it stopped)."""
    return conn.diagnostics.tail()


def test_a_handshake_connection_and_what_it_knows() -> None:
    entry = scripted({"initialize": [INIT], "tools/list": [TOOLS]})
    found: dict[str, Any] = {}

    async def main() -> Any:
        async with connect("srv", entry) as conn:
            found["info"] = conn.server_info
            found["caps"] = conn.capabilities
            found["instructions"] = conn.instructions
            found["init"] = conn.initialize_result
            found["tools"] = await conn.request(conn.session.list_tools)
            return conn

    conn = run(main)
    assert conn.name == "srv" and conn.transport == "stdio"
    assert conn.era == Era("legacy", HANDSHAKE, (), "fallback")
    assert conn.resolved.name == "srv" and conn.resolved.entry == entry
    assert isinstance(conn.diagnostics, StdioDiagnostics) and conn.diagnostics.pid
    assert conn.connect_ms >= 0 and conn.negotiate_ms > 0
    assert conn.listing.protocol_version == HANDSHAKE
    assert conn.ended is not None and conn.ended.is_set()
    assert conn.era_check is None and conn.on_new_era is None
    assert found["info"].name == "scripted" and found["instructions"] == "be brief"
    assert found["caps"].tools is not None and found["caps"].prompts is None
    assert found["init"].protocol_version == HANDSHAKE
    assert [t.name for t in found["tools"].tools] == ["t"]
    assert received(conn) == [
        "server/discover", "initialize", "notifications/initialized", "tools/list",
    ]  # fmt: skip


def test_mcpctl_says_who_it_is(tmp_path: Path) -> None:
    log = tmp_path / "requests"
    entry = scripted({"initialize": [INIT]}, env={"SCRIPTED_SERVER_REQUESTS": str(log)})

    async def main() -> Any:
        async with connect("srv", entry, protocol="legacy") as conn:
            return conn

    run(main)
    sent = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    [init] = [m for m in sent if m.get("method") == "initialize"]
    assert init["params"]["clientInfo"] == {"name": "mcpctl", "version": __version__}


def test_a_stateless_connection_and_what_it_knows() -> None:
    entry = scripted({"server/discover": [DISCOVER], "tools/list": [MODERN_TOOLS]})
    found: dict[str, Any] = {}

    async def main() -> Any:
        async with connect("srv", entry) as conn:
            found["info"] = conn.server_info
            found["caps"] = conn.capabilities
            found["instructions"] = conn.instructions
            found["init"] = conn.initialize_result
            found["check"] = conn.era_check
            await conn.request(conn.session.list_tools)
            found["after"] = conn.era_check
            return conn

    conn = run(main)
    assert conn.era == Era("modern", MODERN, (MODERN,), "discovered")
    assert found["info"].name == "m" and found["instructions"] == "stateless"
    assert found["caps"].prompts is not None and found["init"] is None
    assert found["check"] is not None and found["after"] is None  # confirmed by the request
    assert received(conn) == ["server/discover", "tools/list"]


def test_a_stateless_era_refused_by_the_first_request_becomes_the_handshake(
    tmp_path: Path,
) -> None:
    entry = scripted(
        {"server/discover": [DISCOVER], "tools/list": [REFUSED, TOOLS], "initialize": [INIT]}
    )
    memory = EraMemory(tmp_path / "eras.json")

    async def main() -> Any:
        async with connect("srv", entry, eras=memory) as conn:
            tools = await conn.request(conn.session.list_tools)
            return conn, tools

    conn, tools = run(main)
    assert [t.name for t in tools.tools] == ["t"]
    assert conn.era == Era("legacy", HANDSHAKE, (), "fallback")
    assert conn.listing.protocol_version == HANDSHAKE
    assert received(conn) == [
        "server/discover", "tools/list", "initialize", "notifications/initialized", "tools/list",
    ]  # fmt: skip
    # remembered, on disk
    assert EraMemory(tmp_path / "eras.json").recall(entry) == Era(
        "legacy", HANDSHAKE, (), "remembered"
    )


def test_a_refusal_stands_when_the_handshake_fails_too() -> None:
    entry = scripted({"server/discover": [DISCOVER], "tools/list": [REFUSED]})

    async def main() -> Any:
        async with connect("srv", entry) as conn:
            with pytest.raises(MCPError) as caught:
                await conn.request(conn.session.list_tools)
            return conn, caught.value

    conn, error = run(main)
    assert error.error.message == "send initialize first"
    assert conn.era.name == "modern"
    assert received(conn) == ["server/discover", "tools/list", "initialize"]


def test_only_the_first_request_checks_the_era() -> None:
    entry = scripted({"server/discover": [DISCOVER], "tools/list": [MODERN_TOOLS, REFUSED]})

    async def main() -> Any:
        async with connect("srv", entry) as conn:
            await conn.request(conn.session.list_tools)
            with pytest.raises(MCPError):
                await conn.request(conn.session.list_tools)
            return conn

    conn = run(main)
    assert conn.era.name == "modern"
    assert "initialize" not in received(conn)


def test_a_pinned_stateless_era_is_not_checked() -> None:
    entry = scripted({"server/discover": [DISCOVER], "tools/list": [REFUSED]})

    async def main() -> Any:
        async with connect("srv", entry, protocol="modern") as conn:
            assert conn.era_check is None
            with pytest.raises(MCPError):
                await conn.request(conn.session.list_tools)
            return conn

    conn = run(main)
    assert conn.era == Era("modern", MODERN, (MODERN,), "pinned")
    assert received(conn) == ["server/discover", "tools/list"]


def test_a_remembered_era_is_tried_first_and_a_pinned_one_ignores_the_memory(
    tmp_path: Path,
) -> None:
    entry = scripted({"initialize": [INIT], "server/discover": [DISCOVER]})
    memory = EraMemory(tmp_path / "eras.json")
    memory.remember(entry, Era("legacy", HANDSHAKE, (), "fallback"))

    async def main(protocol: Any) -> Any:
        async with connect("srv", entry, eras=memory, protocol=protocol) as conn:
            return conn

    remembered = run(lambda: main(None))
    assert remembered.era == Era("legacy", HANDSHAKE, (), "remembered")
    assert received(remembered)[0] == "initialize"
    pinned = run(lambda: main("modern"))
    assert pinned.era.detected == "pinned" and pinned.on_new_era is None
    assert memory.recall(entry) == Era("legacy", HANDSHAKE, (), "remembered")


def test_the_entrys_timeout_bounds_each_request() -> None:
    entry = scripted({"initialize": [INIT], "tools/list": ["silent"]}, timeout=1500)

    async def main() -> Any:
        async with connect("srv", entry, protocol="legacy") as conn:
            with pytest.raises(MCPError) as caught:
                await conn.request(conn.session.list_tools)
            return caught.value

    error = run(main)
    assert error.code == types.REQUEST_TIMEOUT


def test_a_started_server_is_used() -> None:
    entry = scripted({"initialize": [INIT]})

    async def main() -> Any:
        resolved = resolve_entry("srv", entry, policy="error")
        assert resolved is not None
        process = await spawn_server(resolved.entry)
        async with connect("srv", entry, process=process, resolved=resolved) as conn:
            return process, conn

    process, conn = run(main)
    assert conn.diagnostics.pid == process.pid and process.returncode is not None


def test_open_session_is_a_session_in_a_settled_era() -> None:
    entry = scripted({"initialize": [INIT]})

    async def main() -> Any:
        async with open_session(entry, protocol="legacy") as session:
            assert isinstance(session, ClientSession)
            return session.protocol_version

    assert run(main) == HANDSHAKE


def test_a_missing_variable_is_a_placeholder_error() -> None:
    entry = ServerEntry(command="srv", env={"TOKEN": "${MCPCTL_TEST_UNSET_VARIABLE}"})

    async def main(policy: Any) -> None:
        async with connect("srv", entry, policy=policy, environ={}):
            pass

    with pytest.raises(PlaceholderError) as caught:
        run(lambda: main("error"))
    assert "MCPCTL_TEST_UNSET_VARIABLE" in str(caught.value)
    with pytest.raises(PlaceholderError) as skipped:
        run(lambda: main("skip"))
    assert str(skipped.value).startswith("server 'srv' skipped: a variable is not set")


@pytest.mark.parametrize(
    ("protocol", "pinned_by"), [("modern", "--protocol modern"), (None, 'its "protocol": "modern"')]
)
def test_sse_and_a_pinned_stateless_era_are_refused_before_connecting(
    protocol: Any, pinned_by: str
) -> None:
    entry = ServerEntry(url="http://127.0.0.1:9/sse", transport="sse", protocol="modern")

    async def main() -> None:
        async with connect("srv", entry, protocol=protocol):
            pass

    with pytest.raises(ProbeFailed) as caught:
        run(main)
    assert caught.value.reason == "protocol_mismatch"
    assert f"; {pinned_by} asks for the stateless ones" in str(caught.value)


# --- remote: which transports are tried ------------------------------------------------------


class Refusing(BaseHTTPRequestHandler):
    """Answers every request with ``status``, noting each method."""

    status: ClassVar[int] = 404
    seen: ClassVar[list[str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def answer(self) -> None:
        Refusing.seen.append(self.command)
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        reply(self, Refusing.status, b"no", {"WWW-Authenticate": "Bearer"})

    do_GET = do_POST = do_DELETE = answer


def attempts(status: int, transport: Any = None) -> tuple[list[str], BaseException | None]:
    Refusing.status, Refusing.seen = status, []
    with serving_http(Refusing) as base:
        entry = ServerEntry(url=f"{base}/mcp", transport=transport, timeout=5000)

        async def main() -> None:
            async with connect("srv", entry):
                pass

        try:
            run(main)
        except BaseException as exc:
            return Refusing.seen, exc
    return Refusing.seen, None


def test_a_url_without_transport_tries_streamable_http_then_sse() -> None:
    seen, failure = attempts(404)
    assert failure is not None
    assert seen[0] == "POST" and "GET" in seen  # the SSE stream asked for after the POST


def test_a_named_transport_is_the_only_one_tried() -> None:
    seen, failure = attempts(404, "streamable-http")
    assert failure is not None and "GET" not in seen


def test_a_sign_in_refused_is_not_a_reason_to_try_sse() -> None:
    seen, failure = attempts(401)
    assert failure is not None and "GET" not in seen


def status_error(code: int) -> httpx2.HTTPStatusError:
    request = httpx2.Request("POST", "http://127.0.0.1/mcp")
    return httpx2.HTTPStatusError(
        "x", request=request, response=httpx2.Response(code, request=request)
    )


def test_which_failures_of_streamable_http_may_mean_sse() -> None:
    for code in (400, 404, 405, 406, 415):
        assert _worth_fallback(status_error(code)), code
        assert _worth_fallback(ExceptionGroup("g", [ValueError(), status_error(code)])), code
    for code in (401, 403, 500, 502):
        assert not _worth_fallback(status_error(code)), code
    stand_in = MCPError(-32600, "Session terminated")
    assert _worth_fallback(stand_in)
    assert not _worth_fallback(MCPError(-32600, "HTTP 401"))
    assert not _worth_fallback(OSError("refused")) and not _worth_fallback(ValueError())
