"""The position-tracking JSON parser agrees with json.loads and knows where things are."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpctl.config.jsontext import JsonPosError, line_col, parse_with_positions

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
