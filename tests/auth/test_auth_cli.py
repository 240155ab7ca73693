"""mcpctl auth, auth status and auth logout in-process: usage, output, what they import.

The whole flow against a real server is in test_signin_flow.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpctl.auth.oauthtokens import OAuthRecord, save_record
from mcpctl.auth.secrets import SecretStore
from mcpctl.auth.signin import Answer, has_display, parse_answer
from tests.conftest import Cli, MemoryKeyring, write_config

URL = "http://127.0.0.1:9/mcp"
ACCESS = "AT-cli-test-access-7d1c"
REFRESH = "RT-cli-test-refresh-9e2b"


@pytest.fixture
def servers(config_path: Path) -> Path:
    return write_config(config_path, {
        "docs": {"url": URL, "auth": {"type": "oauth", "scopes": ["mcp:read"]}},
        "plain": {"url": "http://127.0.0.1:9/other", "headers": {"X-Team": "a"}},
        "local": {"command": "true"},
    })  # fmt: skip


def plant(name: str = "docs", url: str = URL, **changes: object) -> None:
    record = OAuthRecord(
        server_url=url, access_token=ACCESS, refresh_token=REFRESH, scope="mcp:read",
        expires_at=time.time() + 600, lifetime=600.0, client={"client_id": "c1"},
        client_source="registered", auth_server={"issuer": "http://127.0.0.1:9",
                                                 "token_endpoint": "http://127.0.0.1:9/token"},
    )  # fmt: skip
    for key, value in changes.items():
        setattr(record, key, value)
    save_record(name, record, SecretStore())


def test_sign_in_needs_a_remote_oauth_entry(
    cli: Cli, servers: Path, memory_keyring: MemoryKeyring
) -> None:
    r = cli("auth", "nosuch")
    assert r.exit_code == 2 and "no server 'nosuch'" in r.stderr
    r = cli("auth", "local")
    assert r.exit_code == 2 and "stdio server" in r.stderr
    r = cli("auth", "plain", "--json")
    assert r.exit_code == 2
    error = r.json["errors"][0]
    assert error["code"] == "usage_error" and '"type": "oauth"' in error["hint"]
    assert r.json["command"] == "auth"
    r = cli("auth", "docs", "--timeout", "0")
    assert r.exit_code == 2 and "--timeout" in r.stderr
    r = cli("auth", "docs", "--grant", "client_credentials")
    assert r.exit_code == 2 and "client_id and client_secret" in r.stderr
    r = cli("auth", "docs", "--client-metadata-url", "http://client.example/doc.json")
    assert r.exit_code == 2 and "HTTPS" in r.stderr
    assert memory_keyring.items == {}


def test_help_lists_the_commands(cli: Cli) -> None:
    r = cli("auth", "--help")
    assert r.exit_code == 0
    assert "status" in r.stdout and "logout" in r.stdout and "mcpctl auth github" in r.stdout
    assert "login" not in r.stdout.split("Commands")[-1]  # NAME is the way in
    for sub in ("status", "logout", "login"):
        assert cli("auth", sub, "--help").exit_code == 0


def test_status_never_shows_a_token(cli: Cli, servers: Path, memory_keyring: MemoryKeyring) -> None:
    r = cli("auth", "status", "--json")
    assert r.exit_code == 1  # docs is not signed in
    assert [s["server"] for s in r.json["data"]["servers"]] == ["docs", "plain"]
    assert "docs: not signed in; run 'mcpctl auth docs'" in r.json["warnings"]
    plant()
    for args in (("auth", "status", "--json"), ("auth", "status"), ("auth", "status", "-v")):
        r = cli(*args)
        assert r.exit_code == 0, r.stdout + r.stderr
        assert ACCESS not in r.stdout + r.stderr and REFRESH not in r.stdout + r.stderr
    row = cli("auth", "status", "docs", "--json").json["data"]["servers"][0]
    assert row["signed_in"] and row["refreshable"] and row["scopes"] == ["mcp:read"]
    assert row["authorization_server"] == "http://127.0.0.1:9" and row["auth"] == "oauth"
    assert set(row) >= {"expires_at", "expired", "stale", "grant", "client", "problem"}
    plant(expires_at=time.time() - 10)
    human = cli("auth", "status", "docs")
    assert human.exit_code == 0 and "expired; renewed on use" in human.stdout
    plant(url="http://127.0.0.1:9/old")
    stale = cli("auth", "status", "docs")
    assert stale.exit_code == 1 and "stale (url changed)" in stale.stdout
    assert cli("auth", "status", "nosuch").exit_code == 2


def test_status_with_no_remote_server(
    cli: Cli, config_path: Path, memory_keyring: MemoryKeyring
) -> None:
    write_config(config_path, {"local": {"command": "true"}})
    r = cli("auth", "status", "--json")
    assert r.exit_code == 0 and r.json["data"] == {"servers": []}


def test_logout_deletes_even_without_revocation(
    cli: Cli, servers: Path, memory_keyring: MemoryKeyring
) -> None:
    plant()  # its authorization server offers no revocation endpoint
    r = cli("auth", "logout", "docs", "--json")
    assert r.exit_code == 0, r.stdout
    assert r.json["data"] == {"server": "docs", "deleted": True, "revoked": None}
    assert "offers no revocation" in r.json["warnings"][0]
    assert memory_keyring.items == {}
    r = cli("auth", "logout", "docs")
    assert r.exit_code == 0 and "docs had no stored sign-in" in r.stderr
    assert cli("auth", "logout", "nosuch").exit_code == 2
    plant("gone")  # a server no longer in the config can still be signed out of
    assert cli("auth", "logout", "gone").exit_code == 0 and memory_keyring.items == {}


def test_parse_answer() -> None:
    full = "http://127.0.0.1:5000/callback?code=abc&state=xyz&iss=https%3A%2F%2Fas"
    assert parse_answer(full) == Answer(code="abc", state="xyz", iss="https://as")
    assert parse_answer("?code=abc&state=xyz") == Answer(code="abc", state="xyz")
    assert parse_answer("  code=abc  \n") == Answer(code="abc")
    denied = parse_answer("http://x/callback?error=access_denied&error_description=no&state=s")
    assert denied == Answer(state="s", error="access_denied", error_description="no")
    assert parse_answer("http://x/callback?state=s") is None
    assert parse_answer("hello") is None


def test_a_display_is_needed_for_a_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert not has_display()
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert has_display()


PROBE = """
import json, sys
from mcpctl.cli.app import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps(sorted(m for m in sys.modules)), file=sys.stderr)
"""


def test_status_imports_neither_the_sdk_nor_http(tmp_path: Path) -> None:
    from tests.auth.filekeyring import BACKEND, FILE_VAR
    from tests.conftest import ROOT

    cfg = write_config(tmp_path / "external-mcps.json",
                       {"docs": {"url": URL, "auth": {"type": "oauth"}}})  # fmt: skip
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h"), "PYTHONPATH": str(ROOT),
           "PYTHON_KEYRING_BACKEND": BACKEND, FILE_VAR: str(tmp_path / "k.json")}  # fmt: skip
    r = subprocess.run([sys.executable, "-c", PROBE, "--config", str(cfg), "auth", "status", "--json"],
                       capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)  # fmt: skip
    assert json.loads(r.stdout)["data"]["servers"][0]["signed_in"] is False, r.stderr
    tops = {m.split(".")[0] for m in json.loads(r.stderr.strip().splitlines()[-1])}
    assert not tops & {"mcp", "mcp_types", "httpx2", "anyio"}, sorted(tops & {"mcp", "httpx2"})
    assert "keyring" in tops


def test_no_keyring_no_sign_in(cli: Cli, servers: Path) -> None:
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        r = cli("auth", "docs", "--json")
    finally:
        keyring.set_keyring(previous)
    assert r.exit_code == 3 and r.json["errors"][0]["code"] == "keyring_unavailable"


def test_the_address_is_printed_whole_but_a_secret_of_the_url_is_hidden(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from mcpctl.cli.auth import _sayer
    from mcpctl.config.placeholders import forget_resolved, resolve_text

    forget_resolved()
    env = {"URL_KEY": "k3y-in-the-url", "CLIENT_ID": "public-client-7"}
    url = resolve_text("https://mcp.example.com/mcp?key=${URL_KEY}", environ=env)
    resolve_text("${CLIENT_ID}", environ=env)  # the client id came from a placeholder too
    say = _sayer(url)
    say("https://as.example.com/authorize?client_id=public-client-7&state=Zx9kQ2mP7vLr4TnB8wYc3hJd"
        "&resource=https%3A%2F%2Fmcp.example.com%2Fmcp%3Fkey%3Dk3y-in-the-url\x1b[2J")  # fmt: skip
    err = capsys.readouterr().err
    assert "client_id=public-client-7" in err and "state=Zx9kQ2mP7vLr4TnB8wYc3hJd" in err
    assert "k3y-in-the-url" not in err and "****" in err and "\x1b" not in err
    forget_resolved()
