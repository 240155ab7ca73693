"""The keyring check, and where each placeholder resolves from (never its value)."""

from __future__ import annotations

import json

import pytest

from mcpctl.auth.secrets import SecretStore
from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.doctor.findings import Finding
from mcpctl.doctor.secrets import (
    KeyringState,
    check_placeholders,
    keyring_finding,
    placeholder_uses,
    probe_keyring,
)
from tests.conftest import MemoryKeyring

ENV_VALUE = "env-canary-4f1d2b9e"
KEYRING_VALUE = "keyring-canary-8a7c3e21"


def placeholders(
    entries: dict[str, ServerEntry], keyring: KeyringState
) -> tuple[dict[str, Finding], list[str]]:
    findings, needs = check_placeholders(entries, keyring)
    return {f.subject or f.code: f for f in findings}, needs


def test_each_source_env_keyring_default_missing(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FROM_ENV", ENV_VALUE)
    monkeypatch.delenv("NOWHERE", raising=False)
    monkeypatch.delenv("LOG_LEVEL", raising=False)
    SecretStore().set("FROM_KEYRING", KEYRING_VALUE)
    entries = {
        "a": ServerEntry(command="npx", env={"A": "${FROM_ENV}", "B": "${FROM_KEYRING}"}),
        "b": ServerEntry(command="uvx", args=("--level", "${LOG_LEVEL:-info}", "${NOWHERE}")),
    }
    state = probe_keyring()
    found, needs = placeholders(entries, state)
    assert needs == []
    assert {n: (f.code, f.severity, f.details["source"]) for n, f in found.items()} == {
        "FROM_ENV": ("placeholder_env", "ok", "environment"),
        "FROM_KEYRING": ("placeholder_keyring", "ok", "keyring"),
        "LOG_LEVEL": ("placeholder_default", "info", "default"),
        "NOWHERE": ("placeholder_missing", "error", "missing"),
    }
    assert (
        found["NOWHERE"].fix == "store it with 'mcpctl secret set NOWHERE', or export NOWHERE=..."
    )
    assert found["NOWHERE"].servers == ("b",) and found["FROM_ENV"].servers == ("a",)
    assert (
        found["LOG_LEVEL"].fix is not None
        and "mcpctl secret set LOG_LEVEL" in found["LOG_LEVEL"].fix
    )
    text = json.dumps([f.to_dict() for f in found.values()])
    assert ENV_VALUE not in text and KEYRING_VALUE not in text


def test_the_environment_wins_over_the_keyring(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN", ENV_VALUE)
    SecretStore().set("TOKEN", KEYRING_VALUE)
    found, _ = placeholders({"a": ServerEntry(command="x", env={"T": "${TOKEN}"})}, probe_keyring())
    assert found["TOKEN"].code == "placeholder_env"


def test_an_empty_environment_variable_is_a_warning(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN", "")
    found, _ = placeholders({"a": ServerEntry(command="x", env={"T": "${TOKEN}"})}, probe_keyring())
    assert (found["TOKEN"].code, found["TOKEN"].severity) == ("placeholder_empty", "warning")


def test_a_default_in_one_entry_does_not_cover_another(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REGION", raising=False)
    entries = {
        "with": ServerEntry(command="x", env={"R": "${REGION:-eu}"}),
        "without": ServerEntry(command="x", env={"R": "${REGION}"}),
    }
    found, _ = placeholders(entries, probe_keyring())
    assert found["REGION"].code == "placeholder_missing"
    assert found["REGION"].servers == ("without",)
    assert "a default covers the others" in found["REGION"].message


def test_every_expanded_field_is_seen_and_disabled_entries_are_not() -> None:
    entries = {
        "web": ServerEntry(
            url="https://${HOST}/mcp",
            headers={"X-Key": "${HEADER_KEY}"},
            auth=AuthConfig(type="basic", username="${USER_NAME}", password="${PASSWORD}"),
        ),
        "cli": ServerEntry(command="${BIN}", args=("${ARG}",), cwd="${DIR}", env={"E": "${ENV_V}"}),
        "off": ServerEntry(command="x", env={"T": "${DISABLED_ONLY}"}, enabled=False),
    }
    assert list(placeholder_uses(entries)) == [
        "HOST", "HEADER_KEY", "USER_NAME", "PASSWORD", "BIN", "ARG", "ENV_V", "DIR",
    ]  # fmt: skip


def test_no_placeholders(memory_keyring: MemoryKeyring) -> None:
    findings, _ = check_placeholders({"a": ServerEntry(command="x")}, probe_keyring())
    assert [(f.code, f.severity) for f in findings] == [("placeholders_none", "ok")]


def test_a_usable_keyring_is_probed_without_writing(memory_keyring: MemoryKeyring) -> None:
    state = probe_keyring()
    assert state.usable and state.backend == "memory (tests)"
    assert memory_keyring.items == {}
    finding = keyring_finding(state, [], [])
    assert (finding.code, finding.severity) == ("keyring_ok", "ok")
    assert "memory (tests)" in finding.message


def test_no_keyring_is_a_warning_until_something_needs_it(
    no_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOKEN", raising=False)
    monkeypatch.delenv("LEVEL", raising=False)
    state = probe_keyring()
    assert not state.usable and state.problem is not None
    finding = keyring_finding(state, [], [])
    assert (finding.code, finding.severity) == ("keyring_unavailable", "warning")
    assert finding.fix is not None and "PYTHON_KEYRING_BACKEND" in finding.fix
    # A default still works without a keyring: nothing needs it.
    found, needs = placeholders({"a": ServerEntry(command="x", env={"L": "${LEVEL:-1}"})}, state)
    assert needs == [] and found["LEVEL"].code == "placeholder_default"
    # A placeholder with no other source does.
    found, needs = placeholders({"a": ServerEntry(command="x", env={"T": "${TOKEN}"})}, state)
    assert needs == ["TOKEN"]
    assert found["TOKEN"].fix == "export TOKEN=... (no usable keyring)"
    broken = keyring_finding(state, needs, ["docs"])
    assert (broken.code, broken.severity) == ("keyring_unavailable", "error")
    assert "needed by placeholder TOKEN and the OAuth sign-in of docs" in broken.message


class FlakyKeyring(MemoryKeyring):
    """Answers the probe, then fails on every secret."""

    def get_password(self, service: str, username: str) -> str | None:
        if username.startswith("secret:"):
            from keyring.errors import KeyringError

            raise KeyringError("the collection is locked")
        return super().get_password(service, username)


def test_a_keyring_that_fails_after_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKEN", raising=False)
    state = probe_keyring(SecretStore(FlakyKeyring()))
    assert state.usable
    found, needs = placeholders({"a": ServerEntry(command="x", env={"T": "${TOKEN}"})}, state)
    assert not state.usable and "the collection is locked" in (state.problem or "")
    assert found["TOKEN"].code == "placeholder_missing"
    assert keyring_finding(state, needs, []).severity == "error"


# --- what mutation testing found unpinned ----------------------------------------------------


def test_each_placeholder_finding_whole(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FROM_ENV", ENV_VALUE)
    monkeypatch.setenv("EMPTY_ONE", "")
    monkeypatch.delenv("FROM_KEYRING", raising=False)
    monkeypatch.delenv("LEVEL", raising=False)
    monkeypatch.delenv("NOWHERE", raising=False)
    SecretStore().set("FROM_KEYRING", KEYRING_VALUE)
    entries = {
        "a": ServerEntry(command="x", env={"A": "${FROM_ENV}", "B": "${FROM_KEYRING}",
                                           "C": "${EMPTY_ONE}", "D": "${NOWHERE}"}),
        "b": ServerEntry(command="x", args=("${LEVEL:-1}", "${FROM_ENV}", "${NOWHERE}")),
        "c": ServerEntry(command="x", env={"N": "${NOWHERE:-n}"}),
    }  # fmt: skip
    found, needs = placeholders(entries, probe_keyring())
    assert needs == []
    assert found["FROM_ENV"] == Finding(
        "placeholders", "placeholder_env", "ok", "FROM_ENV: from the environment; used by a and b",
        subject="FROM_ENV", servers=("a", "b"),
        details={"variable": "FROM_ENV", "source": "environment"},
    )  # fmt: skip
    assert found["FROM_KEYRING"] == Finding(
        "placeholders", "placeholder_keyring", "ok", "FROM_KEYRING: from the keyring; used by a",
        subject="FROM_KEYRING", servers=("a",),
        details={"variable": "FROM_KEYRING", "source": "keyring"},
    )  # fmt: skip
    assert found["EMPTY_ONE"] == Finding(
        "placeholders", "placeholder_empty", "warning",
        "EMPTY_ONE: set in the environment, but empty; used by a",
        fix="export EMPTY_ONE with its value, or unset it to use the keyring or the default",
        subject="EMPTY_ONE", servers=("a",),
        details={"variable": "EMPTY_ONE", "source": "environment"},
    )  # fmt: skip
    assert found["LEVEL"] == Finding(
        "placeholders", "placeholder_default", "info",
        "LEVEL: not set; the default written in the config is used; used by b",
        fix="to set it: 'mcpctl secret set LEVEL', or export LEVEL=...",
        subject="LEVEL", servers=("b",), details={"variable": "LEVEL", "source": "default"},
    )  # fmt: skip
    assert found["NOWHERE"] == Finding(
        "placeholders", "placeholder_missing", "error",
        "NOWHERE: not set in the environment or the keyring, and no default; needed by a and b "
        "(a default covers the others)",
        fix="store it with 'mcpctl secret set NOWHERE', or export NOWHERE=...",
        subject="NOWHERE", servers=("a", "b"),
        details={"variable": "NOWHERE", "source": "missing"},
    )  # fmt: skip
    assert list(found) == ["FROM_ENV", "FROM_KEYRING", "EMPTY_ONE", "NOWHERE", "LEVEL"]


def test_a_missing_placeholder_without_a_keyring_whole(
    no_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOWHERE", raising=False)
    state = probe_keyring()
    found, needs = placeholders({"a": ServerEntry(command="x", env={"T": "${NOWHERE}"})}, state)
    assert needs == ["NOWHERE"]
    assert found["NOWHERE"] == Finding(
        "placeholders", "placeholder_missing", "error",
        "NOWHERE: not set in the environment, and no default; needed by a",
        fix="export NOWHERE=... (no usable keyring)",
        subject="NOWHERE", servers=("a",),
        details={"variable": "NOWHERE", "source": "missing"},
    )  # fmt: skip


def test_no_placeholders_whole(memory_keyring: MemoryKeyring) -> None:
    off = ServerEntry(command="x", env={"T": "${ONLY_OFF}"}, enabled=False)
    findings, needs = check_placeholders(
        {"a": ServerEntry(command="x"), "off": off}, probe_keyring()
    )
    assert findings == [
        Finding("placeholders", "placeholders_none", "ok",
                "no ${VAR} placeholder in the enabled servers")
    ]  # fmt: skip
    assert needs == []


def test_each_use_is_counted_once_per_server() -> None:
    entries = {
        "a": ServerEntry(command="${X}", args=("${X}", "${X:-d}"), env={"E": "${X}"}),
        "b": ServerEntry(command="y", args=("${X:-d}", "${X:-e}")),
        "c": ServerEntry(
            url="https://h/mcp",
            auth=AuthConfig(type="oauth", client_id="${CID}", client_secret="${CSECRET}"),
        ),
        "d": ServerEntry(url="https://h/mcp", auth=AuthConfig(type="bearer", token="${TOK}")),
        "e": ServerEntry(
            url="https://h/mcp", auth=AuthConfig(type="header", name="X-K", value="${HVAL}")
        ),
        "plain": ServerEntry(command="no placeholder here $X {X}"),
    }
    uses = placeholder_uses(entries)
    assert list(uses) == ["X", "CID", "CSECRET", "TOK", "HVAL"]
    assert uses["X"].servers == ["a", "b"] and uses["X"].without_default == ["a"]
    assert uses["CID"].servers == ["c"] and uses["CID"].without_default == ["c"]


def test_the_keyring_s_findings_whole(no_keyring: None) -> None:
    state = KeyringState(SecretStore(MemoryKeyring()), "memory (tests)")
    assert keyring_finding(state, ["X"], ["docs"]) == Finding(
        "keyring", "keyring_ok", "ok", "memory (tests): usable (a test read worked)",
        subject="memory (tests)", details={"backend": "memory (tests)", "usable": True},
    )  # fmt: skip
    down = KeyringState(None, "SecretService Keyring", "it is locked", "unlock it")
    assert keyring_finding(down, [], []) == Finding(
        "keyring", "keyring_unavailable", "warning",
        "SecretService Keyring: it is locked; nothing needs it now", fix="unlock it",
        subject="SecretService Keyring",
        details={"backend": "SecretService Keyring", "usable": False},
    )  # fmt: skip
    none = KeyringState(None, None, "no backend")
    finding = keyring_finding(none, ["A", "B"], [])
    assert finding.message == "no backend; needed by placeholders A and B"
    assert finding.fix == "set the values as environment variables instead"
    assert finding.severity == "error" and finding.subject is None
    assert keyring_finding(none, [], ["x", "y"]).message == (
        "no backend; needed by the OAuth sign-in of x and y"
    )
    assert keyring_finding(none, ["A"], []).message == "no backend; needed by placeholder A"


def test_what_a_keyring_that_fails_says(no_keyring: None) -> None:
    state = probe_keyring()
    assert state.store is None and state.backend is None
    assert state.problem and state.hint and "PYTHON_KEYRING_BACKEND" in state.hint
    usable = probe_keyring(SecretStore(MemoryKeyring()))
    assert usable.usable and usable.backend == "memory (tests)"
    assert usable.problem is None and usable.hint is None
    flaky = KeyringState(SecretStore(MemoryKeyring()), "b", None, "kept")
    flaky.broke(ValueError("bad"))
    assert (flaky.store, flaky.problem, flaky.hint) == (
        None,
        "the keyring failed: ValueError: bad",
        "kept",
    )
    flaky.broke(ValueError())
    assert flaky.problem == "the keyring failed: ValueError"
    from mcpctl.errors import KeyringUnavailableError

    flaky.broke(KeyringUnavailableError("gone", hint="look"))
    assert (flaky.problem, flaky.hint) == ("gone", "look")


class BrokenBackend(MemoryKeyring):
    """Chosen, but fails on every read."""

    def get_password(self, service: str, username: str) -> str | None:
        raise OSError("the bus is gone")


def test_a_keyring_that_fails_its_probe_read(no_keyring: None) -> None:
    state = probe_keyring(SecretStore(BrokenBackend()))
    assert not state.usable
    assert state.backend == "memory (tests)"
    assert state.problem is not None and "the bus is gone" in state.problem


def test_a_disabled_entry_before_others_hides_nothing_of_theirs() -> None:
    entries = {
        "off": ServerEntry(command="x", env={"T": "${OFF_ONLY}"}, enabled=False),
        "on": ServerEntry(command="x", env={"T": "${ON_ONE}"}),
    }
    assert list(placeholder_uses(entries)) == ["ON_ONE"]


def test_a_keyring_failure_s_words_are_kept_whole() -> None:
    state = KeyringState(SecretStore(MemoryKeyring()), "b")
    state.broke(OSError("no bus at DBX"))
    assert state.problem == "the keyring failed: OSError: no bus at DBX"
