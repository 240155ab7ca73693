"""Probing real servers for a snapshot: what they offer, whole, and what a rug pull changes.

The catalog (mcpctl.probe.catalog) is tested here through the snapshot it feeds:
tests/servers/shifty.py has tools, a prompt, a resource template and instructions, and
changes them with SHIFTY_MODE (passed through ``inherit_env``).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.probe.catalog import Catalog, catalog, catalog_all
from mcpctl.snapshot.diff import diff_snapshots
from mcpctl.snapshot.fingerprints import fingerprint_tool
from mcpctl.snapshot.model import ServerState, snapshot_of_config
from mcpctl.snapshot.probing import (
    add_probes,
    catalog_warnings,
    instructions_sha256,
    pinned_tools,
    snapshot_targets,
    state_of,
    take_snapshot,
    take_snapshot_async,
)
from tests.conftest import SERVERS, published_npm_server

PY = sys.executable
SHIFTY = ServerEntry(command=PY, args=(str(SERVERS / "shifty.py"),), inherit_env=("SHIFTY_MODE",))
pytestmark = pytest.mark.timeout(90)


def run(fn: Any) -> Any:
    return anyio.run(fn)


def shifty_catalog(monkeypatch: pytest.MonkeyPatch, mode: str = "") -> Catalog:
    monkeypatch.setenv("SHIFTY_MODE", mode)
    found: Catalog = run(lambda: catalog("shifty", SHIFTY))
    assert found.ok, (found.error, found.message, found.stderr)
    return found


def test_a_catalog_has_everything_the_server_offers(monkeypatch: pytest.MonkeyPatch) -> None:
    found = shifty_catalog(monkeypatch)
    assert found.server_info == {"name": "shifty-test-server", "version": "1.0"}
    assert found.instructions == "Use lookup."
    assert {"tools", "prompts", "resources"} <= set(found.capabilities)
    tools = {t["name"]: t for t in found.tools}
    assert set(tools) == {"lookup", "add"}
    # Whole wire objects, as sent: every field, by its wire name.
    assert tools["add"]["annotations"] == {"readOnlyHint": True}
    assert {"description", "inputSchema", "outputSchema"} <= set(tools["add"])
    assert [p["name"] for p in found.prompts] == ["greet"]
    assert found.prompts[0]["arguments"] == [{"name": "name", "required": True}]
    assert found.resource_templates == [{
        "name": "memo", "uriTemplate": "memo://{key}", "description": "A memo by key.",
        "mimeType": "text/plain",
    }]  # fmt: skip
    assert found.to_dict()["error"] is None


def test_tools_are_kept_as_sent_not_as_repaired() -> None:
    # raw.py's read_file has no "type" in its input schema; the probe repairs it to read it,
    # the catalog keeps what the server said.
    raw = ServerEntry(command=PY, args=(str(SERVERS / "raw.py"),), timeout=15000)
    found: Catalog = run(lambda: catalog("raw", raw))
    assert found.ok, found.message
    tools = {t["name"]: t for t in found.tools}
    assert "type" not in tools["read_file"]["inputSchema"]
    assert tools["annotated"]["annotations"] == "read-only"
    assert any("read_file" in w for w in found.warnings)


def test_every_page_is_listed() -> None:
    paged = ServerEntry(command=PY, args=(str(SERVERS / "paged.py"),))
    found: Catalog = run(lambda: catalog("paged", paged))
    assert [t["name"] for t in found.tools] == [f"tool_{i:02d}" for i in range(25)]


def test_a_failing_server_gives_an_error_code_never_an_exception() -> None:
    gone = ServerEntry(command="/no/such/server-binary")
    exits = ServerEntry(command=PY, args=(str(SERVERS / "misbehave.py"), "exit"), timeout=10000)
    found = run(lambda: catalog_all({"gone": gone, "exits": exits, "shifty": SHIFTY}))
    assert list(found) == ["gone", "exits", "shifty"]
    assert found["gone"].error == "command_not_found" and found["gone"].message
    assert found["exits"].error == "server_exited" and found["exits"].stderr
    assert found["shifty"].ok and len(found["shifty"].tools) == 2
    assert state_of(found["gone"]).error == "command_not_found"
    assert state_of(found["gone"]).tools == {}


def test_a_hanging_server_times_out() -> None:
    hangs = ServerEntry(command=PY, args=(str(SERVERS / "misbehave.py"), "hang"))
    found: Catalog = run(lambda: catalog("hangs", hangs, timeout=1.0))
    assert found.error == "timeout"


def test_internal_servers_keep_their_kind() -> None:
    found = run(lambda: catalog_all([("guardian", SHIFTY, "internal")]))
    assert found["guardian"].type == "internal" and found["guardian"].ok


def test_state_of_fingerprints_each_definition_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    found = shifty_catalog(monkeypatch)
    state = state_of(found)
    assert state.server_info == found.server_info
    assert state.instructions_sha256 == instructions_sha256("Use lookup.")
    assert state.instructions_sha256 is not None and state.instructions_sha256.startswith("sha256:")
    for tool in found.tools:
        assert state.tools[tool["name"]].fingerprint == fingerprint_tool(tool)
        assert state.tools[tool["name"]].data == tool
    assert list(state.prompts) == ["greet"] and list(state.resource_templates) == ["memo"]
    assert instructions_sha256(None) is None


def test_a_definition_canonical_json_cannot_hold_is_still_pinned() -> None:
    odd = Catalog(
        "odd", tools=[{"name": "t", "description": "\ud800"}, {"name": "n", "x": 10**400}]
    )
    state = state_of(odd)
    assert set(state.tools) == {"t", "n"}
    assert all(d.fingerprint.startswith("sha256:") for d in state.tools.values())


def test_take_snapshot_without_probing_is_the_configuration() -> None:
    snap = take_snapshot({"shifty": SHIFTY, "off": ServerEntry(command="x", enabled=False)})
    assert list(snap.mcps) == ["shifty"] and snap.mcps["shifty"].probe is None


def test_take_snapshot_probes_internal_and_external(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIFTY_MODE", "")
    gone = ServerEntry(command="/no/such/server-binary")
    snap = take_snapshot({"shifty": SHIFTY, "gone": gone}, internal={"inner": SHIFTY}, probe=True)
    assert snap.probed and snap.mcps["inner"].type == "internal"
    inner, shifty = snap.mcps["inner"].probe, snap.mcps["shifty"].probe
    assert inner is not None and shifty is not None
    assert set(shifty.tools) == {"lookup", "add"} and inner.tools == shifty.tools
    assert (
        snap.mcps["gone"].probe is not None and snap.mcps["gone"].probe.error == "command_not_found"
    )
    assert pinned_tools(snap) == {"inner": ["add", "lookup"], "shifty": ["add", "lookup"]}


def test_the_async_variant_runs_in_the_callers_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIFTY_MODE", "")

    async def main() -> Any:
        return await take_snapshot_async({"shifty": SHIFTY}, probe=True, timeout=30)

    snap = run(main)
    assert snap.mcps["shifty"].probe is not None and snap.mcps["shifty"].probe.error is None


def rug_pull(monkeypatch: pytest.MonkeyPatch, mode: str) -> Any:
    before = add_probes(snapshot_of_config({"s": SHIFTY}), {"s": shifty_catalog(monkeypatch)})
    after_found = shifty_catalog(monkeypatch, mode)
    after_found.name = "s"
    after = add_probes(snapshot_of_config({"s": SHIFTY}), {"s": after_found})
    diff = diff_snapshots(before, after)
    assert len(diff.changed) == 1, diff.to_data()
    return diff.changed[0]


def test_a_poisoned_tool_is_a_definition_change(monkeypatch: pytest.MonkeyPatch) -> None:
    change = rug_pull(monkeypatch, "poison")
    assert change.fields == [] and change.definitions_changed
    [moved] = change.changed
    assert moved.name == "lookup" and {"description", "inputSchema"} <= set(moved.fields)
    old, new = moved.fields["description"]
    assert "id_rsa" in new and "id_rsa" not in old


@pytest.mark.parametrize(
    ("mode", "check"),
    [
        ("rename", lambda c: c.renamed == {"tools": [("add", "sum")]} and not c.changed),
        ("annotate", lambda c: list(c.changed[0].fields) == ["annotations"]),
        ("meta", lambda c: list(c.changed[0].fields) == ["_meta"]),
        ("extra", lambda c: c.added == {"tools": ["delete_everything"]} and not c.changed),
        ("instructions", lambda c: c.instructions and not c.changed),
        ("prompt", lambda c: c.changed[0].kind == "prompts"
                             and list(c.changed[0].fields) == ["description"]),
    ],
)  # fmt: skip
def test_each_kind_of_change_is_seen(
    monkeypatch: pytest.MonkeyPatch, mode: str, check: Any
) -> None:
    change = rug_pull(monkeypatch, mode)
    assert check(change), change


@pytest.mark.integration
def test_server_everything_offers_all_three_kinds() -> None:
    command = published_npm_server("server-everything")
    entry = ServerEntry(command=command[0], args=(*command[1:], "stdio"), timeout=30000)
    snap = take_snapshot({"everything": entry}, probe=True)
    state = snap.mcps["everything"].probe
    assert state is not None and state.error is None, state
    assert "echo" in state.tools and state.prompts and state.resource_templates
    assert state.server_info is not None and state.server_info.get("name")
    # Taken twice, the same: fingerprints do not depend on the moment.
    again = take_snapshot({"everything": entry}, probe=True)
    assert diff_snapshots(snap, again).empty, diff_snapshots(snap, again).to_data()


class Page:
    def __init__(self, tools: list[str], cursor: str | None) -> None:
        self.tools, self.next_cursor = tools, cursor


def test_pages_are_capped_and_a_missing_method_lists_nothing() -> None:
    from mcpctl.probe.catalog import MAX_PAGES, _pages
    from mcpctl.probe.connect import MCPError

    calls: list[Any] = []

    async def endless(params: Any = None) -> Page:
        calls.append(params)
        return Page([f"t{len(calls)}"], str(len(calls)))

    found = Catalog("endless")
    items = run(lambda: _pages(found, "tools", endless, "tools"))
    assert len(items) == MAX_PAGES == len(calls) and calls[0] is None
    assert calls[1].cursor == "1"
    assert found.warnings == [f"tools: more than {MAX_PAGES} pages; the rest was not listed"]

    async def missing(params: Any = None) -> Page:
        raise MCPError(-32601, "Method not found")

    found = Catalog("missing")
    assert run(lambda: _pages(found, "prompts", missing, "prompts")) == []
    assert found.warnings == ["it advertises prompts but cannot list them (Method not found)"]

    async def broken(params: Any = None) -> Page:
        raise MCPError(-32603, "Internal error")

    with pytest.raises(MCPError):
        run(lambda: _pages(Catalog("broken"), "prompts", broken, "prompts"))


# --- what mutation testing found unpinned ----------------------------------------------------

SECRET = "s3cret-value-of-a-token-1234"


def test_a_failed_probe_records_only_its_code() -> None:
    failed = Catalog("f", error="spawn_failed", message="no", tools=[{"name": "t"}])
    assert state_of(failed) == ServerState(error="spawn_failed")


def test_what_a_server_echoes_of_a_secret_is_recorded_redacted_and_flagged() -> None:
    from mcpctl.config.redaction import Redactor

    found = Catalog(
        "s",
        server_info={"name": "srv", "version": SECRET},
        instructions=f"Use {SECRET}.",
        tools=[{"name": "leak", "description": SECRET}, {"name": "clean"}],
        prompts=[{"name": "p", "description": SECRET}],
        resource_templates=[{"name": "r", "uriTemplate": "x://{k}", "description": SECRET}],
        warnings=["repaired a tool"],
    )
    state = state_of(found, Redactor([SECRET], patterns=False))
    assert state.server_info == {"name": "srv", "version": "****"}
    assert state.instructions_sha256 == instructions_sha256("Use ****.")
    assert state.redacted == ["serverInfo", "instructions"]
    assert state.tools["leak"].redacted and state.tools["leak"].data["description"] == "****"
    assert not state.tools["clean"].redacted
    assert state.prompts["p"].redacted and state.resource_templates["r"].redacted
    assert state.warnings == ["repaired a tool"] and state.protocol is None
    assert SECRET not in repr(state)


def test_by_default_the_secrets_this_process_resolved_are_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PROBING_TEST_API_TOKEN", SECRET)  # a secret-named variable's value
    found = Catalog("s", server_info={"name": SECRET}, instructions="sk-" + "a" * 40)
    state = state_of(found)
    assert state.server_info == {"name": "****"} and state.redacted == ["serverInfo"]
    # a server's example of a key is kept: only known values are redacted
    assert state.instructions_sha256 == instructions_sha256("sk-" + "a" * 40)


def test_nothing_echoed_is_nothing_flagged() -> None:
    from mcpctl.config.redaction import Redactor
    from mcpctl.probe.eras import Era

    found = Catalog(
        "s", server_info={"name": "srv"}, instructions="Hi.", era=Era("legacy", "2025-11-25")
    )
    state = state_of(found, Redactor([SECRET], patterns=False))
    assert state.redacted == [] and state.server_info == {"name": "srv"}
    assert state.instructions_sha256 == instructions_sha256("Hi.")
    assert state.protocol == {"era": "legacy", "version": "2025-11-25"}
    assert state_of(Catalog("s")).instructions_sha256 is None


def test_instructions_are_hashed_as_utf_8() -> None:
    import hashlib

    assert instructions_sha256("é") == "sha256:" + hashlib.sha256("é".encode()).hexdigest()
    assert instructions_sha256("") == "sha256:" + hashlib.sha256(b"").hexdigest()
    # A lone surrogate (a server's JSON may hold one) is hashed as its bytes, never refused.
    lone = "a\ud800"
    assert instructions_sha256(lone) == "sha256:" + hashlib.sha256(b"a\xed\xa0\x80").hexdigest()


def test_a_definition_canonical_json_cannot_hold_is_named_and_flagged() -> None:
    from mcpctl.config.redaction import Redactor

    odd = Catalog(
        "odd",
        tools=[{"name": "t", "description": "\ud800" + SECRET}],
        resource_templates=[{"uriTemplate": "x://{k}", "n": 10**400}],
    )
    state = state_of(odd, Redactor([SECRET], patterns=False))
    assert state.tools["t"].redacted and state.tools["t"].data["description"] == "\ud800****"
    (template,) = state.resource_templates.values()
    assert template.name == "x://{k}" and template.data["n"] == 10**400
    other = state_of(Catalog("odd", resource_templates=[{"uriTemplate": "x://{k}", "n": 1}]))
    assert template.fingerprint != other.resource_templates["x://{k}"].fingerprint
    nameless = state_of(Catalog("odd", tools=[{"n": 10**400}]))
    assert list(nameless.tools) == [""]


def test_the_fingerprint_of_a_definition_json_cannot_hold_is_its_sorted_json() -> None:
    import hashlib
    import json

    item = {"name": "t", "b": "\ud800", "a": 1}
    (definition,) = state_of(Catalog("odd", tools=[item])).tools.values()
    text = json.dumps(item, sort_keys=True, separators=(",", ":"))
    assert definition.fingerprint == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_only_the_servers_of_a_catalog_get_probe_data() -> None:
    snap = snapshot_of_config({"a": SHIFTY, "b": SHIFTY})
    add_probes(snap, {"a": Catalog("a", tools=[{"name": "t"}]), "c": Catalog("c")})
    assert snap.mcps["a"].probe is not None and list(snap.mcps["a"].probe.tools) == ["t"]
    assert snap.mcps["b"].probe is None and "c" not in snap.mcps


def test_the_warnings_of_a_snapshot_s_probes() -> None:
    catalogs = {
        "a": Catalog("a", warnings=["a tool was repaired", "another"]),
        "b": Catalog("b", error="timeout", message="no answer in 5 s", hint="try --timeout"),
        "c": Catalog("c", error="spawn_failed", message="exited"),
    }
    assert catalog_warnings(catalogs) == [
        "a: a tool was repaired",
        "a: another",
        "b: probe failed: timeout: no answer in 5 s (try --timeout); what it offers is not "
        "recorded",
        "c: probe failed: spawn_failed: exited; what it offers is not recorded",
    ]


def test_pinned_tools_leaves_out_a_failed_probe() -> None:
    snap = snapshot_of_config({"a": SHIFTY, "b": SHIFTY, "c": SHIFTY})
    add_probes(snap, {"a": Catalog("a", tools=[{"name": "z"}, {"name": "y"}]),
                      "b": Catalog("b", error="timeout")})  # fmt: skip
    assert pinned_tools(snap) == {"a": ["y", "z"]}


def write_internal(root: Path, name: str, manifest: dict[str, Any], key: str) -> None:
    import json

    folder = root / name
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(
        json.dumps({"name": name, "main": "index.js", key: manifest})
    )


def test_snapshot_targets_holds_the_internal_and_enabled_servers(tmp_path: Path) -> None:
    write_internal(tmp_path, "inner", {"name": "inner"}, "annabelle")
    write_internal(tmp_path, "other", {"name": "other"}, "custom")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "package.json").write_text("{")
    entries = {"ext": SHIFTY, "off": ServerEntry(command="x", enabled=False)}
    snap, chosen, warnings = snapshot_targets(entries, tmp_path)
    assert [(n, kind) for n, _, kind in chosen] == [("inner", "internal"), ("ext", "external")]
    assert snap.mcps["inner"].type == "internal" and snap.mcps["ext"].type == "external"
    assert set(snap.mcps) == {"inner", "ext"} and snap.mcps["ext"].probe is None
    assert len(warnings) == 1 and "unreadable" in warnings[0]
    _, chosen, _ = snapshot_targets(entries, tmp_path, manifest_key="custom")
    assert [n for n, _, _ in chosen] == ["other", "ext"]
    snap, chosen, warnings = snapshot_targets(entries)
    assert [n for n, _, _ in chosen] == ["ext"] and warnings == []


def test_snapshot_targets_keeps_the_members_of_the_groups_asked() -> None:
    entries = {"a": replace(SHIFTY, groups=("g",)), "b": SHIFTY}
    snap, chosen, _ = snapshot_targets(entries, groups=["g"])
    assert [n for n, _, _ in chosen] == ["a"] and list(snap.mcps) == ["a"]


def test_take_snapshot_without_probing_holds_the_internal_servers_too() -> None:
    snap = take_snapshot({"ext": SHIFTY}, internal={"inner": SHIFTY})
    assert {n: r.type for n, r in snap.mcps.items()} == {"inner": "internal", "ext": "external"}
    assert all(r.probe is None for r in snap.mcps.values())
    snap = anyio.run(lambda: take_snapshot_async({"ext": SHIFTY}, internal={"inner": SHIFTY}))
    assert {n: r.type for n, r in snap.mcps.items()} == {"inner": "internal", "ext": "external"}
    assert all(r.probe is None for r in snap.mcps.values())  # no probe unless asked


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_take_snapshot_speaks_the_protocol_asked(monkeypatch: pytest.MonkeyPatch, era: Any) -> None:
    monkeypatch.setenv("SHIFTY_MODE", "")
    snap = take_snapshot({"s": SHIFTY}, probe=True, protocol=era, timeout=30)
    state = snap.mcps["s"].probe
    assert state is not None and state.protocol is not None and state.protocol["era"] == era


def test_take_snapshot_gives_up_on_a_server_after_the_timeout_asked() -> None:
    # The entry's own timeout is longer than this test may run: only the one asked ends it.
    hangs = ServerEntry(command=PY, args=(str(SERVERS / "misbehave.py"), "hang"), timeout=600_000)
    snap = take_snapshot({"h": hangs}, probe=True, timeout=1.0)
    state = snap.mcps["h"].probe
    assert state is not None and state.error == "timeout"
    snap = anyio.run(lambda: take_snapshot_async({"h": hangs}, probe=True, timeout=1.0))
    state = snap.mcps["h"].probe
    assert state is not None and state.error == "timeout"


def test_take_snapshot_resolves_the_entries_secrets_from_the_source_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server whose command line holds a secret is started with the value the source
    gives (sync and async alike); without it the probe could not start it."""
    monkeypatch.delenv("SNAP_SERVER_SCRIPT", raising=False)
    monkeypatch.setenv("SHIFTY_MODE", "")
    entry = replace(SHIFTY, args=("${SNAP_SERVER_SCRIPT}",))
    source = {"SNAP_SERVER_SCRIPT": str(SERVERS / "shifty.py")}.get
    snap = take_snapshot({"s": entry}, probe=True, secrets=source, timeout=30)
    state = snap.mcps["s"].probe
    assert state is not None and state.error is None and state.tools
    snap = anyio.run(
        lambda: take_snapshot_async({"s": entry}, probe=True, secrets=source, timeout=30)
    )
    state = snap.mcps["s"].probe
    assert state is not None and state.error is None and state.tools


