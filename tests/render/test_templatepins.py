"""What a rendering starts from besides the config: a template (with its local override) and
the tools a lock file pinned."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import UsageError
from mcpctl.render.templatepins import (
    launched_unpinned,
    load_pins,
    load_template,
    merge_documents,
    pin_packages,
)
from mcpctl.snapshot.packagepins import PackagePin


def test_objects_merge_at_every_depth_and_other_values_replace() -> None:
    base = {"a": {"b": 1, "c": {"d": 2, "e": 3}}, "list": [1, 2], "keep": True}
    over = {"a": {"c": {"d": 20}, "x": 9}, "list": [3], "new": None}
    assert merge_documents(base, over) == {
        "a": {"b": 1, "c": {"d": 20, "e": 3}, "x": 9}, "list": [3], "keep": True, "new": None,
    }  # fmt: skip
    assert base == {"a": {"b": 1, "c": {"d": 2, "e": 3}}, "list": [1, 2], "keep": True}
    # An object over a value that is not one replaces it, and the other way round.
    assert merge_documents({"a": 1, "b": {"c": 1}}, {"a": {"x": 1}, "b": 2}) == {
        "a": {"x": 1}, "b": 2,
    }  # fmt: skip


def test_a_template_gets_its_local_override(tmp_path: Path) -> None:
    template = tmp_path / "base.json"
    template.write_text(json.dumps({"mcpProxy": {"addr": ":7000", "name": "team"}}))
    assert load_template(template) == {"mcpProxy": {"addr": ":7000", "name": "team"}}
    (tmp_path / "base.local.json").write_text(json.dumps({"mcpProxy": {"addr": ":7001"}}))
    assert load_template(template) == {"mcpProxy": {"addr": ":7001", "name": "team"}}


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "does not exist"), ("[1]", "must be a JSON object"), ("{", "not valid JSON")],
)
def test_a_template_that_is_no_json_object_is_refused(
    tmp_path: Path, content: str | None, message: str
) -> None:
    template = tmp_path / "t.json"
    if content is not None:
        template.write_text(content)
    with pytest.raises(UsageError, match=message):
        load_template(template)


def test_a_template_that_cannot_be_read_is_named_with_the_place(tmp_path: Path) -> None:
    bad_json = tmp_path / "t.json"
    bad_json.write_text('{"a": 1,\n  "b"}')
    with pytest.raises(UsageError) as caught:
        load_template(bad_json)
    assert caught.value.message.startswith(f"{bad_json}:2:6: not valid JSON")
    not_utf8 = tmp_path / "u.json"
    not_utf8.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(UsageError) as caught:
        load_template(not_utf8)
    assert caught.value.message == f"{not_utf8}:1:8: not UTF-8 text (byte 0xff)"


def test_a_template_without_a_suffix_gets_a_local_json_override(tmp_path: Path) -> None:
    template = tmp_path / "base"
    template.write_text(json.dumps({"a": 1, "b": 1}))
    (tmp_path / "base.local").write_text(json.dumps({"a": "wrong file"}))
    (tmp_path / "base.local.json").write_text(json.dumps({"b": 2}))
    assert load_template(template) == {"a": 1, "b": 2}
    # A template with a suffix keeps it for its override.
    jsonc_named = tmp_path / "other.jsonc"
    jsonc_named.write_text(json.dumps({"a": 1}))
    (tmp_path / "other.local.json").write_text(json.dumps({"a": "wrong file"}))
    (tmp_path / "other.local.jsonc").write_text(json.dumps({"a": 3}))
    assert load_template(jsonc_named) == {"a": 3}


def test_a_fifo_template_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    with pytest.raises(UsageError):
        load_template(fifo)


def test_pins_come_from_a_lock_file_with_probe_data(tmp_path: Path) -> None:
    from mcpctl.config.model import ServerEntry
    from mcpctl.snapshot.files import save_snapshot
    from mcpctl.snapshot.model import Definition, ServerState, snapshot_of_config

    with pytest.raises(UsageError, match="there is no lock file") as raised:
        load_pins(tmp_path / "none.json")
    assert "snapshot save --probe" in (raised.value.hint or "")
    snap = snapshot_of_config({"a": ServerEntry(command="echo"), "b": ServerEntry(command="x")})
    save_snapshot(snap, tmp_path / "plain.json")
    pins, packages, warnings = load_pins(tmp_path / "plain.json")
    assert pins == {} and packages is None and "has no probe data" in warnings[0]
    tools = {n: Definition.of({"name": n, "inputSchema": {"type": "object"}}) for n in "yx"}
    snap.mcps["a"].probe = ServerState(tools=tools)
    snap.mcps["b"].probe = ServerState(error="timeout")  # nothing known: pins nothing
    save_snapshot(snap, tmp_path / "lock.json")
    assert load_pins(tmp_path / "lock.json") == ({"a": ["x", "y"]}, None, [])


def _npx(package: str, *, enabled: bool = True) -> ServerEntry:
    return ServerEntry(command="npx", args=("-y", package), enabled=enabled)


PIN_A = PackagePin("npm", "pkg-a", "", False, "1.2.3", "sha512-a")
PIN_B = PackagePin("npm", "pkg-b", "", False, "4.5.6", "sha512-b")


def test_without_a_lock_the_entries_are_rendered_as_they_are() -> None:
    entries = {"a": _npx("pkg-a")}
    assert pin_packages(entries, [], {"a": PIN_A}, None) == (entries, [])


def test_a_lock_writes_its_versions_into_the_servers_rendered(tmp_path: Path) -> None:
    lock = tmp_path / "mcp.lock.json"
    entries = {"a": _npx("pkg-a"), "b": _npx("pkg-b"), "off": _npx("pkg-b", enabled=False)}
    pins = {"a": PIN_A, "b": PIN_B, "off": PIN_B}
    out, warnings = pin_packages(entries, [], pins, lock)
    assert warnings == []
    assert out["a"].args == ("-y", "pkg-a@1.2.3") and out["b"].args == ("-y", "pkg-b@4.5.6")
    assert out["off"] == entries["off"]  # a disabled server is not rendered: left as it is
    # Only the servers asked for are pinned; the others stay, unchanged.
    out, warnings = pin_packages(entries, ["b"], pins, lock)
    assert (out["a"], out["b"].args, warnings) == (entries["a"], ("-y", "pkg-b@4.5.6"), [])
    # A rendered server the lock does not pin is said.
    out, warnings = pin_packages(entries, [], {"a": PIN_A}, lock)
    assert out["b"] == entries["b"] and out["a"].args == ("-y", "pkg-a@1.2.3")
    assert warnings == ["b: not in the lock file's packages: rendered unpinned"]


def test_a_lock_without_packages_warns_only_when_a_rendered_server_runs_one(
    tmp_path: Path,
) -> None:
    lock = tmp_path / "mcp.lock.json"
    entries = {"a": _npx("pkg-a"), "local": ServerEntry(command="./server")}
    assert pin_packages(entries, [], None, lock) == (entries, [
        f"{lock} records no packages, so the versions the servers run are not pinned "
        "(save it with --packages)"
    ])  # fmt: skip
    assert pin_packages(entries, ["local"], None, lock) == (entries, [])
    off = {"a": _npx("pkg-a", enabled=False)}
    assert pin_packages(off, [], None, lock) == (off, [])


def test_servers_run_through_mcpctl_run_are_said_to_stay_unpinned() -> None:
    assert launched_unpinned(["a", "b"], None) == []
    assert launched_unpinned(["a", "b"], {}) == []
    assert launched_unpinned(["a", "b"], {"b": PIN_B}) == [
        "b: runs through 'mcpctl run', which starts the configured command: the version the "
        "lock recorded is not applied (--secrets env renders it pinned)"
    ]
