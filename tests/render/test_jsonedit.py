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


@pytest.mark.parametrize(
    ("text", "path", "expected"),
    [
        # the new member takes the indentation of the last one, whatever the unit
        ('{\n    "a": 1,\n    "b": 2\n}', ("s",), '{\n    "a": 1,\n    "b": 2,\n    "s": 1\n}'),
        # members on the line of the brace: the new one goes one unit in, on a line of its own
        ('{"a": 1}', ("s",), '{"a": 1,\n  "s": 1}'),
        ('{"a": 1}\n', ("s",), '{"a": 1,\n  "s": 1}\n'),
        ('{\n  "amp": {"x": true}\n}', ("amp", "s"), '{\n  "amp": {"x": true,\n    "s": 1}\n}'),
        # an empty object: the member one unit in from the line of its brace
        ('{\n  "amp": {}\n}', ("amp", "s"), '{\n  "amp": {\n    "s": 1\n  }\n}'),
        ("\n  {}", ("s",), '\n  {\n    "s": 1\n  }'),
    ],
)
def test_an_added_member_is_indented_like_its_neighbours(
    text: str, path: tuple[str, ...], expected: str
) -> None:
    assert edit(text, path, 1) == (expected, False)


def test_an_added_value_over_several_lines_is_indented_where_it_stands() -> None:
    assert edit("{}", ("s",), {"x": 1}) == ('{\n  "s": {\n    "x": 1\n  }\n}', False)


def test_a_new_key_is_written_as_it_is_not_escaped() -> None:
    assert edit("{}", ("café",), 1)[0] == '{\n  "café": 1\n}'
    assert edit('{"a": 1}', ("日本",), 1)[0] == '{"a": 1,\n  "日本": 1}'


def test_compact_json_is_edited_in_place() -> None:
    text = '{"a":1,"servers":{"x":1},"z":2}'
    assert edit(text, ("servers",), {}) == ('{"a":1,"servers":{},"z":2}', False)


def test_a_file_with_a_byte_order_mark_has_its_member_replaced_not_doubled() -> None:
    new, _ = edit('\ufeff{"servers": {"x": 1}}', ("servers",), {})
    assert new == '\ufeff{"servers": {}}'


@pytest.mark.parametrize(
    ("text", "dropped"),
    [
        # comments outside the value replaced are kept, so not reported
        ('{"servers": {"a": 1}, // theirs\n "x": 1}', False),
        ('{"servers": {"u": "http://a"}, // theirs\n "x": 1}', False),
        # a comment anywhere inside it is reported, before or between slashes in strings
        ('{"servers": {/* c */ "u": "a/b"}}', True),
        ('{"servers": {"a": "x/y", /* c */ "b": "z/w"}}', True),
    ],
)
def test_only_comments_inside_the_value_replaced_count_as_dropped(text: str, dropped: bool) -> None:
    new, lost = edit(text, ("servers",), {})
    assert lost is dropped
    assert ("theirs" in new) is ("theirs" in text)
