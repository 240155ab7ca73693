"""mcpctl doctor: the human report, --json, exit codes, and never a secret."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpctl.auth.records import OAuthRecord, save_record
from mcpctl.auth.secrets import SecretStore
from tests.conftest import MCPCTL, SERVERS, Cli, MemoryKeyring, write_config
from tests.doctor.fakes import FakeBin, make_fake_bin
from tests.test_text import NPM_404, NPM_CAUSE

ENV_CANARY = "env-doctor-canary-7d3f9a"
KEYRING_CANARY = "keyring-doctor-canary-2b8e4c"
TOKEN_CANARY = "token-doctor-canary-5a1f6d"


@pytest.fixture
def fake_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeBin:
    fake = make_fake_bin(tmp_path)
    monkeypatch.setenv("PATH", str(fake.path))
    fake.add("node", "v20.11.0")
    fake.add("npx", "10.2.4")
    return fake


@pytest.fixture
def healthy(config_path: Path, fake_bin: FakeBin, memory_keyring: MemoryKeyring) -> Path:
    """A config whose servers have everything they need: env, keyring, node, a sign-in."""
    SecretStore().set("DOCS_KEY", KEYRING_CANARY)
    save_record(
        "docs",
        OAuthRecord("https://docs.example.com/mcp", access_token=TOKEN_CANARY,
                    expires_at=time.time() + 600),
    )  # fmt: skip
    return write_config(config_path, {
        "github": {"command": "npx", "args": ["-y", "server-github"],
                   "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
        "docs": {"url": "https://docs.example.com/mcp", "auth": {"type": "oauth"},
                 "headers": {"X-Key": "${DOCS_KEY}"}},
    })  # fmt: skip


def test_healthy_setup_exits_0_with_words_when_piped(
    cli: Cli, healthy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", ENV_CANARY)
    r = cli("doctor")
    assert r.exit_code == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    for title in ("Config file", "Keyring", "Placeholders", "Runtimes", "OAuth sign-ins",
                  "Registry cache", "Snapshot"):  # fmt: skip
        assert title in lines
    assert (
        f"  ok   {healthy} (the nearest external-mcps.json from the current directory upwards)"
        in lines
    )
    assert "  ok   GITHUB_TOKEN: from the environment; used by github" in lines
    assert "  ok   DOCS_KEY: from the keyring; used by docs" in lines
    assert any(line.startswith("  ok   npx: ") and "(node 20.11.0)" in line for line in lines)
    assert "  info no snapshot yet" in r.stdout
    assert "         fix: 'mcpctl snapshot save' records one" in r.stdout
    assert lines[-1] == "7 ok, 2 info, 0 warnings, 0 errors: everything looks fine"
    assert "✓" not in r.stdout and r.stderr == ""


def test_something_broken_exits_1_and_says_how_to_fix_it(cli: Cli, healthy: Path) -> None:
    r = cli("doctor")  # GITHUB_TOKEN is set nowhere
    assert r.exit_code == 1
    assert (
        "  FAIL GITHUB_TOKEN: not set in the environment or the keyring, and no default; "
        "needed by github"
    ) in r.stdout
    assert "         fix: store it with 'mcpctl secret set GITHUB_TOKEN', or export" in r.stdout
    assert r.stdout.splitlines()[-1].endswith("1 error: something is broken; fix the errors above")


def test_json_envelope(cli: Cli, healthy: Path) -> None:
    r = cli("doctor", "--json")
    assert r.exit_code == 1
    doc = r.json
    assert (doc["command"], doc["ok"]) == ("doctor", False)
    data = doc["data"]
    assert data["config"] == str(healthy) and data["config_origin"] == "nearest"
    assert data["counts"] == {"ok": 6, "info": 2, "warning": 0, "error": 1}
    missing = next(f for f in data["findings"] if f["code"] == "placeholder_missing")
    assert missing == {
        "section": "placeholders", "code": "placeholder_missing", "severity": "error",
        "message": "GITHUB_TOKEN: not set in the environment or the keyring, and no default; "
        "needed by github",
        "fix": "store it with 'mcpctl secret set GITHUB_TOKEN', or export GITHUB_TOKEN=...",
        "subject": "GITHUB_TOKEN", "servers": ["github"],
        "details": {"variable": "GITHUB_TOKEN", "source": "missing"},
    }  # fmt: skip
    assert [e["code"] for e in doc["errors"]] == ["placeholder_missing"]
    assert doc["errors"][0]["hint"] == missing["fix"]
    assert {f["section"] for f in data["findings"]} == {
        "config", "keyring", "placeholders", "runtimes", "oauth", "registries", "snapshot",
    }  # fmt: skip


def test_no_secret_value_anywhere(cli: Cli, healthy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", ENV_CANARY)
    for args in (["doctor"], ["doctor", "--json"], ["doctor", "-v"]):
        r = cli(*args)
        for canary in (ENV_CANARY, KEYRING_CANARY, TOKEN_CANARY):
            assert canary not in r.stdout + r.stderr, (args, canary)


def test_marks_on_a_utf8_terminal(cli: Cli, healthy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpctl.cli import output

    monkeypatch.setattr(output, "stdout_is_tty", lambda: True)
    r = cli("doctor")
    assert r.exit_code == 1
    assert "  ✓ DOCS_KEY: from the keyring; used by docs" in r.stdout
    assert "  ✗ GITHUB_TOKEN: not set" in r.stdout
    assert "  · no snapshot yet" in r.stdout
    assert "FAIL" not in r.stdout


def test_the_config_option_and_a_missing_file(cli: Cli, tmp_path: Path, fake_bin: FakeBin) -> None:
    r = cli("doctor", "--json", "--config", str(tmp_path / "nope.json"))
    assert r.exit_code == 1
    first = r.json["data"]["findings"][0]
    assert (first["code"], first["details"]["origin"]) == ("config_not_found", "--config")


def test_no_config_yet_is_not_broken(
    cli: Cli, fake_bin: FakeBin, memory_keyring: MemoryKeyring
) -> None:
    r = cli("doctor", "--json")
    assert r.exit_code == 0, r.stdout
    codes = [f["code"] for f in r.json["data"]["findings"]]
    assert codes[:2] == ["config_not_created", "keyring_ok"]
    assert "placeholders_none" in codes and "runtimes_none" in codes and "oauth_none" in codes


def test_no_server_is_started(
    cli: Cli, config_path: Path, fake_bin: FakeBin, memory_keyring: MemoryKeyring
) -> None:
    """Every server here would leave a marker file if it ran."""
    fake_bin.add("my-server")
    script = config_path.parent / "serve.sh"
    script.write_text(f"#!/bin/sh\necho started > {fake_bin.marker}\n")
    script.chmod(0o755)
    write_config(config_path, {
        "a": {"command": "node", "args": ["index.js"]},
        "b": {"command": "npx", "args": ["-y", "pkg"]},
        "c": {"command": "my-server"},
        "d": {"command": "./serve.sh"},
    })  # fmt: skip
    r = cli("doctor")
    assert r.exit_code == 0, r.stdout
    assert not fake_bin.marker.exists()
    assert fake_bin.calls() == ["node --version"]


def test_help_has_examples(cli: Cli) -> None:
    r = cli("doctor", "--help")
    assert r.exit_code == 0
    assert "without starting any server" in r.stdout and "mcpctl doctor --json" in r.stdout


PROBE = """
import json, sys
from mcpctl.cli.app import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps(sorted(m for m in sys.modules)), file=sys.stderr)
"""


def test_no_sdk_no_network_client_no_rich_when_piped(config_path: Path, tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    write_config(config_path, {
        f"s{i}": {"command": "npx", "env": {"T": f"${{T{i}}}"}} if i % 2 else
        {"url": f"https://h{i}.example/mcp", "auth": {"type": "oauth"}}
        for i in range(50)
    })  # fmt: skip
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    r = subprocess.run([sys.executable, "-c", PROBE, "doctor", "--json"], capture_output=True,
                       text=True, env=env, timeout=60, cwd=config_path.parent)  # fmt: skip
    assert r.returncode == 0, r.stderr  # the probe script itself; doctor found errors:
    assert json.loads(r.stdout)["data"]["counts"]["error"] >= 1
    tops = {m.split(".")[0] for m in json.loads(r.stderr.strip().splitlines()[-1])}
    assert not tops & {"mcp", "mcp_types", "httpx", "httpx2", "anyio", "rich"}, tops


# --- doctor NAME -------------------------------------------------------------------------

PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}
QUITS = "import os, sys; sys.stderr.write('fatal: ' + os.environ.get('K', '') + '\\n'); sys.exit(3)"


@pytest.fixture
def servers(config_path: Path, memory_keyring: MemoryKeyring) -> Path:
    SecretStore().set("QUITS_KEY", KEYRING_CANARY)
    return write_config(config_path, {
        "basic": BASIC,
        "gone": {"command": "no-such-program-doctor-cli"},
        "quits": {"command": PY, "args": ["-c", QUITS],
                  "env": {"K": "${QUITS_KEY}", "E": "${QUITS_ENV}"}},
    })  # fmt: skip


def test_name_failing_step_piped(cli: Cli, servers: Path) -> None:
    r = cli("doctor", "gone", "--timeout", "30s")
    assert r.exit_code == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "gone (stdio)"
    assert re.fullmatch(r"  ok   config       +\d+ ms  found in .*, valid, enabled", lines[1])
    assert re.fullmatch(
        r"  FAIL command +\d+ ms  'no-such-program-doctor-cli' is not found on PATH", lines[3]
    )
    assert lines[4].strip().startswith("fix: install it")
    assert [line.split()[:2] for line in lines[5:8]] == [
        ["skip", "spawn"], ["skip", "protocol"], ["skip", "lists"],
    ]  # fmt: skip
    assert lines[-1] == "gone: failed at command; next it would check: spawn"


def test_name_json_envelope(cli: Cli, servers: Path) -> None:
    r = cli("doctor", "gone", "--json")
    assert r.exit_code == 1
    envelope = r.json
    assert envelope["ok"] is False and envelope["command"] == "doctor"
    data = envelope["data"]
    assert (data["name"], data["transport"], data["next"], data["ok"]) == (
        "gone", "stdio", "spawn", False,
    )  # fmt: skip
    steps = data["steps"]
    assert [s["id"] for s in steps] == ["config", "placeholders", "command", "spawn",
                                        "protocol", "lists"]  # fmt: skip
    assert [s["status"] for s in steps] == ["passed"] * 2 + ["failed"] + ["skipped"] * 3
    assert all(set(s) == {"id", "status", "ms", "detail", "fix"} for s in steps)
    assert steps[2]["fix"] and steps[0]["fix"] is None
    assert envelope["errors"] == [{
        "code": "command_failed",
        "message": "gone: 'no-such-program-doctor-cli' is not found on PATH",
        "hint": steps[2]["fix"],
    }]  # fmt: skip


def test_name_healthy_server_exits_0(cli: Cli, servers: Path) -> None:
    r = cli("doctor", "basic", "--protocol", "legacy")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert re.search(r"  ok   protocol +\d+ ms  MCP 2025-11-25 \(initialize handshake\) over stdio",
                     r.stdout)  # fmt: skip
    assert re.search(r"all 6 steps passed \(\d+ ms\)$", r.stdout.strip())
    r = cli("doctor", "basic", "--json")
    assert r.exit_code == 0 and r.json["data"]["next"] is None and r.json["errors"] == []


def test_name_marks_on_a_utf8_terminal(
    cli: Cli, servers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.cli import output

    monkeypatch.setattr(output, "stdout_is_tty", lambda: True)
    r = cli("doctor", "gone")
    assert r.exit_code == 1
    assert "  ✗ command" in r.stdout and "  ✓ config" in r.stdout and "  - spawn" in r.stdout


def test_name_never_shows_a_secret(
    cli: Cli, servers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server writes both values on stderr and exits: the step shows that line
    redacted, and where each value comes from -- never the values."""
    monkeypatch.setenv("QUITS_ENV", ENV_CANARY)
    for args in (["doctor", "quits"], ["doctor", "quits", "--json"], ["-v", "doctor", "quits"]):
        r = cli(*args)
        assert r.exit_code == 1, (args, r.stdout + r.stderr)
        assert "QUITS_KEY: keyring" in r.stdout and "QUITS_ENV: environment" in r.stdout
        assert "fatal: ****" in r.stdout, r.stdout
        for canary in (ENV_CANARY, KEYRING_CANARY):
            assert canary not in r.stdout + r.stderr, (args, canary)