def test_take_snapshot_remembers_the_era_each_server_spoke(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcpctl.probe.eras import EraMemory

    monkeypatch.setenv("SHIFTY_MODE", "")
    memory = EraMemory()
    take_snapshot({"s": SHIFTY}, probe=True, eras=memory, timeout=30)
    remembered = memory.recall(SHIFTY)
    assert remembered is not None and remembered.name in ("legacy", "modern")
    memory = EraMemory()
    anyio.run(lambda: take_snapshot_async({"s": SHIFTY}, probe=True, eras=memory, timeout=30))
    remembered = memory.recall(SHIFTY)
    assert remembered is not None and remembered.name in ("legacy", "modern")


def test_take_snapshot_hands_the_concurrency_asked_to_the_catalogs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--concurrency`` bounds how many servers start at once: it reaches ``catalog_all``
    (sync and async alike). What ``catalog_all`` does with it is tested with the probes."""
    import mcpctl.probe.catalog

    asked: list[int | None] = []

    async def recording(targets: Any, **options: Any) -> dict[str, Catalog]:
        asked.append(options.get("concurrency"))
        return {}

    monkeypatch.setattr(mcpctl.probe.catalog, "catalog_all", recording)
    take_snapshot({"s": SHIFTY}, probe=True, concurrency=3)
    anyio.run(lambda: take_snapshot_async({"s": SHIFTY}, probe=True, concurrency=2))
    take_snapshot({"s": SHIFTY}, probe=True)
    assert asked == [3, 2, None]
