"""health_as_client: a server the client starts as mcpctl would is probed once."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.probe import health
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.health import ProbeResult
from mcpctl.probe.serverenv import TRUST_ENV
from mcpctl.render import clienthealth as ch
from mcpctl.render.base import Places
from mcpctl.render.claudeapproval import Approval
from mcpctl.render.clientcheck import ClientProblem
from mcpctl.render.clientfile import ClientEntry, ClientView, read_client
from mcpctl.render.clienthealth import health_as_client
from tests.conftest import SERVERS

BASIC = {"command": sys.executable, "args": [str(SERVERS / "basic.py")]}


def test_one_probe_for_the_same_server_two_for_a_different_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probed: list[list[str]] = []
    real = health.probe_all

    async def counting(entries: Any, **kwargs: Any) -> Any:
        items = list(entries)
        probed.append([name for name, _, _ in items])
        return await real(items, **kwargs)

    monkeypatch.setattr(health, "probe_all", counting)
    for name in TRUST_ENV:  # Cline passes the SDK's few variables: mcpctl passes these too
        monkeypatch.delenv(name, raising=False)
    file = tmp_path / "mcp.json"
    file.write_text(json.dumps({"mcpServers": {
        "same": BASIC, "other": {**BASIC, "env": {"V": "theirs"}},
    }}))  # fmt: skip
    ours = [
        ("same", ServerEntry(command=sys.executable, args=tuple(BASIC["args"])), "external"),
        ("other", ServerEntry(command=sys.executable, args=tuple(BASIC["args"]),
                              env={"V": "${AS_TEST_KEYED}"}), "external"),
    ]  # fmt: skip
    keyring = {"AS_TEST_KEYED": "kept"}.get
    report = anyio.run(lambda: health_as_client(read_client("cline", file), ours,
                                                secrets=keyring))  # fmt: skip
    assert sorted(map(sorted, probed)) == [["other"], ["other", "same"]]
    rows = {r.name: r for r in report.rows}
    assert rows["same"].verdict == rows["same"].mcpctl == "healthy"
    assert rows["same"].mcpctl_result is rows["same"].result
    assert rows["other"].mcpctl_result is not rows["other"].result
    assert report.healthy


def test_a_client_that_passes_its_whole_environment_is_probed_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same command and arguments: Cursor gives the server every variable, mcpctl a few.
    monkeypatch.setenv("AS_TEST_WHOLE", "x")
    file = tmp_path / "mcp.json"
    file.write_text(json.dumps({"mcpServers": {"s": BASIC}}))
    ours = [("s", ServerEntry(command=sys.executable, args=tuple(BASIC["args"])), "external")]
    report = anyio.run(lambda: health_as_client(read_client("cursor", file), ours))
    row = report.rows[0]
    assert row.mcpctl_result is not row.result and row.verdict == row.mcpctl == "healthy"
    assert row.env_difference is not None and "AS_TEST_WHOLE" in row.env_difference


# --- what decides, without a server: verdicts, reasons, rows --------------------------------


def result(name: str = "s", *, available: bool = False, healthy: bool = False,
           error: ProbeError | None = None) -> ProbeResult:  # fmt: skip
    return ProbeResult(name, available=available, healthy=healthy, error=error)


def test_a_verdict_says_how_far_the_probe_went() -> None:
    assert ch.verdict(result(available=True, healthy=True)) == "healthy"
    assert ch.verdict(result(healthy=True)) == "healthy"
    assert ch.verdict(result(available=True)) == "unhealthy"
    assert ch.verdict(result()) == "unavailable"


def test_a_rows_json() -> None:
    problem = ClientProblem("s", "unset", "variable K is set nowhere", "K")
    row = ch.AsClientRow("s", "unavailable", mcpctl="healthy", differs=True, reason="r",
                         problems=[problem])  # fmt: skip
    assert row.as_dict("cursor", Path("/f.json")) == {
        "target": "cursor", "file": "/f.json", "verdict": "unavailable", "mcpctl": "healthy",
        "differs": True, "reason": "r", "problems": [problem.to_dict()],
    }  # fmt: skip
    bare = ch.AsClientRow("s", "disabled")
    assert (bare.result, bare.mcpctl, bare.mcpctl_result, bare.differs, bare.reason) == (
        None, None, None, False, None,
    )  # fmt: skip
    assert bare.problems == [] and bare.env_difference is None


def test_healthy_means_every_probed_server_healthy_and_none_waiting() -> None:
    def report(*rows: ch.AsClientRow) -> ch.AsClientHealth:
        return ch.AsClientHealth("cursor", Path("f"), list(rows))

    good = ch.AsClientRow("a", "healthy", result=result(healthy=True))
    bad = ch.AsClientRow("b", "unhealthy", result=result(available=True))
    assert report(good).healthy
    assert report().healthy
    assert not report(good, bad).healthy
    assert report(good, ch.AsClientRow("c", "disabled")).healthy
    assert not report(good, ch.AsClientRow("c", "pending_approval")).healthy
    assert report(good, ch.AsClientRow("c", "rejected")).healthy
    assert report(ch.AsClientRow("c", "unavailable")).healthy  # not probed: not counted
    empty = report()
    assert (empty.warnings, empty.only_in_mcpctl, empty.only_in_client) == ([], [], [])


def test_a_failed_headers_helper_is_the_clients_verdict() -> None:
    item = ClientEntry("api", ServerEntry(url="https://h.example/mcp", transport="sse"))
    got = ch._helper_result(item, "api: its headers helper failed (exit 3)", "registry")
    assert (got.name, got.type, got.transport) == ("api", "registry", "sse")
    assert got.error == ProbeError(
        "headers_helper_failed", "its headers helper failed (exit 3)",
        "run the headers helper by hand to see why; the client connects only once it works",
    )  # fmt: skip
    assert ch.verdict(got) == "unavailable"


def row_with(problems: list[ClientProblem], error: ProbeError | None) -> ch.AsClientRow:
    return ch.AsClientRow("s", "unavailable", result=result(error=error), problems=problems)


MISSING = ProbeError("missing_variable", "variable K is not set", "set K")


def test_a_missing_variable_is_explained_as_the_client_sees_it() -> None:
    unset = ClientProblem("s", "unset", "K is set nowhere; export K before starting cursor", "K")
    row = row_with([unset], MISSING)
    ch._explain_failure(row, "cursor")
    assert row.result is not None and row.result.error == ProbeError(
        "missing_variable",
        "variable K is not set in the environment cursor starts from",
        "export K before starting cursor",
    )
    keyring = ClientProblem("s", "keyring", "K is only in the keyring", "K")
    row = row_with([keyring], MISSING)
    ch._explain_failure(row, "cursor")
    assert row.result is not None and row.result.error == ProbeError(
        "missing_variable", "variable K is not set in the environment cursor starts from", None
    )
    asked = ClientProblem("s", "input", "vscode asks for K; set it", "K")
    row = row_with([asked], MISSING)
    ch._explain_failure(row, "vscode")
    assert row.result is not None and row.result.error == ProbeError(
        "missing_variable", "vscode asks for K", "set it"
    )


def test_other_failures_and_problems_keep_the_probes_words() -> None:
    other = ProbeError("spawn_failed", "no such file", "install it")
    unset = ClientProblem("s", "unset", "K is set nowhere; export K", "K")
    row = row_with([unset], other)
    ch._explain_failure(row, "cursor")
    assert row.result is not None and row.result.error == other
    for problem in (
        ClientProblem("s", "literal", "passed as written; x", "K"),
        ClientProblem("s", "command", "npx is not found; install it"),
        ClientProblem("s", "unset", "no variable named; x", None),
    ):
        row = row_with([problem], MISSING)
        ch._explain_failure(row, "cursor")
        assert row.result is not None and row.result.error == MISSING
    first = ClientProblem("s", "literal", "as written; x", "A")
    second = ClientProblem("s", "unset", "B is set nowhere; export B", "B")
    third = ClientProblem("s", "unset", "C is set nowhere; export C", "C")
    row = row_with([first, second, third], MISSING)
    ch._explain_failure(row, "cursor")
    assert row.result is not None and row.result.error is not None
    assert row.result.error.hint == "export B"
    nothing = ch.AsClientRow("s", "disabled")
    ch._explain_failure(nothing, "cursor")
    assert nothing.result is None
    fine = row_with([unset], None)
    ch._explain_failure(fine, "cursor")
    assert fine.result is not None and fine.result.error is None


def compared(verdict: str, mcpctl: str | None, *, in_ours: bool = True, stale: bool = False,
             problems: list[ClientProblem] | None = None, env: str | None = None,
             res: ProbeResult | None = None, ours: ProbeResult | None = None) -> ch.AsClientRow:  # fmt: skip
    row = ch.AsClientRow("s", verdict, result=res, mcpctl=mcpctl, mcpctl_result=ours,
                         problems=problems or [], env_difference=env)  # fmt: skip
    ch._compare(row, "cursor", in_ours, stale=stale)
    return row


def test_a_server_only_the_client_has_is_not_compared() -> None:
    row = compared("unavailable", None, in_ours=False)
    assert (row.differs, row.reason) == (False, None)
    problems = [ClientProblem("s", "unset", "a"), ClientProblem("s", "literal", "b")]
    row = compared("healthy", None, in_ours=False, problems=problems)
    assert (row.differs, row.reason) == (False, "a; b")


def test_a_server_disabled_in_the_client_differs() -> None:
    row = compared("disabled", "healthy")
    assert (row.differs, row.reason) == (True, "disabled in cursor's config")


def test_the_same_verdict_notes_only_what_is_passed_as_written() -> None:
    row = compared("healthy", "healthy")
    assert (row.differs, row.reason) == (False, None)
    problems = [ClientProblem("s", "literal", "x is passed as written"),
                ClientProblem("s", "unset", "y"), ClientProblem("s", "literal", "z")]  # fmt: skip
    row = compared("healthy", "healthy", problems=problems)
    assert (row.differs, row.reason) == (False, "x is passed as written; z")


def test_different_verdicts_say_which_and_why() -> None:
    problems = [ClientProblem("s", "unset", "K is set nowhere"), ClientProblem("s", "command", "c")]
    row = compared("unavailable", "healthy", problems=problems)
    assert row.differs
    assert row.reason == "healthy for mcpctl, fails for cursor: K is set nowhere; c"
    row = compared("healthy", "unhealthy", stale=True)
    assert row.reason == (
        "fails for mcpctl, healthy for cursor: cursor's entry is not mcpctl's; update it with: "
        "mcpctl render cursor --install"
    )
    row = compared("unavailable", "healthy", env="the client does not pass HOME")
    assert row.reason == "healthy for mcpctl, fails for cursor: the client does not pass HOME"
    row = compared("unavailable", "unhealthy")
    assert row.reason == "unhealthy for mcpctl, unavailable for cursor"
    row = compared("unhealthy", None)
    assert row.differs and row.reason == "- for mcpctl, unhealthy for cursor"
    broke = result(error=ProbeError("spawn_failed", "no such file"))
    row = compared("unavailable", "healthy", res=broke)
    assert row.reason == "healthy for mcpctl, fails for cursor: spawn_failed: no such file"
    row = compared("healthy", "unavailable", ours=broke, res=result(healthy=True))
    assert row.reason == "fails for mcpctl, healthy for cursor: spawn_failed: no such file"
    row = compared("unavailable", "healthy", res=result())
    assert row.reason == "healthy for mcpctl, fails for cursor"


def test_a_stale_entry_is_one_the_client_would_get_otherwise() -> None:
    mine = {"s": (ServerEntry(command="new"), "external")}
    old = ClientEntry("s", ServerEntry(command="old"))
    assert ch._stale("cursor", old, mine, "s")
    assert not ch._stale("cursor", ClientEntry("s", ServerEntry(command="new")), mine, "s")
    assert not ch._stale("cursor", old, mine, "other")
    assert not ch._stale("cursor", ClientEntry("s", ServerEntry(command="old"), launcher=True),
                         mine, "s")  # fmt: skip
    literal = ClientEntry("s", ServerEntry(command="old"), literals={"L": "x"})
    assert not ch._stale("cursor", literal, mine, "s")
    # what the client cannot hold apart is not a difference (cursor has no cwd)
    assert not ch._stale(
        "cursor", ClientEntry("s", ServerEntry(command="new", cwd="/w")), mine, "s"
    )


def test_two_entries_are_probed_once_only_when_they_start_the_same() -> None:
    env = {"K": "v", "PATH": "/bin"}
    same = ServerEntry(command="sh", args=("-c", "x"), env={"A": "${K}"})
    item = ClientEntry("s", same)
    assert ch._difference("cline", item, same, None, env) == (True, None)
    assert (
        ch._difference("cline", ClientEntry("s", same, launcher=True), same, None, env)[0] is False
    )
    other = ServerEntry(command="sh", args=("-c", "y"))
    assert ch._difference("cline", ClientEntry("s", other), same, None, env) == (False, None)
    unset = ServerEntry(command="sh", env={"A": "${NOT_SET_ANYWHERE_X}"})
    assert ch._difference("cline", ClientEntry("s", unset), same, None, env) == (False, None)
    assert ch._difference("cline", item, unset, None, env) == (False, None)
    # our entry resolves from the keyring too; the client's never does
    keyed = ServerEntry(command="sh", args=("-c", "x"), env={"A": "${KEYED}"})
    got = ch._difference("cline", ClientEntry("s", keyed), keyed, {"KEYED": "v"}.get, env)
    assert got == (False, None)
    same_kept, why = ch._difference("cursor", item, same, None, env)
    assert not same_kept and why is not None and "K" in why


def test_approvals_are_claude_codes_of_a_project_file_only(tmp_path: Path) -> None:
    places = Places(home=tmp_path / "home", cwd=tmp_path, system="linux", environ={})
    project = tmp_path / ".mcp.json"
    view = ClientView("claude-code", project, {"s": ClientEntry("s", ServerEntry(command="x"))})
    warnings: list[str] = []
    assert ch._approvals(view, places, warnings) == {"s": Approval("pending")}
    other = ClientView("cursor", project, dict(view.entries))
    assert ch._approvals(other, places, warnings) == {}
    user = ClientView("claude-code", tmp_path / "claude.json", dict(view.entries))
    assert ch._approvals(user, places, warnings) == {}
    assert warnings == []
    assert ch._approved({}, "s") and ch._approved({"s": Approval("approved", "f: k")}, "s")
    assert not ch._approved({"s": Approval("pending")}, "s")
    assert not ch._approved({"s": Approval("rejected", "f: k")}, "s")
    assert ch._approved({"t": Approval("pending")}, "s")


def run_as_client(view: ClientView, ours: list[Any], places: Places) -> ch.AsClientHealth:
    seen: list[Any] = []

    async def go() -> ch.AsClientHealth:
        with anyio.fail_after(60):
            return await health_as_client(view, ours, environ={}, places=places,
                                          on_result=seen.append, timeout=5)  # fmt: skip

    report = anyio.run(go)
    report.warnings.append(f"results seen: {[r.name for r in seen]}")
    return report


def test_servers_the_client_does_not_start_are_reported_without_a_probe(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"disabledMcpjsonServers": ["no"]}))
    places = Places(home=home, cwd=tmp_path, system="linux", environ={})
    file = tmp_path / ".mcp.json"
    entries = {
        "wait": ClientEntry("wait", ServerEntry(command="x")),
        "no": ClientEntry("no", ServerEntry(command="x")),
        "off": ClientEntry("off", ServerEntry(command="x", enabled=False)),
        "theirs": ClientEntry("theirs", ServerEntry(command="x", enabled=False)),
    }
    view = ClientView("claude-code", file, entries, warnings=["from the file"])
    settings = tmp_path / ".claude" / "settings.local.json"
    ours = [(n, ServerEntry(command="x"), "external") for n in ("wait", "no", "off", "mine")]
    report = run_as_client(view, ours, places)
    rows = {r.name: r for r in report.rows}
    assert [r.name for r in report.rows] == ["wait", "no", "off", "theirs"]
    assert rows["wait"].verdict == "pending_approval" and rows["wait"].result is None
    assert rows["wait"].reason is not None and rows["wait"].reason.startswith("pending approval: ")
    assert rows["wait"].reason.endswith(f'add "enabledMcpjsonServers": ["wait"] to {settings}')
    assert rows["no"].verdict == "rejected"
    assert rows["no"].reason is not None and rows["no"].reason.startswith(
        "rejected in Claude Code's settings ("
    )
    assert (rows["off"].verdict, rows["off"].differs, rows["off"].reason) == (
        "disabled", True, "disabled in claude-code's config",
    )  # fmt: skip
    assert rows["off"].mcpctl is None and rows["off"].mcpctl_result is None
    assert (rows["theirs"].verdict, rows["theirs"].differs) == ("disabled", False)
    assert report.only_in_mcpctl == ["mine"] and report.only_in_client == ["theirs"]
    assert report.warnings == ["from the file", "results seen: []"]
    assert not report.healthy
    assert (report.target, report.file) == ("claude-code", file)


def test_a_failing_headers_helper_is_the_verdict_and_mcpctl_probes_its_own(tmp_path: Path) -> None:
    places = Places(home=tmp_path / "home", cwd=tmp_path, system="linux", environ={})
    url = "http://127.0.0.1:9/mcp"  # never reached: the client's probe is the helper's failure
    helped = ClientEntry("api", ServerEntry(url=url), headers_helper="echo nope >&2; exit 3")
    off = ClientEntry("off", ServerEntry(url=url, enabled=False), headers_helper="exit 3")
    view = ClientView("claude-code", tmp_path / "claude.json", {"api": helped, "off": off})
    ours = [("api", ServerEntry(command=sys.executable, args=("-c", "pass")), "registry")]
    report = run_as_client(view, ours, places)
    row = report.rows[0]
    assert row.verdict == "unavailable" and row.result is not None
    assert row.result.type == "registry"
    assert row.result.error == ProbeError(
        "headers_helper_failed", "its headers helper failed (exit 3): nope",
        "run the headers helper by hand to see why; the client connects only once it works",
    )  # fmt: skip
    assert row.problems[-1] == ClientProblem(
        "api", "command", "api: its headers helper failed (exit 3): nope"
    )
    assert row.mcpctl_result is not None and row.mcpctl_result is not row.result
    assert row.mcpctl == ch.verdict(row.mcpctl_result) and row.differs is (
        row.mcpctl != "unavailable"
    )
    assert report.rows[1].verdict == "disabled" and report.rows[1].result is None
    assert report.warnings[-1] == "results seen: ['api', 'api']"


# --- the probes asked for, without a server: a recording probe_all -------------------------


class Probes:
    """Stands in for ``probe_all``: records each call (its entries, its options, the
    environment a server would get from it) and answers with the verdicts given."""

    def __init__(self, verdicts: dict[tuple[str, bool], bool]) -> None:
        self.verdicts = verdicts  # (name, as the client?) -> healthy
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, entries: Any, **options: Any) -> list[ProbeResult]:
        from mcpctl.probe.childenv import _STARTED_BY, child_env

        items = list(entries)
        as_client = _STARTED_BY.get() is not None
        self.calls.append({
            "as_client": as_client, "items": items, "options": options,
            "env": child_env(ServerEntry(command="x"), {"PATH": "/bin", "AS_TEST_OURS": "1"}),
        })  # fmt: skip
        results = []
        for name, _, kind in items:
            healthy = self.verdicts[(name, as_client)]
            results.append(ProbeResult(name, kind, available=True, healthy=healthy))
            if options["on_result"] is not None:
                options["on_result"](results[-1])
        return results


def test_the_client_and_mcpctl_each_probe_theirs_with_the_options_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcpctl.probe.eras import EraMemory

    probes = Probes({
        ("same", True): True, ("other", True): True, ("theirs", True): False,
        ("other", False): False,
    })  # fmt: skip
    monkeypatch.setattr(health, "probe_all", probes)
    literal = "MCPCTL_AS_CLIENT_LITERAL_1"
    same = ServerEntry(command="srv", args=("a",))
    view = ClientView("cursor", Path("/p/mcp.json"), {
        "same": ClientEntry("same", same),
        "other": ClientEntry("other", ServerEntry(command="srv", args=("b",),
                                                  env={"T": "${" + literal + "}"}),
                             literals={literal: "as written"}, listed=("HOME",)),
        "theirs": ClientEntry("theirs", ServerEntry(command="srv", args=("c",))),
        "off": ClientEntry("off", ServerEntry(command="srv", enabled=False)),
    }, literals={literal: "as written"})  # fmt: skip
    ours = [("same", same, "internal"), ("other", ServerEntry(command="srv"), "internal")]
    keyring = {"KEPT": "from the keyring"}.get
    eras = EraMemory(Path("/nonexistent/eras.json"))
    seen: list[str] = []

    async def go() -> ch.AsClientHealth:
        return await health_as_client(
            view, ours, secrets=keyring, concurrency=3, timeout=7.5, protocol="legacy",
            eras=eras, on_result=lambda r: seen.append(r.name), environ={"PATH": "/bin"},
        )  # fmt: skip

    report = anyio.run(go)
    by_whom = {call["as_client"]: call for call in probes.calls}
    assert len(probes.calls) == 2 and set(by_whom) == {True, False}
    theirs, mine = by_whom[True], by_whom[False]
    assert theirs["items"] == [
        ("same", view.entries["same"].probe_entry(), "internal"),
        ("other", view.entries["other"].probe_entry(), "internal"),
        ("theirs", view.entries["theirs"].probe_entry(), "external"),
    ]
    assert theirs["items"][1][1].inherit_env == ("HOME",)  # what the file lists to pass
    assert mine["items"] == [("other", ours[1][1], "internal")]  # "same" is probed once
    for call in (theirs, mine):
        options = dict(call["options"])
        assert options.pop("secrets") is not None and options.pop("on_result") is not None
        assert options == {"concurrency": 3, "timeout": 7.5, "protocol": "legacy", "eras": eras}
    # The client's placeholders resolve from its literal texts only, mcpctl's from the keyring.
    assert theirs["options"]["secrets"](literal) == "as written"
    assert theirs["options"]["secrets"]("KEPT") is None
    assert mine["options"]["secrets"]("KEPT") == "from the keyring"
    # Cursor gives a server its whole environment; mcpctl a few variables.
    assert theirs["env"]["AS_TEST_OURS"] == "1" and "AS_TEST_OURS" not in mine["env"]
    assert sorted(seen) == ["other", "other", "same", "theirs"]
    rows = {r.name: r for r in report.rows}
    assert [r.name for r in report.rows] == ["same", "other", "theirs", "off"]
    assert rows["same"].mcpctl_result is rows["same"].result
    assert (rows["same"].verdict, rows["same"].mcpctl, rows["same"].differs) == (
        "healthy", "healthy", False,
    )  # fmt: skip
    assert rows["other"].result is not None and rows["other"].result.healthy
    assert rows["other"].mcpctl_result is not None and not rows["other"].mcpctl_result.healthy
    assert (rows["other"].verdict, rows["other"].mcpctl, rows["other"].differs) == (
        "healthy", "unhealthy", True,
    )  # fmt: skip
    assert (rows["theirs"].verdict, rows["theirs"].mcpctl, rows["theirs"].differs) == (
        "unhealthy", None, False,
    )  # fmt: skip
    assert rows["off"].result is None and rows["off"].verdict == "disabled"
    assert report.only_in_client == ["theirs", "off"] and report.only_in_mcpctl == []
    assert not report.healthy


def test_nothing_to_probe_asks_for_no_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    probes = Probes({})
    monkeypatch.setattr(health, "probe_all", probes)
    view = ClientView("cursor", Path("/p/mcp.json"), {
        "off": ClientEntry("off", ServerEntry(command="srv", enabled=False)),
    })  # fmt: skip
    report = anyio.run(lambda: health_as_client(view, [("off", ServerEntry(command="srv"),
                                                         "external")], environ={}))  # fmt: skip
    assert probes.calls == []
    assert [(r.name, r.verdict, r.differs) for r in report.rows] == [("off", "disabled", True)]


def test_headers_helpers_run_before_the_probes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A helper that works adds its headers to the client's probe; one that fails is the
    client's verdict, and mcpctl probes its own entry of that name (if it starts it)."""
    probes = Probes({("ok", True): True, ("ok", False): True, ("broken", False): True})
    monkeypatch.setattr(health, "probe_all", probes)
    places = Places(home=tmp_path / "home", cwd=tmp_path, system="linux", environ={})
    url = "http://127.0.0.1:9/mcp"
    view = ClientView("claude-code", tmp_path / "claude.json", {
        "ok": ClientEntry("ok", ServerEntry(url=url), headers_helper="echo '{\"X-Key\": \"k1\"}'"),
        "broken": ClientEntry("broken", ServerEntry(url=url), headers_helper="exit 3"),
        "alone": ClientEntry("alone", ServerEntry(url=url), headers_helper="exit 4"),
    })  # fmt: skip
    ours = [("ok", ServerEntry(url=url), "internal"), ("broken", ServerEntry(url=url), "internal")]
    seen: list[str] = []

    async def go() -> ch.AsClientHealth:
        return await health_as_client(view, ours, environ={}, places=places,
                                      on_result=lambda r: seen.append(r.name))  # fmt: skip

    report = anyio.run(go)
    by_whom = {call["as_client"]: call for call in probes.calls}
    [(name, entry, _)] = by_whom[True]["items"]
    assert name == "ok"
    [header] = entry.headers.values()
    assert by_whom[True]["options"]["secrets"](header.removeprefix("${").removesuffix("}")) == "k1"
    # "ok" differs by its headers; not "alone": mcpctl has no such server
    assert [n for n, _, _ in by_whom[False]["items"]] == ["ok", "broken"]
    rows = {r.name: r for r in report.rows}
    for name, kind in (("broken", "internal"), ("alone", "external")):
        got = rows[name].result
        assert got is not None and got.error is not None and got.type == kind
        assert got.error.code == "headers_helper_failed"
    assert rows["broken"].mcpctl == "healthy" and rows["broken"].differs
    assert sorted(seen) == ["alone", "broken", "broken", "ok", "ok"]


