"""The OAuth sign-ins, as auth status computes them, from records in an in-memory keyring."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from mcpctl.auth.records import OAuthRecord, save_record
from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.doctor.oauth import check_oauth
from mcpctl.doctor.secrets import KeyringState, probe_keyring
from tests.conftest import MemoryKeyring

URL = "https://docs.example.com/mcp"
ACCESS = "AT-doctor-canary-0001"
REFRESH = "RT-doctor-canary-0001"


def oauth_entry(url: str = URL, **more: Any) -> ServerEntry:
    return ServerEntry(url=url, auth=AuthConfig(type="oauth"), **more)


def record(**changes: Any) -> OAuthRecord:
    data: dict[str, Any] = {
        "server_url": URL, "access_token": ACCESS, "refresh_token": REFRESH,
        "expires_at": time.time() + 3600, "lifetime": 3600.0,
        "auth_server": {"issuer": "https://login.example.com"},
    }  # fmt: skip
    data.update(changes)
    return OAuthRecord(**data)


def check(entries: dict[str, ServerEntry]) -> list[Any]:
    return check_oauth(entries, probe_keyring())


def test_no_oauth_server(memory_keyring: MemoryKeyring) -> None:
    entries = {"web": ServerEntry(url=URL), "off": oauth_entry(enabled=False)}
    assert [(f.code, f.severity) for f in check(entries)] == [("oauth_none", "ok")]


def test_not_signed_in_is_broken(memory_keyring: MemoryKeyring) -> None:
    [finding] = check({"docs": oauth_entry()})
    assert (finding.code, finding.severity) == ("oauth_signed_out", "error")
    assert finding.fix == "sign in with 'mcpctl auth docs'" and finding.servers == ("docs",)


def test_signed_in(memory_keyring: MemoryKeyring) -> None:
    save_record("docs", record())
    [finding] = check({"docs": oauth_entry()})
    assert (finding.code, finding.severity) == ("oauth_signed_in", "ok")
    assert finding.details["signed_in"] is True and "expires" in finding.message


def test_an_expired_token_that_renews_is_fine(memory_keyring: MemoryKeyring) -> None:
    save_record("docs", record(expires_at=time.time() - 60))
    [finding] = check({"docs": oauth_entry()})
    assert (finding.code, finding.severity) == ("oauth_signed_in", "ok")
    assert "renewed on use" in finding.message and finding.details["expired"] is True


def test_an_expired_token_that_cannot_renew_is_broken(memory_keyring: MemoryKeyring) -> None:
    save_record("docs", record(expires_at=time.time() - 60, refresh_token=None))
    [finding] = check({"docs": oauth_entry()})
    assert (finding.code, finding.severity) == ("oauth_expired", "error")
    assert finding.fix == "sign in with 'mcpctl auth docs'"


def test_tokens_for_another_url_are_stale(memory_keyring: MemoryKeyring) -> None:
    save_record("docs", record())
    [finding] = check({"docs": oauth_entry("https://docs.example.com/v2/mcp")})
    assert (finding.code, finding.severity) == ("oauth_stale", "error")


def test_a_refused_refresh_needs_a_new_sign_in(memory_keyring: MemoryKeyring) -> None:
    save_record("docs", record(sign_in_needed="the refresh token was refused"))
    [finding] = check({"docs": oauth_entry()})
    assert (finding.code, finding.severity) == ("oauth_sign_in_needed", "error")
    assert "the refresh token was refused" in finding.message


def test_the_url_is_resolved_before_comparing(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCS_HOST", "docs.example.com")
    save_record("docs", record())
    [finding] = check({"docs": oauth_entry("https://${DOCS_HOST}/mcp")})
    assert finding.code == "oauth_signed_in"


def test_without_a_keyring_the_sign_ins_are_unchecked() -> None:
    state = KeyringState(None, None, "no usable keyring", "run a Secret Service")
    [finding] = check_oauth({"docs": oauth_entry()}, state)
    assert (finding.code, finding.severity, finding.fix) == (
        "oauth_unchecked", "warning", "run a Secret Service",
    )  # fmt: skip


def test_no_token_in_any_finding(memory_keyring: MemoryKeyring) -> None:
    save_record("a", record())
    save_record("b", record(expires_at=time.time() - 60, refresh_token=None))
    findings = check({"a": oauth_entry(), "b": oauth_entry()})
    text = json.dumps([f.to_dict() for f in findings])
    assert ACCESS not in text and REFRESH not in text
