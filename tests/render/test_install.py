"""render --install's merge: only the MCP section, only mcpctl's servers, nothing else."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from mcpctl.errors import UsageError
from mcpctl.render.base import Parsed, Places, Rendered, RenderRequest, Scope
from mcpctl.render.install import merge_install
from mcpctl.render.jsonc import loads_jsonc, strip_jsonc


@dataclass
class Shape:
    """Only the shape of a client's file matters to the merge."""

    section: tuple[str, ...] = ("mcpServers",)
    file_format: Literal["json", "toml"] = "json"
    keyed_lists: Mapping[str, str] = field(default_factory=dict)
    name: str = "shape"
    family: Literal["client"] = "client"
    description: str = ""

    def render(self, request: RenderRequest) -> Rendered:
        raise NotImplementedError

    def parse(self, text: str) -> Parsed:
        raise NotImplementedError

    def locations(self, scope: Scope, places: Places) -> list[Path]:
        return []


CLIENT_FILE = {
    "theme": "dark",
    "mcpServers": {
        "theirs": {"command": "their-server"},
        "time": {"command": "old-time"},
        "gone": {"command": "was-ours"},
    },
    "telemetry": {"enabled": False},
}
RENDERED = {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]},
                           "new": {"url": "https://x.example/mcp"}}}  # fmt: skip


def test_merge_changes_only_managed_servers_and_keeps_everything_else() -> None:
    current = json.dumps(CLIENT_FILE, indent=4) + "\n"
    merged = merge_install(Shape(), current, json.dumps(RENDERED), managed={"time", "new", "gone"})
    doc = json.loads(merged.text)
    assert list(doc) == ["theme", "mcpServers", "telemetry"]
    assert doc["theme"] == "dark" and doc["telemetry"] == {"enabled": False}
    assert doc["mcpServers"] == {
        "theirs": {"command": "their-server"},
        "time": {"command": "uvx", "args": ["mcp-server-time"]},
        "new": {"url": "https://x.example/mcp"},
    }
    assert (merged.added, merged.updated, merged.removed, merged.kept) == (
        ["new"], ["time"], ["gone"], ["theirs"],
    )  # fmt: skip
    assert merged.text.startswith('{\n    "theme"'), "the file's own indentation is kept"


def test_replace_drops_foreign_servers_and_nothing_changed_is_reported() -> None:
    current = json.dumps(CLIENT_FILE)
    merged = merge_install(Shape(), current, json.dumps(RENDERED), managed={"time"}, replace=True)
    assert set(json.loads(merged.text)["mcpServers"]) == {"time", "new"}
    assert sorted(merged.removed) == ["gone", "theirs"]
    again = merge_install(Shape(), merged.text, json.dumps(RENDERED), managed={"time", "new"})
    assert not again.changed and again.text == merged.text


def test_missing_file_and_nested_section_are_created() -> None:
    shape = Shape(section=("amp", "mcpServers"))
    rendered = {"amp": {"mcpServers": {"a": {"command": "x"}}}}
    merged = merge_install(shape, None, json.dumps(rendered), managed={"a"})
    assert json.loads(merged.text) == rendered and merged.added == ["a"]


