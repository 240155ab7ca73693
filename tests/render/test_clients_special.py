"""Claude Desktop's mcp-remote bridge, VS Code's inputs and opencode's servers, both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.render.base import Places, RenderRequest
from mcpctl.render.targets import get_target

U = "https://mcp.example.com/mcp"
BRIDGE = (
    "r: url is reached through the mcp-remote bridge (npx -y mcp-remote): Claude Desktop's "
    "file holds local servers only (a connector in its settings is the other way)"
)


def render(client: str, entries: dict[str, ServerEntry], **kw: Any) -> Any:
    kw.setdefault("environ", {})
    return get_target(client).render(RenderRequest(entries, **kw))


def parse(client: str, doc: Any) -> tuple[dict[str, ServerEntry], list[str]]:
    parsed = get_target(client).parse(json.dumps(doc))
    return dict(parsed.entries), parsed.warnings


def bridge(args: list[Any], **more: Any) -> tuple[dict[str, ServerEntry], list[str]]:
    return parse("claude-desktop", {"mcpServers": {"b": {"command": "npx", "args": args, **more}}})


# --- Claude Desktop -------------------------------------------------------------------


def test_claude_desktop_files_on_each_system(tmp_path: Path) -> None:
    target = get_target("claude-desktop")

    def where(system: str, **environ: str) -> list[Path]:
        return target.locations("user", Places(tmp_path, tmp_path / "p", system, environ))

    claude = "claude_desktop_config.json"
    assert where("darwin") == [tmp_path / "Library" / "Application Support" / "Claude" / claude]
    assert where("win32") == [tmp_path / "AppData" / "Roaming" / "Claude" / claude]
    assert where("win32", APPDATA=str(tmp_path / "ad")) == [tmp_path / "ad" / "Claude" / claude]
    assert where("linux") == [tmp_path / ".config" / "Claude" / claude]
    assert where("linux", XDG_CONFIG_HOME=str(tmp_path / "x")) == [
        tmp_path / "x" / "Claude" / claude
    ]
    assert target.locations("project", Places(tmp_path, tmp_path / "p", "linux", {})) == []


def test_a_local_server_is_written_as_it_is_for_claude_desktop() -> None:
    rendered = render("claude-desktop", {"l": ServerEntry(command="run", args=("a",))})
    assert json.loads(rendered.text) == {"mcpServers": {"l": {"command": "run", "args": ["a"]}}}
    assert rendered.warnings == []


def test_an_sse_server_with_oauth_is_bridged_with_each_loss_warned() -> None:
    entry = ServerEntry(
        url=U, transport="sse", timeout=5, headers={"X-A": "1"}, auth=AuthConfig("oauth"),
        tools=ToolFilter(allow=("a",), deny=("b", "c")),
    )  # fmt: skip
    rendered = render("claude-desktop", {"r": entry})
    assert json.loads(rendered.text)["mcpServers"]["r"] == {
        "command": "npx",
        "args": ["-y", "mcp-remote", U, "--header", "X-A:1", "--transport", "sse-only",
                 "--ignore-tool", "b", "--ignore-tool", "c"],
    }  # fmt: skip
    assert rendered.warnings == [
        BRIDGE,
        "r: auth is OAuth: mcp-remote signs in (a browser opens on first use)",
        "r: tools.allow is not written: mcp-remote has no tool allow-list",
        "r: timeout is not written: Claude Desktop has no per-server timeout",
    ]
    back, warnings = parse("claude-desktop", json.loads(rendered.text))
    assert back["r"].url == U and back["r"].effective_transport == "sse"
    assert back["r"].headers == {"X-A": "1"} and back["r"].tools == ToolFilter(None, ("b", "c"))
    assert warnings == []


def test_bridge_header_variables_get_the_next_free_name() -> None:
    entry = ServerEntry(
        url=U, headers={"X-A b": "${A}", "x-a-b": "${B}", "_X_A_B_": "c d"},
        auth=AuthConfig("bearer", token="${T}"),
    )  # fmt: skip
    obj = json.loads(render("claude-desktop", {"r": entry}).text)["mcpServers"]["r"]
    assert obj["args"][3:] == [
        "--header", "X-A b:${MCP_HEADER_X_A_B}", "--header", "x-a-b:${MCP_HEADER_X_A_B_2}",
        "--header", "_X_A_B_:${MCP_HEADER_X_A_B_3}",
        "--header", "Authorization:${MCP_HEADER_AUTHORIZATION}",
    ]  # fmt: skip
    assert obj["env"] == {
        "MCP_HEADER_X_A_B": "${A}", "MCP_HEADER_X_A_B_2": "${B}", "MCP_HEADER_X_A_B_3": "c d",
        "MCP_HEADER_AUTHORIZATION": "Bearer ${T}",
    }  # fmt: skip


def test_a_bridge_without_header_variables_has_no_env() -> None:
    obj = json.loads(render("claude-desktop", {"r": ServerEntry(url=U)}).text)["mcpServers"]["r"]
    assert obj == {"command": "npx", "args": ["-y", "mcp-remote", U]}


def test_a_bridge_reads_back_as_the_remote_server_it_stands_for() -> None:
    entries, warnings = bridge(
        ["-y", "mcp-remote@0.1.2", U, "--transport", "sse-first", "--ignore-tool", "x",
         "--header", "A: ${MCP_HEADER_A}", "--header", " B :${NOPE}"],
        env={"MCP_HEADER_A": "${KEY}", "LEFT": "1"}, other=1,
    )  # fmt: skip
    b = entries["b"]
    assert (b.url, b.transport, b.command, b.args, b.env) == (U, "sse", None, (), {})
    assert b.headers == {"A": "${KEY}", "B": "${NOPE}"}
    assert b.tools == ToolFilter(None, ("x",))
    assert warnings == [
        "b: env is not imported: the remote server it bridges has none",
        "b: other is not imported: a Claude Desktop setting mcpctl does not have",
    ]


@pytest.mark.parametrize(
    ("args", "transport"),
    [
        (["mcp-remote", U], "streamable-http"),
        (["mcp-remote", U, "--transport", "http-first"], "streamable-http"),
        (["mcp-remote", U, "--transport", "http-only"], "streamable-http"),
        (["mcp-remote", U, "--transport", "sse-only"], "sse"),
    ],
)
def test_a_bridge_without_y_and_each_transport_flag(args: list[str], transport: str) -> None:
    entries, warnings = bridge(args)
    assert (entries["b"].url, entries["b"].transport, entries["b"].tools) == (U, transport, None)
    assert entries["b"].headers == {} and warnings == []


def test_a_bridge_whose_variables_are_all_used_is_imported_without_a_word() -> None:
    entries, warnings = bridge(
        ["mcp-remote", U, "--header", "A:${MCP_HEADER_A}"], env={"MCP_HEADER_A": "v"}
    )
    assert entries["b"].headers == {"A": "v"} and warnings == []


@pytest.mark.parametrize(
    ("command", "args", "env"),
    [
        ("npm", ["mcp-remote", U], {}),
        ("npx", ["mcp-remotex", U], {}),
        ("npx", ["-y", "mcp-remote"], {}),
        ("npx", ["mcp-remote", "ftp://host/mcp"], {}),
        ("npx", ["-x", "mcp-remote", U], {}),
        ("npx", ["mcp-remote", U, "--transport", "weird"], {}),
        ("npx", ["mcp-remote", U, "--header", "no-colon"], {}),
        ("npx", ["mcp-remote", U, "--debug", "x"], {}),
        ("npx", ["mcp-remote", U, "--ignore-tool"], {}),
        ("npx", ["mcp-remote", U], {"A": 1}),
    ],
)
def test_what_is_no_bridge_mcpctl_knows_stays_a_local_server(
    command: str, args: list[str], env: dict[str, Any]
) -> None:
    entries, warnings = parse(
        "claude-desktop", {"mcpServers": {"b": {"command": command, "args": args, "env": env}}}
    )
    b = entries["b"]
    assert (b.command, b.args, b.url) == (command, tuple(args), None)
    assert b.env == {k: str(v) for k, v in env.items()} and warnings == []


def test_a_bridge_with_args_or_env_of_the_wrong_type_is_not_imported() -> None:
    assert bridge(["mcp-remote", U, 3]) == (
        {}, ["b.args[2]: expected a string, got a number", "b: not imported"]
    )  # fmt: skip
    assert bridge(["mcp-remote", U], env=["A"]) == (
        {}, ["b.env: expected an object of strings, got an array", "b: not imported"]
    )  # fmt: skip
    assert bridge("mcp-remote") == (  # type: ignore[arg-type]
        {}, ["b.args: expected an array of strings, got a string", "b: not imported"]
    )  # fmt: skip


def test_what_claude_desktop_keeps_of_a_remote_server() -> None:
    target = get_target("claude-desktop")
    sse = ServerEntry(url=U, transport="sse", timeout=4, tools=ToolFilter(("a",), ("b",)))
    assert target.expressible(sse) == ServerEntry(
        url=U, transport="sse", tools=ToolFilter(None, ("b",))
    )
    assert target.expressible(ServerEntry(url=U, tools=ToolFilter(allow=("a",)))) == ServerEntry(
        url=U, transport="streamable-http"
    )
    assert target.expressible(ServerEntry(command="x", tools=ToolFilter(allow=("a",)))) == (
        ServerEntry(command="x")
    )


# --- VS Code --------------------------------------------------------------------------


def test_a_keyring_variable_becomes_an_input_and_an_odd_template_list_is_replaced() -> None:
    rendered = render(
        "vscode", {"l": ServerEntry(command="run", args=("${KR}", "${PLAIN}"))},
        keyring_vars=frozenset({"KR"}), template={"inputs": {"a": 1}},
    )  # fmt: skip
    doc = json.loads(rendered.text)
    assert doc["servers"]["l"]["args"] == ["${input:KR}", "${env:PLAIN}"]
    assert doc["inputs"] == [
        {"type": "promptString", "id": "KR", "description": "KR for l", "password": True}
    ]


def test_template_inputs_that_are_not_ours_are_kept_in_order() -> None:
    template = {"inputs": [1, {"id": "API_KEY"}, {"id": "O"}, "s"]}
    entry = ServerEntry(command="run", env={"A": "${API_KEY}"})
    doc = json.loads(render("vscode", {"l": entry}, template=template).text)
    assert doc["inputs"] == [
        1, {"id": "O"}, "s",
        {"type": "promptString", "id": "API_KEY", "description": "API_KEY for l", "password": True},
    ]  # fmt: skip


def test_a_rendering_without_secret_variables_has_no_inputs() -> None:
    doc = json.loads(render("vscode", {"l": ServerEntry(command="run", args=("${X}",))}).text)
    assert "inputs" not in doc and doc["servers"]["l"]["args"] == ["${env:X}"]


def test_vscode_inputs_and_env_read_back_as_variables() -> None:
    args = ["${input:api-key}", "${input:9x}", "${input:--}", "${env:lower}", "${env:OK}",
            "${input:a${input:B}", "${workspaceFolder}", 7]  # fmt: skip
    entries, _ = parse("vscode", {"servers": {"a": {"command": "run", "args": args[:-1]}}})
    assert entries["a"].args == (
        "${API_KEY}", "${_9X}", "${INPUT}", "${env:lower}", "${OK}", "${input:a${B}",
        "${workspaceFolder}",
    )  # fmt: skip
    assert get_target("vscode").read(["${env:OK}", 7]) == ["${OK}", 7]


def test_vscode_files(tmp_path: Path) -> None:
    where = Places(tmp_path, tmp_path / "p", "linux", {})
    target = get_target("vscode")
    assert target.locations("user", where) == [tmp_path / ".config" / "Code" / "User" / "mcp.json"]
    assert target.locations("project", where) == [tmp_path / "p" / ".vscode" / "mcp.json"]


# --- opencode -------------------------------------------------------------------------


def test_opencode_servers_local_and_remote() -> None:
    remote = ServerEntry(url=U, transport="sse", timeout=5, headers={"X": "${A}"},
                         auth=AuthConfig("bearer", token="${T}"))  # fmt: skip
    local = ServerEntry(command="run", args=("${X}",), env={"A": "${B}"}, timeout=7, cwd="/x")
    rendered = render("opencode", {"r": remote, "l": local, "m": ServerEntry(command="m")})
    assert json.loads(rendered.text) == {
        "mcp": {
            "r": {"type": "remote", "url": U, "timeout": 5,
                  "headers": {"X": "{env:A}", "Authorization": "Bearer {env:T}"}},
            "l": {"type": "local", "command": ["run", "{env:X}"], "environment": {"A": "{env:B}"},
                  "timeout": 7},
            "m": {"type": "local", "command": ["m"]},
        }
    }  # fmt: skip
    assert rendered.warnings == [
        "r: transport is not written: opencode has no SSE setting (it tries streamable HTTP, "
        "then SSE)",
        "l: cwd is not written: opencode has no working-directory setting",
    ]
    plain = json.loads(render("opencode", {"r": ServerEntry(url=U)}).text)
    assert plain == {"mcp": {"r": {"type": "remote", "url": U}}}


def test_opencode_reads_its_newer_layout_and_each_setting() -> None:
    servers = {
        "a": {"type": "local", "command": ["run", "{env:X}"], "environment": {"K": "{env:Y}"},
              "enabled": False, "timeout": 5, "cwd": "/x"},
        "b": {"type": "remote", "url": "{env:U}", "headers": {"H": "{env:H}"}, "disabled": True},
        "c": {"type": "local", "command": []},
        "d": {"type": "remote"},
        "e": {"command": ["x"]},
        "f": {"type": "local", "command": ["solo"], "enabled": "no", "disabled": "no"},
        "g": {"type": "remote", "url": U, "disabled": False},
    }  # fmt: skip
    entries, warnings = parse("opencode", {"mcp": {"servers": servers}})
    a, b = entries["a"], entries["b"]
    assert (a.command, a.args, a.env, a.timeout, a.enabled) == (
        "run",
        ("${X}",),
        {"K": "${Y}"},
        5,
        False,
    )
    assert (b.url, b.headers, b.enabled, b.command) == ("${U}", {"H": "${H}"}, False, None)
    assert entries["f"] == ServerEntry(command="solo")
    assert entries["g"].enabled and entries["g"].headers == {}
    assert sorted(entries) == ["a", "b", "f", "g"]
    neither = "is neither a local server with a command nor a remote one with a url; not imported"
    assert warnings == [
        "a: cwd is not imported: a opencode setting mcpctl does not have",
        f"c: {neither}", f"d: {neither}", f"e: {neither}",
        "f: enabled is not imported: a opencode setting mcpctl does not have",
        "f: disabled is not imported: a opencode setting mcpctl does not have",
    ]  # fmt: skip


def test_opencode_servers_directly_under_mcp_and_one_named_servers() -> None:
    entries, _ = parse("opencode", {"mcp": {"a": {"type": "local", "command": ["run"]}}})
    assert entries == {"a": ServerEntry(command="run")}
    one = {"mcp": {"servers": {"type": "local", "command": ["run"]}}}
    assert parse("opencode", one)[0] == {"servers": ServerEntry(command="run")}


def test_what_opencode_keeps_of_a_server() -> None:
    target = get_target("opencode")
    local = ServerEntry(command="x", args=("${A:-d}",), env={"K": "${B}"}, cwd="/c",
                        timeout=3, enabled=False, tools=ToolFilter(deny=("a",)))  # fmt: skip
    assert target.expressible(local) == ServerEntry(
        command="x", args=("${A}",), env={"K": "${B}"}, timeout=3, enabled=False
    )
    remote = ServerEntry(url=U, transport="sse", headers={"H": "v"},
                         auth=AuthConfig("bearer", token="${T}"))  # fmt: skip
    assert target.expressible(remote) == ServerEntry(
        url=U, transport="streamable-http", headers={"H": "v"},
        auth=AuthConfig("bearer", token="${T}"),
    )  # fmt: skip


def test_opencode_files(tmp_path: Path) -> None:
    where = Places(tmp_path, tmp_path / "p", "linux", {})
    target = get_target("opencode")
    assert target.locations("user", where) == [tmp_path / ".config" / "opencode" / "opencode.json"]
    assert target.locations("project", where) == [tmp_path / "p" / "opencode.json"]


# --- what each field's warning names --------------------------------------------------


def test_claude_desktop_names_the_server_and_field_that_keep_placeholders() -> None:
    entry = ServerEntry(url="https://${HOST}/mcp", headers={"X-Key": "${KEY}"})
    rendered = render("claude-desktop", {"r": entry})
    keeps = "keeps its ${VAR} placeholders as written: Claude Desktop does not expand them here"
    assert rendered.warnings == [
        BRIDGE,
        f"r: url {keeps} (--secrets inline writes the values)",
        f"r: headers.X-Key {keeps} (--secrets inline writes the values)",
    ]


def test_opencode_names_each_field_that_loses_a_placeholder_default() -> None:
    local = ServerEntry(command="${RUN:-run}", env={"K": "${V:-v}"})
    remote = ServerEntry(url="https://${HOST:-h}/mcp", headers={"X-Key": "${KEY:-k}"})
    rendered = render("opencode", {"l": local, "r": remote})
    loses = "loses its placeholder default: opencode has no ${VAR:-default}"
    assert rendered.warnings == [
        f"l: command {loses}",
        f"l: env.K {loses}",
        f"r: url {loses}",
        f"r: headers.X-Key {loses}",
    ]
    doc = json.loads(rendered.text)["mcp"]
    assert doc["l"]["command"] == ["{env:RUN}"] and doc["l"]["environment"] == {"K": "{env:V}"}
    assert doc["r"]["url"] == "https://{env:HOST}/mcp"
    assert doc["r"]["headers"] == {"X-Key": "{env:KEY}"}


def test_a_bridge_header_value_may_hold_colons_and_the_bridge_may_be_disabled() -> None:
    entries, warnings = bridge(
        ["mcp-remote", U, "--header", "Authorization:Basic a:b", "--header", "X-At: 12:30"],
        disabled=True,
    )
    assert entries["b"].headers == {"Authorization": "Basic a:b", "X-At": "12:30"}
    assert entries["b"].enabled is False and warnings == []


def test_a_vscode_input_id_keeps_its_leading_x() -> None:
    entries, _ = parse("vscode", {"servers": {"a": {"command": "run", "args": ["${input:Xkey}"]}}})
    assert entries["a"].args == ("${XKEY}",)