def test_a_server_claude_code_approved_is_probed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes = Probes({("ok", True): True, ("ok", False): True})
    monkeypatch.setattr(health, "probe_all", probes)
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"enabledMcpjsonServers": ["ok"], "disabledMcpjsonServers": ["no"]})
    )
    places = Places(home=home, cwd=tmp_path, system="linux", environ={})
    helper = "exit 3"  # a held server's helper fails too: mcpctl has nothing to compare
    view = ClientView("claude-code", tmp_path / ".mcp.json", {
        "ok": ClientEntry("ok", ServerEntry(command="srv", args=("a",))),
        "no": ClientEntry("no", ServerEntry(url="http://127.0.0.1:9/mcp"), headers_helper=helper),
    })  # fmt: skip
    ours = [("ok", ServerEntry(command="srv", args=("b",)), "internal"),
            ("no", ServerEntry(url="http://127.0.0.1:9/mcp"), "internal")]  # fmt: skip
    report = anyio.run(lambda: health_as_client(view, ours, environ={}, places=places))
    assert sorted((c["as_client"], [n for n, _, _ in c["items"]]) for c in probes.calls) == [
        (False, ["ok"]), (True, ["ok"]),
    ]  # fmt: skip
    rows = {r.name: r for r in report.rows}
    assert (rows["ok"].verdict, rows["ok"].mcpctl) == ("healthy", "healthy")
    assert rows["no"].verdict == "rejected" and rows["no"].result is None


