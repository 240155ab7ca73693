"""A tool as a server lists it: its one-line parameter summary, whether it runs as a task,
its JSON form, and the listing of every page of a real server's tools."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.probe import list_tools, probe
from mcpctl.probe.healthstatus import ProbeResult
from mcpctl.probe.toolinfo import ToolInfo, type_of
from tests.conftest import SERVERS

PY = sys.executable


def schema(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"type": "object", "properties": props}
    if required is not None:
        found["required"] = required
    return found


def test_the_summary_marks_required_parameters_with_their_types() -> None:
    tool = ToolInfo(
        "weather",
        "",
        schema(
            {"city": {"type": "string"}, "days": {"type": "integer"}, "units": {}},
            ["city", "units"],
        ),
    )
    assert tool.params_summary() == "city*: string, days: integer, units*: any"


def test_the_summary_shows_six_parameters_then_how_many_more() -> None:
    props = {f"p{i}": {"type": "string"} for i in range(9)}
    tool = ToolInfo("many", "", schema(props))
    shown = ", ".join(f"p{i}: string" for i in range(6))
    assert tool.params_summary() == shown + ", +3 more"
    assert tool.params_summary(2) == "p0: string, p1: string, +7 more"
    assert tool.params_summary(9) == ", ".join(f"p{i}: string" for i in range(9))


def test_exactly_six_parameters_need_no_more() -> None:
    props = {f"p{i}": {"type": "number"} for i in range(6)}
    assert ToolInfo("six", "", schema(props)).params_summary().endswith("p5: number")


@pytest.mark.parametrize(
    "input_schema",
    [{}, {"type": "object"}, {"properties": None, "required": None}, schema({}, [])],
)
def test_a_tool_without_parameters_summarises_as_nothing(input_schema: dict[str, Any]) -> None:
    assert ToolInfo("none", "", input_schema).params_summary() == ""


def test_required_may_be_null() -> None:
    tool = ToolInfo("t", "", {"properties": {"a": {"type": "string"}}, "required": None})
    assert tool.params_summary() == "a: string"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"type": "string"}, "string"),
        ({"type": ["integer", "null"]}, "integer|null"),
        ({"type": [1, None]}, "1|None"),
        ({"enum": ["a"]}, "any"),
        ({}, "any"),
        (True, "any"),
        ("string", "any"),
        (None, "any"),
    ],
)
def test_type_of(spec: object, expected: str) -> None:
    assert type_of(spec) == expected


@pytest.mark.parametrize(
    ("raw", "support"),
    [
        ({"execution": {"taskSupport": "required"}}, "required"),
        ({"execution": {"taskSupport": "optional"}}, "optional"),
        ({"execution": {"taskSupport": "forbidden"}}, None),
        ({"execution": {"taskSupport": "always"}}, None),
        ({"execution": {}}, None),
        ({"execution": "required"}, None),
        ({"execution": None}, None),
        ({}, None),
    ],
)
def test_task_support_is_read_from_the_tool_as_sent(
    raw: dict[str, Any], support: str | None
) -> None:
    assert ToolInfo("t", "", {}, raw=raw).task_support == support


def test_the_json_form() -> None:
    tool = ToolInfo(
        "build",
        "Builds it.",
        {"type": "object"},
        "Build",
        {"name": "build", "execution": {"taskSupport": "optional"}},
    )
    assert tool.to_dict() == {
        "name": "build",
        "title": "Build",
        "description": "Builds it.",
        "input_schema": {"type": "object"},
        "task_support": "optional",
    }


def test_what_the_server_sent_neither_compares_nor_shows() -> None:
    plain = ToolInfo("t", "d", {"type": "object"})
    assert plain.title is None and plain.raw == {}
    sent = ToolInfo("t", "d", {"type": "object"}, raw={"name": "t", "x-extra": 1})
    assert sent == plain
    assert repr(sent) == repr(plain) and "x-extra" not in repr(sent)
    assert ToolInfo("t", "d", {"type": "object"}, "T") != plain


def test_every_page_of_a_servers_tools_is_listed_with_its_fields() -> None:
    entry = ServerEntry(command=PY, args=(str(SERVERS / "paged.py"),), timeout=20000)

    async def listed() -> list[ToolInfo]:
        with anyio.fail_after(60):
            return await list_tools("paged", entry)

    tools = anyio.run(listed)
    assert [t.name for t in tools] == [f"tool_{i:02d}" for i in range(25)]
    first, last = tools[0], tools[-1]
    assert (first.title, first.description) == ("The first tool", "tool number 0")
    assert (last.title, last.description) == (None, "")
    assert first.input_schema == {"type": "object"}
    assert first.raw["name"] == "tool_00" and first.raw["title"] == "The first tool"
    assert tools[10].raw["description"] == "tool number 10"


def overreach(mode: str, **env: str) -> ServerEntry:
    """tests/servers/overreach.py in ``mode`` (raw JSON-RPC: what the SDK's servers never send)."""
    return ServerEntry(
        command=PY, args=(str(SERVERS / "overreach.py"), mode), env=env, timeout=20000
    )


def test_a_server_repeating_its_cursor_ends_the_listing_with_a_warning() -> None:
    async def probed() -> ProbeResult:
        with anyio.fail_after(60):
            return await probe("cursor", overreach("same-cursor"))

    result = anyio.run(probed)
    assert [t.name for t in result.tools] == ["again"]
    assert "tools: the server sent the cursor 'again' again; the listing ends there" in (
        result.warnings
    )


def test_a_schema_deeper_than_the_sdk_checks_is_listed_as_sent() -> None:
    async def listed() -> list[ToolInfo]:
        with anyio.fail_after(60):
            return await list_tools("deep", overreach("deep", OVERREACH_DEPTH="150"))

    tools = {t.name: t for t in anyio.run(listed)}
    schema, levels = tools["tool_x"].input_schema, 0
    while schema.get("type") == "object":
        schema, levels = schema["properties"]["a"], levels + 1
    assert (levels, schema) == (150, {"type": "string"})
    assert tools["flat"].input_schema["type"] == "object"
