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


# --- the relay, in-process: what it repairs and what it notes ---------------------------------


def relay(
    exchanges: list[tuple[str, dict[str, Any]]], listing: Any = None
) -> tuple[list[Any], Any]:
    """Each (method, result) as a request from the session and its answer from the
    transport, through ``tolerant_streams``: what the session reads, and the listing."""
    from mcp_types.jsonrpc import JSONRPCRequest, JSONRPCResponse

    from mcpctl.probe.listingrepair import Listing, tolerant_streams
    from mcpctl.sdk import SessionMessage

    listing = listing if listing is not None else Listing()

    async def main() -> list[Any]:
        to_relay, transport_reads = anyio.create_memory_object_stream[Any](4)
        transport_writes, sent = anyio.create_memory_object_stream[Any](4)
        got = []
        with anyio.fail_after(10):
            async with tolerant_streams(transport_reads, transport_writes, listing) as (
                reads, writes,
            ):  # fmt: skip
                for n, (method, result) in enumerate(exchanges, 1):
                    await writes.send(
                        SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=n, method=method))
                    )
                    assert (await sent.receive()).message.id == n
                    answer = JSONRPCResponse(jsonrpc="2.0", id=n, result=result)
                    await to_relay.send(SessionMessage(answer, metadata="meta"))  # type: ignore[arg-type]
                    got.append(await reads.receive())
        return got

    return run(main), listing


def test_the_relay_notes_the_version_and_repairs_a_listing_by_it() -> None:
    listing_result = {"tools": [{"name": "t", "inputSchema": {"properties": {}}}, {"x": 1}]}
    got, listing = relay(
        [("initialize", {"protocolVersion": VERSION}), ("tools/list", listing_result)]
    )
    assert listing.protocol_version == VERSION
    assert got[0].message.result == {"protocolVersion": VERSION}
    assert got[1].message.result == {
        "tools": [{"name": "t", "inputSchema": {"properties": {}, "type": "object"}}]
    }
    assert got[1].metadata == "meta"
    assert listing.warnings == [
        "tool 't': inputSchema has no \"type\"; read as an object schema",
        "tool #2: name is missing or not a string; the tool was left out",
    ]
    assert listing.raw_tools == {"t": {"name": "t", "inputSchema": {"properties": {}}}}
    assert listing_result["tools"][0] == {"name": "t", "inputSchema": {"properties": {}}}


def test_a_version_that_is_not_text_is_none() -> None:
    _, listing = relay([("initialize", {"protocolVersion": 2025})])
    assert listing.protocol_version is None


def test_only_tools_list_answers_are_repaired() -> None:
    broken = {"tools": [{"name": "t", "inputSchema": {"properties": {}}}]}
    got, listing = relay([("prompts/list", broken), ("tools/call", {"content": []})])
    assert got[0].message.result == broken and got[1].message.result == {"content": []}
    assert listing.warnings == [] and listing.raw_tools == {}


def test_a_conforming_listing_passes_as_it_came() -> None:
    tools = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "nextCursor": "c"}
    got, listing = relay([("tools/list", tools)])
    assert got[0].message.result == tools and listing.warnings == []
    assert listing.ttl_ms is None and listing.cache_scope is None  # no hints, none noted


def test_an_answer_without_a_tools_list_passes() -> None:
    got, listing = relay([("tools/list", {"tools": "none"})])
    assert got[0].message.result == {"tools": "none"} and listing.warnings == []


