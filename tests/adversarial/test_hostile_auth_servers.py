"""A hostile side of ``mcpctl auth``: forged callbacks, token responses built to break what
stores them, and servers that trickle their answers -- against tests/servers/oauth_server.py
(its hostile modes), mcpctl as a real process over the file-backed test keyring.

* A callback without the ``state`` sent (or with another) is ignored -- counted, never
  believed, not even its error -- and the real answer still signs in; an error with the right
  ``state`` ends the sign-in, its text shown escaped.
* A token response is checked before it is stored: an expiry that is no sane lifetime is
  unknown (and the token is renewed when refused); a token that no header can carry, or a
  huge one, is a sign-in error naming the field; a record stored by an older version with
  such values reads without a crash.
* Every network step of ``auth`` and ``auth logout`` has one deadline for all of it: a server
  trickling one byte a second is given up on, whatever it sends.

Bounds are generous (a loaded machine is slow); a trickled answer would take over an hour.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx2
import pytest

from tests.auth.conftest import (
    Browser,
    Mcpctl,
    OAuthServer,
    Outcome,
    finish,
    oauth_entry,
    sign_in,
)
from tests.auth.filekeyring import edit_record
from tests.conftest import stop_process

pytestmark = pytest.mark.slow

HOSTILE = "evil\x1b]0;pwned\x07 \x1b[31mred \u202eesrever\u202c \x9b31m"
RAW = ("\x1b", "\x07", "\u202e", "\x9b")
TRICKLE_EVERY = "1"  # second per byte: a padded answer would take over an hour


def assert_no_raw_controls(*texts: str) -> None:
    for text in texts:
        for char in RAW:
            assert char not in text, (char, text)


def callback_of(address: str) -> str:
    """The loopback callback of the sign-in whose authorization address is ``address``."""
    return parse_qs(urlsplit(address).query)["redirect_uri"][0]


def with_query(answer: str, **changes: str | None) -> str:
    parts = urlsplit(answer)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    for key, value in changes.items():
        if value is None:
            query.pop(key, None)
        else:
            query[key] = value
    return urlunsplit(parts._replace(query=urlencode(query)))


# --- forged callbacks ---------------------------------------------------------------------


def test_callbacks_without_the_right_state_are_ignored(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    browser = Browser()
    proc = mcpctl.start("auth", "docs", "--no-browser", "--json")
    try:
        callback = callback_of(browser.read_address(proc))
        forged = [
            # No state at all: what anyone who can reach the port sends.
            {"error": "access_denied", "error_description": HOSTILE},
            # Another state: an old tab, a forged link.
            {"error": "access_denied", "error_description": HOSTILE, "state": "not-it"},
            {"code": "forged-code", "state": "not-it"},
        ]
        for query in forged:
            page = httpx2.get(f"{callback}?{urlencode(query)}", timeout=10)
            assert page.status_code == 200 and "does not belong" in page.text
        # Still waiting: the real answer below is taken (exit 0), which it could not be had a
        # forged one ended the sign-in.
        assert proc.poll() is None, "a forged callback ended the sign-in"
        browser.authorize()
        assert browser.deliver().status_code == 200
    except BaseException:
        stop_process(proc)
        raise
    out = finish(proc)
    err = browser.rest()
    outcome = mcpctl.keep(Outcome(("auth", "docs"), proc.returncode, out, err))
    assert outcome.code == 0, err
    envelope = json.loads(out)
    assert envelope["ok"] is True
    assert any("ignored 3 callbacks without the right state" in w for w in envelope["warnings"])
    assert "pwned" not in out + err and "esrever" not in out + err  # never shown at all
    assert_no_raw_controls(out, err)
    record = mcpctl.record("docs")
    assert record is not None and record["access_token"]
    assert server.stats()["code_exchanges"] == 1  # the forged code was never redeemed
    mcpctl.assert_no_token_leaked(server)


def test_only_forged_callbacks_mean_no_answer_in_time(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    browser = Browser()
    proc = mcpctl.start("auth", "docs", "--no-browser", "--timeout", "4s")
    try:
        callback = callback_of(browser.read_address(proc))
        query = {"error": "access_denied", "error_description": HOSTILE}
        httpx2.get(f"{callback}?{urlencode(query)}", timeout=10)
    except BaseException:
        stop_process(proc)
        raise
    finish(proc)
    err = browser.rest()
    assert proc.returncode == 1, err
    assert "no answer within 4 s (ignored 1 callback without the right state" in err
    assert "denied" not in err and "pwned" not in err
    assert mcpctl.record("docs") is None
    assert server.report()["token_requests"] == []


def test_a_pasted_address_without_the_right_state_is_ignored(
    mcpctl: Mcpctl, oauth_server: Any
) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    browser = Browser()
    proc = mcpctl.start("auth", "docs", "--no-browser")
    try:
        browser.read_address(proc)
        answer = browser.authorize()
        assert proc.stdin is not None
        proc.stdin.write(with_query(answer, state=None) + "\n")
        proc.stdin.write(answer + "\n")
        proc.stdin.flush()
    except BaseException:
        stop_process(proc)
        raise
    finish(proc)
    err = browser.rest()
    assert proc.returncode == 0, err
    assert "does not carry the state this sign-in sent" in err
    assert "ignored 1 pasted address without the right state" in err
    assert mcpctl.record("docs") is not None


def test_an_error_with_the_right_state_ends_it_shown_escaped(
    mcpctl: Mcpctl, oauth_server: Any
) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})

    def deny(answer: str) -> str:
        return with_query(answer, code=None, error="access_denied", error_description=HOSTILE)

    outcome, _ = sign_in(mcpctl, "docs", tamper=deny)
    assert outcome.code == 1, outcome.stderr
    assert "access was denied (access_denied: evil\\x1b]0;pwned\\x07" in outcome.stderr
    assert "\\u202eesrever" in outcome.stderr
    assert_no_raw_controls(outcome.stdout, outcome.stderr)
    assert mcpctl.record("docs") is None


# --- token responses ----------------------------------------------------------------------


BOGUS_EXPIRY = [1e20, -3600, float("inf"), "soon", True]


@pytest.mark.parametrize("expires_in", BOGUS_EXPIRY, ids=repr)
def test_a_bogus_expiry_is_unknown(mcpctl: Mcpctl, oauth_server: Any, expires_in: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    server.control_json("token-override", {"expires_in": expires_in})
    outcome, _ = sign_in(mcpctl, "docs")
    assert outcome.code == 0, outcome.stderr
    record = mcpctl.record("docs")
    assert record is not None and "expires_at" not in record and "lifetime" not in record
    status = mcpctl("auth", "status", "docs", "--json")
    assert status.code == 0, status.stdout + status.stderr
    row = status.json["data"]["servers"][0]
    assert row["signed_in"] is True and row["expires_at"] is None and row["expired"] is False
    doctor = mcpctl("doctor", "--json")
    assert "Traceback" not in doctor.stderr and "Error" not in doctor.stderr, doctor.stderr
    # Used as is (no new sign-in, no refresh), and renewed once the server refuses it.
    health = mcpctl("health", "docs")
    assert health.code == 0, health.stdout + health.stderr
    assert server.stats()["authorizations"] == 1 and "refreshes" not in server.stats()
    server.control("expire-access")
    health = mcpctl("health", "docs")
    assert health.code == 0, health.stdout + health.stderr
    assert server.stats()["refreshes"] == 1 and server.stats()["authorizations"] == 1
    mcpctl.assert_no_token_leaked(server)


def test_a_sane_expiry_is_kept(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    server.control_json("token-override", {"expires_in": "3600"})  # a string, liberally read
    assert sign_in(mcpctl, "docs")[0].code == 0
    record = mcpctl.record("docs")
    assert record is not None and record["lifetime"] == 3600
    assert 3500 < record["expires_at"] - time.time() <= 3600


@pytest.mark.parametrize(
    ("override", "size", "says"),
    [
        (
            {"access_token": "mcpctltestATcaf\u00e9"},
            0,
            "access_token: it holds a character other than visible ASCII (\\xe9)",
        ),
        (
            {"access_token": "mcpctltestAT\x1b[31m"},
            0,
            "access_token: it holds a character other than visible ASCII (\\x1b)",
        ),
        (
            {"access_token": "two words"},
            0,
            "access_token: it holds a character other than visible ASCII (\\x20)",
        ),
        ({"access_token": ""}, 0, "access_token: it is empty"),
        ({"access_token": 12345}, 0, "access_token: it is not a string"),
        (
            {"refresh_token": "mcpctltestRT\u202e"},
            0,
            "refresh_token: it holds a character other than visible ASCII (\\u202e)",
        ),
        ({}, 100_000, "access_token: it is longer than 16 KiB (100000 characters)"),
    ],
    ids=["non-ascii", "escape", "space", "empty", "number", "bidi-refresh", "100k"],
)
def test_an_unusable_token_is_a_sign_in_error_naming_the_field(
    mcpctl: Mcpctl, oauth_server: Any, override: dict[str, Any], size: int, says: str
) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    server.control_json("token-override", override, access_size=str(size))
    outcome, _ = sign_in(mcpctl, "docs", "--json")
    assert outcome.code == 1, outcome.stderr
    error = outcome.json["errors"][0]
    assert error["code"] == "sign_in_failed"
    assert f"the authorization server sent an unusable {says}" in error["message"]
    assert "nothing was stored" in error["message"]
    assert_no_raw_controls(outcome.stdout, outcome.stderr)
    assert "Traceback" not in outcome.stderr
    # The token itself is never echoed (only a distinctive value can be searched
    # for: a short one could occur by chance in the random client id or state).
    printed = outcome.stdout + outcome.stderr
    assert "mcpctltestAT" not in printed and "mcpctltestRT" not in printed
    assert "two words" not in printed
    assert mcpctl.record("docs") is None


def test_an_unusable_token_from_a_refresh_is_auth_required(
    mcpctl: Mcpctl, oauth_server: Any
) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    assert sign_in(mcpctl, "docs")[0].code == 0
    before = mcpctl.record("docs")
    server.control_json("token-override", {"access_token": "two words"})
    mcpctl.expire("docs", server)
    health = mcpctl("health", "docs", "--json")
    assert health.code == 1, health.stdout + health.stderr
    error = health.json["data"]["mcps"][0]["error"]
    assert error["code"] == "auth_required"
    assert error["message"].endswith(
        "renewing the sign-in failed: the authorization server sent an unusable access_token: "
        "it holds a character other than visible ASCII (\\x20)"
    )
    assert "two words" not in health.stdout + health.stderr
    after = mcpctl.record("docs")  # nothing of the refused answer kept
    assert before is not None and after is not None
    assert after["refresh_token"] == before["refresh_token"]
    assert server.stats()["refreshes"] == 1


def test_a_huge_token_response_is_not_read_whole(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    server.control_json("token-override", {}, access_size=str(20 * 1024 * 1024))
    outcome, _ = sign_in(mcpctl, "docs", "--json")
    assert outcome.code == 1, outcome.stderr
    error = outcome.json["errors"][0]
    assert error["code"] == "sign_in_failed"
    assert "/token answered with more than 4 MiB" in error["message"]
    assert mcpctl.record("docs") is None


def old_record(mcpctl: Mcpctl, server: OAuthServer, **fields: Any) -> None:
    """Sign in, then make the stored record look as an older version stored it."""
    assert sign_in(mcpctl, "docs")[0].code == 0
    edit_record(mcpctl.keyring, "docs", lambda data: data.update(fields))


def test_an_old_record_with_a_huge_expiry_reads(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    old_record(mcpctl, server, expires_at=1e20, lifetime=1e20)
    for args in (("auth", "status", "docs"), ("auth", "status", "--json"), ("doctor",)):
        outcome = mcpctl(*args)
        assert "Traceback" not in outcome.stderr and "Overflow" not in outcome.stderr, args
        assert "Error" not in outcome.stderr, (args, outcome.stderr)
    status = mcpctl("auth", "status", "docs", "--json")
    assert status.code == 0, status.stdout + status.stderr
    assert status.json["data"]["servers"][0]["expires_at"] is None
    health = mcpctl("health", "docs")
    assert health.code == 0, health.stdout + health.stderr
    assert server.stats()["authorizations"] == 1


def test_an_old_record_with_an_unusable_token_reads(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    old_record(mcpctl, server, access_token="caf\u00e9", refresh_token="th\u00e9")
    status = mcpctl("auth", "status", "docs", "--json")
    assert status.code == 1, status.stdout + status.stderr
    row = status.json["data"]["servers"][0]
    assert row["signed_in"] is False
    assert "access_token holds a character other than visible ASCII" in row["problem"]
    health = mcpctl("health", "docs", "--json")
    assert health.code == 1 and "Traceback" not in health.stderr
    assert health.json["data"]["mcps"][0]["error"]["code"] == "auth_required"
    assert "mcpctl auth docs" in health.json["data"]["mcps"][0]["error"]["hint"]


# --- trickling servers --------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_line",
    ["GET /.well-known/oauth-protected-resource/mcp", "GET /.well-known/oauth-authorization-server",
     "POST /register"],
    ids=["protected-resource-metadata", "authorization-server-metadata", "registration"],
)  # fmt: skip
def test_a_trickling_discovery_step_is_given_up_on(
    mcpctl: Mcpctl, oauth_server: Any, request_line: str
) -> None:
    method, path = request_line.split()
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    server.control("trickle", path=path, every=TRICKLE_EVERY)
    started = time.monotonic()
    outcome = mcpctl("auth", "docs", "--no-browser", "--timeout", "2s", timeout=120)
    elapsed = time.monotonic() - started
    assert elapsed < 30, f"still running after {elapsed:.0f} s"
    assert outcome.code == 3, outcome.stderr
    assert f"{method} {server.as_origin}{path} did not answer in full within 2 s" in outcome.stderr
    assert "Traceback" not in outcome.stderr
    assert mcpctl.record("docs") is None


def test_a_trickling_token_endpoint_is_given_up_on(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    server.control("trickle", path="/token", every=TRICKLE_EVERY)
    started = time.monotonic()
    # Time enough for the stand-in browser to answer on a loaded machine: the exchange that
    # follows is bounded by it too.
    outcome, _ = sign_in(mcpctl, "docs", "--timeout", "8s")
    elapsed = time.monotonic() - started
    assert elapsed < 50, f"still running after {elapsed:.0f} s"
    assert outcome.code == 3, outcome.stderr
    assert f"POST {server.as_origin}/token did not answer in full within 8 s" in outcome.stderr
    assert server.stats()["code_exchanges"] == 1
    assert mcpctl.record("docs") is None


def test_a_trickling_revocation_endpoint_is_given_up_on(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    assert sign_in(mcpctl, "docs")[0].code == 0
    server.control("trickle", path="/revoke", every=TRICKLE_EVERY)
    started = time.monotonic()
    outcome = mcpctl("auth", "logout", "docs", timeout=120)
    elapsed = time.monotonic() - started
    assert elapsed < 45, f"still running after {elapsed:.0f} s"  # the limit is 10 s
    assert outcome.code == 0, outcome.stderr
    assert "not revoked: the authorization server did not answer within 10 s" in outcome.stderr
    assert mcpctl.record("docs") is None  # deleted all the same
    mcpctl.assert_no_token_leaked(server)


def test_a_trickling_refresh_is_bounded_by_the_commands_timeout(
    mcpctl: Mcpctl, oauth_server: Any
) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    assert sign_in(mcpctl, "docs")[0].code == 0
    server.control("expire-access")
    server.control("trickle", path="/token", every=TRICKLE_EVERY)
    started = time.monotonic()
    outcome = mcpctl("health", "docs", "--timeout", "3s", "--json", timeout=120)
    elapsed = time.monotonic() - started
    assert elapsed < 30, f"still running after {elapsed:.0f} s"
    assert outcome.code != 0 and "Traceback" not in outcome.stderr
    assert outcome.json["data"]["mcps"][0]["healthy"] is False
    mcpctl.assert_no_token_leaked(server)
