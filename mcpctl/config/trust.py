"""Trust of a config file: a file from elsewhere is someone else's words until approved.

mcpctl finds ``external-mcps.json`` by walking up from the working directory, since the file
is meant to be committed with a project: every clone would otherwise be a way to run code
with the user's secrets. So a config file is *trusted* when it is the user's own (under
mcpctl's config dir), when the environment says so (``MCPCTL_TRUST=1``; ``CI`` in a
pipeline, unless ``MCPCTL_TRUST=0``), or per server, when the server's content was approved
(``mcpctl trust``). Approvals are recorded by the file's real path with a digest of each
server (:func:`mcpctl.config.trustrecord.entry_digest`), so a ``git pull`` that changes one
server asks again for that one only.

:class:`TrustStore` is the library's view (a daemon asks it before it starts a file's
servers); :meth:`TrustStore.require` is the check of every command that starts, connects to
or resolves a secret for a server. The changes mcpctl itself makes keep the trust
(:mod:`mcpctl.config.trustkeep`, which :class:`~mcpctl.config.store.ConfigStore` applies).
The record is written through the store's writer, under a lock, so concurrent approvals lose
nothing; it is read as a hostile file (see :mod:`mcpctl.config.trustrecord`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from mcpctl.config.trustrecord import (
    MAX_HISTORY,
    RECORD_NAME,
    entry_digest,
    env_policy,
    file_reason,
    is_own,
    read_record,
)
from mcpctl.config.trustview import FileTrust, ServerState, ServerTrust

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.paths import Paths

__all__ = [
    "FileTrust",
    "ServerTrust",
    "TrustStore",
    "TrustedFile",
    "server_digest",
]


def server_digest(entry: ServerEntry) -> str:
    """The digest of a server entry: what it runs, where it connects, what it receives."""
    return entry_digest(entry.to_data())


class TrustedFile(NamedTuple):
    """A file of the record: its servers approved, when, and whether it is still there."""

    path: str
    servers: tuple[str, ...]
    trusted_at: str | None
    client: str | None
    exists: bool

    def to_dict(self) -> dict[str, Any]:
        """The JSON view."""
        return {"path": self.path, "servers": list(self.servers), "trusted_at": self.trusted_at,
                "client": self.client, "exists": self.exists}  # fmt: skip


class TrustStore:
    """The approvals of config files (``mcpctl trust``), and the rules around them.

    Args:
        record: the record file (``<state dir>/trust.json``).
        config_dir: mcpctl's config dir: a file under it is the user's own, always trusted
            (``None``: no file is).
        locks: the folder of the writers' locks (default: the state dir's ``locks/``).
        environ: where ``MCPCTL_TRUST`` and ``CI`` are read (default: the process's).

    Example::

        store = TrustStore.from_paths()
        if store.is_trusted(path, "github", entry): ...
    """

    def __init__(
        self,
        record: str | os.PathLike[str],
        *,
        config_dir: str | os.PathLike[str] | None = None,
        locks: Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.record = Path(record)
        self.config_dir = Path(config_dir) if config_dir is not None else None
        self.locks = locks
        self.environ = environ

    @classmethod
    def from_paths(
        cls, paths: Paths | None = None, *, environ: Mapping[str, str] | None = None
    ) -> TrustStore:
        """The store of ``paths`` (default: the environment's, as the CLI's)."""
        from mcpctl.paths import Paths
        from mcpctl.quickpaths import user_dir

        paths = paths if paths is not None else Paths.from_env()
        # os.path rules for the platform's dir: platformdirs is not worth its import here.
        config_dir = paths.config_dir if paths.home is not None else Path(user_dir("config"))
        state_dir = paths.state_dir if paths.home is not None else Path(user_dir("state"))
        return cls(state_dir / RECORD_NAME, config_dir=config_dir, locks=state_dir / "locks",
                   environ=environ)  # fmt: skip

    # --- reading ------------------------------------------------------------------------

    def policy(self) -> str | None:
        """What the environment says: ``MCPCTL_TRUST=1``, ``CI`` or ``None``."""
        return env_policy(os.environ if self.environ is None else self.environ)

    def is_own(self, path: str | os.PathLike[str]) -> bool:
        """``path`` is the user's own (under mcpctl's config dir)."""
        return self.config_dir is not None and is_own(path, self.config_dir)

    def reason(self, path: str | os.PathLike[str]) -> str | None:
        """Why the whole file is trusted (``own``, ``MCPCTL_TRUST=1``, ``CI``), if it is."""
        return file_reason(
            path, self.config_dir, os.environ if self.environ is None else self.environ
        )

    def _files(self) -> dict[str, dict[str, object]]:
        return read_record(self.record)

    def check_digests(
        self, path: str | os.PathLike[str], digests: Mapping[str, str], *,
        client: str | None = None, always: bool = False,
    ) -> FileTrust:  # fmt: skip
        """The trust of file ``path`` whose servers have ``digests`` (name -> digest).

        ``always``: work the servers' states out even when the whole file is trusted (what
        ``mcpctl trust`` shows).
        """
        real = os.path.realpath(path)
        status = FileTrust(Path(path).absolute(), real, self.reason(path), client=client)
        if status.reason is not None and not always:
            return status
        item = self._files().get(real) or {}
        known = item.get("servers")
        approved: Mapping[str, list[str]] = known if isinstance(known, dict) else {}
        for name, digest in digests.items():
            seen = approved.get(name)
            state: ServerState = "new" if not seen else "trusted" if digest in seen else "changed"
            status.servers[name] = ServerTrust(name, state, digest)
        return status

    def check(
        self, path: str | os.PathLike[str], entries: Mapping[str, ServerEntry], *,
        always: bool = False,
    ) -> FileTrust:  # fmt: skip
        """The trust of config file ``path`` with ``entries`` (its servers, as loaded)."""
        if not always and self.reason(path) is not None:
            return self.check_digests(path, {}, always=False)
        digests = {name: server_digest(entry) for name, entry in entries.items()}
        return self.check_digests(path, digests, always=always)

    def is_trusted(self, path: str | os.PathLike[str], name: str, entry: ServerEntry) -> bool:
        """Server ``name`` (``entry``) of config file ``path`` may be started."""
        return self.check(path, {name: entry}).trusted

    def require(
        self, path: str | os.PathLike[str], entries: Mapping[str, ServerEntry]
    ) -> FileTrust:
        """Check that every server of ``entries`` (servers of config file ``path``) may be
        started, connected to or given a secret; returns the file's trust.

        Raises:
            UntrustedConfigError: some wait for approval (the message names the file, how
                many wait, and ``mcpctl trust``).
        """
        status = self.check(path, entries)
        refusal = status.refusal(entries)
        if refusal is not None:
            raise refusal
        return status

    def files(self) -> list[TrustedFile]:
        """The files of the record, as approved (``mcpctl trust --list``)."""
        found = []
        for path, item in sorted(self._files().items()):
            servers = item.get("servers")
            at, client = item.get("trusted_at"), item.get("client")
            found.append(TrustedFile(
                path, tuple(servers) if isinstance(servers, dict) else (),
                at if isinstance(at, str) else None, client if isinstance(client, str) else None,
                Path(path).is_file(),
            ))  # fmt: skip
        return found

    # --- writing ------------------------------------------------------------------------

    def trust_digests(
        self, path: str | os.PathLike[str], digests: Mapping[str, str], *,
        client: str | None = None,
    ) -> list[str]:  # fmt: skip
        """Approve the servers of file ``path`` with ``digests`` (its servers now: the names
        it no longer has are forgotten); returns the servers that were not trusted before.

        Raises:
            StorageError, ReadOnlyError, LockTimeoutError: the record cannot be written.
        """
        from datetime import UTC, datetime

        real = os.path.realpath(path)
        now = datetime.now(UTC).isoformat(timespec="seconds")
        newly: list[str] = []

        def change(files: dict[str, dict[str, object]]) -> None:
            item = files.get(real) or {}
            old = item.get("servers")
            before: Mapping[str, list[str]] = old if isinstance(old, dict) else {}
            servers = {}
            for name, digest in digests.items():
                seen = list(before.get(name, []))
                if digest not in seen:
                    newly.append(name)
                servers[name] = [digest, *(d for d in seen if d != digest)][:MAX_HISTORY]
            entry: dict[str, object] = {"servers": servers, "trusted_at": now}
            if client is not None:
                entry["client"] = client
            files[real] = entry

        self._update(change)
        return newly

    def trust(self, path: str | os.PathLike[str], entries: Mapping[str, ServerEntry]) -> list[str]:
        """Approve the servers ``entries`` of config file ``path`` (see :meth:`trust_digests`).

        Raises:
            StorageError, ReadOnlyError, LockTimeoutError: the record cannot be written.
        """
        return self.trust_digests(path, {n: server_digest(e) for n, e in entries.items()})

    def untrust(self, path: str | os.PathLike[str]) -> bool:
        """Forget the approvals of file ``path``; whether there were any.

        Raises:
            StorageError, ReadOnlyError, LockTimeoutError: the record cannot be written.
        """
        real = os.path.realpath(path)
        found: list[bool] = []

        def change(files: dict[str, dict[str, object]]) -> None:
            found.append(files.pop(real, None) is not None)

        self._update(change)
        return found[0]

    def _update(self, change: Callable[[dict[str, dict[str, object]]], object]) -> None:
        from mcpctl.config.filestore import update_trust_record

        update_trust_record(self.record, change, locks=self.locks)