def test_each_note_of_a_tool_is_said_once() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object"}, "title": 1, "description": 2}
    got, listing = relay([("tools/list", {"tools": [tool, {"name": 3}]})])
    assert got[0].message.result == {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    assert listing.warnings == [
        "tool 't': description does not conform and was ignored",
        "tool 't': title does not conform and was ignored",
        "tool #2: name is missing or not a string; the tool was left out",
    ]


def test_a_listing_for_a_version_without_a_schema_is_not_checked() -> None:
    from mcpctl.probe.listingrepair import Listing

    broken = {"tools": [{"name": "t", "inputSchema": {"properties": {}}}]}
    got, listing = relay([("tools/list", broken)], Listing(protocol_version="1999-01-01"))
    assert got[0].message.result == broken and listing.warnings == []


# --- caching hints ------------------------------------------------------------------------


def test_the_listing_keeps_the_shortest_and_narrowest_caching_hints() -> None:
    pages = [
        ("tools/list", {"tools": [], "ttlMs": 5000, "cacheScope": "public"}),
        ("tools/list", {"tools": [], "ttlMs": 3000, "cacheScope": "public"}),
        ("tools/list", {"tools": [], "ttlMs": 9000, "cacheScope": "public"}),
    ]
    _, listing = relay(pages)
    assert (listing.ttl_ms, listing.cache_scope) == (3000, "public")
    _, listing = relay([*pages, ("tools/list", {"tools": [], "ttlMs": 4000})])
    assert (listing.ttl_ms, listing.cache_scope) == (3000, "private")
    _, listing = relay([("tools/list", {"tools": [], "cacheScope": "private"}), *pages])
    assert (listing.ttl_ms, listing.cache_scope) == (0, "private")  # private stays private
    _, listing = relay([("tools/list", {"tools": [], "cacheScope": "public"})])
    assert (listing.ttl_ms, listing.cache_scope) == (0, "public")


@pytest.mark.parametrize("ttl", [-1, True, "5000", 5.5, None])
def test_a_bogus_ttl_reads_as_do_not_cache(ttl: object) -> None:
    from mcpctl.probe.listingrepair import Listing

    listing = Listing()
    listing.note_caching({"ttlMs": ttl, "cacheScope": "public"})
    assert listing.ttl_ms == 0
    listing = Listing()
    listing.note_caching({"ttlMs": 0})
    assert (listing.ttl_ms, listing.cache_scope) == (0, "private")


# --- tools nested deeper than the SDK checks ----------------------------------------------


def nest(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_a_schema_too_deep_for_the_sdk_reaches_it_as_a_stand_in_and_is_kept() -> None:
    deep = nest(130)  # far past what the SDK's checks serialize
    meta_ok = {"k": nest(62)}  # 126 levels below the tool: within what it checks
    tools = [
        {"name": "deep", "inputSchema": deep, "_meta": meta_ok, "annotations": {"a": nest(64)}},
        {"name": "flat", "inputSchema": {"type": "object"}},
    ]
    got, listing = relay([("tools/list", {"tools": tools})])
    result = got[0].message.result["tools"]
    assert result[0] == {"name": "deep", "inputSchema": {"type": "object"}, "_meta": meta_ok}
    assert result[1] == tools[1]
    assert listing.kept_schemas == {"deep": deep}
    assert listing.raw_tools["deep"] is tools[0]


def test_a_field_at_the_sdks_depth_is_left_out() -> None:
    from mcpctl.probe.listingrepair import SDK_FIELD_DEPTH, Listing, _within_sdk_depth

    def of_depth(n: int) -> Any:
        value: Any = {}
        for _ in range(n - 1):
            value = [value]
        return value

    listing = Listing()
    tool = {"name": "t", "a": of_depth(SDK_FIELD_DEPTH - 1), "b": of_depth(SDK_FIELD_DEPTH)}
    assert _within_sdk_depth(tool, listing) == {"name": "t", "a": tool["a"]}
    inner = {"name": "t", "a": of_depth(SDK_FIELD_DEPTH - 1)}  # 128 with the tool itself
    assert _within_sdk_depth(inner, listing) is inner
    assert _within_sdk_depth("text", listing) == "text"
    assert listing.kept_schemas == {}


# --- messages no parser follows: the request found ---------------------------------------------


@pytest.mark.parametrize(
    ("raw", "found"),
    [
        (b'{"jsonrpc": "2.0", "id": -3, "result": ' + b"[" * 5000, -3),
        (b'  {"jsonrpc":"2.0","x":null,"y":true,"z":1.5e3,"id":"a\\"b","result":' + b"[" * 5000,
         'a"b'),
        (b'{"jsonrpc": "2.0", "result": ' + b"[" * 5000 + b'], "id" : 12 } ', 12),
        (b'{"jsonrpc": "2.0", "result": ' + b"[" * 5000 + b'], "id": 12}' + b" " * 300, None),
        (b'{"result": ' + b"[" * 5000 + b"]}", None),
        (b'{"jsonrpc": "2.0", "result": ' + b"[" * 5000 + b'], "method": "x", "id": 2}', None),
    ],
)  # fmt: skip
def test_the_id_of_a_message_too_deep_is_found_before_or_after_the_nesting(
    raw: bytes, found: object
) -> None:
    from mcpctl.probe.listingrepair import TooDeep, parse_message, too_deep_answer

    with pytest.raises(TooDeep) as caught:
        parse_message(raw)
    assert caught.value.id == found
    assert str(caught.value) == (
        "the server's answer is nested too deeply to be read (no JSON parser here follows it)"
    )
    answer = too_deep_answer(caught.value)
    if found is not None:
        assert answer is not None
        assert answer.message.error.code == -32700 and answer.message.jsonrpc == "2.0"


def test_a_line_that_is_not_a_message_is_refused() -> None:
    from mcpctl.probe.listingrepair import TooDeep, parse_message

    for raw in (b"not json", b'{"jsonrpc": "2.0"}', b'{"a": ' + b"[" * 300 + b"]" * 300 + b"}"):
        with pytest.raises(ValueError) as caught:
            parse_message(raw)
        assert not isinstance(caught.value, TooDeep)


def test_a_transport_error_that_is_not_nesting_names_the_first_problem() -> None:
    from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest
    from pydantic import ValidationError

    from mcpctl.probe.listingrepair import Listing, tolerant_streams
    from mcpctl.sdk import SessionMessage

    try:
        import mcp_types

        mcp_types.jsonrpc_message_adapter.validate_json(b'{"jsonrpc": "2.0", "id": 1}')
    except ValidationError as exc:
        unreadable = exc
    ended = anyio.Event()

    async def main() -> Any:
        to_relay, transport_reads = anyio.create_memory_object_stream[Any](4)
        transport_writes, sent = anyio.create_memory_object_stream[Any](4)
        async with tolerant_streams(transport_reads, transport_writes, Listing(), ended) as (
            reads, writes,
        ):  # fmt: skip
            with anyio.fail_after(5):
                for n, method in ((1, "tools/list"), (2, "tools/call")):
                    await writes.send(
                        SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=n, method=method))
                    )
                    await sent.receive()
                # The first is answered (with an error): only the second still waits.
                error = JSONRPCError(
                    jsonrpc="2.0", id=1, error=mcp_types.ErrorData(code=1, message="no")
                )
                await to_relay.send(SessionMessage(error))
                answered = await reads.receive()
                await to_relay.send(unreadable)
                failed = await reads.receive()
                await reads.receive()  # the error itself
                assert not ended.is_set()
                await to_relay.aclose()
                await ended.wait()
            return answered, failed

    answered, failed = run(main)
    assert answered.message.error.message == "no"
    assert isinstance(failed.message, JSONRPCError) and failed.message.id == 2
    assert failed.message.error.code == -32700
    message = failed.message.error.message
    assert message.startswith("the server's answer to tools/call could not be read: ")
    assert "nested" not in message and "\n" not in message
    assert message.removeprefix("the server's answer to tools/call could not be read: ")


