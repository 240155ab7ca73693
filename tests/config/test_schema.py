"""The model of record's own words, as ``mcpctl validate`` shows them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.validate import validate_text


def problems(entry: dict[str, Any]) -> list[tuple[str, str, str]]:
    report = validate_text(json.dumps({"a": entry}), path=Path("f"))
    return [(p.code, p.path, p.message) for p in report.errors]


NULL = "null is not allowed here; leave the field out instead"


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        ({"command": "sh", "cwd": None}, "a.cwd"),
        ({"command": "sh", "args": None}, "a.args"),
        ({"url": "https://x.test/", "auth": {"type": "header", "name": None, "value": "${V}"}},
         "a.auth.name"),
        ({"url": "https://x.test/", "auth": {"type": "oauth", "scopes": None}}, "a.auth.scopes"),
    ],
)  # fmt: skip
def test_a_null_is_refused_with_the_advice_to_leave_the_field_out(
    entry: dict[str, Any], path: str
) -> None:
    assert problems(entry) == [("invalid_value", path, NULL)]


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        ({"command": " \t"}, "a.command"),
        ({"command": "sh", "cwd": ""}, "a.cwd"),
        ({"url": "https://x.test/", "auth": {"type": "header", "name": " ", "value": "${V}"}},
         "a.auth.name"),
    ],
)  # fmt: skip
def test_a_blank_string_is_refused_where_a_value_is_needed(
    entry: dict[str, Any], path: str
) -> None:
    assert problems(entry) == [("invalid_value", path, "must not be empty")]
