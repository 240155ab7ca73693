"""What a host's catalog costs the model, from probe results made here (no server):
each tool under its exposed name, hidden tools, each server's total, estimates and order
(tests/cli/test_tools.py checks the same against real servers)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mcpctl.config.model import ToolFilter
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.costs import CatalogCosts, ToolCost, by_cost, catalog_costs
from mcpctl.probe.healthstatus import ProbeResult
from mcpctl.probe.naming import Collision
from mcpctl.probe.toolinfo import ToolInfo
from mcpctl.tokencount import (
    ENCODING,
    MAX_COUNTED_CHARS,
    TokenCountCache,
    _key,
    tool_definition_json,
)
from tests.test_tokencount import independent_tokens, random_words

WEATHER = ToolInfo(
    "weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    raw={"execution": {"taskSupport": "optional"}},
)
SEARCH = ToolInfo("search", "Search it.", {"type": "object", "properties": {"q": {}}})
SECRET = ToolInfo("secret", "Hidden by the entry.", {"type": "object"})
SILENT = ToolInfo("silent", "", {"type": "object"})


def result(name: str, *tools: ToolInfo, error: ProbeError | None = None) -> ProbeResult:
    return ProbeResult(name, healthy=error is None, tools=list(tools), error=error)


def tokens(name: str, tool: ToolInfo) -> int:
    sent = {"name": name, "description": tool.description, "input_schema": tool.input_schema}
    return independent_tokens([sent])


def test_each_exposed_tool_costs_its_definition_under_the_exposed_name() -> None:
    costs = catalog_costs([result("gh", WEATHER, SEARCH), result("fs", SILENT)], {}, "underscore")
    assert costs.tools == [
        ToolCost(
            "mcp_gh_weather",
            "gh",
            "weather",
            True,
            "The weather in a city.",
            "city*: string",
            WEATHER.input_schema,
            tokens("mcp_gh_weather", WEATHER),
            False,
            "optional",
        ),
        ToolCost(
            "mcp_gh_search",
            "gh",
            "search",
            True,
            "Search it.",
            "q: any",
            SEARCH.input_schema,
            tokens("mcp_gh_search", SEARCH),
            False,
            None,
        ),
        ToolCost(
            "mcp_fs_silent",
            "fs",
            "silent",
            True,
            "",
            "",
            {"type": "object"},
            tokens("mcp_fs_silent", SILENT),
        ),
    ]
    gh = tokens("mcp_gh_weather", WEATHER) + tokens("mcp_gh_search", SEARCH)
    assert costs.totals == {"gh": gh, "fs": tokens("mcp_fs_silent", SILENT)}
    assert costs.total == gh + tokens("mcp_fs_silent", SILENT)
    assert (costs.collisions, costs.encoding, costs.long, costs.late) == ([], ENCODING, 0, 0)
    assert costs.estimated_servers == set() and costs.estimated_exposed == 0
    # The prefix is part of what the model reads: bare names cost less.
    assert catalog_costs([result("gh", WEATHER)], {}).total == tokens("weather", WEATHER)
    assert tokens("weather", WEATHER) < tokens("mcp_gh_weather", WEATHER)


def test_servers_that_failed_are_left_out() -> None:
    failed = result("down", SEARCH, error=ProbeError("spawn_failed", "cannot start"))
    costs = catalog_costs([failed, result("up", SEARCH)], {}, "colon")
    assert [t.name for t in costs.tools] == ["up:search"]
    assert list(costs.totals) == ["up"]


def test_hidden_tools_are_listed_only_when_asked_and_cost_nothing() -> None:
    results = [result("gh", WEATHER, SECRET), result("empty", SECRET)]
    filters = {"gh": ToolFilter(deny=("secret",)), "empty": ToolFilter(allow=())}
    costs = catalog_costs(results, filters)
    assert [(t.name, t.exposed) for t in costs.tools] == [("weather", True)]
    assert costs.totals == {"gh": tokens("weather", WEATHER), "empty": 0}
    every = catalog_costs(results, filters, show_all=True)
    assert [(t.server, t.name, t.exposed) for t in every.tools] == [
        ("gh", "weather", True),
        ("gh", "secret", False),
        ("empty", "secret", False),
    ]
    assert every.tools[1].tokens == tokens("secret", SECRET)
    assert every.totals == costs.totals


def test_collisions_are_those_of_the_exposed_names() -> None:
    costs = catalog_costs([result("a", SEARCH), result("b", SEARCH)], {}, "none")
    assert costs.collisions == [Collision("search", (("a", "search"), ("b", "search")))]
    assert [t.tokens for t in costs.tools] == [tokens("search", SEARCH)] * 2


def test_counts_are_kept_in_the_cache_given(tmp_path: Path) -> None:
    cache = TokenCountCache.in_dir(tmp_path)
    costs = catalog_costs([result("gh", WEATHER)], {}, "colon", counts=cache)
    definition = {"name": "gh:weather", **{k: v for k, v in WEATHER.to_dict().items()
                                           if k in ("description", "input_schema")}}  # fmt: skip
    assert cache.known(_key(tool_definition_json(definition))) == (costs.total, False)


def test_a_definition_too_long_to_count_is_an_estimate() -> None:
    long = ToolInfo("long", "word " * (MAX_COUNTED_CHARS // 4), {"type": "object"})
    costs = catalog_costs([result("big", long, SEARCH), result("small", SEARCH)], {})
    assert (costs.long, costs.late) == (1, 0)
    assert [t.estimated for t in costs.tools] == [True, False, False]
    assert costs.estimated_servers == {"big"} and costs.estimated_exposed == 1
    assert costs.tools[0].to_dict()["tokens_estimated"] is True


def test_a_hidden_estimate_is_not_an_exposed_one() -> None:
    long = ToolInfo("long", "word " * (MAX_COUNTED_CHARS // 4), {"type": "object"})
    costs = catalog_costs(
        [result("big", long, SEARCH)], {"big": ToolFilter(deny=("long",))}, show_all=True
    )
    assert costs.long == 1 and costs.tools[0].estimated
    assert costs.estimated_servers == set() and costs.estimated_exposed == 0


def test_what_is_not_counted_by_the_deadline_is_estimated() -> None:
    slow = [ToolInfo(f"t{i}", random_words(i, 20_000), {"type": "object"}) for i in range(300)]
    costs = catalog_costs([result("slow", *slow)], {}, deadline=time.monotonic())
    late = [t for t in costs.tools if t.estimated]
    assert late and costs.late == len(late) and costs.long == 0
    assert costs.estimated_exposed == len(late) and costs.estimated_servers == {"slow"}
    assert costs.totals["slow"] == sum(t.tokens for t in costs.tools)


def test_a_tools_json_form() -> None:
    cost = ToolCost("gh:w", "gh", "w", False, "d", "a: any", {"type": "object"}, 12)
    assert cost.to_dict() == {
        "name": "gh:w",
        "server": "gh",
        "tool": "w",
        "exposed": False,
        "description": "d",
        "params": "a: any",
        "input_schema": {"type": "object"},
        "tokens": 12,
        "tokens_estimated": False,
        "task_support": None,
    }


def test_an_empty_catalog() -> None:
    costs = CatalogCosts()
    assert (costs.tools, costs.collisions, costs.totals) == ([], [], {})
    assert (costs.total, costs.long, costs.late, costs.encoding) == (0, 0, 0, ENCODING)


def test_servers_by_cost_the_costliest_first_then_by_name() -> None:
    totals: dict[str, Any] = {"b": 10, "a": 10, "c": 300, "d": 0}
    assert by_cost(totals) == [("c", 300), ("a", 10), ("b", 10), ("d", 0)]
