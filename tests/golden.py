"""Golden files: a generated text compared with the file committed beside the tests.

``MCPCTL_UPDATE_GOLDEN=1`` rewrites the file instead -- on a developer's machine only: under
CI (``CI`` set, as every CI service does) it fails, for a golden regenerated in CI would make
every check pass whatever the code generates. A file that differs fails with a unified diff
from the committed file to the generated text, and the command that regenerates it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

UPDATE_VAR = "MCPCTL_UPDATE_GOLDEN"
ROOT = Path(__file__).resolve().parent.parent
MAX_DIFF_LINES = 400  # a golden rewritten wholesale: enough to see what went wrong


def in_ci() -> bool:
    """Whether the tests run under CI (``CI`` set to anything but empty, 0 or false)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def updating() -> bool:
    """Whether the golden files are to be rewritten (``MCPCTL_UPDATE_GOLDEN=1``).

    Fails the test under CI: goldens are regenerated on a developer's machine and committed.
    """
    if os.environ.get(UPDATE_VAR) != "1":
        return False
    if in_ci():
        pytest.fail(
            f"{UPDATE_VAR}=1 is refused under CI (CI={os.environ.get('CI')!r}): golden files "
            "are regenerated on a developer's machine and committed, never in CI",
            pytrace=False,
        )
    return True


def regenerate_command() -> str:
    """The command that rewrites the golden files of the running test's module."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    module = current.split("::", 1)[0] or "tests"
    return f"{UPDATE_VAR}=1 .venv/bin/python -m pytest {module} -p no:cacheprovider"


def unified(old: str, new: str, name: str) -> str:
    """A unified diff from ``old`` (the golden file) to ``new`` (the generated text)."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"{name} (golden)",
            tofile=f"{name} (generated)",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... {len(lines) - MAX_DIFF_LINES} more lines\n"]
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)  # fmt: skip


def check_golden(path: Path, text: str) -> None:
    """Compare ``text`` with the golden file at ``path`` (rewrite it when updating).

    Fails with a unified diff when they differ, or when the file is missing.
    """
    try:
        name = str(path.resolve().relative_to(ROOT))
    except ValueError:
        name = str(path)
    if updating():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.is_file():
        pytest.fail(f"{name} is missing: write it with {regenerate_command()}", pytrace=False)
    golden = path.read_text(encoding="utf-8")
    if golden != text:
        pytest.fail(
            f"{name} differs from what the code generates; if the change is intended, "
            f"regenerate it with {regenerate_command()} and review the diff:\n"
            + unified(golden, text, name),
            pytrace=False,
        )
