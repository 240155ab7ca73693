"""Tools through the library: argument checking, call timeouts, non-text content."""

from __future__ import annotations

import base64
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import ProbeFailed, ToolArgumentsError
from mcpctl.probe import ToolInfo, call_tool, check_arguments
from mcpctl.probe.tools import content_marker
from tests.conftest import SERVERS

PY = sys.executable
CALL_LOG_VAR = "BASIC_SERVER_CALL_LOG"

GET_TIME = ToolInfo(
    "get_time",
    "",
    {
        "type": "object",
        "properties": {"timezone": {"type": "string"}, "hours": {"type": "integer"}},
        "required": ["timezone"],
    },
)
STRICT = ToolInfo(
    "strict",
    "",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)


def run(fn: Any) -> Any:
    return anyio.run(fn)


def basic_stdio(log: Path | None = None) -> ServerEntry:
    env = {CALL_LOG_VAR: str(log)} if log is not None else {}
    return ServerEntry(command=PY, args=(str(SERVERS / "basic.py"),), env=env, timeout=20000)


def arguments_error(tool: ToolInfo, arguments: dict[str, Any]) -> str:
    with pytest.raises(ToolArgumentsError) as info:
        check_arguments(tool, arguments)
    assert info.value.exit_code == 2 and info.value.code == "invalid_arguments"
    assert info.value.hint is not None and info.value.hint.startswith("its parameters: ")
    return info.value.message


# --- check_arguments on its own ------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (GET_TIME, {}, "get_time: missing required argument timezone (string)"),
        (GET_TIME, {"timezone": 3}, "get_time: argument timezone must be string, got an integer"),
        (GET_TIME, {"timezone": "UTC", "hours": "3"},
         "get_time: argument hours must be integer, got a string"),
        (GET_TIME, {"timezone": "UTC", "hour": 3},
         "get_time: unknown argument 'hour' (did you mean 'hours'?)"),
        (GET_TIME, {"timezon": "UTC"}, "get_time: missing required argument timezone (string); "
                                       "unknown argument 'timezon' (did you mean 'timezone'?)"),
        (STRICT, {"path": "/x", "verbose": True}, "strict: unknown argument 'verbose'"),
        (STRICT, {"path": "/x", "tag": ["a"]}, "strict: unknown argument 'tag' (did you mean 'tags'?)"),
        (STRICT, {"path": "/x", "tags": ["a", 2]}, "strict: argument tags.1 must be string, got an integer"),
    ],
)  # fmt: skip
def test_check_arguments_messages(tool: ToolInfo, arguments: dict[str, Any], message: str) -> None:
    assert arguments_error(tool, arguments) == message


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (GET_TIME, {"timezone": "UTC"}),
        (GET_TIME, {"timezone": "UTC", "hours": 3}),
        # The schema allows other arguments: one unlike any declared name is the server's.
        (GET_TIME, {"timezone": "UTC", "verbose": True}),
        (ToolInfo("open", "", {"type": "object", "additionalProperties": True,
                               "properties": {"hours": {"type": "integer"}}}), {"hour": 1}),
        (ToolInfo("any", "", {"type": "object"}), {"x": 1}),
        # A schema that is itself invalid is not held against the call.
        (ToolInfo("bad", "", {"type": "objekt"}), {"x": 1}),
    ],
)  # fmt: skip
def test_check_arguments_accepts(tool: ToolInfo, arguments: dict[str, Any]) -> None:
    check_arguments(tool, arguments)


def test_an_arguments_error_stays_short_whatever_the_schema_names() -> None:
    names = ["p" * 10_000 + str(i) for i in range(5)]
    tool = ToolInfo("long", "", {"type": "object", "required": names,
                                 "properties": {n: {"type": "string"} for n in names}})  # fmt: skip
    with pytest.raises(ToolArgumentsError) as info:
        check_arguments(tool, {})
    assert len(info.value.message) <= 300
    assert info.value.hint is not None and len(info.value.hint) <= 300


