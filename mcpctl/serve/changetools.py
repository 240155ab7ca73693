"""The change tools of ``mcpctl serve`` (``--allow-changes``): each resolves its plan, then
the user's answer to the consent form, before its body runs (see :mod:`mcpctl.serve.tools`
for how the SDK asks in either protocol era, and :mod:`mcpctl.serve.consent`).

The annotations below are read at run time by the SDK (``typing.get_type_hints``): the names
they use are module globals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio.to_thread
from pydantic import Field

from mcpctl.errors import McpctlError
from mcpctl.sdk import AcceptedElicitation, Context, Elicit, ElicitationResult, Resolve, ToolError
from mcpctl.serve import changes
from mcpctl.serve.changes import Change
from mcpctl.serve.consent import CANNOT_ASK, Consent, can_ask
from mcpctl.serve.models import ChangeOutcome
from mcpctl.serve.tools import Name, sync_reported, tool_error, workspace_of

__all__ = ["CHANGE_TOOLS"]


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


@sync_reported
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


@sync_reported
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


@sync_reported
def _plan_enable(ctx: Context, name: str) -> Change | str:
    _asking(ctx)
    return changes.plan_toggle(workspace_of(ctx), name, True)


@sync_reported
def _plan_disable(ctx: Context, name: str) -> Change | str:
    _asking(ctx)
    return changes.plan_toggle(workspace_of(ctx), name, False)


@sync_reported
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


#: The change tools (``--allow-changes``): each asks the user first.
CHANGE_TOOLS: dict[str, tuple[Callable[..., Any], dict[str, bool]]] = {
    "add_server": (add_server, {"readOnlyHint": False, "destructiveHint": False}),
    "add_from_registry": (add_from_registry, {"readOnlyHint": False, "destructiveHint": False}),
    "enable_server": (enable_server, {"readOnlyHint": False, "idempotentHint": True}),
    "disable_server": (disable_server, {"readOnlyHint": False, "idempotentHint": True}),
    "remove_server": (remove_server, {"readOnlyHint": False, "destructiveHint": True}),
}
