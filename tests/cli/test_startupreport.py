"""report through the CLI: the summary, the previous snapshot, --save, --probe against real
servers, the formats and the exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.test_health import make_internal
from tests.conftest import SERVERS, Cli, write_config
from tests.test_tokencount import independent_tokens

PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")], "description": "The basic server"}
BROKEN = {"command": PY, "args": [str(SERVERS / "misbehave.py"), "exit"]}
TIME = {"command": "uvx", "args": ["mcp-server-time"], "description": "Current time"}


def default_snapshot(isolated: Path) -> Path:
    return isolated.parent / "mcpctl-home" / "state" / "last-known-mcps.json"


def test_first_report_without_probing(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"time": TIME, "off": {**TIME, "enabled": False}})
    r = cli("report")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "MCP servers: 1 (0 internal, 1 external), not probed"
    assert lines[1].startswith("Snapshot 20")
    assert "- time: Current time" in lines
    assert "Disabled: off" in lines
    assert lines[-1] == "First snapshot: nothing to compare with."
    assert r.stderr == ""


def test_save_then_report_the_changes(cli: Cli, config_path: Path, isolated: Path) -> None:
    write_config(config_path, {"time": TIME, "fetch": {"command": "uvx", "args": ["fetch"]}})
    r = cli("report", "--save")
    assert r.exit_code == 0
    saved = default_snapshot(isolated)
    assert "saved the snapshot to" in r.stderr and str(saved) in r.stderr
    before = json.loads(saved.read_text())
    assert [m["name"] for m in before["mcps"]] == ["fetch", "time"]
    write_config(
        config_path, {"time": {**TIME, "args": ["mcp-server-time", "--tz", "UTC"]}, "new": TIME}
    )
    r = cli("report")
    assert r.exit_code == 0
    assert (
        f"Changes since {before['timestamp']}:\n+ new: added\n- fetch: removed\n~ time: config changed (args)\n"
        in r.stdout
    )
    assert json.loads(saved.read_text()) == before  # no --save: the snapshot stays
    r = cli("report", "--save", "-q")
    assert r.stderr == ""
    r = cli("report")
    assert "No changes since " in r.stdout


def test_snapshot_location(cli: Cli, config_path: Path, isolated: Path, tmp_path: Path) -> None:
    write_config(config_path, {"time": TIME})
    by_env = tmp_path / "env" / "snap.json"
    by_flag = tmp_path / "flag.json"
    assert cli("report", "--save", env={"MCPCTL_SNAPSHOT": str(by_env)}).exit_code == 0
    assert by_env.exists() and not default_snapshot(isolated).exists()
    r = cli("report", "--save", "--snapshot", str(by_flag), env={"MCPCTL_SNAPSHOT": str(by_env)})
    assert r.exit_code == 0 and by_flag.exists()
    assert "First snapshot" in r.stdout  # the flag wins over the environment
    r = cli("report", "--json", env={"MCPCTL_SNAPSHOT": str(by_env)})
    assert r.json["data"]["snapshot_file"] == str(by_env)
    assert r.json["data"]["changes"]["first"] is False and r.json["data"]["saved"] is False


def test_an_orchestrators_plain_snapshot_is_read(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    write_config(config_path, {"time": TIME, "new": TIME})
    old = tmp_path / "last-known-mcps.json"
    old.write_text(json.dumps({"timestamp": "2025-01-01T00:00:00Z", "mcps": [
        {"name": "time", "type": "external"}, {"name": "gone", "type": "external"},
    ]}))  # fmt: skip
    r = cli("report", "--snapshot", str(old))
    assert r.exit_code == 0
    assert "Changes since 2025-01-01T00:00:00Z:\n+ new: added\n- gone: removed\n" in r.stdout


def test_json_and_format_json_are_the_envelope(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"time": TIME, "bad": {"url": 3}})
    for args in (["--json"], ["--format", "json"]):
        r = cli("report", *args)
        assert r.exit_code == 0
        doc = r.json
        assert doc["command"] == "report" and doc["ok"] is True
        data = doc["data"]
        assert data["headline"] == "MCP servers: 1 (0 internal, 1 external), not probed"
        assert data["summary"]["total"] == 1 and data["summary"]["healthy"] is None
        assert data["servers"][0]["status"] == "not probed"
        assert data["changes"]["first"] is True
        assert data["problems"] == doc["warnings"] and "bad" in doc["warnings"][0]


def test_markdown(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"time": TIME})
    r = cli("report", "--format", "markdown")
    assert r.exit_code == 0
    assert r.stdout.startswith("## MCP servers: 1 (0 internal, 1 external), not probed\n\n")
    assert "### External servers\n\n- **time**: Current time\n" in r.stdout


def test_config_problems_are_in_the_text_once(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"time": TIME, "bad": {"url": 3}})
    r = cli("report")
    assert r.exit_code == 0
    assert "Config problems:\n- server 'bad' skipped" in r.stdout
    assert "bad" not in r.stderr


def test_bad_input(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    write_config(config_path, {"time": TIME})
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    r = cli("report", "--snapshot", str(bad))
    assert r.exit_code == 2 and "is not a snapshot" in r.stderr and "Traceback" not in r.stderr
    r = cli("report", "--format", "yaml")
    assert r.exit_code == 2
    r = cli("report", "--probe", "--timeout", "soon")
    assert r.exit_code == 2 and "--timeout" in r.stderr
    r = cli("--config", str(tmp_path / "missing.json"), "report")
    assert r.exit_code == 2 and "no config file" in r.stderr


def test_a_snapshot_that_cannot_be_saved(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.errors import StorageError
    from mcpctl.snapshot import files

    def failing(snapshot: object, path: Path) -> None:
        raise StorageError(f"cannot write {path}: disk full")

    monkeypatch.setattr(files, "save_snapshot", failing)
    write_config(config_path, {"time": TIME})
    snap = tmp_path / "snap.json"
    r = cli("report", "--save", "--snapshot", str(snap))
    assert r.exit_code == 3
    assert r.stdout.startswith("MCP servers: 1")  # the summary is still printed
    assert "error: cannot write" in r.stderr and "saved" not in r.stderr
    r = cli("report", "--save", "--snapshot", str(snap), "--json")
    assert r.exit_code == 3 and r.json["ok"] is False and r.json["data"]["saved"] is False
    assert r.json["errors"][0]["code"] == "io_error"


# --- probing real servers ------------------------------------------------------------------


@pytest.mark.slow
def test_probe_counts_tools_and_failures(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC, "broken": BROKEN})
    r = cli("report", "--probe")
    assert r.exit_code == 1  # a server failed, as health
    out = r.stdout
    assert out.startswith("MCP servers: 2 (0 internal, 2 external), 1 healthy, 1 failed\n")
    listed = cli("tools", "basic", "--all", "--json").json["data"]["tools"]
    cost = independent_tokens({**t, "name": t["tool"]} for t in listed)
    assert (
        f"- basic (10 tools, {cost:,} tokens): The basic server\n"
        "  add, audio, echo, fail, headers, +5 more\n"
    ) in out
    assert "- broken (failed: server_exited)\n" in out
    assert out.endswith("Failed:\n- broken: server_exited\n")
    write_config(config_path, {"basic": BASIC})
    r = cli("report", "--probe", "--json")
    assert r.exit_code == 0 and r.json["data"]["summary"]["healthy"] == 1
    basic = r.json["data"]["servers"][0]
    assert basic["tokens"] == {"encoding": "o200k_base", "total": cost}
    assert r.json["data"]["servers"][0]["tool_count"] == 10


def test_probe_with_a_degraded_server_exits_1(cli: Cli, config_path: Path) -> None:
    # raw.py's tool list needs repairs: usable, but degraded, and health fails on it too.
    write_config(config_path, {"raw": {"command": PY, "args": [str(SERVERS / "raw.py")]}})
    r = cli("report", "--probe", "--json")
    assert r.exit_code == 1, r.stdout + r.stderr
    assert r.json["ok"] is False
    summary = r.json["data"]["summary"]
    assert (summary["healthy"], summary["degraded"]) == (0, 1), summary
    raw = r.json["data"]["servers"][0]
    assert raw["status"] == "degraded" and any("inputSchema" in w for w in raw["degraded"])
    text = cli("report", "--probe")
    assert text.exit_code == 1
    assert text.stdout.startswith("MCP servers: 1 (0 internal, 1 external), 0 healthy, 1 degraded")
    assert cli("health").exit_code == 1  # as health says


@pytest.mark.slow
def test_probe_finds_changed_and_added_tools(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    write_config(config_path, {"basic": BASIC})
    assert cli("report", "--probe", "--save", "--snapshot", str(snap)).exit_code == 0
    # What the server said before, as if its echo tool had since changed what it says.
    data = json.loads(snap.read_text())
    echo = next(t for t in data["mcps"][0]["probe"]["tools"] if t["name"] == "echo")
    echo["definition"]["description"] = "Return the text."
    echo["fingerprint"] = "sha256:older"
    snap.write_text(json.dumps(data))
    write_config(config_path, {"basic": {**BASIC, "args": [*BASIC["args"], "--tools", "2"]}})
    r = cli("report", "--probe", "--save", "--snapshot", str(snap), "--format", "markdown")
    assert r.exit_code == 0, r.stderr
    assert "- `~` **basic**: config changed (`args`)\n" in r.stdout
    assert "- `~` **basic**: tools added: `extra_000`, `extra_001`\n" in r.stdout
    assert "- `!` **basic**: tool `echo` changed (`description`)\n" in r.stdout
    r = cli("report", "--save", "--snapshot", str(snap), "--json")
    assert r.json["data"]["changes"]["empty"] is True
    assert any("save with --probe" in w for w in r.json["warnings"])


@pytest.mark.slow
def test_probe_with_internal_servers(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    root = tmp_path / "mcps"
    make_internal(root, "guardian", {"mcpName": "guardian", "command": PY,
                                     "args": [str(SERVERS / "basic.py")], "description": "Guard"})  # fmt: skip
    write_config(config_path, {"guardian": {"command": "clash"}, "basic": BASIC})
    r = cli("report", "--probe", "--internal-root", str(root))
    assert r.exit_code == 0, r.stdout + r.stderr
    assert r.stdout.startswith("MCP servers: 2 (1 internal, 1 external), 2 healthy, 0 failed\n")
    assert "Internal: guardian\n" in r.stdout
    assert "guardian" in r.stderr and "internal" in r.stderr  # the clash, on stderr