def test_check_arguments_reports_three_problems_and_counts_the_rest() -> None:
    schema = {
        "type": "object",
        "properties": {k: {"type": "integer"} for k in "abcde"},
        "required": list("abcde"),
    }
    message = arguments_error(ToolInfo("many", "", schema), {})
    assert message.startswith("many: missing required argument a (integer); ")
    assert message.endswith(" (and 2 more)") and "\n" not in message


# --- content markers -----------------------------------------------------------------------


def _b64(size: int) -> str:
    return base64.b64encode(bytes(size)).decode()


@pytest.mark.parametrize(
    ("block", "marker"),
    [
        ({"type": "image", "mimeType": "image/png", "data": _b64(1234)}, "[image/png, 1,234 bytes]"),
        ({"type": "image", "mimeType": "image/png", "data": _b64(68)}, "[image/png, 68 bytes]"),
        ({"type": "audio", "mimeType": "audio/wav", "data": _b64(1)}, "[audio/wav, 1 byte]"),
        ({"type": "image", "mimeType": "image/gif"}, "[image/gif]"),
        ({"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain",
                                           "text": "héllo"}}, "[resource file:///a.txt (text/plain), 6 bytes]"),
        ({"type": "resource", "resource": {"uri": "memo://b", "blob": _b64(10)}}, "[resource memo://b, 10 bytes]"),
        ({"type": "resource_link", "uri": "file:///x", "name": "x"}, "[resource link file:///x]"),
        ({"type": "hologram"}, "[hologram content]"),
    ],
)  # fmt: skip
def test_content_marker(block: dict[str, Any], marker: str) -> None:
    assert content_marker(block) == marker


# --- argument checking before a call -------------------------------------------------------


