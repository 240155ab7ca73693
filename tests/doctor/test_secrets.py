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
