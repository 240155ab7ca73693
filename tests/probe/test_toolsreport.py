"""What ``mcpctl tools`` reports, from probe results made here (no server): the JSON view,
the errors that fail a run (a server not listed, a collision, a budget exceeded) and the
warnings that do not (tests/cli/test_tools.py runs it against real servers)."""

from __future__ import annotations

import time
from pathlib import Path

from mcpctl.config.model import ServerEntry, ToolFilter
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.eras import Era
from mcpctl.probe.healthstatus import ProbeResult
from mcpctl.probe.toolinfo import ToolInfo
from mcpctl.probe.toolsreport import ToolsReport, estimate_warnings, over_budget, tools_report
from mcpctl.tokencount import MAX_COUNTED_CHARS, TokenCountCache
from tests.test_tokencount import independent_tokens, random_words

SEARCH = ToolInfo("search", "Search it.", {"type": "object"})
FETCH = ToolInfo("fetch", "Fetch it.", {"type": "object"})


def tokens(name: str, tool: ToolInfo) -> int:
    sent = {"name": name, "description": tool.description, "input_schema": tool.input_schema}
    return independent_tokens([sent])


def entry(timeout: int = 5000, tools: ToolFilter | None = None) -> ServerEntry:
    return ServerEntry(command="srv", timeout=timeout, tools=tools)


def listed(name: str, *tools: ToolInfo, **fields: object) -> ProbeResult:
    return ProbeResult(name, available=True, healthy=True, tools=list(tools),
                       tool_count=len(tools), **fields)  # type: ignore[arg-type]  # fmt: skip


def report(
    results: list[ProbeResult], tmp_path: Path, prefix: str = "none", **kw: object
) -> ToolsReport:
    chosen = [(r.name, kw.pop(f"entry_{r.name}", entry()), "external") for r in results]
    return tools_report(
        results,
        chosen,
        prefix,
        cache_dir=tmp_path,
        started=time.monotonic(),
        **kw,  # type: ignore[arg-type]
    )


def test_the_json_view_of_listed_servers(tmp_path: Path) -> None:
    gh = listed(
        "gh",
        SEARCH,
        protocol_version="2025-11-25",
        era=Era("legacy", "2025-11-25", (), "fallback"),
        from_cache=3.14,
    )
    down = ProbeResult("down", error=ProbeError("timeout", "no answer", "wait"))
    made = report([gh, down], tmp_path, "colon")
    cost = tokens("gh:search", SEARCH)
    assert made.data == {
        "prefix": "colon",
        "tools": [{
            "name": "gh:search", "server": "gh", "tool": "search", "exposed": True,
            "description": "Search it.", "params": "", "input_schema": {"type": "object"},
            "tokens": cost, "tokens_estimated": False, "task_support": None,
        }],
        "collisions": [],
        "failed": [{"name": "down",
                    "error": {"code": "timeout", "message": "no answer", "hint": "wait"}}],
        "servers": [
            {"name": "gh", "protocol_version": "2025-11-25",
             "protocol": {"era": "legacy", "version": "2025-11-25", "supported": [],
                          "detected": "fallback"},
             "tool_count": 1, "cached_age_s": 3.1,
             "tokens": {"encoding": "o200k_base", "total": cost, "estimated": False}},
            {"name": "down", "protocol_version": None, "protocol": None, "tool_count": None,
             "cached_age_s": None, "tokens": None},
        ],
        "tokens": {"encoding": "o200k_base", "total": cost, "estimated": 0},
    }  # fmt: skip
    assert made.errors == [{
        "code": "probe_failed", "message": "down: no answer", "hint": "wait", "reason": "timeout",
    }]  # fmt: skip
    assert made.failed and made.warnings == []
    assert (made.totals, made.estimated_servers, made.encoding) == (
        {"gh": cost},
        set(),
        "o200k_base",
    )


def test_a_clean_report_does_not_fail(tmp_path: Path) -> None:
    made = report([listed("gh", SEARCH)], tmp_path)
    assert not made.failed and made.errors == [] and "budget" not in made.data
    assert ToolsReport({}).failed is False and ToolsReport({}).encoding == ""


def test_each_servers_warnings_are_named(tmp_path: Path) -> None:
    made = report([listed("gh", SEARCH, warnings=["tool 'x': repaired"])], tmp_path)
    assert made.warnings == ["gh: tool 'x': repaired"]


def test_the_entries_filters_decide_what_is_exposed(tmp_path: Path) -> None:
    results = [listed("gh", SEARCH, FETCH)]
    hidden = entry(tools=ToolFilter(deny=("fetch",)))
    made = report(results, tmp_path, entry_gh=hidden)
    assert [t["name"] for t in made.data["tools"]] == ["search"]
    every = report(results, tmp_path, entry_gh=hidden, show_all=True)
    assert [(t["name"], t["exposed"]) for t in every.data["tools"]] == [
        ("search", True), ("fetch", False),
    ]  # fmt: skip
    assert every.totals == made.totals == {"gh": tokens("search", SEARCH)}


def test_counts_are_saved_in_the_cache_dir(tmp_path: Path) -> None:
    report([listed("gh", SEARCH)], tmp_path)
    assert any(tmp_path.iterdir())
    assert TokenCountCache.in_dir(tmp_path)._counts_of()  # what the next run reads


def test_a_collision_fails_a_prefixed_catalog_with_a_hint(tmp_path: Path) -> None:
    results = [listed("a_b", SEARCH), listed("a", ToolInfo("b_search", "", {}))]
    made = report(results, tmp_path, "underscore")
    assert made.errors == [{
        "code": "name_collision",
        "message": "name collision: 'mcp_a_b_search' is exposed by a_b/search, a/b_search",
        "hint": "rename or hide one of them with tools.allow/deny",
    }]  # fmt: skip
    assert made.data["collisions"] == [
        {"name": "mcp_a_b_search", "sources": [["a_b", "search"], ["a", "b_search"]]}
    ]
    warned = report(results, tmp_path, "underscore", collisions="warn")
    assert warned.errors == [] and warned.warnings == [made.errors[0]["message"]]


