"""Probing real servers for a snapshot: what they offer, whole, and what a rug pull changes.

The catalog (mcpctl.probe.catalog) is tested here through the snapshot it feeds:
tests/servers/shifty.py has tools, a prompt, a resource template and instructions, and
changes them with SHIFTY_MODE (passed through ``inherit_env``).
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.probe.catalog import Catalog, catalog, catalog_all
from mcpctl.snapshot.diff import diff_snapshots
from mcpctl.snapshot.fingerprints import fingerprint_tool
from mcpctl.snapshot.model import snapshot_of_config
from mcpctl.snapshot.probing import (
    add_probes,
    instructions_sha256,
    pinned_tools,
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
