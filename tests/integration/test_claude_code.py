"""A real client starts a server whose secret only the keyring holds.

Claude Code's CLI (from npm) reads the file ``mcpctl render claude-code --install`` wrote and
``claude mcp list`` starts every server to see whether it connects. The server is PyPI's
``mcp-server-time``, whose time zone argument is the "secret": kept in a real Secret Service
(gnome-keyring on a private D-Bus session), unknown to Claude Code's environment. Left to the
client (``--secrets env``) the server gets ``${TIME_ZONE}`` as written and fails; through
the launcher (the default) it gets the keyring's value and connects.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MCPCTL, ROOT, claude_code, published_time_server, write_config

pytestmark = pytest.mark.integration
TIMEOUT = 120


def run(argv: list[str], env: dict[str, str], **kw: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=TIMEOUT,
                          check=False, **kw)  # type: ignore[call-overload]  # fmt: skip


def listed(claude: str, env: dict[str, str], cwd: Path) -> str:
    r = run([claude, "mcp", "list"], env, cwd=str(cwd))
    return r.stdout + r.stderr


def test_claude_code_starts_a_server_whose_secret_is_only_in_the_keyring(
    secret_service: dict[str, str], tmp_path: Path
) -> None:
    claude = claude_code()
    server = published_time_server()
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "project"
    work.mkdir()
    bindir = str(Path(sys.executable).parent)  # where `mcpctl` is, as after pip install
    env = {**secret_service, "HOME": str(home), "MCPCTL_HOME": str(tmp_path / "mcpctl"),
           "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT),
           "MCPCTL_CONFIG": str(write_config(tmp_path / "servers.json", {
               "time": {"command": server, "args": ["--local-timezone", "${TIME_ZONE}"]}}))}  # fmt: skip
    env.pop("TIME_ZONE", None)
    r = run([*MCPCTL, "secret", "set", "TIME_ZONE"], env, input="Europe/Paris")
    assert r.returncode == 0, r.stderr
    r = run([*MCPCTL, "health", "--json"], env)
    assert r.returncode == 0, r.stdout + r.stderr  # healthy for mcpctl: the keyring has it

    r = run([*MCPCTL, "render", "claude-code", "--install", "--secrets", "env"], env)
    assert r.returncode == 0, r.stderr
    out = listed(claude, env, work)
    assert "Missing environment variables: TIME_ZONE" in out, out
    assert "time:" in out and "Connected" not in out, out

    r = run([*MCPCTL, "render", "claude-code", "--install"], env)
    assert r.returncode == 0, r.stderr
    installed = json.loads((home / ".claude.json").read_text())["mcpServers"]["time"]
    assert installed["command"] == "mcpctl" and installed["args"][:2] == ["run", "time"]
    assert "Europe/Paris" not in (home / ".claude.json").read_text()
    out = listed(claude, env, work)
    assert "time: mcpctl run time" in out and "Connected" in out, out
