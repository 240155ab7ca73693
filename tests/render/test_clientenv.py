"""The environment each client gives its stdio servers: the table, and the rules it encodes."""

from __future__ import annotations

from pathlib import Path

from mcpctl.probe.serverenv import SDK_INHERITED_ENV, TRUST_ENV
from mcpctl.render.clientenv import CLIENT_ENV, client_env, listed_env, names_to_pass, own_names
from mcpctl.render.clientfile import as_client_targets
from mcpctl.render.targets import get_target

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


# --- what mutation testing found unpinned ---------------------------------------------


def test_claude_code_keeps_its_sign_in_and_telemetry_to_itself() -> None:
    own = ("CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_SUBSCRIPTION_TYPE",
           "CLAUDE_CODE_RATE_LIMIT_TIER", "CLAUDE_CODE_CHILD_SESSION",
           "CLAUDE_CODE_OTEL_DIAG_STDERR", "OTEL_SERVICE_NAME")  # fmt: skip
    environ = {**dict.fromkeys(own, "x"), "CLAUDE_CODE_OTHER": "y", "MY_OTEL_": "z"}
    got = client_env("claude-code").environment(environ)
    assert got == {"CLAUDE_CODE_OTHER": "y", "MY_OTEL_": "z", "CLAUDECODE": "1"}


def test_claude_codes_allowlist_setting_takes_a_true_word_in_any_case() -> None:
    how = client_env("claude-code")
    for word in ("1", "true", "TRUE", " Yes ", "on"):
        got = how.environment({**ENVIRON, "CLAUDE_CODE_MCP_ALLOWLIST_ENV": word})
        assert "GITHUB_TOKEN" not in got and got["PATH"] == "/usr/bin", word
    for word in ("0", "false", "no", "off", ""):
        got = how.environment({**ENVIRON, "CLAUDE_CODE_MCP_ALLOWLIST_ENV": word})
        assert got["GITHUB_TOKEN"] == "ghp_x", word


def test_a_client_that_passes_a_few_variables_skips_shell_functions() -> None:
    environ = {"PATH": "() { echo; }", "HOME": "/home/u", "LISTED": "() { :; }", "KEPT": "(x)"}
    got = client_env("codex").environment(environ, ("LISTED", "KEPT"))
    assert got == {"HOME": "/home/u", "KEPT": "(x)"}


def gemini_keeps(name: str, value: str = "plain") -> bool:
    return name in client_env("gemini").environment({name: value})


def test_gemini_judges_names_in_upper_case_with_its_exceptions() -> None:
    assert not gemini_keeps("github_token") and not gemini_keeps("Private_Thing")
    assert not gemini_keeps("DATABASE_URL") and not gemini_keeps("client_id")
    # Its own variables, git's configuration and the basics pass, whatever they are named.
    assert gemini_keeps("GEMINI_CLI_API_KEY") and gemini_keeps("gemini_cli_token")
    assert gemini_keeps("GIT_CONFIG_KEY_0") and gemini_keeps("git_config_value_0")
    assert gemini_keeps("path") and gemini_keeps("HOME") and gemini_keeps("AWS_PROFILE")


def test_gemini_drops_a_value_that_looks_like_a_secret_under_any_name_but_its_own() -> None:
    key = "AKIA" + "A" * 16
    assert not gemini_keeps("HOME", key) and not gemini_keeps("NOTE", "ghp_" + "a" * 36)
    assert not gemini_keeps("GIT_CONFIG_VALUE_0", "https://u:pw@host/")
    assert gemini_keeps("GEMINI_CLI_NOTE", key)
    # Only the first 20000 characters of a value are looked at.
    assert not gemini_keeps("NOTE", "x" * (20000 - len(key)) + key)
    assert gemini_keeps("NOTE", "x" * (20001 - len(key)) + key)


def test_what_a_client_passes_in_a_few_words() -> None:
    assert client_env("claude-code").summary == "its whole environment, less some variables"
    assert client_env("vscode").summary == "its whole environment"
    assert client_env("codex").summary.endswith(", TZ and the entry's env")
    assert client_env("cline").summary == ", ".join(SDK_INHERITED_ENV) + " and the entry's env"


def test_the_variables_a_codex_file_lists_for_each_server() -> None:
    codex = get_target("codex")
    text = (
        "[mcp_servers]\nnot-a-table = 1\n"
        '[mcp_servers.a]\ncommand = "run"\nenv_vars = ["LANG", { name = "TZ" }, 3, { x = 1 }]\n'
        '[mcp_servers.b]\ncommand = "run"\n'
        '[mcp_servers.c]\ncommand = "run"\nenv_vars = "LANG"\n'
    )
    assert listed_env(codex, text) == {"a": ("LANG", "TZ")}  # type: ignore[arg-type]
    assert listed_env(codex, "not = [toml") == {}  # type: ignore[arg-type]
    assert listed_env(get_target("cursor"), '{"mcpServers": {}}') is None  # type: ignore[arg-type]
