"""An entry that sets its own ``env.PATH``: ``doctor NAME`` names the program ``health`` and
``mcpctl run`` start, not the one of the same name on mcpctl's PATH.

Two real programs called ``mcp-same-name``: a decoy first on mcpctl's PATH (it says so on
stderr and exits 3), and the real server on the entry's PATH (given literally, or by a
placeholder resolved from the environment). Real processes throughout; ``run`` as a process
of its own, since it replaces itself with the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import MCPCTL, SERVERS, Cli, write_config

PROGRAM = "mcp-same-name"


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the decoy's folder, first on mcpctl's PATH; the real server's folder)."""
    decoy, real = tmp_path / "decoy", tmp_path / "real"
    for folder in (decoy, real):
        folder.mkdir()
    (decoy / PROGRAM).write_text(
        f'#!/bin/sh\necho "decoy ran" >&2\necho decoy >> "{tmp_path}/ran"\nexit 3\n'
    )
    (real / PROGRAM).write_text(
        f'#!/bin/sh\necho real >> "{tmp_path}/ran"\n'
        f'exec "{sys.executable}" "{SERVERS / "basic.py"}" "$@"\n'
    )
    for folder in (decoy, real):
        (folder / PROGRAM).chmod(0o755)
    monkeypatch.setenv("PATH", f"{decoy}{os.pathsep}{os.environ['PATH']}")
    return decoy, real


def _ran(tmp_path: Path) -> list[str]:
    path = tmp_path / "ran"
    return path.read_text().split() if path.exists() else []


@pytest.mark.parametrize("written", ["literal", "placeholder"])
def test_doctor_names_what_health_and_run_start(
    written: str,
    cli: Cli,
    config_path: Path,
    folders: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decoy, real = folders
    path = f"{real}{os.pathsep}/usr/bin{os.pathsep}/bin"
    if written == "placeholder":
        monkeypatch.setenv("SERVER_BIN", str(real))
        path = f"${{SERVER_BIN}}{os.pathsep}/usr/bin{os.pathsep}/bin"
    write_config(config_path, {"s": {"command": PROGRAM, "env": {"PATH": path}}})

    r = cli("doctor", "s", "--json", "--timeout", "20s")
    assert r.exit_code == 0, r.stdout + r.stderr
    (command,) = [s for s in r.json["data"]["steps"] if s["id"] == "command"]
    # A value a placeholder resolved to is never shown (it may be a secret): only its place.
    shown = real if written == "literal" else "****"
    assert command["detail"] == f"{PROGRAM}: {shown}/{PROGRAM} (on the entry's PATH)"
    assert str(decoy) not in r.stdout

    r = cli("health", "s", "--json", "--timeout", "20s")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "decoy" not in _ran(tmp_path)

    done = subprocess.run(
        [*MCPCTL, "run", "s"], input="", capture_output=True, text=True, timeout=60
    )  # the server ends at the end of its input
    assert "decoy ran" not in done.stderr, done.stderr
    assert set(_ran(tmp_path)) == {"real"}

    # The global doctor looks there too.
    r = cli("doctor", "--json")
    if written == "literal":
        (found,) = [f for f in r.json["data"]["findings"] if f.get("subject") == PROGRAM]
        assert found["code"] == "command_found"
        assert f"{real / PROGRAM} (on the entry's PATH)" in found["message"]


def test_a_program_only_on_mcpctls_path_is_not_found(
    cli: Cli, config_path: Path, folders: tuple[Path, Path], tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    write_config(config_path, {"s": {"command": PROGRAM, "env": {"PATH": str(empty)}}})
    r = cli("doctor", "s", "--json")
    assert r.exit_code == 1
    (command,) = [s for s in r.json["data"]["steps"] if s["id"] == "command"]
    assert command["status"] == "failed"
    assert command["detail"] == f"'{PROGRAM}' is not found on the entry's PATH"
    r = cli("health", "s", "--json", "--timeout", "20s")
    assert r.exit_code == 1
    (server,) = r.json["data"]["mcps"]
    assert server["error"]["code"] == "command_not_found"
    assert "on the entry's PATH" in server["error"]["message"]
    done = subprocess.run([*MCPCTL, "run", "s"], input="", capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode != 0 and "not found on the entry's PATH" in done.stderr
    assert _ran(tmp_path) == []  # the decoy never ran
    r = cli("doctor", "--json")
    (found,) = [f for f in r.json["data"]["findings"] if f.get("subject") == PROGRAM]
    assert found["code"] == "command_missing" and "not on the entry's PATH" in found["message"]


def test_no_tilde_is_expanded_where_the_spawn_expands_none(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "server").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "{SERVERS / "basic.py"}"\n'
    )
    (home / "bin" / "server").chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    write_config(config_path, {"s": {"command": "~/bin/server"}})
    r = cli("doctor", "s", "--json")
    (command,) = [s for s in r.json["data"]["steps"] if s["id"] == "command"]
    assert command["status"] == "failed", json.dumps(r.json)
