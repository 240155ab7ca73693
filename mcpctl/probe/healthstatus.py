"""What a health probe found about one server, and the verdict on it.

:class:`ProbeResult` is the result (the shape an orchestrator reports, and more),
:class:`HealthStatus` the verdict a client would show: ``healthy``, ``degraded`` (it answered,
but a list failed, its tool list had to be repaired, or it was slow), ``needs_auth``,
``unhealthy`` or ``unavailable``; :func:`failing_states` reads ``--fail-on``, :func:`judge`
degrades a server that answered everything but slowly or with repairs. The probe itself is
:mod:`mcpctl.probe.health`, which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from mcpctl.errors import UsageError
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.eras import Era
from mcpctl.probe.toolinfo import ToolInfo
from mcpctl.text import closest

__all__ = [
    "DEFAULT_SLOW",
    "FAILING",
    "HealthStatus",
    "ProbeResult",
    "ServerKind",
    "failing_states",
    "judge",
]

ServerKind = Literal["internal", "external"]

#: Seconds a request may take before a server counts as slow (``degraded``).
DEFAULT_SLOW = 2.0


class HealthStatus(StrEnum):
    """The verdict on one server, as a client would show it.

    ``healthy``: it answered everything, in time. ``degraded``: it answered, but a list
    failed (tools, prompts or resources), mcpctl had to repair its tool list, or a request
    took longer than the slow limit. ``needs_auth``: it asks for a sign-in, or the OAuth
    sign-in its entry uses is missing or can no longer be renewed (error ``auth_required``).
    ``unhealthy``: it answered, then failed. ``unavailable``: it could not be reached or
    started.
    """

    healthy = "healthy"
    degraded = "degraded"
    needs_auth = "needs_auth"
    unhealthy = "unhealthy"
    unavailable = "unavailable"


#: The states that fail a health check unless told otherwise: all but ``healthy``.
FAILING = frozenset(s for s in HealthStatus if s is not HealthStatus.healthy)


def failing_states(names: Iterable[str]) -> frozenset[HealthStatus]:
    """The states that fail a health check, from names (each may be a comma-separated
    list); ``unhealthy`` includes ``unavailable`` (a server that could not even be reached
    is no healthier than one that failed once reached). No names: :data:`FAILING`.

    Raises:
        UsageError: a name that is not a failing state.
    """
    choices = [s.value for s in HealthStatus if s in FAILING]
    chosen: set[HealthStatus] = set()
    for name in (part.strip() for text in names for part in text.split(",")):
        if not name:
            continue
        if name.lower() not in choices:
            guess = closest(name, choices)
            raise UsageError(
                f"--fail-on {name!r} is not a state"
                + (f" (did you mean {guess!r}?)" if guess else ""),
                hint=f"choose among {', '.join(choices)} (comma-separated, or the option repeated)",
            )
        chosen.add(HealthStatus(name.lower()))
    if HealthStatus.unhealthy in chosen:
        chosen.add(HealthStatus.unavailable)
    return frozenset(chosen) or FAILING


#: The requests a slow limit applies to, by their key in ``latency_ms``, as people name them.
_STEPS = {
    "list_tools": "tools/list",
    "list_prompts": "prompts/list",
    "list_resources": "resources/list",
    "ping": "ping",
}


@dataclass
class ProbeResult:
    """The health of one server (the shape the orchestrator of docs/config.md reports, and more).

    ``prompt_count`` and ``resource_count`` count the first page of each list, when the
    server offers it and the list succeeded (not in :meth:`to_dict`: ``mcpctl doctor NAME``
    shows them). ``listing_ttl_ms`` and ``listing_scope`` are the tool listing's caching hints (the
    stateless era's; ``None`` when the server gave none); ``from_cache`` is the age in
    seconds of a listing served from :class:`mcpctl.probe.listcache.ListingCache` instead
    of a probe.

    :attr:`status` is the verdict; ``healthy`` keeps its first meaning -- the probe went
    through, the tool list is known -- so it is true for a server that is ``degraded`` only
    by a failed prompt or resource list, a repair or slowness, and false for one whose
    ``tools/list`` failed (``error`` code ``list_failed``). ``degraded`` holds the reasons
    of a degraded server that has no error, one line each.
    """

    name: str
    type: ServerKind = "external"
    transport: str = "stdio"
    available: bool = False
    healthy: bool = False
    latency_ms: dict[str, float] = field(default_factory=dict)
    server_name: str | None = None
    server_version: str | None = None
    protocol_version: str | None = None
    era: Era | None = None
    capabilities: list[str] = field(default_factory=list)
    tool_count: int | None = None
    prompt_count: int | None = None
    resource_count: int | None = None
    tools: list[ToolInfo] = field(default_factory=list)
    listing_ttl_ms: int | None = None
    listing_scope: str | None = None
    from_cache: float | None = None
    error: ProbeError | None = None
    stderr: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)

    @property
    def status(self) -> HealthStatus:
        """The verdict: see :class:`HealthStatus`."""
        error = self.error
        if error is not None:
            if error.code == "auth_required":
                return HealthStatus.needs_auth
            if error.code == "list_failed":
                return HealthStatus.degraded
            return HealthStatus.unhealthy if self.available else HealthStatus.unavailable
        if not self.healthy:
            return HealthStatus.unhealthy if self.available else HealthStatus.unavailable
        return HealthStatus.degraded if self.degraded else HealthStatus.healthy

    @property
    def reasons(self) -> list[str]:
        """Why it is not healthy, one line each: the error, then what degraded it."""
        first = [f"{self.error.code}: {self.error.message}"] if self.error is not None else []
        return first + self.degraded

    def to_dict(self, *, with_tools: bool = False) -> dict[str, Any]:
        """JSON form: ``name, available, healthy, type`` first, as that orchestrator reports;
        then ``status`` (see :class:`HealthStatus`)."""
        data: dict[str, Any] = {
            "name": self.name,
            "available": self.available,
            "healthy": self.healthy,
            "type": self.type,
            "status": self.status.value,
            "degraded": self.degraded,
            "transport": self.transport,
            "latency_ms": {k: round(v, 1) for k, v in self.latency_ms.items()},
            "server": {"name": self.server_name, "version": self.server_version},
            "protocol_version": self.protocol_version,
            "protocol": self.era.to_dict() if self.era is not None else None,
            "capabilities": self.capabilities,
            "tool_count": self.tool_count,
            "error": self.error.to_dict() if self.error else None,
        }
        if self.listing_ttl_ms is not None or self.from_cache is not None:
            data["listing_cache"] = {
                "ttl_ms": self.listing_ttl_ms,
                "scope": self.listing_scope,
                "age_s": None if self.from_cache is None else round(self.from_cache, 1),
            }
        if self.warnings:
            data["warnings"] = self.warnings
        if self.stderr:
            data["stderr"] = self.stderr
        if with_tools:
            data["tools"] = [t.to_dict() for t in self.tools]
        return data


def judge(result: ProbeResult, slow: float | None) -> None:
    """What degrades a server that answered everything: repairs, then slowness."""
    if result.warnings:
        count = len(result.warnings)
        result.degraded.append(
            f"mcpctl repaired its tool list ({count} problem{'s' if count != 1 else ''}: "
            f"{result.warnings[0]}{'; ...' if count > 1 else ''})"
        )
    if slow is None:
        return
    # Only the requests after the handshake count: a spawned server's handshake includes its
    # start-up, and detecting the era may wait on a server that ignores server/discover.
    steps = [k for k in _STEPS if k in result.latency_ms]
    if not steps:
        return
    slowest = max(steps, key=lambda k: result.latency_ms[k])
    took = result.latency_ms[slowest]
    if took > slow * 1000:
        result.degraded.append(
            f"slow: {_STEPS[slowest]} took {took:.0f} ms (the limit is {slow * 1000:.0f} ms)"
        )
