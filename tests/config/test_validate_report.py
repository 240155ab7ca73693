"""A report holds the first 1,000 problems in document order and counts the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl.config.jsontext import PositionedJson, parse_value_positions
from mcpctl.config.validate import MAX_PROBLEMS, validate_text
from mcpctl.config.validationreport import ProblemCollector
from tests.conftest import Cli, write_config

# 1,500 near-misses in one value, then one error further down.
MANY = {
    "a": {"command": "sh", "env": {"V": "$X " * 1500}},
    "b": {"command": 5},
}


def test_the_first_1000_are_reported_and_the_rest_counted() -> None:
    report = validate_text(json.dumps(MANY, indent=2), path=Path("f"))
    assert MAX_PROBLEMS == 1000 and len(report.problems) == 1000
    assert {p.code for p in report.problems} == {"unexpanded_placeholder"}
    assert report.omitted == 501 and (report.omitted_errors, report.omitted_warnings) == (1, 500)
    # The counts and the verdict look at every problem, the omitted error included.
    assert (report.error_count, report.warning_count) == (1, 1500)
    assert report.errors == [] and not report.ok
    data = report.to_dict()
    assert (data["errors"], data["warnings"], data["omitted"], data["valid"]) == (
        1,
        1500,
        501,
        False,
    )
    assert len(data["problems"]) == 1000


def test_kept_in_document_order_whatever_order_they_are_found_in() -> None:
    # Repeated keys are found first but written last; the entries' errors come before them.
    entries = ",\n".join(f'  "s{i}": {{"command": 5}}' for i in range(1100))
    text = "{\n" + entries + ',\n  "z": {"command": "sh"},\n  "z": {"command": "sh"}\n}\n'
    report = validate_text(text, path=Path("f"))
    assert [p.path for p in report.problems] == [f"s{i}.command" for i in range(1000)]
    assert [p.line for p in report.problems] == list(range(2, 1002))
    assert report.omitted_errors == 101 and report.error_count == 1101


def test_beyond_the_cut_nothing_is_positioned_or_formatted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[int] = []
    real = parse_value_positions

    def spy(*args: object, **kw: object) -> object:
        parsed.append(1)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr("mcpctl.config.jsonindex.parse_value_positions", spy)
    data = {f"s{i}": {"command": "sh", "args": [1]} for i in range(3000)}
    report = validate_text(json.dumps(data, indent=2), path=Path("f"))
    assert report.error_count == 3000 and len(report.problems) == 1000
    assert len(parsed) == 1000  # only the entries whose problems are reported

    formatted: list[str] = []

    def message(item: str) -> str:
        formatted.append(item)
        return item

    col = ProblemCollector(PositionedJson({}))
    col.add_each("warning", "w", ("s",), ["$X"] * 100_000, message)
    assert len(formatted) == 1000 and col.omitted_warnings == 99_000


def test_cli_text_ends_with_how_many_more(cli: Cli, config_path: Path) -> None:
    write_config(config_path, MANY)
    r = cli("validate")
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert lines[-2] == "... and 501 more problems"
    assert lines[-1].endswith(": 1 error, 1500 warnings in 2 servers")
    assert sum(": warning: " in line for line in lines) == 1000
    r = cli("validate", "--format", "github")
    assert r.stdout.splitlines()[-1].startswith("::notice title=mcpctl::... and 501 more problems")


def test_cli_json_says_how_many_were_omitted(cli: Cli, config_path: Path) -> None:
    write_config(config_path, MANY)
    doc = cli("validate", "--json").json
    assert doc["ok"] is False and doc["data"]["omitted"] == 501
    assert (doc["data"]["errors"], doc["data"]["warnings"]) == (1, 1500)
    assert len(doc["data"]["problems"]) == 1000
    write_config(config_path, {"ok": {"command": "sh"}})
    assert cli("validate", "--json").json["data"]["omitted"] == 0
