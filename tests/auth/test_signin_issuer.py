"""Which authorization server a sign-in deals with: the ``iss`` of its answer (RFC 9207), the
registration it makes there (a native app), a moved authorization server, and client ID
metadata documents -- against tests/servers/oauth_server.py, mcpctl as a subprocess.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest

from mcpctl.auth.answer import Answer, Expected, check_answer
from mcpctl.auth.oauth import client_metadata
from mcpctl.errors import SignInError
from tests.auth.conftest import TTL, Mcpctl, OAuthServer, oauth_entry, sign_in
from tests.auth.filekeyring import edit_record

EVIL = "https://login.evil.example"


def with_iss(iss: str | None) -> Callable[[str], str]:
    """A tamper that sets (or, with ``None``, removes) the answer's ``iss``."""

    def tamper(answer: str) -> str:
        parts = urlsplit(answer)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        query.pop("iss", None)
        if iss is not None:
            query["iss"] = iss
        return urlunsplit(parts._replace(query=urlencode(query)))

    return tamper


def assert_nothing_redeemed(mcpctl: Mcpctl, server: OAuthServer) -> None:
    assert mcpctl.record("docs") is None
    assert server.report()["token_requests"] == []  # the code was never sent
    assert server.stats()["authorizations"] == 1


# --- the answer's iss, unit by unit ---------------------------------------------------------


def test_the_issuer_is_checked_first_and_shown_escaped() -> None:
    expected = Expected(state="s1", issuer="http://127.0.0.1:9", iss_required=True)
    assert check_answer("docs", Answer(code="c", state="s1", iss="http://127.0.0.1:9"), expected)
    forged = Answer(error="access_denied", state="s1", iss="https://evil\x1b[31m.example")
    with pytest.raises(SignInError) as caught:
        check_answer("docs", forged, expected)  # not reported as a denial: not ours to trust
    message = caught.value.message
    assert "another authorization server" in message and "\x1b" not in message
    assert "\\x1b[31m" in message and "expected 'http://127.0.0.1:9'" in message
    with pytest.raises(SignInError, match="no iss"):
        check_answer("docs", Answer(code="c", state="s1"), expected)
    lenient = Expected(state="s1", issuer="http://127.0.0.1:9")
    assert check_answer("docs", Answer(code="c", state="s1"), lenient) == "c"
    with pytest.raises(SignInError, match="another authorization server"):
        check_answer("docs", Answer(code="c", state="s1", iss="http://127.0.0.1:9/"), lenient)
    with pytest.raises(SignInError, match="published no metadata"):
        check_answer("docs", Answer(code="c", state="s1", iss=EVIL), Expected(state="s1"))


def test_mcpctl_registers_as_a_native_app() -> None:
    body = client_metadata("http://127.0.0.1:5000/callback").model_dump(
        by_alias=True, mode="json", exclude_none=True
    )
    assert body["application_type"] == "native"


# --- against the test server ----------------------------------------------------------------


@pytest.mark.slow
def test_an_answer_naming_its_server_is_redeemed(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server(TTL, False, None, "--iss")
    mcpctl.config({"docs": oauth_entry(server)})
    outcome, browser = sign_in(mcpctl, "docs")
    assert outcome.code == 0, outcome.stderr
    assert parse_qs(urlsplit(browser.answer or "").query)["iss"] == [server.as_origin]
    assert server.stats()["code_exchanges"] == 1
    # What it registered as: a native app (its redirect is http://127.0.0.1).
    (registration,) = server.report()["registration_requests"]
    assert registration["application_type"] == "native"
    assert registration["redirect_uris"][0].startswith("http://127.0.0.1:")
    mcpctl.assert_no_token_leaked(server)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["callback", "paste"])
def test_an_answer_from_another_authorization_server_is_refused(
    mcpctl: Mcpctl, oauth_server: Any, how: str
) -> None:
    server = oauth_server(TTL, False, None, "--iss")
    mcpctl.config({"docs": oauth_entry(server)})
    outcome, _ = sign_in(mcpctl, "docs", how=how, tamper=with_iss(EVIL))
    assert outcome.code == 1, outcome.stderr
    assert "another authorization server" in outcome.stderr and EVIL in outcome.stderr
    assert "nothing was stored" in outcome.stderr and "mcpctl auth docs" in outcome.stderr
    assert_nothing_redeemed(mcpctl, server)


