"""The redactor of all output: known values, then credential patterns, and what it leaves."""

from __future__ import annotations

import base64

import pytest

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


def test_secret_named_variables_are_hidden_but_not_ordinary_ones() -> None:
    env = {"DEPLOY_API_TOKEN": "tok-value-1", "XDG_SESSION_TYPE": "tty", "HOME": "/root"}
    current = redactor(environ=env)
    assert current("tok-value-1 on tty in /root") == "**** on tty in /root"


def test_the_redactor_is_rebuilt_only_when_the_secrets_change() -> None:
    forget()
    register(["first-canary-value"])
    first = redactor(environ={})
    assert "first-canary-value" in first.values
    # The same set: its forms are not computed nor its regex compiled again, patterns or not.
    assert redactor(environ={}).values is first.values
    assert redactor(environ={}, patterns=False).values is first.values
    register(["second-canary-value"])
    second = redactor(environ={})
    assert second.values is not first.values
    assert second("first-canary-value second-canary-value") == "**** ****"
    forget()


def test_overlapping_values_are_hidden_whole() -> None:
    # The shorter value starts first: hiding it alone would leave the longer one's tail.
    redact = Redactor(["xxabc", "bcdefghij"])
    assert redact("zz xxabcdefghij zz") == "zz **** zz"
    assert redact("xxabc and bcdefghij") == "**** and ****"


def test_thousands_of_secrets_compile_into_one_regex() -> None:
    values = [f"value-{i:04d}-of-a-secret" for i in range(500)]
    redact = Redactor(values)  # a trie of some 5,000 forms compiles as one regex
    assert redact(f"a {values[345]} b {values[7]}") == "a **** b ****"
    assert redact("value-99999-of-a-secret") == "value-99999-of-a-secret"


def test_basic_credentials_of_two_known_values_are_hidden_whole() -> None:
    pair = base64.b64encode(b"user-name-value:pass-word-value").decode()
    redact = Redactor(["user-name-value", "pass-word-value"])
    assert redact(f"Authorization: Basic {pair}") == "Authorization: Basic ****"
    # Without the patterns (files), each value's part is hidden all the same.
    assert "****" in Redactor(["pass-word-value"], patterns=False)(pair)
