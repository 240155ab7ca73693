"""The redactor of all output: known values, then credential patterns, and what it leaves."""

from __future__ import annotations

import base64
import json

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


# --- what mutation testing found unpinned (docs/testing.md) ------------------------------


def test_known_values_are_replaced_longest_first_whatever_their_spelling() -> None:
    # "zz-..." sorts after "aa-zz-...": only ordering by length hides the long one whole.
    short, long = "zz-secret-9", "aa-zz-secret-9-tail"
    assert Redactor([short, long])(f"{long} {short}") == "**** ****"
    assert redact_text(f"{long} {short}", {short, long}) == "**** ****"


def test_a_known_value_is_hidden_as_json_writes_it_without_escaping_letters() -> None:
    value = 'pä"ss-wörd'
    text = json.dumps({"v": value}, ensure_ascii=False)  # as mcpctl's JSON output has it
    assert Redactor([value])(text) == '{"v": "****"}'


def test_url_passwords_and_scheme_credentials_are_replaced_exactly() -> None:
    redact = Redactor([])
    assert redact("postgres://admin:s3cr3t@db:5432/app") == "postgres://admin:****@db:5432/app"
    assert redact("Authorization: Basic YWRtaW46czNjcmV0") == "Authorization: Basic ****"
    assert redact("Token abcdefghij1") == "Token ****"
    assert redact("Bearer abcdefghijklmnopqrst") == "Bearer ****"  # 20 letters: long enough
    assert redact("Bearer abcdefghijklmnopqrs") == "Bearer abcdefghijklmnopqrs"  # 19, a word


def test_free_text_keys_between_24_and_256_characters() -> None:
    key = "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8"  # 24, mixed case, digits, random-looking
    assert Redactor([])(f"key {key}") == "key ****"
    assert Redactor([])(f"key {key[:23]}") == f"key {key[:23]}"
    long = (key + "Qr9St0Uv") * 8  # 256
    assert Redactor([])(f"blob {long}") == "blob ****"
    assert Redactor([])(f"blob {long}x") == f"blob {long}x"  # 257: data, not a key


def test_the_entropy_threshold_of_a_random_looking_value() -> None:
    from mcpctl.config.redaction import looks_like_secret

    # 11 symbols twice each: log2(11) = 3.46 bits a character, under the 3.5 of a key;
    # 12 symbols: 3.58, over it.
    assert not looks_like_secret("abcde12345f" * 2)
    assert looks_like_secret("abcde12345fg" * 2)


def test_registered_and_secret_named_values_from_the_shortest_length_on() -> None:
    forget()
    try:
        register(["abc", "ab"])  # 3 characters are enough to be a secret, 2 are not
        assert redactor()("abc ab") == "**** ab"
    finally:
        forget()
    env = {"DEPLOY_TOKEN": "abc123", "API_KEY": "abc12", "EDITOR": "/usr/bin/vim"}
    out = redactor(environ=env)("abc123 abc12 /usr/bin/vim")
    assert out == "**** abc12 /usr/bin/vim"  # secret names from 6 characters, no other name


def test_redact_keeps_the_subjects_it_is_given() -> None:
    from mcpctl.config.redaction import redact

    text = "ghp_16C7e42F292c6912E7710c838347Ae178B4a.env.X holds a literal"
    assert redact(text).startswith("****")
    assert redact(text, keep=["ghp_16C7e42F292c6912E7710c838347Ae178B4a.env.X"]) == text


def test_register_config_hides_the_environment_value_of_every_placeholder() -> None:
    from mcpctl.config.loader import build_config
    from mcpctl.config.redaction import register_config

    config, problems = build_config({
        "a": {"command": "${CMD_V}", "args": ["--x=${ARG_V}"], "env": {"E": "${ENV_V}"},
              "cwd": "${CWD_V}"},
        "b": {"url": "https://${HOST_V}/mcp", "headers": {"X-K": "${HDR_V}"},
              "auth": {"type": "bearer", "token": "${TOK_V}"}},
        "c": {"url": "https://c.example/mcp",
              "auth": {"type": "oauth", "client_id": "x", "client_secret": "${CS_V}"}},
        "d": {"url": "https://d.example/mcp",
              "auth": {"type": "basic", "username": "u", "password": "${PW_V}"}},
        "e": {"url": "https://e.example/mcp",
              "auth": {"type": "header", "name": "X-Api", "value": "${VAL_V}"}},
    })  # fmt: skip
    assert problems == [], problems
    names = ["CMD_V", "ARG_V", "ENV_V", "CWD_V", "HOST_V", "HDR_V", "TOK_V", "CS_V", "PW_V",
             "VAL_V"]  # fmt: skip
    env = {n: f"value-of-{n.lower()}" for n in names}
    env["UNUSED_V"] = "value-of-unused"
    forget()
    try:
        register_config(config.entries.values(), env)
        out = redactor(environ={})(" ".join(env.values()))
    finally:
        forget()
    assert out == " ".join(["****"] * len(names) + ["value-of-unused"])


