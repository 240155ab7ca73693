"""What a literal secret looks like, where an entry holds one, and what mcpctl says of it."""

from __future__ import annotations

import pytest

from mcpctl.config.secretdetect import (
    LiteralSecret,
    literal_secret_values,
    literal_secrets,
    literal_under_secret_name,
    looks_like_secret,
    looks_random,
    placeholder_hint,
    redact_entry_data,
    redact_literal,
    secret_flag_values,
    secret_fragments,
    variable_name,
)

GHP = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
KEY = "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8"  # 24 characters, random-looking


# --- what looks like a secret --------------------------------------------------------------


def test_a_random_looking_key_from_twenty_characters_on() -> None:
    assert looks_random(KEY[:20]) and not looks_random(KEY[:19])
    assert not looks_random(KEY[:19] + " ")  # a space is no key's character
    assert not looks_random("abcdefghijklmnopqrstuvwxyz")  # no digit
    assert not looks_random("12345678901234567890123")  # no letter
    # A slash makes a path or a URL's segment, unless the value ends as base64 does.
    assert not looks_random("Ab1Cd2Ef3G/h4Ij5Kl6Mn7Op8")
    assert looks_random("Ab1Cd2Ef3G/h4Ij5Kl6Mn7Op8=")
    # Exactly 3.5 bits a character (8 symbols at 1/16, 4 at 1/8) is random enough.
    assert looks_random("abcdefgh" * 2 + "1234" * 4)


@pytest.mark.parametrize(
    ("value", "fragments"),
    [
        ("Bearer abcdefgh", ["abcdefgh"]),  # the scheme's credential, from 8 characters
        ("  token   abcdefgh12  ", ["abcdefgh12"]),
        ("Bearer abcdefg", []),
        ("Bearer ${TOKEN}", []),
        ("Bearer ${A}bcdefgh", []),
        ("pg://u:p@h", ["p"]),  # a URL's password, however short
        ("pg://u:${DB_PASSWORD}@h/db", []),
        (f"pg://u:pw@h/db?k={KEY}", ["pw", KEY]),
        ("ghp_12345678", ["ghp_12345678"]),  # a known prefix from 12 characters
        ("ghp_1234567", []),
        (f"x={GHP}&y=${{T}}{KEY}", [GHP]),
        (f"${{T}} {GHP}", [GHP]),  # a placeholder skipped, not the end of the search
        ("eyJhbGciOi.eyJzdWIiO.", ["eyJhbGciOi.eyJzdWIiO."]),  # a JWT, 15 characters and more
        (f"--key {KEY}", [KEY]),
        ("just some ordinary words", []),
    ],
)
def test_the_parts_of_a_value_that_look_like_secrets(value: str, fragments: list[str]) -> None:
    assert list(secret_fragments(value)) == fragments
    assert looks_like_secret(value) is bool(fragments)


def test_a_literal_is_shown_with_its_secret_parts_hidden() -> None:
    assert redact_literal(f"--token={GHP} --port 3000") == "--token=**** --port 3000"
    assert redact_literal("https://me:pw@h/x?t=${T}") == "https://me:****@h/x?t=${T}"
    assert redact_literal("plain") == "plain"


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        ("abc", True),
        ("  Bearer   ", False),  # a scheme with nothing after it: the shell's empty variable
        ("bot", False),
        ("Basic", False),
        ("Bearer x", True),
        ("", False),
        ("   ", False),
        ("ON", False),
        ("123456", False),
        ("1234567", True),  # more than a small number
        ("truthy", True),
        ("x${Y}", False),
    ],
)
def test_what_a_secret_name_makes_literal(value: str, literal: bool) -> None:
    assert literal_under_secret_name("DB_PASSWORD", value) is literal
    assert literal_under_secret_name("EDITOR", value) is False


# --- flags that take a secret ---------------------------------------------------------------


def test_the_values_of_flags_named_like_secrets() -> None:
    args: list[object] = [
        "--api-key", "k1",  # 1: the next argument
        "-token=t2",  # 2: the argument itself
        "--key", "./tls.key",  # a file
        "--password", "--verbose",  # a flag, not a value
        "--secret", 5,  # not a string
        "--monkey", "m",  # only the last word counts
        "--db_pass", "~/pw",  # a file in the home folder
        "--pat=${PAT}",  # a placeholder
        "--token=",  # nothing
        "--client-credentials", "true",  # a setting
        "--Authorization", "Bearer x",  # 18
        "-1token", "x",  # not a flag
        "--token",  # last: no value
    ]  # fmt: skip
    assert secret_flag_values(["--token", "abc"]) == [(1, "--token")]  # the last argument
    assert secret_flag_values(args) == [(1, "--api-key"), (2, "-token"), (18, "--Authorization")]


