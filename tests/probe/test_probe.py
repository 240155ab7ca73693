"""Probing real servers over stdio, SSE and streamable HTTP, and every fault we know."""

from __future__ import annotations

import base64
import http.server
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.errors import CommandNotFoundError, ProbeFailed
from mcpctl.probe import call_tool, list_tools, open_session, probe, probe_all
from tests.conftest import SERVERS, free_port

PY = sys.executable
BASIC_TOOLS = {"echo", "add", "weather", "fail", "slow", "record", "image", "audio", "resource",
               "headers"}  # fmt: skip


def basic(*extra: str, timeout: int | None = None) -> ServerEntry:
    return ServerEntry(command=PY, args=(str(SERVERS / "basic.py"), *extra), timeout=timeout)


def misbehave(mode: str, *extra: str, timeout: int = 5000) -> ServerEntry:
    return ServerEntry(
        command=PY, args=(str(SERVERS / "misbehave.py"), mode, *extra), timeout=timeout
    )


def run(coro_fn: Any) -> Any:
    return anyio.run(coro_fn)


# --- healthy servers over each transport ----------------------------------------------------


def test_stdio_probe_reports_everything() -> None:
    r = run(lambda: probe("basic", basic()))
    assert r.healthy and r.available and r.error is None
    assert r.transport == "stdio"
    assert r.server_name == "basic-test-server"
    assert r.protocol_version
    assert "tools" in r.capabilities
    assert r.tool_count == len(BASIC_TOOLS) and {t.name for t in r.tools} == BASIC_TOOLS
    # A dual-era SDK server answers server/discover: no handshake, no ping.
    assert r.era is not None and r.era.name == "modern" and r.protocol_version == "2026-07-28"
    assert set(r.latency_ms) >= {"connect", "discover", "list_tools", "total"}
    assert "ping" not in r.latency_ms
    data = r.to_dict()
    assert list(data)[:4] == ["name", "available", "healthy", "type"]
    assert data["protocol"]["era"] == "modern" and "2026-07-28" in data["protocol"]["supported"]


def test_stdio_probe_in_the_handshake_era_pings() -> None:
    r = run(lambda: probe("basic", basic(), protocol="legacy"))
    assert r.healthy, r.error
    assert r.era is not None and r.era.name == "legacy" and r.era.detected == "pinned"
    assert r.protocol_version == "2025-11-25"
    assert set(r.latency_ms) >= {"connect", "initialize", "list_tools", "ping", "total"}


def test_tools_list_follows_every_page() -> None:
    r = run(lambda: probe("paged", ServerEntry(command=PY, args=(str(SERVERS / "paged.py"),))))
    assert r.healthy, r.error
    assert r.tool_count == 25
    assert [t.name for t in r.tools] == [f"tool_{i:02d}" for i in range(25)]


@pytest.mark.parametrize(("transport", "path", "declared"), [
    ("streamable-http", "/mcp", None),
    ("streamable-http", "/mcp", "streamable-http"),
    ("sse", "/sse", "sse"),
    ("sse", "/sse", None),  # no transport named: streamable HTTP first, then SSE
])  # fmt: skip
def test_remote_transports(
    http_server: Any, transport: str, path: str, declared: str | None
) -> None:
    base = http_server(transport)
    entry = ServerEntry(url=base + path, transport=declared, timeout=15000)  # type: ignore[arg-type]
    r = run(lambda: probe("remote", entry))
    assert r.healthy, r.error
    assert r.transport == transport
    assert r.tool_count == len(BASIC_TOOLS)


KEY = "k3y-value-7781"
TOKEN = "t0ken-value-5512"
USER = "alice-9921"
PASSWORD = "pa55word-3318"


def _received(entry: ServerEntry) -> dict[str, str]:
    """The headers the server's ``headers`` tool saw."""
    res = run(lambda: call_tool("remote", entry, "headers"))
    assert not res.is_error, res.text
    received: dict[str, str] = res.structured
    return received


