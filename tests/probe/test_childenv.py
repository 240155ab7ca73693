"""What a stdio server is started with and why it could not be, without starting one:
the errors' words and hints, the environment as mcpctl or another client builds it, and a
proxy's password hidden (tests/probe/test_spawn.py starts real servers)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from mcpctl.config import redaction
from mcpctl.config.model import ServerEntry
from mcpctl.probe.childenv import (
    ProbeError,
    child_env,
    command_not_found,
    proxy_password,
    spawn_error,
    started_by,
)


@pytest.fixture(autouse=True)
def forget_secrets() -> Iterator[None]:
    redaction.forget()
    yield
    redaction.forget()


def test_a_probe_errors_json_form() -> None:
    assert ProbeError("c", "m").to_dict() == {"code": "c", "message": "m", "hint": None}
    assert ProbeError("c", "m", "h").to_dict() == {"code": "c", "message": "m", "hint": "h"}


@pytest.mark.parametrize(
    ("command", "own_path", "message", "hint"),
    [
        ("npx", False, "command 'npx' not found on PATH", "install Node.js (it provides npx)"),
        ("uvx", True, "command 'uvx' not found on the entry's PATH",
         "install uv (it provides uvx): pip install uv"),
        ("/opt/node/bin/node", False, "command '/opt/node/bin/node' not found at "
         "/opt/node/bin/node", "install Node.js"),
        ("docker", False, "command 'docker' not found on PATH",
         "install Docker, or use the server's npm/PyPI package"),
        ("my-server", False, "command 'my-server' not found on PATH",
         "install 'my-server' or fix the path"),
        ("./bin/srv", True, "command './bin/srv' not found at ./bin/srv",
         "install './bin/srv' or fix the path"),
    ],
)  # fmt: skip
def test_a_missing_command_says_where_it_was_looked_for_and_what_to_install(
    command: str, own_path: bool, message: str, hint: str
) -> None:
    assert command_not_found(command, own_path=own_path) == ProbeError(
        "command_not_found", message, hint
    )


def test_by_default_a_command_is_looked_for_on_mcpctls_path() -> None:
    assert command_not_found("uv").message == "command 'uv' not found on PATH"


def test_a_missing_working_directory_is_named_before_the_command(tmp_path: Path) -> None:
    entry = ServerEntry(command="npx", cwd=str(tmp_path / "gone"))
    assert spawn_error(FileNotFoundError(2, "No such file"), entry) == ProbeError(
        "spawn_failed",
        f"working directory {str(tmp_path / 'gone')!r} does not exist",
        "fix the entry's cwd",
    )


def test_a_missing_command_in_a_working_directory_that_exists(tmp_path: Path) -> None:
    entry = ServerEntry(command="npx", cwd=str(tmp_path))
    assert spawn_error(FileNotFoundError(2, "x"), entry) == command_not_found("npx")
    own = ServerEntry(command="npx", env={"PATH": "/opt/bin"})
    assert spawn_error(FileNotFoundError(2, "x"), own).message == (
        "command 'npx' not found on the entry's PATH"
    )
    a_file = tmp_path / "file"
    a_file.write_text("")
    in_file = ServerEntry(command="npx", cwd=str(a_file))  # not a folder
    assert spawn_error(FileNotFoundError(2, "x"), in_file).code == "spawn_failed"


def test_a_command_that_cannot_be_started_says_why() -> None:
    entry = ServerEntry(command="/etc/hosts")
    assert spawn_error(PermissionError(13, "Permission denied"), entry) == ProbeError(
        "spawn_failed",
        "cannot start '/etc/hosts': Permission denied",
        "check that the command is executable",
    )
    bare = spawn_error(OSError("exec format error"), entry)
    assert bare.message == "cannot start '/etc/hosts': exec format error"


OURS = {"PATH": "/usr/bin", "HOME": "/h", "GITHUB_TOKEN": "ghp_x", "EDITOR": "vi"}


def test_a_server_gets_our_few_variables_and_its_own() -> None:
    entry = ServerEntry(command="x", env={"A": "1"}, inherit_env=("EDITOR",))
    assert child_env(entry, OURS) == {"PATH": "/usr/bin", "HOME": "/h", "EDITOR": "vi", "A": "1"}


def test_without_an_environment_ours_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPCTL_TEST_INHERITED", "yes")
    entry = ServerEntry(command="x", inherit_env=("MCPCTL_TEST_INHERITED",))
    assert child_env(entry)["MCPCTL_TEST_INHERITED"] == "yes"


def test_within_started_by_the_clients_builder_makes_the_environment() -> None:
    seen: list[tuple[ServerEntry, Mapping[str, str]]] = []

    def client(entry: ServerEntry, environ: Mapping[str, str]) -> dict[str, str]:
        seen.append((entry, environ))
        return {"BUILT": entry.command or ""}

    entry = ServerEntry(command="srv", env={"A": "1"})
    with started_by(client):
        assert child_env(entry, OURS) == {"BUILT": "srv"}
        assert child_env(entry)["BUILT"] == "srv"
    assert seen == [(entry, OURS), (entry, os.environ)]
    assert child_env(entry, OURS) == {"PATH": "/usr/bin", "HOME": "/h", "A": "1"}


def test_started_by_ends_even_when_what_it_holds_fails() -> None:
    with pytest.raises(RuntimeError), started_by(lambda entry, environ: {}):
        raise RuntimeError
    assert child_env(ServerEntry(command="x"), OURS)["PATH"] == "/usr/bin"


@pytest.mark.parametrize("name", ["HTTPS_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_proxy_password_a_server_gets_is_hidden_in_what_is_shown(name: str) -> None:
    said = "the proxy refused horse%20battery-staple"
    assert redaction.redact(said) == said
    child_env(ServerEntry(command="x"), {name: "http://alice:horse%20battery-staple@proxy:3128"})
    assert redaction.redact("proxy refused horse battery-staple") == "proxy refused ****"


def test_only_the_proxies_a_server_gets_are_looked_at() -> None:
    entry = ServerEntry(command="x")
    child_env(entry, {"MY_URL": "http://alice:horse-battery-staple@h", "HTTPS_PROXY": "http://h"})
    assert "horse-battery-staple" in redaction.redact("x horse-battery-staple")
    named = ServerEntry(command="x", env={"HTTPS_PROXY": "http://bob:correct-pony@h:1"})
    child_env(named, {})
    assert redaction.redact("x correct-pony") == "x ****"


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("http://user:s3cret@proxy:3128", "s3cret"),
        ("http://user:p%40ss%3Aw@proxy", "p@ss:w"),
        ("http://user@proxy:3128", None),
        ("http://user:@proxy", None),
        ("http://proxy:3128", None),
        ("http://user:pw@[::1", None),  # not a URL: no password
    ],
)
def test_proxy_password(url: str, password: str | None) -> None:
    assert proxy_password(url) == password
