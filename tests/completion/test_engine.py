"""What each position of a command line completes to (the engine, without a shell)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mcpctl.completion.engine import load_tree
from mcpctl.completion.toolcache import remember_tools
from mcpctl.paths import Paths
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.registry.records import Record
from mcpctl.render.targets import TARGET_MODULES
from tests.completion.conftest import ask, offered
from tests.conftest import write_config


def test_commands_and_subcommands() -> None:
    top = offered("mcpctl ")
    assert top == load_tree()["commands"][""]["commands"]
    assert {"add", "list", "call", "registry", "snapshot", "completion"} <= set(top)
    assert offered("mcpctl re") == ["remove", "registry", "render", "report"]
    assert offered("mcpctl snapshot ") == ["save", "diff"]
    assert offered("mcpctl registry s") == ["sync"]
    assert offered("mcpctl completion ") == ["show", "install"]
    assert offered("mcpctl nosuchcommand ") == []


def test_commands_come_with_their_summary() -> None:
    described = dict(ask("mcpctl ").candidates)
    assert described["list"].startswith("List the configured servers")
    assert all(described.values())
    assert offered("mcpctl completion install ") == ["bash", "zsh", "fish"]


def test_options_after_a_dash() -> None:
    assert offered("mcpctl list --") == ["--enabled", "--group", "--config", "--json",
                                         "--quiet", "--verbose", "--help"]  # fmt: skip
    assert "--version" in offered("mcpctl --")
    assert "-q" in offered("mcpctl list -")
    assert offered("mcpctl snapshot diff --for") == ["--format"]
    assert "--arg" in offered("mcpctl call time now --")


def test_an_option_given_once_is_not_offered_again() -> None:
    assert "--json" not in offered("mcpctl list --json --")
    assert "--quiet" not in offered("mcpctl list -q --")
    # Repeatable ones are.
    assert "--env" in offered("mcpctl add x --env A=1 --")


def test_option_values() -> None:
    assert offered("mcpctl add x --transport ") == ["streamable-http", "sse"]
    assert offered("mcpctl snapshot diff --format s") == ["sarif"]
    assert offered("mcpctl health --scope ") == ["all", "internal", "external"]
    assert offered("mcpctl import x --on-conflict r") == ["rename"]
    assert offered("mcpctl discover --package-type n") == ["npm", "nuget"]
    assert offered("mcpctl add x --timeout ") == []  # free text


def test_inline_option_values() -> None:
    reply = ask("mcpctl add x --transport=s")
    assert [v for v, _ in reply.candidates] == ["--transport=streamable-http", "--transport=sse"]
    assert ask("mcpctl list --json=").candidates == []  # a flag takes no value


def test_paths_are_left_to_the_shell() -> None:
    reply = ask("mcpctl --config ./ex")
    assert (reply.mode, reply.partial, reply.prefix) == ("files", "./ex", "")
    reply = ask("mcpctl undo --file=bac")
    assert (reply.mode, reply.partial, reply.prefix) == ("files", "bac", "--file=")
    assert ask("mcpctl validate --internal-root ").mode == "dirs"
    assert ask("mcpctl add srv -- ").mode == "files"  # the server's command


def test_server_names(config: Path) -> None:
    assert offered("mcpctl get ") == ["time", "github", "files"]
    assert offered("mcpctl remove t") == ["time"]
    assert offered("mcpctl remove time ") == ["github", "files"]  # not twice
    assert offered("mcpctl health ") == ["time", "github", "files"]
    assert offered("mcpctl enable ") == ["files"]
    assert offered("mcpctl disable ") == ["time", "github"]
    assert offered("mcpctl render claude-code --only ") == ["time", "github", "files"]
    assert dict(ask("mcpctl get ").candidates)["time"] == "What time it is"


def test_group_names(tmp_path: Path, config_path: Path) -> None:
    write_config(config_path, {
        "time": {"command": "uvx", "groups": ["work", "daily"]},
        "github": {"url": "https://h.example/mcp", "groups": ["work"]},
        "files": {"command": "npx", "groups": "not a list"},
        "odd": {"command": "x", "groups": ["bad name", 3, "daily"]},
    })  # fmt: skip
    assert offered("mcpctl group ") == ["add", "remove", "list"]
    assert offered("mcpctl list --group ") == ["daily", "work"]
    assert dict(ask("mcpctl list --group ").candidates)["work"] == "time, github"
    for command in ("health", "tools", "render claude-code", "snapshot save", "snapshot diff",
                    "report"):  # fmt: skip
        assert offered(f"mcpctl {command} --group w") == ["work"], command
    assert offered("mcpctl render cursor --group=d") == ["--group=daily"]
    assert offered("mcpctl group add ") == ["daily", "work"]
    assert offered("mcpctl group add work ") == ["time", "github", "files", "odd"]
    assert offered("mcpctl group remove ") == ["daily", "work"]
    assert offered("mcpctl group remove work ") == ["time", "github"]  # its members only
    assert offered("mcpctl group remove work time ") == ["github"]
    assert offered("mcpctl group remove daily ") == ["time", "odd"]


def test_auth_takes_a_server_or_a_subcommand(config: Path) -> None:
    assert offered("mcpctl auth ") == ["status", "logout", "github"]
    assert offered("mcpctl auth logout ") == ["github"]
    assert "--no-browser" in offered("mcpctl auth github --")


def test_the_config_named_on_the_line_is_read(config: Path, tmp_path: Path) -> None:
    other = write_config(tmp_path / "other.json", {"elsewhere": {"command": "x"}})
    assert offered(f"mcpctl --config {other} get ") == ["elsewhere"]
    assert offered(f"mcpctl get --config={other} ") == ["elsewhere"]
    os.environ["MCPCTL_CONFIG"] = str(other)
    try:
        assert offered("mcpctl get ") == ["elsewhere"]
    finally:
        del os.environ["MCPCTL_CONFIG"]


def test_no_config_offers_nothing() -> None:
    assert offered("mcpctl get ") == []


def test_secret_names_are_the_configs_placeholders(config: Path) -> None:
    assert offered("mcpctl secret set ") == ["DOCS_DIR", "FILES_KEY", "GITHUB_TOKEN"]
    assert dict(ask("mcpctl secret rm G").candidates) == {"GITHUB_TOKEN": "used by github"}


def test_tool_names_come_from_the_last_probe(config: Path) -> None:
    assert offered("mcpctl call time ") == []  # never probed: nothing, and no server started
    paths = Paths.from_env()
    remember_tools(paths.cache_dir, paths.config, {"time": ["get_current_time", "convert_time"]})
    assert offered("mcpctl call time ") == ["get_current_time", "convert_time"]
    assert offered("mcpctl call time c") == ["convert_time"]
    assert offered("mcpctl call github ") == []
    assert offered("mcpctl call time get_current_time ") == []


def test_tool_names_from_a_probed_snapshot(config: Path) -> None:
    snapshot = Paths.from_env().snapshot
    snapshot.parent.mkdir(parents=True)
    snapshot.write_text(json.dumps({"timestamp": "t", "format": 1, "mcps": [
        {"name": "github", "type": "external", "probe": {"tools": [
            {"name": "search_repositories", "fingerprint": "x", "definition": {}},
            {"name": "get_me", "fingerprint": "y", "definition": {}},
        ]}},
    ]}))  # fmt: skip
    assert offered("mcpctl call github ") == ["search_repositories", "get_me"]


def test_render_targets() -> None:
    assert offered("mcpctl render ") == list(TARGET_MODULES)
    assert offered("mcpctl render cl") == ["claude-desktop", "claude-code", "cline"]
    assert offered("mcpctl watch --render z") == ["zed"]
    assert "toolhive" not in offered("mcpctl import ")  # import reads clients only
    assert "claude-desktop" in offered("mcpctl import ")


def test_registry_ids(tmp_path: Path) -> None:
    assert offered("mcpctl registry sync ") == ["official", "builtin"]
    registries = Paths.from_env().registries
    registries.parent.mkdir(parents=True)
    registries.write_text(json.dumps({"registries": [
        {"id": "team", "file": str(tmp_path / "team.json")}, {"id": "official", "removed": True},
    ]}))  # fmt: skip
    assert offered("mcpctl discover --registry ") == ["builtin", "team"]
    assert offered("mcpctl registry remove t") == ["team"]


def record(name: str, version: str, latest: bool = True) -> Record:
    return Record(name, version, "active", latest, "2026-01-01T00:00:00Z",
                  {"name": name, "version": version, "description": "d"})  # fmt: skip


def test_registry_server_names_from_the_discovery_cache() -> None:
    assert offered("mcpctl show io.") == []  # no cache yet: nothing, and nothing fetched
    cache = DiscoveryCache.open(Paths.from_env().discovery_cache)
    cache.replace("official", [
        record("io.github.acme/time", "1.0.0", latest=False), record("io.github.acme/time", "1.1.0"),
        record("io.github.acme/tickets", "0.3.0"), record("com.example/weather", "2.0.0"),
    ])  # fmt: skip
    cache.close()
    assert offered("mcpctl show io.github.acme/ti") == [
        "io.github.acme/tickets",
        "io.github.acme/time",
    ]
    assert offered("mcpctl show io.github.acme/time@") == ["io.github.acme/time@1.0.0",
                                                          "io.github.acme/time@1.1.0"]  # fmt: skip
    assert offered("mcpctl add --from-registry com") == ["com.example/weather"]


def test_a_damaged_discovery_cache_offers_nothing() -> None:
    path = Paths.from_env().discovery_cache
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database")
    assert offered("mcpctl show io.") == []


@pytest.mark.parametrize("line", ["mcpctl get ", "mcpctl call time ", "mcpctl secret set "])
def test_a_broken_config_offers_nothing(config_path: Path, line: str) -> None:
    config_path.write_text("{not json")
    assert offered(line) == []


def test_health_fail_on_offers_the_states() -> None:
    assert offered("mcpctl health --fail-on ") == [
        "degraded", "needs_auth", "unhealthy", "unavailable",
    ]  # fmt: skip
    assert offered("mcpctl health --fail-on un") == ["unhealthy", "unavailable"]
    # Repeatable: offered again after a first value.
    assert "degraded" in offered("mcpctl health --fail-on needs_auth --fail-on ")


def test_health_fail_on_choices_are_the_librarys_failing_states() -> None:
    from mcpctl.cli.health import FAIL_ON_CHOICES
    from mcpctl.completion.generate import KINDS
    from mcpctl.probe.health import FAILING, HealthStatus

    assert [s.value for s in HealthStatus if s in FAILING] == FAIL_ON_CHOICES
    assert KINDS[("health", "fail_on")] == FAIL_ON_CHOICES
