"""The structured results of ``mcpctl serve``'s tools: their output schemas.

Field descriptions are what a model reads in each tool's output schema. Anything a third
party wrote is an :class:`~mcpctl.serve.marks.Untrusted` (see :mod:`mcpctl.serve.marks`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from mcpctl.serve.marks import Untrusted

__all__ = [
    "ChangeOutcome",
    "Diagnosis",
    "DiffResult",
    "HealthResult",
    "Listing",
    "ProbeError",
    "SearchHit",
    "SearchResult",
    "ServerHealth",
    "ServerRow",
    "ServerTools",
    "Step",
    "ToolRow",
    "ToolsResult",
]


class ServerRow(BaseModel):
    """One configured server, as written (literal secrets redacted, placeholders kept)."""

    name: str
    state: Literal["enabled", "disabled"]
    transport: str = Field(description="stdio, streamable-http or sse")
    target: str = Field(description="the command line a client runs, or the URL it connects to")
    groups: list[str] = Field(default_factory=list)
    secrets: list[str] = Field(
        default_factory=list, description="the ${VAR} placeholders it needs (names only)"
    )
    description: Untrusted | None = None
    source: dict[str, Any] | None = Field(
        default=None, description="the registry it was added from, and the pinned version"
    )
    entry: dict[str, Any] = Field(description="the entry's fields, as the file holds them")


class Listing(BaseModel):
    """The servers of the config file (nothing started, nothing connected)."""

    config: str = Field(description="the config file")
    exists: bool
    servers: list[ServerRow]
    problems: list[str] = Field(default_factory=list, description="entries that were skipped")


class ProbeError(BaseModel):
    """Why a server failed: a stable code, mcpctl's message, and what to do."""

    code: str
    message: str
    hint: str | None = None
    quoted: Untrusted | None = Field(default=None, description="what the server answered")


class ServerHealth(BaseModel):
    """One server probed: started or connected to, its tools listed."""

    name: str
    status: Literal["healthy", "degraded", "needs_auth", "unhealthy", "unavailable"]
    transport: str
    protocol: str | None = Field(default=None, description="the protocol version spoken")
    tool_count: int | None = None
    latency_ms: float | None = None
    reasons: list[str] = Field(
        default_factory=list, description="what degraded it (the error is apart, in error)"
    )
    answered: list[Untrusted] = Field(
        default_factory=list, description="what the server answered to the requests that failed"
    )
    error: ProbeError | None = None
    server_info: Untrusted | None = Field(default=None, description="how the server names itself")
    stderr: Untrusted | None = Field(default=None, description="the server's last lines of stderr")


class HealthResult(BaseModel):
    """Servers probed at once, each within its timeout."""

    healthy: int
    total: int
    servers: list[ServerHealth]
    warnings: list[str] = Field(default_factory=list)


class Step(BaseModel):
    """One layer of a server checked by ``doctor``."""

    id: str
    status: Literal["passed", "failed", "skipped"]
    ms: float
    detail: str = Field(description="what mcpctl saw")
    fix: str | None = Field(default=None, description="what to do, when it failed")
    stderr: Untrusted | None = None


class Diagnosis(BaseModel):
    """A server checked layer by layer; the first layer that fails stops the run."""

    name: str
    transport: str
    ok: bool
    steps: list[Step]
    next: str | None = Field(default=None, description="the layer it would check next")


class ToolRow(BaseModel):
    """One tool as a host exposes it, and what its definition costs the model."""

    name: str = Field(description="the name the host exposes it by")
    server: str
    tool: str = Field(description="its name on the server")
    exposed: bool = Field(description="false: hidden by the entry's tools.allow/deny")
    tokens: int = Field(description="tokens of its definition (name, description, schema)")
    tokens_estimated: bool = Field(
        default=False, description="the count is an estimate (a long definition, or late)"
    )
    params: str = Field(description="its parameters, name: type (* required)")
    description: Untrusted | None = None
    input_schema: Untrusted | None = None


class ServerTools(BaseModel):
    """One server's share of the catalog."""

    name: str
    tokens: int | None = Field(default=None, description="its exposed tools' tokens")
    tool_count: int | None = None
    error: ProbeError | None = None


class ToolsResult(BaseModel):
    """The catalog a host sees, with the token cost of each definition."""

    encoding: str
    total_tokens: int
    tools: list[ToolRow]
    servers: list[ServerTools]
    collisions: list[str] = Field(
        default_factory=list, description="names that several tools would be exposed by"
    )
    warnings: list[str] = Field(default_factory=list)


class SearchHit(BaseModel):
    """A server found in a registry (added with add_from_registry)."""

    name: str = Field(description="the registry's name of the server (for add_from_registry)")
    version: str
    status: str
    transports: list[str]
    package_types: list[str]
    needs_secrets: bool
    registries: list[str]
    title: Untrusted | None = None
    description: Untrusted | None = None


class SearchResult(BaseModel):
    """Servers of the registries matching a query, best first (from the local cache)."""

    query: str
    results: list[SearchHit]
    warnings: list[str] = Field(default_factory=list)


class DiffResult(BaseModel):
    """What changed since a snapshot (a lock file): servers, and probed, their tools."""

    against: str = Field(description="the snapshot compared with")
    earlier: str | None = Field(default=None, description="when that snapshot was taken")
    probed: bool
    tools_compared: bool
    changed: bool
    added: list[str]
    removed: list[str]
    servers: list[dict[str, Any]] = Field(
        description="each changed server; what servers sent is under 'untrusted' values"
    )
    notes: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class ChangeOutcome(BaseModel):
    """What a change did: applied only when the user approved it."""

    action: str
    applied: bool
    answer: Literal["accept", "decline", "cancel"] | None = Field(
        default=None, description="the user's answer (none: nothing needed asking)"
    )
    config: str
    detail: str
    undo: str | None = Field(default=None, description="how the user reverts it")
