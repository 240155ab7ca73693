"""Positions on demand agree with the full position-tracking parse, and cost one pass."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpctl.config.jsonindex import JsonIndex, index_document
from mcpctl.config.jsontext import JsonPosError, parse_value_positions, parse_with_positions
from tests.config.test_jsontext import CountingText, many_entries, where

# Few distinct keys, so that objects often repeat one; odd ones among them.
keys = st.sampled_from(["a", "b", "command", "\u202e", "x\ud800"])
trees = st.recursive(
    st.none() | st.integers() | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3) | st.lists(st.tuples(keys, children), max_size=4)
    ),
    max_leaves=20,
)


def render(tree: object, rnd: random.Random) -> str:
    """JSON text of a tree (a list of pairs is an object, keys may repeat), odd white space."""

    def ws() -> str:
        return rnd.choice(["", " ", "\n", "\r\n", "\n  ", "\t"])

    if isinstance(tree, list) and tree and isinstance(tree[0], tuple):
        members = (f"{ws()}{json.dumps(k)}{ws()}:{ws()}{render(v, rnd)}{ws()}" for k, v in tree)
        return "{" + ",".join(members) + "}"
    if isinstance(tree, list):
        return "[" + ",".join(ws() + render(v, rnd) + ws() for v in tree) + "]" if tree else "{}"
    return json.dumps(tree)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(keys, trees), max_size=5), st.integers(0, 2**32))
def test_same_positions_and_duplicates_as_the_full_parse(
    members: list[tuple[str, object]], shuffle: int
) -> None:
    text = render(members, random.Random(shuffle)) if members else "{}"
    full, lazy = parse_with_positions(text), index_document(text)
    assert isinstance(lazy, JsonIndex)
    assert lazy.value == full.value == json.loads(text)
    assert lazy.duplicates == full.duplicates
    known = set(full.values) | set(full.keys)
    for path in known | {(*p, "missing") for p in known} | {(*p, 9) for p in known}:
        for prefer_key in (False, True):
            assert lazy.position(path, prefer_key=prefer_key) == full.position(
                path, prefer_key=prefer_key
            ), (text, path, prefer_key)
    for name in full.value:
        assert lazy.member_position(name) == full.member_position(name)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet='{}[]",: \n1ab\\', max_size=30))
def test_invalid_text_gets_the_full_parsers_error(tail: str) -> None:
    for text in (tail, '{"a": ' + tail, '{"a": {"b": 1},\n' + tail):
        try:
            expected: object = parse_with_positions(text).value
        except JsonPosError as exc:
            expected = (exc.msg, exc.line, exc.column)
        try:
            got: object = index_document(text).value
        except JsonPosError as exc:
            got = (exc.msg, exc.line, exc.column)
        assert got == expected, text


def test_not_an_object_is_parsed_in_full() -> None:
    assert not isinstance(index_document("[1, 2]"), JsonIndex)
    with pytest.raises(JsonPosError, match="trailing comma"):
        index_document('{"a": 1,\n}')


def test_members_are_parsed_for_positions_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = CountingText(many_entries(3000))
    parsed: list[int] = []
    real = parse_value_positions

    def spy(*args: object, **kw: object) -> object:
        parsed.append(1)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr("mcpctl.config.jsonindex.parse_value_positions", spy)
    doc = index_document(text)
    assert parsed == [] and doc.member_position("s2999") == where(text, '"s2999"')
    assert doc.position(("s1500", "args", 1)) == where(text, '"1500"')
    assert doc.position(("s1500", "env"), prefer_key=True) == where(text, '"env"', 1500)
    assert len(parsed) == 1
    # One pass for the members' keys, and each member asked about counts within itself.
    assert text.scanned <= len(text) + 200


def test_a_repeated_key_inside_a_member_is_found_with_its_position() -> None:
    text = '{"a": {"command": "sh"},\n "b": {"env": {"K": "1",\n  "K": "2"}}}'
    doc = index_document(text)
    assert doc.duplicates == [(("b", "env", "K"), (3, 3), (2, 16))]
    assert doc.value["b"] == {"env": {"K": "2"}}


def test_nesting_beyond_the_position_parser_is_accepted_like_json_loads() -> None:
    deep = "[" * 300 + "]" * 300
    text = '{"$deep": ' + deep + ',\n "x": {"command": "sh"}}'
    doc = index_document(text)
    assert doc.value == json.loads(text)
    assert doc.position(("$deep", *[0] * 250)) == (1, 2)  # the member's key
    with pytest.raises(JsonPosError, match="nested deeper"):
        index_document(deep)


def test_an_error_late_in_a_large_file_is_found_without_parsing_it_all_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def forbidden(text: str) -> None:
        raise AssertionError("parsed the whole text with positions")

    monkeypatch.setattr("mcpctl.config.jsonindex.parse_with_positions", forbidden)
    text = many_entries(2000)
    bad = text[: text.rindex("}")].rstrip() + ",\n}\n"
    with pytest.raises(JsonPosError, match="trailing comma") as info:
        index_document(bad)
    assert (info.value.line, info.value.column) == where(bad, ",\n}")


def test_a_member_is_placed_at_its_value_unless_its_key_is_asked_for() -> None:
    text = '{"a": 1,\n  "b":   {"command": "sh"}}'
    doc = index_document(text)
    assert isinstance(doc, JsonIndex)
    assert doc.position(("b",)) == (2, 10) and doc.position(("b",), prefer_key=True) == (2, 3)
    assert doc.position(("b", "command")) == (2, 22)
    assert doc.member_position("b") == (2, 3) and doc.member_position("c") is None


def test_a_members_text_runs_from_its_key_to_the_end_of_its_value() -> None:
    doc = index_document('{"a": 1,\n  "b": {"command": "sh"} ,\n "b": [2]\n}')
    assert doc.member_text("a") == '"a": 1'
    assert doc.member_text("b") == '"b": [2]'  # its last time
    assert doc.member_text("c") is None


def test_a_document_after_white_space_is_still_indexed_member_by_member() -> None:
    assert isinstance(index_document(' \n\t{"a": {"command": "sh"}}'), JsonIndex)


def test_indexing_leaves_the_garbage_collector_as_it_found_it() -> None:
    import gc

    assert gc.isenabled()
    index_document('{"a": 1}')
    assert gc.isenabled()
    gc.disable()
    try:
        index_document('{"a": 1}')
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("depth", [15, 16, 17, 198, 199])
def test_deep_members_have_the_positions_of_the_full_parse(depth: int) -> None:
    text = '{"a":\n ' + '{"k": ' * depth + "1" + "}" * depth + "}"
    full = parse_with_positions(text)
    lazy = index_document(text)
    for n in range(depth + 2):
        path = ("a", *["k"] * n)
        assert lazy.position(path) == full.position(path), n
        assert lazy.position(path, prefer_key=True) == full.position(path, prefer_key=True), n


def test_a_missing_path_is_placed_at_its_nearest_parent_that_exists() -> None:
    text = '{"s": {"env": {"K": {"deep": 1}}}}'
    full, lazy = parse_with_positions(text), index_document(text)
    # At the key of the deepest part that exists.
    for path, parent in [
        (("s", "env", "K", "deep", "x", "y"), ("s", "env", "K", "deep")),
        (("s", "env", "K", "nope", "z"), ("s", "env", "K")),
    ]:
        assert lazy.position(path) == full.position(path) == full.keys[parent]
