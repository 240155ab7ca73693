"""The OAuth sign-ins, as auth status computes them, from records in an in-memory keyring."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from mcpctl.auth.records import OAuthRecord, save_record
from mcpctl.auth.secrets import SecretStore
from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.doctor.oauth import check_oauth, oauth_servers
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


# --- what mutation testing found unpinned ----------------------------------------------------


def test_only_enabled_remote_servers_signing_in_with_oauth_are_checked(
    memory_keyring: MemoryKeyring,
) -> None:
    entries = {
        "bearer": ServerEntry(url=URL, auth=AuthConfig(type="bearer", token="${DOCS_TOKEN}")),
        "local": ServerEntry(command="npx", args=("server",)),
        "docs": oauth_entry(),
    }
    assert oauth_servers(entries) == ["docs"]
    [finding] = check(entries)
    assert finding.servers == ("docs",) and finding.subject == "docs"


def test_each_finding_in_words(memory_keyring: MemoryKeyring) -> None:
    expires = time.time() + 3600
    save_record("ok", record(expires_at=expires))
    save_record("forever", record(expires_at=None, lifetime=None))
    save_record("renews", record(expires_at=time.time() - 60))
    save_record("expired", record(expires_at=time.time() - 60, refresh_token=None))
    save_record("refused", record(sign_in_needed="the refresh token was refused"))
    save_record("moved", record(server_url="https://old.example.com/mcp"))
    names = ["ok", "forever", "renews", "expired", "refused", "moved", "never"]
    found = {f.subject: f for f in check({name: oauth_entry() for name in names})}
    stamp = found["ok"].details["expires_at"]
    assert isinstance(stamp, str) and stamp.startswith(
        time.strftime("%Y-", time.localtime(expires))
    )
    assert found["ok"].message == f"ok: signed in (expires {stamp})"
    assert found["forever"].message == "forever: signed in"
    assert found["renews"].message.startswith("renews: signed in (the access token expired ")
    assert found["renews"].message.endswith("; it is renewed on use)")
    assert found["expired"].message == "expired: the sign-in expired and cannot be renewed"
    assert found["refused"].message == (
        "refused: signing in again is needed (the refresh token was refused)"
    )
    assert found["moved"].message == "moved: signed in for another URL (the entry's url changed)"
    assert found["never"].message == "never: not signed in"
    for name, finding in found.items():
        assert finding.section == "oauth" and finding.servers == (name,)
        assert finding.fix == (
            None if finding.severity == "ok" else f"sign in with 'mcpctl auth {name}'"
        )
        assert set(finding.details) == {"signed_in", "expires_at", "expired", "refreshable"}
    assert dict(found["ok"].details) == {
        "signed_in": True, "expires_at": stamp, "expired": False, "refreshable": True,
    }  # fmt: skip
    assert dict(found["never"].details) == {
        "signed_in": False, "expires_at": None, "expired": None, "refreshable": False,
    }  # fmt: skip


def test_the_time_given_decides_what_expired(memory_keyring: MemoryKeyring) -> None:
    save_record("docs", record(expires_at=time.time() + 600, refresh_token=None))
    [now] = check_oauth({"docs": oauth_entry()}, probe_keyring())
    [later] = check_oauth({"docs": oauth_entry()}, probe_keyring(), time.time() + 3600)
    assert now.code == "oauth_signed_in"
    assert later.code == "oauth_expired"


def test_without_a_keyring_or_its_hint(memory_keyring: MemoryKeyring) -> None:
    state = KeyringState(None, None, "no usable keyring", None)
    [a, b] = check_oauth({"a": oauth_entry(), "b": oauth_entry()}, state)
    assert (a.code, a.severity, a.subject, a.servers) == ("oauth_unchecked", "warning", "a", ("a",))
    assert a.message == "a: its sign-in cannot be read (no usable keyring)"
    assert a.fix == "make a keyring usable, then 'mcpctl auth status'"
    assert b.subject == "b"


class LockedKeyring(MemoryKeyring):
    """Answers the probe, then fails on every sign-in record."""

    def get_password(self, service: str, username: str) -> str | None:
        if username.startswith("oauth:"):
            from keyring.errors import KeyringError

            raise KeyringError("the collection is locked")
        return super().get_password(service, username)


def test_a_keyring_that_fails_after_the_probe_leaves_the_rest_unchecked() -> None:
    state = probe_keyring(SecretStore(LockedKeyring()))
    assert state.usable
    [a, b] = check_oauth({"a": oauth_entry(), "b": oauth_entry()}, state)
    assert (a.code, a.severity, a.subject, a.servers) == ("oauth_unchecked", "warning", "a", ("a",))
    assert a.message.startswith("a: its sign-in cannot be read (")
    assert "the collection is locked" in a.message and a.fix == state.hint
    assert not state.usable  # the keyring is not used again
    assert (b.code, b.message) == (
        "oauth_unchecked",
        "b: its sign-in cannot be read (no usable keyring)",
    )


def test_no_oauth_server_in_words(memory_keyring: MemoryKeyring) -> None:
    [finding] = check({"web": ServerEntry(url=URL)})
    assert finding.message == "no enabled server signs in with OAuth"


def test_the_keyring_given_is_the_one_read(
    no_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both the record and the URL's placeholders come from the keyring given."""
    monkeypatch.delenv("DOCS_HOST", raising=False)
    store = SecretStore(MemoryKeyring())
    store.set("DOCS_HOST", "docs.example.com")
    save_record("docs", record(), store)
    state = probe_keyring(store)
    [finding] = check_oauth({"docs": oauth_entry("https://${DOCS_HOST}/mcp")}, state)
    assert finding.code == "oauth_signed_in", finding


def test_a_url_with_a_variable_set_nowhere_is_compared_as_it_resolves(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCS_HOST", raising=False)
    [finding] = check({"docs": oauth_entry("https://${DOCS_HOST}/mcp")})
    assert finding.code == "oauth_signed_out"  # not "cannot be read"
    save_record("docs", record())
    [finding] = check({"docs": oauth_entry("https://${DOCS_HOST}/mcp")})
    assert finding.code == "oauth_stale"
