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