def test_name_unknown_is_the_usual_not_found_error(cli: Cli, servers: Path) -> None:
    r = cli("doctor", "basik", "--json")
    assert r.exit_code == 2
    error = r.json["errors"][0]
    assert error["code"] == "server_not_found" and error["hint"] == "did you mean 'basic'?"


def test_options_of_name_need_a_name(cli: Cli, servers: Path) -> None:
    r = cli("doctor", "--timeout", "5s")
    assert r.exit_code == 2
    assert "--timeout applies to one server" in r.stderr


def test_doctor_and_health_pick_the_same_lines_of_a_runners_stderr(
    cli: Cli, config_path: Path
) -> None:
    """npm's cause ("404 Not Found", "could not be found") comes before its advice and the
    path of its log: both commands show the cause, neither the advice."""
    runner = "import sys; sys.stderr.write(sys.argv[1]); sys.exit(1)"
    said = "\n".join(NPM_404) + "\n"
    write_config(config_path, {"pkg": {"command": PY, "args": ["-c", runner, said]}})
    r = cli("doctor", "pkg", "--json")
    assert r.exit_code == 1, r.stdout + r.stderr
    (spawn,) = [s for s in r.json["data"]["steps"] if s["id"] == "spawn"]
    assert spawn["status"] == "failed"
    assert spawn["detail"].endswith("; stderr: " + " | ".join(NPM_CAUSE))
    h = cli("health", "pkg")
    assert h.exit_code == 1
    shown = [line.partition("pkg stderr: ")[2] for line in h.stderr.splitlines()
             if "pkg stderr: " in line]  # fmt: skip
    assert shown == NPM_CAUSE


def test_health_latency_and_doctors_spawn_step_run_on_one_clock(config_path: Path) -> None:
    """From the server's start to the moment it was seen gone, in both: a server that lives
    0.4 s is timed at 0.4 s at least, though mcpctl loads its MCP client meanwhile (a fresh
    process, as users run it)."""
    lives = "import sys, time; time.sleep(0.4); sys.stderr.write('bye\\n'); sys.exit(3)"
    write_config(config_path, {"brief": {"command": PY, "args": ["-c", lives]}})
    env = {**os.environ, "MCPCTL_CONFIG": str(config_path)}

    def run(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [*MCPCTL, *args, "--json"], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 1, done.stdout + done.stderr
        data: dict[str, Any] = json.loads(done.stdout)["data"]
        return data

    (mcp,) = run("health", "brief")["mcps"]
    assert mcp["error"]["code"] == "server_exited"
    assert mcp["latency_ms"]["total"] >= 400
    spawn = next(s for s in run("doctor", "brief")["steps"] if s["id"] == "spawn")
    assert spawn["status"] == "failed" and spawn["ms"] >= 400
