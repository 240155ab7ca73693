"""The readers of other tools' files, in-process: what each refuses, in which words, and where.
(The limits against whole commands: tests/adversarial/test_parser_bombs.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from mcpctl.render.readers import (
    MAX_ALIAS_VALUES,
    MAX_DEPTH,
    DocumentError,
    check_depth,
    load_json,
    load_toml,
    load_yaml,
    load_yaml_stream,
)


def refusal(read: Any, text: str, **kw: Any) -> DocumentError:
    with pytest.raises(DocumentError) as caught:
        read(text, **kw)
    return caught.value


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_document_error_says_where_and_as_a_usage_error_what_the_file_is_not() -> None:
    bad = DocumentError("no value", 3, 7)
    assert (str(bad), bad.problem, bad.line, bad.column, bad.syntax) == (
        "no value (line 3, column 7)", "no value", 3, 7, True)  # fmt: skip
    assert (
        bad.usage("a Cursor file").message
        == "this is not a Cursor file: no value (line 3, column 7)"
    )
    assert str(DocumentError("no value")) == "no value"
    limit = DocumentError("too big", syntax=False)
    assert limit.usage("a Cursor file").message == "too big"


def test_depth_up_to_the_limit_is_read_and_one_more_is_refused() -> None:
    part: Any = 1
    for _ in range(MAX_DEPTH):
        part = [part]
    check_depth(part)  # a value inside MAX_DEPTH lists
    check_depth({"a": 1})
    check_depth("text")
    with pytest.raises(DocumentError) as caught:
        check_depth([part])
    assert (str(caught.value), caught.value.line, caught.value.column, caught.value.syntax) == (
        f"nested deeper than {MAX_DEPTH} levels", 0, 0, False)  # fmt: skip
    empty: Any = []
    for _ in range(MAX_DEPTH):
        empty = [empty]
    check_depth(empty)  # nothing inside the last list: as the positional parser counts
    with pytest.raises(DocumentError):
        check_depth([empty])
    objects: Any = {}
    for _ in range(MAX_DEPTH):
        objects = {"k": objects, "other": [1]}
    with pytest.raises(DocumentError):
        check_depth(objects)
    check_depth(objects["k"])


def test_json_with_comments_unless_told_otherwise() -> None:
    assert load_json('{"a": 1, // note\n}') == {"a": 1}
    assert load_json('\ufeff{"a": 1}', comments=False) == {"a": 1}
    bad = refusal(load_json, '{"a": 1,}', comments=False)
    assert (bad.problem, bad.line, bad.column, bad.syntax) == (
        "Expecting property name enclosed in double quotes", 1, 9, True)  # fmt: skip
    bad = refusal(load_json, '{"a": 1,\n "b" 2}')
    assert (bad.problem, bad.line, bad.column) == ("Expecting ':' delimiter", 2, 6)


def test_json_hooks_apply_with_or_without_comments() -> None:
    assert load_json('{"a": 1.5}', parse_float=str) == {"a": "1.5"}
    assert load_json('{"a": 1.5} // x', parse_float=str) == {"a": "1.5"}


def test_json_nested_too_deep_is_refused_where_it_goes_too_deep() -> None:
    assert load_json(nested(MAX_DEPTH + 1)) is not None  # an empty list is no level
    bad = refusal(load_json, "[" * (MAX_DEPTH + 1) + "1" + "]" * (MAX_DEPTH + 1))
    assert (bad.problem, bad.line, bad.column) == (
        f"nested deeper than {MAX_DEPTH} levels", 1, MAX_DEPTH + 2)  # fmt: skip
    bad = refusal(load_json, nested(MAX_DEPTH + 2))  # refused where it goes too deep, as YAML
    assert (bad.problem, bad.line, bad.column) == (
        f"nested deeper than {MAX_DEPTH} levels", 1, MAX_DEPTH + 2)  # fmt: skip
    text = "\n  " + nested(MAX_DEPTH + 5)
    for kw in ({}, {"comments": False}):
        bad = refusal(load_json, text, **kw)
        assert (bad.problem, bad.line, bad.column, bad.syntax) == (
            f"nested deeper than {MAX_DEPTH} levels", 2, MAX_DEPTH + 4, False)  # fmt: skip
    bad = refusal(load_json, "// deep\n" + nested(MAX_DEPTH + 5))
    assert (bad.line, bad.column) == (2, MAX_DEPTH + 2)
    bad = refusal(load_json, nested(10_000))  # too deep for Python's own stack
    assert (bad.problem, bad.line) == (f"nested deeper than {MAX_DEPTH} levels", 1)


def test_a_number_python_refuses_is_a_syntax_error_with_its_place() -> None:
    bad = refusal(load_json, "// c\n" + "1" * 5000)
    assert (bad.line, bad.column, bad.syntax) == (2, 1, True)
    assert bad.problem.startswith("Exceeds the limit (4300 digits)")
    bad = refusal(load_json, '{"a":\n' + "1" * 5000 + "}", comments=False)
    assert (bad.line, bad.column) == (2, 1)


def test_a_key_written_twice_is_refused_when_keys_must_be_unique() -> None:
    text = '{\n "a": 1,\n "b": {"x": 1,\n  "x": 2}}'
    assert load_json(text) == {"a": 1, "b": {"x": 2}}
    bad = refusal(load_json, text, unique_keys=True)
    assert (str(bad), bad.line, bad.column, bad.syntax) == (
        "key b.x is written more than once (lines 3 and 4); a rewrite would keep only the "
        "last (line 4, column 3)", 4, 3, False)  # fmt: skip
    bad = refusal(load_json, '{"a": 1, // c\n "a": 2,}', unique_keys=True)
    assert (bad.line, bad.column) == (2, 2)  # in the text with its comments
    assert load_json('{"a": {"a": 1}}', unique_keys=True) == {"a": {"a": 1}}
    bad = refusal(load_json, '{"a\\nb": 1, "a\\nb": 2}', unique_keys=True)
    assert str(bad).startswith("key ['a\\nb'] is written more than once")  # on one line


def test_a_lone_surrogate_is_refused_when_asked() -> None:
    text = '{"a":\n "x\\ud800"}'
    assert load_json(text) == {"a": "x\ud800"}
    bad = refusal(load_json, text, surrogates=False)
    assert (str(bad), bad.syntax) == (
        "\\ud800 is a lone surrogate: a valid JSON escape, but not a character "
        "(line 2, column 4)", False)  # fmt: skip
    bad = refusal(load_json, '{"a": "\\ud800", // c\n}', surrogates=False)
    assert (bad.line, bad.column) == (1, 8)
    assert load_json('{"a": "\\ud83d\\ude00"}', surrogates=False) == {"a": "\U0001f600"}


def test_toml() -> None:
    assert load_toml('\ufeffa = 1\n[t]\nb = "x"\n') == {"a": 1, "t": {"b": "x"}}
    bad = refusal(load_toml, "a = ")
    assert (str(bad), bad.syntax) == ("Invalid value (at end of document)", True)
    assert load_toml("a = " + nested(MAX_DEPTH))["a"] is not None  # inside the table too
    inside = "[" * (MAX_DEPTH - 1) + "1" + "]" * (MAX_DEPTH - 1)
    assert load_toml("a = " + inside)["a"] is not None  # 1 inside the table and 199 lists
    assert refusal(load_toml, "a = [" + inside + "]").syntax is False
    bad = refusal(load_toml, "a = " + nested(MAX_DEPTH + 1))
    assert (str(bad), bad.syntax) == (f"nested deeper than {MAX_DEPTH} levels", False)
    bad = refusal(load_toml, "a = " + nested(100_000))  # deeper than Python's stack
    assert (str(bad), bad.syntax) == (f"nested deeper than {MAX_DEPTH} levels", False)


def test_yaml_documents() -> None:
    assert load_yaml("") is None
    assert load_yaml("# only a comment\n") is None
    assert load_yaml("\ufeffa: 1\n") == {"a": 1}
    assert load_yaml_stream("") == []
    assert load_yaml_stream("\ufeffa: 1\n---\nb: 2\n---\n") == [{"a": 1}, {"b": 2}, None]
    bad = refusal(load_yaml, "a: 1\n---\nb: 2\n")
    assert (str(bad), bad.syntax) == (
        "expected a single document in the stream: but found another document "
        "(line 2, column 1)", True)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("a: [1\nb: 2\n", "while parsing a flow sequence: did not find expected ',' or ']' "
         "(line 2, column 2)"),
        ("a: *nope\n", "found undefined alias (line 1, column 4)"),
        ("\t- x\n", "while scanning for the next token: found character that cannot start "
         "any token (line 1, column 1)"),
        ("a: !!python/object:os.system x\n", "could not determine a constructor for the tag "
         "'tag:yaml.org,2002:python/object:os.system' (line 1, column 4)"),
    ],
)  # fmt: skip
def test_what_is_not_yaml_is_refused_in_the_parsers_words(text: str, said: str) -> None:
    for read in (load_yaml, load_yaml_stream):
        bad = refusal(read, text)
        assert (str(bad), bad.syntax) == (said, True)


def test_yaml_with_a_lone_surrogate_is_refused_where_it_is() -> None:
    bad = refusal(load_yaml, 'a: 1\nb: "\ud800"\n')
    assert (str(bad), bad.syntax) == ("a lone surrogate (line 2, column 5)", True)


def test_yaml_aliases_that_refer_to_themselves_are_refused() -> None:
    for text, at in (("a: &x [*x]\n", (1, 4)), ("a: 1\nb: &x\n  c: *x\n", (2, 4))):
        bad = refusal(load_yaml, text)
        assert (bad.problem, (bad.line, bad.column), bad.syntax) == (
            "an alias refers to the value it is part of", at, False)  # fmt: skip


def aliases(size: int, times: int) -> str:
    """A list of ``size`` values, then a list of ``times`` aliases to it."""
    return f"a: &x [{', '.join(['1'] * size)}]\nb: [{', '.join(['*x'] * times)}]\n"


def test_aliases_may_add_up_to_the_limit_and_no_more() -> None:
    # The list and its values, repeated: each alias adds size + 1 values.
    assert len(load_yaml(aliases(99, MAX_ALIAS_VALUES // 100))["b"]) == 100
    bad = refusal(load_yaml_stream, aliases(99, MAX_ALIAS_VALUES // 100) + "c: *x\n")
    assert (str(bad), bad.syntax, bad.line) == (
        f"its aliases stand for {MAX_ALIAS_VALUES + 100:,} values more than are written, over "
        f"the limit of {MAX_ALIAS_VALUES:,} (an alias bomb)", False, 0)  # fmt: skip


def test_a_value_repeated_by_aliases_is_measured_once() -> None:
    text = "a: &a [1, 2]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c]\n"
    assert load_yaml(text)["d"][1][3][0] == [1, 2]


def test_yaml_nested_too_deep_is_refused_where_it_was_written() -> None:
    assert load_yaml("a: " + nested(MAX_DEPTH)) is not None  # an empty list is no level
    bad = refusal(load_yaml, "a: " + nested(MAX_DEPTH + 1))
    assert (bad.problem, bad.line, bad.column, bad.syntax) == (
        f"nested deeper than {MAX_DEPTH} levels", 1, 1, False)  # fmt: skip
    deep = "x: &d " + nested(MAX_DEPTH - 1) + "\ny:\n  - - *d\n"  # too deep through the alias
    assert load_yaml(deep.replace("- - *d", "- *d")) is not None
    bad = refusal(load_yaml, deep)
    assert (bad.problem, bad.line, bad.column) == (f"nested deeper than {MAX_DEPTH} levels", 1, 1)


def test_yaml_with_a_control_character_is_refused_in_the_readers_words() -> None:
    bad = refusal(load_yaml, "a: \x07\n")
    assert str(bad).startswith("unacceptable character #x0007: control characters are not allowed")
    assert (bad.line, bad.syntax) == (0, True)
