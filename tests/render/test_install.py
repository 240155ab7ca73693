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


# --- what a user of render --install reads and gets --------------------------------------


def test_nothing_changed_is_said_so() -> None:
    from mcpctl.render.install import Merged

    assert not Merged("").changed
    assert Merged("", added=["a"]).changed
    assert Merged("", updated=["a"]).changed
    assert Merged("", removed=["a"]).changed
    assert not Merged("", kept=["a"], warnings=["w"]).changed


@pytest.mark.parametrize("current", [None, "", "  \n"])
def test_a_missing_or_blank_file_gets_the_rendering_indented_by_two(current: str | None) -> None:
    merged = merge_install(Shape(), current, json.dumps(RENDERED), managed=set())
    assert merged.text == json.dumps({"mcpServers": RENDERED["mcpServers"]}, indent=2) + "\n"
    assert merged.added == ["time", "new"] and merged.warnings == []


def test_only_the_section_is_rewritten_and_the_rest_kept_byte_for_byte() -> None:
    current = '{\n\t"theme": "dark",  // mine\n\t"n": 1.50,\n\t"mcpServers": {}\n}\n'
    merged = merge_install(Shape(), current, json.dumps(RENDERED), managed=set())
    assert merged.text.startswith(
        '{\n\t"theme": "dark",  // mine\n\t"n": 1.50,\n\t"mcpServers": {\n\t\t"time"'
    )
    assert loads_jsonc(merged.text)["mcpServers"] == RENDERED["mcpServers"]
    same = merge_install(Shape(), merged.text, json.dumps(RENDERED), managed={"time", "new"})
    assert same.text == merged.text and not same.changed


def test_a_file_without_the_section_gets_one_even_with_no_server() -> None:
    merged = merge_install(Shape(), '{"a": 1}', json.dumps({"mcpServers": {}}), managed=set())
    assert json.loads(merged.text) == {"a": 1, "mcpServers": {}}
    kept = merge_install(
        Shape(), '{"mcpServers": {} }', json.dumps({"mcpServers": {}}), managed=set()
    )
    assert kept.text == '{"mcpServers": {} }'


def test_comments_inside_the_section_are_lost_with_a_warning() -> None:
    current = '{\n  "mcpServers": {\n    // mine\n    "a": {"command": "x"}\n  }\n}\n'
    merged = merge_install(Shape(), current, json.dumps(RENDERED), managed=set(), where="f.json")
    assert merged.warnings == [
        "f.json: the comments inside mcpServers were not kept (mcpctl rewrites that part; the "
        "rest of the file is kept as it was)"
    ]
    assert set(loads_jsonc(merged.text)["mcpServers"]) == {"a", "time", "new"}


def test_numbers_are_written_back_as_the_file_wrote_them() -> None:
    from mcpctl.render.install import WrittenNumber, dump_json

    current = '{"big": 1e400, "x": 1.50, "mcpServers": {}}'
    merged = merge_install(Shape(), current, json.dumps(RENDERED), managed=set())
    assert '"big": 1e400' in merged.text and '"x": 1.50' in merged.text
    assert WrittenNumber("1.50") == 1.5 and WrittenNumber("1.50").text == "1.50"
    assert dump_json({"a": [WrittenNumber("2.0"), {"b": WrittenNumber("-1E5")}], "c": 3}, 2) == (
        '{\n  "a": [\n    2.0,\n    {\n      "b": -1E5\n    }\n  ],\n  "c": 3\n}\n'
    )
    assert dump_json(WrittenNumber("7.10"), "\t") == "7.10\n"
    assert dump_json(["é"], 0) == '[\n"é"\n]\n'


def test_a_file_too_deep_to_rewrite_is_refused() -> None:
    from mcpctl.render.install import dump_json

    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(
        UsageError, match=r"^the file is nested too deeply for mcpctl to rewrite it$"
    ):
        dump_json(deep, 2)


def test_where_a_json_file_is_broken_is_said() -> None:
    with pytest.raises(UsageError, match=r"^f\.json:2:2: not valid JSON: Extra data$"):
        merge_install(Shape(), '{"a": 1,\n}}', "{}", managed=set(), where="f.json")
    with pytest.raises(UsageError, match=r"^f\.json is not a JSON object$"):
        merge_install(Shape(), "[1]", "{}", managed=set(), where="f.json")
    with pytest.raises(
        UsageError,
        match=r"^f\.json:1:10: key a is written more than once \(lines 1 and 1\); a rewrite",
    ):
        merge_install(Shape(), '{"a": 1, "a": 2}', "{}", managed=set(), where="f.json")


