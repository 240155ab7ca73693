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
from mcpctl.probe.serverenv import TRUST_ENV
from mcpctl.render.clientfile import read_client
from mcpctl.render.clienthealth import health_as_client
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
    for name in TRUST_ENV:  # Cline passes the SDK's few variables: mcpctl passes these too
        monkeypatch.delenv(name, raising=False)
    file = tmp_path / "mcp.json"
    file.write_text(json.dumps({"mcpServers": {
        "same": BASIC, "other": {**BASIC, "env": {"V": "theirs"}},
    }}))  # fmt: skip
    ours = [
        ("same", ServerEntry(command=sys.executable, args=tuple(BASIC["args"])), "external"),
        ("other", ServerEntry(command=sys.executable, args=tuple(BASIC["args"]),
                              env={"V": "${AS_TEST_KEYED}"}), "external"),
    ]  # fmt: skip
    keyring = {"AS_TEST_KEYED": "kept"}.get
    report = anyio.run(lambda: health_as_client(read_client("cline", file), ours,
                                                secrets=keyring))  # fmt: skip
    assert sorted(map(sorted, probed)) == [["other"], ["other", "same"]]
    rows = {r.name: r for r in report.rows}
    assert rows["same"].verdict == rows["same"].mcpctl == "healthy"
    assert rows["same"].mcpctl_result is rows["same"].result
    assert rows["other"].mcpctl_result is not rows["other"].result
    assert report.healthy


def test_a_client_that_passes_its_whole_environment_is_probed_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same command and arguments: Cursor gives the server every variable, mcpctl a few.
    monkeypatch.setenv("AS_TEST_WHOLE", "x")
    file = tmp_path / "mcp.json"
    file.write_text(json.dumps({"mcpServers": {"s": BASIC}}))
    ours = [("s", ServerEntry(command=sys.executable, args=tuple(BASIC["args"])), "external")]
    report = anyio.run(lambda: health_as_client(read_client("cursor", file), ours))
    row = report.rows[0]
    assert row.mcpctl_result is not row.result and row.verdict == row.mcpctl == "healthy"
    assert row.env_difference is not None and "AS_TEST_WHOLE" in row.env_difference
