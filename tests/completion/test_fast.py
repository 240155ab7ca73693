"""A TAB press is answered before the CLI framework loads (bench/bench_completion.py times it).

The program's entry point (``mcpctl.__main__.run``) answers ``mcpctl __complete ...`` with
the standard library and a few small mcpctl modules: no typer/click/rich, no pydantic, no
MCP SDK, no keyring, not even pathlib or platformdirs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.completion.conftest import CONFIG
from tests.conftest import write_config

NEVER = {
    "typer", "click", "rich", "pydantic", "mcp", "mcp_types", "httpx", "httpx2", "anyio",
    "keyring", "filelock", "platformdirs", "pathlib", "dataclasses", "mcpctl.cli",
    "mcpctl.config", "mcpctl.probe", "mcpctl.auth", "mcpctl.paths",
}  # fmt: skip

PROBE = """
import json, sys
from mcpctl.__main__ import run
try:
    run()
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)
"""


def loaded(args: list[str], cwd: Path) -> tuple[str, set[str]]:
    env = {k: v for k, v in os.environ.items() if k not in ("MCPCTL_HOME",)}
    env["HOME"] = str(cwd)  # the user dirs as most users have them: no MCPCTL_HOME
    r = subprocess.run([sys.executable, "-c", PROBE, "__complete", *args],
                       capture_output=True, text=True, env=env, cwd=cwd, timeout=60)  # fmt: skip
    code, modules = json.loads(r.stderr.strip().splitlines()[-1])
    assert code == 0, r.stderr
    return r.stdout, set(modules)


# The config's names and placeholder pattern: plain re, made for the quick paths.
LIGHT = {"mcpctl.config", "mcpctl.config.fieldsyntax"}


def heavy(modules: set[str]) -> set[str]:
    return {m for m in modules - LIGHT if m in NEVER or m.split(".")[0] in NEVER or
            any(m.startswith(n + ".") for n in NEVER)}  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        ["fish", ""],
        ["fish", "get", ""],
        ["fish", "call", "time", ""],
        ["fish", "secret", "set", ""],
        ["fish", "render", ""],
        ["fish", "registry", "sync", ""],
        ["fish", "show", "io."],
        ["bash", " \t\n=:", "mcpctl --config ./ext"],
        ["zsh", "add", "--tr"],
    ],
)
def test_a_tab_press_loads_nothing_heavy(isolated: Path, args: list[str]) -> None:
    write_config(isolated / "external-mcps.json", CONFIG)
    out, modules = loaded(args, isolated)
    assert out  # it answered
    assert not heavy(modules), sorted(heavy(modules))


def test_the_installed_program_answers(isolated: Path) -> None:
    program = shutil.which("mcpctl", path=str(Path(sys.executable).parent))
    if program is None:
        pytest.fail("mcpctl is not installed in this environment: pip install -e .")
    write_config(isolated / "external-mcps.json", CONFIG)
    r = subprocess.run([program, "__complete", "fish", "get", ""], capture_output=True,
                       text=True, cwd=isolated, timeout=60)  # fmt: skip
    assert r.returncode == 0 and r.stdout.splitlines()[:2] == ["words", "time\tWhat time it is"]
    r = subprocess.run([sys.executable, "-m", "mcpctl", "__complete", "zsh", "snapshot", ""],
                       capture_output=True, text=True, cwd=isolated, timeout=60)  # fmt: skip
    assert r.returncode == 0 and r.stdout.splitlines()[1].startswith("save:")


def test_the_cli_answers_too(isolated: Path) -> None:
    # An entry point installed before mcpctl.__main__.run (mcpctl.cli.app:run) still answers.
    probe = "import sys; from mcpctl.cli.app import main; sys.exit(main())"
    r = subprocess.run([sys.executable, "-c", probe, "__complete", "fish", "snapshot", ""],
                       capture_output=True, text=True, cwd=isolated, timeout=60)  # fmt: skip
    assert r.returncode == 0 and r.stdout.splitlines()[1].startswith("save\t")
