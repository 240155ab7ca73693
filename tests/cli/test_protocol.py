"""--protocol and the entry's "protocol" field through the CLI: the era each server speaks in
health, tools, call, snapshot and report, the remembered eras in the state directory, and
the errors of a pinned era a server does not speak."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpctl.probe.eras import MEMORY_FILENAME
from tests.conftest import SERVERS, Cli, write_config

PY = sys.executable
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
MODERN_SERVER = {"command": PY, "args": [str(SERVERS / "modern.py")]}
RAW = {"command": PY, "args": [str(SERVERS / "raw.py"), "clean"]}  # handshake-only
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}
MISMATCH = "the server speaks only 2026-07-28; --protocol legacy asks for the handshake revisions"
FIX = "use --protocol auto (or --protocol modern)"


@pytest.fixture
def two_eras(config_path: Path) -> Path:
    """A modern-only server and a handshake-only one."""
    return write_config(config_path, {"modern-server": MODERN_SERVER, "raw": RAW})


def memory_file() -> Path:
    """The era memory in the state directory of the test's MCPCTL_HOME."""
    return Path(os.environ["MCPCTL_HOME"]) / "state" / MEMORY_FILENAME


def mcps(r: Any) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in r.json["data"]["mcps"]}


def test_health_json_says_each_servers_era_and_remembers_it(cli: Cli, two_eras: Path) -> None:
    assert not memory_file().exists()
    r = cli("health", "--json")
    assert r.exit_code == 0, r.stdout
    found = mcps(r)
    assert found["modern-server"]["protocol_version"] == MODERN
    assert found["modern-server"]["protocol"] == {
        "era": "modern", "version": MODERN, "supported": [MODERN], "detected": "discovered",
    }  # fmt: skip
    assert found["raw"]["protocol_version"] == HANDSHAKE
    assert found["raw"]["protocol"] == {
        "era": "legacy", "version": HANDSHAKE, "supported": [], "detected": "fallback",
    }  # fmt: skip
    assert "discover" in found["modern-server"]["latency_ms"]
    assert "initialize" in found["raw"]["latency_ms"] and "ping" in found["raw"]["latency_ms"]
    # The eras are remembered in MCPCTL_HOME/state, and the next run starts from them.
    eras = json.loads(memory_file().read_text())["eras"]
    assert sorted(e["era"] for e in eras.values()) == ["legacy", "modern"]
    again = mcps(cli("health", "--json"))
    assert again["modern-server"]["protocol"]["detected"] == "remembered"
    assert again["raw"]["protocol"]["detected"] == "remembered"
    assert again["raw"]["protocol"]["era"] == "legacy"


def test_health_verbose_table_has_a_protocol_column(
    cli: Cli, two_eras: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Piped: tab-separated, the protocol after the transport, with -v only.
    rows = {
        line.split("\t")[0]: line.split("\t") for line in cli("-v", "health").stdout.splitlines()
    }
    assert rows["modern-server"][1:5] == ["external", "stdio", MODERN, "healthy"]
    assert rows["raw"][1:5] == ["external", "stdio", f"{HANDSHAKE} (handshake)", "healthy"]
    plain = cli("health").stdout
    assert plain.splitlines()[0].split("\t")[1:4] == ["external", "stdio", "healthy"]
    assert MODERN not in plain
    # On a terminal: a PROTOCOL column between TRANSPORT and STATUS.
    from mcpctl.cli import output

    monkeypatch.setattr(output, "stdout_is_tty", lambda: True)
    r = cli("health", "-v")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:5] == ["NAME", "TYPE", "TRANSPORT", "PROTOCOL", "STATUS"], lines
    at = lines[0].index("PROTOCOL")
    cells = {line.split()[0]: line[at:].split("  ")[0] for line in lines[1:]}
    assert cells == {"modern-server": MODERN, "raw": f"{HANDSHAKE} (handshake)"}, lines
    assert "PROTOCOL" not in cli("health").stdout


