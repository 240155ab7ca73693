"""The stored form of a sign-in: what a token and a lifetime must be, how a record read back
is made safe, what it says of itself, and what auth status shows of it."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcpctl.auth.records import (
    MAX_LIFETIME,
    MAX_SKEW,
    MAX_TOKEN,
    OAuthRecord,
    canonical_url,
    delete_record,
    load_record,
    record_key,
    sane_lifetime,
    save_record,
    token_problem,
    token_status,
)
from mcpctl.auth.secrets import SecretStore
from tests.conftest import MemoryKeyring

URL = "https://docs.example.com/mcp"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("abc", None),
        ("!~", None),
        ("x" * MAX_TOKEN, None),
        (None, "is not a string"),
        (12, "is not a string"),
        ("", "is empty"),
        ("x" * (MAX_TOKEN + 1), f"is longer than 16 KiB ({MAX_TOKEN + 1} characters)"),
        ("a b", "holds a character other than visible ASCII (\\x20)"),
        ("a\x7f", "holds a character other than visible ASCII (\\x7f)"),
        ("a\x00", "holds a character other than visible ASCII (\\x00)"),
        ("caf\u00e9", "holds a character other than visible ASCII (\\xe9)"),
        ("a\u20acb", "holds a character other than visible ASCII (\\u20ac)"),
        ("a\u00ffb", "holds a character other than visible ASCII (\\xff)"),
        ("a\u0100b", "holds a character other than visible ASCII (\\u0100)"),
    ],
)
def test_token_problem(value: object, problem: str | None) -> None:
    assert token_problem(value) == problem


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (3600, 3600.0),
        (0.5, 0.5),
        (" 60 ", 60.0),
        ("1e3", 1000.0),
        (MAX_LIFETIME, MAX_LIFETIME),
        (MAX_LIFETIME + 1, None),
        (0, None),
        (-5, None),
        ("soon", None),
        (True, None),
        (None, None),
        ([60], None),
        (float("inf"), None),
        (float("nan"), None),
        (10**400, None),
    ],
)
def test_sane_lifetime(value: object, seconds: float | None) -> None:
    assert sane_lifetime(value) == seconds


def test_a_stored_expiry_that_is_no_plausible_time_is_unknown() -> None:
    now = time.time()
    for bad in (True, "tomorrow", 0, -1, float("inf"), float("nan"), 10**400,
                now + 2 * MAX_LIFETIME + 3600):  # fmt: skip
        record = OAuthRecord.from_data({"server_url": URL, "expires_at": bad})
        assert record is not None and record.expires_at is None, bad
    for good in (1.0, now, now + 2 * MAX_LIFETIME - 3600):
        record = OAuthRecord.from_data({"server_url": URL, "expires_at": good})
        assert record is not None and record.expires_at == good


def test_record_key_and_canonical_url() -> None:
    assert record_key("docs") == "oauth:docs"
    assert canonical_url(" HTTPS://Docs.Example.COM/MCP/?a=B#frag ") == (
        "https://docs.example.com/MCP?a=B"
    )
    assert canonical_url("https://docs.example.com/") == "https://docs.example.com"
    assert canonical_url("https://docs.example.com/mcpX/") == "https://docs.example.com/mcpX"


def test_what_is_not_a_record() -> None:
    assert OAuthRecord.from_data({}) is None
    assert OAuthRecord.from_data({"server_url": 42}) is None
    record = OAuthRecord.from_data({"server_url": URL, "future_field": 1, "grant": 7,
                                    "token_type": None, "scope": 3, "client": [1],
                                    "auth_server": "x", "resource": 2.0,
                                    "client_source": {}, "client_metadata_url": 1,
                                    "lifetime": -1})  # fmt: skip
    assert record is not None
    assert (record.grant, record.token_type) == ("authorization_code", "Bearer")
    assert record.scope is record.client is record.auth_server is record.resource is None
    assert record.client_source is record.client_metadata_url is record.lifetime is None
    assert record.sign_in_needed is None  # no token was dropped


def test_an_unusable_token_read_back_is_dropped_and_a_sign_in_needed() -> None:
    record = OAuthRecord.from_data({"server_url": URL, "access_token": "",
                                    "refresh_token": "a b"})  # fmt: skip
    assert record is not None
    assert record.access_token is None and record.refresh_token is None
    assert record.sign_in_needed == "the stored access_token is empty"
    assert not record.has_tokens
    # One left: it is used.
    record = OAuthRecord.from_data({"server_url": URL, "access_token": 5,
                                    "refresh_token": "RT-ok"})  # fmt: skip
    assert record is not None and record.sign_in_needed is None and record.has_tokens
    # A reason already stored is kept.
    record = OAuthRecord.from_data({"server_url": URL, "access_token": "",
                                    "sign_in_needed": "refused"})  # fmt: skip
    assert record is not None and record.sign_in_needed == "refused"


def test_the_stored_json_leaves_out_what_is_empty() -> None:
    record = OAuthRecord(URL, access_token="AT", expires_at=5.0)
    assert record.to_data() == {"server_url": URL, "grant": "authorization_code",
                                "access_token": "AT", "token_type": "Bearer",
                                "expires_at": 5.0, "version": 1}  # fmt: skip
    assert OAuthRecord.from_data(record.to_data()) == record


def test_bound_to() -> None:
    record = OAuthRecord("https://Docs.example.com/mcp/")
    assert record.bound_to("https://docs.example.com/mcp")
    assert not record.bound_to("https://docs.example.com/v2/mcp")
    assert not record.bound_to(None)


def test_has_tokens_and_refreshable() -> None:
    assert OAuthRecord(URL, access_token="AT").has_tokens
    assert OAuthRecord(URL, refresh_token="RT").has_tokens
    assert not OAuthRecord(URL).has_tokens
    assert not OAuthRecord(URL, access_token="AT", sign_in_needed="x").has_tokens
    assert OAuthRecord(URL, refresh_token="RT").refreshable
    assert OAuthRecord(URL, grant="client_credentials").refreshable
    assert not OAuthRecord(URL, access_token="AT").refreshable
    assert not OAuthRecord(URL, refresh_token="RT", sign_in_needed="x").refreshable


def test_the_expiry_margin_is_thirty_seconds_or_a_tenth_of_the_life() -> None:
    assert OAuthRecord(URL).valid_until() is None
    assert OAuthRecord(URL, expires_at=1000.0).valid_until() == 1000.0 - MAX_SKEW
    assert OAuthRecord(URL, expires_at=1000.0, lifetime=100.0).valid_until() == 990.0
    assert OAuthRecord(URL, expires_at=1000.0, lifetime=3600.0).valid_until() == 970.0
    assert OAuthRecord(URL, expires_at=1000.0, lifetime=300.0).valid_until() == 970.0


def test_expired() -> None:
    assert OAuthRecord(URL).expired()  # no access token
    assert not OAuthRecord(URL, access_token="AT").expired()  # no known expiry
    record = OAuthRecord(URL, access_token="AT", expires_at=1000.0, lifetime=100.0)
    assert not record.expired(989.9)
    assert record.expired(990.0)
    assert OAuthRecord(URL, access_token="AT", expires_at=time.time() - 60).expired()
    assert not OAuthRecord(URL, access_token="AT", expires_at=time.time() + 600).expired()


def test_issuer_endpoints_and_secrets() -> None:
    record = OAuthRecord(URL, access_token="AT", refresh_token="RT",
                         client={"client_id": "c", "client_secret": "CS"},
                         auth_server={"issuer": "https://login.example.com",
                                      "revocation_endpoint": "https://login.example.com/r",
                                      "token_endpoint": ""})  # fmt: skip
    assert record.issuer == "https://login.example.com"
    assert record.endpoint("revocation_endpoint") == "https://login.example.com/r"
    assert record.endpoint("token_endpoint") is None
    assert record.secrets() == ["AT", "RT", "CS"]
    bare = OAuthRecord(URL, client={"client_secret": ""})
    assert bare.issuer is None and bare.endpoint("token_endpoint") is None
    assert bare.secrets() == []


def test_save_load_delete_in_the_store_given(memory_keyring: MemoryKeyring) -> None:
    store = SecretStore(MemoryKeyring())
    record = OAuthRecord(URL, access_token="AT-records-canary")
    save_record("docs", record, store)
    assert record.updated_at is not None
    assert load_record("docs") is None  # not in the default keyring
    assert load_record("docs", store) == record
    assert delete_record("docs", store) is True
    assert delete_record("docs", store) is False
    assert load_record("docs", store) is None


def status(record: OAuthRecord | None, url: str | None = URL, now: float | None = None) -> Any:
    return token_status("docs", url, record, now)


def test_the_status_of_no_sign_in() -> None:
    assert status(None) == {
        "server": "docs", "signed_in": False, "stale": False, "grant": None,
        "expires_at": None, "expired": None, "refreshable": False, "scopes": [],
        "authorization_server": None, "client": None, "problem": None,
    }  # fmt: skip


def test_the_status_of_a_sign_in() -> None:
    expires = time.time() + 600
    record = OAuthRecord(URL, access_token="AT", refresh_token="RT", scope="read write",
                         expires_at=expires, client_source="registered",
                         auth_server={"issuer": "https://login.example.com"})  # fmt: skip
    shown = status(record)
    assert shown == {
        "server": "docs", "signed_in": True, "stale": False, "grant": "authorization_code",
        "expires_at": shown["expires_at"], "expired": False, "refreshable": True,
        "scopes": ["read", "write"], "authorization_server": "https://login.example.com",
        "client": "registered", "problem": None,
    }  # fmt: skip
    assert shown["expires_at"].startswith(time.strftime("%Y-%m-%dT", time.localtime(expires)))
    later = status(record, now=expires + 60)
    assert later["expired"] is True and later["problem"] is None  # it renews
    assert status(OAuthRecord(URL, refresh_token="RT"))["expired"] is None
    assert status(OAuthRecord(URL, access_token="AT"))["scopes"] == []


def test_the_problems_a_status_names() -> None:
    record = OAuthRecord(URL, access_token="AT", refresh_token="RT")
    stale = status(record, "https://other.example.com/mcp")
    assert (stale["stale"], stale["signed_in"], stale["refreshable"], stale["problem"]) == (
        True, False, False, "signed in for another URL",
    )  # fmt: skip
    assert status(record, None)["stale"] is True
    needed = OAuthRecord(URL, access_token="AT", sign_in_needed="the refresh was refused")
    assert status(needed)["problem"] == "the refresh was refused"
    gone = OAuthRecord(URL, access_token="AT", expires_at=time.time() - 60)
    assert status(gone)["problem"] == "expired"
    assert status(OAuthRecord(URL, access_token="AT", expires_at=1e300))["expires_at"] is None
