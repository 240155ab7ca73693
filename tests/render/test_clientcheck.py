"""Why a client cannot start a server as mcpctl would, found without starting it: the words
of each problem and the fix it names."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.render.base import Places
from mcpctl.render.clientcheck import ClientProblem, check_as_client, check_entry
from mcpctl.render.clientfile import ClientEntry

PY = sys.executable
KEYRING = {"IN_KEYRING": "kept"}.get
NOT_EXPANDED = "RAW is passed to the server as written: cursor does not expand that placeholder"


def write(path: Path, doc: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def messages(problems: list[ClientProblem]) -> list[str]:
    return [p.message for p in problems]


def test_a_problem_as_json() -> None:
    problem = ClientProblem("s", "unset", "A is not set", "A")
    assert problem.to_dict() == {
        "server": "s", "kind": "unset", "variable": "A", "message": "A is not set",
    }  # fmt: skip


def test_a_placeholder_passed_on_as_written_names_the_fix_only_when_a_value_exists(
    tmp_path: Path,
) -> None:
    file = write(tmp_path / "mcp.json", {"mcpServers": {
        "remote": {"url": "https://x.example/${RAW}"}, "local": {"command": PY, "args": ["${RAW}"]},
    }})  # fmt: skip
    inline = "; render with --secrets inline (the file then holds the value, mode 0600)"
    launcher = "; render with --secrets launcher"
    for environ, secrets in (({"RAW": "1"}, None), ({}, {"RAW": "kept"}.get)):
        problems = check_as_client("cursor", file, environ=environ, secrets=secrets)
        assert messages(problems) == [NOT_EXPANDED + inline, NOT_EXPANDED + launcher]
    # set nowhere: no value would reach the server either way, so no fix
    problems = check_as_client("cursor", file, environ={}, secrets={}.get)
    assert messages(problems) == [NOT_EXPANDED, NOT_EXPANDED]


def test_each_variable_is_reported_once_and_the_next_ones_too() -> None:
    entry = ServerEntry(command=PY, args=("${A}/${A}/${B}",), env={"H": "${L} ${C}"})
    item = ClientEntry("s", entry, literals={"L": "filled in by the client"})
    problems = check_entry(item, "cursor", environ={})
    assert [(p.kind, p.variable) for p in problems] == [
        ("unset", "A"), ("unset", "B"), ("unset", "C"),
    ]  # fmt: skip


def test_a_keyring_variable_names_the_clients_fix(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", {"mcpServers": {
        "r": {"url": "https://x.example/mcp", "headers": {"K": "${env:IN_KEYRING}"}},
    }})  # fmt: skip
    problems = check_as_client("cursor", file, environ={}, secrets=KEYRING)
    assert messages(problems) == [
        "IN_KEYRING comes from the keyring, which cursor does not read; export IN_KEYRING in "
        "the environment Cursor starts from, or render with --secrets inline (the file then "
        "holds the value, mode 0600); a launcher cannot reach a remote server"
    ]


def test_an_input_the_keyring_holds(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", {"servers": {
        "s": {"type": "stdio", "command": PY, "env": {"K": "${input:IN_KEYRING}"}},
        "r": {"type": "http", "url": "https://x.example/mcp",
              "headers": {"K": "${input:IN_KEYRING}"}},
    }})  # fmt: skip
    asked = (
        "IN_KEYRING is asked for by vscode when the server starts (an input), not taken from "
        "the keyring; "
    )
    problems = check_as_client("vscode", file, environ={}, secrets=KEYRING)
    assert messages(problems) == [
        asked + "render with --secrets launcher",
        asked + "type the keyring's value when vscode asks",
    ]


def test_a_command_is_looked_for_as_the_client_resolves_it(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", {"mcpServers": {"s": {"command": "${env:THE_CMD}"}}})
    assert check_as_client("cursor", file, environ={"THE_CMD": PY}) == []
    problems = check_as_client("cursor", file, environ={"THE_CMD": "no-such-command-xyz"})
    assert messages(problems) == [
        "command 'no-such-command-xyz' not found on PATH: cursor cannot start it"
    ]
    # a client that does not expand it: the text as written is no command to look for
    desktop = write(tmp_path / "desktop.json", {"mcpServers": {"s": {"command": "${THE_CMD}"}}})
    problems = check_as_client("claude-desktop", desktop, environ={"THE_CMD": PY})
    assert [p.kind for p in problems] == ["literal"]


def test_a_command_that_is_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    file = write(tmp_path / "mcp.json", {"mcpServers": {"s": {"command": str(script)}}})
    problems = check_as_client("cursor", file, environ={})
    assert messages(problems) == [f"{str(script)!r} is not executable: cursor cannot start it"]


def test_an_entry_no_process_can_start_with_is_left_to_its_probe() -> None:
    item = ClientEntry("s", ServerEntry(command=PY, env={"A": "x\x00y"}))
    assert check_entry(item, "cursor", environ={}) == []


def test_disabled_and_other_servers_are_skipped_not_the_rest(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", {"mcpServers": {
        "off": {"command": "no-such-command-xyz", "disabled": True},
        "theirs": {"command": "no-such-command-xyz"},
        "ours": {"command": "no-such-command-xyz"},
    }})  # fmt: skip
    assert [p.server for p in check_as_client("cline", file, environ={})] == ["theirs", "ours"]
    config = {"ours": ServerEntry(command="x")}
    assert [p.server for p in check_as_client("cline", file, config, environ={})] == ["ours"]


def test_the_clients_own_file_is_found_from_its_places(tmp_path: Path) -> None:
    write(tmp_path / "proj" / ".cursor" / "mcp.json",
          {"mcpServers": {"s": {"command": "no-such-command-xyz"}}})  # fmt: skip
    places = Places(tmp_path / "home", tmp_path / "proj", "linux", {})
    problems = check_as_client("cursor", environ={}, places=places)
    assert [p.server for p in problems] == ["s"]


def helper(tmp_path: Path, command: str, environ: dict[str, str]) -> list[str]:
    entry = ServerEntry(url="https://x.example/mcp", env={})
    item = ClientEntry("r", entry, headers_helper=command)
    return messages(check_entry(item, "claude-code", environ=environ))


def test_a_headers_helper_is_looked_for_on_the_clients_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "bin"
    program = folder / "print-headers"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    on_path = {"PATH": str(folder)}
    assert helper(tmp_path, "print-headers --server x", on_path) == []
    missing = (
        "the headers helper's command 'print-headers' is not found on PATH: claude-code "
        "cannot get its headers"
    )
    assert helper(tmp_path, "print-headers --server x", {"PATH": ""}) == [missing]
    assert helper(tmp_path, "print-headers", {"PATH": ""}) == [missing]
    # a path is looked for as it is, a leading ~ as the shell expands it
    assert helper(tmp_path, f"{program} x", {"PATH": ""}) == []
    monkeypatch.setenv("HOME", str(tmp_path))
    assert helper(tmp_path, "~/bin/print-headers x", {"PATH": ""}) == []
    gone = tmp_path / "gone"
    assert helper(tmp_path, f"{gone} {program}", on_path) == [
        f"the headers helper's command {str(gone)!r} is not found on PATH: claude-code "
        "cannot get its headers"
    ]
    # nothing to look for: an empty command, or one the shell would refuse
    assert helper(tmp_path, "", {"PATH": ""}) == []
    assert helper(tmp_path, "'unclosed", {"PATH": ""}) == []


def test_a_missing_helper_is_reported_beside_the_other_problems() -> None:
    entry = ServerEntry(url="https://x.example/${NOWHERE}")
    item = ClientEntry("r", entry, headers_helper="no-such-helper-xyz")
    problems = check_entry(item, "claude-code", environ={"PATH": ""})
    assert [(p.kind, p.variable) for p in problems] == [("unset", "NOWHERE"), ("command", None)]