def test_health_pinned_to_the_handshake_on_a_modern_only_server(cli: Cli, two_eras: Path) -> None:
    r = cli("health", "modern-server", "--protocol", "legacy", "--json")
    assert r.exit_code == 1
    error = mcps(r)["modern-server"]["error"]
    assert error["code"] == "protocol_mismatch"
    assert error["message"].startswith(MISMATCH) and error["hint"] == FIX
    assert r.json["errors"][0]["reason"] == "protocol_mismatch"
    r = cli("health", "modern-server", "--protocol", "legacy")
    assert r.exit_code == 1
    assert f"protocol_mismatch: {MISMATCH}" in r.stdout
    assert FIX in r.stderr
    # Pinned, nothing is remembered; the handshake-only server is fine with it.
    assert not memory_file().exists()
    r = cli("health", "raw", "--protocol", "legacy", "--json")
    assert r.exit_code == 0 and mcps(r)["raw"]["protocol"]["detected"] == "pinned"
    r = cli("health", "raw", "--protocol", "modern", "--json")
    assert r.exit_code == 1
    error = mcps(r)["raw"]["error"]
    assert error["code"] == "protocol_mismatch" and f"it offered {HANDSHAKE}" in error["message"]
    assert error["hint"] == "use --protocol auto (or --protocol legacy)"


def test_tools_json_says_each_servers_era(cli: Cli, two_eras: Path) -> None:
    r = cli("tools", "--json")
    assert r.exit_code == 0, r.stderr
    servers = {s["name"]: s for s in r.json["data"]["servers"]}
    assert servers["modern-server"]["protocol"]["era"] == "modern"
    assert servers["modern-server"]["protocol_version"] == MODERN
    assert servers["modern-server"]["tool_count"] == 3
    assert servers["raw"]["protocol"]["era"] == "legacy"
    assert servers["raw"]["protocol_version"] == HANDSHAKE
    r = cli("tools", "modern-server", "--protocol", "legacy", "--json")
    assert r.exit_code == 1
    (failed,) = r.json["data"]["failed"]
    assert failed["error"]["code"] == "protocol_mismatch" and failed["error"]["hint"] == FIX
    assert r.json["data"]["servers"][0]["protocol"] is None


def test_call_a_modern_only_server(cli: Cli, two_eras: Path) -> None:
    r = cli("call", "modern-server", "echo", "--arg", "text=hi")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.strip() == "hi"
    r = cli("call", "modern-server", "add", "--arg", "a=2", "--arg", "b=40", "--protocol", "modern")
    assert r.exit_code == 0 and r.stdout.strip() == "42", r.stderr
    r = cli("call", "modern-server", "echo", "--arg", "text=hi", "--protocol", "legacy")
    assert r.exit_code == 3
    assert MISMATCH in r.stderr and FIX in r.stderr
    r = cli("call", "modern-server", "echo", "--arg", "text=hi", "--protocol", "legacy", "--json")
    assert r.exit_code == 3 and r.json["errors"][0]["reason"] == "protocol_mismatch"


@pytest.mark.parametrize(
    "command",
    [["health"], ["tools"], ["call", "modern-server", "echo"], ["snapshot", "save", "--probe"],
     ["snapshot", "diff", "--probe"], ["report", "--probe"]],
)  # fmt: skip
def test_an_unknown_protocol_is_a_usage_error(cli: Cli, two_eras: Path, command: list[str]) -> None:
    r = cli(*command, "--protocol", "bogus")
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert "'bogus' is not one of 'auto', 'modern', 'legacy'" in r.stderr
    assert not memory_file().exists()


def test_the_entry_field_pins_the_era_and_the_flag_overrides_it(
    cli: Cli, config_path: Path
) -> None:
    write_config(config_path, {"basic": {**BASIC, "protocol": "legacy"},
                               "modern-server": {**MODERN_SERVER, "protocol": "legacy"}})  # fmt: skip
    r = cli("health", "--json")
    assert r.exit_code == 1
    found = mcps(r)
    assert found["basic"]["healthy"]
    assert found["basic"]["protocol"] == {
        "era": "legacy", "version": HANDSHAKE, "supported": [], "detected": "pinned",
    }  # fmt: skip
    error = found["modern-server"]["error"]
    assert error["code"] == "protocol_mismatch"
    assert 'its "protocol": "legacy"' in error["message"]
    assert (
        error["hint"]
        == 'set "protocol": "auto" (or "modern") in the entry, or pass --protocol auto'
    )
    r = cli("health", "--json", "--protocol", "auto")
    assert r.exit_code == 0, r.stdout
    found = mcps(r)
    assert found["basic"]["protocol"]["era"] == "modern"
    assert found["basic"]["protocol"]["detected"] == "discovered"
    assert found["modern-server"]["protocol"]["era"] == "modern"
    assert cli("validate").exit_code == 0


