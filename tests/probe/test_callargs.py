"""A tool call's arguments from the command line, without a server: ``--args-json`` inline,
from a file or from stdin, and ``--arg KEY=VALUE`` pairs typed by the tool's input schema
(tests/cli/test_tools.py calls real tools with them)."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpctl.errors import UsageError
from mcpctl.probe.callargs import coerce, load_args_json, tool_arguments


def test_no_args_json_is_no_arguments() -> None:
    assert load_args_json(None) == {}


def test_an_inline_object_is_read_as_json() -> None:
    assert load_args_json('{"query": "mcp", "limit": 5}') == {"query": "mcp", "limit": 5}


def test_at_file_reads_the_object_from_that_file(tmp_path: Path) -> None:
    file = tmp_path / "args.json"
    file.write_bytes(b'\xef\xbb\xbf{"path": "/tmp", "deep": true}')  # a byte-order mark too
    assert load_args_json(f"@{file}") == {"path": "/tmp", "deep": True}


def test_at_a_missing_file_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(UsageError) as caught:
        load_args_json(f"@{missing}")
    assert caught.value.message == f"cannot read {missing}: No such file or directory"


def test_at_a_file_that_is_not_utf8_is_refused_naming_it(tmp_path: Path) -> None:
    file = tmp_path / "args.json"
    file.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(UsageError) as caught:
        load_args_json(f"@{file}")
    assert "not UTF-8 text (byte 0xff)" in caught.value.message
    assert str(file) in str(caught.value)


def test_dash_reads_the_object_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"from": "stdin"}'))
    assert load_args_json("-") == {"from": "stdin"}


@pytest.fixture
def terminal_stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """stdin is a real terminal (a pseudo-terminal's end)."""
    leader, follower = os.openpty()
    with open(follower, encoding="utf-8", closefd=True) as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        try:
            yield
        finally:
            os.close(leader)


@pytest.mark.usefixtures("terminal_stdin")
def test_dash_refuses_a_terminal_rather_than_wait_for_typing() -> None:
    with pytest.raises(UsageError) as caught:
        load_args_json("-")
    assert caught.value.message == (
        "--args-json - reads the arguments from stdin, but stdin is a terminal"
    )
    assert caught.value.hint == "pipe the JSON in, or pass --args-json '{...}'"


def test_text_that_is_not_json_is_a_usage_error_saying_so() -> None:
    with pytest.raises(UsageError) as caught:
        load_args_json("{query: mcp}")
    assert caught.value.message.startswith("--args-json is not valid JSON: ")
    assert "line 1 column 2" in caught.value.message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


@pytest.mark.parametrize("text", ["[1, 2]", '"mcp"', "5", "null"])
def test_json_that_is_not_an_object_is_refused(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        load_args_json(text)
    assert caught.value.message == "--args-json must be a JSON object of arguments"


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer"},
        "label": {"type": ["string", "null"]},
        "tags": {"type": "array"},
        "anything": {},
    },
}


def test_pairs_are_set_over_the_json_arguments_without_changing_them() -> None:
    given = {"query": "old", "deep": True}
    arguments = tool_arguments(["query=new", "limit=5"], given, SCHEMA)
    assert arguments == {"query": "new", "deep": True, "limit": 5}
    assert given == {"query": "old", "deep": True}


def test_each_value_is_typed_by_the_schema() -> None:
    arguments = tool_arguments(
        ["query=5", "limit=5", "label=true", "tags=[1, 2]", "anything=null", "other={}"],
        {},
        SCHEMA,
    )
    assert arguments == {
        "query": "5",
        "limit": 5,
        "label": "true",
        "tags": [1, 2],
        "anything": None,
        "other": {},
    }


def test_a_value_is_split_at_its_first_equals_sign() -> None:
    assert tool_arguments(["query=a=b", "limit="], {}, SCHEMA) == {"query": "a=b", "limit": ""}


@pytest.mark.parametrize("schema", [{}, {"properties": None}, {"type": "object"}])
def test_a_schema_without_properties_reads_values_as_json(schema: dict[str, Any]) -> None:
    assert tool_arguments(["n=5", "s=mcp"], {}, schema) == {"n": 5, "s": "mcp"}


@pytest.mark.parametrize("pair", ["query", "=value", "="])
def test_a_pair_without_a_key_and_an_equals_sign_is_refused(pair: str) -> None:
    with pytest.raises(UsageError) as caught:
        tool_arguments(["limit=5", pair], {}, SCHEMA)
    assert caught.value.message == f"--arg {pair!r} is not in the form key=value"


@pytest.mark.parametrize(
    ("value", "spec", "expected"),
    [
        ("5", {"type": "string"}, "5"),
        ("5", {"type": ["null", "string"]}, "5"),
        ("5", {"type": ["integer", "null"]}, 5),
        ("5", {"type": "integer"}, 5),
        ("5", {}, 5),
        ("5", None, 5),
        ("5", "string", 5),
        ('"quoted"', {"type": "number"}, "quoted"),
        ("not json", {"type": "integer"}, "not json"),
        ("{", None, "{"),
        ("", {"type": "object"}, ""),
    ],
)
def test_coerce_keeps_strings_and_reads_the_rest_as_json(
    value: str, spec: Any, expected: Any
) -> None:
    assert coerce(value, spec) == expected
