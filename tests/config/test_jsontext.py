"""The position-tracking JSON parser agrees with json.loads and knows where things are."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpctl.config.jsontext import (
    MAX_DEPTH,
    POSITION_DEPTH,
    JsonPosError,
    LineIndex,
    dump_config,
    line_col,
    parse_object_rest,
    parse_value_positions,
    parse_with_positions,
    splice_canonical,
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


# --- what a user is told, and where ------------------------------------------------------


@pytest.fixture
def deep_stack() -> Iterator[None]:
    """Room on Python's stack for the parser's own limit to be the one reached (a tool that
    wraps each call, as a profiler or a mutation tester does, needs more frames a level)."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, 20_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def error_of(text: str) -> JsonPosError:
    with pytest.raises(JsonPosError) as info:
        parse_with_positions(text)
    return info.value


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ("", "unexpected end of file: expected a value", 1, 1),
        ("[1,\n", "unexpected end of file: expected a value", 2, 1),
        ("[1", "expected ',' or ']' after an array element", 1, 3),
        ("[1 2]", "expected ',' or ']' after an array element", 1, 4),
        ("[1,]", "trailing comma before ']' (JSON allows none)", 1, 3),
        ("[1, ]", "trailing comma before ']' (JSON allows none)", 1, 3),
        ('{"a": 1,}', "trailing comma before '}' (JSON allows none)", 1, 8),
        ('{"a": 1} 2', "extra data after the JSON document", 1, 10),
        ("{1: 2}", "expected a property name in double quotes", 1, 2),
        ('{"a": 1, }', "trailing comma before '}' (JSON allows none)", 1, 8),
        ('{"a" 1}', "expected ':' after a property name", 1, 6),
        ('{"a": 1 "b": 2}', "expected ',' or '}' after a property value", 1, 9),
        ('{"a": 1', "expected ',' or '}' after a property value", 1, 8),
        ('{"a\\x": 1}', "Invalid \\escape", 1, 4),
        ("[tru]", "Expecting value", 1, 2),
        ('{"a":\n  -}', "Expecting value", 2, 3),
    ],
)
def test_the_words_and_place_of_each_error(text: str, message: str, line: int, column: int) -> None:
    error = error_of(text)
    assert (error.msg, error.line, error.column) == (message, line, column)
    assert str(error) == f"{message} (line {line}, column {column})"


def test_a_number_python_will_not_read_is_refused_at_its_place() -> None:
    error = error_of("[1,\n " + "1" * 5000 + "]")  # more digits than int() allows
    assert error.msg.startswith("Exceeds the limit"), error.msg
    assert "5000 digits" in error.msg
    assert (error.line, error.column) == (2, 2)