@pytest.mark.slow
def test_arguments_are_checked_before_the_call_reaches_the_server(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    entry = basic_stdio(log)
    with pytest.raises(ToolArgumentsError) as info:
        run(lambda: call_tool("basic", entry, "record", {"times": 2}))
    assert info.value.message == "record: missing required argument note (string)"
    assert info.value.hint == "its parameters: note*: string, times: integer"
    with pytest.raises(ToolArgumentsError) as info:
        run(lambda: call_tool("basic", entry, "record", {"note": "x", "times": "two"}))
    assert "argument times must be integer, got a string" in info.value.message
    with pytest.raises(ToolArgumentsError) as info:
        run(lambda: call_tool("basic", entry, "record", {"note": "x", "time": 2}))
    assert "unknown argument 'time' (did you mean 'times'?)" in info.value.message
    assert not log.exists(), "a call with bad arguments reached the server"
    # The same server records a call with good arguments: the log above proves something.
    res = run(lambda: call_tool("basic", entry, "record", {"note": "ok", "times": 2}))
    assert not res.is_error
    assert log.read_text() == "ok\nok\n"


def test_arguments_built_from_the_schema() -> None:
    seen: list[ToolInfo] = []

    def build(info: ToolInfo) -> dict[str, Any]:
        seen.append(info)
        return {"a": 2, "b": 40}

    res = run(lambda: call_tool("basic", basic_stdio(), "add", build))
    assert [t.name for t in seen] == ["add"]
    assert not res.is_error and res.structured == {"result": 42}


# --- timeouts and content, over HTTP (no start-up inside the timeout) ----------------------


def test_a_tool_that_does_not_answer_in_time(http_server: Any) -> None:
    entry = ServerEntry(url=http_server("streamable-http") + "/mcp", timeout=10000)
    start = time.monotonic()
    with pytest.raises(ProbeFailed) as info:
        run(lambda: call_tool("basic", entry, "slow", {"seconds": 30}, timeout=1))
    assert time.monotonic() - start < 1 + 2
    err = info.value
    assert err.reason == "timeout" and err.exit_code == 3
    assert err.message == "basic: the tool 'slow' did not answer within 1 s"
    assert err.hint is not None and "--timeout" in err.hint and "slow to start" not in err.hint
    res = run(lambda: call_tool("basic", entry, "slow", {"seconds": 0.1}, timeout=10))
    assert res.text == "slept 0.1 s"


def test_non_text_content_is_a_marker_in_text_and_whole_in_content(http_server: Any) -> None:
    entry = ServerEntry(url=http_server("streamable-http") + "/mcp", timeout=10000)

    async def calls() -> dict[str, Any]:
        return {
            tool: await call_tool("basic", entry, tool) for tool in ("image", "audio", "resource")
        }

    results = run(calls)
    image = results["image"]
    assert len(image.content) == 1 and image.content[0]["type"] == "image"
    png = base64.b64decode(image.content[0]["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert image.text == f"[image/png, {len(png):,} bytes]"
    audio = results["audio"]
    wav = base64.b64decode(audio.content[0]["data"])
    assert wav.startswith(b"RIFF") and audio.content[0]["mimeType"] == "audio/wav"
    assert audio.text == f"[audio/wav, {len(wav):,} bytes]"
    resource = results["resource"]
    assert resource.text.splitlines() == [
        "two resources follow",
        "[resource memo://note (text/plain), 15 bytes]",
        "[resource memo://blob (application/octet-stream), 256 bytes]",
    ]
    assert [b["type"] for b in resource.content] == ["text", "resource", "resource"]
    assert resource.content[1]["resource"]["text"] == "hello, resource"
    assert base64.b64decode(resource.content[2]["resource"]["blob"]) == bytes(range(256))


# --- what each kind of mistake says -------------------------------------------------------

TYPED = ToolInfo(
    "typed",
    "",
    {
        "type": "object",
        "properties": {
            "n": {"type": ["string", "null"]},
            "f": {"type": "number"},
            "b": {"type": "boolean"},
            "a": {"type": "array"},
            "o": {"type": "object"},
            "z": {"type": "null"},
            "s": {"type": "string", "enum": ["x", "y"]},
            "m": {"type": "integer", "minimum": 1},
            "inner": {
                "type": "object",
                "properties": {"deep": {"type": "string"}},
                "required": ["deep"],
                "additionalProperties": False,
            },
        },
    },
)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"n": 1}, "typed: argument n must be string|null, got an integer"),
        ({"f": "1"}, "typed: argument f must be number, got a string"),
        ({"b": 1.5}, "typed: argument b must be boolean, got a number"),
        ({"a": {}}, "typed: argument a must be array, got an object"),
        ({"o": []}, "typed: argument o must be object, got an array"),
        ({"z": True}, "typed: argument z must be null, got a boolean"),
        ({"s": "w"}, "typed: argument s: 'w' is not one of ['x', 'y']"),
        ({"m": 0}, "typed: argument m: 0 is less than the minimum of 1"),
        # Inside an argument: the place named, the validator's own words.
        ({"inner": {}}, "typed: argument inner: 'deep' is a required property"),
        ({"inner": {"deep": "x", "deeep": 1}},
         "typed: argument inner: Additional properties are not allowed ('deeep' was unexpected)"),
    ],
)  # fmt: skip
def test_each_kind_of_mistake_is_one_line(arguments: dict[str, Any], message: str) -> None:
    assert arguments_error(TYPED, arguments) == message


def test_a_value_of_no_json_type_is_named_by_its_type() -> None:
    assert arguments_error(TYPED, {"f": (1, 2)}) == "typed: argument f must be number, got tuple"


def test_the_arguments_themselves_are_named_all() -> None:
    tool = ToolInfo("t", "", {"type": "object", "minProperties": 2, "properties": {}})
    assert (
        arguments_error(tool, {"a": 1})
        == "t: argument (all): {'a': 1} does not have enough properties"
    )
    tool = ToolInfo("t", "", {"type": "array"})
    assert arguments_error(tool, {}) == "t: argument (all) must be array, got an object"