@pytest.mark.slow
@pytest.mark.parametrize(("transport", "path"), [("streamable-http", "/mcp"), ("sse", "/sse")])
def test_headers_and_auth_reach_the_server_resolved_and_stay_secret(
    http_server: Any, monkeypatch: pytest.MonkeyPatch, transport: str, path: str
) -> None:
    url = http_server(transport) + path
    for var, value in (("T_KEY", KEY), ("T_TOKEN", TOKEN), ("T_USER", USER), ("T_PASS", PASSWORD)):
        monkeypatch.setenv(var, value)
    bearer = ServerEntry(
        url=url, transport=transport,  # type: ignore[arg-type]
        headers={"X-Api-Key": "${T_KEY}", "X-Plain": "plain-${T_USER:-nobody}"},
        auth=AuthConfig("bearer", token="${T_TOKEN}"), timeout=15000,
    )  # fmt: skip
    got = _received(bearer)
    assert got["x-api-key"] == KEY
    assert got["x-plain"] == f"plain-{USER}"
    assert got["authorization"] == f"Bearer {TOKEN}"
    basic_auth = ServerEntry(
        url=url, transport=transport,  # type: ignore[arg-type]
        auth=AuthConfig("basic", username="${T_USER}", password="${T_PASS}"), timeout=15000,
    )  # fmt: skip
    expected = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert _received(basic_auth)["authorization"] == f"Basic {expected}"
    for entry in (bearer, basic_auth):
        r = run(lambda e=entry: probe("remote", e))  # type: ignore[misc]
        assert r.healthy, r.error
        shown = json.dumps(r.to_dict(with_tools=True))
        for secret in (KEY, TOKEN, USER, PASSWORD, expected):
            assert secret not in shown


def test_missing_placeholder_is_reported_not_raised() -> None:
    entry = ServerEntry(
        command=PY, args=(str(SERVERS / "basic.py"),), env={"T": "${NOT_SET_ANYWHERE_X}"}
    )
    r = run(lambda: probe("s", entry))
    assert not r.healthy and r.error is not None and r.error.code == "missing_variable"
    assert "NOT_SET_ANYWHERE_X" in r.error.message


def test_open_session_gives_an_initialized_session() -> None:
    async def go() -> list[str]:
        async with open_session(basic(), name="basic") as session:
            result = await session.call_tool("add", {"a": 2, "b": 40})
            return [c.text for c in result.content]  # type: ignore[union-attr]

    assert run(go) == ["42"]


@pytest.mark.slow
def test_list_tools_and_call_tool() -> None:
    tools = run(lambda: list_tools("basic", basic()))
    weather = next(t for t in tools if t.name == "weather")
    assert weather.params_summary() == "city*: string, days: integer"
    ok = run(lambda: call_tool("basic", basic(), "weather", {"city": "Oslo", "days": 2}))
    assert not ok.is_error and ok.structured == {
        "city": "Oslo",
        "days": 2,
        "forecast": ["sunny", "sunny"],
    }
    bad = run(lambda: call_tool("basic", basic(), "fail", {"message": "disk on fire"}))
    assert bad.is_error and "disk on fire" in bad.text


# --- faults ---------------------------------------------------------------------------------


def test_command_that_does_not_exist_fails_fast() -> None:
    start = time.monotonic()
    r = run(lambda: probe("x", ServerEntry(command="definitely-not-a-command-mcp")))
    assert time.monotonic() - start < 1.0
    assert r.error is not None and r.error.code == "command_not_found"
    assert "definitely-not-a-command-mcp" in r.error.message
    r = run(lambda: probe("x", ServerEntry(command="npx-missing-xyz")))
    assert r.error is not None and r.error.hint


def test_nothing_listening() -> None:
    port = free_port()
    r = run(lambda: probe("x", ServerEntry(url=f"http://127.0.0.1:{port}/mcp", timeout=5000)))
    assert r.error is not None and r.error.code == "connection_refused"


