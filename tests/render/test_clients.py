"""Client targets: their documents, placeholders, warnings, file locations and import.

The goldens (tests/data/render/golden/<client>.<ext>) are the fixture rendered for each
client; regenerate them with MCPCTL_UPDATE_GOLDEN=1.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpctl.config.checks import entry_from_data
from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.errors import UsageError
from mcpctl.probe.serverenv import TRUST_ENV
from mcpctl.render.base import Places, RenderRequest
from mcpctl.render.targets import TARGET_MODULES, get_target
from tests.golden import check_golden

DATA = Path(__file__).resolve().parent.parent / "data" / "render"
CLIENTS = [name for name, module in TARGET_MODULES.items() if ".clients" in module]
EXT = {"json": "json", "toml": "toml", "yaml": "yaml"}
U = "https://mcp.example.com/mcp"


def fixture() -> dict[str, ServerEntry]:
    data = json.loads((DATA / "fixture.json").read_text("utf-8"))
    entries = {name: entry_from_data(name, value)[0] for name, value in data.items()}
    return {name: e for name, e in entries.items() if e is not None and e.enabled}


def render(client: str, entries: dict[str, ServerEntry], **kw: Any) -> Any:
    kw.setdefault("environ", {})
    return get_target(client).render(RenderRequest(entries, **kw))


def load(client: str, text: str) -> Any:
    fmt = get_target(client).file_format
    if fmt == "toml":
        return tomllib.loads(text)
    if fmt == "yaml":
        return yaml.safe_load(text)
    return json.loads(text)


def server(client: str, text: str, name: str) -> Any:
    """The object the client holds for ``name`` in a rendered document (None: left out)."""
    doc = load(client, text)
    node = doc
    for key in get_target(client).section:
        node = node.get(key, {})
    if isinstance(node, list):
        return next((dict(s) for s in node if s.get("name") == name), None)
    return node.get(name)


def args_of(client: str, obj: dict[str, Any]) -> list[str]:
    if client == "opencode":
        return list(obj["command"][1:])
    return list(obj.get("args", []))


# --- goldens --------------------------------------------------------------------------


def test_there_are_many_clients() -> None:
    assert len(CLIENTS) >= 16


@pytest.mark.parametrize("client", CLIENTS)
def test_golden(client: str) -> None:
    target = get_target(client)
    rendered = render(client, fixture())
    golden = DATA / "golden" / f"{client}.{EXT[target.file_format]}"
    check_golden(golden, rendered.text)
    assert rendered.text.endswith("\n") and not rendered.holds_secrets
    assert render(client, fixture()).text == rendered.text, "render is deterministic"


@pytest.mark.parametrize("client", CLIENTS)
def test_golden_reads_back_as_what_the_client_can_express(client: str) -> None:
    target: Any = get_target(client)
    parsed = target.parse(render(client, fixture()).text)
    expected = {n: x for n, e in fixture().items() if (x := target.expressible(e)) is not None}
    assert parsed.entries == expected
    assert parsed.warnings == []


# --- transports -----------------------------------------------------------------------

LEFT_OUT = None
SHAPES: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]] = {
    "claude-desktop": ({"command": "run"}, {"command": "npx", "args": ["-y", "mcp-remote", U]},
                       {"args": ["-y", "mcp-remote", U, "--transport", "sse-only"]}),
    "claude-code": ({"type": "stdio", "command": "run"}, {"type": "http", "url": U},
                    {"type": "sse", "url": U}),
    "vscode": ({"type": "stdio", "command": "run"}, {"type": "http", "url": U},
               {"type": "sse", "url": U}),
    "cursor": ({"command": "run"}, {"url": U}, {"url": U}),
    "windsurf": ({"command": "run"}, {"serverUrl": U}, {"serverUrl": U}),
    "gemini": ({"command": "run"}, {"httpUrl": U}, {"url": U}),
    "qwen-code": ({"command": "run"}, {"httpUrl": U}, {"url": U}),
    "codex": ({"command": "run"}, {"url": U}, LEFT_OUT),
    "zed": ({"command": "run"}, {"url": U}, {"url": U}),
    "cline": ({"type": "stdio", "command": "run"}, {"type": "streamableHttp", "url": U},
              {"type": "sse", "url": U}),
    "roo-code": ({"type": "stdio", "command": "run"}, {"type": "streamable-http", "url": U},
                 {"type": "sse", "url": U}),
    "continue": ({"type": "stdio", "command": "run"}, {"type": "streamable-http", "url": U},
                 {"type": "sse", "url": U}),
    "lm-studio": ({"command": "run"}, {"url": U}, {"url": U}),
    "opencode": ({"type": "local", "command": ["run"]}, {"type": "remote", "url": U},
                 {"type": "remote", "url": U}),
    "amp": ({"command": "run"}, {"url": U}, {"url": U}),
    "goose": ({"type": "stdio", "cmd": "run"}, {"type": "streamable_http", "uri": U}, LEFT_OUT),
    "kiro": ({"command": "run"}, {"url": U}, {"url": U}),
    "copilot-cli": ({"type": "stdio", "command": "run"}, {"type": "http", "url": U},
                    {"type": "sse", "url": U}),
}  # fmt: skip


def test_every_client_has_its_shapes() -> None:
    assert set(SHAPES) == set(CLIENTS)


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("transport", ["stdio", "streamable-http", "sse"])
def test_transport_mapping(client: str, transport: str) -> None:
    entry = ServerEntry(command="run") if transport == "stdio" else ServerEntry(
        url=U, transport=transport
    )  # fmt: skip
    rendered = render(client, {"srv": entry})
    expected = SHAPES[client][["stdio", "streamable-http", "sse"].index(transport)]
    obj = server(client, rendered.text, "srv")
    if expected is LEFT_OUT:
        assert obj is None
        assert any(w.startswith("srv: transport ") and "SSE" in w for w in rendered.warnings)
        return
    assert obj is not None and expected.items() <= obj.items(), obj
    parsed = get_target(client).parse(rendered.text).entries["srv"]
    if transport == "stdio":
        assert (parsed.command, parsed.transport) == ("run", None)
        return
    assert parsed.url == U
    if not any(w.startswith("srv: transport ") for w in rendered.warnings):
        assert parsed.transport == transport


@pytest.mark.parametrize("client", CLIENTS)
def test_sse_is_kept_or_warned(client: str) -> None:
    rendered = render(client, {"srv": ServerEntry(url=U, transport="sse")})
    parsed = get_target(client).parse(rendered.text).entries
    if parsed.get("srv") is None or parsed["srv"].transport != "sse":
        assert any(w.startswith("srv: transport ") for w in rendered.warnings)


# --- placeholders ---------------------------------------------------------------------

ARG = "--token=${API_TOKEN}"
SPELLED = {
    "claude-desktop": ARG, "zed": ARG, "cline": ARG, "lm-studio": ARG, "codex": ARG,
    "goose": ARG,  # no expansion: kept as written, with a warning
    "claude-code": ARG, "copilot-cli": ARG, "gemini": ARG, "qwen-code": ARG, "amp": ARG,
    "kiro": ARG,
    "vscode": "--token=${input:API_TOKEN}", "cursor": "--token=${env:API_TOKEN}",
    "windsurf": "--token=${env:API_TOKEN}", "roo-code": "--token=${env:API_TOKEN}",
    "opencode": "--token={env:API_TOKEN}", "continue": "--token=${{ secrets.API_TOKEN }}",
}  # fmt: skip
EXPANDS_NOTHING = {"claude-desktop", "zed", "cline", "lm-studio", "codex", "goose"}
KEEPS_DEFAULTS = {"claude-code", "copilot-cli"}


def test_every_client_has_a_spelling() -> None:
    assert set(SPELLED) == set(CLIENTS)


@pytest.mark.parametrize("client", CLIENTS)
def test_placeholders_are_spelled_the_clients_way_and_read_back(client: str) -> None:
    rendered = render(client, {"srv": ServerEntry(command="run", args=(ARG,))})
    obj = server(client, rendered.text, "srv")
    assert args_of(client, obj) == [SPELLED[client]]
    unexpanded = [w for w in rendered.warnings if w.startswith("srv: args keeps its")]
    assert bool(unexpanded) == (client in EXPANDS_NOTHING)
    parsed = get_target(client).parse(rendered.text)
    assert parsed.entries["srv"].args == (ARG,)


@pytest.mark.parametrize("client", sorted(set(CLIENTS) - EXPANDS_NOTHING))
def test_defaults_are_kept_or_dropped_with_a_warning(client: str) -> None:
    rendered = render(client, {"srv": ServerEntry(command="run", args=("${DIR:-/srv/x}",))})
    back = get_target(client).parse(rendered.text).entries["srv"].args
    if client in KEEPS_DEFAULTS:
        assert back == ("${DIR:-/srv/x}",) and rendered.warnings == []
    else:
        assert back == ("${DIR}",)
        assert rendered.warnings == [
            f"srv: args loses its placeholder default: {get_target(client).label} "
            "has no ${VAR:-default}"
        ]


def test_vscode_secrets_become_password_inputs_and_other_variables_env() -> None:
    entry = ServerEntry(
        command="run", args=("${WORK_DIR}",), env={"GITHUB_TOKEN": "${GITHUB_TOKEN}"}
    )
    remote = ServerEntry(url=U, headers={"X-Api-Key": "${SEARCH_API_KEY}"})
    doc = json.loads(render("vscode", {"a": entry, "b": remote}).text)
    assert doc["servers"]["a"]["args"] == ["${env:WORK_DIR}"]
    assert doc["servers"]["a"]["env"] == {"GITHUB_TOKEN": "${input:GITHUB_TOKEN}"}
    assert doc["servers"]["b"]["headers"] == {"X-Api-Key": "${input:SEARCH_API_KEY}"}
    assert doc["inputs"] == [
        {"type": "promptString", "id": "GITHUB_TOKEN", "description": "GITHUB_TOKEN for a",
         "password": True},
        {"type": "promptString", "id": "SEARCH_API_KEY", "description": "SEARCH_API_KEY for b",
         "password": True},
    ]  # fmt: skip


def test_vscode_template_inputs_are_merged_by_id() -> None:
    template = {"inputs": [{"type": "promptString", "id": "OTHER", "description": "o"},
                           {"type": "promptString", "id": "GITHUB_TOKEN", "description": "old"}]}  # fmt: skip
    entry = ServerEntry(command="run", env={"GITHUB_TOKEN": "${GITHUB_TOKEN}"})
    doc = json.loads(render("vscode", {"a": entry}, template=template).text)
    assert [(i["id"], i["description"]) for i in doc["inputs"]] == [
        ("OTHER", "o"), ("GITHUB_TOKEN", "GITHUB_TOKEN for a")
    ]  # fmt: skip


def test_codex_takes_exact_placeholders_from_the_environment() -> None:
    remote = ServerEntry(
        url=U,
        headers={"X-Api-Key": "${SEARCH_API_KEY}", "X-Team": "t-${TEAM}"},
        auth=AuthConfig("bearer", token="${LEGACY_TOKEN}"),
    )
    local = ServerEntry(command="run", inherit_env=("LANG", "TZ"), timeout=1500)
    rendered = render("codex", {"r": remote, "l": local})
    doc = tomllib.loads(rendered.text)["mcp_servers"]
    assert doc["r"]["bearer_token_env_var"] == "LEGACY_TOKEN"
    assert doc["r"]["env_http_headers"] == {"X-Api-Key": "SEARCH_API_KEY"}
    assert doc["r"]["http_headers"] == {"X-Team": "t-${TEAM}"}
    # Codex passes only what env_vars lists: the trust and proxy settings too, as mcpctl does.
    assert doc["l"]["env_vars"] == ["LANG", "TZ", *TRUST_ENV]
    assert doc["l"]["startup_timeout_ms"] == 1500
    assert rendered.warnings == ["r: headers.X-Team keeps its ${VAR} placeholders as written: "
                                 "Codex does not expand them here (--secrets inline writes the values)"]  # fmt: skip
    parsed = get_target("codex").parse(rendered.text).entries
    assert parsed["r"].auth == AuthConfig("bearer", token="${LEGACY_TOKEN}")
    assert parsed["r"].headers == {"X-Api-Key": "${SEARCH_API_KEY}", "X-Team": "t-${TEAM}"}
    assert parsed["l"].inherit_env == ("LANG", "TZ") and parsed["l"].timeout == 1500


def test_goose_env_keys_for_variables_of_their_own_name() -> None:
    entry = ServerEntry(command="run", env={"API_TOKEN": "${API_TOKEN}", "MODE": "fast"})
    rendered = render("goose", {"g": entry})
    obj = server("goose", rendered.text, "g")
    assert obj["env_keys"] == ["API_TOKEN"] and obj["envs"] == {"MODE": "fast"}
    assert rendered.warnings == []
    assert get_target("goose").parse(rendered.text).entries["g"].env == dict(entry.env)


def test_claude_desktop_bridge_keeps_secrets_out_of_args() -> None:
    remote = ServerEntry(url=U, headers={"X-Api-Key": "${KEY}", "X-Team": "a b", "X-C": "c"},
                         tools=ToolFilter(deny=("delete_*",)))  # fmt: skip
    rendered = render("claude-desktop", {"r": remote})
    obj = server("claude-desktop", rendered.text, "r")
    assert obj["args"] == [
        "-y", "mcp-remote", U, "--header", "X-Api-Key:${MCP_HEADER_X_API_KEY}",
        "--header", "X-Team:${MCP_HEADER_X_TEAM}", "--header", "X-C:c",
        "--ignore-tool", "delete_*",
    ]  # fmt: skip
    assert obj["env"] == {"MCP_HEADER_X_API_KEY": "${KEY}", "MCP_HEADER_X_TEAM": "a b"}
    back = get_target("claude-desktop").parse(rendered.text).entries["r"]
    assert back.url == U and back.headers == dict(remote.headers) and back.tools == remote.tools


# --- warnings and secrets -------------------------------------------------------------

FULL_STDIO = ServerEntry(
    command="run", args=("a",), env={"MODE": "x"}, cwd="/srv", inherit_env=("LANG",),
    timeout=1500, tools=ToolFilter(allow=("read_*",), deny=("rm",)),
)  # fmt: skip
FULL_REMOTE = ServerEntry(
    url=U, headers={"X-Client": "mcpctl"}, timeout=2000,
    tools=ToolFilter(allow=("read",), deny=("rm",)), auth=AuthConfig("basic", username="u", password="${PW}"),
)  # fmt: skip


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("entry", [FULL_STDIO, FULL_REMOTE], ids=["stdio", "remote"])
def test_what_is_lost_is_warned_naming_server_and_field(client: str, entry: ServerEntry) -> None:
    target: Any = get_target(client)
    rendered = render(client, {"srv": entry})
    assert all(re.match(r"srv: [\w.-]+ ", w) for w in rendered.warnings), rendered.warnings
    fields = {w.split(" ")[1] for w in rendered.warnings}
    kept = target.expressible(entry)
    if kept is None:
        assert "transport" in fields
        return
    checks = {
        "cwd": kept.cwd != entry.cwd, "inherit_env": kept.inherit_env != entry.inherit_env,
        "timeout": kept.timeout != entry.timeout, "auth": entry.auth is not None,
        "tools.allow": (kept.tools or ToolFilter()).allow != entry.tools.allow,
        "tools.deny": (kept.tools or ToolFilter()).deny != entry.tools.deny,
    }  # fmt: skip
    for field, lost in checks.items():
        if lost:
            assert field in fields, (field, rendered.warnings)


@pytest.mark.parametrize("client", CLIENTS)
def test_inline_secrets(client: str) -> None:
    entry = ServerEntry(command="run", env={"API_TOKEN": "${API_TOKEN}"}, args=(ARG,))
    rendered = render(client, {"srv": entry}, inline_secrets=True,
                      environ={"API_TOKEN": "s3cr3t-value-123"})  # fmt: skip
    assert not any("s3cr3t" in w for w in rendered.warnings)
    if client in EXPANDS_NOTHING:
        assert rendered.holds_secrets and "s3cr3t-value-123" in rendered.text
    else:
        assert not rendered.holds_secrets and "s3cr3t" not in rendered.text


@pytest.mark.parametrize("client", CLIENTS)
def test_basic_auth_needs_inline_secrets(client: str) -> None:
    entry = ServerEntry(url=U, auth=AuthConfig("basic", username="me", password="${PW}"))
    plain = render(client, {"srv": entry})
    assert any(w.startswith("srv: auth is not written") for w in plain.warnings)
    assert "Basic " not in plain.text
    inline = render(client, {"srv": entry}, inline_secrets=True, environ={"PW": "pa55word"})
    assert inline.holds_secrets and "Basic bWU6cGE1NXdvcmQ=" in inline.text  # me:pa55word


@pytest.mark.parametrize("client", CLIENTS)
def test_oauth_renders_the_url_and_warns(client: str) -> None:
    entry = ServerEntry(url=U, auth=AuthConfig("oauth", scopes=("read",)))
    rendered = render(client, {"srv": entry})
    assert U in rendered.text
    assert any(w.startswith("srv: auth is OAuth") for w in rendered.warnings)


# --- locations ------------------------------------------------------------------------

L = {"linux": "linux", "darwin": "darwin", "win32": "win32"}
LOCATIONS: dict[str, dict[str, list[str]]] = {
    "claude-desktop": {"linux": ["$XDG/Claude/claude_desktop_config.json"],
                       "darwin": ["~/Library/Application Support/Claude/claude_desktop_config.json"],
                       "win32": ["%APPDATA%/Claude/claude_desktop_config.json"], "project": []},
    "claude-code": {"all": ["~/.claude.json"], "project": ["./.mcp.json"]},
    "vscode": {"linux": ["$XDG/Code/User/mcp.json"],
               "darwin": ["~/Library/Application Support/Code/User/mcp.json"],
               "win32": ["%APPDATA%/Code/User/mcp.json"], "project": ["./.vscode/mcp.json"]},
    "cursor": {"all": ["~/.cursor/mcp.json"], "project": ["./.cursor/mcp.json"]},
    "windsurf": {"all": ["~/.codeium/windsurf/mcp_config.json"], "project": []},
    "gemini": {"all": ["~/.gemini/settings.json"], "project": ["./.gemini/settings.json"]},
    "qwen-code": {"all": ["~/.qwen/settings.json"], "project": ["./.qwen/settings.json"]},
    "codex": {"all": ["~/.codex/config.toml"], "project": ["./.codex/config.toml"]},
    "zed": {"linux": ["$XDG/zed/settings.json"], "darwin": ["$XDG/zed/settings.json"],
            "win32": ["%APPDATA%/Zed/settings.json"], "project": ["./.zed/settings.json"]},
    "cline": {"linux": ["$XDG/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
                        "~/.cline/data/settings/cline_mcp_settings.json"],
              "darwin": ["~/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
                         "~/.cline/data/settings/cline_mcp_settings.json"],
              "win32": ["%APPDATA%/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
                        "~/.cline/data/settings/cline_mcp_settings.json"], "project": []},
    "roo-code": {"linux": ["$XDG/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json"],
                 "darwin": ["~/Library/Application Support/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json"],
                 "win32": ["%APPDATA%/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json"],
                 "project": ["./.roo/mcp.json"]},
    "continue": {"all": ["~/.continue/config.yaml"], "project": ["./.continue/mcpServers/mcpctl.yaml"]},
    "lm-studio": {"all": ["~/.lmstudio/mcp.json"], "project": []},
    "opencode": {"all": ["$XDG/opencode/opencode.json"], "project": ["./opencode.json"]},
    "amp": {"linux": ["$XDG/amp/settings.json"], "darwin": ["$XDG/amp/settings.json"],
            "win32": ["~/.config/amp/settings.json"], "project": ["./.amp/settings.json"]},
    "goose": {"linux": ["$XDG/goose/config.yaml"],
              "darwin": ["$XDG/goose/config.yaml", "~/Library/Application Support/Block/goose/config/config.yaml"],
              "win32": ["%APPDATA%/Block/goose/config/config.yaml"], "project": []},
    "kiro": {"all": ["~/.kiro/settings/mcp.json"], "project": ["./.kiro/settings/mcp.json"]},
    "copilot-cli": {"all": ["~/.copilot/mcp-config.json"], "project": ["./.github/mcp.json"]},
}  # fmt: skip


def places(tmp: Path, system: str, **environ: str) -> Places:
    env = {"APPDATA": str(tmp / "appdata"), "XDG_CONFIG_HOME": str(tmp / "xdg"), **environ}
    return Places(home=tmp / "home", cwd=tmp / "proj", system=system, environ=env)


def expand(tmp: Path, spec: str) -> Path:
    for token, base in (
        ("~/", "home"),
        ("./", "proj"),
        ("%APPDATA%/", "appdata"),
        ("$XDG/", "xdg"),
    ):
        if spec.startswith(token):
            return tmp / base / spec[len(token) :]
    raise AssertionError(spec)


def test_every_client_has_locations() -> None:
    assert set(LOCATIONS) == set(CLIENTS)


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("system", ["linux", "darwin", "win32"])
def test_locations(client: str, system: str, tmp_path: Path) -> None:
    target: Any = get_target(client)
    where = places(tmp_path, system)
    specs = LOCATIONS[client]
    user = specs.get(system, specs.get("all"))
    assert target.locations("user", where) == [expand(tmp_path, s) for s in user or []]
    assert target.locations("project", where) == [expand(tmp_path, s) for s in specs["project"]]


def test_locations_follow_the_clients_home_variables(tmp_path: Path) -> None:
    where = places(
        tmp_path, "linux", CODEX_HOME=str(tmp_path / "cx"), COPILOT_HOME=str(tmp_path / "cp")
    )
    assert get_target("codex").locations("user", where) == [tmp_path / "cx" / "config.toml"]
    assert get_target("copilot-cli").locations("user", where) == [
        tmp_path / "cp" / "mcp-config.json"
    ]
    bare = Places(tmp_path / "home", tmp_path, "linux", {})
    assert get_target("zed").locations("user", bare) == [
        tmp_path / "home/.config/zed/settings.json"
    ]


def test_continue_project_lists_the_other_block_files(tmp_path: Path) -> None:
    folder = tmp_path / "proj" / ".continue" / "mcpServers"
    folder.mkdir(parents=True)
    for name in ("b.yaml", "a.json", "notes.txt", "mcpctl.yaml"):
        (folder / name).write_text("{}", "utf-8")
    found = get_target("continue").locations("project", places(tmp_path, "linux"))
    assert found == [folder / "mcpctl.yaml", folder / "a.json", folder / "b.yaml"]


def test_client_attributes() -> None:
    for client in CLIENTS:
        target: Any = get_target(client)
        assert target.family == "client" and target.section and target.description
        assert target.file_format in ("json", "toml", "yaml")
    assert get_target("vscode").keyed_lists == {"inputs": "id"}
    assert get_target("codex").file_format == "toml"
    assert get_target("amp").section == ("amp.mcpServers",)


# --- importing hand-written files -----------------------------------------------------

SAMPLES: dict[str, tuple[str, dict[str, dict[str, Any]], list[str]]] = {
    # client: (file text, {server: fields the entry must have}, warnings that must be there)
    "claude-desktop": ('''{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]},
    "linear": {"command": "npx", "args": ["-y", "mcp-remote", "https://mcp.linear.app/sse", "--transport", "sse-only"]},
    "atlassian": {"command": "npx", "args": ["mcp-remote@latest", "https://mcp.atlassian.com/v1/sse", "--header", "Authorization:${AUTH}"],
                  "env": {"AUTH": "Bearer ${ATLASSIAN_TOKEN}"}},
    "custom": {"command": "npx", "args": ["mcp-remote", "https://x.example.com/mcp", "--debug"], "icon": "x.png"}
  }
}''', {"filesystem": {"command": "npx"}, "linear": {"url": "https://mcp.linear.app/sse", "transport": "sse"},
       "atlassian": {"auth": AuthConfig("bearer", token="${ATLASSIAN_TOKEN}")},
       "custom": {"command": "npx", "args": ("mcp-remote", "https://x.example.com/mcp", "--debug")}},
     ["custom: icon is not imported"]),
    "claude-code": ('''{
  "numStartups": 12,
  "projects": {"/home/me/app": {"mcpServers": {}}},
  "mcpServers": {
    "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp", "headers": {"X-Org": "${ORG:-acme}"}},
    "db": {"type": "stdio", "command": "uvx", "args": ["mcp-db"], "env": {"DB_URL": "${DATABASE_URL}"}, "oauth": {"clientId": "x"}}
  }
}''', {"sentry": {"headers": {"X-Org": "${ORG:-acme}"}, "transport": "streamable-http"},
       "db": {"env": {"DB_URL": "${DATABASE_URL}"}}}, ["db: oauth is not imported"]),
    "vscode": ('''// Workspace servers
{
  "inputs": [{"type": "promptString", "id": "perplexity-key", "description": "Key", "password": true}],
  "servers": {
    "perplexity": {"type": "stdio", "command": "npx", "args": ["-y", "server-perplexity-ask"],
                   "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}", "ROOT": "${workspaceFolder}", "N": 3},
                   "envFile": "${workspaceFolder}/.env"},
    /* remote */
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${input:github_pat}"},},
  },
}''', {"perplexity": {"env": {"PERPLEXITY_API_KEY": "${PERPLEXITY_KEY}", "ROOT": "${workspaceFolder}", "N": "3"}},
       "github": {"auth": AuthConfig("bearer", token="${GITHUB_PAT}")}}, ["perplexity: envFile is not imported"]),
    "cursor": ('''{"mcpServers": {
  "stripe": {"command": "npx", "args": ["-y", "@stripe/mcp"], "env": {"STRIPE_SECRET_KEY": "${env:STRIPE_KEY}"}, "envFile": ".env"},
  "context7": {"url": "https://mcp.context7.com/mcp", "headers": {"CONTEXT7_API_KEY": "${env:C7}"}}}}''',
     {"stripe": {"env": {"STRIPE_SECRET_KEY": "${STRIPE_KEY}"}}, "context7": {"headers": {"CONTEXT7_API_KEY": "${C7}"}}},
     ["stripe: envFile is not imported"]),
    "windsurf": ('''{"mcpServers": {
  "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GH}"}, "disabledTools": ["x"]},
  "figma": {"serverUrl": "https://mcp.figma.com/mcp", "headers": {"Authorization": "Bearer ${env:FIGMA}"}}}}''',
     {"github": {"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GH}"}}, "figma": {"url": "https://mcp.figma.com/mcp"}},
     ["github: disabledTools is not imported"]),
    "gemini": ('''{
  "theme": "GitHub",
  "mcpServers": {
    "pythonTools": {"command": "python", "args": ["-m", "my_server"], "cwd": "./srv", "env": {"API_KEY": "$EXTERNAL_API_KEY", "DB": "${DB_URL}"},
                    "timeout": 15000, "trust": true, "includeTools": ["safe_tool"], "excludeTools": ["rm"]},
    "legacy": {"url": "http://localhost:8080/sse"},
    "http": {"httpUrl": "http://localhost:3000/mcp", "headers": {"Authorization": "Bearer ${T}"}}
  }
}''', {"pythonTools": {"env": {"API_KEY": "${EXTERNAL_API_KEY}", "DB": "${DB_URL}"}, "cwd": "./srv", "timeout": 15000,
                       "tools": ToolFilter(allow=("safe_tool",), deny=("rm",))},
       "legacy": {"transport": "sse"}, "http": {"transport": "streamable-http", "auth": AuthConfig("bearer", token="${T}")}},
     ["pythonTools: trust is not imported"]),
    "qwen-code": ('''{"mcpServers": {"fs": {"command": "npx", "args": ["fs-mcp", "$HOME_DIR"], "trust": false}}}''',
                  {"fs": {"args": ("fs-mcp", "${HOME_DIR}")}}, ["fs: trust is not imported"]),
    "codex": ('''model = "gpt-5-codex"

# servers
[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-docs"]
env = { "DOCS_TOKEN" = "abc" }
env_vars = ["LANG"]
startup_timeout_sec = 20
tool_timeout_sec = 60

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }
env_http_headers = { "X-Team" = "FIGMA_TEAM" }
enabled = false
''', {"docs": {"env": {"DOCS_TOKEN": "abc"}, "inherit_env": ("LANG",), "timeout": 20000},
      "figma": {"auth": AuthConfig("bearer", token="${FIGMA_OAUTH_TOKEN}"), "enabled": False,
                "headers": {"X-Figma-Region": "us-east-1", "X-Team": "${FIGMA_TEAM}"}}},
     ["docs: tool_timeout_sec is not imported"]),
    "zed": ('''// Zed settings
{
  "theme": "One Dark",
  "context_servers": {
    "postgres": {"source": "custom", "command": {"path": "npx", "args": ["pg-mcp"], "env": {"PG": "x"}}, "settings": {}},
    "new-style": {"command": "uvx", "args": ["srv"], "enabled": false, "timeout": 60},
    "remote": {"url": "https://mcp.example.com/mcp", "headers": {"X-Key": "k"}},
    "from-extension": {"source": "extension", "settings": {"token": "x"}},
  },
}''', {"postgres": {"command": "npx", "env": {"PG": "x"}}, "new-style": {"enabled": False}, "remote": {"headers": {"X-Key": "k"}}},
     ["postgres: settings is not imported", "new-style: timeout is not imported", "from-extension: is provided by a Zed extension"]),
    "cline": ('''{"mcpServers": {
  "brave": {"command": "npx", "args": ["-y", "brave-search"], "env": {"BRAVE_API_KEY": "k"}, "autoApprove": ["search"], "disabled": false, "timeout": 60},
  "stream": {"type": "streamableHttp", "url": "https://s.example.com/mcp", "alwaysAllow": []},
  "old": {"url": "https://o.example.com/sse", "type": "sse"}}}''',
     {"brave": {"env": {"BRAVE_API_KEY": "k"}}, "stream": {"transport": "streamable-http"}, "old": {"transport": "sse"}},
     ["brave: autoApprove is not imported", "brave: timeout is not imported", "stream: alwaysAllow is not imported"]),
    "roo-code": ('''{"mcpServers": {
  "node-server": {"command": "node", "args": ["index.js"], "cwd": "/srv/node", "env": {"API_KEY": "${env:EXTERNAL_API_KEY}"}, "alwaysAllow": ["q"]},
  "analytics": {"type": "streamable-http", "url": "https://a.example.com/mcp", "headers": {"Authorization": "Bearer ${env:ANALYTICS_TOKEN}"}}}}''',
     {"node-server": {"cwd": "/srv/node", "env": {"API_KEY": "${EXTERNAL_API_KEY}"}},
      "analytics": {"auth": AuthConfig("bearer", token="${ANALYTICS_TOKEN}")}}, ["node-server: alwaysAllow is not imported"]),
    "continue": ('''name: My config
version: 0.0.1
schema: v1
models: []
mcpServers:
  - name: SQLite
    command: npx
    args: ["-y", "mcp-sqlite", "/tmp/db"]
    env:
      TOKEN: ${{ secrets.SQLITE_TOKEN }}
    faviconUrl: https://x/icon.png
  - name: Remote
    type: streamable-http
    url: https://r.example.com/mcp
    requestOptions:
      headers:
        X-Key: ${{ inputs.R_KEY }}
      timeout: 5
''', {"SQLite": {"env": {"TOKEN": "${SQLITE_TOKEN}"}}, "Remote": {"headers": {"X-Key": "${R_KEY}"}}},
     ["SQLite: faviconUrl is not imported", "Remote: requestOptions.timeout is not imported"]),
    "lm-studio": ('''{"mcpServers": {"hf": {"url": "https://huggingface.co/mcp", "headers": {"Authorization": "Bearer hf_x"}},
  "local": {"command": "uvx", "args": ["srv"], "comment": "mine"}}}''',
     {"hf": {"auth": AuthConfig("bearer", token="hf_x")}, "local": {"command": "uvx"}}, ["local: comment is not imported"]),
    "opencode": ('''{
  "$schema": "https://opencode.ai/config.json",
  // servers
  "mcp": {
    "everything": {"type": "local", "command": ["npx", "-y", "@modelcontextprotocol/server-everything"], "environment": {"K": "{env:MY_K}"}, "enabled": true},
    "jira": {"type": "remote", "url": "https://jira.example.com/mcp", "headers": {"X": "{env:JIRA}"}, "oauth": false, "timeout": 5000},
  },
}''', {"everything": {"command": "npx", "args": ("-y", "@modelcontextprotocol/server-everything"), "env": {"K": "${MY_K}"}},
       "jira": {"headers": {"X": "${JIRA}"}, "timeout": 5000}}, ["jira: oauth is not imported"]),
    "amp": ('''{"amp.dangerouslyAllowAll": false, "amp.mcpServers": {
  "playwright": {"command": "npx", "args": ["-y", "@playwright/mcp@latest", "--headless"], "includeTools": ["x"]},
  "sourcegraph": {"url": "https://sg.example.com/.api/mcp/v1", "headers": {"Authorization": "token ${SG_TOKEN}"}}}}''',
     {"playwright": {"command": "npx"}, "sourcegraph": {"headers": {"Authorization": "token ${SG_TOKEN}"}}},
     ["playwright: includeTools is not imported"]),
    "goose": ('''GOOSE_PROVIDER: anthropic
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  github:
    name: github
    type: stdio
    cmd: npx
    args: [-y, "@modelcontextprotocol/server-github"]
    envs: {GITHUB_TOOLSETS: repos}
    env_keys: [GITHUB_PERSONAL_ACCESS_TOKEN]
    enabled: false
    timeout: 300
    description: GitHub
    display_name: GitHub
  remote:
    type: streamable_http
    name: remote
    uri: https://r.example.com/mcp
    headers: {X-Key: k}
    available_tools: [read]
    envs: {}
    env_keys: []
    socket: null
''', {"github": {"env": {"GITHUB_TOOLSETS": "repos", "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"},
                 "enabled": False, "timeout": 300000, "description": "GitHub"},
      "remote": {"tools": ToolFilter(allow=("read",))}},
     ["developer: is a built-in Goose extension", "remote: socket is not imported"]),
    "kiro": ('''{"mcpServers": {
  "aws-docs": {"command": "uvx", "args": ["awslabs.aws-documentation-mcp-server@latest"], "env": {"FASTMCP_LOG_LEVEL": "ERROR", "T": "${TOKEN}"},
               "disabled": false, "autoApprove": [], "disabledTools": ["search"]},
  "api": {"url": "https://api.example.com/mcp", "headers": {"X-Custom-Header": "value"}}}}''',
     {"aws-docs": {"tools": ToolFilter(deny=("search",)), "env": {"FASTMCP_LOG_LEVEL": "ERROR", "T": "${TOKEN}"}},
      "api": {"headers": {"X-Custom-Header": "value"}}}, ["aws-docs: autoApprove is not imported"]),
    "copilot-cli": ('''{"mcpServers": {
  "playwright": {"type": "local", "command": "npx", "args": ["@playwright/mcp@latest"], "tools": ["*"], "env": {"K": "${MY_K:-x}"}},
  "cloudflare": {"type": "sse", "url": "https://docs.mcp.cloudflare.com/sse", "tools": ["search_docs"]}}}''',
     {"playwright": {"tools": None, "env": {"K": "${MY_K:-x}"}},
      "cloudflare": {"transport": "sse", "tools": ToolFilter(allow=("search_docs",))}}, []),
}  # fmt: skip


def test_every_client_has_a_sample() -> None:
    assert set(SAMPLES) == set(CLIENTS)


@pytest.mark.parametrize("client", CLIENTS)
def test_parse_a_hand_written_file(client: str) -> None:
    text, expected, warned = SAMPLES[client]
    parsed = get_target(client).parse(text)
    assert set(parsed.entries) == set(expected), parsed.warnings
    for name, fields in expected.items():
        entry = parsed.entries[name]
        for field, value in fields.items():
            assert getattr(entry, field) == value, (name, field)
    for fragment in warned:
        assert any(w.startswith(fragment) for w in parsed.warnings), (fragment, parsed.warnings)


def test_a_connection_in_a_transport_object_is_read() -> None:
    parsed = get_target("cline").parse(
        '{"mcpServers": {"a": {"transport": {"type": "stdio", "command": "uvx", "args": ["x"]}},'
        ' "b": {"transport": {"type": "sse", "url": "https://b.example.com/sse"}}}}'
    )
    assert parsed.entries["a"] == ServerEntry(command="uvx", args=("x",))
    assert parsed.entries["b"].transport == "sse" and parsed.warnings == []


def test_odd_names_are_made_valid() -> None:
    parsed = get_target("cursor").parse(
        '{"mcpServers": {"AWS API MCP Server": {"command": "uvx"}, "AWS-API-MCP-Server": {"command": "x"}}}'
    )
    assert list(parsed.entries) == ["AWS-API-MCP-Server", "AWS-API-MCP-Server-2"]
    assert parsed.warnings[0].startswith("AWS API MCP Server: imported as 'AWS-API-MCP-Server'")


def test_broken_entries_are_warnings() -> None:
    parsed = get_target("claude-code").parse(
        '{"mcpServers": {"a": {"args": []}, "b": "x", "c": {"command": 3}, "d": {"type": "ws", "url": "x"}, "ok": {"command": "y"}}}'
    )
    assert list(parsed.entries) == ["ok"]
    assert {w.split(":")[0] for w in parsed.warnings} >= {"a", "b", "c", "d"}


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("text", ["[1, 2]", '{"mcpServers": [', "42"])
def test_not_a_document_is_a_usage_error(client: str, text: str) -> None:
    with pytest.raises(UsageError):
        get_target(client).parse(text)


@pytest.mark.parametrize(
    ("client", "text"),
    [("claude-code", '{"mcpServers": []}'), ("vscode", '{"servers": "x"}'),
     ("codex", "mcp_servers = 3\n"), ("goose", "extensions: [1]\n"),
     ("continue", "mcpServers: 3\n"), ("amp", '{"amp.mcpServers": 1}')],
)  # fmt: skip
def test_servers_in_the_wrong_shape_are_a_usage_error(client: str, text: str) -> None:
    with pytest.raises(UsageError):
        get_target(client).parse(text)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_file_without_servers_has_none(client: str) -> None:
    fmt = get_target(client).file_format
    text = {"json": '{"other": 1}', "toml": "model = 'x'\n", "yaml": "other: 1\n"}[fmt]
    assert get_target(client).parse(text).entries == {}


@pytest.mark.parametrize("client", CLIENTS)
def test_template_keeps_other_settings_and_servers(client: str) -> None:
    target: Any = get_target(client)
    if target.file_format == "yaml":
        template: dict[str, Any] = {"other": 1}
    else:
        node: dict[str, Any] = {"kept": {"command": "keep"}}
        for key in reversed(target.section):
            node = {key: node}
        template = {"other": 1, **node}
    rendered = render(client, {"srv": ServerEntry(command="run")}, template=template)
    doc = load(client, rendered.text)
    assert doc["other"] == 1
    assert server(client, rendered.text, "srv") is not None
    if target.file_format != "yaml":
        assert server(client, rendered.text, "kept") == {"command": "keep"}


def test_template_with_the_wrong_shape_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        render("claude-code", {"a": ServerEntry(command="x")}, template={"mcpServers": [1]})


# --- round trip over generated entries ------------------------------------------------

VARS = st.sampled_from(["API_TOKEN", "HOME_DIR", "REGION", "X_KEY", "MODE"])
LITERAL = st.from_regex(r"[a-z0-9]([a-z0-9 ._/=-]{0,6}[a-z0-9])?", fullmatch=True)
PLACEHOLDER = st.builds(
    lambda v, d: "${" + v + (f":-{d}" if d is not None else "") + "}",
    VARS, st.one_of(st.none(), st.from_regex(r"[a-z0-9/._-]{1,6}", fullmatch=True)),
)  # fmt: skip
VALUE = st.lists(st.one_of(LITERAL, PLACEHOLDER), min_size=1, max_size=3).map("".join)
TOOL = st.sampled_from(["read_file", "write_*", "list", "delete"])
TOOLS = st.one_of(
    st.none(),
    st.builds(ToolFilter, allow=st.one_of(st.none(), st.lists(TOOL, min_size=1, max_size=2, unique=True).map(tuple)),
              deny=st.lists(TOOL, max_size=2, unique=True).map(tuple)),
)  # fmt: skip
TIMEOUT = st.one_of(
    st.none(), st.integers(1, 3_600_000), st.integers(1, 3600).map(lambda s: s * 1000)
)


@st.composite
def stdio_entries(draw: st.DrawFn) -> ServerEntry:
    env = draw(
        st.dictionaries(st.sampled_from(["API_TOKEN", "LANG", "MODE", "X_KEY"]), VALUE, max_size=3)
    )
    for key in draw(st.lists(st.sampled_from(list(env) or ["X"]), max_size=2)):
        env[key] = "${" + key + "}"  # Goose's env_keys
    return ServerEntry(
        command=draw(st.one_of(st.sampled_from(["node", "uvx", "/opt/bin/srv"]), VALUE)),
        args=tuple(draw(st.lists(VALUE, max_size=3))), env=env,
        cwd=draw(st.one_of(st.none(), VALUE)),
        inherit_env=draw(st.sampled_from([False, True, ("LANG",), ("LANG", "TZ")])),
        timeout=draw(TIMEOUT), tools=draw(TOOLS),
        description=draw(st.one_of(st.none(), LITERAL)), sensitive=draw(st.booleans()),
    )  # fmt: skip


@st.composite
def remote_entries(draw: st.DrawFn) -> ServerEntry:
    path = draw(st.one_of(st.just("mcp"), PLACEHOLDER.map(lambda p: f"{p}/mcp")))
    auth = draw(st.one_of(
        st.none(), VALUE.map(lambda v: AuthConfig("bearer", token=v)),
        st.builds(lambda n, v: AuthConfig("header", name=n, value=v),
                  st.sampled_from([None, "X-Auth"]), VALUE),
        st.just(AuthConfig("oauth", scopes=("read",))), st.just(AuthConfig("oauth")),
    ))  # fmt: skip
    return ServerEntry(
        url=f"https://{draw(st.sampled_from(['a', 'mcp.b']))}.example.com/{path}",
        transport=draw(st.sampled_from([None, "streamable-http", "sse"])),
        headers=draw(st.dictionaries(st.sampled_from(["X-Api-Key", "X-Client", "Authorization"]), VALUE, max_size=2)),
        auth=auth, timeout=draw(TIMEOUT), tools=draw(TOOLS),
        description=draw(st.one_of(st.none(), LITERAL)),
    )  # fmt: skip


CONFIGS = st.dictionaries(
    st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
    st.one_of(stdio_entries(), remote_entries()), min_size=1, max_size=4,
)  # fmt: skip


@pytest.mark.parametrize("client", CLIENTS)
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=CONFIGS)
def test_round_trip(client: str, config: dict[str, ServerEntry]) -> None:
    target: Any = get_target(client)
    parsed = target.parse(target.render(RenderRequest(config, environ={})).text)
    expected = {n: x for n, e in config.items() if (x := target.expressible(e)) is not None}
    assert parsed.entries == expected
    assert parsed.warnings == []


# --- what mutation testing found unpinned ---------------------------------------------------


def test_appdata_defaults_to_the_roaming_folder(tmp_path: Path) -> None:
    # APPDATA unset (a service account, a stripped environment): Windows' own default.
    bare = Places(tmp_path / "home", tmp_path, "win32", {})
    roaming = tmp_path / "home" / "AppData" / "Roaming"
    assert get_target("claude-desktop").locations("user", bare) == [
        roaming / "Claude" / "claude_desktop_config.json"
    ]
    assert get_target("vscode").locations("user", bare) == [roaming / "Code/User/mcp.json"]


def test_a_timeout_read_back_is_in_milliseconds_and_odd_values_stay() -> None:
    from mcpctl.render.clients import timeout_in

    assert timeout_in(30, 1000) == 30000 and type(timeout_in(1.5, 1000)) is int  # 1500
    assert timeout_in(0.0015, 1000) == pytest.approx(1.5)  # not cut to 1 ms
    assert timeout_in(2500, 1) == 2500
    assert timeout_in("30", 1000) == "30"  # left for validation to refuse, not "30" * 1000
    assert timeout_in(True, 1000) is True


def test_a_client_file_saved_with_a_byte_order_mark_is_read() -> None:
    from mcpctl.render.clients import load_jsonc

    assert load_jsonc('\ufeff{"servers": {}, // mine\n}', "VS Code") == {"servers": {}}


def test_a_number_too_long_to_read_is_a_usage_error_not_a_traceback() -> None:
    from mcpctl.render.clients import load_jsonc

    text = '{"a": ' + "1" * 5000 + "}"
    with pytest.raises(ValueError) as python:  # not a JSONDecodeError: no line, no column
        json.loads(text)
    with pytest.raises(UsageError) as caught:
        load_jsonc(text, "VS Code")
    # The positional parser says where.
    said = f"this is not a VS Code file: {python.value} (line 1, column 7)"
    assert caught.value.message == said


@pytest.mark.parametrize("client", sorted(set(CLIENTS) - EXPANDS_NOTHING - KEEPS_DEFAULTS))
def test_a_lost_default_is_warned_once_per_field(client: str) -> None:
    entry = ServerEntry(command="run", args=("${DIR:-/srv/x}", "${OUT:-/tmp}"))
    rendered = render(client, {"srv": entry})
    assert rendered.warnings == [
        f"srv: args loses its placeholder default: {get_target(client).label} "
        "has no ${VAR:-default}"
    ]


def test_names_made_valid_lose_only_what_is_not_allowed() -> None:
    parsed = get_target("cursor").parse(
        '{"mcpServers": {" my server! ": {"command": "a"}, "X-ray!": {"command": "b"}}}'
    )
    assert list(parsed.entries) == ["my-server", "X-ray"]
    long = "a" * 70 + "!"
    parsed = get_target("cursor").parse(
        f'{{"mcpServers": {{"!!!": {{"command": "a"}}, "{long}": {{"command": "b"}}}}}}'
    )
    assert list(parsed.entries) == ["server", "a" * 64]  # nothing left; the longest allowed


def test_numbers_as_env_values_become_strings_and_nothing_else_changes() -> None:
    from mcpctl.render.clients import env_strings

    assert env_strings({"N": 3, "F": 1.5, "B": True, "S": "x"}) == {
        "N": "3", "F": "1.5", "B": True, "S": "x"
    }  # fmt: skip
    assert env_strings(["not", "a", "mapping"]) == ["not", "a", "mapping"]


# Each client warns for exactly the fields it has no setting for: never for one it writes,
# never for one the entry does not have.
PLAIN_TOOLS = ServerEntry(
    command="run", cwd="/srv", inherit_env=("LANG",), timeout=2000,
    tools=ToolFilter(allow=("read",), deny=("rm",)),
)  # fmt: skip


@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_warns_for_exactly_the_fields_it_cannot_write(client: str) -> None:
    target: Any = get_target(client)
    rendered = render(client, {"srv": PLAIN_TOOLS})
    warned = {w.split(" ")[1] for w in rendered.warnings if " is not written: " in w}
    kept = target.expressible(PLAIN_TOOLS)
    assert kept is not None
    lost = {
        "cwd": kept.cwd != PLAIN_TOOLS.cwd,
        "inherit_env": kept.inherit_env != PLAIN_TOOLS.inherit_env,
        "timeout": kept.timeout != PLAIN_TOOLS.timeout,
        "tools.allow": (kept.tools or ToolFilter()).allow != ("read",),
        "tools.deny": (kept.tools or ToolFilter()).deny != ("rm",),
    }  # fmt: skip
    assert warned == {field for field, gone in lost.items() if gone}, rendered.warnings
    # An entry without any of those fields is written without a warning.
    assert render(client, {"srv": ServerEntry(command="run")}).warnings == []


def test_the_warnings_for_fields_a_client_cannot_write() -> None:
    rendered = render("claude-desktop", {"srv": PLAIN_TOOLS})
    assert rendered.warnings == [
        "srv: cwd is not written: Claude Desktop has no working-directory setting",
        "srv: inherit_env is not written: Claude Desktop decides what environment a server "
        "inherits",
        "srv: timeout is not written: Claude Desktop has no per-server timeout",
        "srv: tools.allow is not written: Claude Desktop has no tool allow-list here",
        "srv: tools.deny is not written: Claude Desktop has no tool deny-list here",
    ]


@pytest.mark.parametrize(
    ("tools", "warned"),
    [
        (ToolFilter(deny=("rm",)), ["tools.deny"]),  # no allow-list: every tool allowed
        (ToolFilter(allow=("read",)), ["tools.allow"]),  # an empty deny-list denies nothing
        (ToolFilter(allow=()), ["tools.allow"]),  # an empty allow-list allows nothing: lost
    ],
)
def test_only_the_tool_lists_an_entry_has_are_warned(tools: ToolFilter, warned: list[str]) -> None:
    rendered = render("cursor", {"srv": ServerEntry(command="run", tools=tools)})
    assert [w.split(" ")[1] for w in rendered.warnings] == warned


@pytest.mark.parametrize("client", ["claude-code", "cursor", "vscode"])
def test_auth_becomes_the_headers_a_client_sends(client: str) -> None:
    def headers(auth: AuthConfig, **kw: Any) -> tuple[Any, list[str]]:
        rendered = render(client, {"srv": ServerEntry(url=U, auth=auth)}, **kw)
        return server(client, rendered.text, "srv").get("headers"), rendered.warnings

    assert headers(AuthConfig("bearer", token="t0k")) == ({"Authorization": "Bearer t0k"}, [])
    assert headers(AuthConfig("header", value="k3y")) == ({"Authorization": "k3y"}, [])
    assert headers(AuthConfig("header", name="X-Key", value="k3y")) == ({"X-Key": "k3y"}, [])
    assert headers(AuthConfig("none")) == (None, [])
    label = get_target(client).label
    assert headers(AuthConfig("oauth")) == (
        None,
        [f"srv: auth is OAuth: sign-in happens in {label}"],
    )
    basic = AuthConfig("basic", username="me", password="${PW}")
    assert headers(basic) == (None, [
        "srv: auth is not written: a Basic header needs the resolved credentials "
        f"(--inline-secrets); {label} cannot build one"
    ])  # fmt: skip
    inline = headers(basic, inline_secrets=True, environ={"PW": "pa55word"})
    assert inline == ({"Authorization": "Basic bWU6cGE1NXdvcmQ="}, [])


def test_a_rendering_without_secrets_is_not_marked_as_holding_them() -> None:
    # (a file holding secrets is written owner-only)
    for client in CLIENTS:
        assert not render(client, {"srv": ServerEntry(command="run", env={"A": "b"})}).holds_secrets


def test_an_imported_remote_server_gets_its_transport_and_bearer_auth_back() -> None:
    from mcpctl.render.base import Parsed
    from mcpctl.render.clients import add_entry

    parsed = get_target("cursor").parse(
        f'{{"mcpServers": {{"u": {{"url": "{U}", "headers": {{"Authorization": "Bearer ${{T}}",'
        f' "X-Org": "o"}}}}, "b": {{"url": "{U}", "headers": {{"Authorization": "Basic abc"}}}},'
        f' "n": {{"url": "{U}"}}}}}}'
    )
    assert parsed.warnings == []
    assert parsed.entries == {
        "u": ServerEntry(url=U, transport="streamable-http", headers={"X-Org": "o"},
                         auth=AuthConfig("bearer", token="${T}")),
        "b": ServerEntry(url=U, transport="streamable-http", headers={"Authorization": "Basic abc"}),
        "n": ServerEntry(url=U, transport="streamable-http"),
    }  # fmt: skip
    # Auth the client file already names is kept; the header stays a header.
    parsed = Parsed()
    header = {"type": "header", "name": "X-Key", "value": "${K}"}
    add_entry(parsed, "a", {"url": U, "transport": "sse", "auth": header,
                            "headers": {"Authorization": "Bearer ${T}"}})  # fmt: skip
    assert parsed.entries == {"a": ServerEntry(
        url=U, transport="sse", headers={"Authorization": "Bearer ${T}"},
        auth=AuthConfig("header", name="X-Key", value="${K}"),
    )}  # fmt: skip


def test_an_entry_mcpctl_cannot_take_is_left_out_with_the_reasons() -> None:
    parsed = get_target("cursor").parse(
        '{"mcpServers": {"a": {"command": 3}, "ok": {"command": "y"}}}'
    )
    assert list(parsed.entries) == ["ok"]
    assert parsed.warnings == ["a.command: expected a string, got a number", "a: not imported"]


def test_settings_mcpctl_has_no_place_for_are_warned_by_name() -> None:
    parsed = get_target("cursor").parse(
        '{"mcpServers": {"s": {"command": "x", "envFile": ".env", "7": 1}}}'
    )
    assert parsed.warnings == [
        "s: envFile is not imported: a Cursor setting mcpctl does not have",
        "s: 7 is not imported: a Cursor setting mcpctl does not have",
    ]


def test_names_taken_get_the_next_free_number_within_64_characters() -> None:
    long = "b" * 64
    parsed = get_target("cursor").parse(
        f'{{"mcpServers": {{"{long}": {{"command": "a"}}, "{long}!": {{"command": "b"}},'
        f' "{long}?": {{"command": "c"}}, "x y": {{"command": "d"}}}}}}'
    )
    assert list(parsed.entries) == [long, "b" * 62 + "-2", "b" * 62 + "-3", "x-y"]
    assert parsed.warnings == [
        f"{long}!: imported as {'b' * 62 + '-2'!r} (names are letters, digits, '-' and '_')",
        f"{long}?: imported as {'b' * 62 + '-3'!r} (names are letters, digits, '-' and '_')",
        "x y: imported as 'x-y' (names are letters, digits, '-' and '_')",
    ]