# --- what each survivor of a first mutation run left unpinned ---------------------------------


@pytest.mark.parametrize(
    ("tool", "fixed", "note"),
    [
        (
            {"name": "t", "inputSchema": {"type": "string"}},
            {"name": "t", "inputSchema": {"type": "object"}},
            "inputSchema.type does not conform; the tool accepts any arguments",
        ),
        (
            {"name": "t", "inputSchema": "anything"},
            {"name": "t", "inputSchema": {"type": "object"}},
            "inputSchema does not conform; the tool accepts any arguments",
        ),
    ],
)
def test_an_input_schema_that_is_no_object_schema_accepts_any_arguments(
    tool: object, fixed: dict[str, Any], note: str
) -> None:
    assert repair_tool(tool, VERSION) == (fixed, [note])


def test_a_stand_in_reaches_the_sdk_without_a_warning_whatever_the_order_of_fields() -> None:
    from mcpctl.probe.listingrepair import _conforms

    deep = nest(130)
    first = {"name": "first", "inputSchema": deep, "description": "the deep field comes first"}
    stand_in = {
        "name": "first",
        "inputSchema": {"type": "object"},
        "description": first["description"],
    }
    got, listing = relay([("tools/list", {"tools": [first]})])
    result = got[0].message.result
    assert result == {"tools": [stand_in]}  # the listing as the SDK reads it, nothing added
    assert listing.kept_schemas == {"first": deep} and listing.warnings == []
    # Beside a tool that does not conform: the same stand-in, a warning for the other only.
    got, listing = relay([("tools/list", {"tools": [first, "not a tool"]})])
    result = got[0].message.result
    assert result == {"tools": [stand_in]} and _conforms(result, VERSION)
    assert listing.kept_schemas == {"first": deep}
    assert listing.warnings == ["tool #2: it is not a JSON object; the tool was left out"]


