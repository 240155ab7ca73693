"""What approving a server of a config file lets happen, as ``mcpctl trust`` shows it: its
command line or URL, its working dir, and the names (never the values) of the secrets and the
environment it would receive.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.config.trustview import ServerState

__all__ = ["ServerView", "describe"]


@dataclass(frozen=True)
class ServerView:
    """What approving one server lets happen, as written in the file (placeholders named,
    never resolved; a literal secret shown as ``****``).

    Attributes:
        runs: the command line of a stdio server (``None`` for a remote one).
        connects: the URL of a remote server.
        cwd: the working dir (``None``: the folder mcpctl runs in).
        env: the names of the variables its ``env`` sets.
        inherits: ``True`` when it gets the whole environment, else the names it gets from it
            besides the minimal set (``HOME``, ``PATH``...).
        headers: the names of the HTTP headers it is sent.
        auth: how it signs in (``bearer``, ``oauth``...), if it does.
        secrets: the ``${VAR}`` variables it would receive, resolved from the environment
            or the keyring.
        helper: the command a client runs for its headers (Claude Code's headersHelper).
    """

    name: str
    state: ServerState
    enabled: bool
    transport: str
    runs: str | None = None
    connects: str | None = None
    cwd: str | None = None
    env: tuple[str, ...] = ()
    inherits: bool | tuple[str, ...] = ()
    headers: tuple[str, ...] = ()
    auth: str | None = None
    secrets: tuple[str, ...] = ()
    helper: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON view."""
        return {
            "name": self.name, "state": self.state, "enabled": self.enabled,
            "transport": self.transport, "runs": self.runs, "connects": self.connects,
            "cwd": self.cwd, "env": list(self.env),
            "inherits": self.inherits if isinstance(self.inherits, bool) else list(self.inherits),
            "headers": list(self.headers), "auth": self.auth, "secrets": list(self.secrets),
            "headers_helper": self.helper,
        }  # fmt: skip


def describe(
    name: str, entry: ServerEntry, state: ServerState, *, helper: str | None = None
) -> ServerView:
    """What approving server ``name`` (``entry``, as written) lets happen."""
    from mcpctl.config.placeholders import find_placeholders
    from mcpctl.config.redaction import redact_entry_data

    data = redact_entry_data(entry.to_data())
    runs = None
    if not entry.is_remote:
        args = data.get("args")
        words = [str(a) for a in args] if isinstance(args, list) else []
        runs = shlex.join([str(data.get("command", "")), *words])
    texts = [entry.command or "", *entry.args, *entry.env.values(), entry.cwd or "",
             entry.url or "", *entry.headers.values()]  # fmt: skip
    if entry.auth is not None:
        auth = entry.auth
        texts += [v for v in (auth.token, auth.value, auth.username, auth.password,
                              auth.client_id, auth.client_secret) if v is not None]  # fmt: skip
    secrets = tuple(dict.fromkeys(p.name for t in texts for p in find_placeholders(t)))
    url = data.get("url")
    return ServerView(
        name, state, entry.enabled, entry.effective_transport, runs,
        url if isinstance(url, str) else None, entry.cwd, tuple(entry.env),
        entry.inherit_env, tuple(entry.headers),
        entry.auth.type if entry.auth is not None and entry.auth.type != "none" else None,
        secrets, helper,
    )  # fmt: skip
