"""The whole OAuth flow, headless, through the CLI as a subprocess, against the SDK's
server-side auth (tests/servers/oauth_server.py): sign-in, reuse, refresh, failures.

Every test ends by proving that no token reached any output.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import pytest

from tests.auth.conftest import (
    TOKEN_PREFIX,
    TTL,
    Browser,
    Mcpctl,
    Outcome,
    finish,
    oauth_entry,
    sign_in,
)
from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_sign_in_then_other_processes_use_the_tokens(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    outcome, browser = sign_in(mcpctl, "docs")
    assert outcome.code == 0, outcome.stderr
    assert "Signed in to docs" in outcome.stderr
    # The address: PKCE S256, state, the resource, on a line of its own.
    query = parse_qs(urlsplit(browser.address or "").query)
    assert query["code_challenge_method"] == ["S256"] and query["state"][0]
    assert query["resource"] == [server.url]
    assert query["redirect_uri"][0].startswith("http://127.0.0.1:")
    record = mcpctl.record("docs")
    assert record is not None and record["server_url"] == server.url
    assert record["expires_at"] > time.time() + 30  # absolute
    assert record["auth_server"]["token_endpoint"] == f"{server.as_origin}/token"
    assert record["client_source"] == "registered"

    health = mcpctl("health", "docs", "--json")
    assert health.code == 0, health.stdout + health.stderr
    assert health.json["data"]["mcps"][0]["healthy"] is True
    call = mcpctl("call", "docs", "whoami", "--json")
    assert call.code == 0, call.stdout + call.stderr
    assert "mcp:read" in call.stdout
    mcpctl("health", "docs", "-v")  # the debug logs of the SDK and the HTTP client, too
    stats = server.stats()
    assert stats["authorizations"] == 1 and stats["registrations"] == 1
    assert stats.get("refreshes", 0) == 0
    mcpctl.assert_no_token_leaked(server)


def test_the_address_can_be_pasted_back_with_chosen_scopes(
    mcpctl: Mcpctl, oauth_server: Any
) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    scopes = ("--scope", "mcp:read", "--scope", "mcp:write")
    outcome, browser = sign_in(mcpctl, "docs", "-v", *scopes, how="paste")
    assert outcome.code == 0, outcome.stderr
    assert "paste" in outcome.stderr
    # The scopes asked for, not only those the server advertises (mcp:read).
    assert parse_qs(urlsplit(browser.address or "").query)["scope"] == ["mcp:read mcp:write"]
    record = mcpctl.record("docs")
    assert record is not None and record["scope"] == "mcp:read mcp:write"
    call = mcpctl("call", "docs", "whoami")
    assert call.code == 0 and "mcp:write" in call.stdout
    mcpctl.assert_no_token_leaked(server)


def test_expired_tokens_are_refreshed_in_a_new_process(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    assert sign_in(mcpctl, "docs")[0].code == 0
    mcpctl.expire("docs", server)
    first = mcpctl("health", "docs", "--json", "-v")
    assert first.code == 0, first.stdout + first.stderr
    stats = server.stats()
    assert stats["authorizations"] == 1 and stats["refreshes"] == 1  # no second sign-in
    # Refreshed because the record said it expired: the spent token was never sent.
    assert "access_refused" not in stats
    refresh = [r for r in server.report()["token_requests"] if r["grant_type"] == "refresh_token"]
    assert refresh == [{"grant_type": "refresh_token", "resource": server.url}]
    assert mcpctl("call", "docs", "echo", "--arg", "text=still").code == 0
    assert server.stats()["refreshes"] == 1, "a token still valid is used as it is"
    mcpctl.expire("docs", server)
    assert mcpctl("call", "docs", "echo", "--arg", "text=again").code == 0
    assert server.stats()["refreshes"] == 2 and server.stats()["authorizations"] == 1
    mcpctl.assert_no_token_leaked(server)


def test_a_refresh_without_a_new_refresh_token_keeps_the_stored_one(
    mcpctl: Mcpctl, oauth_server: Any
) -> None:
    # Rotation is optional: a server may answer a refresh with an access token alone. The
    # refresh token it did not replace must stay stored, or the next expiry means a sign-in.
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    assert sign_in(mcpctl, "docs")[0].code == 0
    before = mcpctl.record("docs")
    assert before is not None and before["refresh_token"]
    server.control("rotate", on="0")
    for refreshes in (1, 2):
        mcpctl.expire("docs", server)
        health = mcpctl("health", "docs")
        assert health.code == 0, health.stdout + health.stderr
        stats = server.stats()
        assert stats["refreshes"] == refreshes and stats["authorizations"] == 1
        after = mcpctl.record("docs")
        assert after is not None and after["refresh_token"] == before["refresh_token"]
        assert after["access_token"] != before["access_token"]
    assert server.stats().get("refresh_refused", 0) == 0
    mcpctl.assert_no_token_leaked(server)


def test_a_refused_token_is_renewed_once(mcpctl: Mcpctl, oauth_server: Any) -> None:
    # The server forgets the access token before it expires: the 401 is answered with a
    # refresh, not with a sign-in.
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    assert sign_in(mcpctl, "docs")[0].code == 0
    server.control("expire-access")
    health = mcpctl("health", "docs")
    assert health.code == 0, health.stdout + health.stderr
    assert server.stats()["refreshes"] == 1 and server.stats()["authorizations"] == 1
    mcpctl.assert_no_token_leaked(server)


def test_wrong_state_is_refused(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})

    def forge(answer: str) -> str:
        parts = urlsplit(answer)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        query["state"] = "not-the-state-mcpctl-sent"
        return urlunsplit(parts._replace(query=urlencode(query)))

    # Ignored (not this sign-in's answer): the sign-in waits on, for the real one, until its
    # timeout.
    outcome, _ = sign_in(mcpctl, "docs", "--timeout", "5s", tamper=forge)
    assert outcome.code == 1
    assert "ignored 1 callback without the right state" in outcome.stderr
    assert mcpctl.record("docs") is None
    assert server.stats().get("code_exchanges", 0) == 0


def test_access_denied(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    server.control("deny", on="1")
    mcpctl.config({"docs": oauth_entry(server)})
    outcome, _ = sign_in(mcpctl, "docs", "--json")
    assert outcome.code == 1
    assert "denied" in outcome.stderr or "denied" in outcome.stdout
    assert json.loads(outcome.stdout)["ok"] is False
    assert mcpctl.record("docs") is None


def test_no_answer_in_time(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    started = time.monotonic()
    outcome, _ = sign_in(mcpctl, "docs", "--timeout", "2s", how="none")
    assert outcome.code == 1
    assert "no answer within 2 s" in outcome.stderr
    assert time.monotonic() - started < 50  # the 2 s, not the default 5 minutes
    assert mcpctl.record("docs") is None


def test_a_revoked_refresh_token_means_auth_required(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    assert sign_in(mcpctl, "docs")[0].code == 0
    server.control("revoke-refresh")
    mcpctl.expire("docs", server)
    health = mcpctl("health", "docs", "--json")
    # auth_required, not a timeout: no waiting for a browser (or anything) until the deadline.
    assert health.code == 1
    error = health.json["data"]["mcps"][0]["error"]
    assert error["code"] == "auth_required"
    assert health.json["data"]["mcps"][0]["status"] == "needs_auth"  # it can no longer renew
    assert "mcpctl auth docs" in error["hint"]
    human = mcpctl("health", "docs")
    assert human.code == 1 and "mcpctl auth docs" in human.stderr
    status = mcpctl("auth", "status", "docs", "--json")
    assert status.code == 1 and status.json["data"]["servers"][0]["signed_in"] is False
    assert server.stats()["authorizations"] == 1
    # Signing in again fixes it.
    assert sign_in(mcpctl, "docs")[0].code == 0
    health = mcpctl("health", "docs")
    assert health.code == 0, health.stdout + health.stderr
    mcpctl.assert_no_token_leaked(server)


def test_two_processes_refreshing_at_once_both_succeed(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({"docs": {**oauth_entry(server), "timeout": 60000}})
    assert sign_in(mcpctl, "docs")[0].code == 0
    mcpctl.expire("docs", server)
    # A refresh takes 5 s to answer, so the process that comes second to it starts its own
    # while the first waits for the answer -- unless it waits for the first to finish. Both
    # start at once: however slow the machine, they start alike.
    server.control("refresh-delay", seconds="5")
    procs = [mcpctl.start("health", "docs", "--json") for _ in range(2)]
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        outcome = mcpctl.keep(Outcome(("health", "docs"), proc.returncode, out, err))
        assert outcome.code == 0, out + err
    # Rotation: had both refreshed, the second would have used a spent refresh token.
    stats = server.stats()
    assert stats["refreshes"] == 1 and stats.get("refresh_refused", 0) == 0
    mcpctl.assert_no_token_leaked(server)


def test_authorization_server_on_another_origin(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server(own_origin=True)
    assert server.as_origin != f"http://127.0.0.1:{server.port}"
    mcpctl.config({"docs": oauth_entry(server)})
    outcome, browser = sign_in(mcpctl, "docs")
    assert outcome.code == 0, outcome.stderr
    assert (browser.address or "").startswith(f"{server.as_origin}/authorize?")
    record = mcpctl.record("docs")
    assert record is not None and record["auth_server"]["issuer"] == server.as_origin
    mcpctl.expire("docs", server)
    health = mcpctl("health", "docs")
    assert health.code == 0, health.stdout + health.stderr
    # The refresh went to the authorization server (whose counters these are), with the
    # resource, and no second sign-in was needed.
    stats = server.stats()
    assert stats["refreshes"] == 1 and stats["authorizations"] == 1
    assert {"grant_type": "refresh_token", "resource": server.url} in server.report()[
        "token_requests"
    ]
    mcpctl.assert_no_token_leaked(server)


def test_a_changed_url_does_not_get_the_old_tokens(mcpctl: Mcpctl, oauth_server: Any) -> None:
    old, new = oauth_server(), oauth_server()
    mcpctl.config({"docs": oauth_entry(old)})
    assert sign_in(mcpctl, "docs")[0].code == 0
    mcpctl.config({"docs": oauth_entry(new)})
    health = mcpctl("health", "docs", "--json")
    assert health.code == 1
    error = health.json["data"]["mcps"][0]["error"]
    assert error["code"] == "auth_required" and "another URL" in error["message"]
    stats = new.stats()
    assert "access_refused" not in stats and "access_accepted" not in stats  # nothing was sent
    assert new.report()["token_requests"] == []  # nor a refresh
    status = mcpctl("auth", "status", "docs", "--json")
    row = status.json["data"]["servers"][0]
    assert row["stale"] is True and row["signed_in"] is False
    # Signing in again replaces them.
    assert sign_in(mcpctl, "docs")[0].code == 0
    health = mcpctl("health", "docs")
    assert health.code == 0, health.stdout + health.stderr
    row = mcpctl("auth", "status", "docs", "--json").json["data"]["servers"][0]
    assert row["stale"] is False and row["signed_in"] is True
    mcpctl.assert_no_token_leaked(old, new)


def test_client_credentials(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server(client="build-bot:s3cret-of-the-bot")
    mcpctl.env["BOT_SECRET"] = "s3cret-of-the-bot"
    entry = oauth_entry(server, client_id="build-bot", client_secret="${BOT_SECRET}")
    mcpctl.config({"bot": entry})
    scopes = ("--scope", "mcp:read", "--scope", "mcp:write")
    outcome = mcpctl("auth", "bot", "--grant", "client_credentials", *scopes)
    assert outcome.code == 0, outcome.stderr
    assert "Signed in to bot" in outcome.stderr and "http" not in outcome.stderr
    record = mcpctl.record("bot")
    assert record is not None and record["grant"] == "client_credentials"
    # The scopes asked for, not those the server advertises (mcp:read).
    assert record["scope"] == "mcp:read mcp:write"
    assert "s3cret-of-the-bot" not in json.dumps(record)  # the secret stays in its placeholder
    call = mcpctl("call", "bot", "whoami", "--json")
    assert call.code == 0 and "build-bot" in call.stdout
    assert server.stats()["client_credentials"] == 1, "the token of the grant is used"
    mcpctl.expire("bot", server)
    assert mcpctl("health", "bot").code == 0  # a new grant, no browser
    stats = server.stats()
    assert stats["client_credentials"] == 2 and "authorizations" not in stats
    logout = mcpctl("auth", "logout", "bot")
    assert logout.code == 0 and "its tokens were revoked" in logout.stderr, logout.stderr
    assert server.stats()["revocations"] == 1 and mcpctl.record("bot") is None
    for o in mcpctl.outcomes:
        assert "s3cret-of-the-bot" not in o.stdout + o.stderr
    mcpctl.assert_no_token_leaked(server)


def test_status_and_logout(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server()
    mcpctl.config({
        "docs": oauth_entry(server),
        "plain": {"url": "http://127.0.0.1:9/mcp"},
        "local": {"command": "true"},
    })  # fmt: skip
    before = mcpctl("auth", "status", "--json")
    assert before.code == 1  # docs is not signed in
    rows = {r["server"]: r for r in before.json["data"]["servers"]}
    assert set(rows) == {"docs", "plain"} and rows["plain"]["auth"] == "none"
    assert sign_in(mcpctl, "docs")[0].code == 0
    status = mcpctl("auth", "status", "--json")
    assert status.code == 0
    row = {r["server"]: r for r in status.json["data"]["servers"]}["docs"]
    assert (
        row["signed_in"] and row["scopes"] == ["mcp:read"] and row["grant"] == "authorization_code"
    )
    assert row["authorization_server"] == server.as_origin and row["expired"] is False
    human = mcpctl("auth", "status")
    assert human.code == 0 and "docs" in human.stdout and "mcp:read" in human.stdout
    logout = mcpctl("auth", "logout", "docs")
    assert logout.code == 0 and "Signed out of docs; its tokens were revoked" in logout.stderr
    assert server.stats()["revocations"] >= 1
    assert mcpctl.record("docs") is None
    assert mcpctl("health", "docs").code == 1
    again = mcpctl("auth", "logout", "docs")
    assert again.code == 0 and "no stored sign-in" in again.stderr
    mcpctl.assert_no_token_leaked(server)


def test_a_configured_client_id_is_used_instead_of_registering(
    mcpctl: Mcpctl, oauth_server: Any, callback_port: int
) -> None:
    port = callback_port
    server = oauth_server(TTL, False, "web-app:s3cret-of-the-app", "--redirect-port", str(port))
    mcpctl.env["APP_SECRET"] = "s3cret-of-the-app"
    entry = oauth_entry(
        server, client_id="web-app", client_secret="${APP_SECRET}", callback_port=port
    )
    mcpctl.config({"docs": entry})
    outcome, browser = sign_in(mcpctl, "docs")
    assert outcome.code == 0, outcome.stderr
    assert f"redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback" in (browser.address or "")
    assert server.report()["authorized_clients"] == ["web-app"]
    assert "registrations" not in server.stats()
    record = mcpctl.record("docs")
    assert record is not None and record["client_source"] == "configured"
    assert "s3cret-of-the-app" not in json.dumps(record)  # resolved from its placeholder each time
    health = mcpctl("health", "docs")
    assert health.code == 0, health.stdout + health.stderr
    for o in mcpctl.outcomes:
        assert "s3cret-of-the-app" not in o.stdout + o.stderr
    mcpctl.assert_no_token_leaked(server)


def test_a_client_id_metadata_document_comes_before_registration(
    mcpctl: Mcpctl, oauth_server: Any, callback_port: int
) -> None:
    # The redirect URI's port is fixed (the document names it): it stays reserved from here
    # on, or another process could take it before mcpctl listens on it.
    port = callback_port
    server = oauth_server(TTL, False, None, "--cimd", "--redirect-port", str(port))
    document = "https://client.example.com/mcpctl/client.json"
    mcpctl.config({"docs": oauth_entry(server, client_metadata_url=document, callback_port=port)})
    outcome, _ = sign_in(mcpctl, "docs")
    assert outcome.code == 0, outcome.stderr
    assert server.report()["authorized_clients"] == [document]
    assert "registrations" not in server.stats()
    record = mcpctl.record("docs")
    assert record is not None and record["client_source"] == "metadata_document"
    health = mcpctl("health", "docs")
    assert health.code == 0, health.stdout + health.stderr
    mcpctl.assert_no_token_leaked(server)


def test_ctrl_c_stops_the_sign_in(mcpctl: Mcpctl, oauth_server: Any) -> None:
    import signal

    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    browser = Browser()
    proc = mcpctl.start("auth", "docs", "--no-browser")
    try:
        browser.read_address(proc)
        proc.send_signal(signal.SIGINT)
    finally:
        finish(proc, timeout=30)
    err = browser.rest()
    assert proc.returncode == 1, err
    assert "stopped (SIGINT)" in err and "nothing was stored" in err
    assert mcpctl.record("docs") is None


def test_the_library_uses_the_stored_sign_in(
    mcpctl: Mcpctl, oauth_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio
    import keyring

    from mcpctl.config.model import AuthConfig, ServerEntry
    from mcpctl.probe import open_session
    from tests.auth.filekeyring import FILE_VAR, FileKeyring

    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    assert sign_in(mcpctl, "docs")[0].code == 0
    monkeypatch.setenv(FILE_VAR, str(mcpctl.keyring))
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    entry = ServerEntry(url=server.url, auth=AuthConfig(type="oauth"))

    async def tools() -> list[str]:
        async with open_session(entry, name="docs", timeout=20) as session:
            return [t.name for t in (await session.list_tools()).tools]

    try:
        assert sorted(anyio.run(tools)) == ["echo", "whoami"]
    finally:
        keyring.set_keyring(previous)
    assert server.stats()["authorizations"] == 1


def test_an_sse_server(mcpctl: Mcpctl, oauth_server: Any) -> None:
    server = oauth_server(TTL, False, None, "--sse")
    mcpctl.config({"old": {**oauth_entry(server), "transport": "sse"}})
    outcome, _ = sign_in(mcpctl, "old")
    assert outcome.code == 0, outcome.stderr
    mcpctl.expire("old", server)
    call = mcpctl("call", "old", "echo", "--arg", "text=over sse")
    assert call.code == 0 and "over sse" in call.stdout, call.stdout + call.stderr
    assert server.stats()["refreshes"] >= 1 and server.stats()["authorizations"] == 1
    mcpctl.assert_no_token_leaked(server)


@pytest.mark.integration
def test_a_real_secret_service_holds_the_tokens(
    secret_service: dict[str, str], oauth_server: Any, isolated: Path, tmp_path: Path
) -> None:
    home = Path(os.environ["MCPCTL_HOME"])
    env = {k: v for k, v in secret_service.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update({"PYTHONPATH": str(ROOT), "MCPCTL_HOME": str(home)})
    env.pop("MCPCTL_AUTH_TIMEOUT", None)
    mcpctl = Mcpctl(isolated, tmp_path / "no-file-keyring.json", env)
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    assert sign_in(mcpctl, "docs")[0].code == 0
    mcpctl.expire("docs", server)
    health = mcpctl("health", "docs")
    assert health.code == 0, health.stdout + health.stderr
    assert server.stats()["refreshes"] == 1 and server.stats()["authorizations"] == 1
    row = mcpctl("auth", "status", "docs", "--json").json["data"]["servers"][0]
    assert row["signed_in"] and row["grant"] == "authorization_code"
    # Only the keyring has them: no file anywhere mcpctl writes holds a token.
    assert not mcpctl.keyring.exists()
    for path in [*home.rglob("*"), *isolated.rglob("*")]:
        if path.is_file():
            assert TOKEN_PREFIX.encode() not in path.read_bytes(), path
    assert mcpctl("auth", "logout", "docs").code == 0
    assert mcpctl("health", "docs").code == 1
    mcpctl.assert_no_token_leaked(server)
