"""Shared fixtures: an isolated mcpctl home per test, and a CLI runner at a fixed width."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mcpctl.cli.app import main

WIDTH = "100"
REQUIRE_INTEGRATION = os.environ.get("MCPCTL_REQUIRE_INTEGRATION") == "1"


def need_program(program: str, why: str) -> str:
    """The path of an outside program, or skip (fail under MCPCTL_REQUIRE_INTEGRATION=1)."""
    found = shutil.which(program)
    if found is None:
        message = f"{program} is not installed ({why})"
        if REQUIRE_INTEGRATION:
            pytest.fail(message + "; MCPCTL_REQUIRE_INTEGRATION=1 forbids skipping")
        pytest.skip(message)
    return found


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own MCPCTL_HOME and working directory; no user file is touched."""
    home = tmp_path / "mcpctl-home"
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("MCPCTL_HOME", str(home))
    monkeypatch.delenv("MCPCTL_CONFIG", raising=False)
    monkeypatch.delenv("MCPCTL_SNAPSHOT", raising=False)
    monkeypatch.delenv("MCPCTL_DEBUG", raising=False)
    monkeypatch.setenv("COLUMNS", WIDTH)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(work)
    return work


@pytest.fixture
def config_path(isolated: Path) -> Path:
    """The config file the CLI uses by default in a test (in the working directory)."""
    return isolated / "external-mcps.json"


@dataclass
class Run:
    """The outcome of one CLI invocation."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


class Cli:
    """Runs mcpctl in-process, the way typer's CliRunner runs a Typer app."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(
        self, *args: str, input: str | None = None, env: dict[str, str] | None = None
    ) -> Run:
        with self.runner.isolation(input=input, env=env) as (out, err, _):
            code = main(list(args))
            sys.stdout.flush()
            sys.stderr.flush()
            stdout = out.getvalue().decode()
            stderr = err.getvalue().decode()
        return Run(code, stdout, stderr)


@pytest.fixture
def cli() -> Iterator[Cli]:
    yield Cli()


def write_config(path: Path, data: dict[str, Any] | str) -> Path:
    text = data if isinstance(data, str) else json.dumps(data, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


MCPCTL = [sys.executable, "-m", "mcpctl"]