def test_keyed_lists_are_merged_by_id() -> None:
    shape = Shape(section=("servers",), keyed_lists={"inputs": "id"})
    current = {"inputs": [{"id": "OTHER", "type": "promptString"},
                          {"id": "TOKEN", "description": "old"}], "servers": {}}  # fmt: skip
    rendered = {"servers": {"s": {"type": "stdio", "command": "x"}},
                "inputs": [{"id": "TOKEN", "description": "new"}, {"id": "KEY"}]}  # fmt: skip
    doc = json.loads(merge_install(shape, json.dumps(current), json.dumps(rendered),
                                   managed={"s"}).text)  # fmt: skip
    assert doc["inputs"] == [
        {"id": "OTHER", "type": "promptString"}, {"id": "TOKEN", "description": "new"},
        {"id": "KEY"},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("current", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"a": [' + "[" * 250 + "]" * 250 + "]}", "f.json:1:207: nested deeper than 200 levels"),
        ("[1, 2]", "not a JSON object"),
        ('{"mcpServers": []}', "mcpServers is not an object"),
    ],
)
def test_files_a_rewrite_would_damage_are_refused(current: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        merge_install(Shape(), current, json.dumps(RENDERED), managed=set(), where="f.json")


def test_toml_keeps_comments_and_foreign_tables() -> None:
    shape = Shape(section=("mcp_servers",), file_format="toml")
    current = (
        '# my codex settings\nmodel = "o3"  # the best\n\n'
        '[mcp_servers.theirs]\ncommand = "theirs"\n\n'
        '[mcp_servers.time]\ncommand = "old"\n'
    )
    rendered = '[mcp_servers.time]\ncommand = "uvx"\nargs = ["mcp-server-time"]\n'
    merged = merge_install(shape, current, rendered, managed={"time"})
    assert "# my codex settings" in merged.text and "# the best" in merged.text
    import tomllib

    doc: dict[str, Any] = tomllib.loads(merged.text)
    assert doc["model"] == "o3"
    assert doc["mcp_servers"] == {
        "theirs": {"command": "theirs"},
        "time": {"command": "uvx", "args": ["mcp-server-time"]},
    }
    assert merged.updated == ["time"] and merged.kept == ["theirs"]
    again = merge_install(shape, merged.text, rendered, managed={"time"})
    assert not again.changed


def test_toml_syntax_error_is_a_usage_error() -> None:
    shape = Shape(section=("mcp_servers",), file_format="toml")
    with pytest.raises(UsageError, match="not valid TOML"):
        merge_install(shape, "[oops", "", managed=set())


def test_jsonc_comments_and_trailing_commas() -> None:
    text = '{\n  // a comment\n  "url": "http://a//b", /* block\n */ "list": [1, 2,],\n}'
    assert loads_jsonc(text) == {"url": "http://a//b", "list": [1, 2]}
    assert strip_jsonc(text).count("\n") == text.count("\n"), "line numbers are kept"
    assert loads_jsonc('{"s": "/* not a comment */"}') == {"s": "/* not a comment */"}
    with pytest.raises(ValueError):
        loads_jsonc("{oops")


def test_yaml_clients_list_and_map_sections() -> None:
    from mcpctl.config.model import ServerEntry
    from mcpctl.render.readers import load_yaml
    from mcpctl.render.targets import get_target
    from mcpctl.render.yamltext import dump_yaml

    entries = {"time": ServerEntry(command="uvx", args=("mcp-server-time",))}
    for name, servers in (("continue", "mcpServers"), ("goose", "extensions")):
        target = get_target(name)
        rendered = target.render(RenderRequest(entries)).text
        if name == "continue":
            current = {"name": "me", "mcpServers": [{"name": "theirs", "command": "x"},
                                                    {"name": "time", "command": "old"}]}  # fmt: skip
        else:
            current = {"GOOSE_MODEL": "m", "extensions": {"theirs": {"type": "builtin"},
                                                          "time": {"cmd": "old"}}}  # fmt: skip
        merged = merge_install(target, dump_yaml(current), rendered, managed={"time"})  # type: ignore[arg-type]
        assert (merged.updated, merged.kept) == (["time"], ["theirs"]), name
        doc = load_yaml(merged.text)
        assert next(iter(doc)) == next(iter(current)), "other keys kept, in order"
        section = doc[servers]
        names = [s["name"] for s in section] if isinstance(section, list) else list(section)
        assert sorted(names) == ["theirs", "time"]
        assert target.parse(merged.text).entries["time"].command == "uvx"
        with pytest.raises(UsageError, match="comments"):
            merge_install(target, "# mine\n" + dump_yaml(current), rendered, managed=set())  # type: ignore[arg-type]
