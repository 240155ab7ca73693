"""What approving a server lets happen, as ``mcpctl trust`` shows it: the command line or
URL, the working dir, and the names (never the values) of its secrets and environment."""

from __future__ import annotations

from mcpctl import ServerEntry
from mcpctl.config.model import AuthConfig
from mcpctl.config.trustdescribe import ServerView, describe

TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"


def test_a_stdio_server_shows_its_command_line_env_names_and_secrets() -> None:
    entry = ServerEntry(
        command="my tool",
        args=("--db", "${DB_URL}", TOKEN, "a b"),
        env={"GH": "${GITHUB_TOKEN}", "MODE": "fast", "DB": "${DB_URL}"},
        cwd="${HOME}/srv",
        inherit_env=("AWS_PROFILE",),
        enabled=False,
    )
    view = describe("s", entry, "new")
    assert view == ServerView(
        name="s",
        state="new",
        enabled=False,
        transport="stdio",
        runs="'my tool' --db '${DB_URL}' '****' 'a b'",  # a literal secret never shown
        connects=None,
        cwd="${HOME}/srv",
        env=("GH", "MODE", "DB"),
        inherits=("AWS_PROFILE",),
        headers=(),
        auth=None,
        secrets=("DB_URL", "GITHUB_TOKEN", "HOME"),  # each once, in the order they occur
        helper=None,
    )
    assert view.to_dict() == {
        "name": "s", "state": "new", "enabled": False, "transport": "stdio",
        "runs": "'my tool' --db '${DB_URL}' '****' 'a b'", "connects": None,
        "cwd": "${HOME}/srv", "env": ["GH", "MODE", "DB"], "inherits": ["AWS_PROFILE"],
        "headers": [], "auth": None, "secrets": ["DB_URL", "GITHUB_TOKEN", "HOME"],
        "headers_helper": None,
    }  # fmt: skip
    assert TOKEN not in str(view.to_dict())


def test_a_command_alone_and_the_whole_environment() -> None:
    view = describe("s", ServerEntry(command="${BIN}", inherit_env=True), "changed")
    assert (view.runs, view.state, view.enabled, view.inherits) == (
        "'${BIN}'",
        "changed",
        True,
        True,
    )
    assert view.secrets == ("BIN",) and view.cwd is None and view.env == ()
    assert view.to_dict()["inherits"] is True


def test_a_remote_server_shows_its_url_headers_and_how_it_signs_in() -> None:
    entry = ServerEntry(
        url="https://${HOST}/mcp",
        transport="sse",
        headers={"X-Team": "${TEAM}", "X-Key": TOKEN},
        auth=AuthConfig(
            "oauth", client_id="${CLIENT_ID}", client_secret="${CLIENT_SECRET}", scopes=("r",)
        ),
    )
    view = describe("r", entry, "trusted", helper="get-headers --team x")
    assert (view.runs, view.connects, view.transport) == (None, "https://${HOST}/mcp", "sse")
    assert view.headers == ("X-Team", "X-Key")
    assert view.auth == "oauth"
    assert view.secrets == ("HOST", "TEAM", "CLIENT_ID", "CLIENT_SECRET")
    assert view.helper == "get-headers --team x"
    assert view.to_dict()["headers_helper"] == "get-headers --team x"
    assert view.to_dict()["connects"] == "https://${HOST}/mcp"


def test_every_credential_of_auth_names_its_secret() -> None:
    bearer = ServerEntry(url="https://h.example/mcp", auth=AuthConfig("bearer", token="${TOK}"))
    assert describe("b", bearer, "new").secrets == ("TOK",)
    assert describe("b", bearer, "new").auth == "bearer"
    header = ServerEntry(
        url="https://h.example/mcp", auth=AuthConfig("header", name="X-Key", value="${KEY}")
    )
    assert describe("h", header, "new").secrets == ("KEY",)
    basic = ServerEntry(
        url="https://h.example/mcp",
        auth=AuthConfig("basic", username="${USER_NAME}", password="${PASSWORD}"),
    )
    assert describe("p", basic, "new").secrets == ("USER_NAME", "PASSWORD")
    none = ServerEntry(url="https://h.example/mcp", auth=AuthConfig("none"))
    assert describe("n", none, "new").auth is None
    assert describe("n", none, "new").secrets == ()
    plain = describe("x", ServerEntry(url="https://h.example/mcp"), "new")
    assert plain.auth is None and plain.transport == "streamable-http"