def test_required_arguments_of_a_schema_without_properties() -> None:
    tool = ToolInfo("t", "", {"type": "object", "required": ["a", "b"]})
    assert arguments_error(tool, {"b": 1}) == "t: missing required argument a (any)"


def test_the_same_problem_is_said_once_and_three_are_not_more() -> None:
    schema = {
        "type": "object",
        "properties": {k: {"type": "integer"} for k in "abc"},
        "required": list("abc"),
        "allOf": [{"required": ["a"]}],
    }
    message = arguments_error(ToolInfo("t", "", schema), {})
    assert message == (
        "t: missing required argument a (integer); missing required argument b (integer); "
        "missing required argument c (integer)"
    )


def test_problems_are_in_the_order_of_the_arguments_paths() -> None:
    schema = {
        "type": "object",
        "properties": {"b": {"type": "integer"}, "a": {"type": "integer"}},
    }
    assert arguments_error(ToolInfo("t", "", schema), {"b": "x", "a": "y"}) == (
        "t: argument a must be integer, got a string; argument b must be integer, got a string"
    )


def test_the_hint_lists_the_parameters_or_says_none() -> None:
    tool = ToolInfo("t", "", {"type": "object", "minProperties": 1})
    with pytest.raises(ToolArgumentsError) as info:
        check_arguments(tool, {})
    assert info.value.hint == "its parameters: none"
    with pytest.raises(ToolArgumentsError) as info:
        check_arguments(GET_TIME, {})
    assert info.value.hint == f"its parameters: {GET_TIME.params_summary(20)}"


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        # Other arguments allowed by pattern: a near name is the server's to judge.
        ({"type": "object", "properties": {"hours": {}}, "patternProperties": {"^x": {}}},
         {"hour": 1}),
        # Both the near name and the name itself given: not a typo.
        ({"type": "object", "properties": {"hours": {}}}, {"hour": 1, "hours": 2}),
        # No properties named: nothing to be near.
        ({"type": "object", "properties": ["hours"]}, {"hour": 1}),
        # An unresolvable reference: the server judges.
        ({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}, {"a": 1}),
    ],
)  # fmt: skip
def test_no_typo_is_claimed_where_the_schema_allows_it(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    check_arguments(ToolInfo("t", "", schema), arguments)


def test_an_unknown_argument_of_a_strict_schema_without_properties() -> None:
    tool = ToolInfo("t", "", {"type": "object", "additionalProperties": False})
    assert arguments_error(tool, {"x": 1}) == "t: unknown argument 'x'"


@pytest.mark.parametrize(
    ("block", "marker"),
    [
        ({"type": "image", "mimeType": "image/png", "data": 12}, "[image/png]"),
        ({"type": "image", "data": _b64(2)}, "[image, 2 bytes]"),
        ({"type": "audio", "mimeType": "", "data": _b64(0)}, "[audio, 0 bytes]"),
        ({"type": "audio", "data": _b64(5)}, "[audio, 5 bytes]"),
        ({"type": "resource", "resource": {"uri": "memo://c"}}, "[resource memo://c]"),
        ({"type": "resource", "resource": {"uri": "memo://d", "text": 5, "blob": _b64(3)}},
         "[resource memo://d, 3 bytes]"),
        ({"type": "resource", "resource": {"uri": "memo://e", "text": ""}}, "[resource memo://e, 0 bytes]"),
        ({"type": "resource", "resource": {"mimeType": "text/plain", "text": "a"}},
         "[resource ? (text/plain), 1 byte]"),
        ({"type": "resource", "resource": "memo://f"}, "[resource ?]"),
        ({"type": "resource_link"}, "[resource link ?]"),
        ({}, "[content content]"),
    ],
)  # fmt: skip
def test_content_markers_of_incomplete_blocks(block: dict[str, Any], marker: str) -> None:
    assert content_marker(block) == marker
