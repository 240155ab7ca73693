"""Tool listings real servers get wrong are repaired, with one warning line per tool.

tests/servers/raw.py speaks JSON-RPC without the SDK's models, so it can send what
published servers send: schemas without "type", output schemas that are not object
schemas, annotations of the wrong type, tools without names.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import ProbeFailed, ToolArgumentsError
from mcpctl.probe import call_tool, list_tools, probe
from mcpctl.probe.failures import MESSAGE_MAX
from mcpctl.probe.listingrepair import repair_tool
from tests.conftest import SERVERS

PY = sys.executable
VERSION = "2025-11-25"

EXPECTED_TOOLS = ["get_time", "read_file", "list_names", "annotated", "no_schema", "any_args"]
EXPECTED_WARNINGS = [
    "tool 'read_file': inputSchema has no \"type\"; read as an object schema",
    "tool 'list_names': outputSchema.type does not conform and was ignored",
    "tool 'annotated': annotations does not conform and was ignored",
    "tool #5: name is missing or not a string; the tool was left out",
    "tool 'no_schema': inputSchema does not conform; the tool accepts any arguments",
    "tool 'any_args': inputSchema does not conform; the tool accepts any arguments",
]
# What a pydantic ValidationError's text looks like: never in a warning or an error.
DUMP_MARKERS = ("validation error", "input_value", "errors.pydantic.dev", "For further information")


def raw(mode: str = "tools", log: Path | None = None) -> ServerEntry:
    env = {"RAW_SERVER_LOG": str(log)} if log is not None else {}
    return ServerEntry(command=PY, args=(str(SERVERS / "raw.py"), mode), env=env, timeout=10000)


def run(fn: Any) -> Any:
    return anyio.run(fn)


def assert_one_line(text: str, limit: int = MESSAGE_MAX) -> None:
    assert "\n" not in text and len(text) <= limit, text
    for marker in DUMP_MARKERS:
        assert marker not in text, text


def test_a_non_conforming_listing_keeps_the_server_healthy() -> None:
    r = run(lambda: probe("raw", raw()))
    assert r.error is None, r.error
    assert r.healthy and r.available
    assert r.server_name == "raw-test-server" and r.protocol_version == VERSION
    assert [t.name for t in r.tools] == EXPECTED_TOOLS
    assert r.tool_count == len(EXPECTED_TOOLS)
    assert r.warnings == EXPECTED_WARNINGS
    for warning in r.warnings:
        assert_one_line(warning, 200)
    assert r.to_dict()["warnings"] == EXPECTED_WARNINGS


def test_a_conforming_listing_has_no_warnings() -> None:
    r = run(lambda: probe("basic", ServerEntry(command=PY, args=(str(SERVERS / "basic.py"),))))
    assert r.healthy, r.error
    assert r.warnings == [] and "warnings" not in r.to_dict()


def test_a_repaired_tool_keeps_its_schema_and_what_the_server_sent() -> None:
    tools = {t.name: t for t in run(lambda: list_tools("raw", raw()))}
    read_file = tools["read_file"]
    assert read_file.input_schema["type"] == "object"
    assert read_file.input_schema["properties"] == {"path": {"type": "string"}}
    assert read_file.input_schema["required"] == ["path"]
    assert read_file.params_summary() == "path*: string"
    assert "type" not in read_file.raw["inputSchema"]  # as sent, unrepaired
    assert read_file.raw["inputSchema"]["$schema"].startswith("http://json-schema.org/")
    assert "outputSchema" in tools["list_names"].raw
    assert tools["annotated"].raw["annotations"] == "read-only"
    assert tools["any_args"].input_schema == {"type": "object"}


def test_calling_a_repaired_tool_works(tmp_path: Path) -> None:
    log = tmp_path / "methods.log"
    res = run(lambda: call_tool("raw", raw(log=log), "read_file", {"path": "/etc/hosts"}))
    assert not res.is_error and res.text == "contents of /etc/hosts"
    assert log.read_text().splitlines().count("tools/call") == 1
    res = run(lambda: call_tool("raw", raw(), "list_names", {}))  # its outputSchema was dropped
    assert not res.is_error and res.text == '["a", "b"]'


def test_a_repaired_schema_still_checks_arguments(tmp_path: Path) -> None:
    log = tmp_path / "methods.log"
    with pytest.raises(ToolArgumentsError) as info:
        run(lambda: call_tool("raw", raw(log=log), "read_file", {"pth": "/etc/hosts"}))
    message = info.value.message
    assert "missing required argument path (string)" in message
    assert "unknown argument 'pth' (did you mean 'path'?)" in message
    assert info.value.exit_code == 2
    methods = log.read_text().splitlines()
    assert "tools/list" in methods and "tools/call" not in methods


def test_an_initialize_result_that_breaks_the_schema_is_one_line() -> None:
    r = run(lambda: probe("raw", raw("bad-init")))
    assert not r.healthy and not r.available
    assert r.error is not None and r.error.code == "probe_failed"
    assert_one_line(r.error.message)
    assert "capabilities" in r.error.message
    assert r.error.hint and "-v" in r.error.hint
    with pytest.raises(ProbeFailed) as info:
        run(lambda: call_tool("raw", raw("bad-init"), "get_time", {"timezone": "UTC"}))
    assert info.value.reason == "probe_failed" and info.value.exit_code == 3
    assert_one_line(info.value.message)


# --- repair_tool on its own --------------------------------------------------------------


def test_repair_leaves_a_conforming_tool_alone() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {}}}
    assert repair_tool(tool, VERSION) == (tool, [])


@pytest.mark.parametrize(
    ("tool", "fixed", "note"),
    [
        (
            {"name": "t", "inputSchema": {"properties": {"a": {"type": "string"}}}},
            {"name": "t", "inputSchema": {"properties": {"a": {"type": "string"}}, "type": "object"}},
            'inputSchema has no "type"; read as an object schema',
        ),
        (
            {"name": "t", "inputSchema": {"type": "object"}, "title": 42},
            {"name": "t", "inputSchema": {"type": "object"}},
            "title does not conform and was ignored",
        ),
        (
            {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "string"}},
            {"name": "t", "inputSchema": {"type": "object"}},
            "outputSchema.type does not conform and was ignored",
        ),
        ({"inputSchema": {"type": "object"}}, None,
         "name is missing or not a string; the tool was left out"),
        ({"name": 7, "inputSchema": {"type": "object"}}, None,
         "name is missing or not a string; the tool was left out"),
        ("not a tool", None, "it is not a JSON object; the tool was left out"),
    ],
)  # fmt: skip
def test_repair_tool(tool: object, fixed: dict[str, Any] | None, note: str) -> None:
    got, notes = repair_tool(tool, VERSION)
    assert got == fixed
    assert notes == [note]


def test_repair_fixes_every_field_of_one_tool_at_once() -> None:
    tool = {
        "name": "t",
        "inputSchema": {"properties": {}},
        "annotations": "x",
        "outputSchema": {"type": "array"},
    }
    got, notes = repair_tool(tool, VERSION)
    assert got == {"name": "t", "inputSchema": {"properties": {}, "type": "object"}}
    assert sorted(notes) == sorted([
        'inputSchema has no "type"; read as an object schema',
        "annotations does not conform and was ignored",
        "outputSchema.type does not conform and was ignored",
    ])  # fmt: skip
    assert tool["inputSchema"] == {"properties": {}}  # the server's object is not changed


# --- nesting ---------------------------------------------------------------------------------


def nested_answer(depth: int, *, id_first: bool = True) -> bytes:
    schema = '{"type": "object", "properties": {"a": ' * depth + "{}" + "}}" * depth
    result = f'"result": {{"tools": [{{"name": "deep", "inputSchema": {schema}}}]}}'
    if id_first:
        return f'{{"jsonrpc": "2.0", "id": 7, {result}}}'.encode()
    return f'{{"jsonrpc": "2.0", {result}, "id": "seven"}}'.encode()


def test_a_message_deeper_than_the_sdk_parses_is_read() -> None:
    from mcp_types.jsonrpc import JSONRPCResponse

    from mcpctl.probe.listingrepair import parse_message

    message = parse_message(nested_answer(150))
    assert isinstance(message, JSONRPCResponse) and message.id == 7
    schema = message.result["tools"][0]["inputSchema"]
    for _ in range(150):
        schema = schema["properties"]["a"]
    assert schema == {}


@pytest.mark.parametrize(
    ("raw", "found"),
    [
        (nested_answer(5000), 7),
        (nested_answer(5000, id_first=False), "seven"),
        (b'{"jsonrpc": "2.0", "id": 3, "method": "x", "params": ' + b"[" * 5000, None),
        (b"[" * 5000 + b"]" * 5000, None),
    ],
)
def test_a_message_no_parser_follows_names_its_request(raw: bytes, found: object) -> None:
    from mcpctl.probe.listingrepair import TooDeep, parse_message, too_deep_answer

    with pytest.raises(TooDeep) as caught:
        parse_message(raw)
    assert caught.value.id == found
    answer = too_deep_answer(caught.value)
    assert (answer is None) == (found is None)
    if answer is not None:
        assert answer.message.id == found and "nested too deeply" in answer.message.error.message


def test_a_message_the_transport_could_not_read_fails_what_waits_at_once() -> None:
    from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest
    from pydantic import ValidationError

    from mcpctl.probe.listingrepair import Listing, tolerant_streams
    from mcpctl.sdk import SessionMessage

    try:  # what an HTTP transport puts on the stream for a message it could not parse
        import mcp_types

        mcp_types.jsonrpc_message_adapter.validate_json(nested_answer(150))
    except ValidationError as exc:
        unreadable = exc

    async def main() -> Any:
        to_relay, transport_reads = anyio.create_memory_object_stream[Any](4)
        transport_writes, sent = anyio.create_memory_object_stream[Any](4)
        async with tolerant_streams(transport_reads, transport_writes, Listing()) as (
            reads, writes,
        ):  # fmt: skip
            for n, method in ((1, "tools/list"), (2, "subscriptions/listen")):
                request = JSONRPCRequest(jsonrpc="2.0", id=n, method=method)
                await writes.send(SessionMessage(request))
                await sent.receive()
            await to_relay.send(unreadable)
            with anyio.fail_after(5):
                first = await reads.receive()
                second = await reads.receive()
            return first, second

    first, second = run(main)
    assert isinstance(first.message, JSONRPCError) and first.message.id == 1
    assert first.message.error.message == (
        "the server's answer to tools/list could not be read: it is nested too deeply to be read"
    )
    assert second is not None and not isinstance(second, SessionMessage)  # the error itself
