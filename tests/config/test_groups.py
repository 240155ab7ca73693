"""Groups of servers: reading them from entries, selecting by them, editing them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl import ConfigStore, ServerEntry
from mcpctl.config.groups import group_index, group_members
from mcpctl.config.siblings import select_targets
from mcpctl.errors import (
    ConfigInvalidError,
    GroupNotFoundError,
    InvalidEntryError,
    ServerNotFoundError,
)

ENTRIES = {
    "a": ServerEntry(command="a", groups=("work", "daily")),
    "b": ServerEntry(command="b", groups=("work",), enabled=False),
    "c": ServerEntry(command="c"),
    "d": ServerEntry(command="d", groups=("daily", "daily")),
}


def test_group_index_and_members() -> None:
    assert group_index(ENTRIES) == {"daily": ["a", "d"], "work": ["a", "b"]}
    assert group_members(ENTRIES, ["work"]) == ["a", "b"]
    assert group_members(ENTRIES, ["daily", "work"]) == ["a", "b", "d"]  # union, file order
    with pytest.raises(GroupNotFoundError) as caught:
        group_members(ENTRIES, ["wrok"])
    assert caught.value.hint is not None and "did you mean 'work'?" in caught.value.hint
    assert caught.value.exit_code == 2 and caught.value.code == "group_not_found"
    with pytest.raises(GroupNotFoundError, match="no group 'x'"):
        group_members({}, ["x"])


def test_select_targets_by_group() -> None:
    internal = {"i": ServerEntry(command="i")}
    chosen, _ = select_targets(ENTRIES, internal, groups=["work"])
    assert [n for n, _, _ in chosen] == ["a"]  # b is disabled and not named
    chosen, _ = select_targets(ENTRIES, internal, names=["b", "c"], groups=["daily"])
    assert [n for n, _, _ in chosen] == ["b", "c", "a", "d"]
    chosen, _ = select_targets(ENTRIES, internal, groups=["work"], include_disabled=True)
    assert [n for n, _, _ in chosen] == ["a", "b"]
    chosen, _ = select_targets(ENTRIES, internal)
    assert [n for n, _, _ in chosen] == ["i", "a", "c", "d"]  # no group: everything
    with pytest.raises(GroupNotFoundError):
        select_targets(ENTRIES, internal, groups=["nope"])


def test_store_group_edits(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({
        "$schema": "s",
        "a": {"command": "a", "description": "d", "enabled": False, "x-own": 1},
        "b": {"url": "https://h.example/mcp", "tools": {"deny": ["t"]}},
    }))  # fmt: skip
    store = ConfigStore(path, backups=tmp_path / "b")
    assert store.add_to_group("work", ["a", "b", "a"]) == ["a", "b"]
    doc = json.loads(path.read_text())
    assert list(doc["a"]) == ["command", "description", "groups", "enabled", "x-own"]
    assert list(doc["b"]) == ["url", "groups", "tools"]
    assert store.add_to_group("work", ["a"]) == []
    assert store.add_to_group("daily", ["a"]) == ["a"]
    assert json.loads(path.read_text())["a"]["groups"] == ["work", "daily"]
    assert store.remove_from_group("work", ["b"]) == ["b"]
    assert "groups" not in json.loads(path.read_text())["b"]
    assert store.remove_from_group("daily") == ["a"]
    assert json.loads(path.read_text())["a"]["groups"] == ["work"]
    with pytest.raises(GroupNotFoundError):
        store.remove_from_group("daily")
    with pytest.raises(ServerNotFoundError):
        store.add_to_group("work", ["a", "zzz"])
    with pytest.raises(InvalidEntryError):
        store.add_to_group("no good", ["a"])
    path.write_text(json.dumps({"a": {"command": "a", "groups": [1]}, "n": 5}))
    with pytest.raises(ConfigInvalidError):
        store.add_to_group("work", ["a"])
    with pytest.raises(ConfigInvalidError):
        store.add_to_group("work", ["n"])
