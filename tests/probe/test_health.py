"""Health probes (mcpctl/probe/health.py) without a server process where none is needed: the
requests of a probe once connected, against a session in the test's own process
(tests/probe/peer.py) -- what is listed, counted, timed and pinged in each era, a list the server
refuses -- and the frame around them: a server that cannot start, one that never answers,
many at once. tests/probe/test_probe.py probes real servers end to end.
"""

from __future__ import annotations

import shutil
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import resolve_entry
from mcpctl.probe import health
from mcpctl.probe.connect import Connection
from mcpctl.probe.eras import Era, EraMemory
from mcpctl.probe.health import Speaking, _list_and_ping, on_connection, probe, probe_all
from mcpctl.probe.healthstatus import ProbeResult
from mcpctl.probe.listingrepair import Listing
from mcpctl.probe.spawn import StdioDiagnostics
from tests.probe.peer import VERSION, Failure, Peer, session_with

DEADLINE = 30  # seconds for a whole test
SLEEP = shutil.which("sleep") or "/bin/sleep"
PAUSE = 0.05  # seconds the peer takes to answer a request: latencies are in milliseconds
TOOL = {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}}


def run(test: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await test()

    return anyio.run(bounded)


def server(tools: Any = None, prompts: Any = None, resources: Any = None) -> Callable[..., Any]:
    """Each list answered with its items, or the Failure given."""
    lists = {"tools/list": ("tools", tools), "prompts/list": ("prompts", prompts),
             "resources/list": ("resources", resources)}  # fmt: skip

    async def answer(method: str, params: dict[str, Any], peer: Peer) -> dict[str, Any]:
        await anyio.sleep(PAUSE)  # each request takes at least this long
        if method == "ping":
            return {}
        if method in lists:
            key, items = lists[method]
            if isinstance(items, Failure):
                raise items
            if isinstance(items, dict):  # a whole page, as given
                return items
            return {key: items or []}
        raise Failure(-32601, "Method not found")

    return answer


def probed(
    answer: Callable[..., Any],
    capabilities: dict[str, Any],
    era: str = "legacy",
    listing: Listing | None = None,
) -> tuple[ProbeResult, Peer]:
    """``_list_and_ping`` over a connection to ``answer``: its result, and what was sent."""
    entry = ServerEntry(command="server")

    async def main() -> tuple[ProbeResult, Peer]:
        async with session_with(answer, capabilities) as (session, peer):
            conn = Connection(
                name="s", session=session, transport="stdio", era=Era(era, VERSION),  # type: ignore[arg-type]
                resolved=resolve_entry("s", entry),  # type: ignore[arg-type]
                connect_ms=12.5, negotiate_ms=7.5, listing=listing or Listing(),
            )  # fmt: skip
            result = ProbeResult(name="s", transport="http")
            await _list_and_ping(conn, result, entry, None, "s")
            return result, peer

    return run(main)


ALL = {"tools": {}, "prompts": {}, "resources": {}, "logging": {}, "completions": {},
       "experimental": {"x": {}}}  # fmt: skip


def test_a_handshake_server_is_listed_counted_and_pinged() -> None:
    answer = server([TOOL], [{"name": "p"}, {"name": "q"}], [{"uri": "file:///a", "name": "a"}])
    result, peer = probed(answer, ALL)
    assert (result.available, result.healthy, result.error) == (True, True, None)
    assert result.transport == "stdio"  # the connection's, not the one guessed before
    assert result.era == Era("legacy", VERSION) and result.protocol_version == VERSION
    assert result.capabilities == [
        "tools", "resources", "prompts", "logging", "completions", "experimental"
    ]  # fmt: skip
    assert [t.name for t in result.tools] == ["echo"] and result.tool_count == 1
    assert result.tools[0].description == "Echo."
    assert (result.prompt_count, result.resource_count) == (2, 1)
    assert (result.server_name, result.server_version) == ("peer", "1.0.0")
    assert (result.listing_ttl_ms, result.listing_scope) == (None, None)
    assert result.latency_ms["connect"] == 12.5 and result.latency_ms["initialize"] == 7.5
    assert set(result.latency_ms) == {
        "connect", "initialize", "list_tools", "list_prompts", "list_resources", "ping"
    }  # fmt: skip
    steps = ("list_tools", "list_prompts", "list_resources", "ping")
    assert all(result.latency_ms[k] >= PAUSE * 1000 for k in steps)
    assert peer.after("initialize") == ["tools/list", "prompts/list", "resources/list", "ping"]
    assert (result.warnings, result.degraded) == ([], [])


def test_only_what_the_server_offers_is_listed() -> None:
    result, peer = probed(server([TOOL]), {"tools": {}})
    assert result.capabilities == ["tools"]
    assert (result.prompt_count, result.resource_count) == (None, None)
    assert peer.after("initialize") == ["tools/list", "ping"]
    assert set(result.latency_ms) == {"connect", "initialize", "list_tools", "ping"}
    result, peer = probed(server(), {"prompts": {}})
    assert result.capabilities == ["prompts"] and result.tools == []
    assert result.tool_count == 0 and result.prompt_count == 0 and result.healthy
    assert peer.after("initialize") == ["prompts/list", "ping"]
    result, peer = probed(server(resources=[]), {"resources": {}})
    assert (result.prompt_count, result.resource_count) == (None, 0)
    assert peer.after("initialize") == ["resources/list", "ping"]


def test_a_handshake_server_has_no_caching_hints() -> None:
    listing = Listing(ttl_ms=60000, cache_scope="public")  # none could be noted: left out
    result, _ = probed(server([TOOL]), {"tools": {}}, listing=listing)
    assert (result.listing_ttl_ms, result.listing_scope) == (None, None)


def test_a_stateless_server_is_not_pinged_and_its_caching_hints_are_kept() -> None:
    listing = Listing(ttl_ms=60000, cache_scope="public")
    result, peer = probed(server([TOOL]), {"tools": {}}, era="modern", listing=listing)
    assert "ping" not in peer.methods
    assert (result.listing_ttl_ms, result.listing_scope) == (60000, "public")
    assert "discover" in result.latency_ms and "initialize" not in result.latency_ms
    assert result.latency_ms["discover"] == 7.5
    assert result.era is not None and result.era.name == "modern" and result.healthy


def test_a_refused_tool_list_fails_the_probe_but_not_the_rest() -> None:
    answer = server(Failure(-32603, "db down"), [{"name": "p"}])
    result, peer = probed(answer, ALL)
    assert result.error is not None and result.error.code == "list_failed"
    assert "tools/list failed: db down" in result.error.message
    assert (result.healthy, result.available, result.tool_count) == (False, True, None)
    assert result.prompt_count == 1 and "ping" in peer.methods


def test_a_refused_prompt_or_resource_list_only_degrades() -> None:
    answer = server([TOOL], Failure(-32603, "no prompts today"), Failure(-32603, "nor these"))
    result, _ = probed(answer, ALL)
    assert result.healthy and result.error is None and result.tool_count == 1
    assert (result.prompt_count, result.resource_count) == (None, None)
    assert len(result.degraded) == 2
    assert "prompts/list failed: no prompts today" in result.degraded[0]
    assert "resources/list failed: nor these" in result.degraded[1]
    assert {"list_prompts", "list_resources"} <= set(result.latency_ms)


def test_a_list_that_fails_otherwise_fails_the_probe() -> None:
    # Not an error answer but one that cannot be read: that is no list_failed.
    with pytest.raises(Exception) as caught:
        probed(server({"tools": "not a list"}), {"tools": {}})
    assert not isinstance(caught.value, Failure)
    with pytest.raises(Exception):  # noqa: B017 -- whichever the SDK raises
        probed(server([TOOL], {"prompts": 3}), {"tools": {}, "prompts": {}})


def test_a_broken_listing_is_a_warning_of_the_result() -> None:
    page = {"tools": [TOOL], "nextCursor": "again"}  # the same cursor for ever
    result, _ = probed(server(page), {"tools": {}})
    assert result.warnings and "again" in result.warnings[0]
    assert result.healthy and result.tool_count == len(result.tools) >= 1


# --- the frame: servers that fail before any request --------------------------------------


def test_a_missing_program_fails_at_once_without_a_process(tmp_path: Path) -> None:
    entry = ServerEntry(command=str(tmp_path / "nope"))
    result = run(lambda: probe("gone", entry, kind="managed"))
    assert result.name == "gone" and result.type == "managed"
    assert result.error is not None and result.error.code == "command_not_found"
    assert (result.healthy, result.available, result.stderr) == (False, False, [])
    assert result.status == "unavailable"
    assert set(result.latency_ms) == {"total"} and result.latency_ms["total"] >= 0

    async def work(conn: Any) -> None:
        raise AssertionError("never connected")

    error, diag = run(
        lambda: on_connection("gone", entry, work, timeout=5, secrets=None, speaking=Speaking())
    )
    assert error is not None and error.code == "command_not_found" and diag is None


def test_a_server_that_never_answers_times_out_with_what_it_said(tmp_path: Path) -> None:
    script = "import sys, time; print('still booting', file=sys.stderr, flush=True); time.sleep(60)"
    entry = ServerEntry(command=sys.executable, args=("-c", script))
    result = run(lambda: probe("mute", entry, timeout=2))
    assert result.error is not None and result.error.code == "timeout"
    assert not result.healthy and result.degraded == []
    assert "still booting" in result.stderr
    assert result.latency_ms["total"] >= 2000


def raw(tmp_path: Path, **env: str) -> ServerEntry:
    script = tmp_path / "server.py"
    script.write_text(RAW_SERVER)
    return ServerEntry(command=sys.executable, args=(str(script),), env=env, protocol="legacy")


def test_a_healthy_server_is_judged_and_its_stderr_not_kept(tmp_path: Path) -> None:
    result = run(lambda: probe("raw", raw(tmp_path), slow=None))
    assert result.status == "healthy" and result.healthy and result.error is None
    assert result.type == "external"
    assert (result.tool_count, result.prompt_count, result.stderr) == (1, 0, [])
    assert result.degraded == []
    parts = ("connect", "initialize", "list_tools", "list_prompts", "ping")
    assert set(result.latency_ms) == {*parts, "total"}
    assert result.latency_ms["total"] >= max(result.latency_ms[k] for k in parts)
    assert result.latency_ms["total"] < DEADLINE * 1000


def test_a_limit_no_request_keeps_to_degrades_the_server(tmp_path: Path) -> None:
    result = run(lambda: probe("raw", raw(tmp_path), slow=1e-9))
    assert result.status == "degraded" and result.healthy
    assert len(result.degraded) == 1 and result.degraded[0].startswith("slow: ")
    assert result.stderr == []  # degraded is still healthy: its stderr is not kept


def test_a_failed_tool_list_keeps_the_other_reasons(tmp_path: Path) -> None:
    result = run(lambda: probe("raw", raw(tmp_path, RAW_BROKEN="1")))
    assert result.error is not None and result.error.code == "list_failed"
    assert (result.healthy, result.available) == (False, True)
    assert result.degraded == ["prompts/list failed: prompts/list is broken"]
    assert result.stderr == ["hello from raw"]


def test_the_entrys_own_timeout_bounds_the_probe_by_default(tmp_path: Path) -> None:
    script = "import time; time.sleep(60)"
    entry = ServerEntry(command=sys.executable, args=("-c", script), timeout=1500)
    result = run(lambda: probe("mute", entry))
    assert result.error is not None and result.error.code == "timeout"
    assert "1.5 s" in result.error.message


def test_a_remote_server_that_cannot_be_reached_has_no_stderr() -> None:
    with socket.socket() as sock:  # a port nobody listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        entry = ServerEntry(url=f"http://127.0.0.1:{port}/mcp")
        result = run(lambda: probe("far", entry, timeout=10))
    assert result.error is not None and result.error.code != "timeout"
    assert (result.healthy, result.available, result.stderr) == (False, False, [])
    assert result.transport == entry.effective_transport


def test_the_work_runs_on_the_connection_and_done_is_told(tmp_path: Path) -> None:
    """on_connection with a server that answers the handshake at once (a Python one-liner
    would take a second to import the SDK: this one is raw JSON-RPC)."""
    entry = raw(tmp_path)
    seen: list[Any] = []

    async def work(conn: Connection) -> None:
        seen.append((conn.name, conn.era.name))

    diag = StdioDiagnostics()
    error, got = run(lambda: on_connection(
        "raw", entry, work, timeout=10, secrets=None, speaking=Speaking(protocol="legacy"),
        done=lambda: seen.append("done"), diag=diag,
    ))  # fmt: skip
    assert error is None and got is diag
    assert seen == [("raw", "legacy"), "done"]

    async def failing(conn: Connection) -> None:
        raise RuntimeError("the work broke")

    error, got = run(lambda: on_connection(
        "raw", entry, failing, timeout=10, secrets=None, speaking=Speaking(protocol="legacy"),
        done=lambda: seen.append("not done"),
    ))  # fmt: skip
    assert error is not None and "the work broke" in error.message
    assert isinstance(got, StdioDiagnostics) and "not done" not in seen


RAW_SERVER = """
import json, os, sys
BROKEN = os.environ.get("RAW_BROKEN") == "1"
print("hello from raw", file=sys.stderr, flush=True)
def send(m):
    print(json.dumps({"jsonrpc": "2.0", **m}), flush=True)
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method, i = m["method"], m["id"]
    if method == os.environ.get("RAW_SILENT_ON"):
        continue
    if method == "initialize":
        caps = {"tools": {}, "prompts": {}}
        send({"id": i, "result": {"protocolVersion": "2025-06-18", "capabilities": caps,
                                  "serverInfo": {"name": "raw", "version": "1"}}})
    elif method == "tools/list" and os.environ.get("RAW_BROKEN") == "garbage":
        send({"id": i, "result": {"tools": "not a list"}})
    elif method in ("tools/list", "prompts/list") and BROKEN:
        send({"id": i, "error": {"code": -32603, "message": method + " is broken"}})
    elif method == "tools/list":
        tool = {"name": "t", "inputSchema": {"type": "object"}}
        send({"id": i, "result": {"tools": [tool]}})
    elif method == "prompts/list":
        send({"id": i, "result": {"prompts": []}})
    elif method == "ping":
        send({"id": i, "result": {}})
    else:
        send({"id": i, "error": {"code": -32601, "message": "Method not found"}})
"""


def test_many_servers_are_probed_in_input_order_each_told_as_it_comes(tmp_path: Path) -> None:
    entries = {n: ServerEntry(command=str(tmp_path / n)) for n in ("b", "a", "c")}
    told: list[str] = []
    results = run(lambda: probe_all(entries, on_result=lambda r: told.append(r.name)))
    assert [r.name for r in results] == ["b", "a", "c"]
    assert sorted(told) == ["a", "b", "c"]
    assert all(r.error is not None and r.error.code == "command_not_found" for r in results)
    triples = [("m", entries["a"], "managed")]
    (only,) = run(lambda: probe_all(triples))
    assert (only.name, only.type) == ("m", "managed")


def test_a_probe_that_fails_after_the_handshake_still_says_what_was_spoken(
    tmp_path: Path,
) -> None:
    result = run(lambda: probe("raw", raw(tmp_path, RAW_BROKEN="garbage")))
    assert result.error is not None and result.error.code != "list_failed"
    assert result.available and not result.healthy
    assert result.era is not None and result.era.version == "2025-06-18"
    assert result.protocol_version == "2025-06-18"


def test_many_servers_are_probed_the_way_one_is(tmp_path: Path) -> None:
    plain = ServerEntry(command=sys.executable, args=(str(tmp_path / "server.py"),))
    raw(tmp_path)  # writes the script
    needs = ServerEntry(command=plain.command, args=plain.args,
                        env={"TOKEN": "${MCPCTL_TEST_SECRET_VARIABLE}"})  # fmt: skip
    entries = {"plain": plain, "needs": needs}

    # Pinned, with a limit nothing keeps to, and the secret from the store (asked by the
    # probe itself: one at a time, only the first server is started before its probe).
    results = run(lambda: probe_all(
        entries, protocol="legacy", slow=1e-9, timeout=20, concurrency=1,
        secrets=lambda name: "s3cret" if name == "MCPCTL_TEST_SECRET_VARIABLE" else None,
    ))  # fmt: skip
    for result in results:
        assert result.era is not None and result.era.detected == "pinned", result.error
        assert result.status == "degraded" and result.degraded[0].startswith("slow: ")

    # Detected, and remembered; the secret not given: that server fails as by default.
    memory = EraMemory()
    plain_result, needs_result = run(lambda: probe_all(entries, eras=memory, timeout=20))
    assert plain_result.era is not None and plain_result.era.detected == "fallback"
    assert memory.recall(plain) is not None
    assert needs_result.error is not None and needs_result.error.code == "missing_variable"

    # The timeout given bounds each probe.
    mute = ServerEntry(command=sys.executable, args=("-c", "import time; time.sleep(60)"))
    (slow,) = run(lambda: probe_all({"mute": mute}, timeout=1.5))
    assert slow.error is not None and "1.5 s" in slow.error.message


def test_one_probe_speaks_remembers_and_resolves_as_told(tmp_path: Path) -> None:
    raw(tmp_path)  # writes the script
    plain = ServerEntry(command=sys.executable, args=(str(tmp_path / "server.py"),))
    pinned = run(lambda: probe("plain", plain, protocol="legacy"))
    assert pinned.era is not None and pinned.era.detected == "pinned"
    memory = EraMemory()
    found = run(lambda: probe("plain", plain, eras=memory))
    assert found.era is not None and found.era.detected == "fallback"
    assert memory.recall(plain) is not None

    needs = ServerEntry(command=plain.command, args=plain.args,
                        env={"TOKEN": "${MCPCTL_TEST_SECRET_VARIABLE}"})  # fmt: skip
    refused = run(lambda: probe("needs", needs))  # by default a missing value is an error
    assert refused.error is not None and refused.error.code == "missing_variable"
    assert "needs" in refused.error.message
    emptied = run(lambda: probe("needs", needs, policy="empty"))  # read as ""
    assert emptied.healthy, emptied.error
    store = {"MCPCTL_TEST_SECRET_VARIABLE": "s3cret"}
    given = run(lambda: probe("needs", needs, secrets=store.get))
    assert given.healthy, given.error

    async def work(conn: Connection) -> None:
        raise AssertionError("never connected")

    error, _ = run(lambda: on_connection("needs", needs, work, timeout=10, secrets=None,
                                         speaking=Speaking()))  # fmt: skip
    assert error is not None and error.code == "missing_variable"


def test_a_server_started_early_is_the_one_probed(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = tmp_path / "server.py"
    script.write_text(f"import os; open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
                      + RAW_SERVER)  # fmt: skip
    entry = ServerEntry(command=sys.executable, args=(str(script),), protocol="legacy")
    (result,) = run(lambda: probe_all({"raw": entry}))
    assert result.healthy, result.error
    assert len(pids.read_text().split()) == 1  # not a second one of its own


def test_garbage_on_stdout_is_blamed_when_the_server_times_out() -> None:
    script = "import time; print('not json', flush=True); time.sleep(60)"
    entry = ServerEntry(command=sys.executable, args=("-c", script))
    result = run(lambda: probe("noisy", entry, timeout=1.5))
    assert result.error is not None and result.error.code == "protocol_error"
    assert "not JSON-RPC" in result.error.message and "'not json'" in result.error.message


def test_an_npx_server_that_times_out_without_its_package_is_downloading(
    tmp_path: Path,
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"  # a runner that never answers, its cache empty
    npx.write_text("#!/bin/sh\nexec sleep 30\n")
    npx.chmod(0o755)
    env = {"npm_config_cache": str(tmp_path / "cache")}
    entry = ServerEntry(command=str(npx), args=("-y", "pkg@1"), env=env)
    result = run(lambda: probe("npx-srv", entry, timeout=1.5))
    assert result.error is not None and result.error.code == "timeout"
    assert result.error.message.endswith(", still downloading its package")
    assert "mcpctl prefetch npx-srv" in (result.error.hint or "")


def test_a_server_that_exits_at_once_is_told_apart_by_what_its_process_did() -> None:
    script = "import sys; print('cannot start: no config', file=sys.stderr); sys.exit(3)"
    entry = ServerEntry(command=sys.executable, args=("-c", script))
    result = run(lambda: probe("quits", entry, timeout=20))
    assert result.error is not None and result.error.code == "server_exited"
    assert "cannot start: no config" in result.stderr


# --- what mutation testing found unpinned ---------------------------------------------------


def ticking(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's clock made one that moves a second each time it is read."""
    ticks = iter(range(1000))
    monkeypatch.setattr(health, "time", SimpleNamespace(perf_counter=lambda: float(next(ticks))))


def test_each_latency_is_in_milliseconds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    ticking(monkeypatch)
    result, _ = probed(server([TOOL], [], []), ALL)
    steps = ("list_tools", "list_prompts", "list_resources", "ping")
    assert {k: result.latency_ms[k] for k in steps} == dict.fromkeys(steps, 1000.0)
    result = run(lambda: probe("gone", ServerEntry(command=str(tmp_path / "nope"))))
    assert result.latency_ms == {"total": 1000.0}


def test_the_total_counts_from_the_servers_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A server started before its probe (run_all's): its diagnostics say when, and keep its
    # stderr, whatever the probe then finds.
    ticking(monkeypatch)
    diag = StdioDiagnostics()
    diag.started_at = -4.0
    diag.stderr.append("booting")
    entry = ServerEntry(command=str(tmp_path / "nope"))
    result = run(lambda: health._probe(
        "gone", entry, "external", 5, "error", None, Speaking(), None, None, diag
    ))  # fmt: skip
    assert result.latency_ms == {"total": 5000.0}
    assert result.stderr == ["booting"]


def test_the_probes_timeout_bounds_each_request_not_the_entrys(tmp_path: Path) -> None:
    # Silent on server/discover: auto waits a third of the probe's 4.5 s for it, then shakes
    # hands; a third of the entry's minute would outlast the probe.
    entry = raw(tmp_path, RAW_SILENT_ON="server/discover")
    entry = ServerEntry(command=entry.command, args=entry.args, env=entry.env, timeout=60_000)
    result = run(lambda: probe("raw", entry, timeout=4.5, slow=None))
    assert result.healthy, result.error
    assert result.era is not None and result.era.name == "legacy"
