"""The consent form of a change: what mcpctl shows the user before it writes anything.

A change an agent asks for is planned first (and refused at once when the write would be:
a literal secret, an invalid entry, a name taken); then the user sees, in the client's own
form, exactly what will be written to which file, what will run and with which secrets (by
name), and text that a registry wrote quoted as its words. Only an accepted form with the
box ticked lets the change land; decline or cancel leave the file as it was. A client that
cannot show a form gets the tool's error instead: nothing runs without the user.
"""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from mcpctl.serve.marks import clean, one_line, quote

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = ["CANNOT_ASK", "Consent", "can_ask", "entry_block", "runs_block"]

#: Why a change is refused when the client cannot ask its user.
CANNOT_ASK = (
    "this client cannot show the user a form (it declared no elicitation capability), and "
    "mcpctl changes nothing without the user's approval; make the change in a terminal "
    "instead, or use a client that supports MCP elicitation"
)


class Consent(BaseModel):
    """The form's one field: the user's approval of what the message shows."""

    confirm: bool = Field(
        default=False,
        title="Make this change",
        description="Tick to let mcpctl write exactly what is shown above.",
    )


def can_ask(capabilities: Any) -> bool:
    """Whether a client with these capabilities (``ClientCapabilities`` or ``None``) can
    show a form: elicitation declared, in form mode (a bare ``elicitation: {}``, from before
    the modes existed, means forms)."""
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


def entry_block(name: str, entry: ServerEntry) -> str:
    """The entry as it will be written (literal secrets redacted, placeholders kept)."""
    from mcpctl.config.redaction import redact_entry_data

    text = json.dumps({name: redact_entry_data(entry.to_data())}, indent=2, ensure_ascii=False)
    return str(clean(text))


def runs_block(entry: ServerEntry, *, now: bool = False) -> str:
    """What will run (or be connected to) once the entry is in the file, and with which
    secrets, by name."""
    from mcpctl.render.base import names_used
    from mcpctl.render.delivery import entry_texts

    when = "now" if now else "when a client (or mcpctl) starts it"
    if entry.is_remote:
        what = f"It connects, {when}, to: {one_line(entry.url or '')}"
    else:
        line = one_line(shlex.join([entry.command or "", *entry.args]))
        what = f"It runs, {when}: {line}"
        if entry.cwd:
            what += f"\n  in: {one_line(entry.cwd)}"
    secrets = names_used(entry_texts(entry))
    if secrets:
        what += (
            f"\nIt receives the secrets {', '.join(secrets)} (from the environment or the "
            "keyring; the values are never shown)."
        )
    return str(clean(what))


def from_registry(text: str, registry: str) -> str:
    """A registry's description in a form: quoted as its words."""
    return quote(text, f"the registry {registry}")
