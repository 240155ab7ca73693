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


# --- what mutation testing found unpinned ----------------------------------------------------


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"mcps": [{"name": "a", "fields": {"x": True}}]},
         "mcps[0].fields.x (server 'a'): expected a string, got true"),
        ({"mcps": [{"name": "a", "fields": {"x": False}}]},
         "mcps[0].fields.x (server 'a'): expected a string, got false"),
        ({"mcps": [{"name": "a", "fields": {"x": [1]}}]},
         "mcps[0].fields.x (server 'a'): expected a string, got an array"),
        ({"mcps": [{"name": "a", "fields": {"x": {}}}]},
         "mcps[0].fields.x (server 'a'): expected a string, got an object"),
        ({"mcps": [{"name": "a", "fields": {"x": 1.5}}]},
         "mcps[0].fields.x (server 'a'): expected a string, got a number"),
        ({"mcps": [{"name": "a"}, {"name": "a"}]},
         "mcps[1] (server 'a'): a second record of this server"),
        ({"mcps": [{"name": 7}]}, "mcps[0].name: each server needs a name (a string), got a number"),
        ({"mcps": [{"name": "a\nb", "type": 1}]},
         "mcps[0].type (server 'a\\\\nb'): expected a string, got a number"),
        ({"mcps": [{"name": "a", "transport": 1}]},
         "mcps[0].transport (server 'a'): expected a string, got a number"),
        ({"mcps": [{"name": "a", "fingerprint": []}]},
         "mcps[0].fingerprint (server 'a'): expected a string, got an array"),
        ({"timestamp": 1, "mcps": []}, "timestamp: expected a string, got a number"),
        ({"format": "1", "mcps": []}, "format: expected an integer, got a string"),
        ({"format": True, "mcps": []}, "format: expected an integer, got true"),
        ({"format": 1.0, "mcps": []}, "format: expected an integer, got a number"),
        ({"mcps": [{"name": "a", "fields": []}]},
         "mcps[0].fields (server 'a'): expected an object, got an array"),
        ({"mcps": [{"name": "a", "probe": []}]},
         "mcps[0].probe (server 'a'): expected an object, got an array"),
        ({"mcps": [{"name": "a", "probe": {"tools": {}}}]},
         "mcps[0].probe.tools (server 'a'): expected an array, got an object"),
        ({"mcps": [{"name": "a", "probe": {"prompts": [{"name": "t"}, {"name": "t"}]}}]},
         "mcps[0].probe.prompts[1] (server 'a'): a second definition of the same name"),
        ({"mcps": [{"name": "a", "probe": {"protocol": {"era": 1}}}]},
         "mcps[0].probe.protocol.era (server 'a'): expected a string, got a number"),
        ({"mcps": [{"name": "a", "probe": {"protocol": {"version": 2}}}]},
         "mcps[0].probe.protocol.version (server 'a'): expected a string, got a number"),
        ({"mcps": [{"name": "a", "probe": {"protocol": "x"}}]},
         "mcps[0].probe.protocol (server 'a'): expected an object, got a string"),
        ({"mcps": [{"name": "a", "probe": {"serverInfo": 1}}]},
         "mcps[0].probe.serverInfo (server 'a'): expected an object, got a number"),
        ({"mcps": [{"name": "a", "probe": {"instructions": {}}}]},
         "mcps[0].probe.instructions (server 'a'): expected a string, got an object"),
        ({"mcps": [{"name": "a", "probe": {"error": None, "tools": [{"name": "t",
                                                                        "fingerprint": 1}]}}]},
         "mcps[0].probe.tools[0].fingerprint (server 'a'): expected a string, got a number"),
        ({"mcps": [{"name": "a", "probe": {"resource_templates": [{"name": "t",
                                                                    "definition": []}]}}]},
         "mcps[0].probe.resource_templates[0].definition (server 'a'): expected an object, "
         "got an array"),
        ({"mcps": [], "packages": []}, "packages: expected an object"),
        ({"mcps": [], "packages": {"s\x1b": {"name": "x", "version": 1}}},
         "packages.s\\x1b.version: expected a string"),
    ],
)  # fmt: skip
def test_each_bad_value_is_refused_saying_where_and_what_it_is(data: Any, says: str) -> None:
    with pytest.raises(UsageError) as caught:
        Snapshot.from_data(data)
    assert caught.value.message == f"not a valid snapshot: {says}"


