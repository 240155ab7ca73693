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


@pytest.mark.parametrize(
    ("path", "source", "banned"),
    [
        ("mcpctl/config/x.py", "import mcp", True),
        ("mcpctl/config/x.py", "import httpx2", True),
        ("mcpctl/registry/x.py", "import mcp_types", True),
        ("mcpctl/registry/x.py", "import keyring", True),
        ("mcpctl/config/x.py", "import typer", True),
        ("mcpctl/probe/x.py", "import rich", True),
        ("mcpctl/probe/x.py", "from mcpctl.cli import output", True),
        ("mcpctl/cli/x.py", "from mcp.client.session import ClientSession", True),
        ("mcpctl/cli/x.py", "import httpx2", True),
        ("mcpctl/cli/x.py", "import keyring", True),
        ("mcpctl/probe/x.py", "import mcp_types", False),
        ("mcpctl/probe/x.py", "from mcp.client.session import ClientSession", True),
        ("mcpctl/auth/x.py", "from mcp.shared.auth import OAuthToken", True),
        ("mcpctl/sdk.py", "from mcp.client.session import ClientSession", False),
        ("mcpctl/probe/x.py", "import httpx2", False),
        ("mcpctl/cli/x.py", "import typer", False),
        ("mcpctl/auth/x.py", "import keyring", False),
        ("mcpctl/auth/x.py", "import typer", True),
        ("mcpctl/probe/x.py", "import keyring", True),
        ("mcpctl/cli/x.py", "from typer._click import Context", True),
        ("tools/x.py", "from typer._click.exceptions import UsageError", True),
        ("tools/x.py", "from mcpctl.cli.app import build_command", False),
        ("mcpctl/cli/x.py", "from tools.docgen import walk", True),
        ("mcpctl/config/x.py", "import tools", True),
        ("mcpctl/serve/x.py", "import mcp_types", False),
        ("mcpctl/serve/x.py", "from mcp.server.mcpserver import MCPServer", True),
        ("mcpctl/serve/x.py", "from mcpctl.sdk import MCPServer", False),
        ("mcpctl/serve/x.py", "import keyring", True),
        ("mcpctl/serve/x.py", "import typer", True),
        ("mcpctl/serve/x.py", "from mcpctl.cli import output", True),
        ("mcpctl/render/x.py", "import mcp_types", True),
    ],
)
def test_import_boundaries_are_enforced(path: str, source: str, banned: bool) -> None:
    """Only probe/ talks to servers (the SDK's ``mcp`` package through mcpctl/sdk.py alone), and
    serve/ is the server (the SDK's server half, through mcpctl/sdk.py too); only the CLI
    renders, the keyring is auth's alone; the package never needs the development tools, nor
    typer's private copy of click."""
    r = subprocess.run(
        [tool("ruff"), "check", "--select", "TID251", "--stdin-filename", path, "-"],
        input=f"{source}\n", cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ("TID251" in r.stdout) is banned, r.stdout + r.stderr


def test_commands_name_their_exit_codes() -> None:
    """Every command's exit code is an ``ExitCode`` member, never a bare number."""
    import re

    literal = re.compile(
        r"\bcode\b\s*(?::\s*int\s*)?=\s*[0-9]|exit_code\s*(?::\s*int\s*)?=\s*[0-9]"
    )
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted((ROOT / "mcpctl" / "cli").glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if literal.search(line)
    ]
    assert not found, found
