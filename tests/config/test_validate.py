"""The strict validator, and the validate / schema commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl import validate_config
from mcpctl.config.model import Problem
from mcpctl.config.validate import validate_text
from tests.conftest import Cli, write_config


def problems(text: str, **kw: object) -> list[tuple[str, str, str, int | None, int | None]]:
    report = validate_text(text, path=Path("external-mcps.json"), **kw)  # type: ignore[arg-type]
    return [(p.severity, p.code, p.path, p.line, p.column) for p in report.problems]


def test_valid_file_has_no_problems() -> None:
    text = json.dumps({"$schema": "x", "time": {"command": "sh", "args": ["-c", "true"]},
                       "r": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${T}"}}})  # fmt: skip
    report = validate_text(text, path=Path("f.json"))
    assert report.ok and report.problems == [] and report.servers == 2


def test_duplicate_keys_are_found_with_both_positions() -> None:
    text = '{\n  "a": {"command": "sh"},\n  "a": {"command": "sh", "args": [], "args": ["x"]}\n}\n'
    found = problems(text)
    assert ("error", "duplicate_key", "a", 3, 3) in found
    assert ("error", "duplicate_key", "a.args", 3, 38) in found
    report = validate_text(text, path=Path("f"))
    assert "first at line 2" in report.errors[0].message


def test_unknown_field_suggests_and_points_at_the_key() -> None:
    text = '{\n  "a": {\n    "comand": "sh"\n  }\n}'
    report = validate_text(text, path=Path("f"))
    unknown = [p for p in report.problems if p.code == "unknown_field"]
    assert unknown[0].path == "a.comand" and (unknown[0].line, unknown[0].column) == (3, 5)
    assert "did you mean 'command'" in unknown[0].message
    assert any(p.code == "missing_field" or "needs 'command'" in p.message for p in report.errors)


@pytest.mark.parametrize(
    ("entry", "code", "path"),
    [
        ({"command": 5}, "wrong_type", "x.command"),
        ({"command": "sh", "args": "a b"}, "wrong_type", "x.args"),
        ({"command": "sh", "args": ["a", 1]}, "wrong_type", "x.args[1]"),
        ({"command": "sh", "env": {"A": 1}}, "wrong_type", "x.env.A"),
        ({"command": "sh", "timeout": "5000"}, "wrong_type", "x.timeout"),
        ({"command": "sh", "timeout": -1}, "invalid_value", "x.timeout"),
        ({"command": "sh", "sensitive": "yes"}, "wrong_type", "x.sensitive"),
        ({"url": "ftp://host/x"}, "invalid_value", "x.url"),
        ({"url": "https://h", "transport": "websocket"}, "invalid_value", "x.transport"),
        ({"url": "https://h", "auth": {"type": "bearer"}}, "missing_field", "x.auth.token"),
        ({"url": "https://h", "auth": {"type": "magic"}}, "invalid_value", "x.auth.type"),
        (
            {"url": "https://h", "auth": {"type": "bearer", "token": "${T}", "tokn": 1}},
            "unknown_field",
            "x.auth.tokn",
        ),
        ({"command": "sh", "tools": {"alow": ["a"]}}, "unknown_field", "x.tools.alow"),
        (
            {"command": "sh", "source": {"registry": "r", "name": "n"}},
            "missing_field",
            "x.source.version",
        ),
    ],
)
def test_model_errors_have_paths(entry: dict, code: str, path: str) -> None:
    report = validate_text(json.dumps({"x": entry}, indent=2), path=Path("f"))
    assert not report.ok
    assert (code, path) in [(p.code, p.path) for p in report.errors], report.problems
    assert all(p.line is not None for p in report.errors)


def test_cross_field_rules() -> None:
    assert not validate_text('{"x": {"command": "sh", "url": "https://h"}}', path=Path("f")).ok
    assert not validate_text('{"x": {"transport": "sse"}}', path=Path("f")).ok
    assert not validate_text('{"x": {"url": "https://h", "env": {"A": "b"}}}', path=Path("f")).ok
    assert not validate_text('{"x": {"command": "sh", "headers": {"A": "b"}}}', path=Path("f")).ok


def test_bad_names() -> None:
    found = problems('{"has space": {"command": "sh"}, "' + "x" * 65 + '": {"command": "sh"}}')
    assert [c for _, c, *_ in found].count("invalid_name") == 2


@pytest.mark.parametrize(
    ("section", "value"),
    [
        ("env", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
        ("env", "sk-proj-abcdefghijklmnop1234"),
        ("env", "phx_abcdefghijklmnopqrstuv12"),
        ("headers", "Bearer abcdefghijklmnopqrstuvwxyz012345"),
        ("headers", "xoxb-123456789012-1234567890123-abcdefghijklmnop"),
        ("env", "a8Kd93jf0QpZ7mX2vB5nL1cR4tY6wE9u"),
    ],
)
def test_literal_secrets_are_flagged_with_a_placeholder_to_write(section: str, value: str) -> None:
    entry = {"command": "sh", "env": {"API_KEY": value}} if section == "env" else {
        "url": "https://h", "headers": {"Authorization": value}}  # fmt: skip
    report = validate_text(json.dumps({"x": entry}), path=Path("f"))
    secret = [p for p in report.errors if p.code == "plaintext_secret"]
    assert secret, report.problems
    assert "${API_KEY}" in (secret[0].hint or "") or "${AUTHORIZATION}" in (secret[0].hint or "")
    assert value not in secret[0].message and value not in (secret[0].hint or "")


@pytest.mark.parametrize(
    "value",
    ["${GITHUB_TOKEN}", "Bearer ${TOKEN}", "https://us.posthog.com", "/usr/local/share/some-long-path-1234",
     "production", "us-east-1", "12345678901234567890", "--read-only"],
)  # fmt: skip
def test_ordinary_values_are_not_secrets(value: str) -> None:
    report = validate_text(
        json.dumps({"x": {"command": "sh", "env": {"V": value}}}), path=Path("f")
    )
    assert not [p for p in report.problems if p.code == "plaintext_secret"]


def test_plain_http_warns_except_loopback() -> None:
    assert ("warning", "insecure_url") in [
        (s, c) for s, c, *_ in problems('{"x": {"url": "http://example.com/mcp"}}')
    ]
    for host in ("127.0.0.1:8000", "localhost", "[::1]:9"):
        assert problems(f'{{"x": {{"url": "http://{host}/mcp"}}}}') == []


def test_a_url_that_cannot_be_parsed_is_one_error() -> None:
    found = problems('{"x": {"url": "https://[h.example/mcp", "transport": "sse"}}')
    assert [(s, p) for s, _, p, *_ in found] == [("error", "x.url")], found


def test_placeholders_that_will_not_expand_warn() -> None:
    found = problems('{"x": {"command": "sh", "env": {"A": "$HOME/x", "B": "${lower}"}}}')
    assert [c for _, c, *_ in found].count("unexpanded_placeholder") == 2


def test_missing_command_is_a_warning_unless_strict() -> None:
    text = '{"x": {"command": "definitely-not-installed-mcp"}}'
    assert problems(text) == [("warning", "command_not_found", "x.command", 1, 19)]
    assert problems(text, strict_commands=True)[0][0] == "error"
    assert problems('{"x": {"command": "${BIN}"}}') == []


def test_invalid_json_reports_line_and_column() -> None:
    found = problems('{\n  "a": {"command": "sh",}\n}')
    assert found == [("error", "config_syntax", "$", 2, 24)]  # the comma itself
    report = validate_text('{\n  "a": {"command": "sh",}\n}', path=Path("f"))
    assert "trailing comma" in report.problems[0].message


@pytest.mark.parametrize("text", ["[]", '"x"', "", "{", "nul"])
def test_not_an_object(text: str) -> None:
    report = validate_text(text, path=Path("f"))
    assert not report.ok and report.errors[0].code == "config_syntax"


def test_validate_config_missing_file(tmp_path: Path) -> None:
    report = validate_config(tmp_path / "nope.json")
    assert not report.ok and report.errors[0].code == "not_found"


def test_the_orchestrators_format_validates(tmp_path: Path) -> None:
    from tests.cli.test_servers import ORCHESTRATOR_FILE

    path = write_config(tmp_path / "external-mcps.json", ORCHESTRATOR_FILE)
    report = validate_config(path)
    assert report.ok and [p.code for p in report.problems] in ([], ["command_not_found"])


# --- CLI -------------------------------------------------------------------------------


def test_cli_validate_text_and_exit_codes(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"ok": {"command": "sh"}})
    r = cli("validate")
    assert r.exit_code == 0 and "valid (1 server)" in r.stdout
    config_path.write_text('{\n  "a": {"comand": "sh"}\n}\n')
    r = cli("validate")
    assert r.exit_code == 1
    assert "external-mcps.json:2:9: error: unknown field 'comand'" in r.stdout
    assert "error" in r.stdout.splitlines()[-1]


def test_cli_validate_github_annotations(cli: Cli, config_path: Path) -> None:
    config_path.write_text('{\n  "a": {"comand": "sh"},\n  "b": {"url": "http://example.com"}\n}\n')
    r = cli("validate", "--format", "github")
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert any(
        line.startswith(
            "::error file=external-mcps.json,line=2,col=9,title=mcpctl unknown_field::a.comand"
        )
        for line in lines
    )
    assert any(line.startswith("::warning file=external-mcps.json,line=3,") for line in lines)


def test_cli_validate_json(cli: Cli, config_path: Path) -> None:
    config_path.write_text('{"a": {"command": 1}}')
    for args in (["validate", "--format", "json"], ["validate", "--json"]):
        r = cli(*args)
        assert r.exit_code == 1
        doc = r.json
        assert doc["command"] == "validate" and doc["ok"] is False
        assert doc["data"]["valid"] is False and doc["data"]["problems"][0]["path"] == "a.command"


def test_cli_schema_is_the_pydantic_schema_and_validates_examples(cli: Cli) -> None:
    r = cli("schema")
    assert r.exit_code == 0
    schema = json.loads(r.stdout)
    assert schema["$schema"].startswith("https://json-schema.org/")
    entry = schema["$defs"]["ServerEntry"]
    assert set(entry["properties"]) == {
        "command", "args", "env", "cwd", "inherit_env", "url", "transport", "headers",
        "allow_literal", "auth", "timeout", "protocol", "sensitive", "description", "groups",
        "enabled", "tools", "source",
    }  # fmt: skip
    assert entry["additionalProperties"] is False
    assert cli("schema", "--json").json["data"] == schema
    jsonschema = pytest.importorskip("jsonschema")
    from tests.cli.test_servers import ORCHESTRATOR_FILE

    jsonschema.validate({"$schema": "x", **ORCHESTRATOR_FILE}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"x": {"comand": "sh"}}, schema)


def test_internal_name_conflict_is_reported(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    report = validate_text(
        '{"guardian": {"command": "sh"}}', path=Path("f"), internal_names=["guardian"]
    )
    assert [p.code for p in report.errors] == ["internal_conflict"]
    root = tmp_path / "mcps" / "guardian"
    root.mkdir(parents=True)
    (root / "package.json").write_text('{"name": "guardian", "annabelle": {}}')
    write_config(config_path, {"guardian": {"command": "sh"}})
    r = cli("validate", "--internal-root", str(tmp_path / "mcps"))
    assert r.exit_code == 1 and "internal MCP" in r.stdout


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [("env", "BRAVE_API_KEY", "mypassword123"), ("env", "DB_PASS", "hunter2"),
     ("headers", "Authorization", "Bearer abc"), ("headers", "X-Api-Key", "abc")],
)  # fmt: skip
def test_literals_under_secret_names_are_flagged(section: str, key: str, value: str) -> None:
    entry = {"command": "sh", "env": {key: value}} if section == "env" else {
        "url": "https://h.example", "headers": {key: value}}  # fmt: skip
    report = validate_text(json.dumps({"x": entry}), path=Path("f"))
    [problem] = report.problems
    assert (problem.severity, problem.code, problem.path) == (
        "error",
        "named_literal_secret",
        f"x.{section}.{key}",
    )
    assert problem.line == 1 and value not in problem.message + str(problem.hint)
    assert f'"allow_literal": ["{key}"]' in str(problem.hint)
    allowed = {**entry, "allow_literal": [key]}
    assert validate_text(json.dumps({"x": allowed}), path=Path("f")).problems == []


@pytest.mark.parametrize(
    "value",
    ["${BRAVE_API_KEY}", "Bearer ${TOKEN}", "${BRAVE_API_KEY:-default}", "", "true", "4096"],
)
def test_placeholders_under_secret_names_are_fine(value: str) -> None:
    entry = {"command": "sh", "env": {"BRAVE_API_KEY": value}}
    assert validate_text(json.dumps({"x": entry}), path=Path("f")).problems == []


def test_allow_literal_must_be_a_list_of_names() -> None:
    report = validate_text(
        json.dumps({"x": {"command": "sh", "allow_literal": ["A=B"]}}), path=Path("f")
    )
    assert [p.path for p in report.errors] == ["x.allow_literal[0]"]


@pytest.mark.parametrize(
    "arg",
    ["${GITHUB_TOKEN}", "--token=${GITHUB_TOKEN}", "${BRAVE_API_KEY}", "${DB_PASSWORD}",
     "postgres://u:${PG_PASS}@db/x", "${CLIENT_SECRET}", "${AWS_SECRET_ACCESS_KEY:-none}"],
)  # fmt: skip
def test_a_secret_placeholder_in_args_warns(arg: str) -> None:
    text = json.dumps({"s": {"command": "sh", "args": ["-c", arg]}})
    report = validate_text(text, path=Path("f.json"))
    [problem] = report.problems
    assert (problem.severity, problem.code, problem.path) == (
        "warning",
        "secret_args",
        "s.args[1]",
    )
    assert problem.line == 1 and report.ok  # a warning: validate still passes
    assert "every user of this machine can read it (ps, /proc)" in problem.message
    assert (problem.hint or "").startswith('pass it in "env" instead')


def test_what_is_not_a_secret_in_args() -> None:
    text = json.dumps({
        "ordinary": {"command": "sh", "args": ["${HOME}/x", "--port=${PORT}", "${KEYBOARD_LAYOUT}"]},
        "in_env": {"command": "sh", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
    })  # fmt: skip
    assert validate_text(text, path=Path("f.json")).problems == []


def test_a_variable_the_keyring_holds_is_a_secret_in_args() -> None:
    text = json.dumps({"s": {"command": "sh", "args": ["--brave", "${BRAVE}", "${HOME}"]}})
    assert validate_text(text, path=Path("f.json")).problems == []
    found = problems(text, secret_names=["BRAVE"])
    assert found == [("warning", "secret_args", "s.args[1]", 1, 45)]
    # Given as a function, the names are asked for once, and only when a placeholder needs it.
    calls: list[int] = []

    def names() -> list[str]:
        calls.append(1)
        return ["BRAVE"]

    assert problems(text, secret_names=names) == found and calls == [1]
    calls.clear()
    plain = json.dumps({"s": {"command": "sh", "args": ["${GH_TOKEN}", "x"], "env": {"A": "${B}"}}})
    assert [c for _, c, *_ in problems(plain, secret_names=names)] == ["secret_args"]
    assert calls == []


def test_a_file_that_is_missing_refused_or_not_utf8_is_one_problem(
    config_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPCTL_CONFIG", str(config_path))
    report = validate_config()  # the default config file
    assert report.path == config_path and not report.ok
    assert report.problems == [
        Problem(
            "error",
            "not_found",
            f"{config_path} does not exist",
            hint="create it with 'mcpctl add', or pass --config",
        )
    ]
    config_path.mkdir()
    report = validate_config(config_path)
    (problem,) = report.problems
    assert report.path == config_path and not report.ok
    assert (problem.severity, problem.code) == ("error", "config_error")
    assert str(config_path) in problem.message and problem.hint
    config_path.rmdir()
    config_path.write_bytes(b'{"a": {"command": "\xff"}}')
    report = validate_config(config_path)
    assert report.path == config_path
    assert report.problems == [Problem("error", "config_syntax", "not UTF-8 text (byte 19)")]


def test_the_file_is_checked_with_the_callers_options(config_path: Path) -> None:
    write_config(config_path, {"a": {"command": "./nope", "args": ["${SESSION}"]}})
    report = validate_config(config_path)
    assert [(p.severity, p.code) for p in report.problems] == [("warning", "command_not_found")]
    report = validate_config(config_path, strict_commands=True, secret_names=["SESSION"])
    assert sorted((p.severity, p.code) for p in report.problems) == [
        ("error", "command_not_found"),
        ("warning", "secret_args"),
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": "sh", "tools": {"alow": []}}, "unknown field 'alow' (did you mean 'allow'?)"),
        ({"command": "sh", "source": {"registry": "r", "name": "n", "version": "1", "nme": 1}},
         "unknown field 'nme' (did you mean 'name'?)"),
        ({"url": "https://x.test/", "auth": {"type": "bearer", "token": "${T}", "tokn": 1}},
         "unknown field 'tokn' (did you mean 'token'?)"),
        ({"url": "https://x.test/", "auth": {"type": "bearer", "token": "${T}", "typ": 1}},
         "unknown field 'typ' (did you mean 'type'?)"),
    ],
)  # fmt: skip
def test_an_unknown_field_is_matched_against_the_fields_of_its_own_object(
    entry: dict[str, object], message: str
) -> None:
    report = validate_text(json.dumps({"a": entry}), path=Path("f"))
    assert [(p.code, p.message) for p in report.problems] == [("unknown_field", message)]
