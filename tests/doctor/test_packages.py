"""Whether an npx/uvx package is cached locally, and which package a command names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl.doctor.packages import cached_package, package_of


@pytest.mark.parametrize(
    ("tool", "args", "package"),
    [
        ("npx", ["-y", "@modelcontextprotocol/server-memory@1.2.0"], "@modelcontextprotocol/server-memory"),
        ("npx", ["--yes", "server-github@latest", "--port", "3"], "server-github"),
        ("npx", ["-p", "@scope/pkg", "run-it"], "@scope/pkg"),
        ("uvx", ["mcp-server-time==1.0", "--local-timezone", "UTC"], "mcp-server-time"),
        ("uvx", ["--from", "git-mcp[all]", "git-mcp-server"], "git-mcp"),
        ("uvx", ["--python", "3.12", "mcp-server-fetch"], "mcp-server-fetch"),
        ("docker", ["run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/github/github-mcp-server"],
         "ghcr.io/github/github-mcp-server"),
        ("docker", ["ps"], None),
    ],
)  # fmt: skip
def test_package_of(tool: str, args: list[str], package: str | None) -> None:
    assert package_of(tool, args) == package


def test_npx_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm"))
    args = ["-y", "@scope/server@2"]
    found = cached_package("npx", args, "/usr/bin/npx")
    assert found is not None and found.cached is False and found.package == "@scope/server"
    pkg = tmp_path / "npm" / "_npx" / "0a1b2c" / "node_modules" / "@scope" / "server"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "@scope/server", "version": "2.0.1"}))
    (pkg / "index.js").write_text("x" * 5000)
    found = cached_package("npx", args, "/usr/bin/npx")
    assert found is not None and found.cached is True
    assert found.version == "2.0.1" and found.size is not None and found.size > 5000


def test_uvx_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    found = cached_package("uvx", ["mcp-server-time"], "/usr/bin/uvx")
    assert found is not None and found.cached is False
    (tmp_path / "uv" / "archive-v0" / "h1" / "mcp_server_time-2025.9.25.dist-info").mkdir(
        parents=True
    )
    found = cached_package("uvx", ["mcp-server-time"], "/usr/bin/uvx")
    assert found is not None and found.cached is True and found.version == "2025.9.25"