class _Fault(http.server.BaseHTTPRequestHandler):
    status = 500
    body = b'{"error": "boom"}'
    ctype = "application/json"
    challenge = ""

    def _answer(self) -> None:
        self.send_response(self.status)
        if self.challenge:
            self.send_header("WWW-Authenticate", self.challenge)
        self.send_header("Content-Type", self.ctype)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def fault_server() -> Iterator[Any]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(status: int, body: bytes, ctype: str, challenge: str = "") -> str:
        fields = {"status": status, "body": body, "ctype": ctype, "challenge": challenge}
        handler = type("H", (_Fault,), fields)
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize(
    ("status", "body", "ctype", "code"),
    [
        (500, b'{"error": "boom"}', "application/json", "http_error"),
        (200, b"<html><body>Welcome to nginx</body></html>", "text/html", "not_mcp"),
        (404, b"<html>Not Found</html>", "text/html", "not_mcp"),
        (401, b"", "text/plain", "unauthorized"),
    ],
)
def test_remote_faults(fault_server: Any, status: int, body: bytes, ctype: str, code: str) -> None:
    url = fault_server(status, body, ctype) + "/mcp"
    start = time.monotonic()
    r = run(lambda: probe("remote", ServerEntry(url=url, timeout=5000)))
    assert time.monotonic() - start < 6
    assert r.error is not None, r
    assert r.error.code == code, r.error
    assert r.status == "unavailable"
    if code == "unauthorized":  # no challenge: the credentials sent were refused
        assert "credentials of 'remote'" in (r.error.hint or "")


@pytest.mark.parametrize("transport", [None, "streamable-http", "sse"])
def test_a_401_with_a_challenge_needs_auth(fault_server: Any, transport: str | None) -> None:
    # Whichever transport: the SDK's streamable-HTTP client hides the status; mcpctl does not.
    challenge = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'
    url = fault_server(401, b"", "text/plain", challenge) + "/mcp"
    entry = ServerEntry(url=url, timeout=5000, transport=transport)
    r = run(lambda: probe("remote", entry))
    assert r.error is not None and r.error.code == "auth_required", r.error
    assert r.status == "needs_auth" and not r.healthy
    assert "asks for a sign-in (Bearer)" in r.error.message
    assert "mcpctl auth remote" in (r.error.hint or "")
    assert r.to_dict()["status"] == "needs_auth"


@pytest.mark.slow
def test_one_bad_server_does_not_delay_the_others() -> None:
    entries = {
        "good": basic(),
        "hang": misbehave("hang", timeout=3000),
        "missing": ServerEntry(command="no-such-command-xyz"),
        "exit": misbehave("exit"),
    }
    start = time.monotonic()
    results = run(lambda: probe_all(entries, concurrency=4))
    elapsed = time.monotonic() - start
    assert [r.name for r in results] == ["good", "hang", "missing", "exit"]
    status = {r.name: (r.healthy, r.error.code if r.error else None) for r in results}
    assert status == {"good": (True, None), "hang": (False, "timeout"),
                      "missing": (False, "command_not_found"), "exit": (False, "server_exited")}  # fmt: skip
    assert elapsed < 3.0 + 2.0


def test_call_tool_on_a_missing_command_is_the_users_to_fix() -> None:
    with pytest.raises(CommandNotFoundError) as info:
        run(lambda: call_tool("x", ServerEntry(command="no-such-command-xyz"), "t"))
    assert info.value.exit_code == 2 and "no-such-command-xyz" in info.value.message


def test_call_tool_on_an_unreachable_server_raises_probe_failed() -> None:
    entry = ServerEntry(url=f"http://127.0.0.1:{free_port()}/mcp", timeout=2000)
    with pytest.raises(ProbeFailed) as info:
        run(lambda: call_tool("x", entry, "t"))
    assert info.value.reason == "connection_refused" and info.value.exit_code == 3
    assert info.value.to_dict()["reason"] == "connection_refused"


