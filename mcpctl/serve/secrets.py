"""``secret_set``: the user types a secret's value on a page of this machine (URL mode).

The value never passes through a tool's arguments (the model writes those) nor through a
form (the MCP specification forbids form-mode elicitation for sensitive values: the client
sees what a form returns). The tool asks the client to open a page of
:mod:`mcpctl.serve.secretpage` (URL-mode elicitation; in the handshake era an
``elicitation/create`` request, in the stateless era an ``input_required`` result); the
user types the value there and it goes to the OS keyring. A client that cannot open a page
(no URL-mode elicitation) gets the tool's error, saying why and what to run instead.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp_types import ElicitRequest, ElicitRequestURLParams, ElicitResult, InputRequiredResult
from mcp_types.version import is_version_at_least
from pydantic import Field

from mcpctl.errors import McpctlError
from mcpctl.sdk import Context, ToolError
from mcpctl.serve.models import ChangeOutcome
from mcpctl.serve.secretpage import PAGE_TTL, SecretPage, SecretPages
from mcpctl.serve.tools import tool_error, workspace_of

__all__ = ["NO_PAGE", "SECRET_TOOL", "close_pages", "secret_set"]

#: Why ``secret_set`` is refused when the client cannot open a page.
NO_PAGE = (
    "this client cannot open a page for the user (it declared no URL-mode elicitation), and "
    "a secret is never passed through a form or a tool's arguments, which the client and the "
    "model see; ask the user to run, in a terminal: mcpctl secret set {name}"
)
#: The key of the page's question in an ``input_required`` result.
KEY = "secret_page"
_STATELESS = "2026-07-28"

_pages: SecretPages | None = None


def _store(name: str, value: str) -> None:
    from mcpctl.auth.secrets import SecretStore

    SecretStore().set(name, value)


def pages() -> SecretPages:
    """This process's secret pages (served from the first one on)."""
    global _pages  # noqa: PLW0603 -- one set of pages per process, as one loopback server
    if _pages is None:
        _pages = SecretPages(_store)
    return _pages


def close_pages() -> None:
    """Stop serving secret pages (at the end of ``mcpctl serve``)."""
    global _pages  # noqa: PLW0603 -- see pages()
    if _pages is not None:
        _pages.close()
        _pages = None


def _can_open(capabilities: Any) -> bool:
    elicitation = getattr(capabilities, "elicitation", None)
    return elicitation is not None and elicitation.url is not None


def _message(name: str) -> str:
    return (
        f"mcpctl asks you to type the value of the secret {name} on a page of this machine "
        "(127.0.0.1). It goes to your OS keyring; the agent never sees it. Servers get it "
        f"where the config says ${{{name}}}. Not expecting this? Decline."
    )


async def _wait(page: SecretPage, config: str) -> ChangeOutcome:
    """The page's outcome, once the user submitted it (or it expired)."""
    submitted = await anyio.to_thread.run_sync(page.done.wait, PAGE_TTL, abandon_on_cancel=True)
    pages().drop(page)
    action = f"secret set {page.name}"
    if not submitted:
        return ChangeOutcome(
            action=action,
            applied=False,
            answer="accept",
            config=config,
            detail="nothing stored: the page was not sent in time",
        )
    if not page.stored:
        return ChangeOutcome(
            action=action,
            applied=False,
            answer="accept",
            config=config,
            detail=f"nothing stored: {page.error}",
        )
    return ChangeOutcome(
        action=action,
        applied=True,
        answer="accept",
        config=config,
        detail=f"{page.name} is stored in the OS keyring",
        undo=f"mcpctl secret rm {page.name}",
    )


def _declined(name: str, answer: Literal["decline", "cancel"], config: str) -> ChangeOutcome:
    why = "the user declined it" if answer == "decline" else "the user dismissed it"
    return ChangeOutcome(
        action=f"secret set {name}",
        applied=False,
        answer=answer,
        config=config,
        detail=f"nothing stored: {why}",
    )


async def secret_set(
    ctx: Context,
    name: Annotated[
        str, Field(description="the placeholder's name, UPPER_SNAKE_CASE (e.g. GITHUB_TOKEN)")
    ],
) -> ChangeOutcome | InputRequiredResult:
    """Ask the user to type a secret's value on a page of this machine; it goes to the OS
    keyring, where ${NAME} placeholders find it. Never pass a secret's value yourself: you
    only name it; the user types it, and you never see it."""
    from mcpctl.auth.secrets import check_secret_name

    config = workspace_of(ctx).config_path
    try:
        check_secret_name(name)
    except McpctlError as exc:
        raise tool_error(exc) from None
    if not _can_open(ctx.client_capabilities):
        raise ToolError(NO_PAGE.format(name=name))
    version = ctx.protocol_version
    if version is not None and is_version_at_least(version, _STATELESS):
        return await _stateless(ctx, name, config)
    page, url = pages().open(name)
    try:
        answer = await ctx.elicit_url(_message(name), url, page.token)
        if answer.action != "accept":
            return _declined(name, answer.action, config)
        outcome = await _wait(page, config)
        if outcome.applied:
            await ctx.session.send_elicit_complete(page.token)
        return outcome
    finally:
        pages().drop(page)


async def _stateless(ctx: Context, name: str, config: str) -> ChangeOutcome | InputRequiredResult:
    """The stateless era: the page's address in an ``input_required`` result, then the
    client's call again with the user's answer (the state names the page; the SDK seals it)."""
    answers = ctx.input_responses or {}
    answer = answers.get(KEY)
    state = _page_of(ctx.request_state)
    page = pages().get(state) if state is not None else None
    if isinstance(answer, ElicitResult) and page is not None and page.name == name:
        if answer.action != "accept":
            pages().drop(page)
            return _declined(name, answer.action, config)
        return await _wait(page, config)
    page, url = pages().open(name)
    request = ElicitRequest(
        params=ElicitRequestURLParams(
            mode="url",
            message=_message(name),
            url=url,
            elicitation_id=page.token,
        )
    )
    return InputRequiredResult(
        input_requests={KEY: request}, request_state=json.dumps({"page": page.token})
    )


def _page_of(state: str | None) -> str | None:
    if not state:
        return None
    try:
        found = json.loads(state).get("page")
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


#: The tool, for :func:`mcpctl.serve.app.build_server` (``--allow-changes`` only).
SECRET_TOOL = {
    "secret_set": (
        secret_set,
        {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
    ),
}
