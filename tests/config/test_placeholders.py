"""Placeholder parsing, resolution policies, redaction and secret detection."""

from __future__ import annotations

import pytest

from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.config.placeholders import (
    REDACTED,
    find_placeholders,
    near_misses,
    resolve_entry,
    resolve_text,
)
from mcpctl.config.redaction import looks_like_secret, redact_entry_data, redact_literal
from mcpctl.errors import PlaceholderError


def test_find_placeholders() -> None:
    found = find_placeholders("a-${FOO}-${BAR_2:-x y}-${lower}-$PLAIN-${A:-}")
    assert [(p.name, p.default) for p in found] == [("FOO", None), ("BAR_2", "x y"), ("A", "")]


def test_near_misses() -> None:
    assert near_misses("${OK} $HOME ${lower} ${Mixed_Case}") == [
        "$HOME",
        "${lower}",
        "${Mixed_Case}",
    ]
    assert near_misses("${OK:-d}") == []


def test_resolution_order_env_then_secrets_then_default() -> None:
    env = {"A": "from-env"}
    secrets = {"A": "from-keyring", "B": "from-keyring"}.get
    assert (
        resolve_text("${A}|${B}|${C:-dflt}", environ=env, secrets=secrets)
        == "from-env|from-keyring|dflt"
    )
    assert resolve_text("prefix-${A}-suffix", environ=env) == "prefix-from-env-suffix"
    assert resolve_text("${A:-}", environ={}) == ""


def test_missing_value_policies() -> None:
    entry = ServerEntry(command="x", env={"TOKEN": "${MISSING}", "OK": "${PRESENT}"})
    env = {"PRESENT": "yes"}
    empty = resolve_entry("s", entry, policy="empty", environ=env)
    assert empty is not None and empty.entry.env == {"TOKEN": "", "OK": "yes"}
    assert empty.warnings == ("variable MISSING is not set (in server 's'); using an empty string",)
    assert resolve_entry("s", entry, policy="skip", environ=env) is None
    with pytest.raises(PlaceholderError) as info:
        resolve_entry("s", entry, policy="error", environ=env)
    assert info.value.variable == "MISSING" and info.value.exit_code == 2


def test_resolve_entry_covers_every_field_and_redacts() -> None:
    entry = ServerEntry(
        url="https://${HOST}/mcp", headers={"Authorization": "Bearer ${TOKEN}"},
        auth=AuthConfig(type="basic", username="${USER_NAME}", password="${PASSWORD}"),
    )  # fmt: skip
    env = {
        "HOST": "h.example",
        "TOKEN": "s3cr3t-token-value",
        "USER_NAME": "me",
        "PASSWORD": "hunter22",
    }
    resolved = resolve_entry("r", entry, environ=env)
    assert resolved is not None
    assert resolved.entry.url == "https://h.example/mcp"
    assert resolved.entry.headers["Authorization"] == "Bearer s3cr3t-token-value"
    assert resolved.entry.auth is not None and resolved.entry.auth.password == "hunter22"
    assert (
        resolved.redact("sent Bearer s3cr3t-token-value as hunter22")
        == f"sent Bearer {REDACTED} as {REDACTED}"
    )
    # The original is untouched: placeholders stay for display.
    assert entry.headers["Authorization"] == "Bearer ${TOKEN}"


@pytest.mark.parametrize(
    "value",
    [
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "github_pat_11ABCDEFG0123456789_abcdefghijkl",
        "sk-proj-abcdefghijklmnop1234", "sk_live_51Habcdefghijklmnop", "phx_abcdefghijklmnopqrstuv12",
        "xoxb-123456789012-1234567890123-abcdefghijklmnop", "AKIAIOSFODNN7EXAMPLE",
        "Bearer abcdefghijklmnop", "Basic dXNlcjpwYXNzd29yZA==",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "a8Kd93jf0QpZ7mX2vB5nL1cR4tY6wE9u", "--api-key=glpat-abcdefghij1234567890",
    ],
)  # fmt: skip
def test_secrets_are_recognised(value: str) -> None:
    assert looks_like_secret(value)
    assert REDACTED in redact_literal(value)


@pytest.mark.parametrize(
    "value",
    [
        "${GITHUB_TOKEN}", "Bearer ${TOKEN}", "https://us.posthog.com/api/v1/projects", "production",
        "/home/user/projects/my-mcp-server/dist/index.js", "@modelcontextprotocol/server-filesystem",
        "mcp-server-time==2025.9.25", "--local-timezone=Europe/Amsterdam", "12345678901234567890",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "io.github.modelcontextprotocol/server-everything",
    ],
)  # fmt: skip
def test_ordinary_values_are_not_secrets(value: str) -> None:
    assert not looks_like_secret(value)
    assert redact_literal(value) == value


def test_redact_entry_data() -> None:
    data = {
        "command": "npx",
        "args": ["--token=ghp_16C7e42F292c6912E7710c838347Ae178B4a", "plain"],
        "env": {"DB_PASSWORD": "hunter2", "SESSION_KEY": "${SESSION_KEY}", "HOST": "db.local"},
        "headers": {"Cookie": "abc", "X-Trace": "on"},
        "auth": {"type": "basic", "username": "me", "password": "short"},
    }
    out = redact_entry_data(data)
    assert out["args"] == ["--token=****", "plain"]
    assert out["env"] == {
        "DB_PASSWORD": "****",
        "SESSION_KEY": "${SESSION_KEY}",
        "HOST": "db.local",
    }
    assert out["headers"] == {"Cookie": "****", "X-Trace": "on"}
    assert out["auth"] == {"type": "basic", "username": "me", "password": "****"}
    assert data["env"]["DB_PASSWORD"] == "hunter2"  # the input is not modified


