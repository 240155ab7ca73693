"""``render CLIENT --self``: the entry that starts ``mcpctl serve``, through the shared
render machinery, for every client target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.render import render
from mcpctl.render.delivery import SELF_NAME, serve_entry
from mcpctl.render.targets import get_target, target_names
from tests.conftest import Cli, write_config

CLIENTS = [n for n in target_names() if get_target(n).family == "client"]


def test_the_config_is_named_unless_it_is_the_users_own(tmp_path: Path) -> None:
    home = tmp_path / "home"
    own = home / ".config" / "mcpctl" / "external-mcps.json"
    assert serve_entry(own, own, home=home).args == ("serve",)
    project = tmp_path / "project" / "external-mcps.json"
    assert serve_entry(project, own, home=home).args == ("serve", "--config", str(project))
    elsewhere = home / "agents" / "external-mcps.json"
    assert serve_entry(elsewhere, own, home=home, allow_changes=True).args == (
        "serve", "--config", "~/agents/external-mcps.json", "--allow-changes",
    )  # fmt: skip
    assert serve_entry(own, own, allow_changes=True).command == "mcpctl"


@pytest.mark.parametrize("target", CLIENTS)
def test_every_client_target_gets_it(target: str) -> None:
    entries = {"time": ServerEntry(command="uvx", args=("mcp-server-time",))}
    me = ServerEntry(command="mcpctl", args=("serve", "--allow-changes"))
    rendered = render(target, entries, serve=me, secrets_mode="env")
    assert "mcp-server-time" in rendered.text
    assert "--allow-changes" in rendered.text and SELF_NAME in rendered.text
    back = get_target(target).parse(rendered.text).entries
    assert back[SELF_NAME].args == ("serve", "--allow-changes")


def test_not_for_a_proxy_and_not_beside_a_server_of_its_name() -> None:
    from mcpctl.errors import UsageError

    me = ServerEntry(command="mcpctl", args=("serve",))
    with pytest.raises(UsageError, match="mcp-proxy is a proxy"):
        render("mcp-proxy", {}, serve=me)
    with pytest.raises(UsageError, match="a server named 'mcpctl' is configured"):
        render("cursor", {"mcpctl": ServerEntry(command="x")}, serve=me)


def test_the_launcher_mode_does_not_launch_mcpctl_through_itself() -> None:
    entries = {"time": ServerEntry(command="uvx", args=("mcp-server-time",))}
    me = ServerEntry(command="mcpctl", args=("serve",))
    rendered = render("claude-code", entries, serve=me, secrets_mode="launcher")
    servers = json.loads(rendered.text)["mcpServers"]
    assert servers["time"]["args"][:2] == ["run", "time"]
    assert servers[SELF_NAME]["args"] == ["serve"] and rendered.launched == ["time"]


def installed(home: Path) -> dict[str, Any]:
    servers: dict[str, Any] = json.loads((home / ".claude.json").read_text())["mcpServers"]
    return servers


def test_install_self_into_claude_code(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    write_config(config_path, {"time": {"command": "uvx", "args": ["mcp-server-time"]}})
    r = cli("render", "claude-code", "--install", "--self")
    assert r.exit_code == 0, r.stderr
    assert installed(home)[SELF_NAME] == {
        "type": "stdio",
        "command": "mcpctl",
        "args": ["serve", "--config", str(config_path)],
    }  # a project's file is named: the client may start it elsewhere
    r = cli("render", "claude-code", "--install", "--self", "--allow-changes")
    assert r.exit_code == 0, r.stderr
    assert installed(home)[SELF_NAME]["args"][-1] == "--allow-changes"
    assert set(installed(home)) == {"time", SELF_NAME}
    r = cli("render", "claude-code", "--install")  # without --self it is not managed
    assert r.exit_code == 0, r.stderr
    assert SELF_NAME in installed(home)


def test_allow_changes_goes_with_self(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {})
    r = cli("render", "claude-code", "--allow-changes")
    assert r.exit_code == 2 and "--allow-changes goes with --self" in r.stderr
    r = cli("render", "toolhive", "--self")
    assert r.exit_code == 2 and "toolhive is a cluster" in r.stderr
