"""Codex's config.toml: each field rendered, its warnings word for word, and what is imported."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.errors import UsageError
from mcpctl.probe.serverenv import TRUST_ENV
from mcpctl.render import parse, render
from mcpctl.render.base import Places
from mcpctl.render.targets import get_target

U = "https://x.example/mcp"


def codex(entries: dict[str, ServerEntry]) -> tuple[dict[str, Any], list[str]]:
    rendered = render("codex", entries, environ={})
    assert rendered.text.endswith("\n")
    return tomllib.loads(rendered.text).get("mcp_servers", {}), rendered.warnings


def test_a_local_server_with_every_field() -> None:
    entry = ServerEntry(command="run", args=("a",), env={"K": "v"}, cwd="/w", timeout=3000,
                        tools=ToolFilter(allow=("x",), deny=("y",)))  # fmt: skip
    doc, warnings = codex({"l": entry})
    assert doc["l"] == {
        "command": "run", "args": ["a"], "env": {"K": "v"}, "cwd": "/w",
        "env_vars": list(TRUST_ENV), "startup_timeout_sec": 3,
        "enabled_tools": ["x"], "disabled_tools": ["y"],
    }  # fmt: skip
    assert warnings == []
    bare, _ = codex({"l": ServerEntry(command="run")})
    assert bare["l"] == {"command": "run", "env_vars": list(TRUST_ENV)}


def test_a_timeout_in_whole_seconds_or_in_milliseconds() -> None:
    doc, _ = codex({"s": ServerEntry(command="r", timeout=2000),
                    "m": ServerEntry(command="r", timeout=2001)})  # fmt: skip
    assert doc["s"]["startup_timeout_sec"] == 2 and "startup_timeout_ms" not in doc["s"]
    assert doc["m"]["startup_timeout_ms"] == 2001 and "startup_timeout_sec" not in doc["m"]


def test_what_codex_cannot_hold_is_said() -> None:
    doc, warnings = codex({
        "sse": ServerEntry(url="https://x.example/sse", transport="sse"),
        "o": ServerEntry(url=U, auth=AuthConfig("oauth", scopes=("a", "b"))),
        "all": ServerEntry(command="run", inherit_env=True),
    })  # fmt: skip
    assert "sse" not in doc
    assert doc["o"] == {"url": U, "scopes": ["a", "b"]}
    assert warnings == [
        "sse: transport is SSE: Codex has no SSE transport; the server is left out",
        "o: auth is OAuth: sign-in happens in Codex (codex mcp login o)",
        "all: inherit_env is not written: Codex decides what environment a server inherits",
    ]
    plain, _ = codex({"o": ServerEntry(url=U, auth=AuthConfig("oauth"))})
    assert plain["o"] == {"url": U}


def test_headers_exact_placeholders_come_from_the_environment() -> None:
    entry = ServerEntry(url=U, headers={"A": "${A_KEY}", "B": "fixed"},
                        auth=AuthConfig("bearer", token="${TOK}"))  # fmt: skip
    doc, _ = codex({"r": entry})
    assert doc["r"] == {"url": U, "bearer_token_env_var": "TOK",
                        "env_http_headers": {"A": "A_KEY"}, "http_headers": {"B": "fixed"}}  # fmt: skip
    # a token that is not exactly one placeholder goes into the headers
    doc, _ = codex({"r": ServerEntry(url=U, auth=AuthConfig("bearer", token="${TOK}x"))})
    assert doc["r"] == {"url": U, "http_headers": {"Authorization": "Bearer ${TOK}x"}}
    doc, _ = codex({"r": ServerEntry(url=U, headers={"A": "${lower}"})})
    assert doc["r"] == {"url": U, "http_headers": {"A": "${lower}"}}


def parsed(text: str) -> tuple[dict[str, ServerEntry], list[str]]:
    result = parse("codex", text)
    return result.entries, result.warnings


def test_import_a_local_server() -> None:
    entries, warnings = parsed(
        '[mcp_servers.l]\ncommand = "run"\nargs = ["a"]\ncwd = "/w"\nenabled = false\n'
        'env_vars = ["LANG", {name = "TZ"}, "SSL_CERT_FILE"]\nstartup_timeout_sec = 4\n'
        'enabled_tools = ["x"]\ndisabled_tools = ["y"]\n[mcp_servers.l.env]\nK = "v"\n'
    )
    assert warnings == []
    assert entries["l"] == ServerEntry(
        command="run", args=("a",), cwd="/w", env={"K": "v"}, enabled=False,
        inherit_env=("LANG", "TZ"), timeout=4000, tools=ToolFilter(allow=("x",), deny=("y",)),
    )  # fmt: skip
    entries, _ = parsed('[mcp_servers.l]\ncommand = "run"\nenv_vars = []\nstartup_timeout_ms = 5\n')
    assert entries["l"].inherit_env is False and entries["l"].timeout == 5
    entries, _ = parsed('[mcp_servers.l]\ncommand = "run"\nenv_vars = ["SSL_CERT_FILE"]\n')
    assert entries["l"].inherit_env is False, "mcpctl passes those itself"


def test_import_a_remote_server() -> None:
    entries, warnings = parsed(
        f'[mcp_servers.r]\nurl = "{U}"\nbearer_token_env_var = "TOK"\n'
        '[mcp_servers.r.http_headers]\nB = "fixed"\n[mcp_servers.r.env_http_headers]\nA = "A_KEY"\n'
    )
    assert warnings == []
    assert entries["r"] == ServerEntry(url=U, transport="streamable-http",
                                       headers={"B": "fixed", "A": "${A_KEY}"},
                                       auth=AuthConfig("bearer", token="${TOK}"))  # fmt: skip
    entries, _ = parsed(f'[mcp_servers.o]\nurl = "{U}"\nscopes = ["a"]\n')
    assert entries["o"].auth == AuthConfig("oauth", scopes=("a",))
    entries, _ = parsed(f'[mcp_servers.p]\nurl = "{U}"\nhttp_headers = 3\n')
    assert entries["p"] == ServerEntry(url=U, transport="streamable-http")


def test_import_says_what_it_leaves_out() -> None:
    entries, warnings = parsed(
        '[mcp_servers.x]\nnote = "n"\n[mcp_servers.y]\ncommand = "r"\nz = 1\n'
    )
    assert "x" not in entries
    assert warnings[0] == "x: has neither 'command' nor 'url'; not imported"
    assert warnings[1] == "y: z is not imported: a Codex setting mcpctl does not have"


def test_not_toml_is_refused_as_a_codex_file() -> None:
    with pytest.raises(UsageError) as caught:
        parse("codex", "mcp_servers = [")
    assert caught.value.message.startswith("this is not a Codex config.toml: ")


def test_codex_home_moves_the_users_file(tmp_path: Path) -> None:
    target = get_target("codex")
    home = Places(tmp_path / "h", tmp_path / "p", "linux", {"CODEX_HOME": str(tmp_path / "cx")})
    assert target.locations("user", home)[0] == tmp_path / "cx" / "config.toml"  # type: ignore[attr-defined]
    plain = Places(tmp_path / "h", tmp_path / "p", "linux", {})
    assert target.locations("user", plain)[0] == tmp_path / "h" / ".codex" / "config.toml"  # type: ignore[attr-defined]
    assert target.locations("project", plain) == [tmp_path / "p" / ".codex" / "config.toml"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "entry",
    [
        ServerEntry(url=U, headers={"A": "${A_KEY}", "B": "b"},
                    auth=AuthConfig("bearer", token="${TOK}")),
        ServerEntry(url=U, headers={"B": "b"}, auth=AuthConfig("bearer", token="t-${TOK}")),
        ServerEntry(url=U, headers={"B": "b"}, auth=AuthConfig("oauth", scopes=("a",))),
        ServerEntry(url=U, headers={"B": "b"}, auth=AuthConfig("oauth")),
        ServerEntry(url=U, headers={"Authorization": "Bearer x"}, auth=AuthConfig("oauth")),
        ServerEntry(command="run", args=("a",), env={"K": "v"}, cwd="/w", timeout=1500,
                    inherit_env=("LANG",), tools=ToolFilter(deny=("y",))),
        ServerEntry(command="run", inherit_env=True, tools=ToolFilter()),
    ],
)  # fmt: skip
def test_what_codex_gives_back_is_what_import_reads(entry: ServerEntry) -> None:
    target = get_target("codex")
    back = parse("codex", render("codex", {"s": entry}, environ={}).text).entries["s"]
    assert target.expressible(entry) == back  # type: ignore[attr-defined]


def test_an_sse_server_is_not_expressible() -> None:
    sse = ServerEntry(url="https://x.example/sse", transport="sse")
    assert get_target("codex").expressible(sse) is None  # type: ignore[attr-defined]


def test_each_field_that_keeps_a_placeholder_is_named() -> None:
    local = ServerEntry(command="${CMD}", args=("${A}",), env={"K": "${K}"}, cwd="${W}")
    remote = ServerEntry(url="https://${HOST}/mcp", headers={"X": "t-${T}"})
    basic = ServerEntry(url=U, auth=AuthConfig("basic", username="u", password="${PW}"))
    rendered = render("codex", {"l": local, "r": remote, "b": basic}, environ={})
    kept = "keeps its ${VAR} placeholders as written: Codex does not expand them here ("
    launcher = "--secrets launcher runs it through mcpctl run; "
    assert rendered.warnings == [
        *(f"l: {f} {kept}{launcher}--secrets inline writes the values)"
          for f in ("command", "args", "env.K", "cwd")),
        f"r: url {kept}--secrets inline writes the values)",
        f"r: headers.X {kept}--secrets inline writes the values)",
        "b: auth is not written: a Basic header needs the resolved credentials "
        "(--inline-secrets); Codex cannot build one",
    ]  # fmt: skip
    assert not rendered.text.endswith("\n\n")
    assert render("codex", {}, environ={}).text == "[mcp_servers]\n"


def test_a_disabled_server_stays_disabled_as_codex_holds_it() -> None:
    entry = ServerEntry(command="run", enabled=False)
    assert get_target("codex").expressible(entry).enabled is False  # type: ignore[attr-defined]


def test_a_listed_environment_is_written_without_a_warning() -> None:
    rendered = render("codex", {"l": ServerEntry(command="run", inherit_env=("LANG",),
                                                 timeout=3000)}, environ={})  # fmt: skip
    assert rendered.warnings == []
    assert tomllib.loads(rendered.text)["mcp_servers"]["l"]["env_vars"] == ["LANG", *TRUST_ENV]
    assert "startup_timeout_sec = 3\n" in rendered.text, "whole seconds, not 3.0"
