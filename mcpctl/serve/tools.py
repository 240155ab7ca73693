"""The tools of ``mcpctl serve``, as the SDK's server sees them: thin wrappers of
:mod:`mcpctl.serve.reading` (here) and of :mod:`mcpctl.serve.changes`
(:mod:`mcpctl.serve.changetools`).

Each tool's parameters and output model are its schemas; a :class:`~mcpctl.errors.McpctlError`
becomes the tool's error (message and hint, redacted). A change tool's parameters are
resolved in two steps before its body runs: the plan (refused at once when the write would
be), then the user's answer to the consent form (:mod:`mcpctl.serve.consent`) -- the SDK
asks in whichever protocol era the client speaks: an ``elicitation/create`` request during
the call (the handshake era), or an ``input_required`` result that the client answers by
calling again (the stateless 2026-07-28 revision). A changed file since the question was
asked is a new question (the answer is bound to the text the user saw).

The annotations below are read at run time by the SDK (``typing.get_type_hints``): the names
they use are module globals.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

import anyio.to_thread
from pydantic import Field

from mcpctl.errors import McpctlError
from mcpctl.sdk import Context, ToolError
from mcpctl.serve import reading
from mcpctl.serve.marks import clean
from mcpctl.serve.models import (
    Diagnosis,
    DiffResult,
    HealthResult,
    Listing,
    SearchResult,
    ToolsResult,
)
from mcpctl.serve.workspace import Workspace

__all__ = ["READ_TOOLS", "reported", "sync_reported", "tool_error", "workspace_of"]

P = ParamSpec("P")
R = TypeVar("R")

Names = Annotated[
    list[str] | None,
    Field(description="servers by name (default: every enabled server)"),
]
Timeout = Annotated[
    float | None,
    Field(
        default=None, gt=0, le=600, description="seconds each server may take (default: its own)"
    ),
]
Name = Annotated[str, Field(description="the server's name in the config file")]


def workspace_of(ctx: Context) -> Workspace:
    """The workspace of the server that handles ``ctx``'s request (its lifespan's value)."""
    found = ctx.request_context.lifespan_context
    assert isinstance(found, Workspace)
    return found


def tool_error(exc: McpctlError) -> ToolError:
    """An error of mcpctl as the tool's error: its code, message and hint, redacted."""
    text = f"{exc.code}: {exc.message}" + (f" (hint: {exc.hint})" if exc.hint else "")
    return ToolError(str(clean(text)))


def reported(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """``fn``, with mcpctl's errors turned into the tool's error."""

    @functools.wraps(fn)
    async def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except McpctlError as exc:
            raise tool_error(exc) from None

    return run


def sync_reported(fn: Callable[P, R]) -> Callable[P, R]:
    """A resolver ``fn`` (run in a thread by the SDK), with mcpctl's errors as tool errors."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except McpctlError as exc:
            raise tool_error(exc) from None

    return run


# --- reading ----------------------------------------------------------------------------


@reported
async def list_servers(
    ctx: Context,
    group: Annotated[str | None, Field(description="only this group's servers")] = None,
) -> Listing:
    """List the configured MCP servers: state (enabled/disabled), transport, groups, the
    command or URL, and the secrets each needs (by name). Starts nothing."""
    ws = workspace_of(ctx)
    return await anyio.to_thread.run_sync(lambda: reading.list_servers(ws, group))


@reported
async def health(
    ctx: Context, names: Names = None, timeout_seconds: Timeout = None
) -> HealthResult:
    """Probe servers (default: all enabled): start or connect to each, list its tools, and
    say healthy, degraded, needs_auth, unhealthy or unavailable, with why and the fix.
    Everything started is stopped before this returns."""
    return await reading.health(workspace_of(ctx), names or [], timeout_seconds)


@reported
async def doctor(ctx: Context, name: Name, timeout_seconds: Timeout = None) -> Diagnosis:
    """Diagnose one server layer by layer (config, placeholders, command, spawn or network,
    TLS, auth, protocol, lists): the first layer that fails, what was seen and how to fix
    it. Use it when a server is failing."""
    return await reading.diagnose(workspace_of(ctx), name, timeout_seconds)


@reported
async def list_tools(
    ctx: Context,
    names: Names = None,
    prefix: Annotated[
        Literal["none", "underscore", "colon"],
        Field(description="how a host names them: tool, mcp_SERVER_TOOL or SERVER:TOOL"),
    ] = "none",
    timeout_seconds: Timeout = None,
) -> ToolsResult:
    """The tools of servers (default: all enabled) as a host exposes them (tools.allow/deny
    applied), with the tokens each definition costs the model and each server's total."""
    return await reading.tools(workspace_of(ctx), names or [], prefix, timeout_seconds)


@reported
async def search_registries(
    ctx: Context,
    query: Annotated[str, Field(description="words to look for, e.g. 'postgres'")],
    transport: Annotated[
        Literal["stdio", "remote"] | None,
        Field(description="stdio (a package run locally) or remote (a URL)"),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=reading.MAX_RESULTS)] = 10,
    offline: Annotated[bool, Field(description="search the local cache only")] = False,
) -> SearchResult:
    """Search the MCP registries for servers (ranked, from the local cache, synced when
    stale). A result's name is what add_from_registry takes."""
    ws = workspace_of(ctx)
    return await anyio.to_thread.run_sync(
        lambda: reading.search(ws, query, transport=transport, limit=limit, offline=offline)
    )


@reported
async def snapshot_diff(
    ctx: Context,
    against: Annotated[
        str | None,
        Field(description="a snapshot or lock file, e.g. mcp-lock.json (default: the last one)"),
    ] = None,
    probe: Annotated[
        bool, Field(description="also start every enabled server and compare its tools")
    ] = False,
) -> DiffResult:
    """What changed since a snapshot or lock file: servers added, removed or reconfigured,
    and with probe=true, tools added, removed or changed in place (a server that silently
    changes what a tool says)."""
    return await reading.snapshot_diff(workspace_of(ctx), against, probe)


#: The read-only tools: name -> (function, what a client may assume of it).
READ_TOOLS: dict[str, tuple[Callable[..., Any], dict[str, bool]]] = {
    "list_servers": (list_servers, {"readOnlyHint": True, "openWorldHint": False}),
    "health": (health, {"readOnlyHint": True, "openWorldHint": True}),
    "doctor": (doctor, {"readOnlyHint": True, "openWorldHint": True}),
    "list_tools": (list_tools, {"readOnlyHint": True, "openWorldHint": True}),
    "search_registries": (search_registries, {"readOnlyHint": True, "openWorldHint": True}),
    "snapshot_diff": (snapshot_diff, {"readOnlyHint": True, "openWorldHint": True}),
}
