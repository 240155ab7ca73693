"""An MCP server that speaks only protocol revision 2026-07-28, over streamable HTTP.

python modern_http.py PORT       (serves http://127.0.0.1:PORT/mcp; prints nothing)

The tools are modern.py's (its ``modern`` mode): ``echo``, ``add`` and ``ask``, whose first call
answers ``input_required`` with the form-mode "Which colour?" elicitation under the key ``"q"``
and ``requestState: "ask-1"``, and whose retry with the answer gets ``colour=red count=2
confirm=True``. ``prompts/list``, ``resources/list`` and ``resources/templates/list`` are empty.

The SDK's own single-exchange path serves the modern POSTs: ``server/discover`` (its serverInfo
stamp is ``modern-http-test-server`` 1.0.0), JSON responses, header checks, ``ping`` and other
unknown methods -32601 with HTTP 404. The SDK would serve the initialize handshake too, so a
gate in front of it turns away everything else, as a modern-only server does:

* ``GET`` and ``DELETE``: 405 (``Allow: POST``); there is no standing stream nor session;
* a POST of ``initialize``, or without an ``MCP-Protocol-Version`` header naming 2026-07-28:
  HTTP 400 with the JSON-RPC error -32022, data ``{"supported": ["2026-07-28"], "requested":
  ...}`` (the status the SDK gives -32022; ``requested`` is left out when nothing named one).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

VERSION = "2026-07-28"
COLOUR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "colour": {"type": "string", "enum": ["red", "green", "blue"]},
        "count": {"type": "integer"},
        "confirm": {"type": "boolean"},
    },
    "required": ["colour"],
}
TOOLS = [
    types.Tool(
        name="echo",
        description="Return the text unchanged.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    ),
    types.Tool(
        name="add",
        description="Add two integers.",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    ),
    types.Tool(
        name="ask",
        description="Ask the user which colour (an input_required round trip).",
        input_schema={"type": "object", "properties": {}, "required": []},
    ),
]


def _text(value: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)], is_error=error)


async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    args = params.arguments or {}
    if params.name == "echo":
        return _text(str(args.get("text")))
    if params.name == "add":
        a, b = args.get("a"), args.get("b")
        if not (isinstance(a, int) and isinstance(b, int)):
            return _text("a and b must be integers", error=True)
        return _text(str(a + b))
    if params.name != "ask":
        return _text(f"no tool {params.name!r}", error=True)
    reply = (params.input_responses or {}).get("q")
    if params.request_state != "ask-1" or not isinstance(reply, types.ElicitResult):
        form = types.ElicitRequestFormParams(
            message="Which colour?", requested_schema=COLOUR_SCHEMA
        )
        return types.InputRequiredResult(
            input_requests={"q": types.ElicitRequest(params=form)}, request_state="ask-1"
        )
    if reply.action != "accept":
        return _text(f"the user chose {reply.action}", error=True)
    content = reply.content or {}
    keys = COLOUR_SCHEMA["properties"]
    return _text(" ".join(f"{key}={content[key]}" for key in keys if key in content))


async def list_prompts(ctx: ServerRequestContext[Any], params: Any) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=[])


async def list_resources(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[])


async def list_templates(
    ctx: ServerRequestContext[Any], params: Any
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[])


server: Server[Any] = Server(
    "modern-http-test-server",
    version="1.0.0",
    instructions="A modern-only test server over HTTP: echo, add and ask.",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_prompts=list_prompts,
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
)


class ModernOnly:
    """ASGI gate: only 2026-07-28 POSTs reach the SDK; the rest is refused as above."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)  # the lifespan that runs the SDK's manager
            return
        request = Request(scope, receive)
        if request.method != "POST":
            await Response(status_code=405, headers={"Allow": "POST"})(scope, receive, send)
            return
        body = await request.body()
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        message = message if isinstance(message, dict) else {}
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        header = request.headers.get("mcp-protocol-version")
        if message.get("method") == "initialize" or header != VERSION:
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            if message.get("method") == "initialize":
                requested = params.get("protocolVersion")
            else:
                requested = header or meta.get("io.modelcontextprotocol/protocolVersion")
            data: dict[str, Any] = {"supported": [VERSION]}
            if isinstance(requested, str):
                data["requested"] = requested
            error = {"code": -32022, "message": "Unsupported protocol version", "data": data}
            reply = {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
            await JSONResponse(reply, status_code=400)(scope, receive, send)
            return

        replayed = False

        async def replay() -> Message:  # the SDK reads the body the gate has already read
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def main() -> None:
    port = int(sys.argv[1])
    app = ModernOnly(server.streamable_http_app(json_response=True, stateless_http=True))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