def test_a_section_of_the_wrong_shape_is_not_replaced() -> None:
    with pytest.raises(
        UsageError, match=r"^f\.json: amp is not an object; mcpctl will not replace it$"
    ):
        merge_install(Shape(section=("amp", "mcpServers")), '{"amp": [1]}', "{}", managed=set(),
                      where="f.json")  # fmt: skip
    with pytest.raises(UsageError, match=r"^f\.json: amp\.mcpServers is not an object; mcpctl"):
        merge_install(Shape(section=("amp", "mcpServers")), '{"amp": {"mcpServers": 1}}', "{}",
                      managed=set(), where="f.json")  # fmt: skip
    with pytest.raises(UsageError, match=r"^f\.json: mcpServers is not an object; mcpctl"):
        merge_install(Shape(), '{"mcpServers": [1]}', json.dumps(RENDERED), managed=set(),
                      where="f.json")  # fmt: skip
    listed = Shape(keyed_lists={"mcpServers": "name"})
    with pytest.raises(UsageError, match=r"^f\.json: mcpServers is not a list; mcpctl will not"):
        merge_install(listed, '{"mcpServers": {}}', json.dumps({"mcpServers": [{"name": "a"}]}),
                      managed=set(), where="f.json")  # fmt: skip


def test_a_list_of_servers_is_merged_by_name_keeping_the_unnamed() -> None:
    listed = Shape(keyed_lists={"mcpServers": "name"})
    current = {"mcpServers": ["odd", {"command": "anon"}, {"name": "theirs"}, {"name": "old", "v": 1},
                             {"name": "gone"}]}  # fmt: skip
    rendered = {"mcpServers": [{"name": "old", "v": 2}, {"name": "new"}, "junk"]}
    merged = merge_install(listed, json.dumps(current), json.dumps(rendered), managed={"gone"})
    assert json.loads(merged.text)["mcpServers"] == [
        "odd", {"command": "anon"}, {"name": "theirs"}, {"name": "old", "v": 2}, {"name": "new"},
    ]  # fmt: skip
    assert (merged.added, merged.updated, merged.removed, merged.kept) == (
        ["new"], ["old"], ["gone"], ["theirs"],
    )  # fmt: skip
    fresh = merge_install(listed, None, json.dumps(rendered), managed=set())
    assert json.loads(fresh.text) == {"mcpServers": [{"name": "old", "v": 2}, {"name": "new"}]}


def test_keyed_lists_beside_the_section() -> None:
    shape = Shape(section=("servers",), keyed_lists={"inputs": "id"})
    rendered = {"servers": {}, "inputs": [{"id": "A"}]}
    merged = merge_install(shape, '{"servers": {}}', json.dumps(rendered), managed=set())
    assert json.loads(merged.text) == {"servers": {}, "inputs": [{"id": "A"}]}
    same = merge_install(shape, '{"servers": {}, "inputs": [{"id": "A"}] }', json.dumps(rendered),
                         managed=set())  # fmt: skip
    assert same.text == '{"servers": {}, "inputs": [{"id": "A"}] }'
    none = merge_install(
        shape, '{"servers": {}, "inputs": 1}', json.dumps({"servers": {}}), managed=set()
    )
    assert json.loads(none.text)["inputs"] == 1
    with pytest.raises(
        UsageError, match=r"^f\.json: inputs is not a list; mcpctl will not replace it$"
    ):
        merge_install(shape, '{"servers": {}, "inputs": {}}', json.dumps(rendered), managed=set(),
                      where="f.json")  # fmt: skip
    odd = merge_install(shape, '{"servers": {}, "inputs": ["x", {"id": "A", "old": 1}]}',
                        json.dumps(rendered), managed=set())  # fmt: skip
    assert json.loads(odd.text)["inputs"] == ["x", {"id": "A"}]


