"""group add / remove / list, and --group on the commands that select servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import SERVERS, Cli, write_config

PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}
BROKEN = {"command": PY, "args": [str(SERVERS / "misbehave.py"), "exit"]}


def read(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.fixture
def servers(config_path: Path) -> Path:
    return write_config(config_path, {
        "$schema": "x",
        "time": {"command": "uvx", "args": ["mcp-server-time"], "description": "Clock",
                 "enabled": True, "tools": {"deny": ["x"]}},
        "gh": {"url": "https://h.example/mcp"},
        "off": {"command": "echo", "enabled": False},
    })  # fmt: skip


def test_group_add_writes_groups_in_place_and_list_shows_members(cli: Cli, servers: Path) -> None:
    r = cli("group", "add", "work", "time", "gh", "off", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json["data"] == {"config": str(servers), "group": "work",
                              "added": ["time", "gh", "off"]}  # fmt: skip
    doc = read(servers)
    # groups sits in its canonical place: after description, before enabled and tools.
    assert list(doc["time"]) == ["command", "args", "description", "groups", "enabled", "tools"]
    assert doc["gh"]["groups"] == ["work"] and doc["$schema"] == "x"
    assert cli("group", "add", "daily", "time").exit_code == 0
    assert read(servers)["time"]["groups"] == ["work", "daily"]
    r = cli("group", "add", "work", "time")  # already there: nothing written
    assert r.exit_code == 0 and "Already in group 'work'" in r.stderr
    r = cli("group", "list", "--json")
    assert r.json["data"]["groups"] == [
        {"name": "daily", "servers": ["time"], "enabled": ["time"]},
        {"name": "work", "servers": ["time", "gh", "off"], "enabled": ["time", "gh"]},
    ]
    assert cli("group", "list").stdout.splitlines() == [
        "daily\ttime", "work\ttime, gh, off (disabled)",
    ]  # fmt: skip
    # What was written is a valid config.
    assert cli("validate").exit_code == 0


def test_group_add_errors_change_nothing(cli: Cli, servers: Path) -> None:
    before = servers.read_text()
    r = cli("group", "add", "work", "time", "tmie")
    assert r.exit_code == 2
    assert "no server 'tmie'" in r.stderr and "did you mean 'time'?" in r.stderr
    r = cli("group", "add", "work", "nope", "--json")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "server_not_found"
    r = cli("group", "add", "bad name", "time")
    assert r.exit_code == 2 and "group name 'bad name'" in r.stderr
    assert cli("group", "add", "work").exit_code == 2  # a server is needed
    assert servers.read_text() == before


def test_group_remove_takes_members_out_or_dissolves(cli: Cli, servers: Path) -> None:
    cli("group", "add", "work", "time", "gh")
    cli("group", "add", "daily", "time")
    r = cli("group", "remove", "work", "gh", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json["data"]["removed"] == ["gh"] and r.json["data"]["dissolved"] is False
    assert "groups" not in read(servers)["gh"]  # an empty list is left out
    r = cli("group", "remove", "work", "off")
    assert r.exit_code == 0 and "Not in group 'work': off" in r.stderr
    cli("group", "add", "work", "gh")
    r = cli("group", "remove", "work", "--json")
    assert r.exit_code == 0
    assert r.json["data"]["removed"] == ["time", "gh"] and r.json["data"]["dissolved"] is True
    doc = read(servers)
    assert doc["time"]["groups"] == ["daily"] and "groups" not in doc["gh"]
    assert set(doc) == {"$schema", "time", "gh", "off"}  # the servers stay
    r = cli("group", "remove", "work", "--json")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "group_not_found"
    assert "daily" in r.json["errors"][0]["hint"]
    r = cli("group", "remove", "daily", "nope")
    assert r.exit_code == 2 and "no server 'nope'" in r.stderr
    assert cli("undo").exit_code == 0  # undoable like every edit


def test_group_list_empty_and_bad_groups_field(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"a": {"command": "x"}})
    r = cli("group", "list")
    assert r.exit_code == 0 and r.stdout == ""  # piped: no rows
    assert cli("group", "list", "--json").json["data"]["groups"] == []
    r = cli("list", "--group", "work")
    assert r.exit_code == 2 and "no server is in a group yet" in r.stderr
    write_config(config_path, {"a": {"command": "x", "groups": "work"}})
    r = cli("group", "add", "work", "a")
    assert r.exit_code == 2 and "not a list of names" in r.stderr
    assert read(config_path)["a"]["groups"] == "work"


def test_list_with_group_shows_the_members(cli: Cli, servers: Path) -> None:
    cli("group", "add", "work", "gh", "off")
    cli("group", "add", "daily", "time")
    r = cli("list", "--group", "work", "--json")
    assert [s["name"] for s in r.json["data"]["servers"]] == ["gh", "off"]
    assert r.json["data"]["servers"][0]["groups"] == ["work"]
    assert "groups:    work\n" in cli("get", "gh").stdout
    r = cli("list", "--group", "work", "--group", "daily")
    assert [line.split("\t")[0] for line in r.stdout.splitlines()] == ["time", "gh", "off"]
    assert [s["name"] for s in cli("list", "--group", "work", "--enabled", "--json")
            .json["data"]["servers"]] == ["gh"]  # fmt: skip
    r = cli("list", "--group", "wrok")
    assert r.exit_code == 2
    assert "no group 'wrok'" in r.stderr and "did you mean 'work'?" in r.stderr
    assert "the groups: daily, work" in r.stderr


def test_health_with_group_probes_only_the_members(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {
        "basic": {**BASIC, "groups": ["ok"]},
        "broken": {**BROKEN, "groups": ["bad"]},
        "also": {**BASIC, "groups": ["ok", "bad"], "enabled": False},
    })  # fmt: skip
    r = cli("health", "--group", "ok", "--timeout", "60s", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert [m["name"] for m in r.json["data"]["mcps"]] == ["basic"]  # disabled "also" left out
    r = cli("health", "--group", "bad", "--timeout", "60s", "--json")
    assert r.exit_code == 1 and [m["name"] for m in r.json["data"]["mcps"]] == ["broken"]
    # Names and groups: the union.
    r = cli("health", "also", "--group", "ok", "--timeout", "60s", "--json")
    assert sorted(m["name"] for m in r.json["data"]["mcps"]) == ["also", "basic"]
    r = cli("health", "--group", "nope")
    assert r.exit_code == 2 and "no group 'nope'" in r.stderr
    # health --as CLIENT --group: the client's servers of the group (tests/cli/test_health_as.py)


def test_tools_with_group_lists_only_the_members(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {
        "basic": {**BASIC, "groups": ["ok"]},
        "two": {**BASIC, "args": [*BASIC["args"], "--tools", "2"], "groups": ["ok", "more"]},
        "broken": {**BROKEN, "groups": ["bad"]},
    })  # fmt: skip
    r = cli("tools", "--group", "more", "--timeout", "60s", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert [s["name"] for s in r.json["data"]["servers"]] == ["two"]
    assert {t["server"] for t in r.json["data"]["tools"]} == {"two"}
    r = cli("tools", "--group", "ok", "--prefix", "underscore", "--timeout", "60s", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert sorted(s["name"] for s in r.json["data"]["servers"]) == ["basic", "two"]
    r = cli("tools", "--group", "bad", "--timeout", "60s", "--json")
    assert r.exit_code == 1 and [f["name"] for f in r.json["data"]["failed"]] == ["broken"]
    r = cli("tools", "--group", "nope")
    assert r.exit_code == 2 and "no group 'nope'" in r.stderr


def test_render_with_group(cli: Cli, servers: Path) -> None:
    cli("group", "add", "work", "gh", "off")
    r = cli("render", "claude-code", "--group", "work")
    assert r.exit_code == 0, r.stderr
    assert set(json.loads(r.stdout)["mcpServers"]) == {"gh"}  # disabled members left out
    r = cli("render", "claude-code", "--group", "work", "--only", "time")
    assert set(json.loads(r.stdout)["mcpServers"]) == {"gh", "time"}
    r = cli("render", "claude-code", "--group", "play")
    assert r.exit_code == 2 and "no group 'play'" in r.stderr


def test_render_install_with_group_manages_only_the_members(
    cli: Cli, servers: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    client = home / ".cursor" / "mcp.json"
    client.parent.mkdir(parents=True)
    client.write_text(json.dumps({"mcpServers": {
        "time": {"command": "stale"}, "off": {"command": "echo"}, "mine": {"command": "m"},
    }}))  # fmt: skip
    cli("group", "add", "work", "gh", "off")
    r = cli("render", "cursor", "--install", "--group", "work", "--json")
    assert r.exit_code == 0, r.stderr
    doc = read(client)["mcpServers"]
    assert doc["time"] == {"command": "stale"}  # not a member: left as it was
    assert doc["mine"] == {"command": "m"}
    assert "gh" in doc and "off" not in doc  # a disabled member is taken out
    assert r.json["data"]["added"] == ["gh"] and r.json["data"]["removed"] == ["off"]


def test_snapshot_with_group(cli: Cli, servers: Path, tmp_path: Path, isolated: Path) -> None:
    cli("group", "add", "work", "gh")
    lock = tmp_path / "work-lock.json"
    r = cli("snapshot", "save", "--group", "work", "-o", str(lock), "--json")
    assert r.exit_code == 0, r.stderr
    assert [m["name"] for m in read(lock)["mcps"]] == ["gh"]
    # Into the last-known snapshot, which keeps every server: refused.
    r = cli("snapshot", "save", "--group", "work")
    assert r.exit_code == 2 and "-o FILE" in r.stderr
    assert not (isolated.parent / "mcpctl-home" / "state" / "last-known-mcps.json").exists()
    assert cli("snapshot", "save").exit_code == 0  # every server
    write_config(servers, {**read(servers), "time": {"command": "uvx", "args": ["other"]},
                           "gh": {"url": "https://h.example/v2", "groups": ["work"]}})  # fmt: skip
    r = cli("snapshot", "diff", "--group", "work", "--json")
    assert r.exit_code == 0, r.stderr
    data = r.json["data"]
    assert [c["name"] for c in data["changed"]] == ["gh"]  # time changed too, not in the group
    assert data["added"] == [] and data["removed"] == []  # the others are not "removed"
    r = cli("snapshot", "diff", "--json")
    assert sorted(c["name"] for c in r.json["data"]["changed"]) == ["gh", "time"]
    r = cli("snapshot", "diff", "--group", "work", "--save")
    assert r.exit_code == 2 and "--snapshot FILE" in r.stderr
    r = cli("snapshot", "diff", "--group", "work", "--against", str(lock), "--save")
    assert r.exit_code == 0, r.stderr
    r = cli("snapshot", "diff", "--group", "nope")
    assert r.exit_code == 2 and "no group 'nope'" in r.stderr


def test_report_with_group(cli: Cli, servers: Path, tmp_path: Path) -> None:
    cli("group", "add", "work", "gh")
    assert cli("snapshot", "save").exit_code == 0
    write_config(servers, {**read(servers), "time": {"command": "uvx", "args": ["other"]}})
    r = cli("report", "--group", "work")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines()[0] == "MCP servers: 1 (0 internal, 1 external), not probed"
    assert "time" not in r.stdout and "No changes since " in r.stdout
    assert "~ time: config changed (args, description, tools)" in cli("report").stdout
    r = cli("report", "--group", "work", "--save")
    assert r.exit_code == 2 and "--snapshot FILE" in r.stderr
    own = tmp_path / "work.json"
    r = cli("report", "--group", "work", "--save", "--snapshot", str(own))
    assert r.exit_code == 0 and [m["name"] for m in read(own)["mcps"]] == ["gh"]
    r = cli("report", "--group", "nope", "--json")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "group_not_found"
