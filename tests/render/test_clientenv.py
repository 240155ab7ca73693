"""The environment each client gives its stdio servers: the table, and the rules it encodes."""

from __future__ import annotations

from pathlib import Path

from mcpctl.probe.serverenv import SDK_INHERITED_ENV, TRUST_ENV
from mcpctl.render.clientenv import CLIENT_ENV, client_env, names_to_pass, own_names
from mcpctl.render.clientfile import as_client_targets

DOC = Path(__file__).parents[2] / "docs" / "render-clients.md"
ENVIRON = {
    "HOME": "/home/u", "PATH": "/usr/bin", "USER": "u", "SHELL": "/bin/sh",
    "SSL_CERT_FILE": "/etc/ssl/corp.pem", "NODE_EXTRA_CA_CERTS": "/etc/ssl/corp.pem",
    "HTTPS_PROXY": "http://alice:pw@proxy:3128", "NO_PROXY": "localhost",
    "GITHUB_TOKEN": "ghp_x", "AWS_PROFILE": "work", "OTEL_EXPORTER": "x",
    "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-x",
}  # fmt: skip


def test_every_client_is_in_the_table_with_where_it_comes_from() -> None:
    assert set(as_client_targets()) == set(CLIENT_ENV)
    for target, how in CLIENT_ENV.items():
        assert how.source, target
        assert how.known or how.whole, f"{target}: an unknown client is taken to pass it all"


def test_the_documentation_has_a_line_per_client() -> None:
    table = DOC.read_text().split("## The environment a server gets", 1)[1].split("\n## ", 1)[0]
    for target, how in CLIENT_ENV.items():
        line = next((x for x in table.splitlines() if x.startswith(f"| `{target}` |")), None)
        assert line is not None, target
        assert ("whole" in line) == how.whole, line
        assert ("unknown" in line) == (not how.known), line


def test_a_client_that_passes_a_few_variables() -> None:
    got = client_env("claude-desktop").environment(ENVIRON, (), {"OWN": "1"})
    assert set(got) == {n for n in SDK_INHERITED_ENV if n in ENVIRON} | {"OWN"}
    codex = client_env("codex").environment(ENVIRON, ("AWS_PROFILE", "NOT_SET"))
    assert codex["AWS_PROFILE"] == "work" and "SSL_CERT_FILE" not in codex
    assert "NOT_SET" not in codex and "GITHUB_TOKEN" not in codex


def test_a_client_that_passes_its_whole_environment_less_its_own() -> None:
    got = client_env("claude-code").environment(ENVIRON, (), {"AWS_PROFILE": "entry"})
    assert got["AWS_PROFILE"] == "entry" and got["GITHUB_TOKEN"] == "ghp_x"
    assert got["CLAUDECODE"] == "1"
    assert "OTEL_EXPORTER" not in got and "CLAUDE_CODE_OAUTH_TOKEN" not in got
    only = client_env("claude-code").environment({**ENVIRON, "CLAUDE_CODE_MCP_ALLOWLIST_ENV": "1"})
    assert "GITHUB_TOKEN" not in only and "SSL_CERT_FILE" not in only and "PATH" in only
    assert client_env("no-such-client").environment(ENVIRON) == ENVIRON


def test_gemini_leaves_out_what_it_takes_for_a_secret() -> None:
    got = client_env("gemini").environment(ENVIRON)
    for name in ("SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "GITHUB_TOKEN", "HTTPS_PROXY"):
        assert name not in got, name  # *CERT*, *TOKEN*, and a URL with a password
    assert {"PATH", "HOME", "NO_PROXY", "AWS_PROFILE"} <= set(got)


def test_the_names_a_listing_client_is_given_and_read_back() -> None:
    rest = [n for n in TRUST_ENV if n != "HTTPS_PROXY"]
    assert names_to_pass(("AWS_PROFILE", "HTTPS_PROXY")) == ["AWS_PROFILE", "HTTPS_PROXY", *rest]
    assert names_to_pass(True) == names_to_pass(False) == list(TRUST_ENV)
    assert own_names(tuple(names_to_pass(("AWS_PROFILE",)))) == ("AWS_PROFILE",)
