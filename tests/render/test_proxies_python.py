"""The two Python proxy targets, fastmcp and mcp-proxy-py (mcpctl/render/proxies_python.py).

What each writes for every kind of server, the exact warnings about what it leaves out
(server, field and reason), and how it reads its files back: FastMCP's tool transforms and
settings, the transport guessed from a url, mcp-proxy's bridge command line understood or
kept as a stdio server. test_proxies.py holds what the four proxy targets share.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.render import parse
from mcpctl.render.base import Parsed, RenderRequest
from mcpctl.render.targets import get_target

TAG = "mcpctl-allow"


def server(target: str, entry: ServerEntry, **kw: Any) -> tuple[dict[str, Any], list[str]]:
    kw.setdefault("environ", {})
    rendered = get_target(target).render(RenderRequest({"s": entry}, **kw))
    return json.loads(rendered.text)["mcpServers"]["s"], rendered.warnings


def read(target: str, **servers: dict[str, Any]) -> Parsed:
    return parse(target, json.dumps({"mcpServers": servers}))


def fields(warnings: list[str]) -> list[str]:
    """The ``server: field`` that begins each warning."""
    return [" ".join(w.split(" ")[:2]) for w in warnings]


# --- fastmcp: rendering ----------------------------------------------------------------------


def test_fastmcp_stdio_keeps_cwd_without_a_warning_and_warns_of_inherit_env_in_full() -> None:
    item, warnings = server("fastmcp", ServerEntry(command="node", cwd="/srv"))
    assert item == {"command": "node", "cwd": "/srv"} and warnings == []
    _, warnings = server("fastmcp", ServerEntry(command="node", inherit_env=True))
    assert warnings == [
        "s: inherit_env is left out: FastMCP gives a server the MCP SDK's default environment "
        "and env only: name the variables in env"
    ]


def test_fastmcp_remote_transport_headers_and_bearer_auth() -> None:
    item, warnings = server("fastmcp", ServerEntry(url="https://h/mcp"))
    assert item == {"url": "https://h/mcp", "transport": "http"} and warnings == []
    item, _ = server("fastmcp", ServerEntry(url="https://h/events", transport="sse"))
    assert item == {"url": "https://h/events", "transport": "sse"}
    entry = ServerEntry(url="https://h/mcp", headers={"X-A": "1"},
                        auth=AuthConfig("bearer", token="tok"))  # fmt: skip
    item, warnings = server("fastmcp", entry)
    assert item == {"url": "https://h/mcp", "transport": "http",
                    "headers": {"X-A": "1", "Authorization": "Bearer tok"}}  # fmt: skip
    assert warnings == []


def test_fastmcp_oauth_is_a_flag_and_its_warning_says_what_is_lost() -> None:
    item, warnings = server("fastmcp", ServerEntry(url="https://h/mcp", auth=AuthConfig("oauth")))
    assert item == {"url": "https://h/mcp", "transport": "http", "auth": "oauth"}
    assert warnings == [
        "s: auth (oauth): sign-in happens in FastMCP (a browser flow on first connect); "
        "scopes and client settings are not carried"
    ]


def test_fastmcp_remote_timeout_description_and_filters() -> None:
    entry = ServerEntry(url="https://h/mcp", timeout=1500, description="the docs",
                        tools=ToolFilter(allow=("t",)))  # fmt: skip
    item, _ = server("fastmcp", entry)
    assert item == {"url": "https://h/mcp", "transport": "http", "timeout": 1500,
                    "description": "the docs", "tools": {"t": {"tags": [TAG]}},
                    "include_tags": [TAG]}  # fmt: skip
    item, _ = server("fastmcp", ServerEntry(command="x", tools=ToolFilter(deny=("a", "b"))))
    assert item == {"command": "x", "tools": {"a": {"enabled": False}, "b": {"enabled": False}}}


# --- fastmcp: reading ------------------------------------------------------------------------


def test_fastmcp_reads_a_stdio_server_whole() -> None:
    parsed = read("fastmcp", s={"command": "node", "args": ["a.js"], "env": {"K": "v"},
                                "cwd": "/d", "timeout": 900, "description": "d",
                                "tools": {"x": {"enabled": False}}})  # fmt: skip
    assert parsed.entries["s"] == ServerEntry(command="node", args=("a.js",), env={"K": "v"},
                                              cwd="/d", timeout=900, description="d",
                                              tools=ToolFilter(deny=("x",)))  # fmt: skip
    assert parsed.warnings == []


def test_fastmcp_reads_a_remote_server_whole() -> None:
    parsed = read("fastmcp", s={"url": "https://h/mcp", "transport": "sse", "timeout": 700,
                                "description": "d",
                                "headers": {"X": "1", "Authorization": "Bearer tok"}})  # fmt: skip
    assert parsed.entries["s"] == ServerEntry(url="https://h/mcp", transport="sse", timeout=700,
                                              description="d", headers={"X": "1"},
                                              auth=AuthConfig("bearer", token="tok"))  # fmt: skip
    assert parsed.warnings == []


@pytest.mark.parametrize(
    ("data", "transport"),
    [
        ({"transport": "http"}, "streamable-http"),
        ({"transport": "streamable-http"}, "streamable-http"),
        ({"type": "sse"}, "sse"),
        ({"type": "http"}, "streamable-http"),
        ({"transport": "sse", "type": "http"}, "sse"),
    ],
)
def test_fastmcp_transport_or_type_names_the_transport(
    data: dict[str, str], transport: str
) -> None:
    parsed = read("fastmcp", s={"url": "https://h/sse", **data})
    assert parsed.entries["s"] == ServerEntry(url="https://h/sse", transport=transport)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "transport"),
    [
        ("https://h/sse", "sse"),
        ("https://h/sse/", "sse"),
        ("https://h/a/sse/b", "sse"),
        ("https://h/sse&x", "sse"),
        ("https://h/sse?k=1", "sse"),
        ("https://h/ssex", "streamable-http"),
        ("https://h/x-sse", "streamable-http"),
        ("https://h/mcp?path=/sse", "streamable-http"),
        ("https://sse.example.com/mcp", "streamable-http"),
    ],
)
def test_fastmcp_guesses_sse_from_a_path_with_sse_in_it_as_fastmcp_does(
    url: str, transport: str
) -> None:
    assert read("fastmcp", s={"url": url}).entries["s"].transport == transport


def test_fastmcp_fastmcp_only_settings_are_named_and_left_out() -> None:
    settings = {"keep_alive": True, "icon": "i", "authentication": "x", "sse_read_timeout": 5,
                "max_sse_event_size": 9}  # fmt: skip
    for base in ({"command": "x"}, {"url": "https://h/mcp"}):
        parsed = read("fastmcp", s={**base, **settings, "other": 1})
        assert parsed.warnings == [
            *(f"s: {key} is a FastMCP setting: not imported" for key in settings),
            "s: other is not a field mcpctl knows: not imported",
        ]


def test_fastmcp_an_entry_without_command_or_url_is_skipped() -> None:
    parsed = read("fastmcp", s={"args": ["x"]}, t={"command": "y"})
    assert list(parsed.entries) == ["t"]
    assert parsed.warnings == ["s: entry has neither command nor url: skipped"]


def test_fastmcp_auth_forms() -> None:
    parsed = read("fastmcp", a={"url": "https://h/mcp", "auth": "oauth"},
                  b={"url": "https://h/mcp", "auth": "tok"},
                  c={"url": "https://h/mcp", "auth": {"type": "oauth"}})  # fmt: skip
    assert parsed.entries["a"].auth == AuthConfig("oauth")
    assert parsed.entries["b"].auth == AuthConfig("bearer", token="tok")
    assert parsed.entries["c"] == ServerEntry(url="https://h/mcp", transport="streamable-http")
    assert parsed.warnings == ["c: auth is not a string: not imported"]


def test_fastmcp_tool_transforms_read_back_only_in_the_forms_written() -> None:
    parsed = read(
        "fastmcp",
        allow={"command": "x", "include_tags": [TAG],
               "tools": {"a": {"tags": [TAG]}, "b": {"enabled": False}}},
        tagged={"command": "x", "tools": {"a": {"tags": [TAG]}}},
        mine={"command": "x", "include_tags": ["mine"], "exclude_tags": ["old"]},
        two={"command": "x", "include_tags": [TAG, "mine"]},
        listed={"command": "x", "tools": ["a"]},
    )  # fmt: skip
    e = parsed.entries
    assert e["allow"].tools == ToolFilter(allow=("a",)), "an allow list denies nothing more"
    assert e["tagged"].tools is None
    assert e["mine"].tools is None and e["two"].tools is None and e["listed"].tools is None
    assert parsed.warnings == [
        "tagged: tools.a is a FastMCP tool transform: not imported",
        "mine: exclude_tags is a FastMCP setting: not imported",
        "mine: include_tags is a FastMCP setting: not imported",
        "two: include_tags is a FastMCP setting: not imported",
    ]


def test_fastmcp_an_empty_allow_list_reads_back_as_nothing_exposed() -> None:
    parsed = read("fastmcp", s={"command": "x", "include_tags": [TAG], "tools": {}})
    assert parsed.entries["s"].tools == ToolFilter(allow=()) and parsed.warnings == []


# --- mcp-proxy-py: rendering -----------------------------------------------------------------


def test_mcp_proxy_py_warnings_name_field_and_reason_in_full() -> None:
    entry = ServerEntry(command="uvx", cwd="/d", timeout=5, inherit_env=("LANG",),
                        tools=ToolFilter(allow=("a",)))  # fmt: skip
    item, warnings = server("mcp-proxy-py", entry)
    assert item == {"command": "uvx"}
    assert warnings == [
        "s: cwd is left out: mcp-proxy starts named servers in its own directory",
        "s: inherit_env is left out: named servers get the MCP SDK's default environment and "
        "env only (mcp-proxy --pass-environment passes everything to every server)",
        "s: timeout is left out: mcp-proxy has no timeout per named server",
        "s: tools is left out: mcp-proxy does not filter tools, so all of them are exposed",
    ]
    assert server("mcp-proxy-py", ServerEntry(command="uvx", args=("a",)))[1] == []


def test_mcp_proxy_py_a_remote_server_warns_of_timeout_and_tools_too() -> None:
    entry = ServerEntry(url="https://h/mcp", timeout=5, tools=ToolFilter(deny=("a",)))
    item, warnings = server("mcp-proxy-py", entry)
    assert item == {"command": "mcp-proxy", "args": ["https://h/mcp", "--transport",
                                                     "streamablehttp"]}  # fmt: skip
    assert [w.split(" ")[1] for w in warnings] == ["timeout", "tools"]


def test_mcp_proxy_py_bridge_with_basic_auth_keeps_the_other_headers() -> None:
    entry = ServerEntry(url="https://h/sse", transport="sse", headers={"X": "1"},
                        auth=AuthConfig("basic", username="me", password="pw"))  # fmt: skip
    item, warnings = server("mcp-proxy-py", entry)
    assert item["args"] == ["https://h/sse", "--transport", "sse", "--username", "me",
                            "--password", "pw", "-H", "X", "1"]  # fmt: skip
    assert warnings == []
    assert read("mcp-proxy-py", s=item).entries["s"] == entry


def test_mcp_proxy_py_bridge_login_placeholders_are_warned_by_field() -> None:
    entry = ServerEntry(url="https://h/mcp",
                        auth=AuthConfig("basic", username="${U}", password="${P}"))  # fmt: skip
    item, warnings = server("mcp-proxy-py", entry)
    assert item["args"][3:7] == ["--username", "${U}", "--password", "${P}"]
    assert fields(warnings) == ["s: auth.username", "s: auth.password"]
    request = RenderRequest({"s": entry}, inline_secrets=True, environ={"U": "me", "P": "pw"})
    rendered = get_target("mcp-proxy-py").render(request)
    args = json.loads(rendered.text)["mcpServers"]["s"]["args"]
    assert args[3:7] == ["--username", "me", "--password", "pw"]


def test_mcp_proxy_py_oauth_bridge_connects_without_credentials() -> None:
    entry = ServerEntry(url="https://h/mcp", headers={"X": "1"}, auth=AuthConfig("oauth"))
    item, warnings = server("mcp-proxy-py", entry)
    assert item["args"] == ["https://h/mcp", "--transport", "streamablehttp", "-H", "X", "1"]
    assert warnings == [
        "s: auth (oauth) is left out: mcp-proxy's client does not sign in, so it connects "
        "without credentials"
    ]


# --- mcp-proxy-py: reading -------------------------------------------------------------------


def test_mcp_proxy_py_reads_fields_it_does_not_know_with_a_warning() -> None:
    parsed = read("mcp-proxy-py", s={"command": "uvx", "args": ["a"], "env": {"K": "v"},
                                     "disabled": True, "transportType": "stdio", "x": 1})  # fmt: skip
    assert parsed.entries["s"] == ServerEntry(command="uvx", args=("a",), env={"K": "v"})
    assert parsed.warnings == [
        "s: disabled is not read by mcp-proxy: not imported",
        "s: transportType is not read by mcp-proxy: not imported",
        "s: x is not a field mcpctl knows: not imported",
    ]


def test_mcp_proxy_py_skips_what_has_no_command_or_no_valid_name() -> None:
    parsed = read("mcp-proxy-py", s={"args": ["a"]}, **{"bad name": {"command": "x"}},
                  ok={"command": "x", "enabled": True})  # fmt: skip
    assert parsed.entries == {"ok": ServerEntry(command="x")}
    assert parsed.warnings == [
        "s: command is missing: skipped",
        "bad name: name is not a server name (1-64 of A-Z a-z 0-9 _ -): skipped",
    ]


def test_mcp_proxy_py_a_disabled_bridge_is_a_disabled_remote_and_its_env_is_not_read() -> None:
    parsed = read("mcp-proxy-py", s={"command": "mcp-proxy", "enabled": False, "env": {"K": "v"},
                                     "args": ["https://h/mcp", "--transport", "streamablehttp"]})  # fmt: skip
    assert parsed.entries["s"] == ServerEntry(url="https://h/mcp", transport="streamable-http",
                                              enabled=False)  # fmt: skip
    assert parsed.warnings == ["s: env of the bridge is not imported"]


@pytest.mark.parametrize(
    "command",
    ["mcp-proxy", "/usr/local/bin/mcp-proxy", "C:\\tools\\mcp-proxy", "C:/tools/mcp-proxy"],
)
def test_mcp_proxy_py_the_bridge_program_is_found_by_its_file_name(command: str) -> None:
    parsed = read("mcp-proxy-py", s={"command": command, "args": ["https://h/sse"]})
    assert parsed.entries["s"] == ServerEntry(url="https://h/sse", transport="sse")


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("mcp-proxy", []),
        ("mcp-proxy", ["--port", "8080", "uvx", "x"]),
        ("mcp-proxy", ["ftp://h/x"]),
        ("mcp-proxy", ["h/mcp"]),
        ("mcp-proxy-server", ["https://h/mcp"]),
        ("/opt/mcp-proxy/bin/node", ["https://h/mcp"]),
        ("npx", ["https://h/mcp"]),
    ],
)
def test_mcp_proxy_py_other_commands_are_stdio_servers_without_a_word(
    command: str, args: list[str]
) -> None:
    parsed = read("mcp-proxy-py", s={"command": command, "args": args})
    assert parsed.entries["s"] == ServerEntry(command=command, args=tuple(args))
    assert parsed.warnings == []


@pytest.mark.parametrize(
    ("args", "entry"),
    [
        (["http://h/x"], ServerEntry(url="http://h/x", transport="sse")),
        (["https://h/x", "--transport=sse"], ServerEntry(url="https://h/x", transport="sse")),
        (["https://h/x", "--transport", "streamablehttp", "--headers", "A", "1", "-H", "B", "2"],
         ServerEntry(url="https://h/x", transport="streamable-http", headers={"A": "1", "B": "2"})),
        (["https://h/x", "-H", "X", "1", "-H", "Authorization", "Bearer t"],
         ServerEntry(url="https://h/x", transport="sse", headers={"X": "1"},
                     auth=AuthConfig("bearer", token="t"))),
        (["https://h/x", "--password", "p", "--username", "u", "-H", "Authorization", "Bearer t"],
         ServerEntry(url="https://h/x", transport="sse", headers={"Authorization": "Bearer t"},
                     auth=AuthConfig("basic", username="u", password="p"))),
    ],
)  # fmt: skip
def test_mcp_proxy_py_bridge_arguments_read_back_as_the_remote(
    args: list[str], entry: ServerEntry
) -> None:
    parsed = read("mcp-proxy-py", s={"command": "mcp-proxy", "args": args})
    assert parsed.entries["s"] == entry and parsed.warnings == []


@pytest.mark.parametrize(
    "rest",
    [
        ["--transport"],
        ["--transport", "ws"],
        ["--transport=streamable-http"],
        ["--transport=x=sse"],
        ["-H", "A"],
        ["--headers"],
        ["--username", "u"],
        ["--password", "p"],
        ["--username"],
        ["--stateless"],
        ["-H", "A", "1", "extra"],
    ],
)
def test_mcp_proxy_py_a_bridge_not_understood_is_kept_as_a_stdio_server(rest: list[str]) -> None:
    args = ["https://h/x", *rest]
    parsed = read("mcp-proxy-py", s={"command": "mcp-proxy", "args": args})
    assert parsed.entries["s"] == ServerEntry(command="mcp-proxy", args=tuple(args))
    assert parsed.warnings == [
        "s: its mcp-proxy arguments are not all understood: imported as a stdio server"
    ]


def test_fastmcp_placeholders_are_warned_by_server_and_field() -> None:
    _, warnings = server("fastmcp", ServerEntry(command="x", cwd="${HOME}/d"))
    assert fields(warnings) == ["s: cwd"]
    remote = ServerEntry(url="https://${HOST}/mcp", headers={"X": "${X}"},
                         tools=ToolFilter(deny=("a*",)))  # fmt: skip
    item, warnings = server("fastmcp", remote)
    assert item["url"] == "https://${HOST}/mcp" and item["headers"] == {"X": "${X}"}
    assert fields(warnings) == ["s: url", "s: headers.X", "s: tools.deny"]
    basic = ServerEntry(url="https://h/mcp", auth=AuthConfig("basic", username="u", password="p"))
    item, warnings = server("fastmcp", basic)
    assert "headers" not in item and fields(warnings) == ["s: auth"]


def test_mcp_proxy_py_bridge_placeholders_are_warned_by_server_and_field() -> None:
    entry = ServerEntry(url="https://${HOST}/mcp", headers={"X": "${X}"})
    item, warnings = server("mcp-proxy-py", entry)
    assert item["args"] == ["https://${HOST}/mcp", "--transport", "streamablehttp",
                            "-H", "X", "${X}"]  # fmt: skip
    assert fields(warnings) == ["s: url", "s: headers.X"]


def test_fastmcp_a_timeout_it_cannot_keep_is_warned_by_field() -> None:
    parsed = read("fastmcp", a={"command": "x", "timeout": 0}, b={"command": "x", "timeout": 2.5})
    assert parsed.entries["a"].timeout is None and parsed.entries["b"].timeout == 2
    assert fields(parsed.warnings) == ["a: timeout", "b: timeout"]


def test_mcp_proxy_py_a_missing_login_part_is_passed_empty() -> None:
    for auth, login in [
        (AuthConfig("basic", username="u"), ["--username", "u", "--password", ""]),
        (AuthConfig("basic", password="p"), ["--username", "", "--password", "p"]),
    ]:
        item, _ = server("mcp-proxy-py", ServerEntry(url="https://h/mcp", auth=auth))
        assert item["args"][3:] == login
