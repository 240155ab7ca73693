"""render --pinned: the tools a lock file pinned become each server's allow list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import ServerEntry, ToolFilter
from mcpctl.render import render
from mcpctl.snapshot.files import save_snapshot
from mcpctl.snapshot.model import Definition, ServerState, snapshot_of_config
from tests.conftest import Cli, write_config

GITHUB = ServerEntry(command="npx", args=("-y", "github"))
TIME = ServerEntry(command="uvx", args=("mcp-server-time",))
PINS = {"github": ["create_issue", "search", "delete_repo"]}


def servers(
    target: str, entries: dict[str, ServerEntry], **kw: Any
) -> tuple[dict[str, Any], list[str]]:
    rendered = render(target, entries, environ={}, **kw)
    return json.loads(rendered.text)["mcpServers"], rendered.warnings


def test_mcp_proxy_gets_an_allow_list_of_exactly_the_pinned_tools() -> None:
    found, warnings = servers("mcp-proxy", {"github": GITHUB}, pinned=PINS)
    assert found["github"]["options"]["toolFilter"] == {
        "mode": "allow", "list": ["create_issue", "search", "delete_repo"],
    }  # fmt: skip
    assert warnings == []


def test_the_entrys_own_filter_still_applies() -> None:
    denied = ServerEntry(command="npx", tools=ToolFilter(deny=("delete_*",)))
    found, _ = servers("mcp-proxy", {"github": denied}, pinned=PINS)
    assert found["github"]["options"]["toolFilter"]["list"] == ["create_issue", "search"]
    allowed = ServerEntry(command="npx", tools=ToolFilter(allow=("create_*", "search", "other")))
    found, warnings = servers("mcp-proxy", {"github": allowed}, pinned=PINS)
    # Intersected: "other" was not pinned, so it is not exposed either.
    assert found["github"]["options"]["toolFilter"]["list"] == ["create_issue", "search"]
    assert warnings == []


def test_a_server_without_pins_renders_as_before_with_a_warning() -> None:
    plain, _ = servers("mcp-proxy", {"github": GITHUB, "time": TIME})
    found, warnings = servers("mcp-proxy", {"github": GITHUB, "time": TIME}, pinned=PINS)
    assert found["time"] == plain["time"] and "options" not in found["time"]
    assert warnings == [
        "time: nothing pinned in the lock file: rendered unpinned, every tool exposed"
    ]


def test_a_server_that_pinned_no_tool_exposes_none() -> None:
    found, warnings = servers("mcp-proxy", {"github": GITHUB}, pinned={"github": []})
    assert found["github"]["options"] == {"disabled": True}
    assert any("allows no tool" in w for w in warnings)


def test_fastmcp_tags_exactly_the_pinned_tools() -> None:
    found, warnings = servers("fastmcp", {"github": GITHUB}, pinned=PINS)
    assert found["github"]["tools"] == {name: {"tags": ["mcpctl-allow"]} for name in PINS["github"]}
    assert warnings == []


def test_without_pinned_nothing_changes() -> None:
    assert (
        render("mcp-proxy", {"github": GITHUB}, environ={}).text
        == render("mcp-proxy", {"github": GITHUB}, environ={}, pinned=None).text
    )


# --- the CLI ---------------------------------------------------------------------------


def lock_file(path: Path, entries: dict[str, ServerEntry], tools: dict[str, list[str]]) -> Path:
    snap = snapshot_of_config(entries)
    for name, names in tools.items():
        snap.mcps[name].probe = ServerState(
            tools={t: Definition.of({"name": t, "inputSchema": {"type": "object"}}) for t in names}
        )
    save_snapshot(snap, path)
    return path


def test_render_pinned_reads_the_lock_file(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    write_config(config_path, {"github": {"command": "npx", "args": ["-y", "github"]},
                               "time": {"command": "uvx", "args": ["mcp-server-time"]}})  # fmt: skip
    lock = lock_file(tmp_path / "mcp-lock.json", {"github": GITHUB, "time": TIME},
                     {"github": ["search", "create_issue"]})  # fmt: skip
    r = cli("render", "mcp-proxy", "--pinned", str(lock))
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["mcpServers"]["github"]["options"]["toolFilter"] == {
        "mode": "allow", "list": ["create_issue", "search"],
    }  # fmt: skip
    assert "time: nothing pinned in the lock file" in r.stderr
    out = tmp_path / "config.json"
    r = cli("render", "mcp-proxy", "--pinned", str(lock), "-o", str(out), "--json")
    assert r.exit_code == 0
    assert json.loads(out.read_text())["mcpServers"]["github"]["options"]["toolFilter"]["list"] == [
        "create_issue", "search",
    ]  # fmt: skip
    assert any("time: nothing pinned" in w for w in r.json["warnings"])


def test_a_lock_file_without_probe_data_pins_nothing(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    write_config(config_path, {"github": {"command": "npx"}})
    lock = lock_file(tmp_path / "plain.json", {"github": GITHUB}, {})
    r = cli("render", "mcp-proxy", "--pinned", str(lock))
    assert r.exit_code == 0 and "has no probe data, so it pins no tool" in r.stderr


@pytest.mark.parametrize(("content", "says"), [
    (None, "there is no lock file at"),
    ("{oops", "is not a snapshot: not valid JSON"),
    ('{"mcps": {}}', "is not a snapshot"),
])  # fmt: skip
def test_a_bad_lock_file_is_a_usage_error(
    cli: Cli, config_path: Path, tmp_path: Path, content: str | None, says: str
) -> None:
    write_config(config_path, {"github": {"command": "npx"}})
    lock = tmp_path / "mcp-lock.json"
    if content is not None:
        lock.write_text(content)
    r = cli("render", "mcp-proxy", "--pinned", str(lock))
    assert r.exit_code == 2 and says in r.stderr and "Traceback" not in r.stderr
