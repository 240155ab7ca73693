"""``needs_auth``: the state of a server that asks for a sign-in, or whose OAuth sign-in is
missing -- against the OAuth-protected test server, through the CLI as a subprocess."""

from __future__ import annotations

from typing import Any

import pytest

from tests.auth.conftest import Mcpctl, oauth_entry, sign_in

pytestmark = pytest.mark.slow


def test_a_server_that_answers_401_with_a_challenge_needs_auth(
    mcpctl: Mcpctl, oauth_server: Any
) -> None:
    server = oauth_server()
    mcpctl.config({"docs": {"url": server.url}})  # no auth in the entry: no token sent
    health = mcpctl("health", "docs", "--json")
    assert health.code == 1, health.stdout + health.stderr
    mcp = health.json["data"]["mcps"][0]
    assert mcp["status"] == "needs_auth" and not mcp["healthy"]
    assert mcp["error"]["code"] == "auth_required"
    assert "asks for a sign-in (Bearer)" in mcp["error"]["message"]
    assert "mcpctl auth docs" in mcp["error"]["hint"]
    assert health.json["data"]["summary"]["by_status"]["needs_auth"] == 1
    human = mcpctl("health", "docs")
    assert human.code == 1 and "\tneeds_auth\t" in human.stdout
    assert "mcpctl auth docs" in human.stderr and "1 needs_auth" in human.stderr
    # Only unhealthy servers fail the run: a sign-in that is needed does not.
    tolerated = mcpctl("health", "docs", "--fail-on", "unhealthy", "--json")
    assert tolerated.code == 0 and tolerated.json["ok"] is True
    assert mcpctl("health", "docs", "--fail-on", "needs_auth").code == 1


def test_an_oauth_entry_without_a_sign_in_needs_auth_until_signed_in(
    mcpctl: Mcpctl, oauth_server: Any
) -> None:
    server = oauth_server()
    mcpctl.config({"docs": oauth_entry(server)})
    health = mcpctl("health", "docs", "--json")
    assert health.code == 1
    mcp = health.json["data"]["mcps"][0]
    assert mcp["status"] == "needs_auth"
    assert "there is none stored" in mcp["error"]["message"]
    assert "mcpctl auth docs" in mcp["error"]["hint"]
    report = mcpctl("report", "--probe", "--json")
    assert report.code == 1
    (entry,) = report.json["data"]["servers"]
    assert entry["status"] == "needs_auth" and entry["error"] == "auth_required"
    assert "1 failed (1 needs a sign-in)" in report.json["data"]["headline"]
    text = mcpctl("report", "--probe")
    assert "docs (needs a sign-in: mcpctl auth docs)" in text.stdout
    assert sign_in(mcpctl, "docs")[0].code == 0
    after = mcpctl("health", "docs", "--json")
    assert after.code == 0, after.stdout + after.stderr
    assert after.json["data"]["mcps"][0]["status"] == "healthy"
    mcpctl.assert_no_token_leaked(server)
