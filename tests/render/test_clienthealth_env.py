"""What ``health --as`` says about the environment a client starts a server with."""

from __future__ import annotations

from pathlib import Path

from mcpctl.config.model import ServerEntry
from mcpctl.render.claudeapproval import Approval
from mcpctl.render.clienthealth_env import approval_reason, builder, difference, environments

ENVIRON = {"PATH": "/usr/bin", "HOME": "/home/u", "SHELL_ONLY": "x", "TOKEN": "t0k"}


def test_the_same_environment_makes_no_difference() -> None:
    assert difference("cline", {"A": "1"}, {"A": "1"}) is None
    assert difference("cline", {}, {}) is None


def test_what_the_client_lacks_changes_and_adds_is_named_never_shown() -> None:
    mine = {"SSL_CERT_FILE": "/ca.pem", "PATH": "/usr/bin", "KEY": "secret-mine"}
    theirs = {"PATH": "/usr/bin", "KEY": "secret-theirs", "EXTRA": "e"}
    said = difference("cursor", theirs, mine)
    assert said == (
        "cursor does not pass SSL_CERT_FILE, which mcpctl does; "
        "cursor passes another value of KEY; "
        "cursor passes 1 variable mcpctl does not (EXTRA)"
    )
    assert "secret" not in said


def test_each_kind_of_difference_alone() -> None:
    assert (
        difference("zed", {}, {"B": "1", "A": "1"}) == "zed does not pass A, B, which mcpctl does"
    )
    assert difference("zed", {"A": "2"}, {"A": "1"}) == "zed passes another value of A"
    assert difference("zed", {"B": "1", "A": "1"}, {}) == (
        "zed passes 2 variables mcpctl does not (A, B)"
    )


def test_five_names_are_listed_and_the_rest_counted() -> None:
    five = {f"V{i}": "x" for i in range(5)}
    assert difference("zed", five, {}) == (
        "zed passes 5 variables mcpctl does not (V0, V1, V2, V3, V4)"
    )
    seven = {f"V{i}": "x" for i in range(7)}
    assert difference("zed", {}, seven) == (
        "zed does not pass V0, V1, V2, V3, V4 and 2 more, which mcpctl does"
    )


def test_builder_gives_the_server_what_the_client_would() -> None:
    entry = ServerEntry(command="srv", env={"TOKEN": "own"}, inherit_env=("SHELL_ONLY",))
    whole = builder("cursor")(entry, ENVIRON)  # passes its whole environment
    assert whole == {**ENVIRON, "TOKEN": "own"}
    # Codex passes its few variables and those the entry lists, the entry's env on top.
    few = builder("codex")(entry, ENVIRON)
    assert few == {"PATH": "/usr/bin", "HOME": "/home/u", "SHELL_ONLY": "x", "TOKEN": "own"}
    assert builder("cline")(ServerEntry(command="srv"), ENVIRON) == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
    }


def test_environments_are_the_clients_from_theirs_and_mcpctls_from_mine() -> None:
    theirs = ServerEntry(command="srv", env={"WHO": "theirs"})
    mine = ServerEntry(command="srv", env={"WHO": "mine"}, inherit_env=("TOKEN",))
    as_client, as_mcpctl = environments("cursor", theirs, mine, ENVIRON)
    assert as_client == {**ENVIRON, "WHO": "theirs"}
    assert as_mcpctl["WHO"] == "mine" and as_mcpctl["TOKEN"] == "t0k"
    assert "SHELL_ONLY" not in as_mcpctl and as_mcpctl["PATH"] == "/usr/bin"


def test_a_rejected_server_names_the_setting_that_rejects_it(tmp_path: Path) -> None:
    file = tmp_path / ".mcp.json"
    setting = f"{tmp_path}/.claude/settings.json: disabledMcpjsonServers"
    assert approval_reason("s", file, Approval("rejected", setting)) == (
        f"rejected in Claude Code's settings ({setting}): Claude Code does not start it; "
        "remove it from that list to be asked again"
    )


def test_a_pending_server_says_how_to_approve_it(tmp_path: Path) -> None:
    file = tmp_path / "proj" / ".mcp.json"
    local = tmp_path / "proj" / ".claude" / "settings.local.json"
    assert approval_reason("github", file, Approval("pending")) == (
        "pending approval: Claude Code does not start a server of a project's .mcp.json until "
        f"you approve it; run claude in {tmp_path / 'proj'} and approve it (or /mcp there), or "
        f'add "enabledMcpjsonServers": ["github"] to {local}'
    )
