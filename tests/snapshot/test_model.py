"""The snapshot and its file: round trips, stable output, the orchestrator's plain format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import UsageError
from mcpctl.snapshot.files import load_snapshot, save_snapshot
from mcpctl.snapshot.model import Definition, McpRecord, ServerState, Snapshot, snapshot_of_config

SECRET = "ghp_literalSecretValue1234567890abcdef"
ENTRIES = {
    "time": ServerEntry(command="uvx", args=("mcp-server-time",)),
    "github": ServerEntry(url="https://api.example.com/mcp", headers={"Authorization": SECRET}),
    "off": ServerEntry(command="npx", enabled=False),
}
INTERNAL = {"guardian": ServerEntry(command="node", args=("dist/index.js",))}


def probed() -> Snapshot:
    snap = snapshot_of_config(ENTRIES, internal=INTERNAL, timestamp="2025-01-02T03:04:05Z")
    tool = {"name": "get_time", "description": "Now.", "inputSchema": {"type": "object"}}
    snap.mcps["time"].probe = ServerState(
        server_info={"name": "mcp-time", "version": "1.0"},
        instructions_sha256="sha256:" + "0" * 64,
        tools={"get_time": Definition.of(tool)},
        prompts={"p": Definition.of({"name": "p", "arguments": []})},
        resource_templates={"memo": Definition.of({"name": "memo", "uriTemplate": "m://{k}"})},
    )
    snap.mcps["github"].probe = ServerState(error="timeout")
    return snap


def test_snapshot_of_config_records_the_enabled_servers() -> None:
    snap = snapshot_of_config(ENTRIES, internal=INTERNAL)
    assert set(snap.mcps) == {"time", "github", "guardian"}
    assert snap.mcps["guardian"].type == "internal" and snap.mcps["time"].type == "external"
    assert snap.mcps["github"].transport == "streamable-http"
    assert snap.mcps["time"].fingerprint is not None
    assert set(snap.mcps["time"].fields) == {"command", "args"}
    assert snap.timestamp.endswith("Z") and not snap.probed


def test_save_then_load_is_equal(tmp_path: Path) -> None:
    for snap in (snapshot_of_config(ENTRIES, internal=INTERNAL), probed()):
        path = tmp_path / "snap.json"
        save_snapshot(snap, path)
        assert load_snapshot(path) == snap


def test_written_files_are_stable_and_sorted(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    save_snapshot(probed(), a)
    reordered = probed()
    reordered.mcps = dict(reversed(list(reordered.mcps.items())))
    save_snapshot(reordered, b)
    assert a.read_bytes() == b.read_bytes()
    data = json.loads(a.read_text())
    assert [m["name"] for m in data["mcps"]] == ["github", "guardian", "time"]
    assert data["mcps"][0]["probe"] == {"error": "timeout"}
    tools = data["mcps"][2]["probe"]["tools"]
    assert tools[0]["definition"]["description"] == "Now."  # the whole definition is kept


def test_no_secret_reaches_the_file(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    save_snapshot(probed(), path)
    assert SECRET not in path.read_text()


def test_the_orchestrators_plain_format_is_read(tmp_path: Path) -> None:
    path = tmp_path / "last-known-mcps.json"
    path.write_text(json.dumps({
        "timestamp": "2025-01-01T00:00:00.000Z",
        "mcps": [{"name": "guardian", "type": "internal"}, {"name": "github", "type": "external"}],
    }))  # fmt: skip
    snap = load_snapshot(path)
    assert snap is not None and snap.timestamp == "2025-01-01T00:00:00.000Z"
    assert snap.mcps == {
        "guardian": McpRecord("guardian", "internal"),
        "github": McpRecord("github", "external"),
    }
    assert not snap.probed


def test_a_missing_file_is_no_snapshot(tmp_path: Path) -> None:
    assert load_snapshot(tmp_path / "none.json") is None


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"timestamp": "t", "mcps": []}).encode())
    snap = load_snapshot(path)
    assert snap is not None and snap.mcps == {}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "not a snapshot"),
        ('{"timestamp": "t"}', "not a snapshot"),
        ('{"mcps": [{"type": "external"}]}', "needs a name"),
        ('{"mcps": ["github"]}', r"mcps\[0\]: expected an object, got a string"),
    ],
)
def test_bad_files_are_usage_errors(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(UsageError, match=says) as caught:
        load_snapshot(path)
    assert str(path) in caught.value.message


def test_unknown_fields_are_tolerated() -> None:
    snap = Snapshot.from_data({
        "mcps": [{"name": "a", "future": 1, "fields": {"x": "sha256:2"}, "probe": {"tools": [
            {"name": "t", "fingerprint": "sha256:1", "later": True},
        ], "newer": []}}],
    })  # fmt: skip
    record = snap.mcps["a"]
    assert record.type == "external" and record.fields == {"x": "sha256:2"}
    assert record.probe is not None and list(record.probe.tools) == ["t"]
    assert record.probe.tools["t"].data == {}


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ({"name": "a", "fields": {"x": 1}}, "mcps[0].fields.x (server 'a'): expected a string, "
         "got a number"),
        ({"name": "a", "probe": {"tools": ["t"]}},
         "mcps[0].probe.tools[0] (server 'a'): expected an object, got a string"),
        ({"name": "a", "probe": {"tools": [{"no": "name"}]}},
         "mcps[0].probe.tools[0].name (server 'a'): expected a string, got null"),
    ],
)  # fmt: skip
def test_odd_values_are_refused_with_their_path(item: dict[str, Any], says: str) -> None:
    with pytest.raises(UsageError) as caught:
        Snapshot.from_data({"mcps": [item]})
    assert caught.value.message == f"not a valid snapshot: {says}"