def test_register_config_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpctl.config.loader import build_config
    from mcpctl.config.redaction import register_config

    monkeypatch.setenv("MCPCTL_T_KEY", "value-from-process")
    config, _ = build_config({"a": {"command": "x", "env": {"K": "${MCPCTL_T_KEY}"}}})
    forget()
    try:
        register_config(config.entries.values())
        assert redactor(environ={})("value-from-process") == "****"
    finally:
        forget()


def test_the_hints_for_a_literal_under_a_secret_name() -> None:
    from mcpctl.config.redaction import LiteralSecret, named_literal_hint, named_literal_message

    keyring = "keep the value in the keyring with 'mcpctl secret set"
    assert named_literal_hint("my-srv", "args", "--api-key") == (
        f"{keyring} API_KEY' and pass --api-key '${{API_KEY}}' in the server's arguments; if it"
        ' is not a secret, --allow-literal=--api-key (or "allow_literal": ["--api-key"] in the'
        " entry) lets it stay"
    )
    assert named_literal_hint("my-srv", "args", "--api-key", in_file=True).endswith(
        'if it is not a secret, add "allow_literal": ["--api-key"] to the entry'
    )
    # Authorization headers are named after the server; the scheme in front stays shown.
    assert named_literal_hint("my-srv", "headers", "Proxy-Authorization", "Bearer ab cd") == (
        f"{keyring} MY_SRV_TOKEN' and write the placeholder instead (-H 'Proxy-Authorization:"
        " Bearer ${MY_SRV_TOKEN}'); if it is not a secret, --allow-literal Proxy-Authorization"
        ' (or "allow_literal": ["Proxy-Authorization"] in the entry) lets it stay'
    )
    assert "(-e API_KEY='${API_KEY}')" in named_literal_hint("s", "env", "API_KEY", "plain")
    # Only a scheme is kept in front: two words are not a scheme and a credential.
    assert "(-H 'X-Api-Key: ${X_API_KEY}')" in named_literal_hint("s", "headers", "X-Api-Key",
                                                                  "my secret")  # fmt: skip
    assert named_literal_hint("s", "env", "API_KEY", "plain", in_file=True) == (
        'write "${API_KEY}" in env.API_KEY and keep the value in the keyring: mcpctl secret'
        ' set API_KEY; if it is not a secret, add "allow_literal": ["API_KEY"] to the entry'
    )
    assert named_literal_message("s.args[1]", LiteralSecret(("args", 1), "--token")) == (
        "s.args[1] (the value of --token) is a literal; a flag named like a secret must take"
        " a ${VAR} placeholder"
    )
    assert named_literal_message("s.env.X", LiteralSecret(("env", "X"), "X")) == (
        "s.env.X holds a literal value; a key named like a secret must hold a ${VAR} placeholder"
    )


def test_shown_entries_hide_literals_in_every_field() -> None:
    from mcpctl.config.redaction import redact_entry_data

    token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    out = redact_entry_data({
        "command": token, "cwd": token, "url": "https://me:s3cr3t@h.example/mcp",
        "args": ["plain", 5, token],
    })  # fmt: skip
    assert out["command"] == "****" and out["cwd"] == "****"
    assert out["url"] == "https://me:****@h.example/mcp"
    assert out["args"] == ["plain", 5, "****"]
    # allow_literal shows a value under a name only the write guard takes for a secret (a
    # name that says secret outright stays hidden): header names in any case, env names as
    # written.
    entry = {"headers": {"X-Pass": "open-sesame", "X-Api-Key": "abc"},
             "env": {"MY_PAT": "abc-def", "MY_PASS": "ghi-jkl"}}  # fmt: skip
    hidden = redact_entry_data(entry)
    assert hidden["headers"] == {"X-Pass": "****", "X-Api-Key": "****"}
    assert hidden["env"] == {"MY_PAT": "****", "MY_PASS": "****"}
    shown = redact_entry_data({**entry, "allow_literal": ["X-PASS", "MY_PAT", "my_pass"]})
    assert shown["headers"] == {"X-Pass": "open-sesame", "X-Api-Key": "****"}
    assert shown["env"] == {"MY_PAT": "abc-def", "MY_PASS": "****"}
    for key in ("token", "value", "password", "client_secret"):
        auth = redact_entry_data({"auth": {"type": "x", key: "short"}})["auth"]
        assert auth == {"type": "x", key: "****"}, key
        kept = redact_entry_data({"auth": {"type": "x", key: "Bearer ${T}"}})["auth"]
        assert kept == {"type": "x", key: "Bearer ${T}"}, key
        mixed = redact_entry_data({"auth": {"type": "x", key: f"{token} ${{T}}"}})["auth"]
        assert mixed == {"type": "x", key: "****"}, key


