"""Continue's and Goose's YAML files: each field rendered and read back, and their warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.errors import UsageError
from mcpctl.render import render
from mcpctl.render.base import Places
from mcpctl.render.targets import get_target

U = "https://x.example/mcp"
PLACEHOLDER_WARNING = (
    "keeps its ${VAR} placeholders as written: Goose does not expand them here "
    "(--secrets launcher runs it through mcpctl run; --secrets inline writes the values)"
)


def goose(entries: dict[str, ServerEntry]) -> tuple[dict[str, Any], list[str]]:
    rendered = render("goose", entries, environ={})
    return yaml.safe_load(rendered.text).get("extensions") or {}, rendered.warnings


def test_a_goose_stdio_extension_with_every_field() -> None:
    entry = ServerEntry(command="run", args=("a",), env={"K": "${K}", "L": "v"}, timeout=3000,
                        description="d", tools=ToolFilter(allow=("x",)))  # fmt: skip
    doc, warnings = goose({"s": entry})
    assert list(doc["s"]) == ["name", "enabled", "type", "cmd", "args", "envs", "env_keys",
                              "timeout", "description", "available_tools"]  # fmt: skip
    assert doc["s"] == {
        "name": "s", "enabled": True, "type": "stdio", "cmd": "run", "args": ["a"],
        "envs": {"L": "v"}, "env_keys": ["K"], "timeout": 3, "description": "d",
        "available_tools": ["x"],
    }  # fmt: skip
    assert warnings == []
    bare, _ = goose({"b": ServerEntry(command="run")})
    assert bare["b"] == {"name": "b", "enabled": True, "type": "stdio", "cmd": "run",
                         "args": [], "envs": {}, "env_keys": []}  # fmt: skip


def test_a_goose_remote_extension_carries_its_auth_in_headers() -> None:
    entry = ServerEntry(url=U, headers={"H": "1"}, auth=AuthConfig("bearer", token="tok"))
    doc, warnings = goose({"r": entry})
    assert doc["r"] == {
        "name": "r", "enabled": True, "type": "streamable_http", "uri": U,
        "headers": {"H": "1", "Authorization": "Bearer tok"}, "envs": {}, "env_keys": [],
    }  # fmt: skip
    assert warnings == []


def test_what_goose_cannot_hold_is_said() -> None:
    doc, warnings = goose({
        "env": ServerEntry(command="run", env={"M": "${OTHER}"}),
        "slow": ServerEntry(command="run", timeout=1001, tools=ToolFilter(deny=("y",))),
        "none": ServerEntry(command="run", tools=ToolFilter(allow=())),
        "sse": ServerEntry(url=U, transport="sse"),
    })  # fmt: skip
    assert set(doc) == {"env", "slow", "none"}
    assert doc["env"]["envs"] == {"M": "${OTHER}"} and doc["env"]["env_keys"] == []
    assert doc["slow"]["timeout"] == 2
    assert "available_tools" not in doc["none"]
    assert warnings == [
        f"env: env.M {PLACEHOLDER_WARNING}",
        "slow: timeout is rounded up to whole seconds for Goose",
        "slow: tools.deny is not written: Goose has no tool deny-list here",
        "none: tools.allow is not written: an empty available_tools means every tool to Goose",
        "sse: transport is SSE: Goose no longer has SSE extensions; the server is left out",
    ]


def goose_parsed(text: str) -> tuple[dict[str, ServerEntry], list[str]]:
    parsed = get_target("goose").parse(text)
    return dict(parsed.entries), parsed.warnings


def test_goose_extensions_read_back() -> None:
    entries, warnings = goose_parsed(
        "extensions:\n"
        "  s: {type: stdio, name: s, bundled: false, display_name: S, cmd: run, args: [a],\n"
        "      envs: {L: v}, env_keys: [K, L], enabled: false, timeout: 5, description: d,\n"
        "      available_tools: [x]}\n"
        "  e: {type: stdio, cmd: run, args: [], envs: {}, available_tools: []}\n"
        f"  r: {{type: streamable_http, uri: '{U}', headers: {{H: '1'}}}}\n"
        f"  o: {{type: sse, uri: '{U}', headers: {{}}}}\n"
    )
    assert entries["s"] == ServerEntry(
        command="run", args=("a",), env={"L": "v", "K": "${K}"}, timeout=5000, description="d",
        enabled=False, tools=ToolFilter(allow=("x",)),
    )  # fmt: skip
    assert entries["e"] == ServerEntry(command="run")
    assert entries["r"] == ServerEntry(url=U, transport="streamable-http", headers={"H": "1"})
    assert entries["o"] == ServerEntry(url=U, transport="sse")
    assert warnings == []


def test_goose_extensions_mcpctl_cannot_take_are_left_out_with_the_reason() -> None:
    entries, warnings = goose_parsed(
        "extensions:\n"
        "  b: {type: builtin, cmd: goosed}\n  p: {type: platform}\n"
        f"  f: {{type: frontend, uri: '{U}'}}\n  i: {{type: inline_python}}\n"
        "  w: {type: weird}\n  n: {type: stdio}\n  t: {cmd: run}\n"
        "  u: {type: streamable_http}\n  x: {type: stdio, cmd: run, other: 1}\n"
    )
    assert list(entries) == ["x"]
    builtin = "is a built-in Goose extension; not imported"
    assert warnings == [
        f"b: {builtin}", f"p: {builtin}", f"f: {builtin}", f"i: {builtin}",
        "w: is a 'weird' extension mcpctl cannot read; not imported",
        "n: is a 'stdio' extension mcpctl cannot read; not imported",
        "t: is a None extension mcpctl cannot read; not imported",
        "u: is a 'streamable_http' extension mcpctl cannot read; not imported",
        "x: other is not imported: a Goose setting mcpctl does not have",
    ]  # fmt: skip


def test_what_goose_keeps_of_an_entry() -> None:
    target: Any = get_target("goose")
    kept = target.expressible(
        ServerEntry(command="r", timeout=2500, tools=ToolFilter(allow=("x",), deny=("y",)))
    )
    assert kept == ServerEntry(command="r", timeout=3000, tools=ToolFilter(allow=("x",)))
    assert target.expressible(ServerEntry(command="r", tools=ToolFilter(allow=()))).tools is None
    assert target.expressible(ServerEntry(url=U, transport="sse")) is None


@pytest.mark.parametrize("client,label", [("goose", "Goose"), ("continue", "Continue")])
def test_a_yaml_file_that_is_empty_or_broken(client: str, label: str) -> None:
    assert get_target(client).parse("").entries == {}
    with pytest.raises(UsageError, match=f"^this is not a {label} YAML file: "):
        get_target(client).parse("a: [")


def test_a_continue_block_keeps_the_templates_other_servers_and_ours_last() -> None:
    template = {"name": "mine", "mcpServers": [
        {"name": "s", "command": "old"}, {"name": "o", "command": "keep"}, "junk",
    ]}  # fmt: skip
    entries = {"s": ServerEntry(url=U, headers={"H": "1"})}
    doc = yaml.safe_load(render("continue", entries, environ={}, template=template).text)
    assert doc == {"name": "mine", "version": "1.0.0", "schema": "v1", "mcpServers": [
        {"name": "o", "command": "keep"}, "junk",
        {"name": "s", "type": "streamable-http", "url": U,
         "requestOptions": {"headers": {"H": "1"}}},
    ]}  # fmt: skip
    bare = yaml.safe_load(render("continue", {"s": ServerEntry(command="r")}, environ={}).text)
    assert bare == {"name": "mcpctl servers", "version": "1.0.0", "schema": "v1",
                    "mcpServers": [{"name": "s", "type": "stdio", "command": "r"}]}  # fmt: skip
    odd = render("continue", {"s": ServerEntry(command="r")}, environ={},
                 template={"mcpServers": {"x": 1}})  # fmt: skip
    assert yaml.safe_load(odd.text)["mcpServers"] == [
        {"name": "s", "type": "stdio", "command": "r"}
    ]


def test_continue_servers_read_from_a_list_or_a_json_block() -> None:
    parsed = get_target("continue").parse(
        "mcpServers:\n  - {command: run}\n  - 3\n"
        f"  - {{name: x, url: '{U}', requestOptions: {{headers: {{A: b}}, timeout: 5}}}}\n"
        "  - {name: y, command: run, requestOptions: 7}\n"
    )
    assert parsed.entries == {
        "server-1": ServerEntry(command="run"),
        "x": ServerEntry(url=U, transport="streamable-http", headers={"A": "b"}),
        "y": ServerEntry(command="run"),
    }
    assert parsed.warnings == [
        "server-2: is not an object; not imported",
        "x: requestOptions.timeout is not imported: a Continue setting mcpctl does not have",
    ]
    block = get_target("continue").parse('{"mcpServers": {"j": {"command": "run"}}}')
    assert block.entries == {"j": ServerEntry(command="run")} and block.warnings == []
    assert get_target("continue").parse("name: x\n").entries == {}


@pytest.mark.parametrize(
    "text,message",
    [
        ("[1]", "this is not a Continue config: expected a mapping at the top"),
        ("mcpServers: 3", "'mcpServers' in a Continue config must be a list of servers"),
    ],
)
def test_a_continue_file_of_the_wrong_shape_is_refused(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        get_target("continue").parse(text)
    assert str(caught.value) == message


def test_continues_project_files_are_ours_then_the_other_block_files(tmp_path: Path) -> None:
    folder = tmp_path / "proj" / ".continue" / "mcpServers"
    folder.mkdir(parents=True)
    for name in ("c.yml", "b.yaml", "a.json", "notes.txt", "mcpctl.yaml", "d.YML"):
        (folder / name).write_text("{}", "utf-8")
    where = Places(home=tmp_path / "home", cwd=tmp_path / "proj", system="linux", environ={})
    found = get_target("continue").locations("project", where)
    assert found == [folder / "mcpctl.yaml", folder / "a.json", folder / "b.yaml", folder / "c.yml"]
    assert get_target("continue").locations("user", where) == [
        tmp_path / "home" / ".continue" / "config.yaml"
    ]


def test_each_placeholder_goose_keeps_as_written_is_warned_by_server_and_field() -> None:
    _, warnings = goose({
        "r": ServerEntry(url="https://${HOST}/mcp", headers={"H": "${TOK}"}),
        "s": ServerEntry(command="${BIN}/run", args=("${A}",)),
    })  # fmt: skip
    remote = PLACEHOLDER_WARNING.replace("--secrets launcher runs it through mcpctl run; ", "")
    assert warnings == [
        f"r: url {remote}", f"r: headers.H {remote}",
        f"s: command {PLACEHOLDER_WARNING}", f"s: args {PLACEHOLDER_WARNING}",
    ]  # fmt: skip


def test_goose_keeps_a_disabled_server_and_rounds_a_timeout_up_to_the_second() -> None:
    target: Any = get_target("goose")
    kept = target.expressible(ServerEntry(command="r", timeout=1001, enabled=False))
    assert kept == ServerEntry(command="r", timeout=2000, enabled=False)
    assert target.expressible(ServerEntry(command="r", timeout=1000)).timeout == 1000
