"""completion show / install, and the tool names tools and health leave for completion."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from mcpctl.completion import sources
from mcpctl.completion.scripts import script
from tests.conftest import SERVERS, Cli, write_config

PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}
BASIC_TOOLS = ["echo", "add", "weather", "fail", "slow", "record", "image", "audio", "resource",
               "headers"]  # fmt: skip


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own, with no XDG variables."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "ZDOTDIR"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_prints_the_script(cli: Cli, shell: str) -> None:
    r = cli("completion", "show", shell)
    assert r.exit_code == 0 and r.stdout == script(shell) and r.stderr == ""
    r = cli("completion", "show", shell, "--json")
    assert r.json["data"] == {"shell": shell, "script": script(shell)}


def test_show_defaults_to_the_shell_of_SHELL(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/usr/local/bin/fish")
    assert cli("completion", "show").stdout == script("fish")


@pytest.mark.parametrize("value", ["/bin/tcsh", ""])
def test_an_unknown_shell_is_a_usage_error(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("SHELL", value)
    r = cli("completion", "install")
    assert r.exit_code == 2
    assert "cannot tell which shell" in r.stderr and "bash|zsh|fish" in r.stderr
    assert cli("completion", "show", "tcsh").exit_code == 2


@pytest.mark.parametrize(
    ("shell", "where"),
    [
        ("bash", ".local/share/bash-completion/completions/mcpctl"),
        ("zsh", ".zfunc/_mcpctl"),
        ("fish", ".config/fish/completions/mcpctl.fish"),
    ],
)
def test_install_writes_where_the_shell_looks(cli: Cli, home: Path, shell: str, where: str) -> None:
    r = cli("completion", "install", shell)
    assert r.exit_code == 0, r.stderr
    path = home / where
    assert path.read_text() == script(shell)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert f"Wrote the {shell} completion script to {path}" in r.stderr
    assert "Open a new shell" in r.stdout
    r = cli("completion", "install", shell, "--json")
    assert r.json["data"]["path"] == str(path) and r.json["data"]["next"]


def test_install_follows_xdg(
    cli: Cli, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "conf"))
    assert cli("completion", "install", "bash").exit_code == 0
    assert (tmp_path / "data/bash-completion/completions/mcpctl").read_text() == script("bash")
    assert cli("completion", "install", "fish").exit_code == 0
    assert (tmp_path / "conf/fish/completions/mcpctl.fish").read_text() == script("fish")


def test_install_zsh_says_how_to_add_the_folder_to_fpath(cli: Cli, home: Path) -> None:
    r = cli("completion", "install", "zsh")
    assert f"fpath=({home / '.zfunc'} $fpath)" in r.stdout and "compinit" in r.stdout
    (home / ".zshrc").write_text("fpath+=~/.zfunc\nautoload -Uz compinit && compinit\n")
    r = cli("completion", "install", "zsh")
    assert "fpath" not in r.stdout and "Open a new shell" in r.stdout


def test_install_replaces_an_old_script(cli: Cli, home: Path) -> None:
    path = home / ".config/fish/completions/mcpctl.fish"
    path.parent.mkdir(parents=True)
    path.write_text("# an old version\n")
    assert cli("completion", "install", "fish").exit_code == 0
    assert path.read_text() == script("fish")
    assert [p.name for p in path.parent.iterdir()] == ["mcpctl.fish"]  # no temp file left


def test_install_print_writes_nothing(cli: Cli, home: Path) -> None:
    r = cli("completion", "install", "bash", "--print")
    assert r.exit_code == 0 and r.stdout == script("bash")
    assert not (home / ".local").exists()


def test_install_into_an_unwritable_place_is_an_outside_failure(cli: Cli, home: Path) -> None:
    (home / ".zfunc").write_text("a file where the folder should be")
    r = cli("completion", "install", "zsh")
    assert r.exit_code == 3 and ".zfunc" in r.stderr


def tool_names(config: str, server: str) -> list[str]:
    return [name for name, _ in sources.tool_names(config, server)]


def test_tools_and_health_leave_the_tool_names(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC, "gone": {"command": "no-such-command-mcpctl"}})
    assert tool_names(str(config_path), "basic") == []
    r = cli("tools", "--json")
    assert r.exit_code == 1  # gone fails
    assert tool_names(str(config_path), "basic") == BASIC_TOOLS
    assert tool_names(str(config_path), "gone") == []


def test_health_leaves_the_tool_names(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
    assert cli("health", "--json").exit_code == 0
    assert tool_names(str(config_path), "basic") == BASIC_TOOLS


def test_complete_through_the_cli(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
    r = cli("__complete", "fish", "call", "")
    assert r.exit_code == 0 and r.stdout == "words\nbasic\n"
