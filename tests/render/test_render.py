"""``mcpctl.render.render`` and ``parse`` (the package's own functions): which servers are
rendered, how each secrets mode reaches the target, what is passed on to it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.errors import McpctlError, ServerNotFoundError, UsageError
from mcpctl.render import parse, render, target_names

KEYED = {"s": ServerEntry(command="x", env={"K": "${K}"})}
TIME = ServerEntry(command="uvx", args=("mcp-server-time",))
GITHUB = ServerEntry(command="npx", args=("-y", "github"))


def servers(text: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(text)["mcpServers"]
    return found


def test_only_the_named_and_enabled_servers_are_rendered() -> None:
    entries = {"a": TIME, "b": GITHUB, "off": ServerEntry(command="x", enabled=False)}
    assert list(servers(render("cursor", entries, environ={}).text)) == ["a", "b"]
    assert list(servers(render("cursor", entries, only=["b"], environ={}).text)) == ["b"]
    assert servers(render("cursor", entries, only=["off"], environ={}).text) == {}


def test_a_name_that_is_not_configured_is_refused_by_name() -> None:
    with pytest.raises(ServerNotFoundError) as caught:
        render("cursor", {"github": GITHUB, "time": TIME}, only=["github", "githb", "zzz"])
    assert caught.value.message == "no servers 'githb', 'zzz'"
    assert caught.value.hint == "did you mean 'github'?"


def test_a_lone_surrogate_is_refused_naming_the_render() -> None:
    with pytest.raises(McpctlError, match="render cursor"):
        render("cursor", {"s": ServerEntry(command="x", args=("\ud800",))}, environ={})


def test_self_is_refused_with_the_fix() -> None:
    me = ServerEntry(command="mcpctl", args=("serve",))
    with pytest.raises(UsageError) as caught:
        render("mcp-proxy", {}, serve=me)
    assert caught.value.hint == "render it for a client: mcpctl render claude-code --self"
    with pytest.raises(UsageError) as caught:
        render("cursor", {"mcpctl": ServerEntry(command="x")}, serve=me)
    assert caught.value.hint == (
        "rename that server ('mcpctl remove mcpctl' and add it again under another name)"
    )
    assert caught.value.subjects == ("mcpctl",)


def test_servers_after_one_without_pins_are_pinned_too() -> None:
    rendered = render("mcp-proxy", {"time": TIME, "github": GITHUB}, environ={},
                      pinned={"github": ["search"]})  # fmt: skip
    found = servers(rendered.text)
    assert found["github"]["options"]["toolFilter"] == {"mode": "allow", "list": ["search"]}
    assert rendered.warnings == [
        "time: nothing pinned in the lock file: rendered unpinned, every tool exposed"
    ]


def test_the_listen_address_and_the_template_reach_the_target() -> None:
    rendered = render("mcp-proxy", KEYED, environ={}, listen="127.0.0.1:9999")
    assert json.loads(rendered.text)["mcpProxy"]["addr"] == "127.0.0.1:9999"
    with pytest.raises(UsageError, match="a client does not listen"):
        render("cursor", KEYED, environ={}, listen="127.0.0.1:9999")
    rendered = render("mcp-proxy", KEYED, environ={}, template={"mcpProxy": {"name": "mine"}})
    assert json.loads(rendered.text)["mcpProxy"] == {"name": "mine"}


def test_inline_writes_the_given_environment_or_keyring_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("K", "from the process")
    rendered = render("cursor", KEYED, inline_secrets=True, environ={"K": "given"})
    assert servers(rendered.text)["s"]["env"] == {"K": "given"}
    assert rendered.holds_secrets is True
    assert rendered.warnings == [
        "--secrets inline wrote the values, though Cursor expands ${env:VAR} itself: "
        "--secrets env (or auto) keeps them out of the file"
    ]
    for target in ("fastmcp", "mcp-proxy-py"):  # proxies that expand no placeholder
        given = render(target, KEYED, inline_secrets=True, environ={"K": "given"})
        assert "given" in given.text and given.holds_secrets is True
        kept = render(target, KEYED, secrets_mode="inline", environ={}, secrets={"K": "kept"}.get)
        assert "kept" in kept.text and kept.holds_secrets is True
        assert render(target, KEYED, environ={"K": "given"}).holds_secrets is False


def test_plain_rendering_holds_no_secrets() -> None:
    rendered = render("cursor", {"t": TIME}, environ={})
    assert rendered.holds_secrets is False and rendered.launched == []


def test_pin_notes_come_before_the_inline_notes() -> None:
    rendered = render("cursor", {"time": TIME, **KEYED}, pinned={}, secrets_mode="inline",
                      environ={"K": "v"})  # fmt: skip
    assert [w[:40] for w in rendered.warnings] == [
        "time: nothing pinned in the lock file: r",
        "s: nothing pinned in the lock file: rend",
        "--secrets inline wrote the values, thoug",
    ]


@pytest.mark.parametrize(
    ("target", "note"),
    [
        ("cursor", "Cursor reads placeholders from its own environment, where they are not set"),
        ("claude-desktop", "Claude Desktop expands no placeholder"),
        (
            "mcp-proxy",
            "mcp-proxy reads placeholders from its own environment, where they are not set",
        ),
    ],
)
def test_env_mode_says_which_target_cannot_read_the_keyring(target: str, note: str) -> None:
    rendered = render(target, KEYED, secrets_mode="env", environ={}, secrets={"K": "v"}.get)
    assert rendered.warnings[0] == (
        f"s: K only in the keyring: {note} (--secrets launcher runs the server through mcpctl)"
    )
    assert rendered.launched == []


def test_a_remote_servers_keyring_header_comes_from_the_helper_unless_env_mode() -> None:
    remote = {"r": ServerEntry(url="https://x.example/mcp", headers={"A": "Bearer ${TOK}"})}
    keyring = {"TOK": "t"}.get
    auto = servers(render("claude-code", remote, environ={}, secrets=keyring).text)
    assert "headersHelper" in auto["r"]
    env = servers(render("claude-code", remote, secrets_mode="env", environ={},
                         secrets=keyring).text)  # fmt: skip
    assert "headersHelper" not in env["r"]


def test_parse_reads_back_what_render_wrote() -> None:
    text = render("cursor", {"time": TIME}, environ={}).text
    assert parse("cursor", text).entries["time"].args == ("mcp-server-time",)
    assert "cursor" in target_names() and "mcp-proxy" in target_names()
