"""validate rejects control characters where they reach a process, a connection or a terminal,
and explains inherit_env."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import format_path
from mcpctl.config.validate import validate_text
from mcpctl.text import find_controls
from tests.config.test_jsontext import where
from tests.conftest import Cli, write_config

# Each case: the document for a string ``s`` (holding the character), where ``s`` sits, and
# whether that is a key.
Case = tuple[Callable[[str], dict[str, Any]], Callable[[str], tuple[str | int, ...]], bool]
REMOTE = {"url": "https://h.example/mcp"}
CASES: dict[str, Case] = {
    "server name": (lambda s: {s: {"command": "sh"}}, lambda s: (s,), True),
    "command": (lambda s: {"x": {"command": s}}, lambda s: ("x", "command"), False),
    "args": (lambda s: {"x": {"command": "sh", "args": ["-v", s]}}, lambda s: ("x", "args", 1), False),
    "env name": (lambda s: {"x": {"command": "sh", "env": {s: "v"}}}, lambda s: ("x", "env", s), True),
    "env value": (lambda s: {"x": {"command": "sh", "env": {"K": s}}}, lambda s: ("x", "env", "K"), False),
    "cwd": (lambda s: {"x": {"command": "sh", "cwd": s}}, lambda s: ("x", "cwd"), False),
    "url": (lambda s: {"x": {"url": "https://h/" + s}}, lambda s: ("x", "url"), False),
    "header name": (lambda s: {"x": {**REMOTE, "headers": {s: "v"}}}, lambda s: ("x", "headers", s), True),
    "header value": (lambda s: {"x": {**REMOTE, "headers": {"H": s}}}, lambda s: ("x", "headers", "H"), False),
    "bearer token": (
        lambda s: {"x": {**REMOTE, "auth": {"type": "bearer", "token": s}}},
        lambda s: ("x", "auth", "token"), False,
    ),
    "header auth value": (
        lambda s: {"x": {**REMOTE, "auth": {"type": "header", "name": "X-Key", "value": s}}},
        lambda s: ("x", "auth", "value"), False,
    ),
    "basic password": (
        lambda s: {"x": {**REMOTE, "auth": {"type": "basic", "username": "u", "password": s}}},
        lambda s: ("x", "auth", "password"), False,
    ),
    "oauth client secret": (
        lambda s: {"x": {**REMOTE, "auth": {"type": "oauth", "client_secret": s}}},
        lambda s: ("x", "auth", "client_secret"), False,
    ),
}  # fmt: skip
CHARS = {"\x1b": "\\x1b", "\u202e": "\\u202e", "\ud800": "\\ud800", "\x9b": "\\x9b",
         "\u200b": "\\u200b", "\u2060": "\\u2060", "\ufeff": "\\ufeff", "\u200f": "\\u200f",
         "\u061c": "\\u061c", "\u2029": "\\u2029"}  # fmt: skip


@pytest.mark.parametrize("char", CHARS, ids=CHARS.values())
@pytest.mark.parametrize("field", CASES)
def test_a_control_character_is_an_error_at_its_path(field: str, char: str) -> None:
    build, path_of, is_key = CASES[field]
    s = "a" + char + "z"
    text = json.dumps(build(s), indent=2)  # the character is written escaped, as \u001b
    report = validate_text(text, path=Path("f"))
    found = [p for p in report.problems if p.code == "control_character"]
    assert len(found) == 1, report.problems
    problem = found[0]
    assert problem.severity == "error" and not report.ok
    assert problem.path == format_path(path_of(s))
    written = "https://h/" + s if field == "url" else s
    assert (problem.line, problem.column) == where(text, json.dumps(written))
    assert CHARS[char] in problem.message
    assert ("name" if is_key else "the value") in problem.message
    shown = problem.message + problem.path + (problem.hint or "")
    assert find_controls(shown) is None  # escaped, never raw
    # pydantic's own complaint about a surrogate (with the key mangled) is not repeated.
    assert not any("unable to parse" in p.message for p in report.problems)


@pytest.mark.parametrize(("char", "kind"), [
    ("\x1b", "a control character"), ("\u202e", "a bidirectional-text control"),
    ("\u200e", "a bidirectional-text control"), ("\u061c", "a bidirectional-text control"),
    ("\u200b", "an invisible character"), ("\u200d", "an invisible character"),
    ("\ufeff", "an invisible character"), ("\u2028", "a line or paragraph separator"),
])  # fmt: skip
@pytest.mark.parametrize("escaped", [True, False], ids=["escaped", "raw"])
def test_each_kind_is_named(char: str, kind: str, escaped: bool) -> None:
    text = json.dumps(
        {"x": {"command": "sh", "args": ["pay" + char + "pal"]}}, ensure_ascii=escaped
    )
    [problem] = validate_text(text, path=Path("f")).problems
    assert problem.code == "control_character" and kind in problem.message, problem.message
    assert find_controls(problem.message) is None


def test_newlines_and_tabs_are_not_control_characters_here() -> None:
    text = json.dumps({"x": {"command": "sh", "args": ["a\nb", "c\td"], "env": {"K": "é ✓"}}})
    assert validate_text(text, path=Path("f")).problems == []


def test_other_fields_are_left_to_the_model() -> None:
    text = json.dumps({"x": {"command": "sh", "description": "a\x1bb"}})
    assert [p.code for p in validate_text(text, path=Path("f")).problems] == []


HOSTILE = (
    '{\n  "a\\ud800b": {"command": "sh", "args": ["\\u202e"]},\n'
    '  "r": {"url": "https://h", "headers": {"X\\u001b": "v\\udfff"}},\n'
    '  "c": {"command": "sh", "env": {"K\\ud800": "\\u001b[31m"}}\n}\n'
)


@pytest.mark.parametrize("fmt", ["text", "github", "json"])
def test_cli_output_never_carries_the_characters(cli: Cli, config_path: Path, fmt: str) -> None:
    write_config(config_path, HOSTILE)
    r = cli("validate", "--format", fmt)
    assert r.exit_code == 1, r.stdout + r.stderr
    assert find_controls(r.stdout + r.stderr) is None
    assert r.stdout.count("control_character") >= 6
    if fmt == "json":
        problems = r.json["data"]["problems"]
        messages = [p["message"] for p in problems if p["code"] == "control_character"]
        assert any("\\ud800" in m for m in messages) and any("\\x1b" in m for m in messages)
        assert any("\\u202e" in m for m in messages) and any("\\udfff" in m for m in messages)
    else:
        assert "contains \\ud800" in r.stdout and "contains \\x1b" in r.stdout
        assert "contains \\u202e" in r.stdout
    if fmt == "text":
        assert r.stdout.splitlines()[-1].endswith("in 3 servers")


# --- inherit_env ------------------------------------------------------------------------


def test_inherit_env_true_warns_with_the_names_to_list_instead() -> None:
    text = json.dumps({"x": {"command": "sh", "inherit_env": True}}, indent=2)
    report = validate_text(text, path=Path("f"))
    assert report.ok
    (problem,) = report.problems
    assert (problem.severity, problem.code, problem.path) == (
        "warning",
        "inherit_env_all",
        "x.inherit_env",
    )
    assert (problem.line, problem.column) == where(text, "true")
    assert "every environment variable" in problem.message and "secrets" in problem.message
    assert problem.hint and '"inherit_env": [' in problem.hint


def test_a_secret_looking_name_in_inherit_env_warns_that_it_reaches_the_server() -> None:
    names = ["LANG", "GITHUB_TOKEN", "XDG_CONFIG_HOME", "DB_PASSWORD"]
    text = json.dumps({"x": {"command": "sh", "inherit_env": names}}, indent=2)
    report = validate_text(text, path=Path("f"))
    assert report.ok
    found = [(p.code, p.path, p.line) for p in report.problems]
    assert found == [
        ("inherit_env_secret", "x.inherit_env[1]", where(text, '"GITHUB_TOKEN"')[0]),
        ("inherit_env_secret", "x.inherit_env[3]", where(text, '"DB_PASSWORD"')[0]),
    ]
    message = report.problems[0].message
    assert "'GITHUB_TOKEN'" in message and "reach the server" in message and "intended" in message


@pytest.mark.parametrize("value", [False, [], ["LANG", "NODE_OPTIONS"]])
def test_inherit_env_without_secrets_is_quiet(value: object) -> None:
    text = json.dumps({"x": {"command": "sh", "inherit_env": value}})
    assert validate_text(text, path=Path("f")).problems == []


def test_inherit_env_on_a_remote_entry_is_only_the_conflict() -> None:
    text = json.dumps({"x": {"url": "https://h", "inherit_env": True}})
    codes = [p.code for p in validate_text(text, path=Path("f")).problems]
    assert codes == ["conflicting_fields"]


def test_other_problems_under_a_key_with_a_lone_surrogate_name_the_key_as_written() -> None:
    text = '{"x": {"command": "sh", "env": {"K\\ud800": 5}}}'
    found = {(p.code, p.path, p.column) for p in validate_text(text, path=Path("f")).problems}
    assert found == {
        ("control_character", "x.env['K\\ud800']", where(text, '"K')[1]),
        ("wrong_type", "x.env['K\\ud800']", where(text, "5")[1]),
    }
