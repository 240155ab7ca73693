"""What a config file's trust looks like: each server's state, the refusal of a command
that would start one, the warning of one that only reads, and what approving would let run.

:class:`~mcpctl.config.trust.TrustStore` works the states out; ``mcpctl trust`` shows
:func:`describe` of each server waiting for approval -- its command line or URL, its working
dir, and the names (never the values) of the secrets and the environment it would receive.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcpctl.errors import UntrustedConfigError

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = [
    "FileTrust",
    "ServerState",
    "ServerTrust",
    "ServerView",
    "describe",
    "trust_command",
]

ServerState = Literal["trusted", "new", "changed"]
#: How many server names a refusal lists before "and N more".
NAMES_SHOWN = 5


@dataclass(frozen=True)
class ServerTrust:
    """One server of a file as the record sees it: ``trusted`` (its content was approved),
    ``new`` (no content of that name was) or ``changed`` (another content was)."""

    name: str
    state: ServerState
    digest: str


@dataclass
class FileTrust:
    """A config file's trust: ``reason`` when the whole file is trusted (``own``,
    ``MCPCTL_TRUST=1``, ``CI``), else the servers' states by the record."""

    path: Path
    real: str
    reason: str | None
    servers: dict[str, ServerTrust] = field(default_factory=dict)
    client: str | None = None

    @property
    def trusted(self) -> bool:
        """Every server may run."""
        return not self.waiting()

    def waiting(self, names: Iterable[str] | None = None) -> list[str]:
        """The servers (of ``names``, default all) that wait for approval."""
        if self.reason is not None:
            return []
        wanted = self.servers if names is None else [n for n in names if n in self.servers]
        return [n for n in wanted if self.servers[n].state != "trusted"]

    def command(self) -> str:
        """The command that reviews and approves this file."""
        return trust_command(self.path, self.client)

    def refusal(self, names: Iterable[str] | None = None) -> UntrustedConfigError | None:
        """The error for starting ``names`` (default all), or ``None`` when they may run."""
        refused = self.waiting(names)
        if not refused:
            return None
        waiting = self.waiting()
        return UntrustedConfigError(
            f"{self.path} is not trusted: {_count(waiting)} for approval "
            f"({_names(waiting)}); review {'it' if len(waiting) == 1 else 'them'} with "
            f"'{self.command()}'",
            path=str(self.path),
            names=refused,
            subjects=(str(self.path), *waiting),
        )

    def refusals(self) -> dict[tuple[str, str], UntrustedConfigError]:
        """The refusal of each server that waits, by its name and digest (what
        :func:`mcpctl.config.trustguard.hold` takes)."""
        found = {}
        for name in self.waiting():
            refusal = self.refusal([name])
            if refusal is not None:
                found[(name, self.servers[name].digest)] = refusal
        return found

    def notice(self) -> str | None:
        """The warning of a command that only reads the file, or ``None`` when it is trusted."""
        waiting = self.waiting()
        if not waiting:
            return None
        return (
            f"{self.path} is not trusted: {_count(waiting)} for approval ({_names(waiting)}); "
            f"none of them is started until '{self.command()}'"
        )


def _count(names: list[str]) -> str:
    return "1 server waits" if len(names) == 1 else f"{len(names)} servers wait"


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    more = len(names) - NAMES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def trust_command(
    path: str | os.PathLike[str], client: str | None = None, *, yes: bool = False
) -> str:
    """``mcpctl trust FILE`` (``--as CLIENT`` for a client's file, ``--yes`` to approve
    without asking), quoted for a shell."""
    words = ["mcpctl", "trust", *(["--yes"] if yes else []), *(["--as", client] if client else [])]
    return " ".join([*words, shlex.quote(os.fspath(path))])


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
