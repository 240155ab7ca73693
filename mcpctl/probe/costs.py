"""The catalog a host sees, with what each tool's definition costs the model.

``mcpctl tools`` prints it; ``mcpctl serve`` gives it to an agent. From the probes of some
servers: every tool under the name the host exposes it by (:mod:`mcpctl.probe.naming`),
whether the entry's ``tools.allow``/``deny`` exposes it, and the ``o200k_base`` tokens of
its definition (:mod:`mcpctl.probe.tokens`); each server's total counts its exposed tools.

    costs = catalog_costs(results, filters, "underscore", counts=TokenCountCache.in_dir(d))
    costs.total, costs.totals["github"], costs.tools[0].tokens
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpctl.probe.naming import Collision, PrefixStyle, build_catalog
from mcpctl.probe.tokens import ENCODING, TokenCountCache, count_tool_tokens

if TYPE_CHECKING:
    from mcpctl.config.model import ToolFilter
    from mcpctl.probe.health import ProbeResult

__all__ = ["CatalogCosts", "ToolCost", "by_cost", "catalog_costs"]


@dataclass(frozen=True)
class ToolCost:
    """One tool as a host exposes it (``name``), and what its definition costs."""

    name: str
    server: str
    tool: str
    exposed: bool
    description: str
    params: str
    input_schema: dict[str, Any]
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form (an item of ``mcpctl tools --json``'s ``data.tools``)."""
        return {
            "name": self.name, "server": self.server, "tool": self.tool, "exposed": self.exposed,
            "description": self.description, "params": self.params,
            "input_schema": self.input_schema, "tokens": self.tokens,
        }  # fmt: skip


@dataclass
class CatalogCosts:
    """The tools (hidden ones only when asked for), the name collisions among the exposed
    ones, and each listed server's total (:data:`ENCODING` tokens of its exposed tools)."""

    tools: list[ToolCost] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)
    encoding: str = ENCODING

    @property
    def total(self) -> int:
        """The tokens of every exposed tool of every server."""
        return sum(self.totals.values())


def catalog_costs(
    results: Iterable[ProbeResult],
    filters: Mapping[str, ToolFilter | None],
    prefix: PrefixStyle = "none",
    *,
    show_all: bool = False,
    counts: TokenCountCache | None = None,
) -> CatalogCosts:
    """The catalog of the servers that were listed (those with an error are left out), each
    server's tools filtered by ``filters[server]``; ``show_all`` keeps the hidden tools too
    (their cost is not in the totals). ``counts`` keeps the counts already made (the
    caller saves it)."""
    ok = [r for r in results if r.error is None]
    catalog, collisions = build_catalog(
        ((r.name, [t.name for t in r.tools], filters.get(r.name)) for r in ok), prefix
    )
    info = {(r.name, t.name): t for r in ok for t in r.tools}
    out = CatalogCosts(collisions=collisions, totals={r.name: 0 for r in ok})
    for c in catalog:
        if not (c.exposed or show_all):
            continue
        tool = info[(c.server, c.tool)]
        # What a definition costs is counted under the name the host exposes it by.
        definition = {"name": c.name, "description": tool.description,
                      "input_schema": tool.input_schema}  # fmt: skip
        tokens = count_tool_tokens(definition, counts)
        out.tools.append(ToolCost(c.name, c.server, c.tool, c.exposed, tool.description,
                                  tool.params_summary(), tool.input_schema, tokens))  # fmt: skip
        if c.exposed:
            out.totals[c.server] += tokens
    return out


def by_cost(totals: Mapping[str, int]) -> list[tuple[str, int]]:
    """Servers, the costliest first (then by name)."""
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))
