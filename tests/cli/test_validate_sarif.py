"""validate --format sarif: the problems as a SARIF 2.1.0 log, lines and columns included."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import Cli, write_config
from tests.snapshot.test_sarif import check_sarif

SECRET = "ghp_literalSecretValue1234567890abcdef"


def test_problems_with_their_lines_and_columns(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {
        "a": {"command": "definitely-not-installed-xyz", "bogus": 1},
        "b": {"url": "ftp://example.com"},
    })  # fmt: skip
    r = cli("validate", "--format", "sarif")
    assert r.exit_code == 1
    run = check_sarif(json.loads(r.stdout))
    text = cli("validate")
    # The same problems, at the same places, as the text output says.
    places = re.findall(
        r"external-mcps\.json:(\d+):(\d+): (error|warning): .*\[(\w+)\]", text.stdout
    )
    found = [
        (str(res["locations"][0]["physicalLocation"]["region"]["startLine"]),
         str(res["locations"][0]["physicalLocation"]["region"]["startColumn"]),
         res["level"], res["ruleId"])
        for res in run["results"]
    ]  # fmt: skip
    assert found == places and len(found) == 3
    assert {res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for res in run["results"]} == {"external-mcps.json"}  # fmt: skip
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert set(rules) == {"command_not_found", "unknown_field", "invalid_value"}
    assert rules["unknown_field"]["defaultConfiguration"]["level"] == "error"


def test_a_valid_file_is_a_log_without_results(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"time": {"url": "https://example.com/mcp"}})
    r = cli("validate", "--format", "sarif")
    assert r.exit_code == 0
    assert check_sarif(json.loads(r.stdout))["results"] == []


def test_warnings_do_not_fail_and_strict_commands_does(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"a": {"command": "definitely-not-installed-xyz"}})
    r = cli("validate", "--format", "sarif")
    assert r.exit_code == 0
    [result] = check_sarif(json.loads(r.stdout))["results"]
    assert result["level"] == "warning"
    r = cli("validate", "--format", "sarif", "--strict-commands")
    assert r.exit_code == 1
    assert check_sarif(json.loads(r.stdout))["results"][0]["level"] == "error"


def test_a_missing_file_and_invalid_json(cli: Cli, tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    r = cli("--config", str(missing), "validate", "--format", "sarif")
    assert r.exit_code == 1
    [result] = check_sarif(json.loads(r.stdout))["results"]
    assert result["ruleId"] == "not_found"
    assert "region" not in result["locations"][0]["physicalLocation"]
    broken = write_config(tmp_path / "broken.json", '{\n  "a": {"command": "x",}\n}\n')
    r = cli("--config", str(broken), "validate", "--format", "sarif")
    [result] = check_sarif(json.loads(r.stdout))["results"]
    assert result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    # A file outside the working directory: an absolute file URI.
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith(
        "file:///"
    )


def test_secrets_are_redacted(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"a": {"url": "https://example.com/mcp", "headers": {
        "Authorization": f"Bearer {SECRET}"}, "bogus": SECRET}})  # fmt: skip
    r = cli("validate", "--format", "sarif")
    assert SECRET not in r.stdout
    check_sarif(json.loads(r.stdout))


def test_omitted_problems_are_noted(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {f"s{i}": {"command": "x", "bogus": 1} for i in range(1001)})
    r = cli("validate", "--format", "sarif")
    run = check_sarif(json.loads(r.stdout))
    assert len(run["results"]) == 1000
    [note] = run["invocations"][0]["toolExecutionNotifications"]
    assert re.fullmatch(r"\.\.\. and \d+ more problems", note["message"]["text"])


def test_sarif_and_json_together_is_a_usage_error(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {})
    r = cli("validate", "--format", "sarif", "--json")
    assert r.exit_code == 2
    assert r.json["errors"][0]["message"] == "--json and --format sarif are two formats: choose one"


def test_a_literal_under_a_secret_name_is_its_own_rule(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {
        "hf_hub": {"command": "sh", "env": {"BRAVE_API_KEY": "mypassword123"}},
        "ok": {"command": "sh", "env": {"MY_PAT": "plain"}, "allow_literal": ["MY_PAT"]},
    })  # fmt: skip
    r = cli("validate", "--format", "sarif")
    assert r.exit_code == 1 and "mypassword123" not in r.stdout
    [result] = check_sarif(json.loads(r.stdout))["results"]
    assert (result["ruleId"], result["level"]) == ("named_literal_secret", "error")
    assert result["message"]["text"].startswith(
        "hf_hub.env.BRAVE_API_KEY: hf_hub.env.BRAVE_API_KEY"
    )


def test_a_secret_in_args_is_a_warning_in_every_format(
    cli: Cli, config_path: Path, memory_keyring: object
) -> None:
    from mcpctl.auth.secrets import SecretStore

    SecretStore().set("BRAVE", "kept-in-the-keyring")
    write_config(config_path, {
        "gh": {"command": "sh", "args": ["--token", "${GITHUB_TOKEN}"]},
        "brave": {"command": "sh", "args": ["--key-from", "${BRAVE}"]},
    })  # fmt: skip
    r = cli("validate", "--format", "sarif")
    assert r.exit_code == 0 and "kept-in-the-keyring" not in r.stdout
    results = check_sarif(json.loads(r.stdout))["results"]
    assert [(res["ruleId"], res["level"], res["properties"]["path"]) for res in results] == [
        ("secret_args", "warning", "gh.args[1]"),
        ("secret_args", "warning", "brave.args[1]"),  # the keyring holds BRAVE
    ]
    gh = cli("validate", "--format", "github")
    assert gh.exit_code == 0
    assert gh.stdout.count("::warning file=external-mcps.json,line=") == 2
    assert "title=mcpctl secret_args::gh.args[1]: ${GITHUB_TOKEN} is a secret" in gh.stdout
    text = cli("validate")
    assert "${BRAVE} is a secret on the server's command line" in text.stdout
    assert 'hint: pass it in "env" instead ("BRAVE": "${BRAVE}")' in text.stdout
