"""A lock file's pins enforced by a real proxy: FastMCP's, serving ``render fastmcp --pinned``.

The published mcp-server-time and server-everything are locked with ``snapshot save --probe``;
then the lock is edited as if most of server-everything's tools had come after it (two stay
pinned), and mcp-server-time's entry denies one of its two pinned tools. Through the proxy,
mcpctl's own ``tools`` sees exactly the pinned tools the entries allow: the others are not
exposed, though the servers offer them.

(The downstreams are the published servers, as in test_render_proxies.py: behind FastMCP's
proxy a server built on this repository's SDK does not answer ``ping``, which ``tools`` sends.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SERVERS, free_port, wait_for_port, write_config
from tests.integration.test_render_proxies import (
    downstreams,
    mcpctl,
    proxy_program,
    started,
    tail,
)

__all__ = ["started"]  # the fixture, used here by name
pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def tool_names(config: Path, server: str) -> set[str]:
    listed = mcpctl(config, "tools", server)
    assert listed["ok"], listed
    return {t["name"] for t in listed["data"]["tools"]}


def test_fastmcp_exposes_exactly_the_pinned_tools(
    tmp_path: Path, started: Callable[..., Any]
) -> None:
    python = proxy_program("fastmcp", "python")
    servers = downstreams()
    config = write_config(tmp_path / "external-mcps.json", servers)
    lock = tmp_path / "mcp-lock.json"
    saved = mcpctl(config, "snapshot", "save", "--probe", "-o", str(lock))
    assert saved["ok"] and saved["data"]["probe_failed"] == [], saved
    data = json.loads(lock.read_text())
    keep = {"everything": {"echo", "get-sum"}, "time": {"get_current_time", "convert_time"}}
    for record in data["mcps"]:
        offered = {t["name"] for t in record["probe"]["tools"]}
        assert keep[record["name"]] <= offered, offered
        record["probe"]["tools"] = [t for t in record["probe"]["tools"]
                                    if t["name"] in keep[record["name"]]]  # fmt: skip
    lock.write_text(json.dumps(data, indent=2))
    # Pinned, but denied by the entry: not exposed either.
    servers["time"]["tools"] = {"deny": ["convert_time"]}
    write_config(config, servers)
    gate = mcpctl(config, "snapshot", "diff", "--probe", "--against", str(lock), "--exit-code")
    assert not gate["ok"] and gate["data"]["changed"][0]["added"]["tools"], gate

    rendered_file = tmp_path / "fastmcp.json"
    rendered = mcpctl(config, "render", "fastmcp", "--pinned", str(lock), "-o", str(rendered_file))
    assert rendered["ok"] and not rendered["warnings"], rendered

    port = free_port()
    proc = started("fastmcp", [str(python), str(SERVERS / "fastmcp_proxy.py"),
                               str(rendered_file), str(port)])  # fmt: skip
    try:
        wait_for_port(port, proc, timeout=40)
    except RuntimeError as exc:
        pytest.fail(f"{exc}\n{tail(tmp_path / 'fastmcp.log')}")
    via = write_config(tmp_path / "via-proxy.json", {"fm": {"url": f"http://127.0.0.1:{port}/mcp"}})
    names = tool_names(via, "fm")
    # Several servers: FastMCP prefixes each tool with its server's name.
    assert names == {"time_get_current_time", "everything_echo", "everything_get-sum"}, (
        names, tail(tmp_path / "fastmcp.log"),
    )  # fmt: skip
    called = mcpctl(via, "call", "fm", "everything_get-sum", "--arg", "a=2", "--arg", "b=3")
    assert called["ok"] and "5" in called["data"]["text"], called
