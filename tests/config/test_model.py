"""The fast checker of mcpctl.config.checks agrees with the pydantic model of record."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mcpctl.config.checks import check_name, entry_from_data
from mcpctl.config.model import (
    AuthConfig,
    Config,
    EntryIssue,
    Problem,
    ServerEntry,
    Source,
    ToolFilter,
    format_path,
)
from mcpctl.config.schema import ServerEntryModel

# --- generated entries: mostly plausible, often slightly wrong ------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 4_000_000), st.floats(allow_nan=False),
    st.sampled_from(["", " ", "sh", "npx", "https://h.example/mcp", "http://127.0.0.1:1/x",
                     "ftp://x", "${URL}/mcp", "stdio", "sse", "streamable-http", "Authorization"]),
)  # fmt: skip
strings = st.one_of(st.text(max_size=8), st.sampled_from(["sh", "${X}", "a=b", "X-Key"]))
string_lists = st.one_of(st.lists(strings, max_size=3), st.lists(scalars, max_size=2), scalars)
string_maps = st.one_of(
    st.dictionaries(st.sampled_from(["A", "B_1", "A=B", "", "X-Api-Key", "bad header"]), strings, max_size=3),
    st.dictionaries(st.sampled_from(["A", "B"]), scalars, max_size=2),
    scalars,
)  # fmt: skip
auths = st.one_of(
    scalars,
    st.fixed_dictionaries(
        {"type": st.sampled_from(["none", "bearer", "header", "basic", "oauth", "magic"])},
        optional={
            "token": strings, "name": strings, "value": strings, "username": strings,
            "password": strings, "scopes": string_lists, "client_id": strings,
            "client_secret": strings, "client_metadata_url": st.one_of(strings, scalars),
            "callback_port": st.one_of(st.integers(-1, 70000), scalars),
            "extra": scalars,
        },
    ),
)  # fmt: skip
entries = st.fixed_dictionaries(
    {},
    optional={
        "command": st.one_of(strings, scalars),
        "args": string_lists,
        "env": string_maps,
        "cwd": st.one_of(strings, scalars),
        "inherit_env": st.one_of(scalars, string_lists, st.lists(st.sampled_from(["HOME", "NODE_OPTIONS", "1X", "A-B"]), max_size=3)),
        "url": st.one_of(scalars, st.sampled_from(["https://a.example/mcp", "http://localhost:3000/sse"])),
        "transport": st.one_of(scalars, st.sampled_from(["stdio", "sse", "streamable-http"])),
        "headers": string_maps,
        "allow_literal": st.one_of(scalars, string_lists, st.lists(st.sampled_from(["A", "X-Key", "A=B", ""]), max_size=3)),
        "auth": auths,
        "timeout": st.one_of(st.integers(-2, 4_000_000), scalars),
        "protocol": st.one_of(scalars, st.sampled_from(["auto", "modern", "legacy", "Modern"])),
        "sensitive": scalars,
        "description": st.one_of(strings, scalars),
        "enabled": scalars,
        "groups": st.one_of(scalars, string_lists, st.lists(st.sampled_from(["dev", "a_b-9", "", "a b", "x" * 65]), max_size=3)),
        "tools": st.one_of(scalars, st.fixed_dictionaries({}, optional={"allow": string_lists, "deny": string_lists, "x": scalars})),
        "source": st.one_of(scalars, st.fixed_dictionaries({}, optional={"registry": strings, "name": strings, "version": strings, "y": scalars})),
        "comand": scalars,
    },
)  # fmt: skip


good_strings = st.sampled_from(["sh", "npx", "${X}", "a b", "x=y", "-y", "\u00e9t\u00e9"])
valid_stdio = st.fixed_dictionaries(
    {"command": good_strings},
    optional={
        "args": st.lists(good_strings, max_size=3),
        "env": st.dictionaries(st.sampled_from(["A", "B_1", "PATH"]), good_strings, max_size=2),
        "cwd": good_strings,
        "allow_literal": st.lists(
            st.sampled_from(["A", "B_1"]), min_size=1, max_size=2, unique=True
        ),
        "inherit_env": st.one_of(
            st.booleans(),
            st.lists(
                st.sampled_from(["HOME", "NODE_OPTIONS", "UV_CACHE_DIR"]), max_size=2, unique=True
            ),
        ),
        "transport": st.just("stdio"),
        "timeout": st.integers(1, 3_600_000),
        "protocol": st.sampled_from(["auto", "modern", "legacy"]),
        "sensitive": st.booleans(),
        "description": st.text(max_size=5),
        "enabled": st.booleans(),
        "groups": st.lists(st.sampled_from(["dev", "work", "a_b-9"]), max_size=3),
        "tools": st.fixed_dictionaries(
            {},
            optional={
                "allow": st.lists(good_strings, max_size=2),
                "deny": st.lists(good_strings, max_size=2),
            },
        ),
        "source": st.fixed_dictionaries(
            {"registry": good_strings, "name": good_strings, "version": good_strings}
        ),
    },
)
valid_remote = st.fixed_dictionaries(
    {"url": st.sampled_from(["https://h.example/mcp", "http://127.0.0.1:9/sse", "${BASE}/mcp"])},
    optional={
        "transport": st.sampled_from(["sse", "streamable-http"]),
        "headers": st.dictionaries(
            st.sampled_from(["X-Key", "Authorization"]), good_strings, max_size=2
        ),
        "auth": st.one_of(
            st.just({"type": "none"}),
            st.fixed_dictionaries({"type": st.just("bearer"), "token": good_strings}),
            st.fixed_dictionaries(
                {"type": st.just("header"), "value": good_strings}, optional={"name": good_strings}
            ),
            st.fixed_dictionaries(
                {"type": st.just("basic"), "username": good_strings, "password": good_strings}
            ),
            st.fixed_dictionaries(
                {"type": st.just("oauth")},
                optional={
                    "scopes": st.lists(good_strings, max_size=2),
                    "client_id": good_strings,
                    "callback_port": st.integers(1, 65535),
                },
            ),
        ),
        "timeout": st.integers(1, 3_600_000),
        "protocol": st.sampled_from(["auto", "modern", "legacy"]),
        "description": st.text(max_size=5),
        "groups": st.lists(st.sampled_from(["dev", "work"]), min_size=1, max_size=2),
    },
)


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    entry: dict[str, Any] = dict(draw(st.one_of(valid_stdio, valid_remote)))
    for _ in range(draw(st.integers(0, 2))):
        key = draw(
            st.sampled_from(
                [*entry, "command", "url", "env", "headers", "auth", "comand", "timeout", "groups"]
            )
        )
        action = draw(st.sampled_from(["replace", "delete", "nest"]))
        if action == "delete":
            entry.pop(key, None)
        elif action == "replace":
            entry[key] = draw(st.one_of(scalars, string_lists, string_maps, auths))
        elif isinstance(entry.get(key), dict) and entry[key]:
            inner = dict(entry[key])
            inner[draw(st.sampled_from([*inner, "type", "extra"]))] = draw(scalars)
            entry[key] = inner
    return entry


def pydantic_accepts(data: Any) -> bool:
    try:
        ServerEntryModel.model_validate(data)
    except ValidationError:
        return False
    return True


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(entries, mutated()))
def test_fast_checker_accepts_exactly_what_pydantic_accepts(data: dict[str, Any]) -> None:
    entry, issues = entry_from_data("x", data)
    assert (entry is not None) == pydantic_accepts(data), (data, issues)
    if entry is not None:
        # What we would write back is accepted too and round-trips.
        again, problems = entry_from_data("x", entry.to_data())
        assert problems == [] and again == entry


@pytest.mark.parametrize(
    "data",
    [
        {"command": "npx", "args": ["-y", "x"], "env": {"K": "${K}"}, "timeout": 15000,
         "sensitive": False, "description": "d"},
        {"url": "https://h.example/mcp", "headers": {"X-Key": "${KEY}"}, "auth": {"type": "oauth", "scopes": ["read"]}},
        {"url": "http://localhost:1/sse", "transport": "sse", "auth": {"type": "header", "name": "X-Api-Key", "value": "${K}"}},
        {"command": "uvx", "tools": {"allow": ["get_*"], "deny": ["get_secret"]},
         "source": {"registry": "official", "name": "io.github.x/y", "version": "1.2.3"}, "enabled": False},
    ],
)  # fmt: skip
def test_round_trip_known_entries(data: dict[str, Any]) -> None:
    entry, issues = entry_from_data("x", data)
    assert issues == [] and entry is not None
    assert pydantic_accepts(data)
    out = entry.to_data()
    assert entry_from_data("x", out)[0] == entry
    if "sensitive" not in data or data["sensitive"] is False:
        assert "sensitive" not in out  # defaults are left out


def test_stdio_entries_written_use_only_the_original_fields() -> None:
    entry = ServerEntry(
        command="npx", args=("-y", "p"), env={"A": "${A}"}, timeout=1000, description="d"
    )
    assert set(entry.to_data()) <= {"command", "args", "env", "timeout", "sensitive", "description"}


def test_effective_transport_and_timeout() -> None:
    assert ServerEntry(command="x").effective_transport == "stdio"
    assert ServerEntry(url="https://h").effective_transport == "streamable-http"
    assert ServerEntry(url="https://h", transport="sse").is_remote
    assert ServerEntry(command="x").timeout_ms == 30000


def test_tool_filter() -> None:
    f = ToolFilter(allow=("get_*", "list_*"), deny=("get_secret",))
    assert f.allows("get_user") and f.allows("list_x")
    assert not f.allows("get_secret") and not f.allows("delete_x")
    assert ToolFilter().allows("anything")


def test_auth_map_values_and_data() -> None:
    auth = AuthConfig(type="header", value="${K}")
    assert auth.to_data() == {"type": "header", "value": "${K}"}
    assert auth.map_values(str.lower).value == "${k}"
    assert AuthConfig(type="header", name="X-K", value="v").to_data()["name"] == "X-K"


def test_names() -> None:
    assert check_name("a-b_C9") is None
    assert check_name("") is not None and check_name("a b") is not None
    assert check_name("x" * 64) is None and "64" in (check_name("x" * 65) or "")


def test_format_path() -> None:
    assert format_path(()) == "$"
    assert format_path(("a", "args", 2)) == "a.args[2]"
    assert format_path(("a", "env", "A=B")) == "a.env['A=B']"


def test_source_model() -> None:
    entry, _ = entry_from_data(
        "x", {"command": "x", "source": {"registry": "r", "name": "n", "version": "1"}}
    )
    assert entry is not None and entry.source == Source("r", "n", "1")


def test_null_is_not_a_value() -> None:
    for key in ("command", "args", "env", "description", "transport", "timeout", "tools"):
        data = {"command": "x", key: None}
        assert entry_from_data("x", data)[0] is None
        assert not pydantic_accepts(data)


def test_groups_are_kept_in_order_and_checked() -> None:
    entry, issues = entry_from_data("x", {"command": "sh", "groups": ["work", "dev"]})
    assert issues == [] and entry is not None and entry.groups == ("work", "dev")
    assert entry.to_data()["groups"] == ["work", "dev"]
    assert list(entry.to_data()).index("groups") > list(entry.to_data()).index("command")
    assert "groups" not in ServerEntry(command="sh").to_data()
    _, issues = entry_from_data("x", {"command": "sh", "groups": ["ok", "not ok"]})
    assert [format_path(i.path) for i in issues] == ["x.groups[1]"]
    assert "group name" in issues[0].message
    assert not pydantic_accepts({"command": "sh", "groups": ["not ok"]})
    assert not pydantic_accepts({"command": "sh", "groups": "dev"})


# --- what the rest of mcpctl reads from the model ---------------------------------------


def test_format_path_quotes_what_is_not_a_plain_name() -> None:
    assert format_path(("a",)) == "a"
    assert format_path(("a", "b-c_$9")) == "a.b-c_$9"
    assert format_path((0,)) == "[0]"
    assert format_path(("a b",)) == "['a b']"
    assert format_path(("a", "x.y", 1, "z")) == "a['x.y'][1].z"


def test_a_problem_as_json_and_as_an_error() -> None:
    p = Problem("warning", "c", "m", "a.b", 3, 4, "h")
    assert p.to_dict() == {
        "severity": "warning", "code": "c", "message": "m", "path": "a.b", "line": 3,
        "column": 4, "hint": "h",
    }  # fmt: skip
    assert Problem("error", "c", "m").to_dict() == {
        "severity": "error", "code": "c", "message": "m", "path": "$", "line": None,
        "column": None, "hint": None,
    }  # fmt: skip
    assert p.to_error() == {"code": "c", "message": "a.b: m", "hint": "h"}
    assert Problem("error", "c", "m").to_error() == {"code": "c", "message": "m", "hint": None}
    assert Problem("error", "c", "m", "").to_error()["message"] == "m"


def test_a_problem_locates_itself_as_far_as_known() -> None:
    assert Problem("error", "c", "m", line=3, column=7).location("f.json") == "f.json:3:7"
    assert Problem("error", "c", "m", line=3).location("f.json") == "f.json:3:1"
    assert Problem("error", "c", "m").location("f.json") == "f.json"
    assert Problem("error", "c", "m", column=2).location("f.json") == "f.json"


def test_an_entry_issue_defaults_to_an_invalid_value() -> None:
    issue = EntryIssue(("a",), "m")
    assert (issue.code, issue.hint) == ("invalid_value", None)


def test_a_tool_filter_denies_first_and_matches_case() -> None:
    assert not ToolFilter(allow=("*",), deny=("rm*",)).allows("rm_all")
    assert ToolFilter(deny=("rm*",)).allows("list")
    assert not ToolFilter(allow=()).allows("list")
    assert not ToolFilter(allow=("Get*",)).allows("get_x")
    assert ToolFilter().deny == () and ToolFilter().allow is None


def test_map_values_changes_the_credentials_only() -> None:
    auth = AuthConfig(
        type="oauth", token="t", name="N", value="v", username="u", password="p",
        scopes=("S",), client_id="i", client_secret="s", client_metadata_url="M",
        callback_port=9,
    )  # fmt: skip
    out = auth.map_values(str.upper)
    assert out == AuthConfig(
        type="oauth", token="T", name="N", value="V", username="U", password="P",
        scopes=("S",), client_id="I", client_secret="S", client_metadata_url="M",
        callback_port=9,
    )  # fmt: skip
    assert AuthConfig(type="none").map_values(str.upper) == AuthConfig(type="none")


def test_auth_written_leaves_defaults_and_the_usual_header_out() -> None:
    assert AuthConfig(type="none", token="t").to_data() == {"type": "none"}
    assert AuthConfig(type="bearer", token="t").to_data() == {"type": "bearer", "token": "t"}
    assert AuthConfig(type="header", name="Authorization", value="v").to_data() == {
        "type": "header",
        "value": "v",
    }
    assert AuthConfig(type="basic", username="u", password="").to_data() == {
        "type": "basic", "username": "u", "password": "",
    }  # fmt: skip
    assert AuthConfig(type="oauth", scopes=("a",), callback_port=1).to_data() == {
        "type": "oauth", "scopes": ["a"], "callback_port": 1,
    }  # fmt: skip
    assert AuthConfig(type="oauth", scopes=()).to_data() == {"type": "oauth"}
    full = AuthConfig(
        type="oauth", client_id="i", client_secret="s", client_metadata_url="m", callback_port=2
    ).to_data()
    assert list(full) == ["type", "client_id", "client_secret", "client_metadata_url",
                          "callback_port"]  # fmt: skip


def test_an_entry_written_whole_in_canonical_order() -> None:
    entry = ServerEntry(
        command="c", args=("a",), env={"E": "1"}, cwd="/w", inherit_env=("HOME",),
        url="https://h", transport="sse", headers={"H": "2"}, allow_literal=("E",),
        auth=AuthConfig(type="bearer", token="t"), timeout=5, protocol="legacy",
        sensitive=True, description="", groups=("g",), enabled=False,
        tools=ToolFilter(allow=("x",), deny=("y",)), source=Source("r", "n", "1"),
    )  # fmt: skip
    assert entry.to_data() == {
        "command": "c", "args": ["a"], "env": {"E": "1"}, "cwd": "/w", "inherit_env": ["HOME"],
        "url": "https://h", "transport": "sse", "headers": {"H": "2"}, "allow_literal": ["E"],
        "auth": {"type": "bearer", "token": "t"}, "timeout": 5, "protocol": "legacy",
        "sensitive": True, "description": "", "groups": ["g"], "enabled": False,
        "tools": {"allow": ["x"], "deny": ["y"]},
        "source": {"registry": "r", "name": "n", "version": "1"},
    }  # fmt: skip
    assert list(entry.to_data()) == [
        "command", "args", "env", "cwd", "inherit_env", "url", "transport", "headers",
        "allow_literal", "auth", "timeout", "protocol", "sensitive", "description", "groups",
        "enabled", "tools", "source",
    ]  # fmt: skip


def test_an_entry_written_leaves_its_defaults_out() -> None:
    assert ServerEntry().to_data() == {}
    assert ServerEntry(inherit_env=True).to_data() == {"inherit_env": True}
    assert ServerEntry(inherit_env=()).to_data() == {}
    assert ServerEntry(tools=ToolFilter()).to_data() == {"tools": {}}
    assert ServerEntry(tools=ToolFilter(allow=())).to_data() == {"tools": {"allow": []}}
    entry = ServerEntry()
    assert entry.env == {} and entry.headers == {} and entry.enabled is True
    assert (entry.args, entry.inherit_env, entry.sensitive, entry.groups) == ((), False, False, ())
    assert entry.auth is entry.tools is entry.source is entry.timeout is None


def test_transport_and_timeout_as_set() -> None:
    assert ServerEntry(command="x", transport="sse").effective_transport == "sse"
    assert not ServerEntry(command="x").is_remote
    assert ServerEntry(url="https://h").is_remote
    assert ServerEntry(url="https://h").effective_transport == "streamable-http"
    assert ServerEntry(command="x", timeout=7).timeout_ms == 7


def test_a_config_compares_lists_and_filters_its_entries() -> None:
    on, off = ServerEntry(command="a"), ServerEntry(command="b", enabled=False)
    config = Config({"a": on, "b": off}, {"$schema": "s"})
    assert config.enabled() == {"a": on}
    assert list(config) == ["a", "b"] and len(config) == 2
    assert config == Config({"a": on, "b": off}, {"$schema": "s"})
    assert config != Config({"a": on, "b": off})
    assert config != Config({"a": on}, {"$schema": "s"})
    assert config != {"a": on}
    assert Config() == Config({}, {}) and len(Config()) == 0 and Config().extras == {}
    assert repr(Config({}, {"$x": 1})) == "Config(entries={}, extras={'$x': 1})"
    with pytest.raises(TypeError):
        hash(config)
