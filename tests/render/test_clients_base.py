"""What every JSON client shares: the document around the servers, one server written and
read back, the headers only the keyring holds, the tool filters and what round-trips."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.errors import UsageError
from mcpctl.render.base import Places, RenderRequest
from mcpctl.render.clients_base import McpServersClient
from mcpctl.render.targets import get_target


def render(client: str, entries: dict[str, ServerEntry], **kw: Any) -> tuple[Any, list[str]]:
    out = get_target(client).render(RenderRequest(entries, **kw))
    return json.loads(out.text), out.warnings


def parse(client: str, doc: Any) -> tuple[dict[str, ServerEntry], list[str]]:
    parsed = get_target(client).parse(json.dumps(doc))
    return dict(parsed.entries), parsed.warnings


def nowhere(scope: Any, places: Places) -> list[Path]:
    return [Path("/x") / scope]


def custom(**kw: Any) -> McpServersClient:
    return McpServersClient("t", "Tee", "a test client", where=nowhere, **kw)


REMOTE = "https://h.example/mcp"


# --- the document ---------------------------------------------------------------------


def test_a_client_names_itself_and_its_files() -> None:
    client = custom()
    assert repr(client) == "<client target t>"
    assert client.locations("user", Places(Path("/h"), Path("/c"), "linux", {})) == [
        Path("/x/user")
    ]
    assert (client.family, client.file_format, client.section) == (
        "client",
        "json",
        ("mcpServers",),
    )
    assert client.keyed_lists == {} and client.headers_helper is None
    assert not client.prompts_secrets


def test_the_text_is_stable_json_with_a_newline() -> None:
    out = get_target("cursor").render(RenderRequest({"é": ServerEntry(command="sh")}))
    assert out.text == '{\n  "mcpServers": {\n    "é": {\n      "command": "sh"\n    }\n  }\n}\n'
    assert out.warnings == [] and out.holds_secrets is False


def test_the_template_keeps_its_settings_and_servers_and_is_not_changed() -> None:
    template = {"theme": "dark", "mcpServers": {"old": {"command": "x"}}}
    doc, _ = render("cursor", {"new": ServerEntry(command="y")}, template=template)
    assert doc == {
        "theme": "dark",
        "mcpServers": {"old": {"command": "x"}, "new": {"command": "y"}},
    }
    assert template == {"theme": "dark", "mcpServers": {"old": {"command": "x"}}}
    doc, _ = render("cursor", {"old": ServerEntry(command="y")}, template=template)
    assert doc["mcpServers"] == {"old": {"command": "y"}}


def test_a_nested_section_is_made_on_the_way() -> None:
    client = custom(section=("a", "b"))
    out = client.render(RenderRequest({"s": ServerEntry(command="x")}, template={"z": 1}))
    assert json.loads(out.text) == {"z": 1, "a": {"b": {"s": {"command": "x"}}}}
    template = {"a": {"keep": 2}}
    out = client.render(RenderRequest({}, template=template))
    assert json.loads(out.text) == {"a": {"keep": 2, "b": {}}}
    assert template == {"a": {"keep": 2}}, "the template itself is left as it was"


def test_a_template_with_no_object_where_servers_go_is_refused() -> None:
    with pytest.raises(UsageError, match=r"^the template's 'a' must be an object for t$"):
        custom(section=("a", "b")).render(RenderRequest({}, template={"a": [1]}))
    with pytest.raises(
        UsageError, match=r"^the template's 'mcpServers' must be an object for cursor$"
    ):
        render("cursor", {}, template={"mcpServers": []})


def test_servers_that_are_not_an_object_replace_what_the_template_had() -> None:
    client = custom()
    ctx_doc = client.document(["a"], _ctx(client, template={"mcpServers": {"x": 1}, "k": 2}))
    assert ctx_doc == {"mcpServers": ["a"], "k": 2}


def _ctx(client: McpServersClient, **kw: Any) -> Any:
    from mcpctl.render.clients import RenderContext

    return RenderContext(client, RenderRequest({}, **kw))


# --- headers only the keyring holds --------------------------------------------------------


def keyring_entry() -> dict[str, ServerEntry]:
    return {"api": ServerEntry(url=REMOTE, headers={"X-Key": "${KEY}", "X-Plain": "p"})}


def test_a_headers_helper_gives_the_keyring_headers() -> None:
    doc, warnings = render(
        "claude-code", keyring_entry(), keyring_vars=frozenset({"KEY"}),
        headers_command=lambda name: f"mcpctl secret headers {name}",
    )  # fmt: skip
    assert doc["mcpServers"]["api"] == {
        "type": "http",
        "url": REMOTE,
        "headersHelper": "mcpctl secret headers api",
        "headers": {"X-Plain": "p"},
    }
    assert warnings == []


def test_without_a_headers_command_the_header_stays_and_is_warned() -> None:
    doc, warnings = render("claude-code", keyring_entry(), keyring_vars=frozenset({"KEY"}))
    assert doc["mcpServers"]["api"]["headers"] == {"X-Key": "${KEY}", "X-Plain": "p"}
    assert len(warnings) == 1
    assert warnings[0].startswith(
        "api: headers.X-Key needs KEY, which only the keyring holds: Claude Code reads it from "
        "its own environment; "
    )


def test_a_client_without_a_helper_warns_for_each_keyring_header() -> None:
    entries = {"api": ServerEntry(url=REMOTE, headers={"A": "${K1}-${K2}", "B": "${OK}"})}
    doc, warnings = render(
        "cursor", entries, keyring_vars=frozenset({"K1", "K2"}), headers_command=lambda n: "x"
    )
    assert doc["mcpServers"]["api"]["headers"] == {"A": "${env:K1}-${env:K2}", "B": "${env:OK}"}
    assert len(warnings) == 1
    assert warnings[0].startswith(
        "api: headers.A needs K1, K2, which only the keyring holds: Cursor reads it from its "
        "own environment; "
    )
    assert "headersHelper" not in doc["mcpServers"]["api"]


def test_no_keyring_variable_means_no_helper() -> None:
    doc, warnings = render(
        "claude-code", keyring_entry(), keyring_vars=frozenset({"OTHER"}),
        headers_command=lambda name: "helper",
    )  # fmt: skip
    assert "headersHelper" not in doc["mcpServers"]["api"] and warnings == []


def test_a_client_that_prompts_keeps_the_headers_unwarned() -> None:
    client = custom()
    client.prompts_secrets = True
    ctx = _ctx(client, keyring_vars=frozenset({"KEY"}))
    headers = {"X-Key": "${KEY}"}
    assert client.keyring_headers("api", headers, {}, ctx) == headers
    assert ctx.warnings == []


# --- one server written -------------------------------------------------------------------


def test_remote_servers_by_transport() -> None:
    entries = {
        "http": ServerEntry(url=REMOTE, auth=AuthConfig(type="bearer", token="${T}")),
        "sse": ServerEntry(url=REMOTE, transport="sse"),
    }
    doc, warnings = render("gemini", entries)
    assert doc["mcpServers"] == {
        "http": {"httpUrl": REMOTE, "headers": {"Authorization": "Bearer ${T}"}},
        "sse": {"url": REMOTE},
    }
    assert warnings == []
    doc, warnings = render("cursor", entries)
    assert doc["mcpServers"]["sse"] == {"url": REMOTE}
    assert warnings == [
        "sse: transport is not written: Cursor has no SSE setting (it finds the transport of a "
        "url itself)"
    ]
    doc, warnings = render("cline", entries)
    assert doc["mcpServers"]["sse"] == {"type": "sse", "url": REMOTE}
    assert doc["mcpServers"]["http"]["type"] == "streamableHttp"


def test_stdio_servers_keep_cwd_where_the_client_has_it() -> None:
    entry = ServerEntry(command="npx", args=("-y", "p"), env={"A": "${A}"}, cwd="/w")
    doc, warnings = render("roo-code", {"s": entry})
    assert doc["mcpServers"]["s"] == {
        "type": "stdio", "command": "npx", "args": ["-y", "p"], "env": {"A": "${env:A}"},
        "cwd": "/w",
    }  # fmt: skip
    assert warnings == []
    doc, warnings = render("cursor", {"s": entry})
    assert doc["mcpServers"]["s"] == {
        "command": "npx",
        "args": ["-y", "p"],
        "env": {"A": "${env:A}"},
    }
    assert len(warnings) == 1 and warnings[0].startswith("s: cwd ")
    doc, _ = render("cursor", {"s": ServerEntry(command="sh")})
    assert doc["mcpServers"]["s"] == {"command": "sh"}


def test_keeps_names_the_optional_settings() -> None:
    assert custom().keeps() == ""
    assert get_target("gemini").keeps() == "cwd timeout allow deny"  # type: ignore[attr-defined]
    assert custom(allow_key="a").keeps() == "allow"
    assert custom(deny_key="d").keeps() == "deny"
    assert custom(timeout=("t", 1)).keeps() == "timeout"


def test_timeouts_in_the_clients_unit_rounded_up_with_a_warning() -> None:
    client = custom(timeout=("secs", 1000))
    out = client.render(RenderRequest({"a": ServerEntry(command="x", timeout=1500),
                                       "b": ServerEntry(command="x", timeout=2000)}))  # fmt: skip
    assert json.loads(out.text)["mcpServers"] == {
        "a": {"command": "x", "secs": 2}, "b": {"command": "x", "secs": 2},
    }  # fmt: skip
    assert out.warnings == ["a: timeout is rounded up to whole seconds for Tee"]
    doc, warnings = render("gemini", {"s": ServerEntry(command="x", timeout=1500)})
    assert doc["mcpServers"]["s"]["timeout"] == 1500 and warnings == []


def test_tool_filters_where_the_client_has_them() -> None:
    entry = ServerEntry(command="x", tools=ToolFilter(allow=("get_*", "list"), deny=("rm",)))
    doc, warnings = render("gemini", {"s": entry})
    assert doc["mcpServers"]["s"]["includeTools"] == ["get_*", "list"]
    assert doc["mcpServers"]["s"]["excludeTools"] == ["rm"]
    assert warnings == ["s: tools has patterns (get_*): Gemini CLI matches tool names exactly"]
    doc, warnings = render(
        "gemini", {"s": ServerEntry(command="x", tools=ToolFilter(deny=("[a]", "b?")))}
    )
    assert "includeTools" not in doc["mcpServers"]["s"]
    assert warnings == ["s: tools has patterns ([a], b?): Gemini CLI matches tool names exactly"]
    doc, warnings = render(
        "gemini", {"s": ServerEntry(command="x", tools=ToolFilter(allow=("a",)))}
    )
    assert doc["mcpServers"]["s"]["includeTools"] == ["a"] and warnings == []
    assert "excludeTools" not in doc["mcpServers"]["s"]
    doc, _ = render("kiro", {"s": entry})
    assert doc["mcpServers"]["s"]["disabledTools"] == ["rm"]


def test_a_client_whose_allow_list_is_required_gets_every_tool_by_default() -> None:
    doc, _ = render("copilot-cli", {"s": ServerEntry(command="x")})
    assert doc["mcpServers"]["s"]["tools"] == ["*"]
    doc, _ = render("copilot-cli", {"s": ServerEntry(command="x", tools=ToolFilter(deny=("a",)))})
    assert doc["mcpServers"]["s"]["tools"] == ["*"]
    doc, _ = render("copilot-cli", {"s": ServerEntry(command="x", tools=ToolFilter(allow=("a",)))})
    assert doc["mcpServers"]["s"]["tools"] == ["a"]


# --- reading a client's file ----------------------------------------------------------------


def test_the_servers_of_a_document() -> None:
    client = custom(section=("a", "b"))
    assert client.servers_of({}) == {}
    assert client.servers_of({"a": {}}) == {}
    assert client.servers_of({"a": {"b": {"s": 1}}}) == {"s": 1}
    with pytest.raises(
        UsageError, match=r"^this is not a Tee file: expected an object at the top$"
    ):
        client.servers_of([])
    with pytest.raises(UsageError, match=r"^'a\.b' in a Tee file must be an object of servers$"):
        client.servers_of({"a": {"b": []}})
    with pytest.raises(UsageError, match=r"^'a\.b' in a Tee file must be an object of servers$"):
        client.servers_of({"a": [1]})


def test_a_server_that_is_not_an_object_is_skipped_with_a_warning() -> None:
    entries, warnings = parse("cursor", {"mcpServers": {"bad": 1, "ok": {"command": "x"}}})
    assert list(entries) == ["ok"]
    assert warnings == ["bad: is not an object; not imported"]


def test_placeholders_are_read_back_in_nested_values() -> None:
    client = get_target("cursor")
    assert client.read({"a": ["${env:X}", 1], "b": "${env:Y}"}) == {"a": ["${X}", 1], "b": "${Y}"}  # type: ignore[attr-defined]
    assert client.read(None) is None  # type: ignore[attr-defined]


def test_a_remote_server_read_back() -> None:
    entries, warnings = parse("gemini", {"mcpServers": {
        "h": {"httpUrl": REMOTE, "headers": {"K": "$V"}},
        "s": {"url": REMOTE},
        "t": {"url": REMOTE, "type": "sse"},
    }})  # fmt: skip
    assert entries["h"] == ServerEntry(
        url=REMOTE, transport="streamable-http", headers={"K": "${V}"}
    )
    assert entries["s"] == ServerEntry(url=REMOTE, transport="sse")
    assert entries["t"] == ServerEntry(url=REMOTE, transport="sse")
    assert warnings == []
    entries, _ = parse("cursor", {"mcpServers": {"s": {"url": REMOTE}}})
    assert entries["s"] == ServerEntry(url=REMOTE, transport="streamable-http")
    entries, _ = parse("cline", {"mcpServers": {"s": {"url": REMOTE, "type": "streamableHttp"}}})
    assert entries["s"] == ServerEntry(url=REMOTE, transport="streamable-http")


def test_a_connection_in_a_transport_object_or_field() -> None:
    entries, warnings = parse("cline", {"mcpServers": {
        "a": {"transport": {"type": "sse", "url": REMOTE}, "disabled": True},
        "b": {"transport": "stdio", "command": "x"},
        "c": {"transport": {"command": "y"}, "command": "z"},
    }})  # fmt: skip
    assert entries["a"] == ServerEntry(url=REMOTE, transport="sse", enabled=False)
    assert entries["b"] == ServerEntry(command="x")
    assert entries["c"] == ServerEntry(command="z")
    assert warnings == []


def test_unknown_transports_and_missing_connections_are_not_imported() -> None:
    entries, warnings = parse("cline", {"mcpServers": {
        "a": {"type": "ws", "url": REMOTE},
        "b": {"type": 3, "url": REMOTE},
        "c": {"args": []},
    }})  # fmt: skip
    assert entries == {}
    assert warnings == [
        "a: type 'ws' is not a transport mcpctl knows; not imported",
        "b: type 3 is not a transport mcpctl knows; not imported",
        "c: has neither 'command' nor a url; not imported",
    ]


def test_a_stdio_server_read_back_with_its_settings() -> None:
    entries, warnings = parse("gemini", {"mcpServers": {"s": {
        "command": "$C", "args": ["$A"], "env": {"N": 1, "S": "$V"}, "cwd": "$W",
        "timeout": 5, "includeTools": ["t"], "excludeTools": ["u"], "enabled": False,
        "trust": True,
    }}})  # fmt: skip
    assert entries["s"] == ServerEntry(
        command="${C}", args=("${A}",), env={"N": "1", "S": "${V}"}, cwd="${W}", timeout=5,
        tools=ToolFilter(allow=("t",), deny=("u",)), enabled=False,
    )  # fmt: skip
    assert warnings == ["s: trust is not imported: a Gemini CLI setting mcpctl does not have"]
    entries, warnings = parse("cursor", {"mcpServers": {"s": {"command": "x", "cwd": "/w"}}})
    assert entries["s"] == ServerEntry(command="x")
    assert warnings == ["s: cwd is not imported: a Cursor setting mcpctl does not have"]


def test_disabled_and_enabled_flags() -> None:
    entries, warnings = parse("cursor", {"mcpServers": {
        "a": {"command": "x", "disabled": False},
        "b": {"command": "x", "enabled": False},
        "c": {"command": "x", "disabled": "yes"},
    }})  # fmt: skip
    assert entries["a"].enabled and not entries["b"].enabled and entries["c"].enabled
    assert warnings == ["c: disabled is not imported: a Cursor setting mcpctl does not have"]


def test_the_every_tool_entry_reads_back_as_no_filter() -> None:
    entries, _ = parse("copilot-cli", {"mcpServers": {
        "a": {"command": "x", "tools": ["*"]},
        "b": {"command": "x", "tools": ["t"]},
    }})  # fmt: skip
    assert entries["a"].tools is None
    assert entries["b"].tools == ToolFilter(allow=("t",))
    entries, _ = parse("gemini", {"mcpServers": {"a": {"command": "x", "includeTools": ["*"]}}})
    assert entries["a"].tools == ToolFilter(allow=("*",))


def test_a_timeout_in_the_clients_unit_reads_back_in_milliseconds() -> None:
    client = custom(timeout=("secs", 1000))
    parsed = client.parse(json.dumps({"mcpServers": {"s": {"command": "x", "secs": 2}}}))
    assert parsed.entries["s"] == ServerEntry(command="x", timeout=2000)


# --- what round-trips -----------------------------------------------------------------------


def test_what_comes_back_from_a_client() -> None:
    entry = ServerEntry(
        command="x", args=("a",), env={"E": "v"}, cwd="/w", timeout=1500,
        tools=ToolFilter(allow=("t",), deny=("u",)), enabled=False, description="d",
        groups=("g",), sensitive=True,
    )  # fmt: skip
    assert get_target("gemini").expressible(entry) == ServerEntry(
        command="x", args=("a",), env={"E": "v"}, cwd="/w", timeout=1500,
        tools=ToolFilter(allow=("t",), deny=("u",)), enabled=False,
    )  # fmt: skip
    assert get_target("cursor").expressible(entry) == ServerEntry(
        command="x", args=("a",), env={"E": "v"}, enabled=False
    )
    assert get_target("kiro").expressible(entry) == ServerEntry(
        command="x", args=("a",), env={"E": "v"}, enabled=False, tools=ToolFilter(deny=("u",))
    )
    assert custom(timeout=("s", 1000)).expressible(entry) == ServerEntry(
        command="x", args=("a",), env={"E": "v"}, timeout=2000, enabled=False
    )
    every = ServerEntry(command="x", tools=ToolFilter(allow=("*",)))
    assert get_target("copilot-cli").expressible(every) == ServerEntry(command="x")
    assert get_target("gemini").expressible(every) == every


def test_what_comes_back_of_a_remote_server() -> None:
    entry = ServerEntry(url=REMOTE, transport="sse", headers={"K": "v"})
    assert get_target("cline").expressible(entry) == ServerEntry(
        url=REMOTE, transport="sse", headers={"K": "v"}
    )
    assert get_target("cursor").expressible(entry) == ServerEntry(
        url=REMOTE, transport="streamable-http", headers={"K": "v"}
    )


# --- a client made now: its settings as given ------------------------------------------------


def test_a_clients_settings_are_kept_as_given() -> None:
    client = custom(keyed_lists={"inputs": "id"}, types={"stdio": "s"}, headers_helper="hh")
    assert client.description == "a test client" and client.label == "Tee"
    assert client.keyed_lists == {"inputs": "id"}
    assert client.headers_helper == "hh" and client.types == {"stdio": "s"}
    assert custom().sse == "auto" and custom().exact_tools is False and custom().cwd is False
    out = custom(cwd=True).render(RenderRequest({"s": ServerEntry(command="x", cwd="/w")}))
    assert json.loads(out.text)["mcpServers"]["s"] == {"command": "x", "cwd": "/w"}


def test_a_client_made_now_with_default_settings_warns_for_sse() -> None:
    entries = {"e": ServerEntry(url=REMOTE, transport="sse")}
    out = custom().render(RenderRequest(entries))
    assert json.loads(out.text)["mcpServers"]["e"] == {"url": REMOTE}
    assert out.warnings == [
        "e: transport is not written: Tee has no SSE setting (it finds the transport of a url "
        "itself)"
    ]
    typed = custom(types={"stdio": "local", "sse": "events", "streamable-http": "http"}, sse="type")
    out = typed.render(RenderRequest(entries))
    assert json.loads(out.text)["mcpServers"]["e"] == {"type": "events", "url": REMOTE}
    assert out.warnings == []


def test_a_client_made_now_matches_patterns_unless_told_exact() -> None:
    entry = ServerEntry(command="x", tools=ToolFilter(allow=("get_*",)))
    out = custom(allow_key="allow").render(RenderRequest({"s": entry}))
    assert json.loads(out.text)["mcpServers"]["s"]["allow"] == ["get_*"] and out.warnings == []
    every = custom(allow_key="tools", all_tools="*")
    out = every.render(RenderRequest({"s": ServerEntry(command="x")}))
    assert json.loads(out.text)["mcpServers"]["s"]["tools"] == ["*"]


def test_a_client_made_now_runs_its_headers_helper() -> None:
    client = custom(headers_helper="helper")
    out = client.render(RenderRequest(keyring_entry(), keyring_vars=frozenset({"KEY"}),
                                      headers_command=lambda n: f"get {n}"))  # fmt: skip
    assert json.loads(out.text)["mcpServers"]["api"]["helper"] == "get api"


def test_the_fix_for_a_keyring_header_names_the_variables_and_the_client() -> None:
    entries = {"api": ServerEntry(url=REMOTE, headers={"A": "${K1}-${K2}"})}
    _, warnings = render("cursor", entries, keyring_vars=frozenset({"K1", "K2"}))
    assert warnings == [
        "api: headers.A needs K1, K2, which only the keyring holds: Cursor reads it from its own "
        "environment; export K1, K2 in the environment Cursor starts from, or render with "
        "--secrets inline (the file then holds the value, mode 0600); a launcher cannot reach a "
        "remote server"
    ]


def test_each_field_that_loses_a_placeholder_default_is_named() -> None:
    entry = ServerEntry(command="${C:-c}", args=("${A:-a}",), env={"E": "${E:-e}"}, cwd="${W:-w}")
    _, warnings = render("roo-code", {"s": entry})
    why = "loses its placeholder default: Roo Code has no ${VAR:-default}"
    assert warnings == [f"s: command {why}", f"s: args {why}", f"s: env.E {why}", f"s: cwd {why}"]
    remote = ServerEntry(url="${U:-https://h}", headers={"H": "${H:-h}"})
    _, warnings = render("roo-code", {"r": remote})
    assert warnings == [f"r: url {why}", f"r: headers.H {why}"]


def test_a_broken_file_is_named_by_its_client() -> None:
    with pytest.raises(UsageError, match="a Cursor file"):
        get_target("cursor").parse("{oops")


def test_a_type_that_is_no_string_is_not_a_transport() -> None:
    entries, warnings = parse("cline", {"mcpServers": {"a": {"type": ["sse"], "url": REMOTE}}})
    assert entries == {}
    assert warnings == ["a: type ['sse'] is not a transport mcpctl knows; not imported"]
