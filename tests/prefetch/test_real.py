"""Prefetch against the real npm registry and PyPI: afterwards the published server starts
with its registry out of reach, as a client would start it (``npx -y pkg@v``, ``uvx pkg==v``).

Each test uses a cache of its own (``npm_config_cache``, ``UV_CACHE_DIR`` in the entry's
env: the entry points its runner there, and prefetch fills exactly that one).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import CACHE, REQUIRE_INTEGRATION, Cli, need_program, write_config

pytestmark = pytest.mark.integration

MEMORY = "@modelcontextprotocol/server-memory@2026.8.31"  # as tests/servers/npm pins it
TIME = "mcp-server-time==2026.10.19"  # as .ci/run pins it


def _need_network(host: str) -> None:
    import socket

    try:
        socket.create_connection((host, 443), timeout=10).close()
    except OSError as exc:
        message = f"network: {host} is unreachable ({exc})"
        if REQUIRE_INTEGRATION:
            pytest.fail(message + "; MCPCTL_REQUIRE_INTEGRATION=1 forbids skipping")
        pytest.skip(message)


def test_after_prefetch_an_npx_server_starts_offline(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    need_program("npx", "the server is started with npx")
    _need_network("registry.npmjs.org")
    cache = tmp_path / "npm-cache"
    entry = {"command": "npx", "args": ["-y", MEMORY], "timeout": 60000,
             "env": {"npm_config_cache": str(cache)}}  # fmt: skip
    # npm told it is offline, and its registry unreachable besides (a proxy that refuses).
    offline = {**entry, "env": {**entry["env"], "npm_config_offline": "true",  # type: ignore[dict-item]
                                "npm_config_https_proxy": "http://127.0.0.1:9",
                                "npm_config_fetch_retries": "0"}}  # fmt: skip
    write_config(config_path, {"memory": entry, "memory-offline": offline})
    before = cli("health", "memory-offline", "--json")
    assert before.exit_code == 1  # nothing cached: it cannot start offline
    r = cli("prefetch", "memory", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    item = r.json["data"]["packages"][0]
    assert item["status"] == "fetched" and item["version"] == "2026.8.31"
    assert item["where"].startswith(str(cache / "_npx"))
    after = cli("health", "memory-offline", "--json")
    assert after.exit_code == 0, after.stdout
    assert after.json["data"]["mcps"][0]["status"] == "healthy"


def _uvx() -> str:
    """uvx: on PATH, else where .ci/run installs it."""
    found = shutil.which("uvx")
    if found is None and (CACHE / "servers" / "uv" / "bin" / "uvx").is_file():
        return str(CACHE / "servers" / "uv" / "bin" / "uvx")
    return found or need_program("uvx", "the server is started with uvx")


def test_after_prefetch_a_uvx_server_starts_offline(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    uvx = _uvx()
    _need_network("pypi.org")
    env = {"UV_CACHE_DIR": str(tmp_path / "uv-cache"),
           "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
           "PATH": f"{Path(uvx).parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip
    entry = {"command": uvx, "args": [TIME], "timeout": 60000, "env": env}
    offline = {**entry, "env": {**env, "UV_OFFLINE": "1"}}
    write_config(config_path, {"time": entry, "time-offline": offline})
    assert cli("health", "time-offline").exit_code == 1  # nothing cached yet
    r = cli("prefetch", "time", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    item = r.json["data"]["packages"][0]
    assert item["status"] == "fetched" and item["runner"] == "uvx"
    assert item["where"] == str(tmp_path / "uv-cache")
    after = cli("health", "time-offline", "--json")
    assert after.exit_code == 0, after.stdout
    assert after.json["data"]["mcps"][0]["status"] == "healthy"


def test_pinned_checks_what_the_runners_fetched_against_the_lock(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    import json

    need_program("npx", "the server is started with npx")
    uvx = _uvx()
    _need_network("registry.npmjs.org")
    _need_network("pypi.org")
    uv_env = {"UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_TOOL_DIR": str(tmp_path / "t"),
              "PATH": f"{Path(uvx).parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip
    npm_env = {"npm_config_cache": str(tmp_path / "npm-cache")}
    time_entry = {"command": uvx, "args": [TIME], "timeout": 60000, "env": uv_env}
    write_config(config_path, {
        "memory": {"command": "npx", "args": ["-y", MEMORY], "env": npm_env},
        "time": time_entry,
        "time-offline": {**time_entry, "env": {**uv_env, "UV_OFFLINE": "1"}},
    })  # fmt: skip
    saved = cli("snapshot", "save", "--packages", "-o", "lock.json", "--json")
    assert saved.exit_code == 0, saved.stdout + saved.stderr
    lock = json.loads(Path("lock.json").read_text())
    r = cli("prefetch", "memory", "time", "--pinned", "lock.json", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    by = {i["servers"][0]: i for i in r.json["data"]["packages"]}
    assert by["memory"]["integrity"] == lock["packages"]["memory"]["integrity"]
    assert by["time"]["integrity"] == lock["packages"]["time"]["integrity"]

    # A lock that records other bytes: both fail, named, and neither is left to run.
    lock["packages"]["memory"]["integrity"] = "sha512-" + "A" * 86 + "=="
    lock["packages"]["time"]["integrity"] = "sha256:" + "0" * 64
    Path("lock.json").write_text(json.dumps(lock))
    r = cli("prefetch", "memory", "time", "--pinned", "lock.json", "--json")
    assert r.exit_code == 1, r.stdout + r.stderr
    reasons = {i["servers"][0]: i["reason"] for i in r.json["data"]["packages"]}
    assert reasons["memory"].startswith("integrity mismatch: the lock records sha512-AAAA")
    assert reasons["time"].startswith("sha256 mismatch: the lock records sha256:0000")
    messages = [e["message"] for e in r.json["errors"]]
    assert any(m.startswith(f"memory: {MEMORY}: integrity mismatch") for m in messages)
    assert any(m.startswith(f"time: {TIME}: sha256 mismatch") for m in messages)
    assert not list((tmp_path / "npm-cache" / "_npx").iterdir())
    assert cli("health", "time-offline").exit_code == 1
