"""The verdict on a server from what its probe found, without a server: each state, what
degrades one, ``--fail-on`` and the JSON form (tests/cli/test_health.py probes real ones)."""

from __future__ import annotations

import pytest

from mcpctl.errors import UsageError
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.eras import Era
from mcpctl.probe.healthstatus import (
    DEFAULT_SLOW,
    FAILING,
    HealthStatus,
    ProbeResult,
    failing_states,
    judge,
)
from mcpctl.probe.toolinfo import ToolInfo

H = HealthStatus


def test_failing_states_are_all_but_healthy() -> None:
    assert {H.degraded, H.needs_auth, H.unhealthy, H.unavailable} == FAILING
    assert failing_states([]) == FAILING
    assert failing_states(["", " , "]) == FAILING
    assert DEFAULT_SLOW == 2.0


def test_fail_on_names_read_in_any_case_and_lists() -> None:
    assert failing_states(["Needs_Auth"]) == {H.needs_auth}
    assert failing_states([" degraded , needs_auth", "unavailable"]) == {
        H.degraded,
        H.needs_auth,
        H.unavailable,
    }


def test_unhealthy_includes_unavailable() -> None:
    assert failing_states(["unhealthy"]) == {H.unhealthy, H.unavailable}
    assert failing_states(["unavailable"]) == {H.unavailable}


def test_a_name_that_is_not_a_failing_state_is_refused_with_a_guess() -> None:
    with pytest.raises(UsageError) as caught:
        failing_states(["degraded,degradd"])
    assert caught.value.message == "--fail-on 'degradd' is not a state (did you mean 'degraded'?)"
    assert caught.value.hint == (
        "choose among degraded, needs_auth, unhealthy, unavailable "
        "(comma-separated, or the option repeated)"
    )
    with pytest.raises(UsageError) as caught:
        failing_states(["healthy"])  # it never fails a check
    assert caught.value.message.startswith("--fail-on 'healthy' is not a state")
    with pytest.raises(UsageError) as caught:
        failing_states(["zzzzzz"])
    assert caught.value.message == "--fail-on 'zzzzzz' is not a state"


def error(code: str) -> ProbeError:
    return ProbeError(code, f"the {code}")


@pytest.mark.parametrize(
    ("result", "status"),
    [
        (ProbeResult("s", available=True, healthy=True), H.healthy),
        (ProbeResult("s", available=True, healthy=True, degraded=["slow"]), H.degraded),
        (ProbeResult("s", available=True, error=error("auth_required")), H.needs_auth),
        (ProbeResult("s", available=False, error=error("auth_required")), H.needs_auth),
        (ProbeResult("s", available=True, healthy=True, error=error("list_failed")), H.degraded),
        (ProbeResult("s", available=True, error=error("timeout")), H.unhealthy),
        (ProbeResult("s", available=False, error=error("timeout")), H.unavailable),
        (ProbeResult("s", available=True, healthy=False), H.unhealthy),
        (ProbeResult("s", available=False, healthy=False, degraded=["x"]), H.unavailable),
        (ProbeResult("s"), H.unavailable),
    ],
)
def test_the_verdict(result: ProbeResult, status: HealthStatus) -> None:
    assert result.status is status


def test_the_reasons_are_the_error_then_what_degraded_it() -> None:
    result = ProbeResult("s", error=error("list_failed"), degraded=["slow: ping"])
    assert result.reasons == ["list_failed: the list_failed", "slow: ping"]
    assert ProbeResult("s", degraded=["a", "b"]).reasons == ["a", "b"]
    assert ProbeResult("s").reasons == []


def test_a_results_defaults() -> None:
    result = ProbeResult("s")
    assert (result.type, result.transport, result.available, result.healthy) == (
        "external",
        "stdio",
        False,
        False,
    )
    assert result.latency_ms == {} and result.tools == [] and result.capabilities == []
    assert result.stderr == [] and result.warnings == [] and result.degraded == []


