"""health_as_client: a server the client starts as mcpctl would is probed once."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.probe import health
from mcpctl.render.asclient import read_client
from mcpctl.render.asclient_health import health_as_client
from tests.conftest import SERVERS

BASIC = {"command": sys.executable, "args": [str(SERVERS / "basic.py")]}


def test_one_probe_for_the_same_server_two_for_a_different_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probed: list[list[str]] = []
    real = health.probe_all

    async def counting(entries: Any, **kwargs: Any) -> Any:
        items = list(entries)
        probed.append([name for name, _, _ in items])
        return await real(items, **kwargs)

    monkeypatch.setattr(health, "probe_all", counting)
    monkeypatch.setenv("AS_TEST_SAME", "1")
    file = tmp_path / "mcp.json"
    file.write_text(json.dumps({"mcpServers": {
        "same": {**BASIC, "env": {"V": "${env:AS_TEST_SAME}"}},
        "keyed": {**BASIC, "env": {"V": "${env:AS_TEST_KEYED}"}},
    }}))  # fmt: skip
    ours = [
        ("same", ServerEntry(command=sys.executable, args=tuple(BASIC["args"]),
                             env={"V": "${AS_TEST_SAME}"}), "external"),
        ("keyed", ServerEntry(command=sys.executable, args=tuple(BASIC["args"]),
                              env={"V": "${AS_TEST_KEYED}"}), "external"),
    ]  # fmt: skip
    keyring = {"AS_TEST_KEYED": "kept"}.get
    report = anyio.run(lambda: health_as_client(read_client("cursor", file), ours,
                                                secrets=keyring))  # fmt: skip
    assert sorted(map(sorted, probed)) == [["keyed"], ["keyed", "same"]]
    rows = {r.name: r for r in report.rows}
    assert rows["same"].verdict == rows["same"].mcpctl == "healthy"
    assert rows["same"].mcpctl_result is rows["same"].result
    assert (rows["keyed"].verdict, rows["keyed"].mcpctl) == ("unavailable", "healthy")
    assert not report.healthy
