"""Rendered proxy configs served by the real proxies, and mcpctl's own CLI talking through them.

The proxies come from PyPI, each in a virtual environment of its own that ``.ci/proxies.sh``
installs under ``.cache/proxies/`` (the PyPI ``mcp-proxy`` needs mcp<2). Downstream: the
published mcp-server-time and the npm server-everything (``.ci/run`` installs both), and for
the bridge to a remote server, tests/servers/basic.py over streamable HTTP. Without them
these tests skip, and under MCPCTL_REQUIRE_INTEGRATION=1 they fail.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpctl.render import parse
from tests.conftest import (
    CACHE,
    MCPCTL,
    REQUIRE_INTEGRATION,
    SERVERS,
    free_port,
    published_npm_server,
    published_time_server,
    stop_process,
    wait_for_port,
    write_config,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

PROXIES = CACHE / "proxies"


def proxy_program(venv: str, program: str) -> Path:
    """A program of a proxy's virtual environment, or skip (fail in CI) when missing."""
    path = PROXIES / venv / "bin" / program
    if not path.exists():
        message = f"{venv} is not installed at {path} (run .ci/proxies.sh)"
        if REQUIRE_INTEGRATION:
            pytest.fail(message + "; MCPCTL_REQUIRE_INTEGRATION=1 forbids skipping")
        pytest.skip(message)
    return path


def downstreams() -> dict[str, Any]:
    node, everything = published_npm_server("server-everything")
    return {
        "time": {"command": published_time_server(), "args": ["--local-timezone=UTC"]},
        "everything": {"command": node, "args": [everything, "stdio"]},
    }


def mcpctl(config: Path, *args: str) -> Any:
    """Run mcpctl's CLI in a process of its own; its --json envelope."""
    done = subprocess.run(
        [*MCPCTL, "--config", str(config), *args, "--json"],
        capture_output=True, text=True, timeout=45,
    )  # fmt: skip
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Starts processes (logs in tmp_path) and stops each by its PID at the end."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(name: str, argv: list[str], env: dict[str, str] | None = None) -> Any:
        log = (tmp_path / f"{name}.log").open("wb")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
        procs.append(proc)
        return proc

    try:
        yield start
    finally:
        for proc in reversed(procs):
            stop_process(proc)


def tail(path: Path) -> str:
    return path.read_text(errors="replace")[-3000:] if path.exists() else ""


def test_mcp_proxy_py_serves_stdio_servers_and_a_bridged_remote(
    tmp_path: Path, http_server: Callable[[str], str], started: Callable[..., Any]
) -> None:
    program = proxy_program("mcp-proxy-py", "mcp-proxy")
    basic = http_server("streamable-http") + "/mcp"
    config = write_config(tmp_path / "external-mcps.json", {
        **downstreams(),
        "basic": {"url": basic, "headers": {"X-Test": "through-the-bridge"}},
    })  # fmt: skip
    named = tmp_path / "named-servers.json"
    rendered = mcpctl(config, "render", "mcp-proxy-py", "-o", str(named))
    assert rendered["ok"], rendered
    doc = json.loads(named.read_text())
    assert doc["mcpServers"]["basic"]["command"] == "mcp-proxy"
    assert parse("mcp-proxy-py", named.read_text()).entries["basic"].url == basic

    port = free_port()
    # The bridge of the remote server is `mcp-proxy URL ...`: found on the proxy's PATH.
    env = {**os.environ, "PATH": f"{program.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = started("mcp-proxy", [str(program), "--named-server-config", str(named),
                                 "--port", str(port), "--host", "127.0.0.1"], env)  # fmt: skip
    try:
        wait_for_port(port, proc, timeout=30)
    except RuntimeError as exc:
        pytest.fail(f"{exc}\n{tail(tmp_path / 'mcp-proxy.log')}")
    base = f"http://127.0.0.1:{port}/servers"
    via = write_config(tmp_path / "via-proxy.json", {
        name: {"url": f"{base}/{name}/mcp"} for name in ("time", "everything", "basic")
    })  # fmt: skip

    listed = mcpctl(via, "tools", "time")
    assert listed["ok"], (listed, tail(tmp_path / "mcp-proxy.log"))
    assert {"get_current_time", "convert_time"} <= {t["name"] for t in listed["data"]["tools"]}
    called = mcpctl(via, "call", "time", "get_current_time", "--arg", "timezone=UTC")
    assert called["ok"], called
    assert called["data"]["structured"]["timezone"] == "UTC"
    echoed = mcpctl(via, "call", "everything", "echo", "--arg", "message=hello through mcp-proxy")
    assert echoed["ok"], echoed
    assert "hello through mcp-proxy" in echoed["data"]["text"]
    seen = mcpctl(via, "call", "basic", "headers")
    assert seen["ok"], seen
    assert seen["data"]["structured"]["x-test"] == "through-the-bridge"


