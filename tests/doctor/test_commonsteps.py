"""The steps every server has in ``mcpctl doctor NAME`` -- ``config``, ``placeholders``,
``protocol``, ``lists`` -- each run on its own, from an entry and a probe's result made here
(no server is started): their words, their fixes, and that no secret reaches them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpctl.auth.secrets import SecretStore
from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.doctor.commonsteps import CommonSteps
from mcpctl.doctor.steps import StepDone
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.eras import Era
from mcpctl.probe.healthstatus import ProbeResult
from tests.conftest import MemoryKeyring
from tests.doctor.stepruns import done, failed, prepared

SECRET = "commonsteps-canary-51f2"


def steps(entry: ServerEntry, *, store: SecretStore | None = None, name: str = "demo") -> Any:
    return prepared(CommonSteps, entry, store=store, name=name, path=Path("/etc/mcp/servers.json"))


STDIO = ServerEntry(command="/bin/true")


# --- config -----------------------------------------------------------------------------------


def test_a_valid_enabled_entry_says_where_it_was_found() -> None:
    run = steps(STDIO)
    assert done(lambda: run._config([])) == StepDone(
        "found in /etc/mcp/servers.json, valid, enabled"
    )
    got = done(lambda: run._config(["warning: demo.x: one", "warning: demo.y: two"]))
    assert got.detail == (
        "found in /etc/mcp/servers.json, valid, enabled; 2 warnings: warning: demo.x: one"
    )
    got = done(lambda: run._config(["warning: demo.x: one"]))
    assert got.detail.endswith("; 1 warning: warning: demo.x: one")


def test_an_entry_that_is_not_valid_names_its_first_problem_and_how_many_more() -> None:
    run = steps(STDIO)
    run.unusable = ["demo.command: not a string"]
    exc = failed(lambda: run._config([]))
    assert exc.detail == "the entry 'demo' is not valid: demo.command: not a string"
    assert exc.fix == "run 'mcpctl validate' to see each problem with its line and a hint"
    run.unusable = ["demo.command: a", "demo.args: b", "demo.env: c"]
    exc = failed(lambda: run._config([]))
    assert exc.detail == "the entry 'demo' is not valid: demo.command: a (and 2 more)"
    run.unusable = ["demo.command: a", "demo.args: b"]
    assert failed(lambda: run._config([])).detail.endswith("demo.command: a (and 1 more)")


def test_a_disabled_entry_says_how_to_enable_it() -> None:
    run = steps(ServerEntry(command="/bin/true", enabled=False))
    exc = failed(lambda: run._config([]))
    assert (exc.detail, exc.fix) == ("demo is disabled", "enable it: 'mcpctl enable demo'")


def test_an_entry_no_process_can_be_given_says_which_field() -> None:
    run = steps(ServerEntry(command="/bin/true", args=("a\x00b",)))
    exc = failed(lambda: run._config([]))
    assert exc.detail.startswith("the entry 'demo' cannot be started: args[0] holds ")
    assert exc.fix == "run 'mcpctl validate' to see each problem with its line and a hint"


# --- placeholders -----------------------------------------------------------------------------


def test_an_entry_without_placeholders(no_keyring: None) -> None:
    run = steps(STDIO)
    assert done(run._placeholders) == StepDone("no ${VAR} placeholder")
    assert run.resolved is not None and run.keyring is None  # the keyring was not asked


def test_where_each_value_comes_from_never_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CS_FROM_ENV", SECRET)
    monkeypatch.setenv("CS_EMPTY", "")
    monkeypatch.delenv("CS_IN_KEYRING", raising=False)
    monkeypatch.delenv("CS_DEFAULTED", raising=False)
    store = SecretStore(MemoryKeyring())
    store.set("CS_IN_KEYRING", SECRET + "-k")
    env = {"A": "${CS_FROM_ENV}", "B": "${CS_EMPTY}", "C": "${CS_IN_KEYRING}",
           "D": "${CS_DEFAULTED:-x}"}  # fmt: skip
    run = steps(ServerEntry(command="/bin/true", env=env), store=store)
    got = done(run._placeholders)
    assert got.detail == (
        "CS_FROM_ENV: environment; CS_EMPTY: environment (empty); CS_IN_KEYRING: keyring; "
        "CS_DEFAULTED: default"
    )
    assert run.resolved is not None
    assert dict(run.resolved.entry.env) == {"A": SECRET, "B": "", "C": SECRET + "-k", "D": "x"}
    assert run.secrets is not None
    # what the steps say is redacted with the values resolved
    assert SECRET not in run._safe(f"it printed {SECRET} and {SECRET}-k")


def test_values_all_in_the_environment_leave_the_keyring_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CS_FROM_ENV", "v")
    backend = MemoryKeyring()
    run = steps(ServerEntry(command="/bin/true", env={"A": "${CS_FROM_ENV}"}),
                store=SecretStore(backend))  # fmt: skip
    assert done(run._placeholders).detail == "CS_FROM_ENV: environment"
    assert run.keyring is None and run.secrets is None


def test_a_missing_value_says_where_it_was_looked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CS_MISSING", raising=False)
    monkeypatch.delenv("CS_MISSING_TOO", raising=False)
    env = {"A": "${CS_MISSING}", "B": "${CS_MISSING_TOO}"}
    run = steps(ServerEntry(command="/bin/true", env=env), store=SecretStore(MemoryKeyring()))
    exc = failed(run._placeholders)
    assert exc.detail == (
        "CS_MISSING: missing; CS_MISSING_TOO: missing -- CS_MISSING, CS_MISSING_TOO not set in "
        "the environment or the keyring, and no default"
    )
    assert exc.fix == "store it with 'mcpctl secret set CS_MISSING', or export CS_MISSING=..."


def test_a_missing_value_with_no_keyring_says_why(
    no_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CS_MISSING", raising=False)
    run = steps(ServerEntry(command="/bin/true", env={"A": "${CS_MISSING}"}))
    exc = failed(run._placeholders)
    assert run.keyring is not None and run.keyring.problem
    assert exc.detail == (
        "CS_MISSING: missing -- CS_MISSING not set in the environment (the keyring is "
        f"unusable: {run.keyring.problem}), and no default"
    )
    assert run.secrets is None


def test_a_sign_in_needs_the_keyring_even_without_placeholders() -> None:
    backend = MemoryKeyring()
    entry = ServerEntry(url="https://mcp.example/mcp", auth=AuthConfig(type="oauth"))
    run = steps(entry, store=SecretStore(backend))
    assert done(run._placeholders).detail == "no ${VAR} placeholder"
    assert run.keyring is not None and run.keyring.usable
    assert run.secrets is not None
    plain = steps(ServerEntry(url="https://mcp.example/mcp"), store=SecretStore(backend))
    done(plain._placeholders)
    assert plain.keyring is None


def test_a_value_that_cannot_be_resolved_is_the_step_s_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CS_BAD", raising=False)
    store = SecretStore(MemoryKeyring())
    store.set("CS_BAD", "a\x00b")  # no process can be given it
    run = steps(ServerEntry(command="/bin/true", args=("${CS_BAD}",)), store=store)
    exc = failed(run._placeholders)
    assert exc.detail.startswith("args[0] holds ")
    assert exc.detail.endswith("(in server 'demo')")
    assert run.resolved is None


# --- protocol ---------------------------------------------------------------------------------


def result(**fields: Any) -> ProbeResult:
    return ProbeResult(name="demo", **fields)


def test_the_protocol_spoken_and_by_whom() -> None:
    run = steps(STDIO)
    run.result = result(
        available=True, transport="stdio", era=Era("legacy", "2025-11-25"),
        server_name="demo-server", server_version="1.2",
        latency_ms={"connect": 10.0, "initialize": 5.5, "discover": 100.0},
    )  # fmt: skip
    got = done(run._protocol)
    assert got == StepDone(
        "MCP 2025-11-25 (initialize handshake) over stdio; server demo-server 1.2", 15.5
    )
    run.result = result(
        available=True, transport="streamable-http", era=Era("modern", "2026-07-28"),
        server_version="9", latency_ms={"discover": 7.0, "initialize": 100.0},
    )  # fmt: skip
    assert done(run._protocol) == StepDone(
        "MCP 2026-07-28 (stateless era, server/discover) over streamable-http; server 9", 7.0
    )
    run.result = result(available=True, transport="sse", era=Era("modern", "2026-07-28"))
    assert done(run._protocol) == StepDone(
        "MCP 2026-07-28 (stateless era, server/discover) over sse", 0.0
    )


def test_a_probe_that_failed_is_the_protocol_step_s_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CS_ONLY_HERE", "1")
    run = steps(STDIO)
    done(run._placeholders)
    run.result = result(
        error=ProbeError("server_exited", "exited (status 1)", "run it by hand"),
        latency_ms={"total": 42.0},
    )
    exc = failed(run._protocol)
    assert (exc.detail, exc.fix, exc.ms) == (
        "server_exited: exited (status 1)",
        "run it by hand",
        42.0,
    )
    # what it wrote on stderr names a variable of ours it did not get
    run.result = result(
        error=ProbeError("server_exited", "exited (status 1)", "run it by hand"),
        stderr=["CS_ONLY_HERE is not set"],
    )
    exc = failed(run._protocol)
    assert exc.detail.startswith("server_exited: exited (status 1); it started without ")
    assert "CS_ONLY_HERE" in exc.detail and exc.fix != "run it by hand"
    assert exc.ms is None


# --- lists ------------------------------------------------------------------------------------


def test_what_the_server_lists_and_how_long_it_took() -> None:
    run = steps(STDIO)
    run.result = result(
        available=True, healthy=True, capabilities=["tools", "resources"], tool_count=3,
        resource_count=1, prompt_count=5,
        latency_ms={"list_tools": 1.0, "list_prompts": 2.0, "list_resources": 4.0, "ping": 8.0,
                    "connect": 100.0},
    )  # fmt: skip
    assert done(run._lists) == StepDone("3 tools, no prompts offered, 1 resource", 15.0)
    run.result = result(
        available=True, healthy=True, capabilities=["tools", "prompts", "resources"],
        tool_count=1, warnings=["a tool without a name dropped", "another"],
    )  # fmt: skip
    assert done(run._lists) == StepDone(
        "1 tool, 0 prompts, 0 resources; mcpctl repaired its tool list "
        "(a tool without a name dropped)",
        0.0,
    )


def test_a_list_that_failed_is_the_lists_step_s_failure() -> None:
    run = steps(STDIO)
    run.result = result(
        available=True, capabilities=["tools", "prompts"], tool_count=2,
        degraded=["slow: 3 s", "prompts/list failed: boom", "resources/list failed: x"],
        latency_ms={"list_tools": 1.0, "list_prompts": 2.0},
    )  # fmt: skip
    exc = failed(run._lists)
    assert (exc.detail, exc.ms) == ("prompts/list failed: boom", 3.0)
    assert exc.fix == "the server answered, but could not list; its logs may say why"
    run.result = result(
        available=True, capabilities=["tools"], latency_ms={"ping": 1.5},
        error=ProbeError("list_failed", "tools/list failed: nope", "see its logs"),
    )  # fmt: skip
    exc = failed(run._lists)
    assert (exc.detail, exc.fix, exc.ms) == (
        "list_failed: tools/list failed: nope",
        "see its logs",
        1.5,
    )
    run.result = result(available=True, capabilities=["tools"], degraded=["slow: 3 s"])
    assert done(run._lists).detail == "0 tools, no prompts offered, no resources offered"


def test_a_secret_is_hidden_before_any_value_is_resolved() -> None:
    run = steps(STDIO)
    assert run._safe("plain words") == "plain words"
    shown = run._safe("token ghp_" + "a" * 36)
    assert "a" * 36 not in shown


class LocksAfterOneRead(MemoryKeyring):
    """Answers the first read of each secret, then fails (it was locked meanwhile)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: dict[str, int] = {}

    def get_password(self, service: str, username: str) -> str | None:
        if username.startswith("secret:"):
            self.reads[username] = self.reads.get(username, 0) + 1
            if self.reads[username] > 1:
                raise OSError("the collection is locked")
        return super().get_password(service, username)


def test_a_keyring_that_fails_while_resolving_is_the_step_s_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CS_LOCKED", raising=False)
    backend = LocksAfterOneRead()
    store = SecretStore(backend)
    store.set("CS_LOCKED", SECRET)
    run = steps(ServerEntry(command="/bin/true", env={"A": "${CS_LOCKED}"}), store=store)
    exc = failed(run._placeholders)
    assert exc.detail.startswith(
        "variable CS_LOCKED is not in the environment, and the keyring that may hold it "
        "could not be asked: "
    )
    assert exc.fix is not None and exc.fix.startswith(
        "export CS_LOCKED=... in the environment that starts mcpctl, or reach the keyring"
    )
    assert run.resolved is None and SECRET not in exc.detail
