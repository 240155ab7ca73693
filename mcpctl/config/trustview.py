"""What a config file's trust looks like: each server's state, the refusal of a command
that would start one, and the warning of one that only reads.

:class:`~mcpctl.config.trust.TrustStore` works the states out, for every command that reads
a project's file (``mcpctl list`` included): plain classes, no ``@dataclass`` to generate at
import. What approving a server would let happen is :mod:`mcpctl.config.trustdescribe`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, NamedTuple

from mcpctl.errors import UntrustedConfigError

__all__ = [
    "FileTrust",
    "ServerState",
    "ServerTrust",
    "trust_command",
]

ServerState = Literal["trusted", "new", "changed"]
#: How many server names a refusal lists before "and N more".
NAMES_SHOWN = 5


class ServerTrust(NamedTuple):
    """One server of a file as the record sees it: ``trusted`` (its content was approved),
    ``new`` (no content of that name was) or ``changed`` (another content was)."""

    name: str
    state: ServerState
    digest: str


class FileTrust:
    """A config file's trust: ``reason`` when the whole file is trusted (``own``,
    ``MCPCTL_TRUST=1``, ``CI``), else the servers' states by the record (``servers``).

    Attributes:
        path: the file, as an absolute path.
        real: its real path (what the record knows it by).
        reason: why the whole file is trusted, or ``None``.
        servers: name -> :class:`ServerTrust`.
        client: the client whose file it is (``None``: an mcpctl config).
    """

    __slots__ = ("client", "path", "real", "reason", "servers")

    def __init__(
        self,
        path: Path,
        real: str,
        reason: str | None,
        servers: dict[str, ServerTrust] | None = None,
        client: str | None = None,
    ) -> None:
        self.path = path
        self.real = real
        self.reason = reason
        self.servers: dict[str, ServerTrust] = {} if servers is None else servers
        self.client = client

    def __repr__(self) -> str:
        return f"FileTrust({self.path!r}, reason={self.reason!r}, servers={self.servers!r})"

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
        return self._refusal(self.waiting(), refused) if refused else None

    def _refusal(self, waiting: list[str], refused: list[str]) -> UntrustedConfigError:
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
        waiting = self.waiting()
        if not waiting:
            return {}
        shared = self._refusal(waiting, waiting)
        return {
            (name, self.servers[name].digest): UntrustedConfigError(
                shared.message, path=shared.path, names=(name,), subjects=shared.subjects
            )
            for name in waiting
        }

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
    import shlex

    words = ["mcpctl", "trust", *(["--yes"] if yes else []), *(["--as", client] if client else [])]
    return " ".join([*words, shlex.quote(os.fspath(path))])