@pytest.mark.slow
def test_an_answer_without_the_promised_iss_is_refused(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server(TTL, False, None, "--iss")
    mcpctl.config({"docs": oauth_entry(server)})
    outcome, _ = sign_in(mcpctl, "docs", "--json", tamper=with_iss(None))
    assert outcome.code == 1
    error = json.loads(outcome.stdout)["errors"][0]
    assert error["code"] == "sign_in_failed" and "no iss" in error["message"]
    assert_nothing_redeemed(mcpctl, server)


@pytest.mark.slow
def test_an_iss_is_checked_even_from_a_server_that_promises_none(
    mcpctl: Mcpctl, oauth_server: Any
) -> None:
    server = oauth_server()  # no iss in its answers, none promised
    mcpctl.config({"docs": oauth_entry(server)})
    refused, _ = sign_in(mcpctl, "docs", tamper=with_iss(EVIL))
    assert refused.code == 1 and "another authorization server" in refused.stderr
    assert_nothing_redeemed(mcpctl, server)
    # The issuer as its metadata spells it is the one: compared as a plain string.
    accepted, _ = sign_in(mcpctl, "docs", tamper=with_iss(server.as_origin))
    assert accepted.code == 0, accepted.stderr
    mcpctl.assert_no_token_leaked(server)


@pytest.mark.slow
@pytest.mark.parametrize("stamped", [True, False], ids=["bound", "stored-unbound"])
def test_a_moved_authorization_server_gets_a_registration_of_its_own(
    mcpctl: Mcpctl, oauth_server: Any, stamped: bool, callback_port: int
) -> None:
    server = oauth_server(moving=True)
    first, second = server.as_origin, server.next_as_origin
    # A fixed redirect URI (the registration is reused while it fits), reserved for the test.
    mcpctl.config({"docs": oauth_entry(server, callback_port=callback_port)})
    for _ in range(2):
        outcome, _ = sign_in(mcpctl, "docs")
        assert outcome.code == 0, outcome.stderr
    assert server.stats(first)["registrations"] == 1  # reused: the test proves something
    record = mcpctl.record("docs")
    assert record is not None
    old_client = record["client"]["client_id"]
    assert record["client"]["issuer"] == first
    if not stamped:  # as stored before registrations carried their issuer
        edit_record(mcpctl.keyring, "docs", lambda r: r["client"].pop("issuer"))

    assert server.control("move-as") == {"authorization_server": second}
    outcome, browser = sign_in(mcpctl, "docs")
    assert outcome.code == 0, outcome.stderr
    assert (browser.address or "").startswith(f"{second}/authorize?")
    assert server.stats(second)["registrations"] == 1
    assert old_client not in server.report(second)["authorized_clients"]
    assert server.stats(first)["authorizations"] == 2  # nothing more asked of the old one
    record = mcpctl.record("docs")
    assert record is not None and record["client"]["client_id"] != old_client
    assert record["client"]["issuer"] == second and record["auth_server"]["issuer"] == second
    status = mcpctl("auth", "status", "docs", "--json")
    assert status.json["data"]["servers"][0]["authorization_server"] == second
    call = mcpctl("call", "docs", "whoami")
    assert call.code == 0 and record["client"]["client_id"] in call.stdout, call.stderr
    mcpctl.assert_no_token_leaked(server)


@pytest.mark.slow
def test_a_client_metadata_document_waits_for_the_servers_support(
    mcpctl: Mcpctl, oauth_server: Any
) -> None:
    server = oauth_server()  # no client_id_metadata_document_supported
    document = "https://client.example.com/mcpctl/client.json"
    mcpctl.config({"docs": oauth_entry(server, client_metadata_url=document)})
    outcome, _ = sign_in(mcpctl, "docs")
    assert outcome.code == 0, outcome.stderr
    assert server.stats()["registrations"] == 1
    assert document not in server.report()["authorized_clients"]
    record = mcpctl.record("docs")
    assert record is not None and record["client_source"] == "registered"
    mcpctl.assert_no_token_leaked(server)