def test_toml_sections_of_the_wrong_shape_and_blank_files() -> None:
    shape = Shape(section=("mcp_servers",), file_format="toml")
    rendered = '[mcp_servers.a]\ncommand = "x"\n'
    with pytest.raises(UsageError, match=r"^f\.toml: mcp_servers is not a table; mcpctl will not"):
        merge_install(shape, "mcp_servers = 1\n", rendered, managed=set(), where="f.toml")
    with pytest.raises(UsageError, match=r"^f\.toml is not valid TOML: "):
        merge_install(shape, "a = 1\na = 2\n", rendered, managed=set(), where="f.toml")
    fresh = merge_install(shape, None, rendered, managed=set())
    import tomllib

    assert tomllib.loads(fresh.text) == {"mcp_servers": {"a": {"command": "x"}}}
    assert fresh.added == ["a"]
    nested = Shape(section=("a", "b"), file_format="toml")
    out = merge_install(nested, "", '[a.b.s]\ncommand = "x"\n', managed=set())
    assert tomllib.loads(out.text) == {"a": {"b": {"s": {"command": "x"}}}}
    with pytest.raises(UsageError, match=r"^f\.toml: a\.b is not a table; "):
        merge_install(nested, "[a]\nb = 2\n", '[a.b.s]\ncommand = "x"\n', managed=set(),
                      where="f.toml")  # fmt: skip


def test_yaml_files_mcpctl_cannot_rewrite() -> None:
    from mcpctl.render.targets import get_target

    goose = get_target("goose")
    rendered = "extensions: {}\n"
    with pytest.raises(UsageError, match=r"^f\.yaml is not valid YAML: "):
        merge_install(goose, "a: [\n", rendered, managed=set(), where="f.yaml")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"^f\.yaml is not a YAML mapping$"):
        merge_install(goose, "- a\n", rendered, managed=set(), where="f.yaml")  # type: ignore[arg-type]
    with pytest.raises(
        UsageError, match=r"^f\.yaml has comments, which a rewrite of YAML would lose$"
    ) as caught:
        merge_install(goose, "a: 1 # mine\n", rendered, managed=set(), where="f.yaml")  # type: ignore[arg-type]
    assert caught.value.hint == "render to a file with -o and copy the servers over by hand"
    assert (
        "extensions" in merge_install(goose, "a: 1#not a comment\n", rendered, managed=set()).text
    )  # type: ignore[arg-type]
    assert merge_install(goose, "~\n", rendered, managed=set()).text.startswith("extensions")  # type: ignore[arg-type]


def test_the_default_place_named_and_lone_surrogates_refused() -> None:
    with pytest.raises(UsageError, match=r"^the client's config:1:8: \\ud800 is a lone surrogate"):
        merge_install(Shape(), '{"a": "\\ud800"}', "{}", managed=set())


def test_an_unchanged_section_is_left_as_written() -> None:
    current = '{"mcpServers": {"a": {"command": "x"}}}'
    rendered = json.dumps({"mcpServers": {"a": {"command": "x"}}})
    merged = merge_install(Shape(), current, rendered, managed={"a"})
    assert merged.text == current and not merged.changed
    nested = '{"amp": {"mcpServers": {"a": {"command": "x"}}}}'
    merged = merge_install(Shape(section=("amp", "mcpServers")), nested,
                           json.dumps({"amp": json.loads(rendered)}), managed={"a"})  # fmt: skip
    assert merged.text == nested


def test_a_compact_file_gets_its_section_indented_by_two_and_nothing_after() -> None:
    merged = merge_install(Shape(), '{"mcpServers": {}}', '{"mcpServers": {"a": 1}}', managed=set())
    assert merged.text == '{"mcpServers": {\n  "a": 1\n}}'


def test_numbers_inside_the_section_are_written_back_as_written() -> None:
    current = '{"mcpServers": {"theirs": {"timeout": 1.50}}}'
    merged = merge_install(Shape(), current, json.dumps(RENDERED), managed=set())
    assert '"timeout": 1.50' in merged.text


def test_every_server_after_an_unchanged_one_is_merged() -> None:
    current = json.dumps({"mcpServers": {"same": {"command": "x"}}})
    rendered = json.dumps({"mcpServers": {"same": {"command": "x"}, "new": {"command": "y"}}})
    merged = merge_install(Shape(), current, rendered, managed=set())
    assert merged.added == ["new"] and merged.updated == []
    assert set(json.loads(merged.text)["mcpServers"]) == {"same", "new"}


