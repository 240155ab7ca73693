"""The fast checker of mcpctl.config.checks agrees with the pydantic model of record."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mcpctl.config.checks import check_name, entry_from_data
from mcpctl.config.model import AuthConfig, ServerEntry, Source, ToolFilter, format_path
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
