"""`mcpctl list` answered before the CLI framework loads: the same output, exit code and
envelope as the full command, for every command line it takes; every other one (and every
failure to report) goes to the full CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpctl.cli.quick import list_args
from tests.conftest import MCPCTL, Cli, write_config

TIMEOUT = 60
ENTRIES = {
    "alpha": {"command": "npx", "args": ["-y", "@acme/alpha"], "groups": ["work"],
              "env": {"TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
              "allow_literal": ["TOKEN"]},
    "beta": {"url": "https://mcp.example.com/mcp", "enabled": False, "description": "Beta"},
    "broken": {"command": 7},
}  # fmt: skip


def program(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -X importtime -m mcpctl ARGS``, as a user runs it (the quick path is there)."""
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mcpctl", *args], capture_output=True,
        text=True, env=dict(os.environ), timeout=TIMEOUT,
    )  # fmt: skip


def imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if "|" in line}


def said(stderr: str) -> str:
    """stderr without the import-time lines."""
    return "".join(line + "\n" for line in stderr.splitlines() if not line.startswith("import "))


@pytest.mark.parametrize(
    "args",
    [
        ["list", "--json"],
        ["list"],
        ["--json", "list", "--enabled"],
        ["list", "--group", "work", "--json"],
        ["list", "--group=work", "-q"],
        ["list", "--json", "--config", "CONFIG"],
        ["--config=CONFIG", "list", "--json"],
    ],
)
def test_the_quick_answer_is_the_full_commands(
    cli: Cli, config_path: Path, args: list[str]
) -> None:
    write_config(config_path, ENTRIES)
    args = [a.replace("CONFIG", str(config_path)) for a in args]
    quick = program(*args)
    full = cli(*args)
    assert (quick.returncode, quick.stdout, said(quick.stderr)) == (
        full.exit_code, full.stdout, full.stderr,
    )  # fmt: skip
    assert quick.returncode == 0 and "alpha" in quick.stdout
    loaded = imported(quick.stderr)
    assert "mcpctl.cli.quick" in loaded
    assert not {name.split(".")[0] for name in loaded} & {"typer", "click", "rich", "pydantic"}


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["list", "--group", "nope", "--json"], 2),  # an unknown group: the full CLI says it
        (["list", "--json", "--config", "MISSING"], 2),  # a named file that is not there
        (["list", "-v"], 0),  # options it does not take
        (["list", "--help"], 0),
    ],
)
def test_the_full_cli_answers_the_rest(
    cli: Cli, config_path: Path, tmp_path: Path, args: list[str], code: int
) -> None:
    write_config(config_path, ENTRIES)
    args = [a.replace("MISSING", str(tmp_path / "missing.json")) for a in args]
    quick = program(*args)
    full = cli(*args)
    assert quick.returncode == full.exit_code == code
    assert quick.stdout == full.stdout
    assert "typer" in imported(quick.stderr)


def test_a_syntax_error_in_the_config_is_reported_as_always(cli: Cli, config_path: Path) -> None:
    write_config(config_path, '{"a": {"command": "x"},,}')
    quick = program("list", "--json")
    assert quick.returncode == 2
    assert quick.stdout == cli("list", "--json").stdout
    assert '"code": "config_syntax"' in quick.stdout


@pytest.mark.parametrize(
    ("argv", "taken"),
    [
        (["list"], True),
        (["list", "--json", "-q", "--enabled"], True),
        (["--quiet", "--config", "f.json", "list", "--group", "a", "--group=b"], True),
        (["--enabled", "list"], False),  # a command option before the command
        (["--group", "a", "list"], False),
        (["list", "--config", "a", "--config", "b"], False),
        (["list", "--config"], False),
        (["list", "--config", "--json"], False),
        (["list", "--config="], False),
        (["list", "extra"], False),
        (["list", "list"], False),
        (["list", "-v"], False),
        (["list", "--help"], False),
        (["get", "list"], False),
        (["--json"], False),
    ],
)
def test_only_plain_list_lines_are_taken(argv: list[str], taken: bool) -> None:
    parsed = list_args(argv)
    assert (parsed is not None) == taken
    if argv[:3] == ["--quiet", "--config", "f.json"]:
        assert parsed is not None
        assert (parsed.quiet, parsed.config, parsed.groups) == (True, "f.json", ["a", "b"])


def test_a_reader_that_goes_away_is_not_an_error(config_path: Path) -> None:
    write_config(config_path, {f"s{i}": {"command": "x"} for i in range(5000)})
    with subprocess.Popen(
        [*MCPCTL, "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=TIMEOUT) == 0, err
    assert first.startswith("s0\tstdio") and "Traceback" not in err
