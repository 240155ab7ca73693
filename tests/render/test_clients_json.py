"""The plain JSON clients: where their files are, and Zed's own forms of a context server."""

from __future__ import annotations

import json
from pathlib import Path

from mcpctl.config.model import ServerEntry
from mcpctl.render.base import Places
from mcpctl.render.clients_json import _cwd, _home, scoped
from mcpctl.render.targets import get_target


def test_a_scoped_location_gives_the_user_or_the_project_files(tmp_path: Path) -> None:
    where = Places(home=tmp_path / "home", cwd=tmp_path / "proj", system="linux", environ={})
    both = scoped(_home(".tool", "mcp.json"), _cwd(".tool", "mcp.json"))
    assert both("user", where) == [tmp_path / "home" / ".tool" / "mcp.json"]
    assert both("project", where) == [tmp_path / "proj" / ".tool" / "mcp.json"]
    user_only = scoped(_home("settings.json"))
    assert user_only("user", where) == [tmp_path / "home" / "settings.json"]
    assert user_only("project", where) == []


def zed(servers: dict[str, object]) -> tuple[dict[str, ServerEntry], list[str]]:
    parsed = get_target("zed").parse(json.dumps({"context_servers": servers}))
    return dict(parsed.entries), parsed.warnings


def test_a_zed_server_of_its_own_is_imported_without_a_word_about_its_source() -> None:
    entries, warnings = zed({
        "custom": {"source": "custom", "command": "run"},
        "bare": {"command": "run"},
        "other": {"source": "extension", "command": "run"},
    })  # fmt: skip
    assert set(entries) == {"custom", "bare", "other"}
    assert warnings == ["other: source is not imported: a Zed setting mcpctl does not have"]


def test_zeds_older_command_object_is_read_whole() -> None:
    entries, warnings = zed({
        "old": {"command": {"path": "npx", "args": ["-y", "pg-mcp"], "env": {"PG": "x"}}},
        "no-path": {"command": {"args": ["x"]}},
    })  # fmt: skip
    old = entries["old"]
    assert (old.command, old.args, old.env) == ("npx", ("-y", "pg-mcp"), {"PG": "x"})
    assert "no-path" not in entries
    assert warnings == ["no-path.command: expected a string, got null", "no-path: not imported"]
