"""Files that may come from elsewhere are read only when regular and small, with errors that
name the file, the rule and the place (mcpctl.config.safefile)."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from mcpctl.config.safefile import (
    LIMIT_VARIABLE,
    MAX_FILE_BYTES,
    decode_text,
    describe_size,
    loads_json,
    lone_surrogate,
    read_file,
    read_text_file,
    refuse_unreadable,
    size_limit,
)
from mcpctl.errors import ConfigError, McpctlError, StorageError, UsageError


@pytest.fixture(autouse=True)
def _no_limit_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LIMIT_VARIABLE, raising=False)


# --- the size limit ---------------------------------------------------------------------


def test_the_limit_is_16_mib_unless_the_variable_says_otherwise() -> None:
    assert MAX_FILE_BYTES == 16 * 1024 * 1024
    assert size_limit({}) == MAX_FILE_BYTES
    assert size_limit({LIMIT_VARIABLE: ""}) == MAX_FILE_BYTES
    assert size_limit({LIMIT_VARIABLE: "  "}) == MAX_FILE_BYTES
    assert size_limit({LIMIT_VARIABLE: "10"}) == 10
    assert size_limit({LIMIT_VARIABLE: " 1 "}) == 1
    assert size_limit({LIMIT_VARIABLE: str(1 << 62)}) == 1 << 62


def test_the_limit_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert size_limit() == MAX_FILE_BYTES
    monkeypatch.setenv(LIMIT_VARIABLE, "123")
    assert size_limit() == 123


@pytest.mark.parametrize("raw", ["0", "-1", "1.5", "lots", "1e6", str((1 << 62) + 1)])
def test_a_limit_that_is_not_a_positive_number_of_bytes_is_refused(raw: str) -> None:
    with pytest.raises(UsageError) as caught:
        size_limit({LIMIT_VARIABLE: raw})
    assert caught.value.message == (
        f"MCPCTL_MAX_FILE_BYTES must be a positive number of bytes, not {raw!r}"
    )
    assert caught.value.hint == "for example MCPCTL_MAX_FILE_BYTES=67108864 (64 MiB)"


def test_a_refused_limit_is_shown_cut_and_raised_as_the_callers_error() -> None:
    with pytest.raises(ConfigError) as caught:
        size_limit({LIMIT_VARIABLE: "x" * 100}, error=ConfigError)
    assert caught.value.message.endswith(f"not {'x' * 40!r}")


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (0, "0 bytes"),
        (1, "1 byte"),
        (2, "2 bytes"),
        (1023, "1023 bytes"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (1024 * 1024 - 1, "1024.0 KiB"),
        (1024 * 1024, "1 MiB"),
        (16 * 1024 * 1024, "16 MiB"),
        (2 * 1024**3, "2 GiB"),
        (5 * 1024**3 // 2, "2.5 GiB"),
        (3 * 1024**4, "3 TiB"),
        (2048 * 1024**4, "2048 TiB"),
    ],
)
def test_sizes_are_described_for_people(size: int, shown: str) -> None:
    assert describe_size(size) == shown


# --- what is refused before reading -------------------------------------------------------


def test_a_missing_file_reads_as_none_and_a_regular_one_as_its_bytes(tmp_path: Path) -> None:
    assert read_file(tmp_path / "missing") is None
    (tmp_path / "f").write_bytes(b"\x00abc\xff")
    assert read_file(tmp_path / "f") == b"\x00abc\xff"
    assert read_file(str(tmp_path / "f")) == b"\x00abc\xff"
    (tmp_path / "empty").write_bytes(b"")
    assert read_file(tmp_path / "empty") == b""


def test_a_file_larger_than_a_read_chunk_is_read_whole(tmp_path: Path) -> None:
    content = bytes(range(256)) * (3 * 4096 + 7)  # about 3 MiB, not a multiple of 1 MiB
    (tmp_path / "f").write_bytes(content)
    assert read_file(tmp_path / "f") == content


def test_a_file_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 10)
    assert read_file(tmp_path / "f", limit=10) == b"x" * 10
    with pytest.raises(UsageError) as caught:
        read_file(tmp_path / "f", limit=9)
    assert caught.value.message == (
        f"{tmp_path / 'f'} is 10 bytes, over the 9 bytes limit (MCPCTL_MAX_FILE_BYTES)"
    )
    assert caught.value.hint == (
        "if the file is really meant to be this large, raise MCPCTL_MAX_FILE_BYTES"
    )


def test_the_limit_comes_from_the_variable_unless_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f").write_bytes(b"x" * 10)
    monkeypatch.setenv(LIMIT_VARIABLE, "5")
    with pytest.raises(ConfigError, match=r"is 10 bytes, over the 5 bytes limit"):
        read_file(tmp_path / "f", error=ConfigError)
    assert read_file(tmp_path / "f", limit=10) == b"x" * 10
    monkeypatch.setenv(LIMIT_VARIABLE, "nonsense")
    with pytest.raises(ConfigError, match="must be a positive number"):
        read_file(tmp_path / "f", error=ConfigError)


def test_a_file_that_holds_more_than_its_size_says_is_refused_after_the_limit() -> None:
    # /proc files say they are empty and are not: the read stops one byte over the limit.
    status = Path("/proc/self/status")
    if not status.is_file() or status.stat().st_size != 0:
        pytest.skip("needs Linux's /proc")
    with pytest.raises(ConfigError) as caught:
        read_file(status, limit=4, error=ConfigError)
    assert caught.value.message == (
        "/proc/self/status is more than 4 bytes, over the 4 bytes limit (MCPCTL_MAX_FILE_BYTES)"
    )
    assert read_file(status, limit=1 << 20).startswith(b"Name:")  # type: ignore[union-attr]


@pytest.mark.parametrize("error", [UsageError, ConfigError])
def test_a_directory_is_refused_as_the_callers_error(tmp_path: Path, error: type) -> None:
    with pytest.raises(error) as caught:
        read_file(tmp_path, error=error)
    assert caught.value.message == f"{tmp_path} is a directory, not a regular file"
    assert caught.value.hint == "mcpctl reads only regular files"


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f")
    with pytest.raises(UsageError, match=r"f is a FIFO, not a regular file$"):
        read_file(tmp_path / "f")
    with pytest.raises(UsageError, match=r"f is a FIFO, not a regular file$"):
        refuse_unreadable(tmp_path / "f")


def test_a_character_device_is_refused() -> None:
    with pytest.raises(UsageError) as caught:
        read_file("/dev/null")
    assert caught.value.message == "/dev/null is a character device, not a regular file"


def test_a_socket_is_refused_naming_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        with pytest.raises(ConfigError) as caught:
            read_file(path, error=ConfigError)
        assert caught.value.message == f"{path} is a socket, not a regular file"
        assert caught.value.hint == "mcpctl reads only regular files"
        with pytest.raises(UsageError, match=r"s is a socket, not a regular file$"):
            refuse_unreadable(path)


def test_a_file_that_cannot_be_opened_is_a_storage_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(StorageError) as caught:
        read_file(tmp_path / "f" / "below")  # a file is no folder
    assert caught.value.message == f"cannot read {tmp_path / 'f' / 'below'}: Not a directory"


def test_refuse_unreadable_passes_what_a_writer_may_replace(tmp_path: Path) -> None:
    refuse_unreadable(tmp_path / "missing")
    (tmp_path / "f").write_bytes(b"x" * 10)
    refuse_unreadable(tmp_path / "f")
    os.symlink(tmp_path / "f", tmp_path / "link")
    refuse_unreadable(tmp_path / "link")


def test_refuse_unreadable_refuses_a_directory_and_a_file_over_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError) as caught:
        refuse_unreadable(tmp_path, error=ConfigError)
    assert caught.value.message == f"{tmp_path} is a directory, not a regular file"
    (tmp_path / "f").write_bytes(b"x" * 10)
    monkeypatch.setenv(LIMIT_VARIABLE, "10")
    refuse_unreadable(tmp_path / "f")
    monkeypatch.setenv(LIMIT_VARIABLE, "9")
    with pytest.raises(ConfigError) as caught:
        refuse_unreadable(tmp_path / "f", error=ConfigError)
    assert caught.value.message == (
        f"{tmp_path / 'f'} is 10 bytes, over the 9 bytes limit (MCPCTL_MAX_FILE_BYTES)"
    )
    monkeypatch.setenv(LIMIT_VARIABLE, "nine")
    with pytest.raises(ConfigError, match="must be a positive number"):
        refuse_unreadable(tmp_path / "f", error=ConfigError)


# --- text and JSON --------------------------------------------------------------------------


def test_text_is_utf8_with_a_byte_order_mark_dropped(tmp_path: Path) -> None:
    assert read_text_file(tmp_path / "missing") is None
    (tmp_path / "f").write_bytes(b"\xef\xbb\xbfh\xc3\xa9")
    assert read_text_file(tmp_path / "f") == "hé"
    assert decode_text(b"plain", "f") == "plain"


def test_text_that_is_not_utf8_is_refused_at_its_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"ab\n\xc3\xa9cd\xff")
    with pytest.raises(UsageError) as caught:
        read_text_file(tmp_path / "f")
    assert caught.value.message == f"{tmp_path / 'f'}:2:4: not UTF-8 text (byte 0xff)"
    with pytest.raises(UsageError) as caught:
        decode_text(b"\x80", "g")
    assert caught.value.message == "g:1:1: not UTF-8 text (byte 0x80)"


def test_a_caller_makes_its_own_error_from_the_line_and_column() -> None:
    def fail(message: str, line: int, column: int) -> McpctlError:
        return ConfigError(f"[{line},{column}] {message}")

    with pytest.raises(ConfigError) as caught:
        decode_text(b"x\ny\nzz\xfe", "f", fail=fail)
    assert caught.value.message == "[3,3] not UTF-8 text (byte 0xfe)"
    with pytest.raises(ConfigError) as caught:
        loads_json('{\n  "a": }', "f", fail=fail)
    assert caught.value.message == "[2,8] not valid JSON: Expecting value"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('"plain"', None),
        ('"\\u00e9"', None),
        ('"\\ud83d\\ude00"', None),  # a pair
        ('"\\uD83D\\uDE00"', None),
        ('"\\\\ud800"', None),  # an escaped backslash, then text
        ('"\\ud800"', ("\\ud800", 1)),
        ('"ab\\udc00"', ("\\udc00", 3)),
        ('"\\uDBFF x"', ("\\uDBFF", 1)),
        ('"\\\\\\ud800"', ("\\ud800", 3)),
        ('["\\ud83d\\ude00", "\\ude00"]', ("\\ude00", 18)),
        ('"\\ud83d\\ud83d\\ude00"', ("\\ud83d", 1)),
    ],
)
def test_the_first_lone_surrogate_is_found_where_it_is_written(
    text: str, found: tuple[str, int] | None
) -> None:
    assert lone_surrogate(text) == found


def test_json_is_parsed_with_the_hooks_given() -> None:
    assert loads_json('{"a": [1, 2.5]}', "f") == {"a": [1, 2.5]}
    assert loads_json('{"a": 2.5}', "f", parse_float=str) == {"a": "2.5"}


def test_invalid_json_is_refused_at_its_line_and_column() -> None:
    with pytest.raises(UsageError) as caught:
        loads_json('{"a": 1,\n "b" 2}', "conf.json")
    assert caught.value.message == "conf.json:2:6: not valid JSON: Expecting ':' delimiter"


def test_json_nested_too_deeply_is_refused_not_a_crash() -> None:
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(UsageError) as caught:
        loads_json(text, "deep.json")
    assert caught.value.message.startswith("deep.json:1:")
    assert "not valid JSON: " in caught.value.message
    assert "nest" in caught.value.message


def test_a_number_python_refuses_is_refused_as_json_at_its_place() -> None:
    text = '{"a":\n ' + "1" * 5000 + "}"
    with pytest.raises(UsageError) as caught:
        loads_json(text, "n.json")
    assert caught.value.message.startswith("n.json:2:2: not valid JSON: ")


def test_a_lone_surrogate_is_refused_unless_allowed() -> None:
    text = '{"a":\n  "x\\udc00"}'
    with pytest.raises(UsageError) as caught:
        loads_json(text, "f")
    assert caught.value.message == (
        "f:2:5: \\udc00 is a lone surrogate: a valid JSON escape, but not a character"
    )
    assert loads_json(text, "f", surrogates=True) == {"a": "x\udc00"}


def test_a_key_written_twice_is_refused_only_when_asked() -> None:
    text = '{"s": {"a": 1,\n  "b": 2,\n  "a": 3}}'
    assert loads_json(text, "f") == {"s": {"a": 3, "b": 2}}
    with pytest.raises(UsageError) as caught:
        loads_json(text, "f", unique_keys=True)
    assert caught.value.message == (
        "f:3:3: key s.a is written more than once (lines 1 and 3); "
        "a rewrite would keep only the last"
    )
    assert loads_json('{"a": 1, "b": {"a": 2}}', "f", unique_keys=True) == {
        "a": 1,
        "b": {"a": 2},
    }


def test_the_first_key_written_twice_is_the_one_named() -> None:
    text = '{"x": 1, "y": 1,\n "x": 2, "y": 2,\n "y": 3}'
    with pytest.raises(UsageError) as caught:
        loads_json(text, "f", unique_keys=True)
    assert caught.value.message == (
        "f:2:2: key x is written more than once (lines 1 and 2); a rewrite would keep only the last"
    )


def test_a_key_written_twice_with_a_control_character_is_shown_escaped() -> None:
    text = '{"a\\u001b": 1,\n "a\\u001b": 2}'
    with pytest.raises(UsageError) as caught:
        loads_json(text, "f", unique_keys=True)
    assert "\x1b" not in caught.value.message
    assert "is written more than once (lines 1 and 2)" in caught.value.message


def _block_device(tmp_path: Path) -> Path:
    node = tmp_path / "blk"
    try:
        os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(7, 0))
    except OSError:  # not root: a block device of the system's, when there is one
        found = next((p for p in Path("/dev").iterdir() if p.is_block_device()), None)
        if found is None:
            pytest.skip("no block device to look at, and mknod needs root")
        return found
    return node


def test_a_block_device_is_refused_naming_what_it_is(tmp_path: Path) -> None:
    device = _block_device(tmp_path)
    with pytest.raises(ConfigError) as caught:
        refuse_unreadable(device, error=ConfigError)
    assert caught.value.message == f"{device} is a block device, not a regular file"
    with pytest.raises(UsageError) as caught:
        read_file(device)
    assert caught.value.message == f"{device} is a block device, not a regular file"


def test_a_lone_surrogate_is_placed_by_the_lines_before_it_only() -> None:
    with pytest.raises(UsageError) as caught:
        loads_json('\n["\\ud800",\n "x"\n]', "f")
    assert caught.value.message.startswith("f:2:3: \\ud800 is a lone surrogate")
    with pytest.raises(UsageError) as caught:
        loads_json('[1,\n  "\\udfff", "\\n"\n,\n2]', "f")
    assert caught.value.message.startswith("f:2:4: \\udfff is a lone surrogate")


def test_a_key_written_twice_too_deep_to_place_is_still_named() -> None:
    # The positional parser stops at a depth of 200; json.loads goes on and sees the key.
    text = "[" * 250 + '{"a\\nb": 1, "a\\nb": 2}' + "]" * 250
    with pytest.raises(UsageError) as caught:
        loads_json(text, "f", unique_keys=True)
    assert caught.value.message == "f:1:1: key 'a\\\\nb' is written more than once in one object"
    text = "[" * 250 + '{"x": 1, "y": 1, "y": 2, "x": 3}' + "]" * 250
    with pytest.raises(UsageError) as caught:
        loads_json(text, "f", unique_keys=True)
    assert caught.value.message == "f:1:1: key 'y' is written more than once in one object"


def test_a_bad_byte_after_a_byte_order_mark_is_named_where_it_is() -> None:
    # The decoder counts from the byte after the mark: the error used to name the byte three
    # places earlier, and a column or line before the real one.
    with pytest.raises(UsageError) as caught:
        decode_text(b'\xef\xbb\xbf{\n "a": "\xff"}', "f")
    assert caught.value.message == "f:2:8: not UTF-8 text (byte 0xff)"
    with pytest.raises(UsageError) as caught:
        decode_text(b"\xef\xbb\xbfabc\xfe", "f")
    assert caught.value.message == "f:1:4: not UTF-8 text (byte 0xfe)"
    with pytest.raises(UsageError) as caught:
        decode_text(b"\xef\xbb", "f")  # half a mark is a bad byte itself
    assert caught.value.message == "f:1:1: not UTF-8 text (byte 0xef)"


def test_a_key_written_twice_with_a_newline_is_named_on_one_line() -> None:
    with pytest.raises(UsageError) as caught:
        loads_json('{"a\\nb": 1,\n "a\\nb": 2}', "f", unique_keys=True)
    assert caught.value.message == (
        "f:2:2: key ['a\\nb'] is written more than once (lines 1 and 2); "
        "a rewrite would keep only the last"
    )


def test_a_file_whose_read_fails_is_a_storage_error_naming_why() -> None:
    memory = Path("/proc/self/mem")  # a regular file whose first page cannot be read
    if not memory.is_file():
        pytest.skip("needs Linux's /proc")
    with pytest.raises(StorageError) as caught:
        read_file(memory)
    assert caught.value.message == "cannot read /proc/self/mem: Input/output error"