def test_fastmcp_proxy_serves_the_rendered_config_with_its_filters(
    tmp_path: Path, started: Callable[..., Any]
) -> None:
    python = proxy_program("fastmcp", "python")
    servers = downstreams()
    servers["time"]["tools"] = {"allow": ["get_current_time"]}
    servers["everything"]["tools"] = {"deny": ["get-tiny-image"]}
    config = write_config(tmp_path / "external-mcps.json", servers)
    rendered_file = tmp_path / "fastmcp.json"
    rendered = mcpctl(config, "render", "fastmcp", "-o", str(rendered_file))
    assert rendered["ok"] and not rendered["warnings"], rendered

    port = free_port()
    proc = started("fastmcp", [str(python), str(SERVERS / "fastmcp_proxy.py"),
                               str(rendered_file), str(port)])  # fmt: skip
    try:
        wait_for_port(port, proc, timeout=40)
    except RuntimeError as exc:
        pytest.fail(f"{exc}\n{tail(tmp_path / 'fastmcp.log')}")
    via = write_config(tmp_path / "via-proxy.json", {"fm": {"url": f"http://127.0.0.1:{port}/mcp"}})

    listed = mcpctl(via, "tools", "fm")
    assert listed["ok"], (listed, tail(tmp_path / "fastmcp.log"))
    names = {t["name"] for t in listed["data"]["tools"]}
    # Several servers: FastMCP prefixes each tool with its server's name.
    assert {"time_get_current_time", "everything_echo"} <= names, names
    assert "time_convert_time" not in names, "tools.allow reaches the proxy"
    assert "everything_get-tiny-image" not in names, "tools.deny reaches the proxy"
    called = mcpctl(via, "call", "fm", "time_get_current_time", "--arg", "timezone=UTC")
    assert called["ok"], called
    assert called["data"]["structured"]["timezone"] == "UTC"
    echoed = mcpctl(via, "call", "fm", "everything_echo", "--arg", "message=hello through fastmcp")
    assert echoed["ok"], echoed
    assert "hello through fastmcp" in echoed["data"]["text"]


def test_a_proxy_starts_a_keyring_fed_server_through_the_launcher(
    tmp_path: Path, started: Callable[..., Any]
) -> None:
    """--secrets launcher: the proxy spawns `mcpctl run time`, which takes the time zone from
    the keyring; the proxy's own environment has no such variable."""
    import sys

    from tests.auth.filekeyring import BACKEND, FILE_VAR

    program = proxy_program("mcp-proxy-py", "mcp-proxy")
    config = write_config(tmp_path / "external-mcps.json", {"time": {
        "command": published_time_server(), "args": ["--local-timezone", "${PROXY_TZ}"]}})  # fmt: skip
    keyring = tmp_path / "keyring.json"
    keyring.write_text(json.dumps({"mcpctl\x00secret:PROXY_TZ": "Asia/Tokyo"}))
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": BACKEND, FILE_VAR: str(keyring),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}  # fmt: skip
    env.pop("PROXY_TZ", None)
    named = tmp_path / "named-servers.json"
    done = subprocess.run(
        [*MCPCTL, "--config", str(config), "render", "mcp-proxy-py", "-o", str(named),
         "--secrets", "launcher", "--json"], capture_output=True, text=True, env=env, timeout=45,
    )  # fmt: skip
    assert json.loads(done.stdout)["data"]["launched"] == ["time"], done.stderr
    doc = json.loads(named.read_text())["mcpServers"]["time"]
    assert doc["command"] == "mcpctl" and "Asia/Tokyo" not in named.read_text()

    port = free_port()
    proc = started("mcp-proxy", [str(program), "--named-server-config", str(named),
                                 "--pass-environment", "--port", str(port),
                                 "--host", "127.0.0.1"], env)  # fmt: skip
    try:
        wait_for_port(port, proc, timeout=30)
    except RuntimeError as exc:
        pytest.fail(f"{exc}\n{tail(tmp_path / 'mcp-proxy.log')}")
    via = write_config(tmp_path / "via-proxy.json",
                       {"time": {"url": f"http://127.0.0.1:{port}/servers/time/mcp"}})  # fmt: skip
    called = mcpctl(via, "call", "time", "get_current_time", "--arg", "timezone=UTC")
    assert called["ok"], (called, tail(tmp_path / "mcp-proxy.log"))
    # Converting "now" from the server's local zone says which zone the launcher gave it.
    listed = mcpctl(via, "tools", "time")
    assert listed["ok"], listed
    text = json.dumps(listed["data"]["tools"])
    assert "Asia/Tokyo" in text, text