def test_the_json_form_of_a_healthy_server() -> None:
    result = ProbeResult(
        "gh",
        type="internal",
        transport="streamable-http",
        available=True,
        healthy=True,
        latency_ms={"connect": 12.345, "ping": 0.04},
        server_name="github",
        server_version="1.2",
        protocol_version="2025-11-25",
        era=Era("legacy", "2025-11-25", ("2025-11-25",), "fallback"),
        capabilities=["tools"],
        tool_count=1,
        tools=[ToolInfo("search", "Search.", {"type": "object"})],
    )
    data = result.to_dict()
    assert data == {
        "name": "gh",
        "available": True,
        "healthy": True,
        "type": "internal",
        "status": "healthy",
        "degraded": [],
        "transport": "streamable-http",
        "latency_ms": {"connect": 12.3, "ping": 0.0},
        "server": {"name": "github", "version": "1.2"},
        "protocol_version": "2025-11-25",
        "protocol": {
            "era": "legacy",
            "version": "2025-11-25",
            "supported": ["2025-11-25"],
            "detected": "fallback",
        },
        "capabilities": ["tools"],
        "tool_count": 1,
        "error": None,
    }
    assert list(data)[:4] == ["name", "available", "healthy", "type"]
    assert result.to_dict(with_tools=True)["tools"] == [
        {
            "name": "search",
            "title": None,
            "description": "Search.",
            "input_schema": {"type": "object"},
            "task_support": None,
        }
    ]


def test_the_json_form_of_a_failed_server() -> None:
    result = ProbeResult(
        "s",
        error=ProbeError("server_exited", "it exited", "run it"),
        stderr=["boom"],
        warnings=["tool 'x': repaired"],
    )
    data = result.to_dict()
    assert data["status"] == "unavailable" and data["protocol"] is None
    assert data["error"] == {"code": "server_exited", "message": "it exited", "hint": "run it"}
    assert data["stderr"] == ["boom"] and data["warnings"] == ["tool 'x': repaired"]
    assert "listing_cache" not in data and "tools" not in data


def test_the_listings_caching_is_shown_when_known() -> None:
    hinted = ProbeResult("s", listing_ttl_ms=60000, listing_scope="shared").to_dict()
    assert hinted["listing_cache"] == {"ttl_ms": 60000, "scope": "shared", "age_s": None}
    cached = ProbeResult("s", from_cache=12.345).to_dict()
    assert cached["listing_cache"] == {"ttl_ms": None, "scope": None, "age_s": 12.3}
    zero = ProbeResult("s", listing_ttl_ms=0, from_cache=0.0).to_dict()
    assert zero["listing_cache"] == {"ttl_ms": 0, "scope": None, "age_s": 0.0}


def test_repairs_degrade_a_server_naming_the_first() -> None:
    one = ProbeResult("s", healthy=True, warnings=["tool 'a': fixed"])
    judge(one, None)
    assert one.degraded == ["mcpctl repaired its tool list (1 problem: tool 'a': fixed)"]
    two = ProbeResult("s", healthy=True, warnings=["tool 'a': fixed", "tool 'b': fixed"])
    judge(two, 2.0)
    assert two.degraded == ["mcpctl repaired its tool list (2 problems: tool 'a': fixed; ...)"]


def test_the_slowest_request_after_the_handshake_degrades_a_slow_server() -> None:
    latency = {"connect": 9000.0, "initialize": 9000.0, "total": 9500.0, "list_tools": 2100.4,
               "list_prompts": 2600.6, "list_resources": 10.0, "ping": 5.0}  # fmt: skip
    result = ProbeResult("s", healthy=True, latency_ms=latency, warnings=["w"])
    judge(result, 2.0)
    assert result.degraded == [
        "mcpctl repaired its tool list (1 problem: w)",
        "slow: prompts/list took 2601 ms (the limit is 2000 ms)",
    ]
    for key, name in [("list_tools", "tools/list"), ("list_resources", "resources/list"),
                      ("ping", "ping")]:  # fmt: skip
        alone = ProbeResult("s", latency_ms={key: 1500.0, "connect": 5000.0})
        judge(alone, 1.25)
        assert alone.degraded == [f"slow: {name} took 1500 ms (the limit is 1250 ms)"]


def test_in_time_or_without_a_limit_it_is_not_slow() -> None:
    at_limit = ProbeResult("s", latency_ms={"ping": 2000.0, "list_tools": 1999.0})
    judge(at_limit, 2.0)
    assert at_limit.degraded == []
    handshake_only = ProbeResult("s", latency_ms={"connect": 9000.0, "initialize": 9000.0})
    judge(handshake_only, 0.5)
    assert handshake_only.degraded == []
    no_limit = ProbeResult("s", latency_ms={"ping": 99999.0})
    judge(no_limit, None)
    assert no_limit.degraded == []


def test_empty_names_between_others_are_skipped() -> None:
    assert failing_states(["", "needs_auth"]) == {H.needs_auth}
    assert failing_states(["degraded,,needs_auth,"]) == {H.degraded, H.needs_auth}


def test_a_millisecond_over_the_limit_is_slow() -> None:
    result = ProbeResult("s", latency_ms={"ping": 2001.0})
    judge(result, 2.0)
    assert result.degraded == ["slow: ping took 2001 ms (the limit is 2000 ms)"]
