"""A client's file read as the client runs it, and the static check render --install uses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import UsageError
from mcpctl.render.clientcheck import check_as_client, check_entry
from mcpctl.render.clientfile import ClientEntry, read_client
from tests.stdinpipe import stdin_holding

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


# --- what mutation testing found unpinned ---------------------------------------------


def helper_item(tmp_path: Path) -> tuple[ClientEntry, dict[str, str]]:
    file = write(tmp_path / ".claude.json", {"mcpServers": {"r": {
        "type": "http", "url": "https://x.example/mcp", "headersHelper": "set later",
    }}})  # fmt: skip
    view = read_client("claude-code", file)
    return view.entries["r"], view.literals


def run_helper(tmp_path: Path, code: str) -> ClientEntry:
    from dataclasses import replace

    from mcpctl.render.clientfile import helper_headers

    script = tmp_path / "helper.py"
    script.write_text(code, encoding="utf-8")
    item, literals = helper_item(tmp_path)
    return helper_headers(replace(item, headers_helper=f"{PY} {script}"), literals)


def test_a_headers_helper_is_told_the_server_and_each_header_it_prints_is_a_literal(
    tmp_path: Path,
) -> None:
    got = run_helper(tmp_path, (
        "import json, os, sys\n"
        "assert sys.stdin.read() == ''\n"
        "print(json.dumps({'U': os.environ['CLAUDE_CODE_MCP_SERVER_URL'],\n"
        "                  'N': os.environ['CLAUDE_CODE_MCP_SERVER_NAME']}))\n"
    ))  # fmt: skip
    prefix = "MCPCTL_AS_CLIENT_LITERAL_"
    assert got.entry.headers == {"U": f"${{{prefix}0}}", "N": f"${{{prefix}1}}"}
    assert dict(got.literals) == {f"{prefix}0": "https://x.example/mcp", f"{prefix}1": "r"}


@pytest.mark.parametrize(
    "code,message",
    [
        ("import sys\nsys.stderr.write('\\n  first\\x1b line  \\nsecond')\nsys.exit(3)\n",
         "r: its headers helper failed (exit 3): first\\x1b line"),
        ("import sys\nsys.exit(4)\n", "r: its headers helper failed (exit 4)"),
        ("import sys\nsys.stderr.write('x' * 400)\nsys.exit(1)\n",
         "r: its headers helper failed (exit 1): " + "x" * 299 + "…"),
        ("import sys\nsys.stderr.write('z' * 301)\nsys.exit(1)\n",
         "r: its headers helper failed (exit 1): " + "z" * 299 + "…"),
        ("import sys\nsys.stderr.write('y' * 300)\nsys.exit(1)\n",
         "r: its headers helper failed (exit 1): " + "y" * 300),
        ("import sys\nsys.stderr.buffer.write(b'\\xffbad')\nsys.exit(2)\n",
         "r: its headers helper failed (exit 2): \ufffdbad"),
        ("import sys\nsys.stderr.write('\\n' * 4096 + 'late')\nsys.exit(5)\n",
         "r: its headers helper failed (exit 5)"),
        ("print('[1]')\n", "r: its headers helper did not print a JSON object of strings"),
        ("print('{\"a\": 1}')\n", "r: its headers helper did not print a JSON object of strings"),
        ("print('{\"a\": \"b\"} // no')\n",
         "r: its headers helper did not print a JSON object of strings"),
        ("import sys\nsys.stdout.buffer.write(b'\\xff')\n",
         "r: its headers helper did not print a JSON object of strings"),
    ],
)  # fmt: skip
def test_a_headers_helper_that_fails_says_how(tmp_path: Path, code: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        run_helper(tmp_path, code)
    assert caught.value.message == message


def test_a_name_that_is_not_a_client_gets_a_guess_and_the_list() -> None:
    from mcpctl.render.clientfile import as_client_targets, client_target

    names = ", ".join(as_client_targets())
    with pytest.raises(UsageError) as caught:
        client_target("cursr")
    assert caught.value.message == "'cursr' is not a client"
    assert caught.value.hint == f"did you mean 'cursor'? clients: {names}"
    with pytest.raises(UsageError) as caught:
        client_target("nothing-like-it")
    assert caught.value.hint == f"clients: {names}"
    assert client_target("cursor").name == "cursor"


def test_a_file_the_client_could_not_read_is_named_in_the_refusal(tmp_path: Path) -> None:
    file = tmp_path / "mcp.json"
    file.write_text("[1]", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        read_client("cursor", file)
    assert (
        caught.value.message == f"{file}: this is not a Cursor file: expected an object at the top"
    )


def test_claude_desktops_bridge_expands_only_the_variables_of_its_env(tmp_path: Path) -> None:
    file = write(tmp_path / "c.json", {"mcpServers": {"b": {
        "command": "npx",
        "args": ["-y", "mcp-remote", "https://x.example/mcp", "--header", "Authorization:${AUTH}",
                 "--header", "X:${NOT_IN_ENV}"],
        "env": {"AUTH": "Bearer ${TOKEN}"},
    }}})  # fmt: skip
    view = read_client("claude-desktop", file)
    item = view.entries["b"]
    prefix = "MCPCTL_AS_CLIENT_LITERAL_"
    assert item.entry.headers == {"X": f"${{{prefix}0}}"}
    assert item.entry.auth is not None and item.entry.auth.token == f"${{{prefix}1}}"
    assert dict(item.literals) == {f"{prefix}0": "${NOT_IN_ENV}", f"{prefix}1": "${TOKEN}"}
    assert view.warnings == []


def test_text_like_a_placeholder_that_names_no_variable_is_kept_as_written(tmp_path: Path) -> None:
    file = write(tmp_path / "c.json", {"mcpServers": {"s": {"command": PY,
                                                            "args": ["${lower}", "${X:=y}"]}}})  # fmt: skip
    item = read_client("claude-desktop", file).entries["s"]
    assert item.entry.args == ("${lower}", "${X:=y}") and dict(item.literals) == {}


def test_the_view_keeps_the_readers_warnings_clean_of_its_own_marks(tmp_path: Path) -> None:
    file = write(tmp_path / "c.json", {"mcpServers": {"s${X}": {"command": "run"},
                                                      "t": {"command": "run", "other": 1}}})  # fmt: skip
    view = read_client("claude-desktop", file)
    assert (view.target, view.file) == ("claude-desktop", file)
    assert view.warnings == [
        "s${X}: imported as 's-X' (names are letters, digits, '-' and '_')",
        "t: other is not imported: a Claude Desktop setting mcpctl does not have",
    ]
    code = write(tmp_path / ".claude.json", {"mcpServers": {"t": {
        "command": "run", "other": 1, "headersHelper": "print-headers"}}})  # fmt: skip
    assert read_client("claude-code", code).warnings == [
        "t: other is not imported: a Claude Code setting mcpctl does not have"
    ]


def test_a_working_directory_the_client_does_not_expand_is_a_literal(tmp_path: Path) -> None:
    file = write(tmp_path / "mcp.json", {"mcpServers": {"s": {"command": "run",
                                                              "cwd": "/w/${RAW}"}}})  # fmt: skip
    item = read_client("roo-code", file).entries["s"]
    assert item.entry.cwd == "/w/${MCPCTL_AS_CLIENT_LITERAL_0}"
    assert dict(item.literals) == {"MCPCTL_AS_CLIENT_LITERAL_0": "${RAW}"}
    bare = read_client("roo-code", write(tmp_path / "b.json", {"mcpServers": {"s": {
        "command": "run"}}})).entries["s"]  # fmt: skip
    assert bare.entry.cwd is None and bare.listed is None


def test_the_variables_codex_is_told_to_pass_are_the_probes_inherit_env(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text('[mcp_servers.a]\ncommand = "run"\nenv_vars = ["LANG"]\n'
                    '[mcp_servers.b]\ncommand = "run"\n', encoding="utf-8")  # fmt: skip
    view = read_client("codex", file)
    assert view.entries["a"].listed == ("LANG",)
    assert view.entries["a"].probe_entry().inherit_env == ("LANG",)
    assert view.entries["b"].listed == () and view.entries["b"].probe_entry().inherit_env == ()


def test_only_a_remote_server_has_a_headers_helper(tmp_path: Path) -> None:
    file = write(tmp_path / ".claude.json", {"mcpServers": {
        "local": {"command": "run", "headersHelper": "print-headers"},
        "remote": {"type": "http", "url": "https://x.example/mcp", "headersHelper": "print-headers"},
    }})  # fmt: skip
    view = read_client("claude-code", file)
    assert view.entries["local"].headers_helper is None
    assert view.entries["remote"].headers_helper == "print-headers"


def test_a_headers_helper_is_given_no_input(tmp_path: Path) -> None:
    """The helper's stdin is empty, whatever this process's own stdin holds."""
    with stdin_holding(b"this process's input"):
        got = run_helper(tmp_path, (
            "import json, sys\nprint(json.dumps({'IN': sys.stdin.read()}))\n"
        ))  # fmt: skip
    assert list(got.literals.values()) == [""]


def test_a_headers_helper_is_given_10_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper that does not end is stopped after 10 s (0.2 s here), and that is said."""
    import subprocess
    from dataclasses import replace

    from mcpctl.render.clientfile import helper_headers

    limits: list[object] = []
    real_run = subprocess.run

    def run(*args: object, **kwargs: object) -> object:
        limits.append(kwargs.get("timeout"))
        return real_run(*args, **{**kwargs, "timeout": 0.2})  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "run", run)
    script = tmp_path / "helper.py"
    script.write_text("import time\ntime.sleep(60)\n", encoding="utf-8")
    item, literals = helper_item(tmp_path)
    # exec: the program itself is the one stopped, no shell left waiting for it
    slow = replace(item, headers_helper=f"exec {PY} {script}")
    with pytest.raises(UsageError) as caught:
        helper_headers(slow, literals)
    assert caught.value.message == "r: its headers helper ran over 10 s"
    assert limits == [10]


def test_a_headers_helper_that_cannot_be_run_says_why(tmp_path: Path) -> None:
    from dataclasses import replace

    from mcpctl.render.clientfile import helper_headers

    item, literals = helper_item(tmp_path)
    # Longer than one argument may be: the shell itself cannot be started with it.
    huge = replace(item, headers_helper="echo " + "x" * 200_000)
    with pytest.raises(UsageError) as caught:
        helper_headers(huge, literals)
    assert caught.value.message == "r: its headers helper cannot be run: Argument list too long"


def test_an_entry_that_starts_this_mcpctl_is_the_launcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no other mcpctl here for ``-m`` to import
    file = write(tmp_path / ".claude.json", {"mcpServers": {
        "own": {"command": PY, "args": ["-m", "mcpctl", "run", "own"]},
        "other": {"command": PY, "args": ["-m", "othertool", "run", "own"]},
    }})  # fmt: skip
    view = read_client("claude-code", file)
    assert view.entries["own"].launcher is True
    assert view.entries["other"].launcher is False
