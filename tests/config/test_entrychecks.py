"""What ``mcpctl add`` warns about a new entry beyond the model: each warning with its hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpctl.config.entrychecks import entry_warnings


def test_a_command_not_installed_is_a_warning_with_its_hint(tmp_path: Path) -> None:
    assert entry_warnings("s", {"command": "./nope.sh"}, base=tmp_path) == [
        "command './nope.sh' is not installed here (not found on PATH) (install it, or fix "
        "the path; --strict-commands makes this an error)"
    ]


def test_a_relative_command_is_looked_for_from_the_base_folder(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o700)
    assert entry_warnings("s", {"command": "./run.sh"}, base=tmp_path) == []
    assert entry_warnings("s", {"command": "./run.sh"}, base=tmp_path / "elsewhere") != []


NO_SUCH_USER = "~mcpctl-no-such-user"


def test_a_tilde_is_taken_as_written_as_the_server_is_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No shell expands it when the server starts: a program in the home folder is not it.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for folder in (tmp_path / "home", tmp_path / "~"):
        folder.mkdir()
        script = folder / "run.sh"
        script.write_text("#!/bin/sh\n")
        script.chmod(0o700)
    assert entry_warnings("s", {"command": "~/run.sh"}, base=tmp_path) == []
    (tmp_path / "~" / "run.sh").unlink()
    assert entry_warnings("s", {"command": "~/run.sh"}, base=tmp_path) != []
    assert entry_warnings("s", {"command": "./run.sh", "cwd": "~"}, base=tmp_path) != []
    # A user who does not exist is a folder's name like any other (Path.expanduser raises).
    (tmp_path / NO_SUCH_USER).mkdir()
    (tmp_path / "home" / "run.sh").rename(tmp_path / NO_SUCH_USER / "run.sh")
    assert entry_warnings("s", {"command": f"{NO_SUCH_USER}/run.sh"}, base=tmp_path) == []
    assert entry_warnings("s", {"command": "./run.sh", "cwd": NO_SUCH_USER}, base=tmp_path) == []


def test_a_placeholder_named_by_the_caller_as_a_secret_is_one_on_the_command_line(
    tmp_path: Path,
) -> None:
    entry = {"command": "sh", "args": ["--session", "${SESSION}"]}
    assert entry_warnings("s", entry, base=tmp_path) == []
    assert entry_warnings("s", entry, base=tmp_path, secret_names=lambda: ["SESSION"]) == [
        "${SESSION} is a secret on the server's command line, where every user of this "
        'machine can read it (ps, /proc) (pass it in "env" instead ("SESSION": '
        '"${SESSION}") if the server reads it from its environment)'
    ]


@pytest.mark.parametrize(
    "host", ["localhost", "localhost.localdomain", "api.localhost", "127.0.0.2", "[::1]"]
)
def test_plain_http_to_this_machine_is_not_warned_about(tmp_path: Path, host: str) -> None:
    assert entry_warnings("s", {"url": f"http://{host}:8000/mcp"}, base=tmp_path) == []


@pytest.mark.parametrize(
    "host", ["example.com", "localhost.example.com", "10.0.0.1", "127.0.0.1 ", "LOCALHOSTX"]
)
def test_plain_http_to_another_host_is_warned_about(tmp_path: Path, host: str) -> None:
    assert entry_warnings("s", {"url": f"http://{host}/mcp"}, base=tmp_path) == [
        "plain http to a non-loopback host sends headers and tokens unencrypted (use https://)"
    ]
