"""Which era a connection speaks (mcpctl.probe.negotiate), without a server process: a
ClientSession over memory streams, answered by a scripted peer with real JSON-RPC messages.
tests/probe/test_eras.py runs the same decisions against real servers."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import mcpctl.probe.negotiate as negotiate_module
from mcpctl.errors import ProbeFailed
from mcpctl.probe.eras import Era
from mcpctl.probe.negotiate import discover_timeout, handshake_instead, negotiate, sse_mismatch
from mcpctl.sdk import MCPError
from tests.probe.scriptedpeer import (
    HANDSHAKE,
    MODERN,
    NOT_FOUND,
    SILENT,
    UNSUPPORTED,
    Answer,
    Peer,
    discovered,
    initialized,
    unsupported,
    with_session,
)


def negotiated(answers: dict[str, list[Answer]], **kw: Any) -> tuple[Any, Peer]:
    options: dict[str, Any] = {"name": "srv", "mode": "auto", "transport": "stdio", "timeout": 3}
    options.update(kw)
    return with_session(answers, lambda session: negotiate(session, **options))


def mismatch(outcome: Any) -> ProbeFailed:
    assert isinstance(outcome, ProbeFailed), outcome
    assert outcome.reason == "protocol_mismatch" and outcome.server == "srv"
    return outcome


def message(outcome: Any) -> str:
    return str(mismatch(outcome)).removeprefix("srv: ")


# --- auto: discovery first, the handshake when it is not positive evidence -----------------


def test_a_server_that_answers_discover_is_modern_without_a_handshake() -> None:
    era, peer = negotiated({"server/discover": [discovered(MODERN, "2099-01-01")]})
    assert era == Era("modern", MODERN, (MODERN, "2099-01-01"), "discovered")
    assert peer.methods == ["server/discover"]


def test_a_server_without_discover_gets_the_handshake() -> None:
    era, peer = negotiated({"server/discover": [NOT_FOUND], "initialize": [initialized()]})
    assert era == Era("legacy", HANDSHAKE, (), "fallback")
    assert peer.methods == ["server/discover", "initialize"]


def test_a_silent_discover_waits_its_deadline_then_the_handshake() -> None:
    era, peer = negotiated({"server/discover": [SILENT], "initialize": [initialized()]})
    assert era == Era("legacy", HANDSHAKE, (), "fallback")
    assert peer.methods == ["server/discover", "initialize"]


def test_a_discover_result_that_does_not_parse_gets_the_handshake() -> None:
    era, _ = negotiated({"server/discover": [{"nothing": 1}], "initialize": [initialized()]})
    assert era == Era("legacy", HANDSHAKE, (), "fallback")


def test_a_discover_result_naming_no_modern_version_gets_the_handshake() -> None:
    era, _ = negotiated(
        {"server/discover": [discovered("2025-11-25")], "initialize": [initialized()]}
    )
    assert era == Era("legacy", HANDSHAKE, (), "fallback")


def test_an_unsupported_version_naming_a_handshake_version_falls_back_and_keeps_the_list() -> None:
    era, _ = negotiated(
        {
            "server/discover": [unsupported("2025-06-18", "x" * 100, 7)],
            "initialize": [initialized("2025-06-18")],
        }
    )
    assert era == Era("legacy", "2025-06-18", ("2025-06-18",), "fallback")


def test_an_unsupported_version_naming_only_unknown_versions_is_a_mismatch() -> None:
    outcome, peer = negotiated({"server/discover": [unsupported("2099-01-01")]})
    assert message(outcome) == (
        "the server speaks only 2099-01-01; mcpctl speaks "
        "2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"
    )
    assert outcome.hint == "upgrade mcpctl (pip install -U mcpctl), or pin an older server version"
    assert peer.methods == ["server/discover"]  # no handshake after that


def test_an_unsupported_version_error_without_a_list_is_not_evidence() -> None:
    for data in ({"supported": "2026-07-28"}, ["2026-07-28"], None):
        era, _ = negotiated(
            {
                "server/discover": [(UNSUPPORTED, "no", data)],
                "initialize": [initialized()],
            }
        )
        assert era == Era("legacy", HANDSHAKE, (), "fallback"), data


def test_another_error_naming_versions_is_not_evidence() -> None:
    era, _ = negotiated(
        {
            "server/discover": [(-32600, "bad", {"supported": ["2099-01-01"]})],
            "initialize": [initialized()],
        }
    )
    assert era == Era("legacy", HANDSHAKE, (), "fallback")


def test_a_handshake_error_in_auto_is_the_servers_error() -> None:
    outcome, _ = negotiated(
        {"server/discover": [NOT_FOUND], "initialize": [(-32603, "boom", None)]}
    )
    assert isinstance(outcome, MCPError) and outcome.error.message == "boom"


def test_a_handshake_answer_at_a_version_of_no_handshake_revision_is_a_mismatch() -> None:
    outcome, _ = negotiated(
        {"server/discover": [NOT_FOUND], "initialize": [initialized("1999-01-01")]}
    )
    assert message(outcome) == "Unsupported protocol version from the server: 1999-01-01"


def test_a_handshake_refused_for_a_modern_version_asks_discover_again() -> None:
    # discovery answered after its deadline and settled the server as modern: the handshake
    # is refused with the modern versions, and discover is asked again
    era, peer = negotiated(
        {
            "server/discover": [SILENT, discovered()],
            "initialize": [unsupported(MODERN)],
        }
    )
    assert era == Era("modern", MODERN, (MODERN,), "discovered")
    assert peer.methods == ["server/discover", "initialize", "server/discover"]


def test_a_handshake_refused_naming_only_handshake_versions_is_the_error() -> None:
    outcome, peer = negotiated(
        {"server/discover": [NOT_FOUND], "initialize": [unsupported("2025-03-26")]}
    )
    assert isinstance(outcome, MCPError) and outcome.code == UNSUPPORTED
    assert peer.methods == ["server/discover", "initialize"]


# --- pinned eras ---------------------------------------------------------------------------


def test_pinned_legacy_sends_only_the_handshake() -> None:
    era, peer = negotiated({"initialize": [initialized("2025-03-26")]}, mode="legacy")
    assert era == Era("legacy", "2025-03-26", (), "pinned")
    assert peer.methods == ["initialize"]


def test_pinned_legacy_for_a_modern_only_server_is_a_mismatch_with_a_fix() -> None:
    outcome, _ = negotiated({"initialize": [unsupported(MODERN)]}, mode="legacy")
    assert message(outcome) == (
        f"the server speaks only {MODERN}; --protocol asks for the handshake revisions "
        "(2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25)"
    )
    assert outcome.hint == "use --protocol auto (or --protocol modern)"


def test_pinned_legacy_by_the_entry_has_the_entrys_fix() -> None:
    outcome, _ = negotiated(
        {"initialize": [unsupported(MODERN)]}, mode="legacy", pinned_by="the entry"
    )
    assert message(outcome).startswith(f"the server speaks only {MODERN}; the entry asks for")
    assert outcome.hint == (
        'set "protocol": "auto" (or "modern") in the entry, or pass --protocol auto'
    )


def test_pinned_legacy_for_a_server_of_unknown_versions_says_upgrade() -> None:
    outcome, _ = negotiated({"initialize": [unsupported("2099-01-01")]}, mode="legacy")
    assert message(outcome).startswith("the server speaks only 2099-01-01; mcpctl speaks ")
    assert outcome.hint is not None and outcome.hint.startswith("upgrade mcpctl")


def test_pinned_legacy_and_another_error_is_the_servers_error() -> None:
    outcome, _ = negotiated({"initialize": [(-32603, "boom", None)]}, mode="legacy")
    assert isinstance(outcome, MCPError) and outcome.error.message == "boom"


def test_pinned_legacy_answered_at_an_unknown_version_is_a_mismatch_on_one_line() -> None:
    outcome, _ = negotiated({"initialize": [initialized("1999-01-01")]}, mode="legacy")
    assert message(outcome) == "Unsupported protocol version from the server: 1999-01-01"


def test_pinned_modern_sends_only_discover() -> None:
    era, peer = negotiated({"server/discover": [discovered()]}, mode="modern")
    assert era == Era("modern", MODERN, (MODERN,), "pinned")
    assert peer.methods == ["server/discover"]


def test_pinned_modern_for_a_handshake_server_names_what_it_offered() -> None:
    outcome, peer = negotiated(
        {"server/discover": [NOT_FOUND], "initialize": [initialized("2025-06-18")]},
        mode="modern",
    )
    assert message(outcome) == (
        "the server speaks the handshake revisions (it offered 2025-06-18); "
        f"--protocol asks for the stateless revisions ({MODERN})"
    )
    assert outcome.hint == "use --protocol auto (or --protocol legacy)"
    assert peer.methods == ["server/discover", "initialize"]


def test_pinned_modern_for_a_server_that_answers_nothing_quotes_its_refusal() -> None:
    outcome, _ = negotiated(
        {"server/discover": [NOT_FOUND], "initialize": [(-32603, "nope", None)]},
        mode="modern",
        pinned_by="the entry",
    )
    assert message(outcome) == (
        "the server does not answer server/discover (Method not found: server/discover); "
        f"the entry asks for the stateless revisions ({MODERN})"
    )
    assert outcome.hint == (
        'set "protocol": "auto" (or "legacy") in the entry, or pass --protocol auto'
    )


def test_pinned_modern_refused_with_a_list_names_it() -> None:
    outcome, peer = negotiated(
        {"server/discover": [unsupported("2025-11-25", "2025-06-18")]}, mode="modern"
    )
    assert message(outcome) == (
        "the server speaks only 2025-11-25, 2025-06-18; "
        f"--protocol asks for the stateless revisions ({MODERN})"
    )
    assert peer.methods == ["server/discover"]


def test_pinned_modern_and_a_silent_server_says_how_long_it_waited() -> None:
    outcome, _ = negotiated({"server/discover": [SILENT]}, mode="modern", timeout=1.5)
    assert message(outcome) == (
        "the server did not answer server/discover within 1.5 s; "
        f"--protocol asks for the stateless revisions ({MODERN})"
    )
    assert outcome.hint == "use --protocol auto (or --protocol legacy)"


def test_pinned_modern_and_a_result_without_a_common_version_is_a_mismatch() -> None:
    # the versions the server named are quoted (not "none named")
    outcome, _ = negotiated({"server/discover": [discovered("2025-11-25")]}, mode="modern")
    assert message(outcome) == (
        "No mutually supported modern protocol version (server: ['2025-11-25'], "
        f"client: ['{MODERN}']); --protocol asks for the stateless revisions ({MODERN})"
    )
    assert outcome.hint == "use --protocol auto (or --protocol legacy)"
    long, _ = negotiated({"server/discover": [discovered("9" * 300)]}, mode="modern")
    assert "\n" not in str(long) and len(message(long).split("; ")[0]) == 160


# --- the SSE transport ---------------------------------------------------------------------


def test_sse_in_auto_is_the_handshake_without_discovery() -> None:
    era, peer = negotiated({"initialize": [initialized()]}, transport="sse")
    assert era == Era("legacy", HANDSHAKE, (), "transport")
    assert peer.methods == ["initialize"]


def test_sse_pinned_legacy_is_pinned() -> None:
    era, _ = negotiated({"initialize": [initialized()]}, transport="sse", mode="legacy")
    assert era == Era("legacy", HANDSHAKE, (), "pinned")


def test_sse_for_a_modern_only_server_says_the_transport_allows_only_the_handshake() -> None:
    outcome, _ = negotiated({"initialize": [unsupported(MODERN)]}, transport="sse")
    assert message(outcome).startswith(
        f"the server speaks only {MODERN}; its transport allows only the handshake revisions"
    )
    assert outcome.hint is None


def test_sse_pinned_modern_is_refused_before_anything_is_sent() -> None:
    outcome, peer = negotiated({}, transport="sse", mode="modern", pinned_by="the entry")
    assert message(outcome) == (
        "the sse transport speaks only the handshake revisions "
        "(2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25); the entry asks for the "
        f"stateless ones ({MODERN})"
    )
    assert outcome.hint == (
        'set "protocol": "auto" (or "legacy") in the entry, or pass --protocol auto'
    )
    assert peer.methods == []
    assert str(sse_mismatch("srv", "--protocol")) == str(outcome).replace("the entry", "--protocol")
    assert sse_mismatch("srv", "--protocol").hint == "use --protocol auto (or --protocol legacy)"


# --- a remembered era ------------------------------------------------------------------------


def test_a_remembered_handshake_is_tried_without_discovery() -> None:
    era, peer = negotiated(
        {"initialize": [initialized()]}, remembered=Era("legacy", HANDSHAKE, (), "fallback")
    )
    assert era == Era("legacy", HANDSHAKE, (), "remembered")
    assert peer.methods == ["initialize"]


def test_a_remembered_modern_era_is_discovered_as_remembered() -> None:
    era, peer = negotiated(
        {"server/discover": [discovered()]}, remembered=Era("modern", MODERN, (MODERN,))
    )
    assert era == Era("modern", MODERN, (MODERN,), "remembered")
    assert peer.methods == ["server/discover"]


def test_a_remembered_modern_era_that_fails_falls_back_to_the_handshake_once() -> None:
    era, peer = negotiated(
        {"server/discover": [NOT_FOUND], "initialize": [initialized()]},
        remembered=Era("modern", MODERN, (MODERN,)),
    )
    assert era == Era("legacy", HANDSHAKE, (), "fallback")
    assert peer.methods == ["server/discover", "initialize"]  # discovery not repeated


def test_a_remembered_handshake_refused_by_a_modern_server_is_discovered_again() -> None:
    era, peer = negotiated(
        {"initialize": [unsupported(MODERN)], "server/discover": [discovered()]},
        remembered=Era("legacy", HANDSHAKE, (), "fallback"),
    )
    assert era == Era("modern", MODERN, (MODERN,), "discovered")
    assert peer.methods == ["initialize", "server/discover"]


def test_a_remembered_handshake_failing_otherwise_detects_again() -> None:
    # any protocol error: the era is detected afresh, with discovery
    era, peer = negotiated(
        {"initialize": [(-32603, "busy", None)], "server/discover": [discovered()]},
        remembered=Era("legacy", HANDSHAKE, (), "fallback"),
    )
    assert era == Era("modern", MODERN, (MODERN,), "discovered")
    assert peer.methods == ["initialize", "server/discover"]


def test_a_remembered_era_and_a_server_of_unknown_versions_is_not_retried() -> None:
    # the remembered era's failure (a mismatch) is detected again once, and that one stands
    outcome, peer = negotiated(
        {"initialize": [unsupported("2099-01-01"), unsupported("2099-01-01")],
         "server/discover": [unsupported("2099-01-01")]},
        remembered=Era("legacy", HANDSHAKE, (), "fallback"),
    )  # fmt: skip
    assert message(outcome).startswith("the server speaks only 2099-01-01; mcpctl speaks")
    assert peer.methods == ["initialize", "server/discover"]


# --- the version spoken, and a refusal after discovery ----------------------------------------


def test_the_version_spoken_is_the_newest_both_sides_speak() -> None:
    era, peer = negotiated({"server/discover": [discovered("2099-01-01", MODERN)]})
    assert era.version == MODERN and era.supported == ("2099-01-01", MODERN)
    params = peer.asked[0][1]
    assert params["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN


def test_handshake_instead_is_the_handshake_on_the_same_connection() -> None:
    era, peer = with_session(
        {"initialize": [initialized("2025-06-18")]}, lambda s: handshake_instead(s, 5)
    )
    assert era == Era("legacy", "2025-06-18", (), "fallback")
    assert peer.methods == ["initialize"]


@pytest.mark.parametrize(
    "answer", [(-32603, "no", None), initialized("1999-01-01"), SILENT], ids=str
)
def test_handshake_instead_is_none_when_the_handshake_fails_too(answer: Answer) -> None:
    era, _ = with_session({"initialize": [answer]}, lambda s: handshake_instead(s, 1))
    assert era is None


def test_discover_timeout_is_a_third_between_1_and_10_seconds() -> None:
    assert [discover_timeout(t) for t in (0.5, 3, 4.5, 30, 31, 300)] == [1, 1, 1.5, 10, 10, 10]


# --- what is quoted of the server, cut to one short line -------------------------------------


def test_pinned_legacy_quotes_an_unknown_version_cut_to_120_characters() -> None:
    outcome, _ = negotiated({"initialize": [initialized("9" * 300)]}, mode="legacy")
    said = message(outcome)
    assert said.startswith("Unsupported protocol version from the server: 999")
    assert len(said) == 120 and said.endswith("…")


def test_pinned_modern_quotes_a_refusal_cut_to_80_characters() -> None:
    outcome, _ = negotiated(
        {"server/discover": [(-32601, "n" * 200, None)], "initialize": [(-32603, "x", None)]},
        mode="modern",
    )
    assert message(outcome).startswith(
        f"the server does not answer server/discover ({'n' * 79}…); "
    )


def test_pinned_modern_asks_the_handshake_of_a_refusing_server_within_its_timeout() -> None:
    outcome, peer = negotiated(
        {"server/discover": [NOT_FOUND], "initialize": [SILENT]}, mode="modern", timeout=1
    )
    assert message(outcome).startswith(
        "the server does not answer server/discover (Method not found: server/discover); "
    )
    assert peer.methods == ["server/discover", "initialize"]


def test_an_auto_answer_in_a_bad_version_is_one_line_of_120_characters() -> None:
    outcome, _ = negotiated(
        {"server/discover": [NOT_FOUND], "initialize": [initialized("9" * 300)]}
    )
    said = message(outcome)
    assert said.startswith("Unsupported protocol version from the server: 999")
    assert len(said) == 120 and said.endswith("…")


# --- deadlines: the connection's, not the SDK's own (10 s for server/discover) ----------------


class _Bounds:
    """anyio for the negotiation, recording the deadline of each exchange it bounds."""

    def __init__(self) -> None:
        self.seen: list[float] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(anyio, name)

    def fail_after(self, delay: float, shield: bool = False) -> Any:
        self.seen.append(delay)
        return anyio.fail_after(delay, shield)


@pytest.fixture
def bounds(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The deadlines the negotiation set, in order (read, not timed: the SDK's own bound
    for ``server/discover`` is 10 s, and a deadline left out would fall back to it)."""
    recording = _Bounds()
    monkeypatch.setattr(negotiate_module, "anyio", recording)
    return recording.seen


