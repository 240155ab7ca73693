"""docs/doctor.md documents every finding code, and every command doctor names exists."""

from __future__ import annotations

import re
from pathlib import Path

from mcpctl.cli.app import build_command
from mcpctl.doctor.findings import CODES, SECTIONS

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "doctor.md"
# A command as written to be run: in backticks or quotes, after a prompt, or a line of its own.
MENTION_RE = re.compile(r"(?:[`']|\$ |^\s*)mcpctl ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?", re.M)


def test_every_code_is_documented_with_its_section() -> None:
    text = DOC.read_text()
    assert set(CODES) == set(SECTIONS)
    for codes in CODES.values():
        for code in codes:
            assert f"| `{code}` |" in text, code


def test_every_command_named_exists() -> None:
    root = build_command()
    sources = [
        DOC,
        *(ROOT / "mcpctl" / "doctor").glob("*.py"),
        ROOT / "mcpctl" / "cli" / "doctor.py",
    ]
    seen = set()
    for path in sources:
        for first, second in MENTION_RE.findall(path.read_text()):
            command = root.commands.get(first)
            assert command is not None, f"{path.name}: mcpctl {first}"
            group = getattr(command, "commands", None)
            if group and second and second.upper() != second:
                # auth NAME is a sign-in; any other word after a group must be a subcommand.
                assert second in group or first == "auth", f"{path.name}: mcpctl {first} {second}"
            seen.add(first)
    assert {"validate", "secret", "auth", "registry", "snapshot", "add", "import"} <= seen


def test_every_step_of_doctor_name_is_documented() -> None:
    from mcpctl.doctor.server import REMOTE_STEPS, STDIO_STEPS

    text = DOC.read_text()
    for step in {**STDIO_STEPS, **REMOTE_STEPS}:
        assert f"| `{step}` |" in text, step
