"""What a stdio server inherits from mcpctl's environment, and which program its command
names, without starting it (tests/probe/test_spawn.py starts real servers with them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpctl.probe.serverenv import DEFAULT_INHERITED_ENV, find_program, server_env

OURS = {
    "HOME": "/home/me",
    "PATH": "/usr/bin:/bin",
    "SSL_CERT_FILE": "/etc/ca.pem",
    "https_proxy": "http://proxy:3128",
    "GITHUB_TOKEN": "ghp_secret",
    "EDITOR": "vim",
    "TERM": "() {  :; }",  # an exported shell function (bash's form)
}


def test_a_server_inherits_only_the_few_variables_it_needs() -> None:
    assert server_env({}, False, OURS) == {
        "HOME": "/home/me",
        "PATH": "/usr/bin:/bin",
        "SSL_CERT_FILE": "/etc/ca.pem",
        "https_proxy": "http://proxy:3128",
    }


def test_the_entrys_own_variables_are_set_over_what_it_inherits() -> None:
    own = {"PATH": "/opt/bin", "API_KEY": "k"}
    env = server_env(own, False, OURS)
    assert env["PATH"] == "/opt/bin" and env["API_KEY"] == "k"
    assert "GITHUB_TOKEN" not in env


def test_inherit_env_names_what_else_it_gets() -> None:
    env = server_env({"EDITOR": "nano"}, ("GITHUB_TOKEN", "MISSING", "EDITOR"), OURS)
    assert env == {
        "HOME": "/home/me",
        "PATH": "/usr/bin:/bin",
        "SSL_CERT_FILE": "/etc/ca.pem",
        "https_proxy": "http://proxy:3128",
        "GITHUB_TOKEN": "ghp_secret",
        "EDITOR": "nano",
    }


def test_inherit_env_true_passes_everything_with_its_own_on_top() -> None:
    assert server_env({"EDITOR": "nano"}, True, OURS) == {**OURS, "EDITOR": "nano"}


def test_a_value_that_only_contains_parentheses_is_inherited() -> None:
    environ = {"HOME": "/home/(me)", "USER": "x()"}
    assert server_env({}, False, environ) == environ


def test_without_an_environment_mcpctls_own_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in DEFAULT_INHERITED_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", "/home/from-os")
    monkeypatch.setenv("NOT_INHERITED", "x")
    assert server_env({"A": "1"}, False) == {"HOME": "/home/from-os", "A": "1"}
    assert server_env({}, True)["NOT_INHERITED"] == "x"


# --- the program a command names ---------------------------------------------------------


def program(path: Path, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(mode)
    return path


def test_a_bare_name_is_found_on_the_entrys_path_in_order(tmp_path: Path) -> None:
    first = program(tmp_path / "a" / "srv")
    program(tmp_path / "b" / "srv")
    path = os.pathsep.join([str(tmp_path / "none"), str(tmp_path / "a"), str(tmp_path / "b")])
    assert find_program("srv", {"PATH": path}) == str(first)


def test_only_an_executable_regular_file_counts(tmp_path: Path) -> None:
    program(tmp_path / "a" / "srv", 0o644)  # not executable
    (tmp_path / "b" / "srv").mkdir(parents=True)  # a folder
    found = program(tmp_path / "c" / "srv")
    path = os.pathsep.join(str(tmp_path / d) for d in "abc")
    assert find_program("srv", {"PATH": path}) == str(found)
    assert find_program("srv", {"PATH": os.pathsep.join(str(tmp_path / d) for d in "ab")}) is None


def test_relative_path_folders_start_from_the_working_directory(tmp_path: Path) -> None:
    found = program(tmp_path / "srvdir" / "bin" / "srv")
    assert find_program("srv", {"PATH": "bin"}, str(tmp_path / "srvdir")) == str(found)


def test_without_path_the_default_search_path_is_used(tmp_path: Path) -> None:
    shells = [Path(folder) / "sh" for folder in os.defpath.split(os.pathsep) if folder]
    expected = next(str(s) for s in shells if s.is_file() and os.access(s, os.X_OK))
    assert find_program("sh", {}) == os.path.abspath(expected)
    assert find_program("sh", {"PATH": str(tmp_path)}) is None


def test_a_command_with_a_slash_is_a_path_from_the_working_directory(tmp_path: Path) -> None:
    found = program(tmp_path / "srvdir" / "bin" / "srv")
    assert find_program("bin/srv", {"PATH": ""}, str(tmp_path / "srvdir")) == str(found)
    assert find_program("bin/srv", {"PATH": str(tmp_path / "srvdir")}, str(tmp_path)) is None
    assert find_program(str(found), {}) == str(found)
    assert find_program(str(tmp_path / "gone"), {}) is None


def test_without_a_working_directory_a_relative_path_is_from_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = program(tmp_path / "bin" / "srv")
    monkeypatch.chdir(tmp_path)
    assert find_program("bin/srv", {}) == str(found)  # absolute, not as written
    assert find_program("srv", {"PATH": "bin"}) == str(found)
