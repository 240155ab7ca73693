"""The fast checker's words: what a user reads when an entry is wrong, and where.

``test_model.py`` pins that the checker accepts exactly what the schema of record accepts;
these tests pin what it says about what it refuses (the message, the path, the code) and
what it builds from what it accepts.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpctl.config.checks import (
    check_group_name,
    check_name,
    check_url,
    entry_from_data,
    transport_field_issues,
    unknown_field_message,
    wrapper_problem,
)
from mcpctl.config.model import AuthConfig, EntryIssue, Problem, ServerEntry, Source, ToolFilter
from mcpctl.config.model import format_path as fp


def issues(data: object, name: str = "s") -> list[tuple[str, str, str]]:
    entry, found = entry_from_data(name, data)
    assert entry is None and found
    return [(fp(i.path), i.message, i.code) for i in found]


def built(data: dict[str, Any]) -> ServerEntry:
    entry, found = entry_from_data("s", data)
    assert found == [] and entry is not None
    return entry


# --- names ----------------------------------------------------------------------------


def test_server_names_are_explained() -> None:
    assert check_name("ok_1-A") is None
    assert check_name("") == "a server name cannot be empty"
    assert check_name("x" * 65) == "server name is 65 characters long; the limit is 64"
    assert check_name("a.b") == "server name 'a.b' may only contain letters, digits, '_' and '-'"


def test_group_names_are_explained() -> None:
    assert check_group_name("dev-1_x") is None
    assert check_group_name("x" * 64) is None
    assert check_group_name("") == "a group name cannot be empty"
    assert check_group_name("x" * 66) == "group name is 66 characters long; the limit is 64"
    assert (
        check_group_name("a b") == "group name 'a b' may only contain letters, digits, '_' and '-'"
    )


def test_a_bad_server_name_is_reported_at_the_entry() -> None:
    _, found = entry_from_data("a b", {"command": "sh"})
    assert [(i.path, i.message, i.code) for i in found] == [
        (
            ("a b",),
            "server name 'a b' may only contain letters, digits, '_' and '-'",
            "invalid_name",
        )
    ]


def test_the_base_path_replaces_the_name() -> None:
    _, found = entry_from_data("s", {"command": 1}, base=("servers", "s"))
    assert [i.path for i in found] == [("servers", "s", "command")]
    _, found = entry_from_data("s", {"command": 1}, base=())
    assert [i.path for i in found] == [("command",)]


# --- types ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (None, "null"),
        (True, "a boolean"),
        (3, "a number"),
        (1.5, "a number"),
        ("x", "a string"),
        ([], "an array"),
    ],
)
def test_an_entry_of_the_wrong_type_says_what_it_got(value: object, said: str) -> None:
    assert issues(value) == [("s", f"a server entry must be an object, got {said}", "wrong_type")]


def test_an_unknown_json_type_is_named_by_its_python_type() -> None:
    assert issues(("sh",)) == [("s", "a server entry must be an object, got tuple", "wrong_type")]


def test_strings_and_blank_strings() -> None:
    assert issues({"command": 5}) == [
        ("s.command", "expected a string, got a number", "wrong_type")
    ]
    assert issues({"command": "  "}) == [("s.command", "must not be empty", "invalid_value")]
    assert issues({"url": ""}) == [("s.url", "must not be empty", "invalid_value")]
    assert issues({"command": "sh", "cwd": " "}) == [
        ("s.cwd", "must not be empty", "invalid_value")
    ]
    # a description may be empty
    assert built({"command": "sh", "description": ""}).description == ""


def test_every_bad_item_of_a_list_is_reported() -> None:
    assert issues({"command": "sh", "args": ["a", 1, None]}) == [
        ("s.args[1]", "expected a string, got a number", "wrong_type"),
        ("s.args[2]", "expected a string, got null", "wrong_type"),
    ]
    assert issues({"command": "sh", "args": "a b"}) == [
        ("s.args", "expected an array of strings, got a string", "wrong_type")
    ]
    assert issues({"command": "sh", "args": {}}) == [
        ("s.args", "expected an array of strings, got an object", "wrong_type")
    ]


def test_maps_report_bad_names_and_values() -> None:
    assert issues({"command": "sh", "env": {"A=B": "x", "C": 1, "D": "ok"}}) == [
        ("s.env['A=B']", "'A=B' is not a valid environment variable name", "invalid_value"),
        ("s.env.C", "expected a string, got a number", "wrong_type"),
    ]
    assert issues({"url": "https://h.example", "headers": {"bad header": "v"}}) == [
        ("s.headers['bad header']", "'bad header' is not a valid header name", "invalid_value")
    ]
    assert issues({"command": "sh", "env": ["A"]}) == [
        ("s.env", "expected an object of strings, got an array", "wrong_type")
    ]


def test_booleans() -> None:
    assert issues({"command": "sh", "enabled": "no"}) == [
        ("s.enabled", "expected true or false, got a string", "wrong_type")
    ]
    assert issues({"command": "sh", "sensitive": 1}) == [
        ("s.sensitive", "expected true or false, got a number", "wrong_type")
    ]
    entry = built({"command": "sh", "enabled": False, "sensitive": True})
    assert entry.enabled is False and entry.sensitive is True


# --- unknown fields ---------------------------------------------------------------------


def test_unknown_fields_suggest_the_closest_known_one() -> None:
    assert unknown_field_message("comand", ("command", "url")) == (
        "unknown field 'comand' (did you mean 'command'?)"
    )
    assert unknown_field_message("zzz", ("command", "url")) == "unknown field 'zzz'"
    assert issues({"command": "sh", "zzz": {}}) == [
        ("s.zzz", "unknown field 'zzz'", "unknown_field")
    ]
    assert issues({"command": "sh", "argz": []}) == [
        ("s.argz", "unknown field 'argz' (did you mean 'args'?)", "unknown_field")
    ]


# --- transport, protocol, timeout ----------------------------------------------------------


def test_transport_protocol_and_timeout_words() -> None:
    assert issues({"command": "sh", "transport": "pipe"}) == [
        ("s.transport", "transport must be one of stdio, streamable-http, sse; got 'pipe'",
         "invalid_value")
    ]  # fmt: skip
    assert issues({"command": "sh", "transport": 1}) == [
        ("s.transport", "transport must be one of stdio, streamable-http, sse; got 1",
         "invalid_value")
    ]  # fmt: skip
    assert issues({"command": "sh", "protocol": "new"}) == [
        ("s.protocol", "protocol must be one of auto, modern, legacy; got 'new'", "invalid_value")
    ]
    assert issues({"command": "sh", "protocol": ["auto"]}) == [
        ("s.protocol", "protocol must be one of auto, modern, legacy; got ['auto']",
         "invalid_value")
    ]  # fmt: skip
    assert issues({"command": "sh", "timeout": 1.5}) == [
        ("s.timeout", "expected milliseconds as an integer, got a number", "wrong_type")
    ]
    assert issues({"command": "sh", "timeout": True}) == [
        ("s.timeout", "expected milliseconds as an integer, got a boolean", "wrong_type")
    ]
    for bad in (0, -1, 3_600_001):
        assert issues({"command": "sh", "timeout": bad}) == [
            ("s.timeout", "timeout must be between 1 and 3600000 ms", "invalid_value")
        ]
    assert built({"command": "sh", "timeout": 1}).timeout == 1
    assert built({"command": "sh", "timeout": 3_600_000}).timeout == 3_600_000
    entry = built({"url": "https://h.example/mcp", "transport": "sse", "protocol": "legacy"})
    assert (entry.transport, entry.protocol) == ("sse", "legacy")


# --- URLs -----------------------------------------------------------------------------------


def test_urls() -> None:
    assert check_url("https://h.example/mcp") is None
    assert check_url("http://127.0.0.1:9/sse") is None
    assert check_url("${BASE}/mcp") is None
    assert (
        check_url("ftp://h.example")
        == "URL must start with http:// or https://, got 'ftp://h.example'"
    )
    assert (
        check_url("h.example/mcp") == "URL must start with http:// or https://, got 'h.example/mcp'"
    )
    assert check_url("https:///mcp") == "URL has no host"
    assert check_url("http://[::1/") == "not a valid URL: Invalid IPv6 URL"
    # a placeholder anywhere but at the start does not stand for the scheme
    assert check_url("x${BASE}") is not None
    assert issues({"url": "ftp://h"}) == [
        ("s.url", "URL must start with http:// or https://, got 'ftp://h'", "invalid_value")
    ]


# --- inherit_env, allow_literal, groups ---------------------------------------------------


def test_inherit_env() -> None:
    assert built({"command": "sh", "inherit_env": True}).inherit_env is True
    assert built({"command": "sh", "inherit_env": ["HOME", "UV_X"]}).inherit_env == ("HOME", "UV_X")
    assert built({"command": "sh", "inherit_env": []}).inherit_env is False
    assert issues({"command": "sh", "inherit_env": "HOME"}) == [
        ("s.inherit_env", "expected true, false or a list of names, got a string", "wrong_type")
    ]
    assert issues({"command": "sh", "inherit_env": ["HOME", "1X", "A-B"]}) == [
        ("s.inherit_env[1]", "'1X' is not an environment variable name", "invalid_value"),
        ("s.inherit_env[2]", "'A-B' is not an environment variable name", "invalid_value"),
    ]


def test_allow_literal() -> None:
    assert built({"command": "sh", "allow_literal": ["A", "X-Key"]}).allow_literal == ("A", "X-Key")
    assert issues({"command": "sh", "allow_literal": ["A", "A=B"]}) == [
        ("s.allow_literal[1]", "'A=B' is not an environment variable or header name",
         "invalid_value")
    ]  # fmt: skip


def test_groups() -> None:
    assert issues({"command": "sh", "groups": ["", "ok"]}) == [
        ("s.groups[0]", "a group name cannot be empty", "invalid_value")
    ]


# --- auth -------------------------------------------------------------------------------


def test_auth_words() -> None:
    url = "https://h.example/mcp"
    assert issues({"url": url, "auth": "token"}) == [
        ("s.auth", "expected an object, got a string", "wrong_type")
    ]
    assert issues({"url": url, "auth": {"type": "magic"}}) == [
        ("s.auth.type", "auth type must be one of none, bearer, header, basic, oauth; got 'magic'",
         "invalid_value")
    ]  # fmt: skip
    assert issues({"url": url, "auth": {}}) == [
        ("s.auth.type", "auth type must be one of none, bearer, header, basic, oauth; got None",
         "invalid_value")
    ]  # fmt: skip
    assert issues({"url": url, "auth": {"type": "basic", "username": "u"}}) == [
        ("s.auth.password", "auth type 'basic' needs 'password'", "missing_field")
    ]
    assert issues({"url": url, "auth": {"type": "bearer", "token": "t", "tokne": "x"}}) == [
        ("s.auth.tokne", "unknown field 'tokne' (did you mean 'token'?)", "unknown_field")
    ]
    assert issues({"url": url, "auth": {"type": "header", "value": "v", "name": " "}}) == [
        ("s.auth.name", "must not be empty", "invalid_value")
    ]
    for port in (0, 65536, "80", True):
        assert issues({"url": url, "auth": {"type": "oauth", "callback_port": port}}) == [
            ("s.auth.callback_port", "expected a port number (1-65535)", "invalid_value")
        ]
    assert issues({"url": url, "auth": {"type": "oauth", "client_metadata_url": ""}}) == [
        ("s.auth.client_metadata_url", "must not be empty", "invalid_value")
    ]
    assert issues({"url": url, "auth": {"type": "oauth", "scopes": "read"}}) == [
        ("s.auth.scopes", "expected an array of strings, got a string", "wrong_type")
    ]


def test_auth_built() -> None:
    url = "https://h.example/mcp"
    entry = built(
        {"url": url, "auth": {"type": "oauth", "scopes": ["a", "b"], "client_id": "c",
                              "client_secret": "${S}", "client_metadata_url": "https://m",
                              "callback_port": 1}}
    )  # fmt: skip
    assert entry.auth == AuthConfig(
        type="oauth", scopes=("a", "b"), client_id="c", client_secret="${S}",
        client_metadata_url="https://m", callback_port=1,
    )  # fmt: skip
    assert built({"url": url, "auth": {"type": "oauth", "callback_port": 65535}}).auth == (
        AuthConfig(type="oauth", callback_port=65535)
    )
    assert built({"url": url, "auth": {"type": "header", "value": "v", "name": "X-K"}}).auth == (
        AuthConfig(type="header", name="X-K", value="v")
    )
    # an empty token or password is allowed (a placeholder may be empty); name is not
    assert built({"url": url, "auth": {"type": "bearer", "token": ""}}).auth == (
        AuthConfig(type="bearer", token="")
    )


# --- tools and source ------------------------------------------------------------------------


def test_tools() -> None:
    assert issues({"command": "sh", "tools": ["a"]}) == [
        ("s.tools", "expected an object, got an array", "wrong_type")
    ]
    assert issues({"command": "sh", "tools": {"allow": ["a"], "alow": []}}) == [
        ("s.tools.alow", "unknown field 'alow' (did you mean 'allow'?)", "unknown_field")
    ]
    assert issues({"command": "sh", "tools": {"deny": "a"}}) == [
        ("s.tools.deny", "expected an array of strings, got a string", "wrong_type")
    ]
    assert built({"command": "sh", "tools": {}}).tools == ToolFilter()
    assert built({"command": "sh", "tools": {"allow": []}}).tools == ToolFilter(allow=())
    assert built({"command": "sh", "tools": {"deny": ["x"]}}).tools == ToolFilter(deny=("x",))


def test_source() -> None:
    assert issues({"command": "sh", "source": "r"}) == [
        ("s.source", "expected an object, got a string", "wrong_type")
    ]
    assert issues({"command": "sh", "source": {"registry": "r", "name": " ", "vesion": "1"}}) == [
        ("s.source.vesion", "unknown field 'vesion' (did you mean 'version'?)", "unknown_field"),
        ("s.source.name", "must not be empty", "invalid_value"),
        ("s.source.version", "source needs 'version'", "missing_field"),
    ]
    assert built(
        {"command": "sh", "source": {"registry": "r", "name": "n", "version": "1"}}
    ).source == (Source("r", "n", "1"))


# --- the fields of each transport -----------------------------------------------------------


def test_transport_field_rules() -> None:
    assert transport_field_issues({"command": "sh", "url": "https://h"}) == [
        EntryIssue((), "an entry has either 'command' (stdio) or 'url' (remote), not both",
                   "conflicting_fields")
    ]  # fmt: skip
    assert transport_field_issues({}) == [
        EntryIssue((), "needs 'command' (a stdio server) or 'url' (a remote server)",
                   "missing_field")
    ]  # fmt: skip
    assert transport_field_issues({"transport": "sse"}) == [
        EntryIssue((), "transport 'sse' needs 'url'", "missing_field")
    ]
    assert transport_field_issues({"transport": "stdio", "url": "https://h"}) == [
        EntryIssue((), "needs 'command' (a stdio server) or 'url' (a remote server)",
                   "missing_field"),
        EntryIssue(("url",), "'url' only applies to remote servers", "conflicting_fields"),
    ]  # fmt: skip
    assert transport_field_issues({"url": "https://h", "env": {}, "args": [], "headers": {}}) == [
        EntryIssue(("args",), "'args' only applies to stdio servers", "conflicting_fields"),
        EntryIssue(("env",), "'env' only applies to stdio servers", "conflicting_fields"),
    ]
    assert transport_field_issues({"command": "sh", "headers": {}, "auth": {}}) == [
        EntryIssue(("headers",), "'headers' only applies to remote servers", "conflicting_fields"),
        EntryIssue(("auth",), "'auth' only applies to remote servers", "conflicting_fields"),
    ]
    assert transport_field_issues({"transport": "pipe"}) == []
    assert transport_field_issues({"transport": ["sse"]}) == []
    assert transport_field_issues({"command": "sh", "transport": None}) == []
    assert transport_field_issues({"url": "https://h", "transport": "sse"}) == []


def test_transport_rules_reach_the_entry() -> None:
    assert issues({"url": "https://h.example", "cwd": "/"}) == [
        ("s.cwd", "'cwd' only applies to stdio servers", "conflicting_fields")
    ]


def test_a_valid_entry_is_built_whole() -> None:
    entry = built(
        {"command": "npx", "args": ["-y", "p"], "env": {"A": "${A}"}, "cwd": "/tmp",
         "inherit_env": ["HOME"], "allow_literal": ["A"], "groups": ["dev"],
         "description": "d", "timeout": 5}
    )  # fmt: skip
    assert entry == ServerEntry(
        command="npx", args=("-y", "p"), env={"A": "${A}"}, cwd="/tmp", inherit_env=("HOME",),
        allow_literal=("A",), groups=("dev",), description="d", timeout=5,
    )  # fmt: skip
    remote = built({"url": "https://h.example/mcp", "headers": {"X-K": "${K}"}})
    assert remote == ServerEntry(url="https://h.example/mcp", headers={"X-K": "${K}"})


# --- another tool's file -------------------------------------------------------------------


def test_another_tools_file_is_recognised() -> None:
    problem = wrapper_problem({"mcpServers": {"gh": {"command": "npx"}}})
    assert problem == Problem(
        "error",
        "wrapped_servers",
        'this looks like a Claude Desktop-style config (servers under "mcpServers"); in '
        "external-mcps.json every server sits at the top level, keyed by its name",
        "mcpServers",
        hint='move the entries inside "mcpServers" up one level',
    )
    vscode = wrapper_problem({"servers": {"a": {"url": "https://h"}}})
    assert vscode is not None and vscode.path == "servers"
    assert 'a VS Code-style config (servers under "servers")' in vscode.message
    zed = wrapper_problem({"context_servers": {"a": 1, "b": {"command": "x"}}})
    assert zed is not None and 'a Zed-style config (servers under "context_servers")' in zed.message


def test_a_server_named_like_a_wrapper_is_not_one() -> None:
    assert wrapper_problem({"servers": {"command": "npx"}}) is None
    assert wrapper_problem({"servers": {"url": "https://h"}}) is None
    assert wrapper_problem({"mcpServers": {"a": {"args": []}}}) is None
    assert wrapper_problem({"mcpServers": ["x"]}) is None
    assert wrapper_problem({"gh": {"command": "npx"}}) is None
    # the first wrapper that holds no server does not stop the search
    assert wrapper_problem({"mcpServers": {}, "servers": {"a": {"command": "x"}}}) is not None


def test_a_list_field_of_the_wrong_type_is_reported_at_the_field() -> None:
    want = "expected an array of strings, got a string"
    assert issues({"command": "sh", "allow_literal": "A"}) == [
        ("s.allow_literal", want, "wrong_type")
    ]
    assert issues({"command": "sh", "groups": "dev"}) == [("s.groups", want, "wrong_type")]
    assert issues({"command": "sh", "tools": {"allow": "x"}}) == [
        ("s.tools.allow", want, "wrong_type")
    ]
    assert issues({"command": "sh", "inherit_env": [1]}) == [
        ("s.inherit_env[0]", "expected a string, got a number", "wrong_type")
    ]


def test_a_name_of_the_longest_length_is_refused_for_its_characters() -> None:
    name = "a b" + "x" * 61
    assert check_name(name) == f"server name {name!r} may only contain letters, digits, '_' and '-'"
    assert check_group_name(name) == (
        f"group name {name!r} may only contain letters, digits, '_' and '-'"
    )
    assert check_group_name("x" * 65) == "group name is 65 characters long; the limit is 64"


def test_a_server_named_like_a_wrapper_with_nested_objects_is_not_one() -> None:
    # A server really called "servers": its env or headers may hold any names.
    assert wrapper_problem({"servers": {"command": "sh", "env": {"url": "u"}}}) is None
    assert wrapper_problem({"servers": {"url": "https://h", "headers": {"command": "c"}}}) is None