def test_a_silent_discover_costs_a_third_of_the_timeout_not_the_sdks_bound(
    bounds: list[float],
) -> None:
    era, _ = negotiated({"server/discover": [SILENT], "initialize": [initialized()]}, timeout=3)
    assert era == Era("legacy", HANDSHAKE, (), "fallback")
    assert bounds == [1.0]  # discover's third of 3 s; the handshake is bound by the session


def test_a_remembered_modern_era_whose_discover_is_silent_costs_a_third_of_the_timeout(
    bounds: list[float],
) -> None:
    era, peer = negotiated(
        {"server/discover": [SILENT], "initialize": [initialized()]},
        timeout=3,
        remembered=Era("modern", MODERN, (MODERN,)),
    )
    assert era == Era("legacy", HANDSHAKE, (), "fallback")
    assert peer.methods == ["server/discover", "initialize"]
    assert bounds == [1.0]


def test_discover_asked_again_after_a_refused_handshake_is_bound_by_the_timeout(
    bounds: list[float],
) -> None:
    outcome, peer = negotiated(
        {"server/discover": [SILENT, SILENT], "initialize": [unsupported(MODERN)]},
        timeout=1.5,
    )
    assert isinstance(outcome, TimeoutError), outcome
    assert peer.methods == ["server/discover", "initialize", "server/discover"]
    assert bounds == [1.0, 1.5]
