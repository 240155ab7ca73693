"""The completion's cheap readers agree with the library they stand in for."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mcpctl.completion import sources
from mcpctl.completion.toolcache import MAX_CONFIGS, remember_tools
from mcpctl.paths import Paths
from mcpctl.registry.sources import load_sources
from tests.conftest import write_config


@pytest.mark.parametrize("kind", ["config", "cache", "state"])
@pytest.mark.parametrize(
    "env",
    [
        {},
        {"XDG_CONFIG_HOME": "/x/conf", "XDG_CACHE_HOME": "/x/cache", "XDG_STATE_HOME": "/x/st"},
        {"XDG_CONFIG_HOME": "relative/conf", "XDG_CACHE_HOME": "", "XDG_STATE_HOME": " "},
        {"HOME": "/home/someone"},
    ],
)
def test_user_dirs_are_where_paths_puts_them(
    monkeypatch: pytest.MonkeyPatch, kind: str, env: dict[str, str]
) -> None:
    monkeypatch.delenv("MCPCTL_HOME")
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert sources.user_dir(kind) == str(getattr(Paths(), f"{kind}_dir"))
    monkeypatch.setenv("MCPCTL_HOME", "~/somewhere")
    assert sources.user_dir(kind) == str(getattr(Paths.from_env(), f"{kind}_dir"))


def test_the_config_is_found_as_paths_finds_it(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sources.config_path() == str(Paths.from_env().config)  # the user config dir's
    deeper = isolated / "a" / "b"
    deeper.mkdir(parents=True)
    write_config(isolated / "external-mcps.json", {})
    monkeypatch.chdir(deeper)
    assert (
        sources.config_path()
        == str(Paths.from_env().config)
        == str(isolated / "external-mcps.json")
    )
    monkeypatch.setenv("MCPCTL_CONFIG", "~/elsewhere.json")
    assert sources.config_path() == str(Paths.from_env().config)
    assert sources.config_path("rel.json") == str(Paths.from_env("rel.json").config.absolute())
    assert sources.config_path("") == str(Paths.from_env("").config)


def test_registry_ids_are_load_sources_ids(tmp_path: Path) -> None:
    path = Paths.from_env().registries
    assert sources.registries() == [s.id for s in load_sources(path)]
    path.parent.mkdir(parents=True)
    team = tmp_path / "team.json"
    path.write_text(json.dumps({"registries": [
        {"id": "team", "file": str(team)}, {"id": "builtin", "removed": True},
        {"id": "acme", "url": "https://r.example"}, {"id": "junk"}, "junk", {"id": 3},
    ]}))  # fmt: skip
    assert (
        sources.registries() == [s.id for s in load_sources(path)] == ["official", "team", "acme"]
    )
    path.write_text("{broken")
    assert sources.registries() == ["official", "builtin"]


def test_servers_skip_what_the_loader_skips(config_path: Path) -> None:
    write_config(config_path, {"ok": {"command": "x"}, "$schema": "s", "bad name": {"command": "x"},
                               "notanentry": "x", "remote": {"url": "https://h"}})  # fmt: skip
    assert [n for n, _ in sources.servers(str(config_path))] == ["ok", "remote"]
    assert [n for n, _ in sources.servers(str(config_path), "server-remote")] == ["remote"]
    write_config(config_path, [1, 2])
    assert sources.servers(str(config_path)) == []


def names(pairs: list[tuple[str, str]]) -> list[str]:
    return [name for name, _ in pairs]


def test_the_tool_cache(config_path: Path, tmp_path: Path) -> None:
    cache = Paths.from_env().cache_dir
    config = str(config_path)
    remember_tools(cache, config_path, {"a": ["t1", "t2", "t1"], "b": []})
    remember_tools(cache, config_path, {"b": ["u"]})  # merged: a is kept
    assert names(sources.tool_names(config, "a")) == ["t1", "t2"]
    assert names(sources.tool_names(config, "b")) == ["u"]
    # Keyed by the config file: another project's "a" is another server.
    other = tmp_path / "other.json"
    remember_tools(cache, other, {"a": ["x"]})
    assert names(sources.tool_names(config, "a")) == ["t1", "t2"]
    assert names(sources.tool_names(str(other), "a")) == ["x"]
    for i in range(MAX_CONFIGS + 5):
        remember_tools(cache, tmp_path / f"c{i}.json", {"s": ["t"]})
    data = json.loads((cache / sources.TOOLS_CACHE).read_text())
    assert len(data["configs"]) == MAX_CONFIGS
    assert str(tmp_path / f"c{MAX_CONFIGS + 4}.json") in data["configs"]


def test_a_damaged_tool_cache_is_started_over(config_path: Path) -> None:
    cache = Paths.from_env().cache_dir
    cache.mkdir(parents=True)
    (cache / sources.TOOLS_CACHE).write_text('{"configs": [')
    assert sources.tool_names(str(config_path), "a") == []
    remember_tools(cache, config_path, {"a": ["t"]})
    assert names(sources.tool_names(str(config_path), "a")) == ["t"]


def test_an_unwritable_tool_cache_is_left_alone(config_path: Path, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    remember_tools(not_a_dir, config_path, {"a": ["t"]})  # no error, nothing written
    assert not_a_dir.read_text() == ""


def test_a_stale_listing_says_how_old_it_is(config_path: Path) -> None:
    cache = Paths.from_env().cache_dir
    remember_tools(cache, config_path, {"old": ["t"], "fresh": ["u"], "quiet": ["v"]},
                   {"old": 60_000, "fresh": 86_400_000, "quiet": None})  # fmt: skip
    path = cache / sources.TOOLS_CACHE
    data = json.loads(path.read_text())
    servers = data["configs"][os.path.realpath(config_path)]
    for server in servers.values():
        server["listed_at"] -= 3 * 3600  # listed three hours ago
    servers["quiet"]["listed_at"] += 3 * 3600 - 10  # ten seconds ago, no lifetime said
    path.write_text(json.dumps(data))
    assert sources.tool_names(str(config_path), "old") == [("t", "listed 3 h ago")]
    assert sources.tool_names(str(config_path), "fresh") == [("u", "")]  # a day's lifetime
    assert sources.tool_names(str(config_path), "quiet") == [("v", "")]  # not yet old news


def test_the_first_format_of_the_tool_cache_is_read(config_path: Path) -> None:
    cache = Paths.from_env().cache_dir
    cache.mkdir(parents=True)
    key = os.path.realpath(config_path)
    (cache / sources.TOOLS_CACHE).write_text(json.dumps({"configs": {key: {"a": ["t1"]}}}))
    assert sources.tool_names(str(config_path), "a") == [("t1", "")]


def test_the_tool_cache_survives_odd_names(config_path: Path) -> None:
    cache = Paths.from_env().cache_dir
    remember_tools(cache, config_path, {"a": ["caf\u00e9", "lone\udc80"]})
    assert names(sources.tool_names(str(config_path), "a")) == ["caf\u00e9", "lone\udc80"]


def test_a_config_that_is_no_regular_file_completes_nothing_and_never_blocks(
    tmp_path: Path,
) -> None:
    """A FIFO named like the config (a cloned repository's) must not hang a tab press."""
    fifo = tmp_path / "external-mcps.json"
    os.mkfifo(fifo)
    assert sources.servers(str(fifo)) == []
    assert sources.servers(str(tmp_path)) == []  # a folder


def test_a_config_over_the_cap_completes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "external-mcps.json"
    write_config(config, {"time": {"command": "uvx", "args": ["mcp-server-time"]}})
    assert [name for name, _ in sources.servers(str(config))] == ["time"]
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", config.stat().st_size - 1)
    assert sources.servers(str(config)) == []
