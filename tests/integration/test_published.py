"""Published servers nobody here wrote: mcp-server-time (PyPI) and the npm reference servers.

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


def test_many_copies_at_once() -> None:
    argv = published_npm_server("server-everything")
    entries = {f"e{i}": ServerEntry(command=argv[0], args=(*argv[1:], "stdio")) for i in range(5)}
    results = anyio.run(lambda: probe_all(entries))
    assert all(r.healthy for r in results), [
        json.dumps(r.to_dict())[:300] for r in results if not r.healthy
    ]
