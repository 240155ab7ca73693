"""A client's file read as the client runs it, and the static check render --install uses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import UsageError
from mcpctl.render.clientcheck import check_as_client, check_entry
from mcpctl.render.clientfile import read_client

PY = sys.executable
KEYRING = {"IN_KEYRING": "kept"}


def write(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def kinds(problems: list[object]) -> list[tuple[str, str, str | None]]:
    return [(p.server, p.kind, p.variable) for p in problems]  # type: ignore[attr-defined]


def test_cursor_expands_its_own_syntax_from_the_environment_only(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", {"mcpServers": {"s": {"command": PY, "env": {
        "A": "${env:IN_KEYRING}", "B": "${env:NOWHERE}", "C": "${env:EXPORTED}", "D": "${RAW}",
    }}}})  # fmt: skip
    problems = check_as_client(
        "cursor", file, environ={"EXPORTED": "1", "RAW": "x"}, secrets=KEYRING.get
    )
    assert kinds(problems) == [
        ("s", "keyring", "IN_KEYRING"), ("s", "unset", "NOWHERE"), ("s", "literal", "RAW"),
    ]  # fmt: skip
    assert problems[0].message == (
        "IN_KEYRING comes from the keyring, which cursor does not read; render with "
        "--secrets launcher"
    )
    assert problems[1].message == "NOWHERE is not set"
    # Exported, a bare ${RAW} still reaches the server as written: the fix is the launcher.
    assert problems[2].message == (
        "RAW is passed to the server as written: cursor does not expand that placeholder; "
        "render with --secrets launcher"
    )


def test_claude_code_defaults_resolve(tmp_path: Path) -> None:
    file = write(tmp_path / ".mcp.json", {"mcpServers": {"s": {"command": PY, "env": {
        "A": "${NOWHERE:-fallback}"}}}})  # fmt: skip
    assert check_as_client("claude-code", file, environ={}) == []


def test_no_expansion_keeps_the_text_for_the_probe(tmp_path: Path) -> None:
    file = write(tmp_path / "c.json", {"mcpServers": {"s": {"command": PY, "args": ["${X}"],
                                                            "env": {"T": "${X}"}}}})  # fmt: skip
    view = read_client("claude-desktop", file)
    item = view.entries["s"]
    [marker] = item.literals
    assert item.entry.args == (f"${{{marker}}}",) and item.entry.env == {"T": f"${{{marker}}}"}
    assert item.source()(marker) == "${X}" and view.source()(marker) == "${X}"
    assert item.source()("X") is None  # never the keyring, never anything but the text


def test_codex_takes_named_variables_from_the_environment(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text(
        '[mcp_servers.r]\nurl = "https://example.test/mcp"\nbearer_token_env_var = "TOKEN_X"\n'
        '[mcp_servers.r.http_headers]\nX-Raw = "${RAW_Y}"\n'
    )
    problems = check_as_client("codex", file, environ={}, secrets=KEYRING.get)
    assert kinds(problems) == [("r", "literal", "RAW_Y"), ("r", "unset", "TOKEN_X")]


def test_vscode_inputs(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", {"servers": {"s": {"type": "stdio", "command": PY,
        "env": {"K": "${input:IN_KEYRING}", "E": "${env:IN_KEYRING}"}}}})  # fmt: skip
    problems = check_as_client("vscode", file, environ={}, secrets=KEYRING.get)
    assert kinds(problems) == [("s", "input", "IN_KEYRING")]
    assert "asked for by vscode when the server starts (an input)" in problems[0].message
    problems = check_as_client("vscode", file, environ={}, secrets=None)
    assert problems[0].message.endswith("; export IN_KEYRING to probe it with a value")


def test_commands_the_client_cannot_find(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", {"mcpServers": {
        "gone": {"command": "no-such-command-xyz"},
        "path": {"command": str(tmp_path / "nothing-here")},
        "fine": {"command": PY},
        "off": {"command": "no-such-command-xyz", "disabled": True},
    }})  # fmt: skip
    problems = check_as_client("cline", file, environ={"PATH": ""})
    assert kinds(problems) == [("gone", "command", None), ("path", "command", None)]
    assert problems[0].message == (
        "command 'no-such-command-xyz' not found on PATH: cline cannot start it"
    )


def test_only_the_servers_of_the_config(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", {"mcpServers": {
        "ours": {"command": "no-such-command-xyz"}, "theirs": {"command": "no-such-command-xyz"},
    }})  # fmt: skip
    config = {"ours": ServerEntry(command="x")}
    assert [p.server for p in check_as_client("cursor", file, config)] == ["ours"]


def test_not_a_client(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="'fastmcp' is not a client with a config file"):
        check_as_client("fastmcp", tmp_path / "x.json")


def test_a_claude_code_headers_helper_is_run_for_the_probe_and_checked_statically(
    tmp_path: Path,
) -> None:
    from mcpctl.render.clientfile import helper_headers

    printer = tmp_path / "print-headers.py"
    printer.write_text(
        "import json, os\n"
        "print(json.dumps({'X-Key': 'helper-secret', 'X-Server': "
        "os.environ['CLAUDE_CODE_MCP_SERVER_NAME']}))\n"
    )
    file = write(tmp_path / ".claude.json", {"mcpServers": {
        "remote": {"type": "http", "url": "https://x.example/mcp", "headers": {"A": "b"},
                   "headersHelper": f"{PY} {printer}"},
        "broken": {"type": "http", "url": "https://y.example/mcp",
                   "headersHelper": "no-such-helper-program-xyz --flag"},
    }})  # fmt: skip
    view = read_client("claude-code", file)
    assert not [w for w in view.warnings if "headersHelper" in w]
    item = view.entries["remote"]
    assert item.headers_helper == f"{PY} {printer}"
    got = helper_headers(item, view.literals)
    headers = dict(got.entry.headers)
    assert headers["A"] == "b"
    values = {k: got.source()(v[2:-1]) for k, v in headers.items() if v.startswith("${")}
    assert values == {"X-Key": "helper-secret", "X-Server": "remote"}
    # The helper's values are not placeholders the client passes on as written.
    assert check_entry(got, "claude-code") == []
    with pytest.raises(UsageError, match="broken: its headers helper failed"):
        helper_headers(view.entries["broken"], view.literals)
    assert kinds(check_as_client("claude-code", file)) == [("broken", "command", None)]
