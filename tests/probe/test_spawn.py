"""The environment a stdio server gets: a short allowlist of mcpctl's, plus what its entry says."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.probe import probe
from mcpctl.probe.spawn import DEFAULT_INHERITED_ENV, child_env
from tests.conftest import SERVERS

PY = sys.executable
CANARY = "canary-secret-6f0c1d"  # in mcpctl's environment, named by no entry


def environ_server(out: Path, **fields: Any) -> ServerEntry:
    """misbehave.py environ: writes the environment it got to ``out``, then serves."""
    return ServerEntry(
        command=PY, args=(str(SERVERS / "misbehave.py"), "environ", str(out)), timeout=30000,
        **fields,
    )  # fmt: skip


def seen_by_server(entry: ServerEntry, out: Path) -> dict[str, str]:
    r = anyio.run(lambda: probe("env", entry))
    assert r.healthy, (r.error, r.stderr)
    seen: dict[str, str] = json.loads(out.read_text())
    return seen


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPCTL_TEST_CANARY", CANARY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CANARY)
    monkeypatch.setenv("HOME", "/home/someone")


def test_a_server_sees_the_allowlist_and_its_env_never_our_secrets(
    canary: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOR_ENTRY", "resolved-value")
    out = tmp_path / "env.json"
    seen = seen_by_server(environ_server(out, env={"API_URL": "${FOR_ENTRY}"}), out)
    assert CANARY not in json.dumps(seen)
    assert "MCPCTL_TEST_CANARY" not in seen and "AWS_SECRET_ACCESS_KEY" not in seen
    assert seen["API_URL"] == "resolved-value"
    assert seen["HOME"] == "/home/someone"
    assert "PATH" in seen
    # Python adds a few of its own on start-up (LC_CTYPE under the C locale): nothing of ours.
    ours = set(seen) - {"LC_CTYPE"}
    assert ours <= {*DEFAULT_INHERITED_ENV, "API_URL"}, ours


def test_inherit_env_names_let_those_through(
    canary: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    out = tmp_path / "env.json"
    seen = seen_by_server(environ_server(out, inherit_env=("HTTPS_PROXY", "NOT_SET_X")), out)
    assert seen["HTTPS_PROXY"] == "http://proxy.example:3128"
    assert "NOT_SET_X" not in seen
    assert CANARY not in json.dumps(seen)


def test_inherit_env_true_passes_everything(canary: None, tmp_path: Path) -> None:
    out = tmp_path / "env.json"
    seen = seen_by_server(environ_server(out, inherit_env=True, env={"HOME": "/elsewhere"}), out)
    assert seen["MCPCTL_TEST_CANARY"] == CANARY
    assert seen["HOME"] == "/elsewhere"  # the entry's env wins over ours


def test_child_env_rules() -> None:
    ours = {
        "PATH": "/usr/bin", "HOME": "/h", "TERM": "xterm", "GITHUB_TOKEN": "ghp_x",
        "SHELL": "() { :; }; echo pwned", "EDITOR": "vi",
    }  # fmt: skip
    plain = ServerEntry(command="x", env={"A": "1"})
    assert child_env(plain, ours) == {"PATH": "/usr/bin", "HOME": "/h", "TERM": "xterm", "A": "1"}
    named = ServerEntry(command="x", inherit_env=("GITHUB_TOKEN", "MISSING"), env={"HOME": "/e"})
    assert child_env(named, ours) == {
        "PATH": "/usr/bin", "HOME": "/e", "TERM": "xterm", "GITHUB_TOKEN": "ghp_x",
    }  # fmt: skip
    assert child_env(ServerEntry(command="x", inherit_env=True), ours) == ours
    assert child_env(ServerEntry(command="x", inherit_env=()), ours) == child_env(
        ServerEntry(command="x"), ours
    )


TRUST = {
    "SSL_CERT_FILE": "/etc/ssl/corporate-ca.pem", "SSL_CERT_DIR": "/etc/ssl/corporate",
    "REQUESTS_CA_BUNDLE": "/etc/ssl/corporate-ca.pem", "NODE_EXTRA_CA_CERTS": "/etc/ssl/x.pem",
    "HTTPS_PROXY": "http://proxy.corp.example:3128", "HTTP_PROXY": "http://proxy:3128",
    "NO_PROXY": "localhost,.corp", "https_proxy": "http://proxy:3128", "no_proxy": "localhost",
}  # fmt: skip


def test_trust_and_proxy_settings_reach_every_server(
    canary: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A machine that trusts its CA through SSL_CERT_FILE: uvx needs it, as by hand.
    for name, value in TRUST.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "env.json"
    seen = seen_by_server(environ_server(out), out)
    assert {k: seen.get(k) for k in TRUST} == TRUST
    assert CANARY not in json.dumps(seen) and "AWS_SECRET_ACCESS_KEY" not in seen


def test_a_server_that_needs_the_ca_bundle_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/corporate-ca.pem")
    needs = ServerEntry(command=PY, args=(str(SERVERS / "misbehave.py"), "needs", "SSL_CERT_FILE",
                                          "error: invalid peer certificate: UnknownIssuer"))  # fmt: skip
    r = anyio.run(lambda: probe("uvx-like", needs))
    assert r.healthy, (r.error, r.stderr)


def test_a_password_in_a_proxy_url_is_redacted(
    cli: Any, config_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import write_config

    password = "Pr0xyPassw0rd-7f3a"
    monkeypatch.setenv("HTTPS_PROXY", f"http://alice:{password}@proxy.corp.example:3128")
    write_config(config_path, {"p": {"command": PY, "args": [
        str(SERVERS / "misbehave.py"), "proxy-password"]}})  # fmt: skip
    for args in (["health", "p"], ["health", "p", "--json"], ["doctor", "p"]):
        r = cli(*args)
        assert r.exit_code == 1, r.stdout + r.stderr
        assert "proxy refused" in r.stdout + r.stderr  # the server's own words are shown...
        assert password not in r.stdout + r.stderr  # ...without the password it was given
