"""Entries no process can be started with: a NUL character or a lone surrogate in a command,
an argument, an environment variable's name or value, or a working directory.

Both are valid JSON escapes (``"\\u0000"``, ``"\\ud800"``), so a cloned repository's config or
client file can hold them, and a keyring can hand one over through a placeholder. Each was an
``internal error`` that left the other servers of the run running. Now the entry alone fails
(``invalid_entry``, the field named) wherever it would be spawned -- the probes of ``health``,
``tools``, ``snapshot save --probe``, ``report --probe``, ``health --as``, ``doctor NAME``,
the launcher ``run`` (exit 2, one line on stderr) and the library -- every other server is
probed as usual, and nothing is left running (the suite's ``nothing_left_running`` checks).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import resolve_entry
from mcpctl.errors import InvalidEntryError
from mcpctl.probe import list_tools, probe_all
from tests.conftest import SERVERS, Cli, write_config

PY = sys.executable
BASIC = str(SERVERS / "basic.py")
GOOD = {"command": PY, "args": [BASIC]}
CHARS = {
    "nul": ("\x00", "a NUL character (\\x00)"),
    "surrogate": ("\ud800", "a lone surrogate (\\ud800)"),
}


def bad_entry(field: str, char: str) -> tuple[dict[str, Any], str]:
    """A stdio entry with ``char`` in ``field``, and how the error names the field."""
    if field == "command":
        return {"command": f"/usr/bin/py{char}thon"}, "command"
    if field == "args":
        return {"command": PY, "args": [BASIC, f"a{char}b"]}, "args[1]"
    if field == "env value":
        return {**GOOD, "env": {"MODE": f"x{char}"}}, "env.MODE"
    if field == "env name":
        return {**GOOD, "env": {f"A{char}B": "1"}}, "the name of env variable 'A\\ud800B'"
    return {**GOOD, "cwd": f"/tmp/x{char}"}, "cwd"


FIELDS = ("command", "args", "env value", "env name", "cwd")
# A NUL in an env name is no valid name: the loader leaves the entry out, with a warning.
CASES = {
    f"{field.replace(' ', '-')}-{kind}": (field, kind)
    for field in FIELDS
    for kind in CHARS
    if not (field == "env name" and kind == "nul")
}


def said(name: str) -> str:
    field, kind = CASES[name]
    return f"{bad_entry(field, CHARS[kind][0])[1]} holds {CHARS[kind][1]}, which no process can be given"


@pytest.fixture
def config(config_path: Path) -> Path:
    data: dict[str, Any] = {"good": GOOD}
    for name, (field, kind) in CASES.items():
        data[name] = bad_entry(field, CHARS[kind][0])[0]
    return write_config(config_path, json.dumps(data, indent=2))  # the escapes as written


def clean(out: str) -> None:
    assert "internal error" not in out and "Traceback" not in out, out


def test_health_fails_each_bad_entry_alone(cli: Cli, config: Path) -> None:
    r = cli("health", "--json", "--timeout", "20s")
    clean(r.stdout + r.stderr)
    assert r.exit_code == 1
    rows = {m["name"]: m for m in r.json["data"]["mcps"]}
    assert rows["good"]["healthy"] is True
    for name in CASES:
        assert rows[name]["status"] in ("unavailable", "unhealthy"), rows[name]
        assert rows[name]["error"]["code"] == "invalid_entry"
        assert said(name) in rows[name]["error"]["message"]
    text = cli("health", "--timeout", "20s")
    clean(text.stdout + text.stderr)
    assert text.exit_code == 1 and f"invalid_entry: {said('args-nul')}" in text.stdout


def test_tools_lists_the_good_one(cli: Cli, config: Path) -> None:
    r = cli("tools", "--json", "--timeout", "20s")
    clean(r.stdout + r.stderr)
    assert r.exit_code == 1
    assert {t["server"] for t in r.json["data"]["tools"]} == {"good"}
    failed = {f["name"]: f["error"] for f in r.json["data"]["failed"]}
    assert set(failed) == set(CASES)
    assert all(failed[n]["code"] == "invalid_entry" and said(n) in failed[n]["message"]
               for n in CASES)  # fmt: skip
    # Each failure is an error of the run too (exit 1), named and said as the entry's.
    assert any(e["reason"] == "invalid_entry" and said("cwd-surrogate") in e["message"]
               for e in r.json["errors"]), r.json["errors"]  # fmt: skip
    assert not any("estimated" in w for w in r.json["warnings"])  # the deadline is this run's


@pytest.mark.parametrize("command", [["snapshot", "save", "--probe"], ["report", "--probe"]])
def test_snapshots_and_reports(cli: Cli, config: Path, command: list[str]) -> None:
    r = cli(*command, "--timeout", "20s")
    clean(r.stdout + r.stderr)
    # A snapshot records every entry: one holding a lone surrogate cannot be written, and
    # is refused before anything starts; a NUL is text, and its entry's probe fails alone.
    assert r.exit_code == 2 and "which is not text: a snapshot cannot hold it" in r.stderr
    for name in [n for n in CASES if n.endswith("surrogate")]:
        data = json.loads(config.read_text())
        del data[name]
        write_config(config, json.dumps(data))
    r = cli(*command, "--timeout", "20s")
    clean(r.stdout + r.stderr)
    assert r.exit_code == (0 if command[0] == "snapshot" else 1), r.stdout + r.stderr
    assert (
        said("env-value-nul").removesuffix(", which no process can be given")
        in (r.stdout + r.stderr)
        or "invalid_entry" in r.stdout + r.stderr
    )


def test_doctor(cli: Cli, config: Path) -> None:
    r = cli("doctor")
    clean(r.stdout + r.stderr)
    assert r.exit_code == 1 and "control_character" in r.stdout
    for name in CASES:
        r = cli("doctor", name)
        clean(r.stdout + r.stderr)
        assert r.exit_code == 1
        assert "FAIL config" in r.stdout and said(name) in r.stdout


def test_run_exits_2_with_one_line(isolated: Path, config: Path) -> None:
    for name in CASES:
        done = subprocess.run(
            [PY, "-m", "mcpctl", "run", name], cwd=isolated, env=dict(os.environ),
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 2, (name, done.stderr)
        assert done.stdout == ""  # the client's channel stays clean
        assert done.stderr.splitlines() == [f"error: {said(name)} (in server {name!r})"]


def test_health_as_a_client(cli: Cli, isolated: Path, config: Path) -> None:
    data = json.loads(config.read_text())
    client = isolated / "settings.json"  # Gemini CLI's: it starts a server in its cwd
    client.write_text(json.dumps({"mcpServers": data}))
    r = cli("health", "--as", "gemini", str(client), "--json", "--timeout", "20s")
    clean(r.stdout + r.stderr)
    assert r.exit_code == 1
    rows = {m["name"]: m for m in r.json["data"]["mcps"]}
    assert rows["good"]["healthy"] is True
    for name in CASES:
        assert rows[name]["error"]["code"] == "invalid_entry", rows[name]


# --- the library ------------------------------------------------------------------------------


def test_probe_all_and_list_tools() -> None:
    entries = {"good": ServerEntry(command=PY, args=(BASIC,)),
               "bad": ServerEntry(command=PY, args=(BASIC, "a\x00b"))}  # fmt: skip
    results = anyio.run(lambda: probe_all(entries, timeout=20))
    by_name = {r.name: r for r in results}
    assert by_name["good"].healthy
    assert by_name["bad"].error is not None and by_name["bad"].error.code == "invalid_entry"
    with pytest.raises(InvalidEntryError, match=r"args\[1\] holds a NUL character"):
        anyio.run(lambda: list_tools("bad", entries["bad"], timeout=20))


def test_a_secret_that_cannot_be_passed_fails_at_resolution() -> None:
    """A value from the keyring is checked once resolved: the config itself is clean."""
    entry = ServerEntry(command=PY, args=(BASIC,), env={"TOKEN": "${TOKEN}"})

    def keyring(name: str) -> str | None:
        return "secret\x00value" if name == "TOKEN" else None

    with pytest.raises(InvalidEntryError) as caught:
        resolve_entry("s", entry, policy="error", environ={}, secrets=keyring)
    assert caught.value.message == (
        "env.TOKEN holds a NUL character (\\x00), which no process can be given (in server 's')"
    )
    assert "secret" not in caught.value.message
    results = anyio.run(lambda: probe_all({"s": entry, "good": GOOD_ENTRY}, secrets=keyring,
                                          timeout=20))  # fmt: skip
    assert results[0].error is not None and results[0].error.code == "invalid_entry"
    assert results[1].healthy


GOOD_ENTRY = ServerEntry(command=PY, args=(BASIC,))


def test_servers_started_early_are_stopped_when_something_else_fails() -> None:
    """The first servers start before the SDK loads; should anything go wrong among them
    (here a secret store that breaks on the last one), those already started are stopped
    (the suite's nothing_left_running fixture sees any left)."""
    entries = {
        "one": GOOD_ENTRY,
        "two": GOOD_ENTRY,
        "three": ServerEntry(command=PY, args=(BASIC,), env={"X": "${BROKEN}"}),
    }

    def broken(name: str) -> str | None:
        raise RuntimeError("the secret store broke")

    with pytest.raises(RuntimeError, match="the secret store broke"):
        anyio.run(lambda: probe_all(entries, secrets=broken, timeout=20))
