"""The position-tracking JSON parser agrees with json.loads and knows where things are."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpctl.config.jsontext import (
    POSITION_DEPTH,
    JsonPosError,
    LineIndex,
    line_col,
    parse_with_positions,
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from([None, 2, 0]))
def test_same_value_as_json_loads(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent)
    assert parse_with_positions(text).value == json.loads(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_rejects_what_json_rejects(text: str) -> None:
    try:
        expected = json.loads(text)
    except (ValueError, RecursionError):
        with pytest.raises(JsonPosError):
            parse_with_positions(text)
    else:
        # Compared as JSON text: NaN, which json.loads accepts, is not equal to itself.
        assert json.dumps(parse_with_positions(text).value) == json.dumps(expected)


def test_positions() -> None:
    text = '{\n  "a": {\n    "args": ["x", 2]\n  }\n}'
    doc = parse_with_positions(text)
    assert doc.values[("a",)] == (2, 8)
    assert doc.keys[("a", "args")] == (3, 5)
    assert doc.values[("a", "args", 1)] == (3, 19)
    assert doc.position(("a", "missing"), prefer_key=True) == (2, 3)


def test_error_position_and_depth() -> None:
    with pytest.raises(JsonPosError) as info:
        parse_with_positions('{"a": 1,\n "b" 2}')
    assert (info.value.line, info.value.column) == (2, 6)
    with pytest.raises(JsonPosError):
        parse_with_positions("[" * 10000)
    with pytest.raises(JsonPosError):
        parse_with_positions("1" * 5000)  # more digits than int() allows


def test_line_col() -> None:
    assert line_col("ab\ncd", 0) == (1, 1)
    assert line_col("ab\ncd", 4) == (2, 2)


# --- positions on multi-line documents, and in linear time ------------------------------

CRLF_DOC = (
    '{\r\n  "a": {\r\n    "command": "sh",\r\n    "args": [\r\n      "x",\r\n      2\r\n'
    '    ]\r\n  },\r\n  "b": 1\r\n}\r\n'
)


def where(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """(line, column) of the nth occurrence of ``needle``, counted by splitting lines."""
    index = -1
    for _ in range(nth + 1):
        index = text.index(needle, index + 1)
    before = text[:index].split("\n")
    return len(before), len(before[-1]) + 1


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_positions_of_values_and_keys_on_many_lines(newline: str) -> None:
    text = CRLF_DOC.replace("\r\n", newline)
    doc = parse_with_positions(text)
    assert doc.keys[("a",)] == (2, 3) and doc.values[("a",)] == (2, 8)
    assert doc.keys[("a", "command")] == (3, 5) and doc.values[("a", "command")] == (3, 16)
    assert doc.values[("a", "args", 0)] == (5, 7) == where(text, '"x"')
    assert doc.values[("a", "args", 1)] == (6, 7)
    assert doc.keys[("b",)] == (9, 3) and doc.values[("b",)] == (9, 8)
    assert doc.member_position("b") == (9, 3)


class CountingText(str):
    """A text that adds up how many characters its ``count()`` calls look at."""

    scanned = 0

    def count(self, sub: str, start: int | None = None, end: int | None = None) -> int:  # type: ignore[override]
        lo = 0 if start is None else start
        hi = len(self) if end is None else end
        self.scanned += max(0, hi - lo)
        return super().count(sub, lo, hi)


def many_entries(n: int) -> str:
    data = {f"s{i}": {"command": "sh", "args": ["-c", str(i)], "env": {"K": "v"}} for i in range(n)}
    return json.dumps(data, indent=2)


def test_positions_cost_one_pass_over_the_text() -> None:
    # Each position used to count the newlines from the start of the text: quadratic.
    text = CountingText(many_entries(2000))
    doc = parse_with_positions(text)
    assert doc.values[("s1999", "env", "K")] == where(text, '"v"', 1999)
    assert text.scanned <= len(text)


def test_line_index_forward_and_back() -> None:
    text = "ab\ncd\n\nef"
    lines = LineIndex(text)
    assert [lines.at(i) for i in (0, 4, 7, 8)] == [(1, 1), (2, 2), (4, 1), (4, 2)]
    assert lines.at(1) == (1, 2) and lines.at(3) == (2, 1)  # behind the cursor
    assert all(LineIndex(text).at(i) == line_col(text, i) for i in range(len(text) + 1))
    anchored = LineIndex(text, (3, (2, 1)))
    assert anchored.at(8) == (4, 2)


def test_deep_parts_report_their_nearest_recorded_parent() -> None:
    depth = POSITION_DEPTH + 5
    text = '{"a":\n' + "[" * depth + "1" + "]" * depth + "}"
    doc = parse_with_positions(text)
    deepest: tuple[str | int, ...] = ("a", *[0] * depth)
    assert deepest not in doc.values
    recorded: tuple[str | int, ...] = ("a", *[0] * (POSITION_DEPTH - 1))
    assert doc.position(deepest) == doc.values[recorded] == (2, POSITION_DEPTH)


def test_repeated_keys_at_any_depth_and_the_replaced_positions_go() -> None:
    inner = '{"k": {"x": 1},\n "k": {"y": 2}}'
    text = '{"a": ' + "[" * 30 + inner + "]" * 30 + "}"
    doc = parse_with_positions(text)
    ((path, at, first),) = doc.duplicates
    assert path == ("a", *[0] * 30, "k") and at == (2, 2) and first == where(text, '"k"')
    top = parse_with_positions('{"a": {"x": [1, 2]},\n"a": {"y": 3}}')
    assert ("a", "x") not in top.keys and ("a", "x", 1) not in top.values
    assert top.keys[("a", "y")] == (2, 7) and top.value == {"a": {"y": 3}}