def test_an_invalid_protocol_value_is_a_validation_error(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": {**BASIC, "protocol": "new"}})
    r = cli("validate")
    assert r.exit_code == 1
    assert "'auto', 'modern' or 'legacy'" in r.stdout, r.stdout
    r = cli("validate", "--json")
    assert r.exit_code == 1
    (problem,) = r.json["data"]["problems"]
    assert problem["path"] == "basic.protocol" and problem["severity"] == "error"
    assert all(mode in problem["message"] for mode in ("auto", "modern", "legacy"))
    # Commands that run servers leave the entry out, and say why.
    r = cli("health", "--json")
    assert r.json["data"]["summary"]["total"] == 0
    assert r.json["warnings"] == [
        "server 'basic' skipped: protocol must be one of auto, modern, legacy; got 'new'"
    ]
    for bad in (1, None, ["legacy"], "Legacy"):
        write_config(config_path, {"basic": {**BASIC, "protocol": bad}})
        assert cli("validate").exit_code == 1, bad


@pytest.mark.parametrize(("saved", "compared"), [("modern", "legacy"), ("legacy", "modern")])
@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_a_lock_from_one_era_matches_a_probe_in_the_other(
    cli: Cli, config_path: Path, tmp_path: Path, http_server: Any,
    transport: str, saved: str, compared: str,
) -> None:  # fmt: skip
    entry = BASIC if transport == "stdio" else {"url": http_server(transport) + "/mcp"}
    write_config(config_path, {"basic": entry})
    lock = tmp_path / "mcp-lock.json"
    r = cli("snapshot", "save", "--probe", "-o", str(lock), "--protocol", saved)
    assert r.exit_code == 0, r.stderr
    (recorded,) = json.loads(lock.read_text())["mcps"]
    assert len(recorded["probe"]["tools"]) == 10 and "error" not in recorded["probe"]
    args = ["snapshot", "diff", "--probe", "--against", str(lock), "--exit-code"]
    r = cli(*args, "--protocol", compared)
    assert r.exit_code == 0, (r.stdout, r.stderr)
    r = cli(*args, "--protocol", compared, "--json")
    assert r.exit_code == 0 and r.json["data"]["empty"], r.json
    assert r.json["warnings"] == []


def test_snapshot_and_report_speak_the_pinned_era(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    write_config(config_path, {"modern-server": MODERN_SERVER})
    lock = tmp_path / "mcp-lock.json"
    assert cli("snapshot", "save", "--probe", "-o", str(lock)).exit_code == 0
    r = cli("snapshot", "save", "--probe", "-o", str(tmp_path / "other.json"), "--protocol",
            "legacy", "--json")  # fmt: skip
    assert r.json["data"]["probe_failed"] == ["modern-server"]
    assert any("protocol_mismatch" in w for w in r.json["warnings"])
    args = ["snapshot", "diff", "--probe", "--against", str(lock), "--exit-code"]
    assert cli(*args).exit_code == 0
    r = cli(*args, "--protocol", "legacy")
    assert r.exit_code == 1 and "probe failed (protocol_mismatch)" in r.stdout
    r = cli("report", "--probe", "--json", "--protocol", "legacy")
    assert r.exit_code == 1
    assert r.json["data"]["failed"] == [
        {"name": "modern-server", "type": "external", "error": "protocol_mismatch"}
    ]
    r = cli("report", "--probe", "--json")
    assert r.exit_code == 0 and r.json["data"]["servers"][0]["status"] == "healthy"


def test_report_json_says_each_servers_era(cli: Cli, two_eras: Path) -> None:
    r = cli("report", "--probe", "--json")
    assert r.exit_code == 0, r.stderr
    servers = {s["name"]: s for s in r.json["data"]["servers"]}
    assert servers["modern-server"]["protocol"]["era"] == "modern"
    assert servers["raw"]["protocol"]["era"] == "legacy"
