"""The tools of ``mcpctl serve``, as the SDK's server sees them: thin wrappers of
:mod:`mcpctl.serve.reading` and :mod:`mcpctl.serve.changes`.

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
from mcpctl.sdk import AcceptedElicitation, Context, Elicit, ElicitationResult, Resolve, ToolError
from mcpctl.serve import changes, reading
from mcpctl.serve.changes import Change
from mcpctl.serve.consent import CANNOT_ASK, Consent, can_ask
from mcpctl.serve.marks import clean
from mcpctl.serve.models import (
    ChangeOutcome,
    Diagnosis,
    DiffResult,
    HealthResult,
    Listing,
    SearchResult,
    ToolsResult,
)
from mcpctl.serve.workspace import Workspace

__all__ = ["CHANGE_TOOLS", "READ_TOOLS", "workspace_of"]

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


def _sync_reported(fn: Callable[P, R]) -> Callable[P, R]:
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


# --- changes ----------------------------------------------------------------------------


def _asking(ctx: Context) -> None:
    """Refuse a change at once when the client cannot ask its user."""
    if not can_ask(ctx.client_capabilities):
        raise ToolError(CANNOT_ASK)


def _ask(change: Change | str) -> Elicit[Consent] | None:
    """The form for ``change``; nobody is asked when there is nothing to change."""
    return Elicit(change.message, Consent) if isinstance(change, Change) else None


async def _outcome(
    ctx: Context, change: Change | str, answer: ElicitationResult[Consent] | None
) -> ChangeOutcome:
    """Apply ``change`` when the user accepted it with the box ticked."""
    ws = workspace_of(ctx)
    config = ws.config_path
    if isinstance(change, str):  # nothing to change
        return ChangeOutcome(action="none", applied=False, config=config, detail=change)
    assert answer is not None
    if isinstance(answer, AcceptedElicitation) and answer.data.confirm:
        try:
            detail = await anyio.to_thread.run_sync(change.apply)
        except McpctlError as exc:
            raise tool_error(exc) from None
        return ChangeOutcome(
            action=change.action,
            applied=True,
            answer="accept",
            config=config,
            detail=detail,
            undo=changes.undo_command(ws),
        )
    why = {
        "accept": "the user did not tick the box to make it",
        "decline": "the user declined it",
        "cancel": "the user dismissed the form",
    }[answer.action]
    return ChangeOutcome(
        action=change.action,
        applied=False,
        answer=answer.action,
        config=config,
        detail=f"nothing changed: {why}",
    )


@_sync_reported
def _plan_add(
    ctx: Context,
    name: str,
    command: list[str] | None,
    url: str | None,
    transport: str | None,
    env: dict[str, str] | None,
    headers: dict[str, str] | None,
    cwd: str | None,
    description: str | None,
) -> Change:
    from mcpctl.config.model import ServerEntry
    from mcpctl.errors import UsageError

    _asking(ctx)
    if bool(command) == bool(url):
        raise UsageError("give either command (a stdio server) or url (a remote one)")
    if url is None and (headers or transport):
        raise UsageError("headers and transport apply to remote servers (url)")
    if url is not None and (env or cwd):
        raise UsageError("env and cwd apply to stdio servers (command)")
    argv = list(command or [])
    entry = ServerEntry(
        command=argv[0] if argv else None,
        args=tuple(argv[1:]),
        env=dict(env or {}),
        cwd=cwd,
        url=url,
        transport=transport,  # type: ignore[arg-type]
        headers=dict(headers or {}),
        description=description,
    )
    return changes.plan_add(workspace_of(ctx), name, entry)


def _ask_add(change: Annotated[Change, Resolve(_plan_add)]) -> Elicit[Consent] | None:
    return _ask(change)


async def add_server(
    ctx: Context,
    name: Annotated[str, Field(description="its name: letters, digits, '_' and '-'")],
    change: Annotated[Change, Resolve(_plan_add)],
    answer: Annotated[ElicitationResult[Consent], Resolve(_ask_add)],
    command: Annotated[
        list[str] | None,
        Field(
            description="a stdio server: the program and its arguments, e.g. ['uvx', "
            "'mcp-server-time']"
        ),
    ] = None,
    url: Annotated[str | None, Field(description="a remote server: its URL")] = None,
    transport: Annotated[
        Literal["streamable-http", "sse"] | None,
        Field(description="a remote server's transport (default: streamable-http)"),
    ] = None,
    env: Annotated[
        dict[str, str] | None,
        Field(
            description="environment of a stdio server; a secret as a placeholder: "
            "{'GITHUB_TOKEN': '${GITHUB_TOKEN}'} (literal secrets are refused)"
        ),
    ] = None,
    headers: Annotated[
        dict[str, str] | None,
        Field(description="HTTP headers of a remote server; secrets as ${VAR} placeholders"),
    ] = None,
    cwd: Annotated[str | None, Field(description="working directory of a stdio server")] = None,
    description: Annotated[str | None, Field(description="what it is for")] = None,
) -> ChangeOutcome:
    """Add a server to the config: a stdio server (command) or a remote one (url). The user
    sees exactly what will be written and what will run, and approves it, or nothing is
    written. Secrets go in as ${VAR} placeholders, never as values."""
    return await _outcome(ctx, change, answer)


@_sync_reported
def _plan_registry(
    ctx: Context,
    server: str,
    name: str | None,
    env: dict[str, str] | None,
    headers: dict[str, str] | None,
    prefer: Literal["package", "remote"] | None,
) -> Change | str:
    _asking(ctx)
    return changes.plan_add_from_registry(
        workspace_of(ctx), server, name=name, env=env, headers=headers, prefer=prefer
    )


def _ask_registry(
    change: Annotated[Change | str, Resolve(_plan_registry)],
) -> Elicit[Consent] | None:
    return _ask(change)


async def add_from_registry(
    ctx: Context,
    server: Annotated[
        str, Field(description="the registry's name, from search_registries (NAME or NAME@VERSION)")
    ],
    change: Annotated[Change | str, Resolve(_plan_registry)],
    answer: Annotated[ElicitationResult[Consent], Resolve(_ask_registry)],
    name: Annotated[
        str | None, Field(description="its name in the config (default: its slug)")
    ] = None,
    env: Annotated[
        dict[str, str] | None,
        Field(description="values for its environment variables; secrets as ${VAR} placeholders"),
    ] = None,
    headers: Annotated[
        dict[str, str] | None, Field(description="values for its headers; secrets as ${VAR}")
    ] = None,
    prefer: Annotated[
        Literal["package", "remote"] | None,
        Field(description="a package run locally, or the remote, when it offers both"),
    ] = None,
) -> ChangeOutcome:
    """Add a server found with search_registries, pinned to its version, secrets as ${VAR}
    placeholders. The user approves what will be written and run, or nothing is written."""
    return await _outcome(ctx, change, answer)


@_sync_reported
def _plan_enable(ctx: Context, name: str) -> Change | str:
    _asking(ctx)
    return changes.plan_toggle(workspace_of(ctx), name, True)


@_sync_reported
def _plan_disable(ctx: Context, name: str) -> Change | str:
    _asking(ctx)
    return changes.plan_toggle(workspace_of(ctx), name, False)


@_sync_reported
def _plan_remove(ctx: Context, name: str) -> Change:
    _asking(ctx)
    return changes.plan_remove(workspace_of(ctx), name)


def _ask_enable(change: Annotated[Change | str, Resolve(_plan_enable)]) -> Elicit[Consent] | None:
    return _ask(change)


def _ask_disable(
    change: Annotated[Change | str, Resolve(_plan_disable)],
) -> Elicit[Consent] | None:
    return _ask(change)


def _ask_remove(change: Annotated[Change, Resolve(_plan_remove)]) -> Elicit[Consent] | None:
    return _ask(change)


async def enable_server(
    ctx: Context,
    name: Name,
    change: Annotated[Change | str, Resolve(_plan_enable)],
    answer: Annotated[ElicitationResult[Consent], Resolve(_ask_enable)],
) -> ChangeOutcome:
    """Enable a disabled server (clients start it again), once the user approves."""
    return await _outcome(ctx, change, answer)


async def disable_server(
    ctx: Context,
    name: Name,
    change: Annotated[Change | str, Resolve(_plan_disable)],
    answer: Annotated[ElicitationResult[Consent], Resolve(_ask_disable)],
) -> ChangeOutcome:
    """Disable a server without removing it (clients stop starting it), once the user
    approves."""
    return await _outcome(ctx, change, answer)


async def remove_server(
    ctx: Context,
    name: Name,
    change: Annotated[Change, Resolve(_plan_remove)],
    answer: Annotated[ElicitationResult[Consent], Resolve(_ask_remove)],
) -> ChangeOutcome:
    """Remove a server from the config, once the user approves (mcpctl undo reverts it)."""
    return await _outcome(ctx, change, answer)


#: The read-only tools: name -> (function, what a client may assume of it).
READ_TOOLS: dict[str, tuple[Callable[..., Any], dict[str, bool]]] = {
    "list_servers": (list_servers, {"readOnlyHint": True, "openWorldHint": False}),
    "health": (health, {"readOnlyHint": True, "openWorldHint": True}),
    "doctor": (doctor, {"readOnlyHint": True, "openWorldHint": True}),
    "list_tools": (list_tools, {"readOnlyHint": True, "openWorldHint": True}),
    "search_registries": (search_registries, {"readOnlyHint": True, "openWorldHint": True}),
    "snapshot_diff": (snapshot_diff, {"readOnlyHint": True, "openWorldHint": True}),
}
#: The change tools (``--allow-changes``): each asks the user first.
CHANGE_TOOLS: dict[str, tuple[Callable[..., Any], dict[str, bool]]] = {
    "add_server": (add_server, {"readOnlyHint": False, "destructiveHint": False}),
    "add_from_registry": (add_from_registry, {"readOnlyHint": False, "destructiveHint": False}),
    "enable_server": (enable_server, {"readOnlyHint": False, "idempotentHint": True}),
    "disable_server": (disable_server, {"readOnlyHint": False, "idempotentHint": True}),
    "remove_server": (remove_server, {"readOnlyHint": False, "destructiveHint": True}),
}