def test_child_environment_gets_entry_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "env.txt"
    script = f"import os; open({str(out)!r}, 'w').write(os.environ.get('FROM_ENTRY', ''))"
    entry = ServerEntry(
        command=PY, args=("-c", script), env={"FROM_ENTRY": "${SRC:-fallback}"}, timeout=3000
    )
    monkeypatch.delenv("SRC", raising=False)
    run(lambda: probe("x", entry))
    assert out.read_text() == "fallback"
    assert os.environ.get("FROM_ENTRY") is None
    # With the variable set, its value wins over the default.
    monkeypatch.setenv("SRC", "from-the-environment")
    run(lambda: probe("x", entry))
    assert out.read_text() == "from-the-environment"
    assert os.environ.get("FROM_ENTRY") is None


# --- the state a client would show ------------------------------------------------------------


def raw(mode: str, **env: str) -> ServerEntry:
    return ServerEntry(command=PY, args=(str(SERVERS / "raw.py"), mode), env=env, timeout=20000)


def test_a_tools_list_answered_with_an_error_is_degraded() -> None:
    r = run(lambda: probe("idx", raw("list-error")))
    assert r.available and r.status == "degraded"
    # healthy keeps its meaning: the tool list is not known.
    assert not r.healthy and r.tool_count is None
    assert r.error is not None and r.error.code == "list_failed"
    assert r.error.message == "tools/list failed: the index is unavailable"
    assert r.degraded == [
        "prompts/list failed: the index is unavailable",
        "resources/list failed: the index is unavailable",
    ]
    assert "ping" in r.latency_ms  # the probe went on after the failed list
    data = r.to_dict()
    assert data["status"] == "degraded" and data["error"]["code"] == "list_failed"


def test_a_prompts_list_answered_with_an_error_is_degraded_with_its_tools_known() -> None:
    r = run(lambda: probe("p", raw("prompts-error")))
    assert r.status == "degraded" and r.healthy and r.error is None
    assert r.tool_count == 1
    assert r.degraded == ["prompts/list failed: the index is unavailable"]
    assert r.to_dict()["degraded"] == r.degraded


def test_a_repaired_tool_list_is_degraded() -> None:
    r = run(lambda: probe("raw", raw("tools")))
    assert r.status == "degraded" and r.healthy and r.tool_count == 6
    assert len(r.warnings) == 6 and len(r.degraded) == 1
    assert r.degraded[0].startswith("mcpctl repaired its tool list (6 problems: tool 'read_file'")


def test_slow_requests_degrade_and_the_limit_is_the_callers() -> None:
    entry = raw("slow", RAW_SERVER_DELAY="1")
    results = run(lambda: probe_all({"a": entry, "b": entry}, slow=0.1))
    for r in results:
        assert r.status == "degraded" and r.healthy
        assert r.degraded[0].startswith("slow: tools/list took ")
        assert r.degraded[0].endswith(" ms (the limit is 100 ms)")
    # No limit (or a generous one): the same answers are healthy.
    assert run(lambda: probe("s", entry, slow=None)).status == "healthy"
    assert run(lambda: probe("s", entry, slow=60)).status == "healthy"


def test_a_well_behaved_server_is_healthy_and_lists_its_prompts_and_resources() -> None:
    r = run(lambda: probe("basic", basic()))
    assert r.status == "healthy" and r.degraded == [] and r.reasons == []
    offered = {"prompts": "list_prompts", "resources": "list_resources"}
    assert {key for what, key in offered.items() if what in r.capabilities} <= set(r.latency_ms)


def test_failing_states() -> None:
    from mcpctl.errors import UsageError
    from mcpctl.probe.health import FAILING, HealthStatus, failing_states

    assert failing_states([]) == FAILING and HealthStatus.healthy not in FAILING
    assert failing_states(["unhealthy"]) == {HealthStatus.unhealthy, HealthStatus.unavailable}
    assert failing_states(["degraded, needs_auth", "NEEDS_AUTH"]) == {
        HealthStatus.degraded,
        HealthStatus.needs_auth,
    }
    with pytest.raises(UsageError) as caught:
        failing_states(["needs-auth"])
    assert "did you mean 'needs_auth'" in caught.value.message
    with pytest.raises(UsageError):
        failing_states(["healthy"])
