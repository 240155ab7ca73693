"""Servers that send more than a client can take in (tests/servers/overreach.py), and many
mcpctl processes sharing their caches: every case ends in a clear error or a bounded wait,
nothing another process wrote is lost, and no server's text makes a message long.

Each case runs the ``mcpctl`` program as a real process against real server processes, in a
home of its own (``MCPCTL_HOME``), and bounds its slowest run by the deadline in play (the
``--timeout``, the discovery wait, the cache lock's wait) plus a second.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.cachefiles import LOCK_TIMEOUT
from mcpctl.probe.eras import MAX_VERSION_CHARS, MAX_VERSIONS, MEMORY_FILENAME, MEMORY_MAX_BYTES
from mcpctl.probe.failures import MESSAGE_MAX
from tests.conftest import MCPCTL, SERVERS, reserved_port, wait_for_port, write_config

PY = sys.executable
OVERREACH = str(SERVERS / "overreach.py")
LEGACY = str(SERVERS / "legacy_modes.py")
CACHES = ("tool-listings.json", "token-counts.json", "completion-tools.json")


def overreach(mode: str, name: str = "x", **env: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": PY, "args": [OVERREACH, mode, name]}
    if env:
        entry["env"] = env
    return entry


class Home:
    """A config and a home of its own; runs of ``mcpctl`` against them."""

    def __init__(self, tmp_path: Path, servers: dict[str, dict[str, Any]]) -> None:
        self.root = tmp_path / "home"
        self.config = write_config(tmp_path / "external-mcps.json", servers)
        self.env = {**os.environ, "MCPCTL_HOME": str(self.root)}

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*MCPCTL, "--config", str(self.config), *args], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=self.env,
        )  # fmt: skip

    def run(self, *args: str, limit: float = 60) -> tuple[subprocess.CompletedProcess[str], float]:
        started = time.monotonic()
        done = subprocess.run(
            [*MCPCTL, "--config", str(self.config), *args],
            capture_output=True, text=True, env=self.env, timeout=limit + 60,
        )  # fmt: skip
        elapsed = time.monotonic() - started
        assert "Traceback" not in done.stderr, done.stderr
        return done, elapsed

    def json(self, *args: str, limit: float = 60) -> tuple[dict[str, Any], float]:
        done, elapsed = self.run(*args, "--json", limit=limit)
        return json.loads(done.stdout), elapsed


def records(path: Path, key: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(path.read_text())[key]
    return found


# --- the era memory ------------------------------------------------------------------------


def test_a_server_naming_thousands_of_long_versions_leaves_every_era_remembered(
    tmp_path: Path,
) -> None:
    # A handshake-only server that never answers server/discover costs the discovery wait
    # (a third of the timeout: 5 s) once; then its era is remembered -- even after a server
    # named 5,000 versions of 1,000 characters (5 MB) to be remembered too.
    home = Home(tmp_path, {"silent": {"command": PY, "args": [LEGACY, "silent-discover"]},
                           "versions": overreach("versions")})  # fmt: skip
    first, waited = home.json("tools", "silent", "--timeout", "15s")
    assert first["data"]["servers"][0]["protocol"]["detected"] == "fallback", first
    assert waited >= 5
    data, _ = home.json("tools", "versions", "--timeout", "15s")
    assert data["ok"] and data["data"]["tools"][0]["name"] == "tool_x", data
    supported = data["data"]["servers"][0]["protocol"]["supported"]
    assert supported == ["2026-07-28"]  # versions of 1,000 characters are not versions
    memory = home.state / MEMORY_FILENAME
    assert memory.stat().st_size < MEMORY_MAX_BYTES // 100
    eras = records(memory, "eras")
    assert len(eras) == 2
    assert all(len(e["supported"]) <= MAX_VERSIONS for e in eras.values())
    assert all(len(v) <= MAX_VERSION_CHARS for e in eras.values() for v in e["supported"])
    again, elapsed = home.json("tools", "silent", "--timeout", "15s")
    assert again["data"]["servers"][0]["protocol"]["detected"] == "remembered", again
    assert elapsed < 5, "the discovery wait was paid again: the era was forgotten"


# --- messages built from what a server says ------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "modern", "legacy"])
def test_a_protocol_mismatch_stays_short_whatever_the_server_names(
    tmp_path: Path, protocol: str
) -> None:
    home = Home(tmp_path, {"versions": overreach("versions"), "words": overreach("long-words")})
    data, _ = home.json("health", "--protocol", protocol, "--timeout", "15s")
    errors = {m["name"]: m["error"] for m in data["data"]["mcps"]}
    if protocol != "legacy":  # the versions server speaks 2026-07-28 among its 5,000
        assert errors.pop("versions") is None
    assert {e["code"] for e in errors.values()} == {"protocol_mismatch"}, errors
    for error in errors.values():
        assert 0 < len(error["message"]) <= MESSAGE_MAX, error["message"]
    if protocol == "legacy":
        assert "(5,000 in all)" in errors["versions"]["message"]
    plain, elapsed = home.run("health", "--protocol", protocol, "--timeout", "15s")
    assert elapsed < 15 + 1
    assert all(len(line) < 2 * MESSAGE_MAX for line in plain.stdout.splitlines()), plain.stdout
    assert len(plain.stderr) < 4 * MESSAGE_MAX, plain.stderr


# --- the caches, shared by many processes --------------------------------------------------


@pytest.mark.slow
def test_twelve_concurrent_runs_keep_every_cache_entry(tmp_path: Path) -> None:
    names = [f"s{i:02d}" for i in range(12)]
    home = Home(tmp_path, {name: overreach("plain", name) for name in names})
    runs = [home.start("tools", name, "--json", "--timeout", "60s") for name in names]
    for name, run in zip(names, runs, strict=True):
        out, err = run.communicate(timeout=180)
        assert run.returncode == 0, (name, err)
        assert json.loads(out)["data"]["tools"][0]["name"] == f"tool_{name}"
    assert len(records(home.state / MEMORY_FILENAME, "eras")) == 12
    assert len(records(home.cache / "tool-listings.json", "listings")) == 12
    assert len(records(home.cache / "token-counts.json", "counts")) == 12
    (servers,) = records(home.cache / "completion-tools.json", "configs").values()
    assert sorted(servers) == names


def test_a_stuck_cache_lock_costs_one_short_wait_and_writes_nothing(tmp_path: Path) -> None:
    from mcpctl.config.store import acquire_lock

    home = Home(tmp_path, {"s": overreach("plain", "s")})
    free = max(home.run("tools", "s", "--timeout", "20s")[1] for _ in range(2))
    files = [home.state / MEMORY_FILENAME, *(home.cache / name for name in CACHES)]
    before = {f: f.read_bytes() for f in files}
    home.config.write_text(json.dumps({"s": overreach("plain", "t")}))  # news for every cache
    # Another process holds every cache's lock and never lets go.
    held = [acquire_lock(f.parent / f".{f.name}.lock", 0) for f in files]
    try:
        done, elapsed = home.run("-v", "tools", "s", "--timeout", "20s")
    finally:
        for release in held:
            release()
    assert done.returncode == 0 and "tool_t" in done.stdout, done.stderr
    assert {f: f.read_bytes() for f in files} == before  # nothing written over the lock
    assert "the cache write is skipped" in done.stderr
    # One short wait, not one per file (a wait each would cost 3 more): the slack beyond it
    # scales with what a free run takes now (a loaded machine is slower at everything), and
    # stays below what a second wait would cost.
    slack = min(max(1.0, free), LOCK_TIMEOUT * (len(files) - 1) - 1)
    assert elapsed < free + LOCK_TIMEOUT + slack, (elapsed, free)


# --- listings ------------------------------------------------------------------------------


def test_a_server_that_claims_the_stateless_era_is_spoken_to_as_it_answers(
    tmp_path: Path,
) -> None:
    log = tmp_path / "methods.log"
    home = Home(tmp_path, {"claims": overreach("claims-modern", OVERREACH_LOG=str(log))})
    for detected in ("fallback", "remembered"):
        data, elapsed = home.json("health", "claims", "--timeout", "10s")
        (server,) = data["data"]["mcps"]
        assert server["status"] == "healthy", server
        assert server["protocol"]["era"] == "legacy"
        assert server["protocol"]["detected"] == detected
        assert elapsed < 10
    # The second run went straight to the handshake it remembered.
    methods = log.read_text().split()
    assert methods.count("server/discover") == 1
    assert methods.count("initialize") == 2


def test_a_repeated_cursor_ends_every_listing(tmp_path: Path) -> None:
    home = Home(tmp_path, {"cursor": overreach("same-cursor")})
    data, elapsed = home.json("tools", "cursor", "--timeout", "10s")
    assert [t["name"] for t in data["data"]["tools"]] == ["again"], data
    assert data["data"]["collisions"] == []
    assert any("'again' again; the listing ends there" in w for w in data["warnings"])
    assert elapsed < 10
    # The catalog of a snapshot pages tools, prompts and resource templates alike.
    lock = home.root / "mcps.lock.json"
    done, elapsed = home.run("snapshot", "save", "--probe", "-o", str(lock), "--timeout", "10s")
    assert done.returncode == 0, done.stderr
    assert elapsed < 10
    (server,) = json.loads(lock.read_text())["mcps"]
    probe = server["probe"]
    assert [len(probe[kind]) for kind in ("tools", "prompts", "resource_templates")] == [1, 1, 1]
    assert done.stderr.count("the listing ends there") == 3, done.stderr


@pytest.mark.parametrize("depth", [150, 400])
def test_a_deeply_nested_schema_is_read_and_kept(tmp_path: Path, depth: int) -> None:
    home = Home(tmp_path, {"deep": overreach("deep", OVERREACH_DEPTH=str(depth))})
    data, elapsed = home.json("tools", "deep", "--timeout", "20s")
    assert data["ok"], data
    schema = next(t for t in data["data"]["tools"] if t["name"] == "tool_x")["input_schema"]
    levels = 0
    while schema.get("type") == "object":
        schema, levels = schema["properties"]["a"], levels + 1
    assert (levels, schema) == (depth, {"type": "string"})
    assert elapsed < 20


def test_a_schema_no_parser_follows_fails_at_once(tmp_path: Path) -> None:
    home = Home(tmp_path, {"deep": overreach("deep", OVERREACH_DEPTH="5000")})
    data, elapsed = home.json("tools", "deep", "--timeout", "30s")
    (failed,) = data["data"]["failed"]
    assert failed["error"]["code"] == "list_failed"
    assert "nested too deeply" in failed["error"]["message"]
    assert elapsed < 15, "the probe waited for an answer it had already dropped"


def test_a_remote_answer_deeper_than_the_sdk_reads_fails_at_once(tmp_path: Path) -> None:
    # Over HTTP the SDK parses the answer (200 levels at most): it cannot be read, and says so.
    with reserved_port() as port:
        server = subprocess.Popen(
            [PY, OVERREACH, "http", str(port), "deep"], env={**os.environ, "OVERREACH_DEPTH": "150"}
        )
        try:
            wait_for_port(port, server)
            url = f"http://127.0.0.1:{port}/mcp"
            home = Home(tmp_path, {"deep": {"url": url, "transport": "streamable-http"}})
            data, elapsed = home.json("tools", "deep", "--timeout", "20s")
        finally:
            server.terminate()
            server.wait(timeout=10)
    (failed,) = data["data"]["failed"]
    assert failed["error"]["code"] == "list_failed", failed
    assert failed["error"]["message"] == (
        "tools/list failed: the server's answer is nested too deeply to be read (the MCP SDK's "
        "JSON parser stops at 200 levels)"
    )
    assert elapsed < 20


# --- counting tokens -----------------------------------------------------------------------


def test_counting_tokens_ends_by_the_timeout(tmp_path: Path) -> None:
    # 10 MB of random 99-letter words: counting them all takes about 16 s on an idle machine
    # (more under load), over three times the timeout; listing them, under a second.
    timeout = 5
    home = Home(tmp_path, {"big": overreach("big")})
    data, elapsed = home.json("tools", "big", "--timeout", f"{timeout}s", limit=timeout)
    assert data["ok"] and len(data["data"]["tools"]) == 1000
    assert data["data"]["tokens"]["estimated"] > 0
    assert any("ran out of time" in w for w in data["warnings"])
    # By the timeout, give or take what this machine needs now to start mcpctl and hand over
    # a 3 MB result (a loaded machine is slower at everything, counting or not).
    _, overhead = home.run("tools", "big", "--cached", "--json", "-v", limit=timeout)
    assert elapsed < timeout + 1 + overhead, (elapsed, overhead)


RSS = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
"""


@pytest.mark.slow
def test_counting_tokens_takes_little_memory(tmp_path: Path) -> None:
    # 10 MB of short random words: pieces that never repeat, for the tokenizer's memo.
    home = Home(tmp_path, {"big": overreach("big", OVERREACH_WORD="5")})
    command = [*MCPCTL, "--config", str(home.config), "tools", "big", "--json"]
    done = subprocess.run(
        [PY, "-c", RSS, *command, "--timeout", "60s"],
        capture_output=True, text=True, env=home.env, timeout=180,
    )  # fmt: skip
    megabytes = int(done.stdout)  # the largest of mcpctl and the server; 290 with a full memo
    assert megabytes < 200, megabytes
