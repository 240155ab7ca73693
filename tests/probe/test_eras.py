"""The two protocol eras through mcpctl's library: detection (server/discover, then the
handshake), pinned eras and their mismatch errors, the same catalog in either era, and the
memory of detected eras (EraMemory) -- against modern-only, handshake-only and dual-era
servers over stdio and streamable HTTP."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import ProbeFailed
from mcpctl.probe import call_tool, list_tools, probe
from mcpctl.probe.catalog import catalog
from mcpctl.probe.eras import (
    MEMORY_FILENAME,
    MEMORY_MAX_ENTRIES,
    Era,
    EraMemory,
    ProtocolMode,
    effective_mode,
    era_key,
)
from mcpctl.probe.health import ProbeResult
from mcpctl.probe.negotiate import CLIENT_HANDSHAKE_VERSIONS, discover_timeout
from mcpctl.snapshot import diff_snapshots, take_snapshot
from tests.conftest import (
    SERVERS,
    free_port,
    published_npm_server,
    stop_process,
    wait_for_port,
)

PY = sys.executable
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
DEADLINE = 90  # seconds for any one library call; the servers answer in milliseconds
MODERN_TOOLS = {"echo", "add", "ask"}
LEGACY_TOOLS = {"echo", "add"}
ERAS: tuple[ProtocolMode, ...] = ("modern", "legacy")


def run(fn: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(DEADLINE):
            return await fn()

    return anyio.run(bounded)


def script(name: str, *args: str, timeout: int = 15000, **kw: Any) -> ServerEntry:
    return ServerEntry(command=PY, args=(str(SERVERS / name), *args), timeout=timeout, **kw)


def modern() -> ServerEntry:
    return script("modern.py")


def assert_mismatch(r: ProbeResult, *named: str, hint: str = "--protocol auto") -> str:
    assert not r.healthy and r.error is not None, r
    assert r.error.code == "protocol_mismatch", r.error
    for text in named:
        assert text in r.error.message, r.error.message
    assert r.error.hint is not None and hint in r.error.hint, r.error
    return r.error.message


def methods(log: Path) -> list[str]:
    """The methods a server logged (and the log emptied for the next run)."""
    if not log.exists():
        return []
    found = log.read_text(encoding="utf-8").split()
    log.unlink()
    return found


@pytest.fixture(scope="module")
def modern_http_url() -> Iterator[str]:
    """tests/servers/modern_http.py (modern-only, streamable HTTP) for the whole module."""
    port = free_port()
    proc = subprocess.Popen(
        [PY, str(SERVERS / "modern_http.py"), str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


# --- the discovery deadline ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("timeout", "seconds"), [(0.5, 1.0), (3.0, 1.0), (6.0, 2.0), (30.0, 10.0), (600.0, 10.0)]
)
def test_discover_deadline_is_a_third_of_the_timeout_between_1_and_10_s(
    timeout: float, seconds: float
) -> None:
    assert discover_timeout(timeout) == seconds


def test_effective_mode_is_the_flag_then_the_entry_then_auto() -> None:
    assert effective_mode(None, ServerEntry(command="x")) == "auto"
    assert effective_mode(None, ServerEntry(command="x", protocol="legacy")) == "legacy"
    assert effective_mode("auto", ServerEntry(command="x", protocol="legacy")) == "auto"
    assert effective_mode("modern", ServerEntry(command="x")) == "modern"


# --- a modern-only server over stdio -------------------------------------------------------


def test_modern_only_stdio_server_is_discovered_in_auto() -> None:
    r = run(lambda: probe("modern", modern()))
    assert r.healthy, r.error
    assert r.era == Era("modern", MODERN, (MODERN,), "discovered")
    assert r.protocol_version == MODERN
    assert r.server_name == "modern-test-server" and r.server_version == "1.0.0"
    assert {t.name for t in r.tools} == MODERN_TOOLS and r.tool_count == 3
    assert "discover" in r.latency_ms and "initialize" not in r.latency_ms
    assert "ping" not in r.latency_ms  # the stateless era has no ping
    assert r.to_dict()["protocol"] == {
        "era": "modern", "version": MODERN, "supported": [MODERN], "detected": "discovered",
    }  # fmt: skip


def test_modern_only_stdio_server_lists_and_calls_in_auto_and_pinned_modern() -> None:
    assert {t.name for t in run(lambda: list_tools("modern", modern()))} == MODERN_TOOLS
    for mode in (None, "modern"):
        res = run(partial(call_tool, "modern", modern(), "echo", {"text": "hi"}, protocol=mode))
        assert not res.is_error and res.text == "hi", res
    res = run(lambda: call_tool("modern", modern(), "add", {"a": 2, "b": 40}))
    assert not res.is_error and res.text == "42"


def test_modern_only_stdio_server_pinned_to_the_handshake_is_a_mismatch() -> None:
    r = run(lambda: probe("modern", modern(), protocol="legacy"))
    message = assert_mismatch(r, MODERN, "--protocol legacy", *CLIENT_HANDSHAKE_VERSIONS)
    assert "2026-07-28; " in message  # what the server speaks, then what was asked for
    assert r.era is None and r.tools == []
    # list_tools and call_tool raise it, with the same reason and hint.
    for fn in (
        lambda: list_tools("modern", modern(), protocol="legacy"),
        lambda: call_tool("modern", modern(), "echo", {"text": "hi"}, protocol="legacy"),
    ):
        with pytest.raises(ProbeFailed) as caught:
            run(fn)
        assert caught.value.reason == "protocol_mismatch"
        assert MODERN in caught.value.message and HANDSHAKE in caught.value.message
        assert "--protocol auto" in (caught.value.hint or "")


# --- a modern-only server over streamable HTTP ---------------------------------------------


@pytest.mark.parametrize("transport", [None, "streamable-http"])
def test_modern_only_http_server_in_auto_and_pinned_legacy(
    modern_http_url: str, transport: str | None
) -> None:
    entry = ServerEntry(url=modern_http_url, transport=transport, timeout=15000)  # type: ignore[arg-type]
    r = run(lambda: probe("modern-http", entry))
    assert r.healthy, r.error
    assert r.transport == "streamable-http"
    assert r.era == Era("modern", MODERN, (MODERN,), "discovered")
    assert r.server_name == "modern-http-test-server"
    assert {t.name for t in r.tools} == MODERN_TOOLS
    res = run(lambda: call_tool("modern-http", entry, "echo", {"text": "over http"}))
    assert not res.is_error and res.text == "over http"
    r = run(lambda: probe("modern-http", entry, protocol="legacy"))
    assert_mismatch(r, MODERN, HANDSHAKE)
    assert r.transport == "streamable-http"  # a mismatch is no reason to try SSE


def test_sse_pinned_modern_is_refused_before_connecting(modern_http_url: str) -> None:
    entry = ServerEntry(url=modern_http_url, transport="sse", timeout=15000)
    r = run(lambda: probe("sse", entry, protocol="modern"))
    assert_mismatch(r, "the sse transport speaks only the handshake revisions", MODERN,
                    hint="--protocol legacy")  # fmt: skip


def test_sse_speaks_only_the_handshake_revisions(http_server: Any) -> None:
    entry = ServerEntry(url=http_server("sse") + "/sse", transport="sse", timeout=15000)
    r = run(lambda: probe("sse", entry, protocol="modern"))
    assert_mismatch(r, "the sse transport speaks only the handshake revisions", MODERN,
                    hint="--protocol legacy")  # fmt: skip
    r = run(lambda: probe("sse", entry))
    assert r.healthy, r.error
    assert r.era is not None and r.era.name == "legacy" and r.era.detected == "transport"


# --- a dual-era server: the same offer in either era ---------------------------------------


@pytest.fixture(params=["stdio", "streamable-http"])
def dual_era(request: pytest.FixtureRequest, http_server: Any) -> ServerEntry:
    """tests/servers/basic.py (the SDK's server, both eras) over stdio or streamable HTTP."""
    if request.param == "stdio":
        return script("basic.py")
    return ServerEntry(url=http_server("streamable-http") + "/mcp", timeout=15000)


def test_dual_era_server_offers_the_same_in_either_era(dual_era: ServerEntry) -> None:
    transport = dual_era.effective_transport
    probed = {mode: run(partial(probe, "basic", dual_era, protocol=mode)) for mode in ERAS}
    for mode, version in zip(ERAS, (MODERN, HANDSHAKE), strict=True):
        r = probed[mode]
        assert r.healthy, (mode, r.error)
        assert r.transport == transport
        assert r.era is not None and (r.era.name, r.era.version) == (mode, version)
        assert r.era.detected == "pinned"
    names = [t.name for t in probed["modern"].tools]
    assert len(names) == 10 and names == [t.name for t in probed["legacy"].tools]
    assert probed["modern"].tools == probed["legacy"].tools
    assert probed["modern"].capabilities == probed["legacy"].capabilities

    found = {mode: run(partial(catalog, "basic", dual_era, protocol=mode)) for mode in ERAS}
    new, old = found["modern"], found["legacy"]
    assert new.error is None and old.error is None, (new.message, old.message)
    assert new.era is not None and new.era.name == "modern" and new.protocol_version == MODERN
    assert old.era is not None and old.era.name == "legacy" and old.protocol_version == HANDSHAKE
    assert len(new.tools) == 10 and new.tools == old.tools
    assert new.prompts == old.prompts and new.resource_templates == old.resource_templates
    assert new.server_info == old.server_info and new.instructions == old.instructions


def test_dual_era_fingerprints_do_not_depend_on_the_era(dual_era: ServerEntry) -> None:
    entries = {"basic": dual_era}
    taken = {mode: take_snapshot(entries, probe=True, timeout=15, protocol=mode) for mode in ERAS}
    states = {mode: snap.mcps["basic"].probe for mode, snap in taken.items()}
    for mode, state in states.items():
        assert state is not None and state.error is None, (mode, state)
    prints = {
        mode: {name: d.fingerprint for name, d in state.tools.items()}  # type: ignore[union-attr]
        for mode, state in states.items()
    }
    assert len(prints["modern"]) == 10 and prints["modern"] == prints["legacy"]
    change = diff_snapshots(taken["modern"], taken["legacy"])
    assert change.empty, change.to_data()


# --- a published handshake-only server ------------------------------------------------------


@pytest.mark.integration
def test_server_everything_speaks_the_handshake() -> None:
    argv = published_npm_server("server-everything")
    entry = ServerEntry(command=argv[0], args=(*argv[1:], "stdio"), timeout=30000)
    r = run(lambda: probe("everything", entry))
    assert r.healthy, (r.error, r.stderr)
    assert r.era is not None and r.era.name == "legacy" and r.era.detected == "fallback"
    assert r.protocol_version in CLIENT_HANDSHAKE_VERSIONS
    assert "echo" in {t.name for t in r.tools}
    assert "ping" in r.latency_ms and "initialize" in r.latency_ms
    pinned = run(lambda: probe("everything", entry, protocol="modern"))
    message = assert_mismatch(pinned, f"it offered {r.protocol_version}", "--protocol modern")
    assert "the server speaks the handshake revisions" in message


# --- versions named in an unsupported-version error (-32022) -------------------------------

# A handshake-or-future server in raw JSON-RPC: it speaks only the versions in argv[1]; any
# request it cannot serve at one of them gets -32022 naming them ("requested" included unless
# argv[2] is "no-requested"). A handshake version among them: initialize is answered with it.
VERSIONED_SERVER = r"""
import json, sys
supported = sys.argv[1].split(",")
with_requested = sys.argv[2] != "no-requested"
handshake = [v for v in supported if v < "2026"]
for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue
    method, params = message["method"], message.get("params") or {}
    asked = params.get("protocolVersion") or (params.get("_meta") or {}).get(
        "io.modelcontextprotocol/protocolVersion")
    if method == "initialize" and handshake:
        out = {"result": {"protocolVersion": handshake[-1], "capabilities": {"tools": {}},
                          "serverInfo": {"name": "versioned", "version": "1"}}}
    elif method == "tools/list" and handshake:
        out = {"result": {"tools": []}}
    elif method == "ping" and handshake:
        out = {"result": {}}
    else:
        data = {"supported": supported}
        if with_requested and asked:
            data["requested"] = asked
        out = {"error": {"code": -32022, "message": "Unsupported protocol version", "data": data}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **out}) + "\n")
    sys.stdout.flush()
"""


def versioned(tmp_path: Path, supported: str, requested: str = "requested") -> ServerEntry:
    path = tmp_path / "versioned.py"
    path.write_text(VERSIONED_SERVER, encoding="utf-8")
    return ServerEntry(command=PY, args=(str(path), supported, requested), timeout=10000)


def test_unsupported_version_error_naming_only_future_versions(tmp_path: Path) -> None:
    r = run(lambda: probe("future", versioned(tmp_path, "2099-01-01")))
    message = assert_mismatch(r, "the server speaks only 2099-01-01", MODERN, HANDSHAKE,
                              hint="upgrade mcpctl")  # fmt: skip
    assert "mcpctl speaks" in message


def test_unsupported_version_error_without_requested_still_names_the_versions(
    tmp_path: Path,
) -> None:
    r = run(lambda: probe("future", versioned(tmp_path, "2099-01-01", "no-requested")))
    assert_mismatch(r, "the server speaks only 2099-01-01", hint="upgrade mcpctl")


def test_unsupported_version_error_naming_a_handshake_version_falls_back(tmp_path: Path) -> None:
    r = run(lambda: probe("older", versioned(tmp_path, "2025-06-18")))
    assert r.healthy, r.error
    assert r.era == Era("legacy", "2025-06-18", ("2025-06-18",), "fallback")
    pinned = run(lambda: probe("older", versioned(tmp_path, "2025-06-18"), protocol="modern"))
    assert_mismatch(pinned, "the server speaks only 2025-06-18", hint="--protocol legacy")


# --- the era memory with real servers -------------------------------------------------------


def silent(log: Path) -> ServerEntry:
    """A handshake-only server that never answers server/discover; 6 s timeout -> 2 s wait.
    (A stdio server gets a minimal environment: the log's variable goes in the entry.)"""
    return script("legacy_modes.py", "silent-discover", timeout=6000,
                  env={"LEGACY_SERVER_LOG": str(log)})  # fmt: skip


def stored(path: Path) -> dict[str, Any]:
    eras: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["eras"]
    return eras


def test_a_silent_discover_costs_its_wait_once(tmp_path: Path) -> None:
    log, state = tmp_path / "methods.log", tmp_path / "state"
    entry = silent(log)
    assert discover_timeout(entry.timeout_ms / 1000) == 2.0
    first = run(lambda: probe("silent", entry, eras=EraMemory.in_dir(state)))
    assert first.healthy, first.error
    assert first.era == Era("legacy", HANDSHAKE, (), "fallback")
    assert {t.name for t in first.tools} == LEGACY_TOOLS
    assert methods(log)[:2] == ["server/discover", "initialize"]
    remembered = stored(state / MEMORY_FILENAME)
    assert list(remembered) == [era_key(entry)]
    assert remembered[era_key(entry)]["era"] == "legacy"
    assert remembered[era_key(entry)]["version"] == HANDSHAKE
    # A new memory on the same file (the next command): the handshake at once.
    second = run(lambda: probe("silent", entry, eras=EraMemory.in_dir(state)))
    assert second.healthy, second.error
    assert second.era == Era("legacy", HANDSHAKE, (), "remembered")
    seen = methods(log)
    assert "server/discover" not in seen and seen[0] == "initialize"


def test_a_remembered_modern_era_that_fails_is_detected_again_once(tmp_path: Path) -> None:
    log, state = tmp_path / "methods.log", tmp_path / "state"
    entry = silent(log)
    EraMemory.in_dir(state).remember(entry, Era("modern", MODERN, (MODERN,)))
    assert stored(state / MEMORY_FILENAME)[era_key(entry)]["era"] == "modern"
    r = run(lambda: probe("silent", entry, eras=EraMemory.in_dir(state)))
    assert r.healthy, r.error
    assert r.era is not None and r.era.name == "legacy" and r.era.version == HANDSHAKE
    assert methods(log).count("server/discover") == 1  # the remembered try, not a second one
    assert stored(state / MEMORY_FILENAME)[era_key(entry)]["era"] == "legacy"
    assert EraMemory.in_dir(state).recall(entry) == Era("legacy", HANDSHAKE, (), "remembered")


def test_a_remembered_handshake_for_a_modern_server_is_corrected(tmp_path: Path) -> None:
    log, state = tmp_path / "methods.log", tmp_path / "state"
    entry = script("modern.py", env={"MODERN_SERVER_LOG": str(log)})
    EraMemory.in_dir(state).remember(entry, Era("legacy", HANDSHAKE))
    r = run(lambda: probe("modern", entry, eras=EraMemory.in_dir(state)))
    assert r.healthy, r.error
    assert r.era == Era("modern", MODERN, (MODERN,), "discovered")
    assert methods(log)[:2] == ["initialize", "server/discover"]
    again = run(lambda: probe("modern", entry, eras=EraMemory.in_dir(state)))
    assert again.era == Era("modern", MODERN, (MODERN,), "remembered")
    assert methods(log)[0] == "server/discover"


def test_a_pinned_era_neither_reads_nor_writes_the_memory(tmp_path: Path) -> None:
    state = tmp_path / "state"
    entry = script("legacy_modes.py", "elicit")
    memory = EraMemory.in_dir(state)
    memory.remember(entry, Era("modern", MODERN, (MODERN,)))
    before = (state / MEMORY_FILENAME).read_bytes()
    r = run(lambda: probe("legacy", entry, protocol="legacy", eras=EraMemory.in_dir(state)))
    assert r.healthy and r.era is not None and r.era.detected == "pinned", r.error
    assert (state / MEMORY_FILENAME).read_bytes() == before
    # The entry's own field pins it as well.
    pinned = script("legacy_modes.py", "elicit", protocol="legacy")
    r = run(lambda: probe("legacy", pinned, eras=EraMemory.in_dir(state)))
    assert r.healthy and r.era is not None and r.era.detected == "pinned", r.error
    assert (state / MEMORY_FILENAME).read_bytes() == before


# --- the entry's protocol field ---------------------------------------------------------------


def test_the_entry_field_pins_the_era_and_the_argument_overrides_it() -> None:
    entry = script("basic.py", protocol="legacy")
    r = run(lambda: probe("basic", entry))
    assert r.healthy, r.error
    assert r.era == Era("legacy", HANDSHAKE, (), "pinned") and "ping" in r.latency_ms
    r = run(lambda: probe("basic", entry, protocol="auto"))
    assert r.healthy, r.error
    assert r.era is not None and (r.era.name, r.era.detected) == ("modern", "discovered")
    # Pinned by the entry, the mismatch tells how to change the entry.
    r = run(lambda: probe("modern", script("modern.py", protocol="legacy")))
    message = assert_mismatch(r, MODERN, hint='set "protocol": "auto"')
    assert 'its "protocol": "legacy"' in message


# --- EraMemory on its own ---------------------------------------------------------------------

ENTRY = ServerEntry(command="some-server", args=("--flag",))
ERA = Era("legacy", HANDSHAKE, (), "fallback")


def recall_in_time(memory: EraMemory, unblock: Path | None = None) -> Era | None:
    """``memory.recall(ENTRY)``, failing (not hanging) if it takes more than 10 s; a FIFO
    named by ``unblock`` is opened for writing then, to free a reader stuck on it."""
    found: list[Era | None] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            found.append(memory.recall(ENTRY))
        except BaseException as exc:  # reported below
            errors.append(exc)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        if unblock is not None:
            fd = os.open(unblock, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
            thread.join(10)
        pytest.fail("reading the era memory hung")
    if errors:
        raise errors[0]
    return found[0]


def plant_fifo(path: Path) -> None:
    os.mkfifo(path)


def plant_directory(path: Path) -> None:
    path.mkdir()
    (path / "inside.json").write_text("{}")


def plant_large(path: Path) -> None:
    # A valid memory naming ENTRY, padded past the limit: too large is empty, valid or not.
    record = {"era": "legacy", "version": HANDSHAKE, "supported": []}
    text = json.dumps({"format": 1, "eras": {era_key(ENTRY): record}, "pad": "x" * 2_000_000})
    path.write_text(text)


PLANTED: dict[str, Callable[[Path], object]] = {
    "fifo": plant_fifo,
    "directory": plant_directory,
    "2 MB": plant_large,
    "invalid JSON": lambda p: p.write_text('{"format": 1, "eras": {'),
    "a JSON list": lambda p: p.write_text(json.dumps([{"eras": {}}])),
    "eras a list": lambda p: p.write_text(json.dumps({"format": 1, "eras": [era_key(ENTRY)]})),
    "not UTF-8": lambda p: p.write_bytes(b'{"eras": {"\xff\xfe": {}}}'),
    "deeply nested": lambda p: p.write_text("[" * 100_000 + "]" * 100_000),
    "empty": lambda p: p.write_bytes(b""),
}


@pytest.mark.parametrize("kind", list(PLANTED))
def test_an_unreadable_memory_is_empty_and_never_raises(tmp_path: Path, kind: str) -> None:
    path = tmp_path / MEMORY_FILENAME
    PLANTED[kind](path)
    fifo = path if kind == "fifo" else None
    assert recall_in_time(EraMemory(path), unblock=fifo) is None
    memory = EraMemory(path)
    memory.remember(ENTRY, ERA)  # replaces what it can, never raises
    if kind != "directory":
        assert recall_in_time(EraMemory(path)) == Era("legacy", HANDSHAKE, (), "remembered")


def test_records_that_make_no_sense_are_not_recalled(tmp_path: Path) -> None:
    path = tmp_path / MEMORY_FILENAME
    key = era_key(ENTRY)
    for record in (
        {"era": "ancient", "version": HANDSHAKE},
        {"era": "legacy", "version": 20251125},
        {"era": "legacy"},
        ["legacy", HANDSHAKE],
        "legacy",
    ):
        path.write_text(json.dumps({"format": 1, "eras": {key: record}}))
        assert EraMemory(path).recall(ENTRY) is None, record
    path.write_text(json.dumps({"format": 1, "eras": {key: {
        "era": "modern", "version": MODERN, "supported": [MODERN, 7, None], "at": "x",
    }}}))  # fmt: skip
    assert EraMemory(path).recall(ENTRY) == Era("modern", MODERN, (MODERN,), "remembered")


def test_remember_where_nothing_can_be_written_does_not_raise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A read-only state directory (root writes there anyway; the others below do not).
    state = tmp_path / "read-only"
    state.mkdir()
    EraMemory.in_dir(state).remember(ENTRY, Era("modern", MODERN, (MODERN,)))
    state.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        memory = EraMemory.in_dir(state)
        memory.remember(ENTRY, ERA)
        assert memory.recall(ENTRY) is not None
    finally:
        state.chmod(stat.S_IRWXU)
    # A state directory that cannot be made (a file is in the way).
    (tmp_path / "file").write_text("")
    memory = EraMemory.in_dir(tmp_path / "file" / "state")
    memory.remember(ENTRY, ERA)
    assert memory.recall(ENTRY) == Era("legacy", HANDSHAKE, (), "remembered")  # in memory
    # Writing refused however it is refused.
    from mcpctl.config import store
    from mcpctl.errors import McpctlError

    for refusal in (PermissionError(13, "Permission denied"), McpctlError("read-only")):

        def refuse(*args: Any, _exc: BaseException = refusal, **kwargs: Any) -> None:
            raise _exc

        monkeypatch.setattr(store, "atomic_write", refuse)
        memory = EraMemory.in_dir(tmp_path / "refused")
        memory.remember(ENTRY, ERA)
        assert not (tmp_path / "refused" / MEMORY_FILENAME).exists()


def test_remember_writes_only_news(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpctl.config import store

    writes: list[Path] = []
    real = store.atomic_write

    def counting(path: Path, *args: Any, **kwargs: Any) -> None:
        writes.append(path)
        real(path, *args, **kwargs)

    monkeypatch.setattr(store, "atomic_write", counting)
    memory = EraMemory.in_dir(tmp_path)
    memory.remember(ENTRY, ERA)
    memory.remember(ENTRY, Era("legacy", HANDSHAKE, (), "remembered"))  # same era: no write
    assert len(writes) == 1
    memory.remember(ENTRY, Era("modern", MODERN, (MODERN,)))
    assert len(writes) == 2
    assert EraMemory.in_dir(tmp_path).recall(ENTRY) == Era("modern", MODERN, (MODERN,),
                                                            "remembered")  # fmt: skip


def test_two_memories_on_one_file_keep_each_others_entries(tmp_path: Path) -> None:
    other = ServerEntry(command="other-server")
    first, second = EraMemory.in_dir(tmp_path), EraMemory.in_dir(tmp_path)
    assert first.recall(ENTRY) is None and second.recall(other) is None  # both loaded, empty
    first.remember(ENTRY, ERA)
    second.remember(other, Era("modern", MODERN, (MODERN,)))
    fresh = EraMemory.in_dir(tmp_path)
    assert fresh.recall(ENTRY) is not None and fresh.recall(other) is not None


def test_memory_keeps_the_newest_entries_up_to_its_cap(tmp_path: Path) -> None:
    entries = [ServerEntry(command="server", args=(str(i),)) for i in range(MEMORY_MAX_ENTRIES + 7)]
    memory = EraMemory.in_dir(tmp_path)
    for entry in entries:
        memory.remember(entry, ERA)
    kept = stored(tmp_path / MEMORY_FILENAME)
    assert len(kept) == MEMORY_MAX_ENTRIES
    assert list(kept) == [era_key(e) for e in entries[7:]]
    fresh = EraMemory.in_dir(tmp_path)
    assert all(fresh.recall(e) is None for e in entries[:7])
    assert fresh.recall(entries[7]) is not None and fresh.recall(entries[-1]) is not None


def test_the_key_is_the_configuration_as_written() -> None:
    base = ServerEntry(command="srv", args=("a",), env={"K": "${TOKEN}"})
    assert era_key(base) == era_key(ServerEntry(command="srv", args=("a",), env={"K": "${TOKEN}"}))
    assert era_key(base) == era_key(
        ServerEntry(command="srv", args=("a",), env={"K": "${TOKEN}"}, enabled=False)
    )
    assert era_key(base) != era_key(ServerEntry(command="srv", args=("b",), env={"K": "${TOKEN}"}))
    assert era_key(base) != era_key(ServerEntry(url="https://example.com/mcp"))
    assert era_key(base).startswith("sha256:") and "TOKEN" not in era_key(base)


# --- what mutation testing found unpinned (docs/testing.md) ------------------------------


def test_kept_versions_are_short_strings_once_revisions_first_in_the_servers_order() -> None:
    from mcpctl.probe.eras import MAX_VERSION_CHARS, MAX_VERSIONS, kept_versions

    assert (MAX_VERSIONS, MAX_VERSION_CHARS) == (16, 32)
    assert kept_versions(["draft", MODERN, 7, None, "", HANDSHAKE, MODERN, "x" * 33, "y" * 32]) == (
        "draft", MODERN, HANDSHAKE, "y" * 32,
    )  # fmt: skip
    # Sixteen at most: every revision kept before a name that is not one.
    names = [f"v{i}" for i in range(10)] + [f"2025-01-{i:02d}" for i in range(1, 13)]
    kept = kept_versions(names)
    assert len(kept) == 16 and kept[:4] == ("v0", "v1", "v2", "v3")
    assert kept[4:] == tuple(f"2025-01-{i:02d}" for i in range(1, 13))
    dates = [f"2024-{m:02d}-01" for m in range(1, 13)] + [f"2025-{m:02d}-01" for m in range(1, 13)]
    assert kept_versions(["first", *dates]) == tuple(dates[:16])
    assert kept_versions(["2025-1-1x", "12345-01-01"]) == ("2025-1-1x", "12345-01-01")


def test_describe_versions() -> None:
    from mcpctl.probe.eras import describe_versions

    assert describe_versions([]) == "none named"
    assert describe_versions([HANDSHAKE, MODERN]) == f"{HANDSHAKE}, {MODERN}"
    long = "v" * 40
    assert describe_versions([long]) == "v" * 31 + "…"
    many = [f"2025-01-{i:02d}" for i in range(1, 31)] * 200
    text = describe_versions(many)
    assert text.endswith(", … (6,000 in all)") and len(text) <= 100 + 20
    assert text.startswith("2025-01-01, 2025-01-02, ")
    # Exactly to the limit: ten characters and two of separator each.
    assert describe_versions(["a" * 10] * 3, limit=34) == ", ".join(["a" * 10] * 3)
    assert describe_versions(["a" * 10] * 3, limit=33) == "aaaaaaaaaa, aaaaaaaaaa, … (3 in all)"
    assert describe_versions(["a" * 50], limit=5) == "a" * 31 + "…"


def test_an_eras_json_form() -> None:
    assert Era("modern", MODERN, (MODERN, HANDSHAKE)).to_dict() == {
        "era": "modern", "version": MODERN, "supported": [MODERN, HANDSHAKE],
        "detected": "discovered",
    }  # fmt: skip


def test_a_remembered_version_too_long_or_supported_not_a_list_is_read_as_such(
    tmp_path: Path,
) -> None:
    path = tmp_path / MEMORY_FILENAME
    key = era_key(ENTRY)
    path.write_text(
        json.dumps({"format": 1, "eras": {key: {"era": "legacy", "version": "v" * 33}}})
    )
    assert EraMemory(path).recall(ENTRY) is None
    path.write_text(json.dumps({"format": 1, "eras": {key: {
        "era": "legacy", "version": "v" * 32, "supported": "2025-11-25"}}}))  # fmt: skip
    assert EraMemory(path).recall(ENTRY) == Era("legacy", "v" * 32, (), "remembered")


def test_a_memory_without_a_file_remembers_in_memory() -> None:
    memory = EraMemory()
    assert memory.recall(ENTRY) is None
    memory.remember(ENTRY, Era("modern", MODERN, (MODERN, 7, MODERN), "discovered"))  # type: ignore[arg-type]
    assert memory.recall(ENTRY) == Era("modern", MODERN, (MODERN,), "remembered")


def test_what_is_written_for_an_entry(tmp_path: Path) -> None:
    import time

    before = int(time.time())
    EraMemory.in_dir(tmp_path).remember(ENTRY, Era("modern", MODERN, (MODERN, "x" * 40)))
    record = stored(tmp_path / MEMORY_FILENAME)[era_key(ENTRY)]
    assert set(record) == {"era", "version", "supported", "at"}
    assert (record["era"], record["version"], record["supported"]) == ("modern", MODERN, [MODERN])
    assert before <= record["at"] <= time.time()


def test_describe_versions_at_its_bounds() -> None:
    from mcpctl.probe.eras import describe_versions

    assert describe_versions(["v" * 32]) == "v" * 32  # the longest kept whole
    four = ["a" * 32, "b" * 32, "c" * 16, "d" * 15, "e"]  # the fourth would end at 101
    assert describe_versions(four) == f"{'a' * 32}, {'b' * 32}, {'c' * 16}, … (5 in all)"


def test_a_one_character_version_is_kept() -> None:
    from mcpctl.probe.eras import kept_versions

    assert kept_versions(["a", "", "b"]) == ("a", "b")


def test_the_key_ignores_the_order_of_fields_and_what_may_be_written() -> None:
    one = ServerEntry(command="srv", env={"A": "1", "B": "2"}, headers={})
    other = ServerEntry(command="srv", env={"B": "2", "A": "1"}, headers={})
    assert era_key(one) == era_key(other)
    assert era_key(ServerEntry(command="srv", allow_literal=("env.A",))) == era_key(
        ServerEntry(command="srv")
    )


def test_an_entry_remembered_again_is_the_newest(tmp_path: Path) -> None:
    others = [ServerEntry(command="server", args=(str(i),)) for i in range(MEMORY_MAX_ENTRIES)]
    memory = EraMemory.in_dir(tmp_path)
    memory.remember(ENTRY, ERA)
    for entry in others[:-1]:
        memory.remember(entry, ERA)
    memory.remember(ENTRY, Era("modern", MODERN, (MODERN,)))  # news: written again, last
    memory.remember(others[-1], ERA)  # one over the cap: the oldest goes
    fresh = EraMemory.in_dir(tmp_path)
    assert fresh.recall(ENTRY) is not None and fresh.recall(others[0]) is None


def test_a_write_brings_in_what_another_process_remembered(tmp_path: Path) -> None:
    other = ServerEntry(command="other-server")
    first, second = EraMemory.in_dir(tmp_path), EraMemory.in_dir(tmp_path)
    assert first.recall(other) is None  # loaded, empty
    second.remember(other, Era("modern", MODERN, (MODERN,)))
    first.remember(ENTRY, ERA)
    assert first.recall(other) == Era("modern", MODERN, (MODERN,), "remembered")