def test_the_depth_limit_counts_from_the_documents_top(deep_stack: None) -> None:
    def nested(levels: int) -> str:
        return "[" * levels + "1" + "]" * levels

    assert parse_with_positions(nested(MAX_DEPTH)).value is not None
    error = error_of(nested(MAX_DEPTH + 1))
    assert error.msg == f"nested deeper than {MAX_DEPTH} levels"
    assert (error.line, error.column) == (1, MAX_DEPTH + 2)
    # Objects count as arrays do, one level each.
    objects = '{"k":' * MAX_DEPTH + "1" + "}" * MAX_DEPTH
    assert parse_with_positions(objects).value is not None
    error = error_of('{"k":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1))
    assert error.msg == f"nested deeper than {MAX_DEPTH} levels"
    assert (error.line, error.column) == (1, 5 * MAX_DEPTH + 6)
    # The rest of an object parsed from its first member on is one level down already.
    inside = '{"a": ' + nested(MAX_DEPTH - 1) + "}"
    assert parse_object_rest(inside, 1) is None
    with pytest.raises(JsonPosError, match="nested deeper"):
        parse_object_rest('{"a": ' + nested(MAX_DEPTH) + "}", 1)
    # So is a value parsed on its own, at the depth it is given.
    assert parse_value_positions("[[1]]", 0, levels=MAX_DEPTH - 2)[0].value == [[1]]
    with pytest.raises(JsonPosError, match="nested deeper"):
        parse_value_positions("[[1]]", 0, levels=MAX_DEPTH - 1)


def test_line_col_after_a_newline_at_the_start() -> None:
    assert line_col("\nab", 1) == (2, 1)
    assert line_col("\nab", 2) == (2, 2)
    assert line_col("a\nb", 2) == (2, 1)


def test_a_path_is_placed_at_its_value_unless_its_key_is_preferred() -> None:
    doc = parse_with_positions('{"a":\n  1}')
    assert doc.position(("a",)) == (2, 3)
    assert doc.position(("a",), prefer_key=True) == (1, 2)


def test_a_value_parsed_on_its_own_records_positions_from_its_depth() -> None:
    text = '{"k": ' + "[" * POSITION_DEPTH + "1" + "]" * POSITION_DEPTH + "}"
    start = text.index("[")
    deepest = (0,) * POSITION_DEPTH
    doc, end = parse_value_positions(text, start)
    assert end == len(text) - 1 and deepest in doc.values
    # One level down, the deepest part is one level too deep to be recorded.
    nested, _ = parse_value_positions(text, start, levels=1)
    assert deepest not in nested.values and deepest[:-1] in nested.values
    assert nested.position(deepest) == nested.values[deepest[:-1]]


def test_the_rest_of_an_object_is_checked_to_its_end() -> None:
    text = '{"a": 1,\n "b": [2]}'
    assert parse_object_rest(text, 1) is None
    with pytest.raises(JsonPosError, match="extra data") as info:
        parse_object_rest(text + " x", 1)
    assert (info.value.line, info.value.column) == (2, 12)


def test_a_late_part_is_placed_by_counting_lines_from_the_anchor_given() -> None:
    # A large document's member is parsed on its own: its line comes from an anchor near
    # it, without counting the newlines of the whole text before it again.
    head = '{"a": "' + "x\\n" * 5000 + '",\n'
    text = CountingText(head + ' "b": [1,\n 2,]}')
    start = len(head) + 1
    anchor = LineIndex(text).at(start)
    text.scanned = 0
    with pytest.raises(JsonPosError, match="trailing comma") as info:
        parse_object_rest(text, start, lines=LineIndex(text, (start, anchor)))
    assert (info.value.line, info.value.column) == (3, 3)
    assert text.scanned < len(head)
    valid = CountingText(head + ' "b": [1,\n 2]}')
    doc, _ = parse_value_positions(
        valid, valid.index("[1"), lines=LineIndex(valid, (start, anchor))
    )
    assert doc.values[(1,)] == (3, 2)
    assert valid.scanned < len(head)


# --- the canonical writer ------------------------------------------------------------------

entries = st.dictionaries(
    st.text(max_size=6), st.dictionaries(st.text(max_size=4), json_values, max_size=3), max_size=5
)


@settings(max_examples=50, deadline=None)
@given(entries)
def test_dump_config_is_json_dumps_with_two_spaces_and_a_newline(data: dict[str, Any]) -> None:
    assert dump_config(data) == (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def test_a_lone_surrogate_is_written_escaped() -> None:
    data = {"a": {"env": {"K": "\ud800é"}}}
    raw = dump_config(data)
    assert raw == (json.dumps(data, indent=2) + "\n").encode("ascii")
    assert b"\\ud800\\u00e9" in raw and json.loads(raw) == data


@settings(max_examples=50, deadline=None)
@given(entries, entries)
def test_a_spliced_file_is_the_file_written_whole(old: dict[str, Any], new: dict[str, Any]) -> None:
    spliced = splice_canonical(dump_config(old), old, new)
    # Nothing to reuse from an empty file: it is written whole.
    assert spliced == dump_config(new) or (spliced is None and not old and new)


def test_splicing_copies_the_text_of_unchanged_entries_only() -> None:
    old = {"a": {"command": "x"}, "b": {"url": "https://b"}, "c": {"args": ["1"]}}
    # The same file with the unchanged entry's text spelled differently: it is copied as is.
    raw = dump_config(old).replace(b'"command": "x"', b'"command":"x"')
    new = {"a": {"command": "x"}, "c": {"args": ["2"]}, "d": {"command": "\u00e9"}}
    spliced = splice_canonical(raw, old, new)
    assert spliced is not None
    assert spliced.replace(b'"command":"x"', b'"command": "x"') == dump_config(new)
    assert b'"command":"x"' in spliced


def test_splicing_gives_up_on_a_file_it_did_not_write() -> None:
    old = {"a": {"command": "x"}, "b": {"command": "y"}}
    raw = dump_config(old)
    new = {"a": {"command": "z"}, "b": {"command": "y"}}
    assert splice_canonical(b"{}\n", {}, new) is None  # nothing to reuse
    assert splice_canonical(raw, old, {}) == b"{}\n"
    assert splice_canonical(b"  " + raw, old, new) is None  # not the canonical start
    assert splice_canonical(raw + b" ", old, new) is None  # nor its end
    assert splice_canonical(raw.replace(b"\n}\n", b"}\n"), old, new) is None
    assert splice_canonical(raw.replace(b'  "b"', b' "b"'), old, new) is None  # one key less
    assert splice_canonical(raw, {"a": old["a"], "x": old["b"]}, new) is None  # other keys
    assert splice_canonical(raw, {"x": old["a"], "b": old["b"]}, new) is None
    assert splice_canonical(raw, old, {"a": {"command": "\ud800"}}) is None  # a lone surrogate
    assert splice_canonical(raw, old, new) == dump_config(new)


def test_keys_are_placed_down_to_the_recorded_depth() -> None:
    text = '{"k": ' * POSITION_DEPTH + "1" + "}" * POSITION_DEPTH
    doc = parse_with_positions(text)
    deepest = ("k",) * POSITION_DEPTH
    assert doc.keys[deepest] == (1, 6 * POSITION_DEPTH - 4)
    assert doc.position(deepest, prefer_key=True) == doc.keys[deepest]
