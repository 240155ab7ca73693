"""Tools through the library: argument checking, call timeouts, non-text content."""

from __future__ import annotations

import base64
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import (
    CommandNotFoundError,
    PlaceholderError,
    ProbeFailed,
    ToolArgumentsError,
    ToolNotFoundError,
)
from mcpctl.probe import ToolInfo, call_tool, check_arguments
from mcpctl.probe.inputrequests import InputAnswer
from mcpctl.probe.legacytasks import REQUIRED_HINT
from mcpctl.probe.spawn import StdioDiagnostics
from mcpctl.probe.tools import content_marker, list_tools
from tests.conftest import SERVERS
from tests.probe.peer import TASKS, Failure, Peer

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


# --- calls in the test's own process ------------------------------------------------------
# The server is tests/probe/peer.py's peer: only the transport is swapped (the stdio opener
# hands over memory streams instead of a process's pipes); connecting, negotiating, listing
# and calling are mcpctl's own.

ASKING = {"tools": {}}  # the client declares elicitation; the server needs nothing
PEER_DEADLINE = 20  # seconds for a whole test; the peer answers at once
ECHO = {"name": "echo", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}


def text_result(*texts: str, error: bool = False, **more: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": t} for t in texts]
    return {"content": content, "isError": error, **more}


def in_process(
    monkeypatch: pytest.MonkeyPatch,
    answers: dict[str, Any],
    capabilities: dict[str, Any] | None = None,
    on_open: Callable[[StdioDiagnostics], None] | None = None,
) -> Peer:
    """A peer answering each method from ``answers`` (a result, a :class:`Failure`, or an
    async function of the params and the peer); any other method is not found. ``on_open``
    is given the stdio diagnostics the opener is handed, to write what a process would
    (stderr lines, lines that are not JSON-RPC, its exit)."""
    from mcpctl.probe import streams

    async def answer(method: str, params: dict[str, Any], peer: Peer) -> dict[str, Any]:
        found = {"ping": {}, **answers}.get(method, Failure(-32601, f"Method not found: {method}"))
        if isinstance(found, Failure):
            raise found
        if callable(found):
            return await found(params, peer)
        return found

    peer = Peer(answer, capabilities if capabilities is not None else {"tools": {}})

    @contextlib.asynccontextmanager
    async def opener(
        resolved: Any, timeout: float, diag: StdioDiagnostics | None = None, process: Any = None
    ) -> AsyncIterator[tuple[Any, Any]]:
        if on_open is not None and diag is not None:
            on_open(diag)
        to_client, client_reads = anyio.create_memory_object_stream[Any](32)
        client_writes, from_client = anyio.create_memory_object_stream[Any](32)
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.serve, from_client, to_client)
            try:
                yield client_reads, client_writes
            finally:
                tg.cancel_scope.cancel()

    monkeypatch.setattr(streams, "open_stdio", opener)
    return peer


def peer_entry(**more: Any) -> ServerEntry:
    return ServerEntry(command=PY, **more)  # found on PATH: the precheck passes


