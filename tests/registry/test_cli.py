"""The registry commands end to end: registry, discover, show, add --from-registry,
outdated, upgrade (in-process, offline: file registries and 127.0.0.1 only)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from mcpctl.paths import Paths
from mcpctl.registry import DiscoveryCache
from tests.conftest import Cli, write_config
from tests.registry.conftest import Publish
from tests.registry.server import Registry, make_record, running

DEAD = "http://127.0.0.1:9"  # nothing listens there: fails at once


def offline_only(cli: Cli) -> None:
    """Never reach the internet: drop the official registry (builtin is a file)."""
    assert cli("registry", "remove", "official").exit_code == 0


def approved_db() -> dict[str, Any]:
    return make_record(
        "io.team/approved-db", title="Approved DB", description="The database, approved",
        packages=[{"registryType": "pypi", "identifier": "db-mcp", "version": "3.1.0",
                   "environmentVariables": [{"name": "DB_PASSWORD", "isSecret": True}]}],
    )  # fmt: skip


def team_tool(version: str) -> dict[str, Any]:
    pkg = {"registryType": "npm", "identifier": "@team/tool", "version": version,
           "environmentVariables": [{"name": "MODE", "default": "fast"}]}  # fmt: skip
    return make_record("io.team/tool", version, packages=[pkg])


def test_cli_registry_file_discover_show_add(cli: Cli, config_path: Path, catalog: Publish) -> None:
    assert cli("registry", "add", "team", str(catalog(approved_db()))).exit_code == 0
    offline_only(cli)
    r = cli("discover", "approved", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json["data"]["results"][0]["name"] == "io.team/approved-db"
    assert r.json["data"]["results"][0]["needs_secrets"] is True
    r = cli("show", "io.team/approved-db", "--json")
    assert r.json["data"]["packages"][0]["identifier"] == "db-mcp"
    write_config(config_path, {})
    r = cli("add", "--from-registry", "io.team/approved-db", "--json")
    assert r.exit_code == 0, r.stdout
    assert r.json["data"]["name"] == "approved-db" and r.json["data"]["secrets"] == ["DB_PASSWORD"]
    entry = json.loads(config_path.read_text())["approved-db"]
    assert entry["args"] == ["db-mcp==3.1.0"] and entry["env"] == {"DB_PASSWORD": "${DB_PASSWORD}"}
    assert entry["source"] == {
        "registry": "team",
        "name": "io.team/approved-db",
        "version": "1.0.0",
    }
    r = cli("registry", "list", "--json")
    assert {x["id"] for x in r.json["data"]["registries"]} == {"builtin", "team"}


def test_cli_add_from_registry_missing_inputs_without_tty(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {})
    offline_only(cli)
    r = cli("add", "--from-registry", "io.github.modelcontextprotocol/git", "--json")
    assert r.exit_code == 2
    assert (
        r.json["errors"][0]["code"] == "missing_input"
        and "--env REPOSITORY=" in r.json["errors"][0]["message"]
    )
    assert json.loads(config_path.read_text()) == {}


def test_cli_add_from_registry_twice_changes_nothing(
    cli: Cli, config_path: Path, catalog: Publish
) -> None:
    cli("registry", "add", "team", str(catalog(team_tool("1.0.0"))))
    offline_only(cli)
    write_config(config_path, {})
    r = cli("add", "--from-registry", "io.team/tool", "-e", "MODE=careful")
    assert r.exit_code == 0, r.stderr
    before = config_path.read_bytes()
    r = cli("add", "--from-registry", "io.team/tool")
    assert r.exit_code == 0, r.stderr
    assert "already configured as 'tool'" in r.stderr
    assert config_path.read_bytes() == before
    r = cli("add", "--from-registry", "io.team/tool", "--json")
    assert r.exit_code == 0 and r.json["data"]["changed"] is False
    assert r.json["data"]["name"] == "tool" and r.json["data"]["server"]["env"] == {
        "MODE": "careful"
    }
    assert config_path.read_bytes() == before
    # --force replaces it, under its name.
    r = cli("add", "--from-registry", "io.team/tool", "--force", "--json")
    assert r.exit_code == 0 and r.json["data"]["replaced"] is True
    data = json.loads(config_path.read_text())
    assert list(data) == ["tool"] and data["tool"]["env"] == {"MODE": "fast"}
    # A NAME adds a second copy.
    r = cli("add", "tool-2", "--from-registry", "io.team/tool", "-e", "MODE=slow")
    assert r.exit_code == 0, r.stderr
    data = json.loads(config_path.read_text())
    assert list(data) == ["tool", "tool-2"] and data["tool-2"]["env"] == {"MODE": "slow"}
    assert data["tool-2"]["source"] == data["tool"]["source"]


def test_cli_add_from_registry_again_needs_no_values(cli: Cli, config_path: Path) -> None:
    offline_only(cli)
    write_config(config_path, {})
    git = "io.github.modelcontextprotocol/git"
    assert cli("add", "--from-registry", git, "-e", "REPOSITORY=/src/app").exit_code == 0
    before = config_path.read_bytes()
    r = cli("add", "--from-registry", git)
    assert r.exit_code == 0 and "already configured as 'git'" in r.stderr, r.stderr
    assert config_path.read_bytes() == before


def test_cli_discover_builtin_offline_and_unreachable_registry(cli: Cli) -> None:
    r = cli("discover", "--registry", "builtin", "--offline", "--json")
    assert r.exit_code == 0 and len(r.json["data"]["results"]) >= 8
    cli("registry", "add", "dead", DEAD)
    r = cli("discover", "x", "--registry", "dead", "--json")
    assert r.exit_code == 3 and r.json["errors"][0]["code"] == "registry_unavailable"


def test_cli_outdated_and_upgrade(cli: Cli, config_path: Path, catalog: Publish) -> None:
    offline_only(cli)
    cli("registry", "add", "team", str(catalog(team_tool("1.0.0"))))
    write_config(config_path, {})
    assert cli("add", "--from-registry", "io.team/tool", "-e", "MODE=careful").exit_code == 0
    cli("disable", "tool")
    r = cli("outdated", "--json")
    assert r.exit_code == 0 and r.json["data"]["current"] == ["tool"]
    catalog(team_tool("1.1.0"))
    cli("registry", "sync", "team")
    r = cli("outdated", "--json")
    assert r.exit_code == 1
    assert r.json["data"]["outdated"] == [{"name": "tool", "registry": "team", "server": "io.team/tool",
                                           "pinned": "1.0.0", "latest": "1.1.0"}]  # fmt: skip
    before = config_path.read_text()
    r = cli("upgrade", "--dry-run", "--json")
    assert r.json["data"]["upgrades"] == [{"name": "tool", "from": "1.0.0", "to": "1.1.0"}]
    assert config_path.read_text() == before
    assert cli("upgrade").exit_code == 0
    entry = json.loads(config_path.read_text())["tool"]
    assert entry["args"] == ["-y", "@team/tool@1.1.0"]
    assert entry["env"] == {"MODE": "careful"} and entry["enabled"] is False
    assert entry["source"]["version"] == "1.1.0"
    assert cli("outdated").exit_code == 0
    r = cli("undo", "--json")
    assert r.exit_code == 0, r.stdout
    assert config_path.read_text() == before


def test_cli_upgrade_names(cli: Cli, config_path: Path, catalog: Publish) -> None:
    offline_only(cli)
    cli("registry", "add", "team", str(catalog(team_tool("1.0.0"))))
    write_config(config_path, {"local": {"command": "echo"}})
    assert cli("add", "--from-registry", "io.team/tool").exit_code == 0
    before = config_path.read_bytes()
    r = cli("upgrade", "tol", "--json")
    assert r.exit_code == 2 and r.json["command"] == "upgrade"
    assert r.json["errors"][0]["code"] == "server_not_found"
    assert "tool" in r.json["errors"][0]["hint"]
    r = cli("upgrade", "local", "--json")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "usage_error"
    assert "not added from a registry" in r.json["errors"][0]["message"]
    r = cli("upgrade", "tool")
    assert r.exit_code == 0 and "Nothing to upgrade" in r.stderr
    assert config_path.read_bytes() == before


def test_cli_discover_export_is_a_registry(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "discovered_servers.json"
    r = cli("discover", "--registry", "builtin", "--offline", "--export", str(out), "--json")
    assert r.exit_code == 0 and r.json["data"]["exported"] >= 8
    items = json.loads(out.read_text())
    time_desc = next(i for i in items if i["name"] == "time")
    assert set(time_desc) == {"name", "transport", "command", "args", "env", "tools", "options"}
    assert time_desc["command"] == "uvx" and time_desc["transport"] == "stdio"
    github = next(i for i in items if i["options"]["source"]["name"] == "com.github/github")
    assert github["url"].startswith("https://") and github["options"]["secrets"] == ["GITHUB_TOKEN"]
    assert cli("registry", "add", "exported", str(out)).exit_code == 0
    r = cli("discover", "time", "--registry", "exported", "--json")
    assert r.json["data"]["results"][0]["name"] == "io.github.modelcontextprotocol/time"


# --- the JSON envelope of the registry group -----------------------------------------


def test_registry_subcommands_name_themselves_in_the_envelope(cli: Cli, catalog: Publish) -> None:
    path = str(catalog(team_tool("1.0.0")))
    for args, command, code in [
        (["registry", "add", "team", path], "registry add", 0),
        (["registry", "sync", "team"], "registry sync", 0),
        (["registry", "remove", "team"], "registry remove", 0),
        (["registry", "add", "Bad Id!", path], "registry add", 2),
        (["registry", "add", "x", "neither-url-nor-file"], "registry add", 2),
        (["registry", "add", "only-an-id"], "registry add", 2),
        (["registry", "remove", "nope"], "registry remove", 2),
        (["registry", "sync", "nope"], "registry sync", 2),
        (["registry", "sync", "--timeout", "0"], "registry sync", 2),
    ]:
        r = cli(*args, "--json")
        assert (r.exit_code, r.json["command"]) == (code, command), (args, r.stdout)
        assert r.json["ok"] is (code == 0)
        assert bool(r.json["errors"]) is (code != 0)


def test_registry_sync_failure_is_an_error_in_the_envelope_and_remembered(cli: Cli) -> None:
    offline_only(cli)
    cli("registry", "add", "dead", DEAD)
    r = cli("registry", "sync", "dead", "--json")
    assert (r.exit_code, r.json["command"]) == (3, "registry sync")
    assert r.json["errors"][0]["code"] == "registry_unavailable"
    assert r.json["errors"][0]["message"].startswith("dead: ")
    # The next command does not try again at once; it says when it failed.
    r = cli("discover", "time")
    assert r.exit_code == 0
    assert re.search(r"registry 'dead' was unreachable \d s ago", r.stderr), r.stderr


# --- registry warnings: once per command, with the right age ------------------------


def fail_dead_registry(seconds_ago: float) -> None:
    cache = DiscoveryCache.open(Paths.from_env(None).discovery_cache)
    cache.note_failure("dead", at=time.time() - seconds_ago)
    cache.close()


COMMANDS = [
    ["discover", "time"],
    ["discover", "time", "-r", "dead", "-r", "builtin", "-r", "dead"],
    ["show", "io.github.modelcontextprotocol/time"],
    ["add", "--from-registry", "io.github.modelcontextprotocol/fetch"],
    ["outdated"],
    ["upgrade"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_an_unreachable_registry_is_warned_about_once(
    cli: Cli, config_path: Path, args: list[str]
) -> None:
    offline_only(cli)
    cli("registry", "add", "dead", DEAD)
    # An entry from the dead registry, so that outdated and upgrade consult it.
    ghost = {
        "command": "echo",
        "source": {"registry": "dead", "name": "io.dead/ghost", "version": "1"},
    }
    write_config(config_path, {"ghost": ghost})
    fail_dead_registry(5)
    r = cli(*args)
    found = re.findall(r"registry 'dead' was unreachable (\d+) s ago", r.stderr)
    assert len(found) == 1 and 5 <= int(found[0]) <= 8, r.stderr
    assert r.stderr.count("'dead'") == 1, r.stderr
    r = cli(*args, "--json")
    warnings = [w for w in r.json["warnings"] if "'dead'" in w]
    assert len(warnings) == 1, r.json


def test_the_age_of_a_failure_minutes_ago(cli: Cli) -> None:
    offline_only(cli)
    cli("registry", "add", "dead", DEAD)
    fail_dead_registry(125)
    r = cli("discover", "time")
    assert "registry 'dead' was unreachable 2 min ago; no cached data" in r.stderr


def test_a_command_that_finds_nothing_names_the_unreachable_registry(
    cli: Cli, config_path: Path
) -> None:
    offline_only(cli)
    cli("registry", "add", "dead", DEAD)
    fail_dead_registry(5)
    write_config(config_path, {})
    for args in (["show", "io.dead/thing"], ["add", "--from-registry", "io.dead/thing"]):
        r = cli(*args, "--json")
        assert r.exit_code == 2 and r.json["errors"][0]["code"] == "usage_error"
        assert "'dead'" in r.json["errors"][0]["hint"], r.json


def test_outdated_without_registry_entries_asks_no_registry(cli: Cli, config_path: Path) -> None:
    offline_only(cli)
    cli("registry", "add", "dead", DEAD)
    fail_dead_registry(5)
    write_config(config_path, {"local": {"command": "echo"}})
    r = cli("outdated", "--json")
    assert r.exit_code == 0 and r.json["warnings"] == []


def test_cli_add_again_says_which_flags_were_not_applied(cli: Cli, config_path: Path) -> None:
    offline_only(cli)
    write_config(config_path, {})
    git = "io.github.modelcontextprotocol/git"
    assert cli("add", "--from-registry", git, "-e", "REPOSITORY=/src/app").exit_code == 0
    before = config_path.read_bytes()
    r = cli("add", "--from-registry", git, "-e", "REPOSITORY=/elsewhere", "--disabled", "--json")
    assert r.exit_code == 0 and r.json["data"]["changed"] is False
    assert any("--env, --disabled not applied" in w for w in r.json["warnings"]), r.json
    assert config_path.read_bytes() == before


def clock_record() -> dict[str, Any]:
    pkg = {"registryType": "pypi", "identifier": "clock-mcp", "version": "2.0.0",
           "transport": {"type": "stdio"}}  # fmt: skip
    return make_record("io.team/clock", "2.0.0", title="Clock", packages=[pkg])


def make_stale() -> None:
    """As if every registry was synced long ago (a command without --offline refreshes)."""
    cache = DiscoveryCache.open(Paths.from_env(None).discovery_cache)
    cache.conn.execute("UPDATE registries SET synced_at = 0")
    cache.close()


def fake_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """PATH is one folder holding executables named ``names`` (nothing else is found)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for name in names:
        program = folder / name
        program.write_text("#!/bin/sh\nexit 0\n")
        program.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))


