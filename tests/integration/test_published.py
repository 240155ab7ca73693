"""Published servers nobody here wrote: mcp-server-time (PyPI) and the npm reference servers.

server-filesystem is pinned at 2025.8.21 on purpose: its input schemas have "$schema" but no
"type", which the SDK refuses; mcpctl repairs the listing and warns.

.ci/run installs them into .cache/ (mcp-server-time in its own virtual environment, the npm
packages into a cache folder run with node). Without them these tests skip, and under
MCPCTL_REQUIRE_INTEGRATION=1 they fail. Tool counts of third-party servers are not pinned:
they change between releases and with the client's capabilities.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.probe import call_tool, probe, probe_all
from tests.conftest import Cli, published_npm_server, published_time_server, write_config

pytestmark = pytest.mark.integration


def test_mcp_server_time_probe_and_call() -> None:
    entry = ServerEntry(command=published_time_server(), args=("--local-timezone=UTC",))
    r = anyio.run(lambda: probe("time", entry))
    assert r.healthy, (r.error, r.stderr)
    names = {t.name for t in r.tools}
    assert "get_current_time" in names
    res = anyio.run(
        lambda: call_tool("time", entry, "get_current_time", {"timezone": "Europe/Paris"})
    )
    assert not res.is_error
    assert "Europe/Paris" in res.text


def test_server_everything_over_stdio() -> None:
    argv = published_npm_server("server-everything")
    r = anyio.run(
        lambda: probe("everything", ServerEntry(command=argv[0], args=(*argv[1:], "stdio")))
    )
    assert r.healthy, (r.error, r.stderr)
    assert r.tool_count and r.tool_count > 3
    assert "echo" in {t.name for t in r.tools}


@pytest.mark.slow
def test_server_memory_and_cli_catalog(cli: Cli, config_path: Path) -> None:
    node, memory = published_npm_server("server-memory")
    time_server = published_time_server()
    write_config(config_path, {
        "memory": {"command": node, "args": [memory]},
        "time": {"command": time_server},
    })  # fmt: skip
    r = cli("health", "--json")
    assert r.exit_code == 0, r.stdout
    assert r.json["data"]["summary"]["healthy"] == 2
    r = cli("tools", "--prefix", "colon", "--json")
    names = {t["name"] for t in r.json["data"]["tools"]}
    assert "time:get_current_time" in names and any(n.startswith("memory:") for n in names)
    r = cli("call", "time", "convert_time", "--arg", "source_timezone=UTC", "--arg", "time=12:00",
            "--arg", "target_timezone=Asia/Tokyo")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert "Asia/Tokyo" in r.stdout


def test_server_filesystem_with_schemas_missing_type(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "hello.txt").write_text("hello from the root\n")
    node, filesystem = published_npm_server("server-filesystem")
    entry = ServerEntry(command=node, args=(filesystem, str(root)), timeout=30000)
    r = anyio.run(lambda: probe("filesystem", entry))
    assert r.healthy, (r.error, r.stderr)
    assert r.error is None and r.available
    names = {t.name for t in r.tools}
    assert {"read_text_file", "list_directory", "write_file"} <= names
    assert r.tool_count == len(r.tools)
    missing_type = [w for w in r.warnings if 'inputSchema has no "type"' in w]
    assert missing_type, r.warnings
    assert any(w.startswith("tool 'read_text_file': ") for w in missing_type)
    for w in r.warnings:
        assert "\n" not in w and len(w) < 200, w
    read = next(t for t in r.tools if t.name == "read_text_file")
    # As sent: {"$schema": ...} without "type" (and, with the zod that npm resolves today,
    # without "properties" either); as listed: an object schema.
    assert "type" not in read.raw["inputSchema"] and "$schema" in read.raw["inputSchema"]
    assert read.input_schema["type"] == "object"
    res = anyio.run(
        lambda: call_tool("filesystem", entry, "read_text_file", {"path": str(root / "hello.txt")})
    )
    assert not res.is_error, res.text
    assert "hello from the root" in res.text


@pytest.mark.slow
def test_many_copies_at_once() -> None:
    argv = published_npm_server("server-everything")
    entries = {f"e{i}": ServerEntry(command=argv[0], args=(*argv[1:], "stdio")) for i in range(5)}
    results = anyio.run(lambda: probe_all(entries))
    assert all(r.healthy for r in results), [
        json.dumps(r.to_dict())[:300] for r in results if not r.healthy
    ]
