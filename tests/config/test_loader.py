"""The lenient loader never raises; the strict validator never crashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl import load_config
from mcpctl.config.loader import (
    Document,
    LoadResult,
    build_config,
    missing_config_note,
    parse_document,
    read_config,
    read_document,
)
from mcpctl.config.model import Config, Problem
from mcpctl.errors import (
    ConfigError,
    ConfigInvalidError,
    ConfigNotFoundError,
    ConfigSyntaxError,
    ServerNotFoundError,
    StorageError,
)


def test_missing_file_is_an_empty_config(tmp_path: Path) -> None:
    result = load_config(tmp_path / "nope.json")
    assert result.ok and len(result.config) == 0 and not result.exists


def test_invalid_json_is_empty_with_a_positioned_problem(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{\n "a": }')
    result = load_config(path)
    assert len(result.config) == 0
    assert result.problems[0].code == "config_syntax" and result.problems[0].line == 2


def test_bad_entries_are_skipped_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({
        "$schema": "s", "good": {"command": "x"}, "bad": {"command": 1},
        "also good": {"command": "y"}, "remote": {"url": "https://h"}, "list": [],
    }))  # fmt: skip
    result = load_config(path)
    assert list(result.config.entries) == ["good", "remote"]
    assert result.config.extras == {"$schema": "s"}
    assert {p.path.split(".")[0].split("[")[0] for p in result.problems} >= {"bad", "list"}
    assert any("also good" in p.message for p in result.problems)


def test_unreadable_and_odd_files(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    assert load_config(tmp_path / "dir.json").problems
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe{}")
    assert load_config(tmp_path / "bin.json").problems[0].code == "config_syntax"
    (tmp_path / "bom.json").write_bytes(b'\xef\xbb\xbf{"a": {"command": "x"}}')
    assert list(load_config(tmp_path / "bom.json").config.entries) == ["a"]
    (tmp_path / "empty.json").write_text("")
    assert load_config(tmp_path / "empty.json").problems[0].code == "config_syntax"
    (tmp_path / "deep.json").write_text("[" * 100000)
    assert load_config(tmp_path / "deep.json").problems
    (tmp_path / "digits.json").write_text('{"a": ' + "9" * 5000 + "}")
    assert load_config(tmp_path / "digits.json").problems


def test_duplicate_keys_are_a_warning_for_the_loader(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"a": {"command": "x"}, "a": {"command": "y"}}')
    result = load_config(path)
    assert result.config.entries["a"].command == "y"
    assert result.problems[0].code == "duplicate_key"


def test_default_path_uses_the_environment(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "env.json"
    path.write_text('{"e": {"command": "x"}}')
    monkeypatch.setenv("MCPCTL_CONFIG", str(path))
    assert list(load_config().config.entries) == ["e"]


# --- what a command is told, in the loader's own words --------------------------------------


def _syntax(raw: bytes) -> ConfigSyntaxError:
    with pytest.raises(ConfigSyntaxError) as caught:
        parse_document(raw, Path("c.json"))
    return caught.value


@pytest.mark.parametrize(
    ("raw", "message", "line", "column"),
    [
        (b"\xff{}", "file is not UTF-8 text (byte 0xff)", 1, 1),
        (b"{}  \xfe", "file is not UTF-8 text (byte 0xfe)", 1, 5),
        (b'{\n  "a":\xff', "file is not UTF-8 text (byte 0xff)", 2, 7),
        (b'{\n\n  "a":\xff', "file is not UTF-8 text (byte 0xff)", 3, 7),
        (b'{"\xc3\xa9\xe2\x82\xac":\xff}', "file is not UTF-8 text (byte 0xff)", 1, 7),
        (b'\xef\xbb\xbf{\n "a": "\xff"}', "file is not UTF-8 text (byte 0xff)", 2, 8),
        (b"\xef\xbb\xbf{\n}\xff\n", "file is not UTF-8 text (byte 0xff)", 2, 2),
        (b'{\n "a": }', "invalid JSON: Expecting value", 2, 7),
        (b'{"a": 1,}', "invalid JSON: trailing comma before '}' (JSON allows none)", 1, 8),
        (b"[1]", "the top level must be a JSON object mapping names to servers, not list", 1, 1),
        (b'"s"', "the top level must be a JSON object mapping names to servers, not str", 1, 1),
        (b"[" * 100_000, "invalid JSON: nested deeper than 200 levels", 1, 202),
    ],
)
def test_a_file_that_is_not_a_json_object_is_refused_at_its_place(
    raw: bytes, message: str, line: int, column: int
) -> None:
    error = _syntax(raw)
    assert (error.message, error.line, error.column) == (f"c.json:{line}:{column}: {message}",
                                                         line, column)  # fmt: skip
    assert error.path == "c.json" and error.hint is None


def test_an_empty_file_is_refused_with_what_to_write() -> None:
    error = _syntax(b" \n\t")
    assert error.message == "c.json:1:1: file is empty; expected a JSON object"
    assert error.hint == "write {} for a config with no servers"


def test_a_number_with_too_many_digits_is_refused_where_it_starts() -> None:
    error = _syntax(b'{"a":\n  ' + b"9" * 5000 + b"}")
    assert (error.line, error.column) == (2, 3)
    assert error.message.startswith("c.json:2:3: invalid JSON: ")
    assert "digits" in error.message


def test_a_document_keeps_the_bytes_the_order_and_the_keys_written_twice() -> None:
    raw = b'\xef\xbb\xbf{"b": 1, "a": {"x": 1, "x": 2}, "b": 3}'
    doc = parse_document(raw, Path("c.json"))
    assert doc == Document(Path("c.json"), {"b": 3, "a": {"x": 2}}, True, raw, ["x", "b"])
    assert list(doc.data) == ["b", "a"]
    assert doc != Document(Path("c.json"), {"b": 3, "a": {"x": 2}}, True, raw, ["b"])
    assert doc != Document(Path("c.json"), {"b": 3, "a": {"x": 2}}, False, raw, ["x", "b"])
    assert doc != Document(Path("d.json"), {"b": 3, "a": {"x": 2}}, True, raw, ["x", "b"])
    assert doc != Document(Path("c.json"), {"b": 3}, True, raw, ["x", "b"])
    assert doc != Document(Path("c.json"), {"b": 3, "a": {"x": 2}}, True, b"", ["x", "b"])
    assert doc.__eq__("not a document") is NotImplemented
    assert repr(Document(Path("c"), {"a": 1}, False)) == (
        f"Document(path={Path('c')!r}, data={{'a': 1}}, exists=False, raw=b'', duplicates=[])"
    )


def test_a_missing_file_is_an_empty_document(tmp_path: Path) -> None:
    assert read_document(tmp_path / "c.json") == Document(tmp_path / "c.json", {}, False)


def test_a_path_that_is_not_a_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        read_document(tmp_path)
    assert caught.value.message == f"{tmp_path} is a directory, not a regular file"


def test_a_file_that_cannot_be_read_says_to_check_its_permissions(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("{}")
    with pytest.raises(StorageError) as caught:
        read_document(tmp_path / "f" / "c.json")  # below a file: it cannot be opened
    assert caught.value.message == f"cannot read {tmp_path / 'f' / 'c.json'}: Not a directory"
    assert caught.value.hint == "check the file's permissions"


def test_build_config_skips_bad_entries_naming_each_and_keeps_dollar_keys() -> None:
    config, problems = build_config(
        {"$schema": "s", "a": {"command": "x"}, "b": {"command": 1}, "$x": {"command": 1}}
    )
    assert list(config.entries) == ["a"] and config.extras == {"$schema": "s", "$x": {"command": 1}}
    assert problems == [
        Problem("error", "wrong_type", "server 'b' skipped: expected a string, got a number",
                "b.command"),
    ]  # fmt: skip


def test_servers_wrapped_as_another_client_writes_them_are_one_problem() -> None:
    config, problems = build_config({"mcpServers": {"a": {"command": "x"}}, "b": {"command": "y"}})
    assert list(config.entries) == ["b"]
    assert [(p.code, p.path) for p in problems] == [("wrapped_servers", "mcpServers")]
    assert problems[0].hint == 'move the entries inside "mcpServers" up one level'


def test_read_config_reports_skipped_entries_and_keys_written_twice(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"a": {"command": "x"}, "b": {"command": 1}, "$s": 1, "a": {"command": "y"}}')
    result = read_config(path)
    assert result.exists and not result.ok
    assert [p.severity for p in result.problems] == ["error", "warning"]
    assert result.warnings == [
        "server 'b' skipped: expected a string, got a number",
        "key 'a' appears more than once; the last one is used",
    ]
    assert result.document is not None and result.document.duplicates == ["a"]
    assert result.entry("a").command == "y"


def test_a_warning_carries_its_hint() -> None:
    problem = Problem("error", "c", "said", hint="do this")
    result = LoadResult(Path("c.json"), Config(), [problem], True)
    assert result.warnings == ["said (do this)"]


def test_asking_for_a_server_names_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"alpha": {"command": "x"}, "b": {"command": 1}, "$s": {"command": "x"}}')
    result = read_config(path)
    with pytest.raises(ConfigInvalidError) as invalid:
        result.entry("b")
    assert (
        invalid.value.message == "server 'b' is invalid: b.command: expected a string, got a number"
    )
    assert invalid.value.hint == f"run 'mcpctl validate' to see every problem in {path}"
    with pytest.raises(ServerNotFoundError) as missing:
        result.entry("alpah")
    assert missing.value.message == f"no server 'alpah' in {path}"
    assert missing.value.hint == "did you mean 'alpha'?"
    with pytest.raises(ServerNotFoundError) as dollar:
        result.entry("$s")
    assert dollar.value.message == f"no server '$s' in {path}"
    assert dollar.value.hint == "run 'mcpctl list' to see the servers"  # not '$s' itself
    empty = LoadResult(path, Config(), [], False)
    with pytest.raises(ServerNotFoundError, match="no server 'x' in"):
        empty.entry("x")


def test_a_config_named_explicitly_must_exist(tmp_path: Path) -> None:
    assert read_config(tmp_path / "c.json").exists is False
    with pytest.raises(ConfigNotFoundError) as caught:
        read_config(tmp_path / "c.json", must_exist=True)
    assert caught.value.message == f"there is no config file at {tmp_path / 'c.json'}"
    assert caught.value.hint == (
        "check the path; 'mcpctl add' creates the file with its first server"
    )
    (tmp_path / "c.json").write_text("{}")
    assert read_config(tmp_path / "c.json", must_exist=True).ok


def test_the_note_for_a_missing_config_says_how_to_make_one(tmp_path: Path) -> None:
    path = tmp_path / "external-mcps.json"
    assert missing_config_note(path) == (
        f"no config file: {path} does not exist, nor does an external-mcps.json in this folder "
        "or above it; 'mcpctl add NAME -- COMMAND' creates it (--config FILE names another)"
    )
    path.symlink_to(tmp_path / "nowhere")  # a dangling link is there: reading it says why
    assert missing_config_note(path) is None


def test_the_lenient_loader_turns_each_refusal_into_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{\n "a": }')
    result = load_config(path)
    assert result == LoadResult(path, Config(), [Problem(
        "error", "config_syntax", f"{path}:2:7: invalid JSON: Expecting value", line=2, column=7,
    )], True)  # fmt: skip
    assert load_config(tmp_path) == LoadResult(tmp_path, Config(), [Problem(
        "error", "config_error", f"{tmp_path} is a directory, not a regular file",
    )], True)  # fmt: skip
    below = tmp_path / "c.json" / "x.json"
    assert load_config(below).problems == [
        Problem("error", "io_error", f"cannot read {below}: Not a directory")
    ]


def test_load_results_compare_on_every_field(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"a": {"command": "x"}}')
    first, second = load_config(path), load_config(path)
    assert first == second and first.document is not None
    assert first != LoadResult(path, first.config, first.problems, True, None)
    assert first != LoadResult(path, first.config, first.problems, False, first.document)
    assert first != LoadResult(path, Config(), first.problems, True, first.document)
    assert first != LoadResult(path, first.config, [Problem("error", "c", "m")], True,
                               first.document)  # fmt: skip
    assert first != LoadResult(tmp_path, first.config, first.problems, True, first.document)
    assert first.__eq__(path) is NotImplemented
    assert repr(LoadResult(Path("c"), Config(), [], False)) == (
        f"LoadResult(path={Path('c')!r}, config=Config(entries={{}}, extras={{}}),"
        " problems=[], exists=False, document=None)"
    )
