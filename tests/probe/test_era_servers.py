"""The era test servers (modern.py, modern_http.py, legacy_modes.py) against the SDK's own
client: if these fail, the peer is wrong, not mcpctl."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import listen
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged

from tests.conftest import SERVERS, free_port, stop_process, wait_for_port

DEADLINE = 60  # seconds for a whole test; the servers answer in milliseconds
ANSWER = {"colour": "red", "count": 2, "confirm": True}


@asynccontextmanager
async def stdio(script: str, *args: str, **kwargs: Any) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVERS / script), *args])
    async with stdio_client(params) as (read, write), ClientSession(read, write, **kwargs) as s:
        yield s


@asynccontextmanager
async def http(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as s:
        yield s


def run(test: Callable[[], Any]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(DEADLINE):
            await test()

    anyio.run(bounded)


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def discover_list_call(session: ClientSession, server_name: str) -> None:
    found = await session.discover()
    assert found.supported_versions == ["2026-07-28"]
    assert session.protocol_version == "2026-07-28"
    assert session.server_info is not None and session.server_info.name == server_name
    assert {t.name for t in (await session.list_tools()).tools} >= {"echo", "add", "ask"}
    assert text(await session.call_tool("add", {"a": 2, "b": 3})) == "5"
    assert text(await session.call_tool("echo", {"text": "hi"})) == "hi"


async def round_trip(
    session: ClientSession, tool: str = "ask", content: dict[str, Any] | None = ANSWER
) -> types.ElicitRequestParams:
    """Call ``tool``, get ``input_required``, retry with the answer; the elicitation asked."""
    first = await session.call_tool(tool, {}, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult) and first.input_requests
    ((key, request),) = first.input_requests.items()
    assert isinstance(request, types.ElicitRequest)
    reply = types.ElicitResult(action="accept", content=content)
    done = await session.call_tool(
        tool, {}, input_responses={key: reply}, request_state=first.request_state
    )
    assert isinstance(done, types.CallToolResult) and not done.is_error
    assert text(done) == ("colour=red count=2 confirm=True" if content else "done")
    return request.params


def asked_colour(params: types.ElicitRequestParams) -> None:
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == "Which colour?"
    assert params.requested_schema["required"] == ["colour"]


async def refused_handshake(session: ClientSession) -> None:
    with pytest.raises(MCPError) as caught:
        await session.initialize()
    assert caught.value.code == types.UNSUPPORTED_PROTOCOL_VERSION
    data = types.UnsupportedProtocolVersionErrorData.model_validate(caught.value.error.data)
    assert data.supported == ["2026-07-28"] and data.requested == "2025-11-25"


@asynccontextmanager
async def modern_http() -> AsyncIterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVERS / "modern_http.py"), str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        await anyio.to_thread.run_sync(wait_for_port, port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


def test_modern_refuses_the_handshake_then_discovers_lists_and_calls() -> None:
    async def go() -> None:
        async with stdio("modern.py") as session:
            await refused_handshake(session)
            await discover_list_call(session, "modern-test-server")

    run(go)


def test_modern_input_required_round_trips() -> None:
    async def go() -> None:
        async with stdio("modern.py", "input-required") as session:
            await session.discover()
            asked_colour(await round_trip(session))
            page = await round_trip(session, "ask_url", None)
            assert isinstance(page, types.ElicitRequestURLParams)
            assert page.url == "http://127.0.0.1:1/verify"

    run(go)


def test_modern_never_satisfied_keeps_asking() -> None:
    async def go() -> None:
        async with stdio("modern.py", "never-satisfied") as session:
            await session.discover()
            state = None
            for _ in range(3):  # answered or not, it asks again: a client must bound the rounds
                result = await session.call_tool(
                    "ask", {}, request_state=state, allow_input_required=True
                )
                assert isinstance(result, types.InputRequiredResult)
                assert result.request_state != state
                state = result.request_state

    run(go)


def test_modern_list_changes_on_the_listen_stream() -> None:
    async def go() -> None:
        async with stdio("modern.py", "list-changing") as session:
            await session.discover()
            assert "extra" not in {t.name for t in (await session.list_tools()).tools}
            async with listen(session, tools_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed
                assert isinstance(await anext(subscription), ToolsListChanged)
            assert "extra" in {t.name for t in (await session.list_tools()).tools}

    run(go)


def test_modern_http_refuses_the_handshake_then_discovers_lists_calls_and_round_trips() -> None:
    async def go() -> None:
        async with modern_http() as url:
            async with http(url) as session:
                await refused_handshake(session)
                await discover_list_call(session, "modern-http-test-server")
            async with http(url) as session:
                await session.discover()
                asked_colour(await round_trip(session))

    run(go)


def test_silent_discover_then_the_handshake_on_the_same_connection() -> None:
    async def go() -> None:
        async with stdio("legacy_modes.py", "silent-discover") as session:
            with anyio.move_on_after(2) as waited:
                await session.discover()
            assert waited.cancelled_caught, "server/discover was answered"
            result = await session.initialize()
            assert result.protocol_version == "2025-11-25"
            assert {t.name for t in (await session.list_tools()).tools} == {"echo", "add"}

    run(go)


def test_elicit_asks_mid_call() -> None:
    asked: list[str] = []

    async def answer(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content=ANSWER)

    async def go() -> None:
        async with stdio("legacy_modes.py", "elicit", elicitation_callback=answer) as session:
            with pytest.raises(MCPError) as caught:
                await session.discover()
            assert caught.value.code == types.METHOD_NOT_FOUND
            await session.initialize()
            result = await session.call_tool("ask", {})
            assert text(result) == "colour=red count=2 confirm=True"
            assert asked == ["Which colour?"]

    run(go)
