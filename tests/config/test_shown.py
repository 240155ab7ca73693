"""An entry as mcpctl shows it: the summary ``list``, ``get`` and ``serve`` print, and its
target (a URL or a command line)."""

from __future__ import annotations

from mcpctl import ServerEntry
from mcpctl.config.shown import entry_summary, entry_target

TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"


def test_a_stdio_summary_leads_with_name_transport_and_state() -> None:
    entry = ServerEntry(command="npx", args=("-y", "pkg"), env={"GITHUB_TOKEN": TOKEN})
    summary = entry_summary("gh", entry)
    assert list(summary)[:3] == ["name", "transport", "enabled"]
    assert summary == {
        "name": "gh",
        "transport": "stdio",
        "enabled": True,
        "command": "npx",
        "args": ["-y", "pkg"],
        "env": {"GITHUB_TOKEN": "****"},
    }


def test_a_disabled_remote_summary_says_so_once_and_keeps_placeholders() -> None:
    entry = ServerEntry(
        url="https://h.example/mcp",
        headers={"Authorization": "Bearer ${TOKEN}"},
        groups=("work",),
        enabled=False,
    )
    summary = entry_summary("r", entry)
    assert summary == {
        "name": "r",
        "transport": "streamable-http",
        "enabled": False,
        "url": "https://h.example/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}"},
        "groups": ["work"],
    }
    assert list(summary)[:3] == ["name", "transport", "enabled"]


def test_the_target_is_the_url_or_the_quoted_command_line() -> None:
    remote = entry_summary("r", ServerEntry(url="https://h.example/mcp", transport="sse"))
    assert remote["transport"] == "sse"
    assert entry_target(remote) == "https://h.example/mcp"
    stdio = entry_summary("s", ServerEntry(command="my tool", args=("--dir", "a b", "x")))
    assert entry_target(stdio) == "'my tool' --dir 'a b' x"
    assert entry_target({"command": "uvx"}) == "uvx"
    assert entry_target({"url": 5, "command": "x"}) == "5"
    assert entry_target({"args": [1, "a"]}) == "'' 1 a"
