"""Helpers for the completion tests: ask the engine what a command line completes to."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpctl.completion.engine import Reply, complete, load_tree
from tests.conftest import write_config

CONFIG = {
    "time": {"command": "uvx", "args": ["mcp-server-time"], "description": "What time it is"},
    "github": {
        "url": "https://api.githubcopilot.com/mcp/",
        "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
    },
    "files": {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "${DOCS_DIR:-/tmp}"],
        "env": {"API_KEY": "${FILES_KEY}"},
        "enabled": False,
    },
    "$schema": "https://example.invalid/schema.json",
}


def ask(line: str) -> Reply:
    """What the word under the cursor of ``line`` (``mcpctl ...``; a trailing space starts
    a new word) completes to."""
    words = line.split()[1:]
    current = "" if line.endswith(" ") else words.pop()
    return complete(load_tree(), words, current)


def offered(line: str) -> list[str]:
    """The values ``line`` completes to."""
    reply = ask(line)
    assert reply.mode == "words", reply.mode
    return [value for value, _ in reply.candidates]


@pytest.fixture
def config(config_path: Path) -> Path:
    """The example config, in the working directory (where mcpctl finds it)."""
    return write_config(config_path, CONFIG)
