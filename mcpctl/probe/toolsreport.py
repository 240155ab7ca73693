"""What ``mcpctl tools`` reports about the tools of some probed servers.

From the probes: every tool under the name the host exposes it by, with what its definition
costs the model (:mod:`mcpctl.probe.costs`, counted within a deadline and estimated beyond
it), the name collisions a host would see, the servers that could not be listed, and a token
budget kept or not. A server that could not be listed, a collision that fails under the
collision policy (:func:`mcpctl.probe.naming.collisions_fail`) or a budget exceeded is an
error of the report; the CLI only prints it.

    report = tools_report(results, chosen, "underscore", cache_dir=paths.cache_dir,
                          started=started, timeout=10.0, budget=20000)
    report.data["tools"], report.errors, report.warnings
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpctl.errors import BudgetExceededError, NameCollisionError, ProbeFailed
from mcpctl.text import plural

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.probe.health import ProbeResult, ServerKind
    from mcpctl.probe.naming import CollisionPolicy, PrefixStyle

__all__ = ["ToolsReport", "estimate_warnings", "over_budget", "tools_report"]


@dataclass
class ToolsReport:
    """``data`` is the JSON view (``tools``, ``collisions``, ``failed``, ``servers``,
    ``tokens``, and ``budget`` when one was set); ``errors`` what fails the run (as JSON
    error objects), ``warnings`` what does not; ``totals`` each listed server's tokens and
    ``estimated_servers`` those whose total holds an estimate."""

    data: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    errors: list[dict[str, object]] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)
    estimated_servers: set[str] = field(default_factory=set)
    encoding: str = ""

    @property
    def failed(self) -> bool:
        """Whether the run fails (exit 1)."""
        return bool(self.errors)


def tools_report(
    results: Sequence[ProbeResult],
    chosen: Sequence[tuple[str, ServerEntry, ServerKind]],
    prefix: PrefixStyle = "none",
    *,
    collisions: CollisionPolicy = "auto",
    show_all: bool = False,
    budget: int | None = None,
    cache_dir: Path,
    started: float,
    timeout: float | None = None,
) -> ToolsReport:
    """The report on the tools of ``results`` (the probes of ``chosen``, whose entries' tool
    filters say what is exposed), named as a host with ``prefix`` names them.

    Token counts are kept in ``cache_dir``; counting ends ``timeout`` seconds (default: the
    longest of the entries' timeouts) after ``started`` (a :func:`time.monotonic` time),
    what is left is estimated from its length. Never raises for what a server sent.
    """
    from mcpctl.probe.costs import catalog_costs
    from mcpctl.probe.naming import collisions_fail
    from mcpctl.tokencount import ENCODING, TokenCountCache

    warnings = [f"{r.name}: {w}" for r in results for w in r.warnings]
    filters = {name: entry.tools for name, entry, _ in chosen}
    # What each definition costs, under the name the host exposes it by; counted within the
    # run's deadline (the timeout), the rest estimated.
    counts = TokenCountCache.in_dir(cache_dir)
    limit = timeout if timeout is not None else max(
        (entry.timeout_ms / 1000 for _, entry, _ in chosen), default=0.0
    )  # fmt: skip
    costs = catalog_costs(results, filters, prefix, show_all=show_all, counts=counts,
                          deadline=started + limit)  # fmt: skip
    counts.save()
    warnings += estimate_warnings(costs.long, costs.late, limit)
    totals, guessed = costs.totals, costs.estimated_servers
    # A server that could not be listed, or a collision the host would see, fails the run.
    errors = [
        ProbeFailed(r.name, r.error.code, r.error.message, hint=r.error.hint).to_dict()
        for r in results
        if r.error is not None
    ]
    fatal = collisions_fail(prefix, collisions)
    for col in costs.collisions:
        sources = ", ".join(f"{s}/{t}" for s, t in col.sources)
        message = f"name collision: {col.name!r} is exposed by {sources}"
        if fatal:
            hint = (
                "rename or hide one of them with tools.allow/deny"
                if prefix != "none"
                else "a host that prefixes tools (--prefix) does not see this collision"
            )
            errors.append(NameCollisionError(message, hint=hint).to_dict())
        else:
            warnings.append(message)
    data: dict[str, Any] = {
        "prefix": prefix,
        "tools": [t.to_dict() for t in costs.tools],
        "collisions": [
            {"name": c.name, "sources": [list(s) for s in c.sources]} for c in costs.collisions
        ],
        "failed": [{"name": r.name, "error": r.error.to_dict()} for r in results if r.error],
        "servers": [
            {"name": r.name, "protocol_version": r.protocol_version,
             "protocol": r.era.to_dict() if r.era else None, "tool_count": r.tool_count,
             "cached_age_s": None if r.from_cache is None else round(r.from_cache, 1),
             "tokens": {"encoding": ENCODING, "total": totals[r.name],
                        "estimated": r.name in guessed} if r.error is None
             else None}
            for r in results
        ],
        "tokens": {"encoding": ENCODING, "total": sum(totals.values()),
                   "estimated": costs.estimated_exposed},
    }  # fmt: skip
    if budget is not None:
        over = over_budget(budget, totals)
        data["budget"] = {"limit": budget, "total": sum(totals.values()),
                          "over": max(0, sum(totals.values()) - budget)}  # fmt: skip
        if over is not None:
            errors.append(over.to_dict())
    return ToolsReport(data, warnings, errors, totals, guessed, ENCODING)


def estimate_warnings(long: int, late: int, seconds: float) -> list[str]:
    """Why some token counts are estimates (``~`` in the table): how many were ``long``,
    how many ``late``."""
    from mcpctl.tokencount import MAX_COUNTED_CHARS

    out = []
    if long:
        out.append(
            f"{plural(long, 'definition')} over {MAX_COUNTED_CHARS:,} characters: their "
            "tokens are counted that far and estimated beyond (~)"
        )
    if late:
        out.append(
            f"counting tokens ran out of time (the timeout is {seconds:g} s): "
            f"{plural(late, 'definition')} estimated from their length (~)"
        )
    return out


def over_budget(budget: int, totals: dict[str, int]) -> BudgetExceededError | None:
    """The error of a catalog that costs more than ``budget`` tokens, naming each server's
    share (the costliest first), or ``None`` when it fits."""
    from mcpctl.probe.costs import by_cost
    from mcpctl.tokencount import ENCODING

    total = sum(totals.values())
    if total <= budget:
        return None
    shares = ", ".join(f"{name} {count:,}" for name, count in by_cost(totals) if count)
    return BudgetExceededError(
        f"the exposed tools cost {total:,} tokens ({ENCODING}), {total - budget:,} over the "
        f"budget of {budget:,}: {shares}",
        hint="hide tools with tools.allow/deny in the entries, or raise --budget",
        subjects=list(totals),
    )