def unreadable_through_the_relay(error: Exception) -> str:
    """What a request still waiting is answered when the transport hands ``error`` over."""
    from mcp_types.jsonrpc import JSONRPCRequest

    from mcpctl.probe.listingrepair import Listing, tolerant_streams
    from mcpctl.sdk import SessionMessage

    async def main() -> Any:
        to_relay, transport_reads = anyio.create_memory_object_stream[Any](4)
        transport_writes, sent = anyio.create_memory_object_stream[Any](4)
        async with tolerant_streams(transport_reads, transport_writes, Listing()) as (
            reads, writes,
        ):  # fmt: skip
            with anyio.fail_after(5):
                request = JSONRPCRequest(jsonrpc="2.0", id=1, method="tools/call")
                await writes.send(SessionMessage(request))
                await sent.receive()
                await to_relay.send(error)
                failed = await reads.receive()
                await reads.receive()  # the error itself
            return failed

    return str(run(main).message.error.message)


def test_an_unreadable_answer_names_the_first_problem_in_its_own_words() -> None:
    from pydantic import ValidationError
    from pydantic_core import InitErrorDetails, PydanticCustomError

    def error(*messages: str) -> ValidationError:
        details = [
            InitErrorDetails(type=PydanticCustomError("custom", text), loc=(n,), input=None)
            for n, text in enumerate(messages)
        ]
        return ValidationError.from_exception_data("JSONRPCMessage", details)

    prefix = "the server's answer to tools/call could not be read: "
    assert unreadable_through_the_relay(error("first problem", "second")) == (
        prefix + "first problem"
    )
    long = "word " * 40  # 200 characters: cut to 120, on one line
    assert unreadable_through_the_relay(error(long)) == prefix + long.strip()[:119] + "…"
    assert len("word " * 24) == 120
    assert unreadable_through_the_relay(error(("word " * 24).strip() + "s")) == (
        prefix + ("word " * 24).strip() + "s"
    )


def test_the_id_is_looked_for_within_256_bytes_of_either_end() -> None:
    from mcpctl.probe.listingrepair import TooDeep, parse_message

    def found(raw: bytes) -> object:
        with pytest.raises(TooDeep) as caught:
            parse_message(raw)
        return caught.value.id

    deep = b"[" * 5000 + b"]" * 5000
    # A "method" deep inside, far from either end: still an answer to a request.
    middle = b'{"jsonrpc": "2.0", "id": 5, "result": [' + deep + b', "method", ' + deep + b"]}"
    assert found(middle) == 5
    # "method" ending one byte past the first 256 (or starting one byte before the last
    # 256) is not seen: the message is taken for an answer.
    before = b'{"jsonrpc": "2.0", "pad": "'
    after = b'", "note": '
    head = before + b"x" * (249 - len(before) - len(after)) + after + b'"method"'
    assert len(head) == 257
    assert found(head + b', "id": 6, "result": ' + b"[" * 5000) == 6
    before, after = b', "pad": "', b'", "id": 9}'
    tail = b'"method"' + before + b"x" * (249 - len(before) - len(after)) + after
    assert len(tail) == 257
    assert found(b'{"jsonrpc": "2.0", "result": ' + deep + b', "note": ' + tail) == 9
    # The id as the last member: found when it lies within the last 256 bytes, not past.
    start = b'{"jsonrpc": "2.0", "result": ' + deep
    assert found(start + b', "id": "' + b"x" * 245 + b'"}') == "x" * 245  # 256 bytes
    assert found(start + b', "id": "' + b"x" * 246 + b'"}') is None  # 257 bytes