def test_bare_names_that_collide_warn_unless_told_to_fail(tmp_path: Path) -> None:
    results = [listed("a", SEARCH), listed("b", SEARCH)]
    made = report(results, tmp_path)
    assert made.errors == [] and made.warnings == [
        "name collision: 'search' is exposed by a/search, b/search"
    ]
    strict = report(results, tmp_path, collisions="error")
    assert strict.errors == [{
        "code": "name_collision",
        "message": "name collision: 'search' is exposed by a/search, b/search",
        "hint": "a host that prefixes tools (--prefix) does not see this collision",
    }]  # fmt: skip


def test_a_budget_kept_or_exceeded(tmp_path: Path) -> None:
    results = [listed("gh", SEARCH), listed("fs", FETCH)]
    total = tokens("search", SEARCH) + tokens("fetch", FETCH)
    kept = report(results, tmp_path, budget=total)
    assert kept.data["budget"] == {"limit": total, "total": total, "over": 0}
    assert kept.errors == []
    over = report(results, tmp_path, budget=total - 3)
    assert over.data["budget"] == {"limit": total - 3, "total": total, "over": 3}
    assert [e["code"] for e in over.errors] == ["over_budget"]
    assert over.errors[0]["message"] == over_budget(total - 3, over.totals).message  # type: ignore[union-attr]


def test_over_budget_names_each_servers_share_the_costliest_first() -> None:
    assert over_budget(100, {"a": 60, "b": 40}) is None
    error = over_budget(1000, {"small": 200, "none": 0, "big": 1500, "mid": 200})
    assert error is not None
    assert error.message == (
        "the exposed tools cost 1,900 tokens (o200k_base), 900 over the budget of 1,000: "
        "big 1,500, mid 200, small 200"
    )
    assert error.hint == "hide tools with tools.allow/deny in the entries, or raise --budget"
    assert tuple(error.subjects) == ("small", "none", "big", "mid")


def test_estimate_warnings() -> None:
    assert estimate_warnings(0, 0, 10) == []
    assert estimate_warnings(1, 0, 10) == [
        f"1 definition over {MAX_COUNTED_CHARS:,} characters: their tokens are counted that "
        "far and estimated beyond (~)"
    ]
    assert estimate_warnings(0, 3, 2.5) == [
        "counting tokens ran out of time (the timeout is 2.5 s): 3 definitions estimated "
        "from their length (~)"
    ]
    assert len(estimate_warnings(2, 2, 1)) == 2


def test_counting_ends_with_the_timeout(tmp_path: Path) -> None:
    slow = [ToolInfo(f"t{i}", random_words(i, 20_000), {"type": "object"}) for i in range(300)]
    made = report([listed("slow", *slow)], tmp_path, timeout=0.0)
    late = [t for t in made.data["tools"] if t["tokens_estimated"]]
    assert late and made.estimated_servers == {"slow"}
    assert made.data["tokens"]["estimated"] == len(late)
    assert made.data["servers"][0]["tokens"]["estimated"] is True
    assert made.warnings == [
        "counting tokens ran out of time (the timeout is 0 s): "
        f"{len(late)} definitions estimated from their length (~)"
    ]


def test_without_a_timeout_the_longest_entrys_is_used(tmp_path: Path) -> None:
    slow = [ToolInfo(f"t{i}", random_words(i, 20_000), {"type": "object"}) for i in range(300)]
    results = [listed("slow", *slow), listed("quick", SEARCH)]
    chosen = [("slow", entry(1), "external"), ("quick", entry(1500), "external")]
    made = tools_report(results, chosen, cache_dir=tmp_path, started=time.monotonic() - 100)  # type: ignore[arg-type]
    assert made.warnings[-1].startswith("counting tokens ran out of time (the timeout is 1.5 s)")
    none = tools_report([], [], cache_dir=tmp_path, started=time.monotonic())
    assert none.data["tools"] == [] and none.data["tokens"]["total"] == 0


def test_a_definition_too_long_to_count_is_warned(tmp_path: Path) -> None:
    long = ToolInfo("long", "word " * (MAX_COUNTED_CHARS // 4), {"type": "object"})
    made = report([listed("big", long)], tmp_path)
    assert made.warnings == [estimate_warnings(1, 0, 5)[0]]
    assert made.estimated_servers == {"big"}


def test_within_the_timeout_everything_is_counted(tmp_path: Path) -> None:
    # About two seconds of counting: more than the one second counting always gets.
    slow = [ToolInfo(f"t{i}", random_words(i, 20_000), {"type": "object"}) for i in range(10)]
    made = report([listed("slow", *slow)], tmp_path, timeout=120.0)
    assert made.warnings == [] and made.estimated_servers == set()
    assert made.data["tokens"]["estimated"] == 0


def test_names_are_bare_by_default(tmp_path: Path) -> None:
    results = [listed("a", SEARCH), listed("b", SEARCH)]
    chosen = [("a", entry(), "external"), ("b", entry(), "external")]
    made = tools_report(results, chosen, cache_dir=tmp_path, started=time.monotonic())  # type: ignore[arg-type]
    assert made.data["prefix"] == "none" and made.errors == []
    assert [t["name"] for t in made.data["tools"]] == ["search", "search"]
    assert made.warnings == ["name collision: 'search' is exposed by a/search, b/search"]