def test_what_the_client_passes_besides_is_the_reason_two_verdicts_differ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same command and arguments: Cursor gives the server its whole environment,
    mcpctl a few variables: probed twice, and a different verdict is put down to that."""
    probes = Probes({("s", True): True, ("s", False): False})
    monkeypatch.setattr(health, "probe_all", probes)
    entry = ServerEntry(command=sys.executable, args=("a",))
    view = ClientView("cursor", Path("/p/mcp.json"), {"s": ClientEntry("s", entry)})
    environ = {"PATH": str(Path(sys.executable).parent), "AS_TEST_WHOLE": "x"}
    report = anyio.run(lambda: health_as_client(view, [("s", entry, "internal")], environ=environ))
    assert len(probes.calls) == 2
    [row] = report.rows
    assert row.env_difference == "cursor passes 1 variable mcpctl does not (AS_TEST_WHOLE)"
    assert row.reason is not None and row.reason.startswith(
        "fails for mcpctl, healthy for cursor: "
    )
    assert row.reason.endswith(row.env_difference)


def test_each_side_resolves_its_entry_its_own_way() -> None:
    """A client's variable it cannot resolve, or mcpctl's, is a second probe (each fails its
    own way); the client's texts passed as written and mcpctl's keyring resolve."""
    env = {"PATH": "/bin"}
    empty = ServerEntry(command="sh", env={"A": ""})
    unset = ServerEntry(command="sh", env={"A": "${AS_TEST_UNSET_X}"})
    assert ch._difference("cline", ClientEntry("s", unset), empty, None, env) == (False, None)
    assert ch._difference("cline", ClientEntry("s", empty), unset, None, env) == (False, None)
    literal = "MCPCTL_AS_CLIENT_LITERAL_0"
    written = ClientEntry("s", ServerEntry(command="sh", env={"A": "${" + literal + "}"}),
                          literals={literal: "v"})  # fmt: skip
    plain = ServerEntry(command="sh", env={"A": "v"})
    assert ch._difference("cline", written, plain, None, env) == (True, None)
    keyed = ServerEntry(command="sh", env={"A": "${AS_TEST_KEYED}"})
    keyring = {"AS_TEST_KEYED": "v"}.get
    assert ch._difference("cline", ClientEntry("s", plain), keyed, keyring, env) == (True, None)


def test_rows_are_checked_and_explained_as_the_client_starts_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    probes = Probes({
        ("keyed", True): True, ("missing", True): False, ("fromenv", True): True,
        ("stale", True): False, ("stale", False): True, ("missing", False): False,
    })  # fmt: skip
    monkeypatch.setattr(health, "probe_all", probes)
    missing = ProbeError("missing_variable", "variable AS_TEST_KEPT is not set", "set it")
    real_call = probes.__call__

    async def failing_on_missing(entries: Any, **options: Any) -> list[ProbeResult]:
        results = await real_call(entries, **options)
        return [replace(r, error=missing) if r.name == "missing" else r for r in results]

    monkeypatch.setattr(health, "probe_all", failing_on_missing)
    py = sys.executable
    entries = {
        "keyed": (ServerEntry(command=py, args=("k",), env={"A": "v"}),
                  ServerEntry(command=py, args=("k",), env={"A": "${AS_TEST_KEYED}"})),
        "missing": (ServerEntry(command=py, args=("m",), env={"B": "${AS_TEST_KEPT}"}),
                    ServerEntry(command=py, args=("m",), env={"B": "${AS_TEST_KEPT}"})),
        "fromenv": (ServerEntry(command=py, args=("f",), env={"C": "${AS_TEST_ENVIRON}"}),
                    ServerEntry(command=py, args=("f",), env={"C": "${AS_TEST_ENVIRON}"})),
        "stale": (ServerEntry(command=py, args=("old",)), ServerEntry(command=py, args=("new",))),
    }  # fmt: skip
    view = ClientView("cline", Path("/p/cline_mcp_settings.json"),
                      {n: ClientEntry(n, theirs) for n, (theirs, _) in entries.items()})  # fmt: skip
    ours = [(n, mine, "external") for n, (_, mine) in entries.items()]
    keyring = {"AS_TEST_KEYED": "v", "AS_TEST_KEPT": "k"}.get
    environ = {"PATH": str(Path(py).parent), "AS_TEST_ENVIRON": "e"}
    report = anyio.run(lambda: health_as_client(view, ours, secrets=keyring, environ=environ))
    by_whom = {call["as_client"]: call for call in probes.calls}
    # Cline gives a server a few variables, as mcpctl does: "keyed" and "fromenv" start the
    # same both ways (mcpctl's keyring gives what the client's file says): probed once.
    assert "AS_TEST_OURS" not in by_whom[True]["env"]
    assert [n for n, _, _ in by_whom[False]["items"]] == ["missing", "stale"]
    rows = {r.name: r for r in report.rows}
    assert rows["keyed"].problems == [] and rows["fromenv"].problems == []
    assert [(p.kind, p.variable) for p in rows["missing"].problems] == [("keyring", "AS_TEST_KEPT")]
    got = rows["missing"].result
    assert got is not None and got.error is not None
    assert (
        got.error.message == "variable AS_TEST_KEPT is not set in the environment cline starts from"
    )
    assert rows["stale"].reason == (
        "healthy for mcpctl, fails for cline: cline's entry is not mcpctl's; update it with: "
        "mcpctl render cline --install"
    )


def test_the_environment_is_the_processs_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    probes = Probes({("s", True): True, ("s", False): True})
    monkeypatch.setattr(health, "probe_all", probes)
    monkeypatch.setenv("AS_TEST_FROM_OS", "x")
    entry = ServerEntry(command=sys.executable, env={"A": "${AS_TEST_FROM_OS}"})
    view = ClientView("cline", Path("/p/cline_mcp_settings.json"), {"s": ClientEntry("s", entry)})
    report = anyio.run(lambda: health_as_client(view, [("s", entry, "external")]))
    [row] = report.rows
    assert (row.verdict, row.mcpctl, row.problems) == ("healthy", "healthy", [])


def test_claude_codes_settings_that_cannot_be_read_are_warned_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health, "probe_all", Probes({}))
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text("{not json")
    places = Places(home=home, cwd=tmp_path, system="linux", environ={})
    view = ClientView("claude-code", tmp_path / ".mcp.json",
                      {"s": ClientEntry("s", ServerEntry(command="x"))})  # fmt: skip
    report = anyio.run(lambda: health_as_client(view, [], environ={}, places=places))
    assert any("settings.json" in w for w in report.warnings), report.warnings
    assert report.rows[0].verdict == "pending_approval"


def test_a_server_of_mcpctls_waiting_for_approval_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The client's entry of that name is another: mcpctl's, held, is not compared either."""
    from mcpctl.config import trustguard
    from mcpctl.config.trustrecord import entry_digest
    from mcpctl.errors import UntrustedConfigError

    monkeypatch.setattr(health, "probe_all", Probes({}))
    ours = ServerEntry(command=sys.executable, args=("mine",))
    refusal = UntrustedConfigError("s waits for approval", path="/p/.mcpctl.json", names=["s"])
    monkeypatch.setattr(trustguard, "HELD", {("s", entry_digest(ours.to_data())): refusal})
    theirs = ClientEntry("s", ServerEntry(command=sys.executable, args=("theirs",)))
    view = ClientView("cline", Path("/p/cline_mcp_settings.json"), {"s": theirs})
    with pytest.raises(UntrustedConfigError) as caught:
        anyio.run(lambda: health_as_client(view, [("s", ours, "external")], environ={}))
    assert caught.value.names == ("s",)