def test_hostile_placeholders_find_nothing() -> None:
    # Their speed (linear, not the 33 s of quadratic matching) is measured in bench/.
    from mcpctl.config.placeholders import near_misses

    assert find_placeholders("${A:-" * 1000) == [] and find_placeholders("${" * 1000) == []
    assert near_misses("${A:-" * 3 + "}") == []  # the last one is a placeholder
    assert [p.name for p in find_placeholders("${A:-${B:-x}")] == ["B"]


# --- what mutation testing found unpinned (docs/testing.md) ------------------------------


def test_resolve_entry_defaults_to_empty_values_from_the_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcpctl.config.placeholders import forget_resolved, resolved_values

    monkeypatch.setenv("MCPCTL_T_CMD", "run-it")
    monkeypatch.setenv("MCPCTL_T_ARG", "abc")
    monkeypatch.setenv("MCPCTL_T_DIR", "ab")
    monkeypatch.delenv("MCPCTL_T_GONE", raising=False)
    entry = ServerEntry(command="${MCPCTL_T_CMD}", args=["--a=${MCPCTL_T_ARG}", "${MCPCTL_T_GONE}"],
                        cwd="/srv/${MCPCTL_T_DIR}")  # fmt: skip
    forget_resolved()
    resolved = resolve_entry("named", entry)  # policy "empty", os.environ
    assert resolved is not None and resolved.name == "named"
    assert resolved.entry.command == "run-it" and resolved.entry.cwd == "/srv/ab"
    assert resolved.entry.args == ("--a=abc", "")
    assert resolved.warnings == (
        "variable MCPCTL_T_GONE is not set (in server 'named'); using an empty string",
    )
    # Values from 3 characters on are secrets to hide; shorter ones would hide half the text.
    assert resolved.secret_values == frozenset({"run-it", "abc"})
    assert {"run-it", "abc"} <= resolved_values() and "ab" not in resolved_values()
    forget_resolved()
    assert resolved.redact("ran run-it with abc") == f"ran {REDACTED} with {REDACTED}"


def test_resolve_text_fails_on_a_missing_variable_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcpctl.errors import SkipServer

    monkeypatch.setenv("MCPCTL_T_SET", "x")
    monkeypatch.delenv("MCPCTL_T_GONE", raising=False)
    assert resolve_text("a${MCPCTL_T_SET}b") == "axb"
    with pytest.raises(PlaceholderError) as info:
        resolve_text("${MCPCTL_T_GONE}")
    assert info.value.message == "variable MCPCTL_T_GONE is not set"
    assert info.value.hint == (
        "store it with 'mcpctl secret set MCPCTL_T_GONE', export MCPCTL_T_GONE=..., or give "
        "it a default: ${MCPCTL_T_GONE:-value}"
    )
    with pytest.raises(SkipServer) as skipped:
        resolve_text("${MCPCTL_T_GONE}", policy="skip")
    assert skipped.value.variable == "MCPCTL_T_GONE"


def test_resolve_entry_takes_values_from_the_secret_source_and_hides_them() -> None:
    entry = ServerEntry(command="x", env={"K": "${MCPCTL_T_KEYRING_ONLY}"})
    resolved = resolve_entry(
        "s", entry, environ={}, secrets={"MCPCTL_T_KEYRING_ONLY": "kr-val"}.get
    )
    assert resolved is not None and resolved.entry.env == {"K": "kr-val"}
    assert resolved.secret_values == frozenset({"kr-val"})


def test_a_secret_source_that_cannot_be_asked_is_not_a_variable_not_set() -> None:
    from mcpctl.errors import KeyringUnavailableError, SecretUnreachableError

    def unreachable(name: str) -> str | None:
        raise KeyringUnavailableError("no usable keyring: no bus", reason="no bus")

    entry = ServerEntry(command="x", env={"A": "${TOKEN}", "B": "${OTHER:-dflt}"})
    with pytest.raises(SecretUnreachableError) as caught:
        resolve_entry("s", entry, policy="error", environ={}, secrets=unreachable)
    assert caught.value.variable == "TOKEN" and caught.value.reason == "no bus"
    assert caught.value.exit_code == 3 and "secret set" not in str(caught.value.hint)
    resolved = resolve_entry("s", entry, policy="empty", environ={}, secrets=unreachable)
    assert resolved is not None and dict(resolved.entry.env) == {"A": "", "B": "dflt"}
    assert resolved.warnings == (
        "variable TOKEN is not in the environment, and the keyring that may hold it could not "
        "be asked: no bus (in server 's'); using an empty string",
        "variable OTHER is not in the environment and the keyring could not be asked (no bus) "
        "(in server 's'); using its default",
    )
    assert resolve_entry("s", entry, policy="skip", environ={}, secrets=unreachable) is None
    resolved = resolve_entry("s", entry, environ={"TOKEN": "t", "OTHER": "o"}, secrets=unreachable)
    assert resolved is not None and dict(resolved.entry.env) == {"A": "t", "B": "o"}


def test_a_near_miss_glued_to_a_placeholder_is_reported_as_written() -> None:
    # `$HOME` is not expanded, `${SUFFIX}` is: the warning names `$HOME`, nothing of the
    # placeholder after it.
    assert near_misses("$HOME${SUFFIX}") == ["$HOME"]
    assert near_misses("${lower}${UPPER}/x") == ["${lower}"]