def call_peer(tool: str, arguments: Any = None, **kwargs: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(PEER_DEADLINE):
            return await call_tool(
                "peer", kwargs.pop("entry", peer_entry()), tool, arguments, **kwargs
            )

    return anyio.run(bounded)


def sent(peer: Peer, method: str) -> list[dict[str, Any]]:
    return [params for m, params in peer.params if m == method]


def test_a_result_is_its_text_blocks_then_markers_and_every_block_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    image = {"type": "image", "data": _b64(1234), "mimeType": "image/png"}
    result = {
        "content": [{"type": "text", "text": "first"}, image, {"type": "text", "text": "last"}],
        "structuredContent": {"n": 3},
    }
    peer = in_process(monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": result})
    res = call_peer("echo", {"x": "hi"})
    assert res.is_error is False
    assert res.text == "first\n[image/png, 1,234 bytes]\nlast"
    assert res.content == [
        {"type": "text", "text": "first"},
        image,
        {"type": "text", "text": "last"},
    ]
    assert res.structured == {"n": 3}
    assert res.warnings == [] and res.task is None
    assert sent(peer, "tools/call")[0]["name"] == "echo"
    assert sent(peer, "tools/call")[0]["arguments"] == {"x": "hi"}


def test_an_error_result_is_returned_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        "tools/list": {"tools": [ECHO]},
        "tools/call": text_result("no such file", error=True),
    }
    in_process(monkeypatch, answers)
    res = call_peer("echo")
    assert res.is_error is True and res.text == "no such file" and res.structured is None


def test_a_result_without_content_is_empty_text(monkeypatch: pytest.MonkeyPatch) -> None:
    in_process(monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": {"content": []}})
    res = call_peer("echo", {})
    assert res.is_error is False and res.text == "" and res.content == []


def test_a_secret_in_the_result_text_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PEER_TOKEN_VALUE", "s3cr3t-peer-value-9876")
    entry = peer_entry(env={"TOKEN": "${PEER_TOKEN_VALUE}"})
    answers = {
        "tools/list": {"tools": [ECHO]},
        "tools/call": text_result("key=s3cr3t-peer-value-9876"),
    }
    in_process(monkeypatch, answers)
    res = call_peer("echo", entry=entry)
    assert "s3cr3t-peer-value-9876" not in res.text and "****" in res.text


def test_no_arguments_are_sent_as_an_empty_object(monkeypatch: pytest.MonkeyPatch) -> None:
    peer = in_process(
        monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": text_result("ok")}
    )
    call_peer("echo")
    assert sent(peer, "tools/call")[0].get("arguments") == {}


def test_arguments_built_from_the_tool_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    peer = in_process(
        monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": text_result("ok")}
    )
    seen: list[ToolInfo] = []

    def build(info: ToolInfo) -> dict[str, Any]:
        seen.append(info)
        return {"x": "built"}

    call_peer("echo", build)
    assert [(t.name, t.input_schema) for t in seen] == [("echo", ECHO["inputSchema"])]
    assert sent(peer, "tools/call")[0]["arguments"] == {"x": "built"}


def test_bad_arguments_are_refused_before_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    peer = in_process(
        monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": text_result("ok")}
    )
    with pytest.raises(ToolArgumentsError) as info:
        call_peer("echo", {"x": 1})
    assert info.value.message == "echo: argument x must be string, got an integer"
    assert "tools/call" not in peer.methods


def test_a_tool_the_server_does_not_have(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [ECHO, {"name": "add", "inputSchema": {"type": "object"}}]
    peer = in_process(monkeypatch, {"tools/list": {"tools": tools}})
    with pytest.raises(ToolNotFoundError) as info:
        call_peer("ecko")
    assert info.value.exit_code == 2
    assert "ecko" in info.value.message and "peer" in info.value.message
    assert info.value.hint is not None and "'echo'" in info.value.hint
    assert "tools/call" not in peer.methods


def test_a_tool_on_a_later_page_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    async def pages(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        if params.get("cursor") == "2":
            return {"tools": [{"name": "second", "inputSchema": {"type": "object"}}]}
        return {"tools": [ECHO], "nextCursor": "2"}

    peer = in_process(monkeypatch, {"tools/list": pages, "tools/call": text_result("from page 2")})
    assert call_peer("second").text == "from page 2"
    assert [p.get("cursor") for p in sent(peer, "tools/list")] == [None, "2"]


def test_a_protocol_error_of_the_call_is_probe_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    in_process(
        monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": Failure(-32603, "boom")}
    )
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo")
    assert info.value.server == "peer" and "boom" in info.value.message


def test_a_call_not_answered_in_time_names_the_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    async def never(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    in_process(monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": never})
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo", timeout=0.5)
    assert info.value.reason == "timeout"
    assert info.value.message == "peer: the tool 'echo' did not answer within 0.5 s"


def test_a_listing_not_answered_in_time_names_no_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    async def never(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    in_process(monkeypatch, {"tools/list": never})
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo", timeout=0.5)
    assert info.value.reason == "timeout" and "'echo'" not in info.value.message


def test_a_command_not_installed_is_refused_before_connecting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    peer = in_process(monkeypatch, {})
    with pytest.raises(CommandNotFoundError):
        call_peer("echo", entry=ServerEntry(command="mcpctl-no-such-command-xyz"))
    assert peer.methods == []


def test_a_page_the_call_declines_to_open_is_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = {
        "mode": "url",
        "message": "sign in",
        "url": "http://example.com/x",
        "elicitationId": "e1",
    }

    async def asks(params: dict[str, Any], peer: Peer) -> dict[str, Any]:
        reply = await peer.ask("elicitation/create", asked)
        return text_result(f"told {reply.get('action')}")

    in_process(monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": asks}, ASKING)
    res = call_peer("echo")
    assert res.text == "told decline"
    assert len(res.warnings) == 1 and "http://example.com/x" in res.warnings[0]


def test_a_question_during_the_call_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    form = {"mode": "form", "message": "which?", "requestedSchema": {"type": "object",
            "properties": {"pick": {"type": "string"}}}}  # fmt: skip
    given: list[Any] = []

    async def answer(request: Any) -> InputAnswer:
        given.append(request)
        return InputAnswer("accept", {"pick": "blue"})

    async def asks(params: dict[str, Any], peer: Peer) -> dict[str, Any]:
        reply = await peer.ask("elicitation/create", form)
        return text_result(f"picked {reply['content']['pick']}")

    in_process(monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": asks}, ASKING)
    assert call_peer("echo", answer=answer).text == "picked blue"
    assert len(given) == 1


# --- tasks (handshake era) ----------------------------------------------------------------

OPTIONAL = {**ECHO, "name": "long", "execution": {"taskSupport": "optional"}}
REQUIRED = {**ECHO, "name": "must", "execution": {"taskSupport": "required"}}
STARTED = {"task": {"taskId": "task-7", "status": "working", "pollInterval": 100,
                    "createdAt": "2025-01-01T00:00:00Z", "lastUpdatedAt": "2025-01-01T00:00:00Z",
                    "ttl": 60000}}  # fmt: skip
TASK_CAPS = {"tools": {}, "tasks": TASKS}


def test_a_task_not_waited_for_is_its_handle(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {"tools/list": {"tools": [OPTIONAL]}, "tools/call": STARTED}
    peer = in_process(monkeypatch, answers, TASK_CAPS)
    res = call_peer("long", {"x": "a"}, wait=False, timeout=90)
    assert res.is_error is False and res.text == "task task-7 is working"
    assert res.task is not None and res.task["taskId"] == "task-7"
    assert res.task["status"] == "working" and res.content == []
    call = sent(peer, "tools/call")[0]
    assert call["arguments"] == {"x": "a"} and call["name"] == "long"
    assert call["task"] == {"ttl": 90000}
    assert "tasks/get" not in peer.methods


@pytest.mark.parametrize(
    ("timeout", "entry_ms", "ttl"),
    [(None, 5000, 60000), (None, 120000, 120000), (10, 120000, 60000)],
)
def test_a_tasks_time_to_live_is_the_calls_time_at_least_a_minute(
    monkeypatch: pytest.MonkeyPatch, timeout: float | None, entry_ms: int, ttl: int
) -> None:
    peer = in_process(
        monkeypatch, {"tools/list": {"tools": [OPTIONAL]}, "tools/call": STARTED}, TASK_CAPS
    )
    call_peer("long", wait=False, timeout=timeout, entry=peer_entry(timeout=entry_ms))
    assert sent(peer, "tools/call")[0]["task"] == {"ttl": ttl}


def test_a_task_waited_for_is_a_plain_call(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {"tools/list": {"tools": [OPTIONAL]}, "tools/call": text_result("at once")}
    peer = in_process(monkeypatch, answers, TASK_CAPS)
    assert call_peer("long").text == "at once"
    assert "task" not in sent(peer, "tools/call")[0]


def test_a_task_required_runs_to_its_result(monkeypatch: pytest.MonkeyPatch) -> None:
    done = {**STARTED["task"], "status": "completed"}
    answers = {
        "tools/list": {"tools": [REQUIRED]},
        "tools/call": STARTED,
        "tasks/get": done,
        "tasks/result": text_result("finished"),
    }
    statuses: list[str] = []
    peer = in_process(monkeypatch, answers, TASK_CAPS)
    res = call_peer("must", on_status=statuses.append)
    assert res.text == "finished" and res.task is None
    assert "task" in sent(peer, "tools/call")[0] and "tasks/result" in peer.methods
    assert statuses == ["working"]


def test_a_task_required_of_a_server_without_tasks_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = {"tools/list": {"tools": [REQUIRED]}, "tools/call": Failure(-32601, "no")}
    peer = in_process(monkeypatch, answers)
    with pytest.raises(ProbeFailed) as info:
        call_peer("must")
    assert "task" not in sent(peer, "tools/call")[0]
    assert info.value.hint == REQUIRED_HINT


def test_a_plain_tool_failing_gets_no_task_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    in_process(monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": Failure(-32601, "no")})
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo")
    assert info.value.hint != REQUIRED_HINT


# --- listing -------------------------------------------------------------------------------


def list_peer(**kwargs: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(PEER_DEADLINE):
            return await list_tools("peer", kwargs.pop("entry", peer_entry()), **kwargs)

    return anyio.run(bounded)


def test_list_tools_gives_every_page(monkeypatch: pytest.MonkeyPatch) -> None:
    async def pages(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        if params.get("cursor") == "2":
            return {"tools": [{"name": "second", "inputSchema": {"type": "object"}}]}
        return {"tools": [ECHO], "nextCursor": "2"}

    in_process(monkeypatch, {"tools/list": pages})
    tools = list_peer()
    assert [t.name for t in tools] == ["echo", "second"]
    assert tools[0].input_schema == ECHO["inputSchema"]


def test_list_tools_raises_what_the_probe_found(monkeypatch: pytest.MonkeyPatch) -> None:
    in_process(monkeypatch, {"tools/list": Failure(-32603, "listing broke")})
    with pytest.raises(ProbeFailed) as info:
        list_peer()
    assert info.value.server == "peer" and "listing broke" in info.value.message


# --- what the caller passes reaches the connection -----------------------------------------

UNSET = "MCPCTL_TEST_PEER_UNSET_VAR"


@pytest.mark.parametrize("call", [call_peer, list_peer], ids=["call", "list"])
def test_a_placeholder_without_a_value_stops_before_connecting(
    monkeypatch: pytest.MonkeyPatch, call: Any
) -> None:
    monkeypatch.delenv(UNSET, raising=False)
    peer = in_process(
        monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": text_result("ok")}
    )
    entry = peer_entry(env={"T": "${" + UNSET + "}"})
    args = {"tool": "echo"} if call is call_peer else {}
    with pytest.raises(PlaceholderError) as info:
        call(**args, entry=entry)
    assert UNSET in f"{info.value.variable} {info.value.message}" and peer.methods == []
    call(**args, entry=entry, policy="empty")  # told to go on: it does
    call(**args, entry=entry, secrets=lambda var: "from-store" if var == UNSET else None)
    assert peer.methods.count("tools/list") == 2


@pytest.mark.parametrize("call", [call_peer, list_peer], ids=["call", "list"])
def test_the_era_asked_for_and_the_memory_of_eras(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, call: Any
) -> None:
    from mcpctl.probe.eras import EraMemory

    in_process(monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": text_result("ok")})
    args = {"tool": "echo"} if call is call_peer else {}
    with pytest.raises(ProbeFailed) as info:
        call(**args, protocol="modern")  # the peer speaks only the handshake's era
    assert info.value.reason == "protocol_mismatch" and "None" not in info.value.message
    assert info.value.message.startswith("peer: ")
    memory = EraMemory.in_dir(tmp_path)
    entry = peer_entry()
    call(**args, entry=entry, eras=memory)
    remembered = EraMemory.in_dir(tmp_path).recall(entry)
    assert remembered is not None and remembered.name == "legacy"


def test_list_tools_gives_up_at_its_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    async def never(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    in_process(monkeypatch, {"tools/list": never})
    with pytest.raises(ProbeFailed) as info:
        list_peer(timeout=0.5, entry=peer_entry(timeout=600000))
    assert info.value.reason == "timeout" and info.value.server == "peer"


def test_a_command_not_installed_names_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    in_process(monkeypatch, {})
    with pytest.raises(CommandNotFoundError) as info:
        call_peer("echo", entry=ServerEntry(command="mcpctl-no-such-command-xyz"))
    assert info.value.message.startswith("peer: ")


def test_a_secret_in_a_task_handle_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PEER_TOKEN_VALUE", "s3cr3t-peer-value-9876")
    entry = peer_entry(env={"TOKEN": "${PEER_TOKEN_VALUE}"})
    started = {"task": {**STARTED["task"], "taskId": "t-s3cr3t-peer-value-9876"}}
    answers = {"tools/list": {"tools": [OPTIONAL]}, "tools/call": started}
    in_process(monkeypatch, answers, TASK_CAPS)
    res = call_peer("long", wait=False, entry=entry)
    assert res.task is not None and "s3cr3t" not in res.task["taskId"]
    assert "s3cr3t" not in res.text and res.warnings == []


MODERN = "2026-07-28"


def test_a_task_of_the_stateless_era_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    handle = {"resultType": "task", "taskId": "task-9", "status": "working", "pollIntervalMs": 100}
    answers = {
        "server/discover": {"supportedVersions": [MODERN], "capabilities": {"tools": {}}},
        "tools/list": {
            "tools": [ECHO],
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
        },
        "tools/call": handle,
    }
    peer = in_process(monkeypatch, answers)
    res = call_peer("echo", wait=False)
    assert res.text == "task task-9 is working" and res.task is not None
    assert "initialize" not in peer.methods and "tasks/get" not in peer.methods


def test_a_null_where_a_type_is_wanted_is_named_null() -> None:
    assert arguments_error(GET_TIME, {"timezone": None}) == (
        "get_time: argument timezone must be string, got null"
    )


def test_four_problems_are_three_and_one_more() -> None:
    message = arguments_error(TYPED, {"f": "x", "b": "x", "a": "x", "o": "x"})
    assert message.count("must be") == 3 and message.endswith(" (and 1 more)")


def test_the_hint_names_twenty_parameters_at_most() -> None:
    props = {f"p{i:02}": {"type": "string"} for i in range(21)}
    tool = ToolInfo("wide", "", {"type": "object", "properties": props, "required": ["p00"]})
    with pytest.raises(ToolArgumentsError) as info:
        check_arguments(tool, {})
    assert info.value.hint is not None and info.value.hint.endswith("p19: string, +1 more")


def test_a_long_problem_is_cut_at_160_characters() -> None:
    tool = ToolInfo("t", "", {"type": "object", "properties": {"x": {"const": "y" * 400}}})
    message = arguments_error(tool, {"x": "z"})
    problem = message.removeprefix("t: argument x: ")
    assert len(problem) == 160 and problem.endswith("…")


def test_a_resource_link_is_kept_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    link = {"type": "resource_link", "uri": "file:///tmp/report.txt", "name": "report"}
    in_process(monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": {"content": [link]}})
    res = call_peer("echo")
    assert res.content == [link] and res.text == "[resource link file:///tmp/report.txt]"


def test_a_listing_that_fails_gets_no_task_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    in_process(monkeypatch, {"tools/list": Failure(-32601, "no listing")})
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo")
    assert info.value.hint != REQUIRED_HINT


def test_the_calls_timeout_not_the_entrys_bounds_each_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def slow(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        await anyio.sleep(0.5)  # longer than the entry's timeout, well within the call's
        return text_result("slow but in time")

    in_process(monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": slow})
    assert call_peer("echo", timeout=15, entry=peer_entry(timeout=200)).text == "slow but in time"


def test_a_task_the_server_cancels_names_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        "tools/list": {"tools": [REQUIRED]},
        "tools/call": STARTED,
        "tasks/get": {**STARTED["task"], "status": "cancelled"},
    }
    in_process(monkeypatch, answers, TASK_CAPS)
    with pytest.raises(ProbeFailed) as info:
        call_peer("must")
    assert info.value.message.startswith("peer: the server cancelled task task-7 of must")


def test_a_task_given_up_on_is_cancelled_on_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        "tools/list": {"tools": [REQUIRED]},
        "tools/call": STARTED,
        "tasks/get": STARTED["task"],
        "tasks/cancel": {**STARTED["task"], "status": "cancelled"},
    }
    peer = in_process(monkeypatch, answers, TASK_CAPS)
    with pytest.raises(ProbeFailed) as info:
        call_peer("must", timeout=1)
    assert info.value.reason == "timeout"
    assert [p["taskId"] for p in sent(peer, "tasks/cancel")] == ["task-7"]


STATELESS = {
    "server/discover": {"supportedVersions": [MODERN], "capabilities": {"tools": {}}},
    "tools/list": {"tools": [ECHO], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"},
}


def test_a_question_of_the_stateless_era_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    form = {"method": "elicitation/create", "params": {"mode": "form", "message": "which?",
            "requestedSchema": {"type": "object", "properties": {"pick": {"type": "string"}}}}}  # fmt: skip

    async def rounds(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        if "inputResponses" not in params:
            return {"resultType": "input_required", "inputRequests": {"q": form}}
        picked = params["inputResponses"]["q"]["content"]["pick"]
        return {**text_result(f"picked {picked}"), "resultType": "complete"}

    async def answer(request: Any) -> InputAnswer:
        return InputAnswer("accept", {"pick": "green"})

    in_process(monkeypatch, {**STATELESS, "tools/call": rounds})
    assert call_peer("echo", answer=answer).text == "picked green"


def test_a_remote_server_not_answering_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpctl.probe import streams

    async def never(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    in_process(monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": never})
    monkeypatch.setattr(streams, "open_streamable_http", streams.open_stdio)
    entry = ServerEntry(url="https://peer.invalid/mcp", transport="streamable-http")
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo", timeout=0.5, entry=entry)
    assert info.value.message == "peer: the tool 'echo' did not answer within 0.5 s"


def test_a_task_of_a_call_cancelled_is_cancelled_on_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    polled = anyio.Event()

    async def working(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        polled.set()
        return STARTED["task"]

    answers = {
        "tools/list": {"tools": [REQUIRED]},
        "tools/call": STARTED,
        "tasks/get": working,
        "tasks/cancel": {**STARTED["task"], "status": "cancelled"},
    }
    peer = in_process(monkeypatch, answers, TASK_CAPS)

    async def main() -> None:  # as Ctrl-C does: the caller's scope is cancelled mid-task
        with anyio.fail_after(PEER_DEADLINE):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: call_tool("peer", peer_entry(), "must", timeout=60))
                await polled.wait()
                tg.cancel_scope.cancel()

    anyio.run(main)
    assert [p["taskId"] for p in sent(peer, "tasks/cancel")] == ["task-7"]


def test_a_remote_servers_protocol_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpctl.probe import streams

    in_process(
        monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": Failure(-32603, "boom")}
    )
    monkeypatch.setattr(streams, "open_streamable_http", streams.open_stdio)
    entry = ServerEntry(url="https://peer.invalid/mcp", transport="streamable-http")
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo", entry=entry)
    assert info.value.message.startswith("peer: ") and "boom" in info.value.message


def test_a_warning_before_a_task_handle_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = {
        "mode": "url",
        "message": "sign in",
        "url": "http://example.com/x",
        "elicitationId": "e1",
    }

    async def asks(params: dict[str, Any], peer: Peer) -> dict[str, Any]:
        await peer.ask("elicitation/create", asked)
        return STARTED

    in_process(monkeypatch, {"tools/list": {"tools": [OPTIONAL]}, "tools/call": asks}, TASK_CAPS)
    res = call_peer("long", wait=False)
    assert res.task is not None and len(res.warnings) == 1


# --- what a stdio server's process said, beside its failure --------------------------------
# The opener writes into the diagnostics it is handed what the process would have: stderr
# lines, lines on stdout that are not JSON-RPC, its exit.

STDERR = ["npm WARN config", "Error: EACCES /srv/data"]


def says(*lines: str, garbage: str | None = None) -> Callable[[StdioDiagnostics], None]:
    def on_open(diag: StdioDiagnostics) -> None:
        diag.stderr.extend(lines)
        if garbage is not None:
            diag.garbage_lines, diag.first_garbage = 1, garbage

    return on_open


def test_a_failed_calls_error_carries_the_servers_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {"tools/list": {"tools": [ECHO]}, "tools/call": Failure(-32603, "boom")}
    in_process(monkeypatch, answers, on_open=says(*STDERR))
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo")
    assert info.value.reason == "mcp_error" and info.value.stderr == STDERR


def test_a_call_timed_out_carries_the_servers_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    async def never(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    in_process(
        monkeypatch, {"tools/list": {"tools": [ECHO]}, "tools/call": never}, on_open=says(*STDERR)
    )
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo", timeout=0.5)
    assert info.value.reason == "timeout" and info.value.stderr == STDERR


def test_a_call_timed_out_names_what_the_server_wrote_instead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def never(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    answers = {"tools/list": {"tools": [ECHO]}, "tools/call": never}
    in_process(monkeypatch, answers, on_open=says(garbage="Listening on port 3000"))
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo", timeout=0.5)
    assert info.value.reason == "protocol_error"
    assert info.value.message == (
        "peer: no valid answer within 0.5 s; the server wrote 1 line(s) that are not JSON-RPC "
        "on stdout, first: 'Listening on port 3000'"
    )


def test_a_server_that_exits_during_the_call_is_said_to_have_exited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[StdioDiagnostics] = []

    async def exits(params: dict[str, Any], _: Peer) -> dict[str, Any]:
        opened[0].exited_by_itself, opened[0].returncode = True, 3
        raise Failure(-32000, "Connection closed")

    answers = {"tools/list": {"tools": [ECHO]}, "tools/call": exits}
    in_process(monkeypatch, answers, on_open=opened.append)
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo")
    assert info.value.reason == "server_exited"
    # The handshake had finished: the message does not say it had not.
    assert info.value.message == "peer: the server exited with code 3 after the handshake"


def test_a_call_refused_unauthorized_names_the_server_in_its_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = {"tools/list": {"tools": [ECHO]}, "tools/call": Failure(-32001, "401 Unauthorized")}
    in_process(monkeypatch, answers)
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo")
    assert info.value.reason == "unauthorized"
    assert info.value.hint is not None and "'peer'" in info.value.hint
    assert "mcpctl auth peer" in info.value.hint


def test_a_remote_server_that_refuses_the_connection_is_named_by_its_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import httpx2

    from mcpctl.probe import streams

    @contextlib.asynccontextmanager
    async def refused(*_: Any) -> AsyncIterator[tuple[Any, Any]]:
        raise httpx2.ConnectError("All connection attempts failed")
        yield  # pragma: no cover

    monkeypatch.setattr(streams, "open_streamable_http", refused)
    entry = ServerEntry(url="https://peer.invalid/mcp", transport="streamable-http")
    with pytest.raises(ProbeFailed) as info:
        call_peer("echo", entry=entry)
    assert info.value.reason == "connection_refused" and info.value.stderr == []
    assert "https://peer.invalid/mcp" in info.value.message


def test_a_listing_that_fails_carries_the_servers_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    in_process(monkeypatch, {"tools/list": Failure(-32603, "listing broke")}, on_open=says(*STDERR))
    with pytest.raises(ProbeFailed) as info:
        list_peer()
    assert "listing broke" in info.value.message and info.value.stderr == STDERR
