"""The redactor of all output: known values, then credential patterns, and what it leaves."""

from __future__ import annotations

import base64

import pytest

from mcpctl.config.placeholders import redact_text
from mcpctl.config.redaction import Redactor, forget, redactor, register


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("postgres://admin:s3cr3t@db:5432/app", "s3cr3t"),
        ("Authorization: Bearer abcdef123456", "abcdef123456"),
        ('{"token": "ghp_16C7e42F292c6912E7710c838347Ae178B4a"}', "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig"),
        ("key=AbCdEf0123456789XyZaBcDeF", "AbCdEf0123456789XyZaBcDeF"),
    ],
)  # fmt: skip
def test_credential_patterns_are_hidden(text: str, hidden: str) -> None:
    out = Redactor([])(text)
    assert hidden not in out and "****" in out


@pytest.mark.parametrize(
    "text",
    [
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "npx -y @modelcontextprotocol/server-filesystem@2025.8.21",
        "https://${USER}:${PASS}@host/x",
        "use Bearer authentication with tokens",
        base64.b64encode(bytes(range(256))).decode(),  # a blob's data is not a key
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert Redactor([])(text) == text


def test_known_values_are_hidden_in_every_form() -> None:
    forget()
    register(["plain-canary-value", 'quote"d-value'])
    current = redactor()
    assert current("x plain-canary-value y") == "x **** y"
    assert current('{"v": "quote\\"d-value"}') == '{"v": "****"}'  # as it stands in JSON
    assert redactor(extra=["abcdef"])("abcdef") == "****"
    forget()
    assert redactor()("plain-canary-value") == "plain-canary-value"


@pytest.mark.parametrize("order", [1, -1])
def test_a_secret_containing_another_is_hidden_whole(order: int) -> None:
    # Shortest first, the short value would cut the long one and leave its tail readable.
    short, long = "abc", "abcdef-longer"
    text = f"token={long}; other={short}; again {long}"
    for redact in (Redactor([short, long][::order]), redactor(extra=[short, long][::order])):
        out = redact(text)
        assert out == "token=****; other=****; again ****", out
        assert "def-longer" not in out
    assert redact_text(text, {short, long}) == "token=****; other=****; again ****"
    assert redact_text("1abc-2abcdef-longer", {"bc", "abc", "abcdef-longer"}) == "1****-2****"
    # Subjects kept readable are matched longest first too.
    subject = f"srv-{long}.env.API_KEY"
    kept = Redactor([long])(f"{subject} holds {long}", keep=["srv", subject])
    assert kept == f"{subject} holds ****"


def test_secret_named_variables_are_hidden_but_not_ordinary_ones() -> None:
    env = {"DEPLOY_API_TOKEN": "tok-value-1", "XDG_SESSION_TYPE": "tty", "HOME": "/root"}
    current = redactor(environ=env)
    assert current("tok-value-1 on tty in /root") == "**** on tty in /root"


# --- keys named like secrets -------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["BRAVE_API_KEY", "GITHUB_TOKEN", "token_limit_x", "CLIENT_SECRET", "DB_PASSWORD", "DB_PASSWD",
     "SMTP_PASS", "GITHUB_PAT", "GOOGLE_CREDENTIALS", "Authorization", "authorization",
     "X-Api-Key", "x-subscription-key", "KEY", "BYPASS"],
)  # fmt: skip
def test_keys_named_like_secrets_hold_no_literal(key: str) -> None:
    from mcpctl.config.redaction import literal_under_secret_name

    assert literal_under_secret_name(key, "mypassword123")
    assert literal_under_secret_name(key, "Bearer abc")


@pytest.mark.parametrize(
    "key", ["KEYBOARD_LAYOUT", "PATH", "PATHEXT", "HOST", "KEY_ID", "PASSAGE", "X-Keyboard", "MONKEYS"]
)  # fmt: skip
def test_keys_that_only_contain_key_pass_or_pat_are_not_secret_names(key: str) -> None:
    from mcpctl.config.redaction import literal_under_secret_name

    assert not literal_under_secret_name(key, "mypassword123")


