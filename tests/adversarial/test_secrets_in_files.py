"""No secret in the files mcpctl writes from what servers send: lock files and the state
snapshot.

A snapshot records what each server offers whole -- serverInfo, tool descriptions, input
schemas, prompts -- and a lock file is meant to be committed. The leaky server
(tests/servers/leaky.py --describe) says the secret mcpctl resolved for it in all of these;
``snapshot save --probe -o``, ``report --probe --save`` and ``snapshot diff --probe --save``
run as real processes and must write no form of it (raw, JSON-escaped, percent-encoded,
base64), flag what held one (``definition contained a secret: redacted``, text and JSON),
and fingerprint it after the redaction: another secret next time is no change.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.secretforms import fragments
from tests.conftest import MCPCTL, SERVERS, write_config

pytestmark = pytest.mark.slow

LEAKY = str(SERVERS / "leaky.py")
NOTE = "definition contained a secret: redacted"


def canary() -> str:
    # Lowercase (no pattern recognises it) and made to need escaping in JSON and URLs.
    return f"canary{uuid.uuid4().hex}/+é"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    config = {
        "leaky": {"command": sys.executable, "args": [LEAKY, "--describe", "--token",
                                                      "${CANARY_ARG}"]},
        "leaky-env": {"command": sys.executable, "args": [LEAKY, "--describe"],
                      "env": {"LEAKY_TOKEN": "${CANARY_ENV}"}},
    }  # fmt: skip
    write_config(tmp_path / "external-mcps.json", config)
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1",
           "CANARY_ARG": canary(), "CANARY_ENV": canary(),
           "MCPCTL_HOME": str(tmp_path / "home"),
           "MCPCTL_SNAPSHOT": str(tmp_path / "state.json")}  # fmt: skip
    return tmp_path, env


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCPCTL, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


def assert_no_canary(env: dict[str, str], *texts: str) -> None:
    for name in ("CANARY_ARG", "CANARY_ENV"):
        for fragment in fragments(env[name]):
            for text in texts:
                assert fragment not in text, (name, fragment, text[-3000:])


def probe_of(lock: Any, server: str) -> dict[str, Any]:
    (record,) = [m for m in lock["mcps"] if m["name"] == server]
    probe: dict[str, Any] = record["probe"]
    return probe


def test_written_files_hold_no_secret(setup: tuple[Path, dict[str, str]]) -> None:
    work, env = setup
    saved = run(["snapshot", "save", "--probe", "-o", "mcp-lock.json"], work, env)
    assert saved.returncode == 0, saved.stderr
    reported = run(["report", "--probe", "--save"], work, env)
    assert reported.returncode == 0, reported.stderr
    lock_text = (work / "mcp-lock.json").read_text("utf-8")
    state_text = (work / "state.json").read_text("utf-8")
    assert_no_canary(env, lock_text, state_text, saved.stdout, saved.stderr, reported.stdout)
    # Redacted, not absent: the servers did say it, and the files say where.
    for text in (lock_text, state_text):
        lock = json.loads(text)
        for server in ("leaky", "leaky-env"):
            probe = probe_of(lock, server)
            assert probe["serverInfo"]["version"] == "1.0+****"
            assert probe["redacted"] == ["instructions", "serverInfo"]
            tools = {t["name"]: t for t in probe["tools"]}
            lookup = tools["lookup"]
            assert lookup["redacted"] is True
            assert lookup["definition"]["description"] == "Looks things up with the key ****."
            schema = lookup["definition"]["inputSchema"]["properties"]["query"]
            assert schema["default"] == "****"
            assert schema["description"] == "sent along with ****"
            assert list(tools["keyed"]["definition"]["inputSchema"]["properties"]) == ["****"]
            assert "redacted" not in tools["say"]  # what held none is not flagged
            (greet,) = probe["prompts"]
            assert greet["redacted"] is True and "****" in greet["definition"]["description"]
    assert f"leaky: tool lookup: {NOTE}" in saved.stderr
    assert f"leaky-env: prompt greet: {NOTE}" in saved.stderr
    assert f"- leaky: tool `lookup`: {NOTE}" not in reported.stdout  # plain text, not Markdown
    assert f"- leaky: tool lookup: {NOTE}" in reported.stdout
    assert "- leaky: serverInfo contained a secret: redacted" in reported.stdout

    # snapshot diff --save rewrites the state snapshot from a new probe.
    diffed = run(["snapshot", "diff", "--probe", "--save"], work, env)
    assert diffed.returncode == 0, diffed.stderr
    assert_no_canary(env, (work / "state.json").read_text("utf-8"), diffed.stdout, diffed.stderr)
    assert f"! leaky: tool lookup: {NOTE}" in diffed.stdout


def test_fingerprints_do_not_depend_on_the_secret(setup: tuple[Path, dict[str, str]]) -> None:
    work, env = setup
    first = run(["snapshot", "save", "--probe", "-o", "one.json"], work, env)
    assert first.returncode == 0, first.stderr
    other = {**env, "CANARY_ARG": canary(), "CANARY_ENV": canary()}
    second = run(["snapshot", "save", "--probe", "-o", "two.json"], work, other)
    assert second.returncode == 0, second.stderr
    one, two = (json.loads((work / f).read_text("utf-8")) for f in ("one.json", "two.json"))
    for server in ("leaky", "leaky-env"):
        assert probe_of(one, server) == probe_of(two, server)  # fingerprints and all
    # Another secret is no change, and what held one is still flagged, in text and in JSON.
    diffed = run(
        ["snapshot", "diff", "--probe", "--against", "one.json", "--exit-code"], work, other
    )
    assert diffed.returncode == 0, diffed.stdout + diffed.stderr
    assert f"! leaky: tool lookup: {NOTE}" in diffed.stdout
    assert "no changes since" in diffed.stderr
    as_json = run(["snapshot", "diff", "--probe", "--against", "one.json", "--json"], work, other)
    data = json.loads(as_json.stdout)["data"]
    assert data["empty"] is True and data["definitions_changed"] == []
    flagged = {(r["server"], r["kind"], r["name"]): r["message"] for r in data["secrets_redacted"]}
    assert flagged[("leaky", "tools", "lookup")] == NOTE
    assert flagged[("leaky-env", "prompts", "greet")] == NOTE
    assert flagged[("leaky", "instructions", None)] == "instructions contained a secret: redacted"
    assert ("leaky", "tools", "say") not in flagged
    report = run(["report", "--probe", "--snapshot", "one.json", "--json"], work, other)
    assert report.returncode == 0, report.stderr
    changes = json.loads(report.stdout)["data"]["changes"]
    assert changes["empty"] is True
    assert {(r["server"], r["kind"], r["name"]) for r in changes["secrets_redacted"]} == set(
        flagged
    )
    assert_no_canary(env, diffed.stdout, diffed.stderr, as_json.stdout, report.stdout)
    assert_no_canary(other, diffed.stdout, diffed.stderr, as_json.stdout, report.stdout)
