"""File registries: a JSON list of server.json documents (or records) read as a registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl.errors import UsageError
from mcpctl.registry.fileregistry import load_file_registry
from tests.registry.server import make_record

WEATHER = make_record("io.example/weather", "1.2.0", title="Weather")
NOTES = make_record("io.example/notes", "0.1.0", status="deprecated", latest=False)


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), "utf-8")
    return path


def summary(path: Path) -> list[tuple[str, str, str, bool | None]]:
    return [(r.name, r.version, r.status, r.is_latest) for r in load_file_registry(path)]


def test_a_list_of_server_json_documents(tmp_path: Path) -> None:
    path = write(tmp_path / "c.json", [WEATHER["server"], NOTES["server"]])
    assert summary(path) == [
        ("io.example/weather", "1.2.0", "active", None),
        ("io.example/notes", "0.1.0", "active", None),
    ]
    assert load_file_registry(path)[0].server == WEATHER["server"]


@pytest.mark.parametrize("wrap", [lambda rs: rs, lambda rs: {"servers": rs, "metadata": {}}])
def test_records_as_a_list_or_as_the_api_returns_them(tmp_path: Path, wrap: object) -> None:
    path = write(tmp_path / "c.json", wrap([WEATHER, NOTES]))  # type: ignore[operator]
    assert summary(path) == [
        ("io.example/weather", "1.2.0", "active", True),
        ("io.example/notes", "0.1.0", "deprecated", False),
    ]


def test_items_that_are_not_servers_are_skipped(tmp_path: Path) -> None:
    path = write(tmp_path / "c.json", [1, "x", None, {"name": "no-version"}, WEATHER, []])
    assert [r.name for r in load_file_registry(path)] == ["io.example/weather"]
    assert load_file_registry(write(tmp_path / "e.json", {"servers": []})) == []


def test_a_byte_order_mark_and_a_lone_surrogate_are_read(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    text = json.dumps([{"name": "io.x/odd", "version": "1", "description": "\\ud800"}])
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\\\\ud800", "\\ud800").encode())
    [found] = load_file_registry(path)
    assert found.name == "io.x/odd"
    assert found.server["description"] == "\ud800"


@pytest.mark.parametrize("data", [{}, {"servers": {}}, {"servers": "x"}, "servers", 3, None])
def test_anything_but_a_list_is_refused(tmp_path: Path, data: object) -> None:
    path = write(tmp_path / "c.json", data)
    with pytest.raises(UsageError) as caught:
        load_file_registry(path)
    assert caught.value.message == (
        f"registry file {path} must be a JSON list of server.json documents"
    )


def test_a_missing_file_is_a_usage_error_that_names_it(tmp_path: Path) -> None:
    path = tmp_path / "gone.json"
    with pytest.raises(UsageError) as caught:
        load_file_registry(path)
    assert caught.value.message == f"cannot read registry file {path}: No such file or directory"


def test_a_file_that_cannot_be_read_is_a_usage_error_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", "utf-8")
    path = tmp_path / "file" / "c.json"
    with pytest.raises(UsageError) as caught:
        load_file_registry(path)
    assert type(caught.value) is UsageError
    assert caught.value.message == f"cannot read {path}: Not a directory"


def test_a_file_that_is_not_json_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("[1,", "utf-8")
    with pytest.raises(UsageError, match=r"c\.json"):
        load_file_registry(path)
    path.write_bytes(b'["\xff"]')
    with pytest.raises(UsageError, match="not UTF-8") as caught:
        load_file_registry(path)
    assert str(path) in caught.value.message
