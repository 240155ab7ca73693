"""mcpctl render / import from the command line: files, drift checks, --install, undo."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import Cli, MemoryKeyring, write_config

CONFIG = {
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
    "gh": {"command": "npx", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
    "off": {"command": "echo", "enabled": False},
}


@pytest.fixture
def configured(config_path: Path) -> Path:
    return write_config(config_path, CONFIG)


def test_render_to_stdout_leaves_out_disabled_servers(cli: Cli, configured: Path) -> None:
    r = cli("render", "claude-code")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert set(doc["mcpServers"]) == {"time", "gh"}
    r = cli("render", "claude-code", "--json")
    assert r.json["data"]["target"] == "claude-code" and json.loads(r.json["data"]["text"])


def test_unknown_target_and_unknown_only(cli: Cli, configured: Path) -> None:
    r = cli("render", "claude-cod")
    assert r.exit_code == 2 and "claude-code" in r.stderr
    r = cli("render", "claude-code", "--only", "nope")
    assert r.exit_code != 0 and "nope" in r.stderr


def test_output_file_check_and_diff(cli: Cli, configured: Path, tmp_path: Path) -> None:
    out = tmp_path / "proxy.json"
    assert cli("render", "mcp-proxy", "-o", str(out)).exit_code == 0
    first = out.read_text()
    r = cli("render", "mcp-proxy", "-o", str(out), "--check")
    assert r.exit_code == 0 and "up to date" in r.stderr
    doc = json.loads(first)
    del doc["mcpServers"]["time"]
    out.write_text(json.dumps(doc))
    r = cli("render", "mcp-proxy", "-o", str(out), "--diff")
    assert r.exit_code == 0 and '"time"' in r.stdout and r.stdout.startswith("---")
    r = cli("render", "mcp-proxy", "-o", str(out), "--check", "--json")
    assert r.exit_code == 1 and r.json["data"]["changed"] is True and r.json["data"]["diff"]
    assert json.loads(out.read_text()) == doc, "--check and --diff write nothing"
    assert cli("render", "mcp-proxy", "--check").exit_code == 2, "--check needs -o"


def test_check_fails_when_the_file_does_not_exist(
    cli: Cli, configured: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CI gate that passes with no file at all would let a deleted or misnamed file through.
    out = tmp_path / "never-rendered.json"
    r = cli("render", "mcp-proxy", "-o", str(out), "--check")
    assert r.exit_code == 1, r.stderr
    assert f"{out} does not exist" in r.stderr and r.stdout.startswith("---")
    r = cli("render", "mcp-proxy", "-o", str(out), "--check", "--json")
    assert r.exit_code == 1
    assert r.json["data"]["changed"] is True and r.json["data"]["exists"] is False
    r = cli("render", "mcp-proxy", "-o", str(out), "--diff")
    assert r.exit_code == 0 and "does not exist" in r.stderr
    assert not out.exists(), "--check and --diff write nothing"
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    client = home / ".cursor" / "mcp.json"
    r = cli("render", "cursor", "--install", "--check")
    assert r.exit_code == 1, r.stderr
    assert f"{client} does not exist" in r.stderr and '"time"' in r.stdout
    r = cli("render", "cursor", "--install", "--check", "--json")
    assert r.exit_code == 1 and r.json["data"]["exists"] is False
    assert not client.exists()
    write_config(configured, {})
    r = cli("render", "cursor", "--install", "--check")
    assert r.exit_code == 1, "a missing file differs even when there is no server to install"
    assert not client.exists()


def test_template_with_local_override(cli: Cli, configured: Path, tmp_path: Path) -> None:
    template = tmp_path / "base.json"
    template.write_text(json.dumps({"mcpProxy": {"addr": ":7000", "name": "team"}}))
    (tmp_path / "base.local.json").write_text(json.dumps({"mcpProxy": {"addr": ":7001"}}))
    r = cli("render", "mcp-proxy", "--template", str(template))
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["mcpProxy"]["addr"] == ":7001" and doc["mcpProxy"]["name"] == "team"
    assert set(doc["mcpServers"]) == {"time", "gh"}
    (tmp_path / "bad.json").write_text("[1]")
    r = cli("render", "mcp-proxy", "--template", str(tmp_path / "bad.json"))
    assert r.exit_code == 2 and "JSON object" in r.stderr


def test_listen_for_mcp_proxy(cli: Cli, configured: Path, tmp_path: Path) -> None:
    r = cli("render", "mcp-proxy")
    assert r.exit_code == 0 and r.stderr == ""
    assert json.loads(r.stdout)["mcpProxy"]["addr"] == "127.0.0.1:9090"
    r = cli("render", "mcp-proxy", "--listen", "[::1]:8080")
    assert r.exit_code == 0 and r.stderr == ""
    proxy = json.loads(r.stdout)["mcpProxy"]
    assert (proxy["addr"], proxy["baseURL"]) == ("[::1]:8080", "http://[::1]:8080")
    out = tmp_path / "proxy.json"
    r = cli("render", "mcp-proxy", "--listen", "0.0.0.0:8080", "-o", str(out))
    assert r.exit_code == 0
    assert (
        "warning: mcpProxy: addr 0.0.0.0:8080 listens on every interface with no auth token"
        in r.stderr
    )
    assert json.loads(out.read_text())["mcpProxy"]["addr"] == "0.0.0.0:8080"
    r = cli("render", "mcp-proxy", "--listen", ":8080", "--json")
    assert r.exit_code == 0 and any(
        w.startswith("mcpProxy: addr :8080 ") for w in r.json["warnings"]
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["mcp-proxy", "--listen", "::1:8080"], "an IPv6 address goes in brackets"),
        (["mcp-proxy", "--listen", "localhost"], "has no port"),
        (["mcp-proxy-py", "--listen", "127.0.0.1:8096"], "--listen does not apply to mcp-proxy-py"),
        (["claude-code", "--listen", "127.0.0.1:1"], "a client does not listen"),
        (["cursor", "--install", "--listen", "127.0.0.1:1"], "a client does not listen"),
    ],
)
def test_listen_errors_exit_2(cli: Cli, configured: Path, args: list[str], needle: str) -> None:
    r = cli("render", *args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert needle in r.stderr and "hint: " in r.stderr and r.stdout == ""


def test_inline_secrets_need_a_file_and_get_mode_0600(
    cli: Cli, configured: Path, tmp_path: Path
) -> None:
    r = cli("render", "claude-desktop", "--inline-secrets")
    assert r.exit_code == 2 and "-o FILE" in r.stderr
    out = tmp_path / "desktop.json"
    r = cli("render", "claude-desktop", "--inline-secrets", "-o", str(out),
            env={"GITHUB_TOKEN": "ghp-very-secret-value-123"})  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert "ghp-very-secret-value-123" in out.read_text()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert "ghp-very-secret-value-123" not in r.stdout + r.stderr
    assert "0600" in r.stderr


def test_install_changes_only_our_servers_and_undo_restores(
    cli: Cli, configured: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    client = home / ".cursor" / "mcp.json"
    client.parent.mkdir(parents=True)
    original = {
        "theme": {"keep": True},
        "mcpServers": {
            "mine": {"command": "my-own-server"},
            "off": {"command": "echo"},
            "time": {"command": "stale"},
        },
    }
    client.write_text(json.dumps(original, indent=2) + "\n")
    r = cli("render", "cursor", "--install", "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json["data"]
    assert (data["added"], data["updated"], data["removed"], data["kept"]) == (
        ["gh"], ["time"], ["off"], ["mine"],
    )  # fmt: skip
    doc = json.loads(client.read_text())
    assert doc["theme"] == {"keep": True}
    assert set(doc["mcpServers"]) == {"mine", "time", "gh"}
    assert doc["mcpServers"]["mine"] == {"command": "my-own-server"}
    r = cli("render", "cursor", "--install", "--check")
    assert r.exit_code == 0 and "up to date" in r.stderr
    r = cli("undo", "--file", str(client))
    assert r.exit_code == 0, r.stderr
    assert json.loads(client.read_text()) == original
    r = cli("render", "cursor", "--install", "--replace")
    assert set(json.loads(client.read_text())["mcpServers"]) == {"time", "gh"}


def test_install_refuses_what_it_cannot_do(cli: Cli, configured: Path) -> None:
    r = cli("render", "mcp-proxy", "--install")
    assert r.exit_code == 2 and "-o FILE" in (r.stderr)
    r = cli("render", "cursor", "--install", "--scope", "team")
    assert r.exit_code == 2 and "--scope" in r.stderr
    r = cli("render", "cursor", "--install", "-o", "x.json")
    assert r.exit_code == 2
    r = cli("render", "cursor", "--replace")
    assert r.exit_code == 2 and "--install" in r.stderr


def test_import_scan_dry_run_and_import(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    cursor.write_text(json.dumps({"mcpServers": {
        "gh": {"command": "npx", "args": ["-y", "gh-mcp"], "env": {"GITHUB_TOKEN": token}},
        "time": {"command": "uvx", "args": ["mcp-server-time"]},
        "docs": {"url": "https://docs.example.com/mcp", "headers": {"X-Key": "${env:DOCS_KEY}"}},
    }}))  # fmt: skip
    write_config(config_path, {"time": {"command": "other"}})
    r = cli("import", "--json")
    assert r.exit_code == 0, r.stderr
    found = [f for f in r.json["data"]["found"] if f["source"] == "cursor"]
    assert found and found[0]["servers"] == ["gh", "time", "docs"]
    r = cli("import", "cursor", "--dry-run", "--json")
    assert r.exit_code == 0, r.stderr
    actions = {s["name"]: s["action"] for s in r.json["data"]["servers"]}
    assert actions == {"gh": "add", "time": "skip", "docs": "add"}
    assert json.loads(config_path.read_text()) == {"time": {"command": "other"}}
    assert token not in r.stdout + r.stderr
    r = cli("import", "cursor", "--on-conflict", "rename")
    assert r.exit_code == 0, r.stderr
    assert token not in r.stdout + r.stderr
    data = json.loads(config_path.read_text())
    assert set(data) == {"time", "gh", "time-2", "docs"}
    assert data["gh"]["env"] == {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}
    assert data["docs"]["headers"] == {"X-Key": "${DOCS_KEY}"}
    assert memory_keyring.items[("mcpctl", "secret:GITHUB_TOKEN")] == token
    assert token not in config_path.read_text()
    assert cli("undo").exit_code == 0
    assert json.loads(config_path.read_text()) == {"time": {"command": "other"}}


def test_import_lifts_literals_under_secret_names_unless_allowed(
    cli: Cli, config_path: Path, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    source = tmp_path / "mcp.json"
    source.write_text(json.dumps({"mcpServers": {
        "brave": {"command": "npx", "env": {"BRAVE_API_KEY": "mypassword123", "MY_PAT": "none"}},
    }}))  # fmt: skip
    config_path.write_text("{}\n")
    r = cli("import", "cursor", str(source), "--allow-literal", "MY_PAT", "--allow-literal", "NOPE")
    assert r.exit_code == 0, r.stderr
    assert "mypassword123" not in r.stdout + r.stderr
    assert "--allow-literal NOPE: no server" in r.stderr
    entry = json.loads(config_path.read_text())["brave"]
    assert entry["env"] == {"BRAVE_API_KEY": "${BRAVE_API_KEY}", "MY_PAT": "none"}
    assert entry["allow_literal"] == ["MY_PAT"]
    assert memory_keyring.items[("mcpctl", "secret:BRAVE_API_KEY")] == "mypassword123"
    assert cli("validate").exit_code == 0


def test_import_errors(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    r = cli("import", "cursor", str(tmp_path / "missing.json"))
    assert r.exit_code != 0 and "missing.json" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    r = cli("import", "cursor", str(bad))
    assert r.exit_code == 2 and str(bad) in r.stderr
    r = cli("import", "cursor", "--on-conflict", "merge")
    assert r.exit_code == 2 and "--on-conflict" in r.stderr
    r = cli("import", "nosuch")
    assert r.exit_code == 2
    assert os.listdir(tmp_path / "work") == [], "nothing written on errors"