@pytest.mark.parametrize(
    "value",
    ["${BRAVE_API_KEY}", "Bearer ${TOKEN}", "${TOKEN:-fallback}", "prefix-${A}-suffix", "", "  ",
     "true", "FALSE", "yes", "no", "on", "Off", "0", "1", "4096", "128000", "Bearer", "token"],
)  # fmt: skip
def test_placeholders_empty_values_and_settings_are_not_literal_secrets(value: str) -> None:
    from mcpctl.config.redaction import literal_under_secret_name

    assert not literal_under_secret_name("BRAVE_API_KEY", value)


@pytest.mark.parametrize("value", ["1234567", "0.5", "abc", "${lower}", "$TOKEN", "truely"])
def test_anything_else_under_a_secret_name_is_literal(value: str) -> None:
    from mcpctl.config.redaction import literal_under_secret_name

    assert literal_under_secret_name("MY_TOKEN", value)


def test_literal_secrets_say_which_were_found_by_name_and_heed_allow_literal() -> None:
    from mcpctl.config.redaction import LiteralSecret, literal_secrets

    data = {
        "command": "sh",
        "env": {"BRAVE_API_KEY": "mypassword123", "GITHUB_TOKEN": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
                "MY_PAT": "plain", "HOST": "mypassword123"},
        "headers": {"X-Api-Key": "abc"},
    }  # fmt: skip
    assert literal_secrets(data) == [
        LiteralSecret(("env", "BRAVE_API_KEY"), "BRAVE_API_KEY", by_name=True),
        LiteralSecret(("env", "GITHUB_TOKEN"), "GITHUB_TOKEN"),
        LiteralSecret(("env", "MY_PAT"), "MY_PAT", by_name=True),
        LiteralSecret(("headers", "X-Api-Key"), "X-Api-Key", by_name=True),
    ]
    # Env names as written, header names in any case; a token-shaped value stays a secret.
    allowed = {**data, "allow_literal": ["MY_PAT", "x-api-key", "GITHUB_TOKEN", "brave_api_key"]}
    assert [f.key for f in literal_secrets(allowed)] == ["BRAVE_API_KEY", "GITHUB_TOKEN"]


def test_get_hides_literals_under_secret_names_unless_allowed() -> None:
    from mcpctl.config.redaction import redact_entry_data

    data = {"command": "sh", "env": {"SMTP_PASS": "hunter2", "GITHUB_PAT": "plain", "HOST": "h"}}
    assert redact_entry_data(data)["env"] == {
        "SMTP_PASS": "****",
        "GITHUB_PAT": "****",
        "HOST": "h",
    }
    shown = redact_entry_data({**data, "allow_literal": ["GITHUB_PAT"]})["env"]
    assert shown == {"SMTP_PASS": "****", "GITHUB_PAT": "plain", "HOST": "h"}


# --- the subjects of a message stay readable ---------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["hf_hub.env.HF_TOKEN", "myserver2.env.OPENAI_API_KEY", "key-vault.headers.X-Api-Key",
     "secret_store.env.DB_PASSWORD"],
)  # fmt: skip
def test_a_kept_subject_is_shown_even_when_it_looks_like_a_token(path: str) -> None:
    text = f"{path} looks like a literal secret; ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    assert path not in Redactor([])(text)  # what the bug looked like
    out = Redactor([])(text, keep=[path])
    assert out == f"{path} looks like a literal secret; ****"


def test_a_kept_subject_is_shown_when_it_contains_a_secret_value_but_the_value_is_not() -> None:
    redact = Redactor(["myserver"])
    text = "myserver.env.API_KEY holds a literal value; myserver elsewhere"
    assert redact(text) == "****.env.API_KEY holds a literal value; **** elsewhere"
    out = redact(text, keep=["myserver.env.API_KEY"])
    assert out == "myserver.env.API_KEY holds a literal value; **** elsewhere"
    # A subject that is a secret value itself is never kept.
    assert redact("myserver", keep=["myserver"]) == "****"
