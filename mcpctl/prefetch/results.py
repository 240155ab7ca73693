"""What a prefetch did: one :class:`PackageFetch` per package (or skipped server), and the
:class:`PrefetchReport` of the run with its exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcpctl.prefetch.plan import Job

__all__ = ["FetchStatus", "PackageFetch", "PrefetchReport"]

#: ``fetched``: put where the runner looks; ``cached``: it was there already; ``failed``:
#: see ``reason``; ``skipped``: nothing to fetch (disabled, remote, no package manager).
FetchStatus = Literal["fetched", "cached", "failed", "skipped"]


@dataclass(frozen=True)
class PackageFetch:
    """One package (shared by ``servers``) or one skipped server.

    ``runner``: ``npx``, ``uvx`` or ``docker``; ``package``: as a person reads it
    (``pkg@1.2.3``); ``reason``: why it failed (the runner's last meaningful line) or was
    skipped; ``offline``: it failed because a registry cannot be reached; ``where``: the npx
    folder, uv's cache or the image; ``version`` and ``integrity`` as installed (npm), or as
    checked against the lock.
    """

    servers: tuple[str, ...]
    status: FetchStatus
    runner: str | None = None
    package: str | None = None
    reason: str | None = None
    offline: bool = False
    where: str | None = None
    version: str | None = None
    integrity: str | None = None
    seconds: float = 0.0

    @classmethod
    def of(cls, job: Job, status: FetchStatus, **values: Any) -> PackageFetch:
        """The outcome of ``job``."""
        return cls(job.servers, status, job.runner, job.spec, **values)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (an item of ``data.packages``)."""
        return {
            "servers": list(self.servers),
            "status": self.status,
            "runner": self.runner,
            "package": self.package,
            "reason": self.reason,
            "offline": self.offline,
            "where": self.where,
            "version": self.version,
            "integrity": self.integrity,
            "seconds": round(self.seconds, 2),
        }


@dataclass
class PrefetchReport:
    """Every package of one prefetch run, in the config's order, and its warnings."""

    config: Path
    items: list[PackageFetch] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[PackageFetch]:
        """The packages that could not be fetched."""
        return [i for i in self.items if i.status == "failed"]

    @property
    def offline(self) -> bool:
        """Whether a package failed because a registry cannot be reached."""
        return any(i.offline for i in self.failed)

    @property
    def exit_code(self) -> int:
        """0 when nothing failed; 3 when a registry cannot be reached; else 1."""
        if not self.failed:
            return 0
        return 3 if self.offline else 1

    def count(self, status: FetchStatus) -> int:
        """How many packages (servers, for ``skipped``) have ``status``."""
        return sum(1 for i in self.items if i.status == status)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``mcpctl prefetch --json`` data)."""
        return {
            "config": str(self.config),
            "packages": [i.to_dict() for i in self.items],
            "counts": {s: self.count(s) for s in ("fetched", "cached", "failed", "skipped")},
        }