def test_add_from_registry_offline_uses_the_cache_and_never_the_network(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    offline_only(cli)
    write_config(config_path, {})
    fake_runtime(tmp_path, monkeypatch, "uvx")
    reg = Registry([clock_record()])
    with running(reg) as url:
        assert cli("registry", "add", "team", url).exit_code == 0
        assert cli("registry", "sync", "team").exit_code == 0
        make_stale()  # without --offline, the next add would ask the registry first
        asked = len(reg.requests)
        r = cli("add", "--from-registry", "io.team/clock", "--offline", "--timeout", "2", "--json")
        assert r.exit_code == 0, r.stdout
        assert len(reg.requests) == asked  # not one request
    assert r.json["warnings"] == [] and r.json["data"]["registry"] == "team"
    entry = json.loads(config_path.read_text())["clock"]
    assert entry["command"] == "uvx" and entry["args"] == ["clock-mcp==2.0.0"]
    assert entry["timeout"] == 2000  # --timeout 2 is 2 s here too; the file keeps ms
    assert entry["source"] == {"registry": "team", "name": "io.team/clock", "version": "2.0.0"}
    # The registry's port is closed now: --offline still adds from the cache, silently...
    r = cli("add", "clock-2", "--from-registry", "io.team/clock", "--offline", "--json")
    assert r.exit_code == 0 and r.json["warnings"] == [], r.stdout
    assert "clock-2" in json.loads(config_path.read_text())
    # ...where the same add without --offline tries the network (and says it failed).
    r = cli("add", "clock-3", "--from-registry", "io.team/clock", "--json")
    assert r.exit_code == 0, r.stdout
    assert any("registry 'team'" in w and "using cached data" in w for w in r.json["warnings"])


def test_add_from_registry_offline_cache_miss_is_a_clear_error(cli: Cli, config_path: Path) -> None:
    offline_only(cli)
    write_config(config_path, {})
    reg = Registry([clock_record()])
    with running(reg) as url:
        assert cli("registry", "add", "team", url).exit_code == 0
        assert cli("registry", "sync", "team").exit_code == 0
        asked = len(reg.requests)
        r = cli("add", "--from-registry", "io.team/calendar", "--offline", "--json")
        assert len(reg.requests) == asked
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "usage_error"
    error = r.json["errors"][0]
    assert error["message"] == (
        "no server 'io.team/calendar' in the registries' cache (offline: the network was not used)"
    )
    assert "mcpctl registry sync" in error["hint"] and "--offline" in error["hint"]
    # A registry never synced: the hint names it.
    cli("registry", "add", "dead", DEAD)
    r = cli("add", "--from-registry", "io.dead/thing", "--registry", "dead", "--offline")
    assert r.exit_code == 2, r.stderr
    assert "error: no server 'io.dead/thing' in the registries' cache" in r.stderr
    assert "hint: 'dead' has never been synced: 'mcpctl registry sync dead'" in r.stderr
    assert json.loads(config_path.read_text()) == {}
    assert cli("show", "io.team/calendar", "--offline").stderr.startswith(
        "error: no server 'io.team/calendar' in the registries' cache (offline"
    )


def test_add_from_registry_warns_when_the_runtime_is_not_on_path(
    cli: Cli, config_path: Path, catalog: Publish, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("registry", "add", "team", str(catalog(clock_record(), team_tool("1.0.0"))))
    offline_only(cli)
    assert cli("registry", "sync", "team").exit_code == 0
    write_config(config_path, {})
    fake_runtime(tmp_path, monkeypatch, "npx")  # npx is here, uvx is not
    r = cli("add", "--from-registry", "io.team/clock", "--offline")
    assert r.exit_code == 0, r.stderr
    assert "warning: command 'uvx' is not installed here (not found on PATH" in r.stderr
    assert "clock" in json.loads(config_path.read_text())  # a warning, not a refusal
    r = cli("add", "--from-registry", "io.team/tool", "--offline", "--json")
    assert r.exit_code == 0 and r.json["warnings"] == [], r.stdout


def test_offline_goes_with_from_registry(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {})
    r = cli("add", "t", "--offline", "--", "echo")
    assert r.exit_code == 2 and "--offline goes with --from-registry" in r.stderr
    assert json.loads(config_path.read_text()) == {}