def test_a_basic_credential_is_hidden_whatever_letters_it_has() -> None:
    # base64("user:pass") has no digit and is under 20 characters: a user:password all the same.
    redact = Redactor([])
    assert redact("Authorization: Basic dXNlcjpwYXNz") == "Authorization: Basic ****"
    assert redact("Basic authentication is used") == "Basic authentication is used"


def test_data_redacts_every_string_keys_included_and_says_whether_it_did() -> None:
    redact = Redactor(["s3cr3t-value-x"])
    secret = "s3cr3t-value-x"
    value = {secret: ["a " + secret + " b", 1, None, {"k": secret}], 2: "plain", "t": ("u", secret)}
    assert redact.data(value) == (
        {"****": ["a **** b", 1, None, {"k": "****"}], 2: "plain", "t": ["u", "****"]},
        True,
    )
    assert redact.data({"k": ["plain", 3], 2: "x"}) == ({"k": ["plain", 3], 2: "x"}, False)
    assert redact.data("plain") == ("plain", False) and redact.data(5) == (5, False)
    assert redact.data({}) == ({}, False)
    # A change in a key alone, in an item alone, or only before an unchanged one, is said.
    assert redact.data({secret: 1}) == ({"****": 1}, True)
    assert redact.data({"a": secret, "b": "plain"}) == ({"a": "****", "b": "plain"}, True)
    assert redact.data([secret, "plain"]) == (["****", "plain"], True)


def test_known_values_side_by_side_are_one_run_and_no_values_change_nothing() -> None:
    redact = Redactor(["first-value-1", "second-value-2"])
    assert redact.known("<first-value-1second-value-2>") == "<****>"
    assert Redactor([]).known("first-value-1") == "first-value-1"


def test_the_trie_matches_each_word_and_the_longest_at_a_position() -> None:
    import re

    from mcpctl.config.redaction import _trie_pattern

    words = ["ab", "abc", "abd", "x.y"]
    pattern = re.compile(_trie_pattern(words))
    assert all(pattern.fullmatch(word) for word in words)
    assert [m[0] for m in (pattern.match("abcz"), pattern.match("abz"))] == ["abc", "ab"]
    assert not pattern.fullmatch("xzy") and not pattern.fullmatch("a")


def test_the_base64_forms_of_a_value_whole_and_at_each_alignment() -> None:
    from mcpctl.config.redaction import _b64_forms

    # Bytes whose standard and URL-safe alphabets differ; the parts carried by its bits
    # alone at each of the three alignments (from 8 bytes on), for "user:" + it in Basic.
    assert _b64_forms(b"\xfb\xff\xbfsecret!") == {
        "+/+/c2VjcmV0IQ==", "+/+/c2VjcmV0IQ", "+/+/c2VjcmV0I",
        "-_-_c2VjcmV0IQ==", "-_-_c2VjcmV0IQ", "-_-_c2VjcmV0I",
        "7/79zZWNyZXQh", "7_79zZWNyZXQh", "v/v3NlY3JldC", "v_v3NlY3JldC",
    }  # fmt: skip
    assert len(_b64_forms(b"\xfb\xff\xbfsecre")) == 10  # 8 bytes: the alignments too
    assert _b64_forms(b"\xfb\xff\xbfsecre!") == {  # 9 bytes: none ends in a shared character
        "+/+/c2VjcmUh", "-_-_c2VjcmUh", "7/79zZWNyZS", "7_79zZWNyZS", "v/v3NlY3JlI", "v_v3NlY3JlI",
    }  # fmt: skip
    assert _b64_forms(b"\xfb\xff\xbfse") == {"+/+/c2U=", "+/+/c2U", "-_-_c2U=", "-_-_c2U"}


@pytest.mark.parametrize(
    ("cred", "basic"),
    [("dXNlcjpwYXNz", True), ("YWI6Y2Q", True), ("YWI6Y2Q=", True), ("YWI6Yw", True),
     ("bm8gY29sb24", False), ("dXNl!cjpwYXNz", False), ("x", False)],
)  # fmt: skip
def test_a_basic_credential_is_base64_of_a_user_and_password(cred: str, basic: bool) -> None:
    from mcpctl.config.redaction import _is_user_password

    assert _is_user_password(cred) is basic


def test_a_redactor_without_patterns_hides_known_values_only() -> None:
    token = "ghp_" + "a1B2" * 9
    assert redactor(environ={}, patterns=False)(token) == token
    assert redactor(environ={}, extra=[token], patterns=False)(token) == "****"
    assert redactor(environ={})(token) == "****"
