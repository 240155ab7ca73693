"""The catalog a host sees, with what each tool's definition costs the model.

``mcpctl tools`` prints it; ``mcpctl serve`` gives it to an agent. From the probes of some
servers: every tool under the name the host exposes it by (:mod:`mcpctl.probe.naming`),
whether the entry's ``tools.allow``/``deny`` exposes it, and the ``o200k_base`` tokens of
its definition (:mod:`mcpctl.tokencount`); each server's total counts its exposed tools.

    costs = catalog_costs(results, filters, "underscore", counts=TokenCountCache.in_dir(d))
    costs.total, costs.totals["github"], costs.tools[0].tokens
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpctl.probe.naming import Collision, PrefixStyle, build_catalog
from mcpctl.tokencount import ENCODING, TokenCountCache, count_definitions

if TYPE_CHECKING:
    from mcpctl.config.model import ToolFilter
    from mcpctl.probe.health import ProbeResult

__all__ = ["CatalogCosts", "ToolCost", "by_cost", "catalog_costs"]


@dataclass(frozen=True)
class ToolCost:
    """One tool as a host exposes it (``name``), and what its definition costs
    (``estimated``: an estimate, see :func:`catalog_costs`)."""

    name: str
    server: str
    tool: str
    exposed: bool
    description: str
    params: str
    input_schema: dict[str, Any]
    tokens: int
    estimated: bool = False
    task_support: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (an item of ``mcpctl tools --json``'s ``data.tools``)."""
        return {
            "name": self.name, "server": self.server, "tool": self.tool, "exposed": self.exposed,
            "description": self.description, "params": self.params,
            "input_schema": self.input_schema, "tokens": self.tokens,
            "tokens_estimated": self.estimated, "task_support": self.task_support,
        }  # fmt: skip


@dataclass
class CatalogCosts:
    """The tools (hidden ones only when asked for), the name collisions among the exposed
    ones, and each listed server's total (:data:`ENCODING` tokens of its exposed tools).

    ``long`` and ``late`` count the definitions whose tokens are estimates: over
    :data:`~mcpctl.tokencount.MAX_COUNTED_CHARS` characters (counted that far), or not
    counted before the deadline (estimated from their length)."""

    tools: list[ToolCost] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)
    encoding: str = ENCODING
    long: int = 0
    late: int = 0

    @property
    def total(self) -> int:
        """The tokens of every exposed tool of every server."""
        return sum(self.totals.values())

    @property
    def estimated_servers(self) -> set[str]:
        """The servers whose total holds an estimate."""
        return {t.server for t in self.tools if t.exposed and t.estimated}

    @property
    def estimated_exposed(self) -> int:
        """How many exposed tools' counts are estimates."""
        return sum(t.exposed and t.estimated for t in self.tools)


def catalog_costs(
    results: Iterable[ProbeResult],
    filters: Mapping[str, ToolFilter | None],
    prefix: PrefixStyle = "none",
    *,
    show_all: bool = False,
    counts: TokenCountCache | None = None,
    deadline: float | None = None,
) -> CatalogCosts:
    """The catalog of the servers that were listed (those with an error are left out), each
    server's tools filtered by ``filters[server]``; ``show_all`` keeps the hidden tools too
    (their cost is not in the totals). ``counts`` keeps the counts already made (the
    caller saves it); counting stops at ``deadline`` (a :func:`time.monotonic` time), the
    rest estimated (:func:`~mcpctl.tokencount.count_definitions`)."""
    ok = [r for r in results if r.error is None]
    catalog, collisions = build_catalog(
        ((r.name, [t.name for t in r.tools], filters.get(r.name)) for r in ok), prefix
    )
    info = {(r.name, t.name): t for r in ok for t in r.tools}
    shown = [c for c in catalog if c.exposed or show_all]
    # What a definition costs is counted under the name the host exposes it by.
    counted = count_definitions(
        {f"{c.server}\0{c.tool}": {"name": c.name,
                                    "description": info[(c.server, c.tool)].description,
                                    "input_schema": info[(c.server, c.tool)].input_schema}
         for c in shown},
        counts, deadline=deadline,
    )  # fmt: skip
    out = CatalogCosts(collisions=collisions, totals={r.name: 0 for r in ok},
                       long=len(counted.long), late=len(counted.late))  # fmt: skip
    for c in shown:
        key = f"{c.server}\0{c.tool}"
        tool, tokens = info[(c.server, c.tool)], counted.tokens[key]
        out.tools.append(ToolCost(c.name, c.server, c.tool, c.exposed, tool.description,
                                  tool.params_summary(), tool.input_schema, tokens,
                                  key in counted.estimated, tool.task_support))  # fmt: skip
        if c.exposed:
            out.totals[c.server] += tokens
    return out


def by_cost(totals: Mapping[str, int]) -> list[tuple[str, int]]:
    """Servers, the costliest first (then by name)."""
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))
