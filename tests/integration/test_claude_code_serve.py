"""A real client connects to ``mcpctl serve``: Claude Code's CLI (from npm) reads the entry
``mcpctl render claude-code --install --self`` wrote, and ``claude mcp list`` starts it and
says it is connected -- read-only and with --allow-changes alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MCPCTL, ROOT, claude_code, write_config
from tests.serve.conftest import basic_server

pytestmark = pytest.mark.integration
TIMEOUT = 180


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)  # fmt: skip


@pytest.mark.parametrize("changes", [False, True], ids=["read-only", "allow-changes"])
def test_claude_mcp_list_shows_mcpctl_connected(tmp_path: Path, changes: bool) -> None:
    claude = claude_code()
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "project"
    work.mkdir()
    config = write_config(tmp_path / "servers.json", {"basic": basic_server()})
    bindir = str(Path(sys.executable).parent)  # where `mcpctl` is, as after pip install
    env = {**os.environ, "HOME": str(home), "MCPCTL_HOME": str(tmp_path / "mcpctl"),
           "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT),
           "MCPCTL_CONFIG": str(config)}  # fmt: skip
    flags = ["--allow-changes"] if changes else []
    r = run([*MCPCTL, "render", "claude-code", "--install", "--self", *flags], env, work)
    assert r.returncode == 0, r.stderr
    entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["mcpctl"]
    assert entry["command"] == "mcpctl" and entry["args"] == ["serve", "--config", str(config),
                                                              *flags]  # fmt: skip
    listed = run([claude, "mcp", "list"], env, work)
    out = listed.stdout + listed.stderr
    line = next((ln for ln in out.splitlines() if ln.startswith("mcpctl:")), "")
    assert "mcpctl serve" in line and "Connected" in line, out