def test_a_probe_s_parts_are_read_back() -> None:
    snap = Snapshot.from_data({
        "timestamp": "t", "format": 1,
        "mcps": [{"name": "a", "probe": {
            "protocol": {"era": "modern", "version": "2026-07-28", "other": "x"},
            "redacted": ["instructions", "tools", "serverInfo"],
            "tools": [{"name": "t", "fingerprint": "sha256:1", "definition": {"name": "t"},
                       "redacted": True},
                      {"name": "u", "fingerprint": "sha256:2", "redacted": "yes"}],
        }}, {"name": "b", "probe": {"protocol": {}, "redacted": "serverInfo"}}],
    })  # fmt: skip
    state = snap.mcps["a"].probe
    assert state is not None
    assert state.protocol == {"era": "modern", "version": "2026-07-28"}
    assert state.redacted == ["instructions", "serverInfo"]
    assert state.tools["t"] == Definition("t", "sha256:1", {"name": "t"}, True)
    assert state.tools["u"].redacted is False  # only true is true
    other = snap.mcps["b"].probe
    assert other is not None and other.protocol == {} and other.redacted == []
    assert snap.timestamp == "t" and Snapshot.from_data({"mcps": []}).timestamp == ""


def test_a_probe_is_written_with_only_what_it_knows() -> None:
    tool = Definition("t", "sha256:1", {"name": "t"}, redacted=True)
    state = ServerState(
        server_info={"name": "s"}, instructions_sha256="sha256:2", tools={"t": tool},
        protocol={"era": "modern"}, redacted=["serverInfo", "instructions"],
    )  # fmt: skip
    snap = Snapshot("now", {"a": McpRecord("a", "internal", "stdio", "sha256:3", {"b": "1",
                                                                                "a": "2"}, state)})  # fmt: skip
    [record] = snap.to_data()["mcps"]
    assert list(record) == ["name", "type", "transport", "fingerprint", "fields", "probe"]
    assert list(record["fields"]) == ["a", "b"]
    assert record["probe"] == {
        "serverInfo": {"name": "s"},
        "instructions": "sha256:2",
        "protocol": {"era": "modern"},
        "redacted": ["instructions", "serverInfo"],
        "tools": [{"name": "t", "fingerprint": "sha256:1", "definition": {"name": "t"},
                   "redacted": True}],
        "prompts": [],
        "resource_templates": [],
    }  # fmt: skip
    assert snap.to_data()["format"] == 1 and "packages" not in snap.to_data()
    bare = Snapshot("now", {"a": McpRecord("a")}).to_data()["mcps"][0]
    assert bare == {"name": "a", "type": "external"}
    failed = ServerState(error="timeout", tools={"t": tool})
    assert _state_written(failed)["tools"][0]["name"] == "t"  # what is known is kept
    assert "prompts" not in _state_written(failed)


def _state_written(state: ServerState) -> dict[str, Any]:
    data: dict[str, Any] = Snapshot("t", {"a": McpRecord("a", probe=state)}).to_data()
    return data["mcps"][0]["probe"]  # type: ignore[no-any-return]


def test_the_secrets_a_probe_redacted_are_listed_in_a_fixed_order() -> None:
    def defn(name: str, redacted: bool) -> Definition:
        return Definition(name, "f", {}, redacted)

    state = ServerState(
        tools={"b": defn("b", True), "a": defn("a", True), "c": defn("c", False)},
        prompts={"p": defn("p", True)},
        resource_templates={"r": defn("r", True)},
        redacted=["instructions", "serverInfo"],
    )
    assert state.secrets_redacted() == [
        ("serverInfo", None), ("instructions", None), ("tools", "a"), ("tools", "b"),
        ("prompts", "p"), ("resource_templates", "r"),
    ]  # fmt: skip
    assert ServerState().secrets_redacted() == []


def test_what_tools_cost_is_known_only_when_every_definition_was_kept() -> None:
    from mcpctl.snapshot.model import tools_tokens

    tool = Definition.of({"name": "t", "description": "Does t.", "inputSchema": {}})
    assert tools_tokens(ServerState(tools={"t": tool})) is not None
    assert tools_tokens(ServerState(tools={"t": tool})) > 0  # type: ignore[operator]
    assert tools_tokens(ServerState()) == 0
    assert tools_tokens(ServerState(error="timeout")) is None
    kept_only_fingerprint = Definition("u", "sha256:1", {})
    assert tools_tokens(ServerState(tools={"t": tool, "u": kept_only_fingerprint})) is None


def test_a_definition_is_named_by_its_name_or_uri_template() -> None:
    assert Definition.of({"uriTemplate": "m://{k}"}).name == "m://{k}"
    assert Definition.of({"name": "n", "uriTemplate": "m://{k}"}).name == "n"
    assert Definition.of({"name": "n"}, name="given").name == "given"
    assert Definition.of({}).name == ""
    assert Definition.of({"name": "n"}).redacted is False


