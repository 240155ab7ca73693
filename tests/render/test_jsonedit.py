"""Editing a JSON file in place: the value at a path set, everything else byte for byte."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpctl.render.jsonedit import set_value
from mcpctl.render.readers import load_json


def dump(value: Any) -> str:
    return json.dumps(value, indent=2)


def edit(text: str, path: tuple[str, ...], value: Any) -> tuple[str, bool]:
    new, dropped = set_value(text, path, value, dump, "  ")
    load_json(new)  # always still JSON with comments
    return new, dropped


def test_a_value_is_replaced_and_nothing_else_moves() -> None:
    text = '{\n  // mine\n  "a": 1, /* x */\n  "servers": {"old": 1},\n  "z": [1, 2,],\n}\n'
    new, dropped = edit(text, ("servers",), {"s": {"command": "x"}})
    assert new == (
        '{\n  // mine\n  "a": 1, /* x */\n  "servers": {\n    "s": {\n      "command": "x"\n'
        '    }\n  },\n  "z": [1, 2,],\n}\n'
    )
    assert not dropped


def test_comments_inside_the_value_replaced_are_reported() -> None:
    text = '{"servers": {"a": 1 // theirs\n}, "url": "http://x/y"}'
    new, dropped = edit(text, ("servers",), {})
    assert dropped and "theirs" not in new and '"url": "http://x/y"' in new
    _, dropped = edit('{"servers": {"u": "http://a//b"}}', ("servers",), {})
    assert not dropped, "a slash in a string is no comment"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{}", '{\n  "s": 1\n}'),
        ("{ }\n", '{\n  "s": 1\n}\n'),
        ("{ // nothing yet\n}", '{\n  "s": 1 // nothing yet\n}'),
        ('{\n  "a": 1\n}', '{\n  "a": 1,\n  "s": 1\n}'),
        ('{\n  "a": 1, // note\n}', '{\n  "a": 1, // note\n  "s": 1\n}'),
        ('{\n  "a": 1 // note\n}', '{\n  "a": 1, // note\n  "s": 1\n}'),
        ('{\n  "a": 1 /* note */ ,\n}', '{\n  "a": 1 /* note */ ,\n  "s": 1\n}'),
        ('\ufeff{"a": 1}', '\ufeff{"a": 1,\n  "s": 1}'),
    ],
)
def test_a_missing_member_is_added_last(text: str, expected: str) -> None:
    assert edit(text, ("s",), 1) == (expected, False)


def test_missing_parents_are_added_as_objects() -> None:
    new, _ = edit('{\n  "amp": {\n    "x": true\n  }\n}', ("amp", "mcp", "servers"), {})
    assert load_json(new) == {"amp": {"x": True, "mcp": {"servers": {}}}}
    assert new.startswith('{\n  "amp": {\n    "x": true,\n    "mcp": {\n      "servers": {}')
