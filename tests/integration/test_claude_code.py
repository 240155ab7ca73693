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


# What Claude Code sets for itself (its session, its version) that a server gets too, beyond
# CLAUDECODE=1 (health --as sets that one), and what Python sets in its own environment.
CLAUDE_OWN = {
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_PROJECT_DIR",
    "AI_AGENT",
    "COREPACK_ENABLE_AUTO_PIN",
    "NoDefaultCurrentDirectoryInExePath",
}
PYTHON_OWN = {"LC_CTYPE"}


def test_health_as_claude_code_starts_servers_as_claude_code_does(tmp_path: Path) -> None:
    """The real CLI and ``health --as claude-code`` agree: a project server waits for its
    approval in both, then gets the same environment -- the whole one, not mcpctl's few."""
    claude = claude_code()
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "project"
    (work / ".claude").mkdir(parents=True)
    seen = tmp_path / "seen.json"
    dump = {
        "command": sys.executable,
        "args": [str(ROOT / "tests" / "servers" / "misbehave.py"), "environ", str(seen)],
    }
    mcp_json = write_config(work / ".mcp.json", {"mcpServers": {"dump": dump}})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCPCTL_", "CLAUDE"))}
    env.update({"HOME": str(home), "MCPCTL_HOME": str(tmp_path / "mcpctl"),
                "PYTHONPATH": str(ROOT), "AS_TEST_SHELL_ONLY": "from-the-shell",
                "SSL_CERT_FILE": "/etc/ssl/certs/corporate-ca.pem"})  # fmt: skip
    env["MCPCTL_CONFIG"] = str(write_config(tmp_path / "servers.json", {}))

    def health() -> dict[str, object]:
        r = run([*MCPCTL, "health", "--as", "claude-code", str(mcp_json), "--json"], env,
                cwd=str(work))  # fmt: skip
        row: dict[str, object] = json.loads(r.stdout)["data"]["mcps"][0]
        return row

    # Not approved yet: Claude Code does not start it, nor does health --as.
    assert "Pending approval" in listed(claude, env, work)
    assert health()["as"]["verdict"] == "pending_approval"  # type: ignore[index]
    assert not seen.exists()
    # Approved as the prompt of `claude` in the project does it (the folder trusted first).
    write_config(home / ".claude.json", {"projects": {str(work): {
        "hasTrustDialogAccepted": True}}})  # fmt: skip
    write_config(work / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["dump"]})
    out = listed(claude, env, work)
    assert "dump:" in out and "Connected" in out, out
    by_claude = json.loads(seen.read_text())
    seen.unlink()
    row = health()
    assert row["healthy"] and row["as"]["verdict"] == "healthy", row  # type: ignore[index]
    by_mcpctl = json.loads(seen.read_text())
    assert by_claude["AS_TEST_SHELL_ONLY"] == by_mcpctl["AS_TEST_SHELL_ONLY"] == "from-the-shell"
    assert by_claude["CLAUDECODE"] == by_mcpctl["CLAUDECODE"] == "1"
    assert set(by_claude) - CLAUDE_OWN - PYTHON_OWN == set(by_mcpctl) - PYTHON_OWN
