"""The last line of the trust check, in this process: an untrusted server never gets a
secret resolved, so it is never started or connected to.

Each command checks the servers it is about to start (:meth:`TrustStore.require
<mcpctl.config.trust.TrustStore.require>`) and refuses with the file and ``mcpctl trust``.
Beneath that, a command that reads a config file holds here the servers of it that wait for
approval (by name and digest), and :func:`mcpctl.config.placeholders.resolve_entry` -- the
step every start, connection and launch goes through -- refuses them: a way to run a server
that a command forgot to check still runs nothing. The library's own callers (a daemon) hold
nothing here unless they ask to; the CLI forgets what it held at the start of each run.
"""

from __future__ import annotations

import threading

from mcpctl.errors import UntrustedConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcpctl.config.model import ServerEntry

__all__ = ["HELD", "check", "forget", "held", "hold"]

#: (server name, digest) -> the refusal of that server.
HELD: dict[tuple[str, str], UntrustedConfigError] = {}
_lock = threading.Lock()


def hold(refusals: Mapping[tuple[str, str], UntrustedConfigError]) -> None:
    """Refuse, in this process, each server (by name and digest) of ``refusals``
    (:meth:`FileTrust.refusals <mcpctl.config.trustview.FileTrust.refusals>`)."""
    with _lock:
        HELD.update(refusals)


def held(name: str, entry: ServerEntry) -> UntrustedConfigError | None:
    """The refusal of server ``name`` with this content, when it is held."""
    if not HELD:
        return None
    from mcpctl.config.trustrecord import entry_digest

    return HELD.get((name, entry_digest(entry.to_data())))


def check(name: str, entry: ServerEntry) -> None:
    """Raise when server ``name`` with this content is held.

    Raises:
        UntrustedConfigError: it waits for approval.
    """
    refusal = held(name, entry)
    if refusal is not None:
        raise UntrustedConfigError(
            refusal.message, path=refusal.path, names=refusal.names, subjects=refusal.subjects
        )


def forget() -> None:
    """Hold nothing (a new run of the CLI in the same process)."""
    with _lock:
        HELD.clear()
