"""The lenient loader never raises; the strict validator never crashes."""

from __future__ import annotations

import json
from pathlib import Path

from mcpctl import load_config


def test_missing_file_is_an_empty_config(tmp_path: Path) -> None:
    result = load_config(tmp_path / "nope.json")
    assert result.ok and len(result.config) == 0 and not result.exists


def test_invalid_json_is_empty_with_a_positioned_problem(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{\n "a": }')
    result = load_config(path)
    assert len(result.config) == 0
    assert result.problems[0].code == "config_syntax" and result.problems[0].line == 2


def test_bad_entries_are_skipped_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({
        "$schema": "s", "good": {"command": "x"}, "bad": {"command": 1},
        "also good": {"command": "y"}, "remote": {"url": "https://h"}, "list": [],
    }))  # fmt: skip
    result = load_config(path)
    assert list(result.config.entries) == ["good", "remote"]
    assert result.config.extras == {"$schema": "s"}
    assert {p.path.split(".")[0].split("[")[0] for p in result.problems} >= {"bad", "list"}
    assert any("also good" in p.message for p in result.problems)


def test_unreadable_and_odd_files(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    assert load_config(tmp_path / "dir.json").problems
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe{}")
    assert load_config(tmp_path / "bin.json").problems[0].code == "config_syntax"
    (tmp_path / "bom.json").write_bytes(b'\xef\xbb\xbf{"a": {"command": "x"}}')
    assert list(load_config(tmp_path / "bom.json").config.entries) == ["a"]
    (tmp_path / "empty.json").write_text("")
    assert load_config(tmp_path / "empty.json").problems[0].code == "config_syntax"
    (tmp_path / "deep.json").write_text("[" * 100000)
    assert load_config(tmp_path / "deep.json").problems
    (tmp_path / "digits.json").write_text('{"a": ' + "9" * 5000 + "}")
    assert load_config(tmp_path / "digits.json").problems


def test_duplicate_keys_are_a_warning_for_the_loader(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"a": {"command": "x"}, "a": {"command": "y"}}')
    result = load_config(path)
    assert result.config.entries["a"].command == "y"
    assert result.problems[0].code == "duplicate_key"


def test_default_path_uses_the_environment(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "env.json"
    path.write_text('{"e": {"command": "x"}}')
    monkeypatch.setenv("MCPCTL_CONFIG", str(path))
    assert list(load_config().config.entries) == ["e"]