def test_a_rendering_is_read_as_json_whatever_it_holds() -> None:
    rendered = json.dumps({"mcpServers": {"a": {"command": "x", "args": ["a #b"]}}})
    merged = merge_install(Shape(), None, rendered, managed=set())
    assert json.loads(merged.text)["mcpServers"]["a"]["args"] == ["a #b"]


def test_replace_drops_foreign_servers_of_lists_and_toml() -> None:
    listed = Shape(keyed_lists={"mcpServers": "name"})
    current = json.dumps({"mcpServers": [{"name": "theirs"}, {"name": "a"}]})
    merged = merge_install(listed, current, json.dumps({"mcpServers": [{"name": "a"}]}),
                           managed=set(), replace=True)  # fmt: skip
    assert json.loads(merged.text)["mcpServers"] == [{"name": "a"}]
    assert merged.removed == ["theirs"]
    shape = Shape(section=("mcp_servers",), file_format="toml")
    merged = merge_install(shape, '[mcp_servers.theirs]\ncommand = "t"\n',
                           '[mcp_servers.a]\ncommand = "x"\n', managed=set(), replace=True)  # fmt: skip
    assert merged.text.count("theirs") == 0 and merged.removed == ["theirs"]


def test_an_empty_keyed_list_adds_nothing() -> None:
    shape = Shape(section=("servers",), keyed_lists={"inputs": "id"})
    merged = merge_install(shape, '{"servers": {}}', json.dumps({"servers": {}, "inputs": []}),
                           managed=set())  # fmt: skip
    assert json.loads(merged.text) == {"servers": {}}


def test_wrong_shapes_deeper_down_are_named_whole() -> None:
    with pytest.raises(UsageError, match=r"^f\.json: a\.b is not an object; mcpctl will not"):
        merge_install(Shape(section=("a", "b")), '{"a": {"b": [1]}}', '{"a": {"b": {}}}',
                      managed=set(), where="f.json")  # fmt: skip
    nested = Shape(section=("a", "b"), file_format="toml")
    with pytest.raises(UsageError, match=r"^f\.toml: a is not a table; "):
        merge_install(nested, "a = 1\n", '[a.b.s]\ncommand = "x"\n', managed=set(),
                      where="f.toml")  # fmt: skip
    current = '{"amp": {"mcpServers": {\n  // mine\n  "t": {}\n}}}'
    merged = merge_install(Shape(section=("amp", "mcpServers")), current,
                           '{"amp": {"mcpServers": {"a": {}}}}', managed=set(), where="f")  # fmt: skip
    assert merged.warnings[0].startswith("f: the comments inside amp.mcpServers were not kept")


def test_a_new_toml_section_is_written_as_its_servers_only() -> None:
    shape = Shape(section=("mcp_servers",), file_format="toml")
    merged = merge_install(shape, None, '[mcp_servers.a]\ncommand = "x"\n', managed=set())
    assert merged.text == '[mcp_servers.a]\ncommand = "x"\n'


def test_files_over_a_readers_limit_are_refused_in_its_words() -> None:
    """Over a limit of the readers, a file is refused for that, not called invalid; what the
    TOML editor cannot read (deeper than its own limit of 100) is."""
    from mcpctl.render.targets import get_target

    goose = get_target("goose")
    with pytest.raises(UsageError) as caught:
        merge_install(goose, "a: " + "[" * 250 + "]" * 250 + "\n", "extensions: {}\n",  # type: ignore[arg-type]
                      managed=set(), where="f.yaml")  # fmt: skip
    assert caught.value.message.startswith("f.yaml: nested deeper than 200 levels (line 1, ")
    shape = Shape(section=("mcp_servers",), file_format="toml")
    rendered = '[mcp_servers.a]\ncommand = "x"\n'
    with pytest.raises(UsageError) as caught:
        merge_install(shape, "a = " + "[" * 250 + "]" * 250 + "\n", rendered, managed=set(),
                      where="f.toml")  # fmt: skip
    assert caught.value.message == "f.toml: nested deeper than 200 levels"
    with pytest.raises(UsageError) as caught:
        merge_install(shape, "a = " + "[" * 150 + "]" * 150 + "\n", rendered, managed=set(),
                      where="f.toml")  # fmt: skip
    assert caught.value.message == (
        "f.toml is not valid TOML: TOML value nested more than 100 levels deep at line 1 col 104"
    )