def test_a_snapshot_s_time_is_utc_to_the_second() -> None:
    import re

    snap = snapshot_of_config({})
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", snap.timestamp)
    assert snapshot_of_config({}, timestamp="given").timestamp == "given"


def test_a_disabled_internal_server_is_not_recorded() -> None:
    internal = {"on": ServerEntry(command="a"), "off": ServerEntry(command="b", enabled=False)}
    snap = snapshot_of_config({}, internal=internal)
    assert list(snap.mcps) == ["on"] and snap.mcps["on"].type == "internal"
    assert all(len(v) == 23 for v in snap.mcps["on"].fields.values())


def test_the_packages_are_written_sorted_and_read_back() -> None:
    from mcpctl.snapshot.packagepins import PackagePin

    pins = {
        "b": PackagePin("pypi", "demo-time", "demo-time==1.0", True, "1.0", "sha256:ab", "d.whl"),
        "a": PackagePin("npm", "plain", "plain", False, status="unresolved", reason="offline"),
    }
    snap = Snapshot("t", {"a": McpRecord("a")}, packages=pins)
    data = snap.to_data()
    assert list(data) == ["timestamp", "format", "mcps", "packages"]
    assert data["packages"] == {
        "a": {"ecosystem": "npm", "name": "plain", "spec": "plain", "pinned": False,
              "status": "unresolved", "reason": "offline"},
        "b": {"ecosystem": "pypi", "name": "demo-time", "spec": "demo-time==1.0", "pinned": True,
              "version": "1.0", "integrity": "sha256:ab", "file": "d.whl", "status": "resolved"},
    }  # fmt: skip
    assert list(data["packages"]) == ["a", "b"]
    assert Snapshot.from_data(json.loads(json.dumps(data))) == snap
    no_pins = Snapshot("t", packages={}).to_data()
    assert no_pins["packages"] == {}  # recorded, none: not the same as not recorded


@pytest.mark.parametrize(
    ("data", "says"),
    [
        # A newline in a refused package's name is shown escaped, on one line.
        ({"mcps": [], "packages": {"s\n": {"name": "x", "version": 1}}},
         "not a valid snapshot: packages.s\\n.version: expected a string"),
        ({"mcps": [{"name": "a", "probe": {"error": 1}}]},
         "not a valid snapshot: mcps[0].probe.error (server 'a'): expected a string, got a number"),
        ({"mcps": [{"name": "a", "probe": {"tools": [{"name": 7}]}}]},
         "not a valid snapshot: mcps[0].probe.tools[0].name (server 'a'): expected a string, "
         "got a number"),
        ([], 'not a snapshot: expected {"timestamp": ..., "mcps": [...]}'),
        ({"mcps": {}}, 'not a snapshot: expected {"timestamp": ..., "mcps": [...]}'),
    ],
)  # fmt: skip
def test_more_refusals_in_their_exact_words(data: Any, says: str) -> None:
    with pytest.raises(UsageError) as caught:
        Snapshot.from_data(data)
    assert caught.value.message == says


def test_a_definition_recorded_without_its_fingerprint_has_none() -> None:
    snap = Snapshot.from_data({"mcps": [{"name": "a", "probe": {"tools": [{"name": "t"}]}}]})
    state = snap.mcps["a"].probe
    assert state is not None and state.tools["t"] == Definition("t", "", {})


def test_a_lone_surrogate_in_an_enabled_entry_is_refused_naming_the_snapshot() -> None:
    with pytest.raises(UsageError) as caught:
        snapshot_of_config({"a": ServerEntry(command="x", args=("\ud800",))})
    assert caught.value.message == (
        "a.args[0] holds a lone surrogate (\\ud800), which is not text: a snapshot cannot hold it"
    )


def test_each_server_is_recorded_with_the_fingerprints_of_its_own_fields() -> None:
    from mcpctl.snapshot.fingerprints import entry_fields, fingerprint

    entries = {
        "off": ServerEntry(command="z", enabled=False),  # a disabled one first: the rest stay
        "a": ServerEntry(command="a", args=("-v",)),
        "b": ServerEntry(command="b"),
    }
    snap = snapshot_of_config(entries)
    assert list(snap.mcps) == ["a", "b"]
    a, b = snap.mcps["a"], snap.mcps["b"]
    assert a.fingerprint == fingerprint(entry_fields(entries["a"])) != b.fingerprint
    assert a.fields == {
        "command": fingerprint("a")[:23],
        "args": fingerprint(["-v"])[:23],
    }
    assert b.fields["command"] == fingerprint("b")[:23] != a.fields["command"]
