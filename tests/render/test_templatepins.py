"""What a rendering starts from besides the config: a template (with its local override) and
the tools a lock file pinned."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mcpctl.errors import UsageError
from mcpctl.render.templatepins import load_pins, load_template, merge_documents


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
