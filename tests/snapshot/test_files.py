"""Snapshot files: read as untrusted input with where and why, written without secrets."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpctl.config import redaction
from mcpctl.errors import UsageError
from mcpctl.snapshot.files import load_snapshot, save_snapshot
from mcpctl.snapshot.model import Definition, McpRecord, ServerState, Snapshot

SECRET = "s3cr3t-value-that-was-resolved-0123"
EXAMPLE = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2  # a server's example of a key, not a secret


@pytest.fixture
def known_secret() -> Iterator[str]:
    redaction.register([SECRET])
    try:
        yield SECRET
    finally:
        redaction.forget()


def refusal(path: Path) -> UsageError:
    with pytest.raises(UsageError) as caught:
        load_snapshot(path)
    return caught.value


def test_text_that_is_not_utf8_is_refused_with_where(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    path.write_bytes(b'{"mcps": [],\n "timestamp": "\xff"}')
    assert refusal(path).message == (
        f"{path} is not a snapshot: not UTF-8 text (byte 0xff) (line 2, column 16)"
    )


def test_a_key_written_twice_is_refused_with_where(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    path.write_text('{"mcps": [],\n  "mcps": []}', "utf-8")
    error = refusal(path)
    assert error.message.startswith(f"{path} is not a snapshot: ")
    assert "mcps" in error.message and error.message.endswith("(line 2, column 3)")


def test_json_that_is_not_a_snapshot_names_the_file_and_keeps_the_hint(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    path.write_text(json.dumps({"mcps": [{"name": "a"}, {"name": "a"}]}), "utf-8")
    error = refusal(path)
    try:
        Snapshot.from_data(json.loads(path.read_text("utf-8")))
    except UsageError as direct:
        assert error.message == f"{path} is {direct.message}"
        assert error.hint == direct.hint
    else:
        pytest.fail("the model accepted a second record of one server")


def test_a_lone_surrogate_a_server_sent_reads_back(tmp_path: Path) -> None:
    snap = Snapshot("2025-01-01T00:00:00Z")
    tool = {"name": "t", "description": "odd \ud800 text"}
    definition = Definition("t", "sha256:" + "1" * 64, tool)
    snap.mcps["a"] = McpRecord("a", probe=ServerState(tools={"t": definition}))
    path = tmp_path / "snap.json"
    save_snapshot(snap, path)
    loaded = load_snapshot(path)
    assert loaded == snap
    assert loaded is not None and loaded.mcps["a"].probe is not None
    assert loaded.mcps["a"].probe.tools["t"].data["description"] == "odd \ud800 text"


def test_a_resolved_secret_is_written_nowhere_keys_included(
    tmp_path: Path, known_secret: str
) -> None:
    snap = Snapshot("2025-01-01T00:00:00Z")
    tool = {
        "name": "t",
        "description": f"uses {known_secret} and shows {EXAMPLE}",
        "inputSchema": {"properties": {known_secret: {"type": "string"}}},
    }
    snap.mcps["a"] = McpRecord("a", probe=ServerState(tools={"t": Definition.of(tool)}))
    path = tmp_path / "snap.json"
    save_snapshot(snap, path)
    text = path.read_text("utf-8")
    assert known_secret not in text
    assert EXAMPLE in text  # what merely looks like a key is a server's example: kept
    written = json.loads(text)["mcps"][0]["probe"]["tools"][0]["definition"]
    assert written["description"] == f"uses **** and shows {EXAMPLE}"
    assert list(written["inputSchema"]["properties"]) == ["****"]


def test_saving_again_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    save_snapshot(Snapshot("2025-01-01T00:00:00Z", {"a": McpRecord("a")}), path)
    save_snapshot(Snapshot("2025-01-02T00:00:00Z"), path)
    loaded = load_snapshot(path)
    assert loaded == Snapshot("2025-01-02T00:00:00Z")
