"""Lint, format and strict typing are part of the test suite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return found


def test_ruff_lint() -> None:
    r = run(tool("ruff"), "check", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format() -> None:
    r = run(tool("ruff"), "format", "--check", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict() -> None:
    r = run(tool("mypy"))
    assert r.returncode == 0, r.stdout + r.stderr
