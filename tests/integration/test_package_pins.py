"""Package pins against the real npm registry and PyPI (network).

A published server pinned at an older version, then unpinned: ``snapshot diff --packages``
reports that it moved; the integrity recorded is the one ``npm view NAME@VERSION
dist.integrity`` prints, and the sha256 of a PyPI wheel the one PyPI's JSON API lists.
Without the network (or npm) these tests skip; under MCPCTL_REQUIRE_INTEGRATION=1 they fail.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REQUIRE_INTEGRATION, Cli, need_program, write_config

pytestmark = pytest.mark.integration

PACKAGE = "@modelcontextprotocol/server-everything"
OLD = "2025.8.18"  # an old release: the latest has long moved on
PYPI_PACKAGE = "mcp-server-time"
PYPI_OLD = "0.6.2"


def _need_network() -> None:
    """Skip (fail under MCPCTL_REQUIRE_INTEGRATION=1) when the registries are unreachable."""
    import socket

    for host in ("registry.npmjs.org", "pypi.org"):
        try:
            socket.create_connection((host, 443), timeout=10).close()
        except OSError as exc:
            message = f"network: {host} is unreachable ({exc})"
            if REQUIRE_INTEGRATION:
                pytest.fail(message + "; MCPCTL_REQUIRE_INTEGRATION=1 forbids skipping")
            pytest.skip(message)


def test_a_pinned_server_moves_when_unpinned(cli: Cli, config_path: Path) -> None:
    _need_network()
    npm = need_program("npm", "npm view gives the registry's integrity to compare with")
    write_config(config_path, {
        "everything": {"command": "npx", "args": ["-y", f"{PACKAGE}@{OLD}"]},
        "time": {"command": "uvx", "args": ["--from", f"{PYPI_PACKAGE}=={PYPI_OLD}",
                                            PYPI_PACKAGE]},
    })  # fmt: skip
    r = cli("snapshot", "save", "--packages", "-o", "lock.json", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    pins = json.loads(Path("lock.json").read_text())["packages"]
    assert pins["everything"]["version"] == OLD and pins["everything"]["pinned"] is True
    view = subprocess.run(
        [npm, "view", f"{PACKAGE}@{OLD}", "dist.integrity"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert pins["everything"]["integrity"] == view.stdout.strip()
    assert pins["time"]["version"] == PYPI_OLD
    assert pins["time"]["integrity"].startswith("sha256:") and len(pins["time"]["integrity"]) == 71
    assert pins["time"]["file"].endswith(".whl")

    # Pinned, nothing moved.
    r = cli("snapshot", "diff", "--packages", "--against", "lock.json", "--exit-code")
    assert r.exit_code == 0, r.stdout + r.stderr

    # Unpinned: it resolves to the latest release, which is not the old one.
    write_config(config_path, {
        "everything": {"command": "npx", "args": ["-y", PACKAGE]},
        "time": {"command": "uvx", "args": [PYPI_PACKAGE]},
    })  # fmt: skip
    r = cli("snapshot", "diff", "--packages", "--against", "lock.json", "--exit-code", "--json")
    assert r.exit_code == 1, r.stdout + r.stderr
    changes = {(c["server"], c["kind"]): c for c in r.json["data"]["packages"]["changes"]}
    moved = changes["everything", "moved"]
    assert moved["old"] == OLD and moved["new"] != OLD and moved["pinned"] is False
    assert moved["message"].startswith(f"moved {OLD} → ")
    assert ("everything", "unpinned") in changes
    assert changes["time", "moved"]["old"] == PYPI_OLD