# --- where an entry holds a literal secret ------------------------------------------------


def test_where_an_entry_holds_literals_and_why() -> None:
    entry = {
        "command": GHP,  # not looked at: a command is no credential's place
        "env": {"A": GHP, "D": 5, "B_TOKEN": "plain", "C_TOKEN": "${C}", "E_KEY": "x"},
        "headers": {"X-Api-Key": "plain", "Authorization": f"Bearer {KEY}", "X-N": 1},
        "args": ["-y", GHP, "--token", "plain", "--api-key", KEY, "--pass=open"],
        "url": "https://u:pw@h/mcp",
        "auth": {"type": "bearer", "token": "t", "value": "${V}", "password": "", "x": "y"},
        "allow_literal": ["E_KEY", "x-api-key", 7, "--pass"],
    }
    assert literal_secrets(entry) == [
        LiteralSecret(("env", "A"), "A"),
        LiteralSecret(("env", "B_TOKEN"), "B_TOKEN", by_name=True),
        LiteralSecret(("headers", "Authorization"), "Authorization"),
        LiteralSecret(("args", 1), ""),
        LiteralSecret(("args", 5), ""),  # by its shape: not counted again by its flag
        LiteralSecret(("args", 3), "--token", by_name=True),
        LiteralSecret(("url",), ""),
        LiteralSecret(("auth", "token"), "token"),
    ]
    assert literal_secret_values(entry) == {GHP, "plain", KEY, "pw", "t"}
    for key in ("token", "value", "password", "client_secret"):
        assert literal_secrets({"auth": {key: "x"}}) == [LiteralSecret(("auth", key), key)]


def test_allow_literal_must_be_a_list_and_an_env_name_is_matched_as_written() -> None:
    entry = {"env": {"MY_PAT": "abc"}, "headers": {"X-Pat": "abc"}}
    both = [LiteralSecret(("env", "MY_PAT"), "MY_PAT", True),
            LiteralSecret(("headers", "X-Pat"), "X-Pat", True)]  # fmt: skip
    assert literal_secrets({**entry, "allow_literal": "MY_PAT"}) == both
    assert literal_secrets({**entry, "allow_literal": ["my_pat", "X-PAT"]}) == both[:1]
    assert literal_secrets({**entry, "allow_literal": ("MY_PAT",)}) == both[1:]


def test_the_secret_values_taken_from_flags_and_fragments() -> None:
    entry = {
        "args": ["--token=abc", f"--key={KEY}", "--password", "p w", "--pat=Bearer abcdefgh"],
        "env": {"URL": "pg://u:pw@h/db", "API_TOKEN": "Bearer xyz"},
        "headers": {"Authorization": "Bearer abcdefgh"},
    }
    # A value only its name makes secret is taken whole, though a part of it looks like one.
    assert literal_secret_values(entry) == {
        "abc", KEY, "p w", "Bearer abcdefgh", "pw", "Bearer xyz", "abcdefgh",
    }  # fmt: skip
    assert literal_secret_values({"args": 1, "env": [], "url": 2, "auth": "x"}) == set()


# --- an entry as shown ----------------------------------------------------------------------


def test_a_shown_entry_keeps_what_is_no_secret() -> None:
    entry = {
        "env": {"API_TOKEN": "", "N": 3, "PLAIN": "x", "URL": "pg://u:pw@h"},
        "headers": {"X-Token": "${T}"},
        "args": "not a list",
        "auth": {"type": "oauth", "token": 5},
        "url": 7,
    }
    out = redact_entry_data(entry)
    assert out == {**entry, "env": {**entry["env"], "URL": "pg://u:****@h"}}
    assert redact_entry_data({"env": ["A"], "headers": "h", "auth": None}) == {
        "env": ["A"], "headers": "h", "auth": None,
    }  # fmt: skip


# --- names and hints ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "key", "name"),
    [
        ("s", "X-Api-Key", "X_API_KEY"),
        ("s", "api.key", "API_KEY"),
        ("my-srv", "", "MY_SRV_TOKEN"),
        ("s", "-@-", "SECRET"),
        ("s", "--token", "TOKEN"),
    ],
)
def test_the_variable_named_for_a_secret(server: str, key: str, name: str) -> None:
    assert variable_name(server, key) == name


def test_the_hint_for_a_literal_secret() -> None:
    assert placeholder_hint("gh", "env.GITHUB_TOKEN", "GITHUB_TOKEN") == (
        'write "${GITHUB_TOKEN}" in env.GITHUB_TOKEN instead and keep the value in the keyring:'
        " mcpctl secret set GITHUB_TOKEN (or export GITHUB_TOKEN=... where mcpctl and the host"
        " run)"
    )
    assert placeholder_hint("my-srv", "args[1]").startswith('write "${MY_SRV_TOKEN}" in args[1]')
