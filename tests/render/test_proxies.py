"""The proxy targets: mcp-proxy (Go), fastmcp, mcp-proxy-py (PyPI) and 1mcp.

Each renders stdio and remote servers, tool filters, timeouts, auth and placeholders the way
its proxy reads them, warns (naming server and field) about what it cannot say, and parses
its own documents back. Goldens: tests/data/render/golden/<target>.json, the rendering of
tests/data/render/fixture.json (MCPCTL_UPDATE_GOLDEN=1 rewrites them).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mcpctl import load_config
from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.errors import PlaceholderError, UsageError
from mcpctl.probe.serverenv import TRUST_ENV
from mcpctl.render import parse, render
from mcpctl.render.base import Rendered, RenderRequest
from mcpctl.render.listen import parse_listen
from mcpctl.render.proxies import TARGETS
from mcpctl.render.targets import TARGET_MODULES, get_target
from tests.golden import check_golden

PROXIES = ["mcp-proxy", "fastmcp", "mcp-proxy-py", "1mcp"]
DATA = Path(__file__).resolve().parent.parent / "data" / "render"
SECRET = "s3cr3t-value-never-in-a-warning"


def run(target: str, entries: dict[str, ServerEntry], **kw: Any) -> tuple[dict[str, Any], Rendered]:
    kw.setdefault("environ", {})
    rendered = get_target(target).render(RenderRequest(entries, **kw))
    assert rendered.text.endswith("}\n")
    return json.loads(rendered.text), rendered


def server(target: str, entry: ServerEntry, **kw: Any) -> tuple[dict[str, Any], list[str]]:
    doc, rendered = run(target, {"s": entry}, **kw)
    return doc["mcpServers"]["s"], rendered.warnings


def warned(warnings: list[str], field: str, server_name: str = "s") -> str:
    hits = [w for w in warnings if w.startswith(f"{server_name}: {field} ")]
    assert hits, f"no warning about {server_name}: {field} in {warnings}"
    return hits[0]


STDIO = ServerEntry(command="uvx", args=("mcp-server-time",), env={"TZ": "UTC"})
HTTP = ServerEntry(url="https://x.example.com/mcp", headers={"X-Team": "core"})
SSE = ServerEntry(url="https://x.example.com/sse", transport="sse")


# --- the table ---------------------------------------------------------------------------


def test_the_module_exposes_the_four_targets_of_the_table() -> None:
    assert sorted(TARGETS) == sorted(PROXIES)
    assert all(TARGET_MODULES[name] == "mcpctl.render.proxies" for name in PROXIES)
    for name in PROXIES:
        target = get_target(name)
        assert target.name == name and target.family == "proxy" and target.description


@pytest.mark.parametrize("target", PROXIES)
def test_golden(target: str) -> None:
    entries = load_config(DATA / "fixture.json").config.enabled()
    rendered = get_target(target).render(RenderRequest(entries, environ={}))
    golden = DATA / "golden" / f"{target}.json"
    check_golden(golden, rendered.text)
    assert get_target(target).render(RenderRequest(entries, environ={})).text == rendered.text
    assert "disabled-one" not in rendered.text
    assert all(w.split(":", 1)[0] in entries for w in rendered.warnings)


@pytest.mark.parametrize("target", PROXIES)
@pytest.mark.parametrize(
    "text",
    ["[]", "1", '"mcpServers"', "null", "{not json", '{"servers": {}}', '{"mcpServers": []}'],
)
def test_parse_refuses_what_is_not_such_a_document(target: str, text: str) -> None:
    with pytest.raises(UsageError, match=target):
        parse(target, text)


@pytest.mark.parametrize("target", PROXIES)
def test_parse_skips_bad_servers_with_a_warning(target: str) -> None:
    parsed = parse(target, json.dumps({"mcpServers": {
        "ok": {"command": "uvx"}, "bad name!": {"command": "x"}, "list": [], "empty": {},
    }}))  # fmt: skip
    assert list(parsed.entries) == ["ok"]
    for name in ("bad name!", "list", "empty"):
        assert any(w.startswith(f"{name}: ") for w in parsed.warnings), parsed.warnings


@pytest.mark.parametrize("target", PROXIES)
def test_template_is_the_base_and_its_own_servers_stay(target: str) -> None:
    template = {"top": {"keep": 1}, "mcpServers": {"theirs": {"command": "a"}, "s": {"x": 1}}}
    doc, _ = run(target, {"s": STDIO}, template=template)
    assert doc["top"] == {"keep": 1}
    assert doc["mcpServers"]["theirs"] == {"command": "a"}
    assert doc["mcpServers"]["s"]["command"] == "uvx"
    assert template["mcpServers"]["s"] == {"x": 1}, "the template is not changed"
    with pytest.raises(UsageError, match="mcpServers"):
        run(target, {"s": STDIO}, template={"mcpServers": []})


@pytest.mark.parametrize("target", ["fastmcp", "mcp-proxy-py"])
def test_without_expansion_placeholders_stay_and_warn_or_are_inlined(target: str) -> None:
    entry = ServerEntry(command="npx", env={"TOKEN": "${GH_TOKEN}", "PLAIN": "yes"})
    item, warnings = server(target, entry)
    assert item["env"] == {"TOKEN": "${GH_TOKEN}", "PLAIN": "yes"}
    assert "${GH_TOKEN}" in warned(warnings, "env.TOKEN")
    _, rendered = run(target, {"s": entry}, inline_secrets=True, environ={"GH_TOKEN": SECRET})
    assert json.loads(rendered.text)["mcpServers"]["s"]["env"]["TOKEN"] == SECRET
    assert rendered.holds_secrets and not rendered.warnings
    kept = get_target(target).render(RenderRequest({"s": STDIO}, inline_secrets=True, environ={}))
    assert not kept.holds_secrets, "nothing resolved, nothing secret"
    with pytest.raises(PlaceholderError):
        run(target, {"s": entry}, inline_secrets=True, environ={})


@pytest.mark.parametrize("target", ["mcp-proxy", "1mcp"])
def test_with_expansion_placeholders_are_carried_over(target: str) -> None:
    entry = ServerEntry(command="node", args=("${ROOT:-/srv}", "$HOME"), env={"T": "${TOKEN}"})
    item, warnings = server(target, entry, inline_secrets=True, environ={"TOKEN": SECRET})
    assert item["args"] == ["${ROOT}", "$HOME"] and item["env"] == {"T": "${TOKEN}"}
    assert "default of ${ROOT}" in warned(warnings, "args")
    assert any("'$HOME'" in w and "expands" in w for w in warnings), warnings
    assert not any(SECRET in w for w in warnings)


@pytest.mark.parametrize("target", PROXIES)
def test_basic_auth_only_inline_and_never_in_a_warning(target: str) -> None:
    entry = ServerEntry(url="https://x.example.com/mcp",
                        auth=AuthConfig("basic", username="me", password="${PW}"))  # fmt: skip
    text = json.dumps(server(target, entry)[0])
    assert "Basic" not in text
    _, rendered = run(target, {"s": entry}, inline_secrets=True, environ={"PW": SECRET})
    assert rendered.holds_secrets
    assert not any(SECRET in w for w in rendered.warnings)
    encoded = base64.b64encode(f"me:{SECRET}".encode()).decode()
    assert encoded in rendered.text or SECRET in rendered.text


# --- mcp-proxy (Go) ------------------------------------------------------------------------


def test_mcp_proxy_default_settings_and_stdio() -> None:
    doc, rendered = run("mcp-proxy", {"s": STDIO})
    assert doc["mcpProxy"] == {
        "baseURL": "http://127.0.0.1:9090", "addr": "127.0.0.1:9090", "name": "mcpctl",
        "version": "1.0.0", "type": "streamable-http",
        "options": {"panicIfInvalid": False, "logEnabled": True},
    }  # fmt: skip
    assert doc["mcpServers"]["s"] == {"command": "uvx", "args": ["mcp-server-time"],
                                      "env": {"TZ": "UTC"}}  # fmt: skip
    assert rendered.warnings == [] and not rendered.holds_secrets
    mine = run("mcp-proxy", {"s": STDIO}, template={"mcpProxy": {"addr": ":7000"}})[0]
    assert mine["mcpProxy"] == {"addr": ":7000"}, "the template's settings are used as they are"


@pytest.mark.parametrize(
    ("listen", "addr", "base_url"),
    [
        ("127.0.0.1:8080", "127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("[::1]:9091", "[::1]:9091", "http://[::1]:9091"),
        (" localhost:80 ", "localhost:80", "http://localhost:80"),
        ("10.1.2.3:9090", "10.1.2.3:9090", "http://10.1.2.3:9090"),
        ("proxy.internal:443", "proxy.internal:443", "http://proxy.internal:443"),
        (":9090", ":9090", "http://127.0.0.1:9090"),  # every interface; reached here on loopback
        ("0.0.0.0:9090", "0.0.0.0:9090", "http://127.0.0.1:9090"),
        ("[::]:9090", "[::]:9090", "http://[::1]:9090"),
    ],
)
def test_mcp_proxy_listen_sets_addr_and_base_url(listen: str, addr: str, base_url: str) -> None:
    doc = json.loads(render("mcp-proxy", {"s": STDIO}, listen=listen, environ={}).text)
    assert doc["mcpProxy"]["addr"] == addr and doc["mcpProxy"]["baseURL"] == base_url
    assert doc["mcpProxy"]["name"] == "mcpctl", "the other settings stay"
    # Over a template's own settings too: the flag wins, the rest of the template stays.
    template = {"mcpProxy": {"addr": ":7000", "baseURL": "http://x:7000", "name": "team"}}
    doc = json.loads(render("mcp-proxy", {"s": STDIO}, listen=listen, template=template,
                            environ={}).text)  # fmt: skip
    assert doc["mcpProxy"] == {"addr": addr, "baseURL": base_url, "name": "team"}


@pytest.mark.parametrize(
    ("listen", "message"),
    [
        ("127.0.0.1", "has no port"),
        ("::1:9090", "an IPv6 address goes in brackets"),
        ("[nope]:9090", "is not an IPv6 address"),
        ("[::1]9090", "is not [IPV6]:PORT"),
        ("999.1.1.1:9090", "neither an IP address nor a host name"),
        ("bad_name:9090", "neither an IP address nor a host name"),
        ("127.0.0.1:0", "from 1 to 65535"),
        ("127.0.0.1:65536", "from 1 to 65535"),
        ("127.0.0.1:http", "from 1 to 65535"),
        ("127.0.0.1:", "from 1 to 65535"),
    ],
)
def test_a_listen_address_that_is_not_host_port_is_refused(listen: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)) as caught:
        parse_listen(listen)
    assert caught.value.exit_code == 2 and caught.value.hint


@pytest.mark.parametrize(
    ("target", "hint"),
    [
        ("fastmcp", "run_async(host="),
        ("mcp-proxy-py", "--host HOST --port PORT"),
        ("1mcp", "1mcp serve --host HOST --port PORT"),
        ("cursor", "mcp-proxy"),
        ("toolhive", "mcp-proxy"),
    ],
)
def test_listen_is_refused_where_the_file_holds_no_address(target: str, hint: str) -> None:
    with pytest.raises(UsageError, match=f"--listen does not apply to {target}") as caught:
        render(target, {"s": STDIO}, listen="127.0.0.1:9090", environ={})
    assert hint in (caught.value.hint or "")


def exposure(warnings: list[str]) -> list[str]:
    return [w for w in warnings if w.startswith("mcpProxy: addr ")]


def test_mcp_proxy_warns_when_it_listens_beyond_this_machine_without_a_token() -> None:
    entries = {"a": STDIO, "b": HTTP}
    for private in ("127.0.0.1:9090", "[::1]:9090", "localhost:9090", "127.0.0.2:1"):
        assert exposure(render("mcp-proxy", entries, listen=private, environ={}).warnings) == []
    assert exposure(render("mcp-proxy", entries, environ={}).warnings) == [], "the default"
    [line] = exposure(render("mcp-proxy", entries, listen=":9090", environ={}).warnings)
    assert line.startswith("mcpProxy: addr :9090 listens on every interface with no auth token")
    assert "mcpProxy.options.authTokens" in line and "--listen 127.0.0.1:PORT" in line
    [line] = exposure(render("mcp-proxy", entries, listen="10.0.0.5:1", environ={}).warnings)
    assert "listens on 10.0.0.5 with no auth token" in line
    # A template's address is checked too.
    [line] = exposure(
        run("mcp-proxy", entries, template={"mcpProxy": {"addr": ":7000"}})[1].warnings
    )
    assert line.startswith("mcpProxy: addr :7000 listens on every interface")


def test_an_auth_token_silences_the_warning_server_by_server() -> None:
    entries = {"a": STDIO, "b": HTTP}

    def warnings(proxy: dict[str, Any], servers: dict[str, Any] | None = None) -> list[str]:
        template = {"mcpProxy": proxy, "mcpServers": servers or {}}
        return exposure(run("mcp-proxy", entries, template=template)[1].warnings)

    shared = {"addr": ":9090", "options": {"authTokens": ["${PROXY_TOKEN}"]}}
    assert warnings(shared) == [], "mcpProxy.options.authTokens covers every server"
    assert warnings({**shared, "addr": "${PROXY_ADDR}"}) == [], "an address set elsewhere"
    assert len(warnings({"addr": ":9090", "options": {"authTokens": ["", " "]}})) == 1
    # A server's own list replaces the shared one (mcp-proxy's inheritance), even empty.
    [line] = warnings(shared, {"mine": {"command": "x", "options": {"authTokens": []}}})
    assert "and mine has no auth token: anyone who reaches it can use them" in line
    own = {"command": "x", "options": {"authTokens": ["t"]}}
    [line] = warnings({"addr": ":9090"}, {"mine": own})
    assert "and a, b have no auth token" in line


def test_the_proxies_that_take_no_address_are_unchanged() -> None:
    for target in ("fastmcp", "mcp-proxy-py", "1mcp"):
        assert "127.0.0.1" not in render(target, {"s": STDIO}, environ={}).text


def test_mcp_proxy_remote_transports_headers_and_timeout_in_nanoseconds() -> None:
    entry = ServerEntry(url="https://x.example.com/mcp", headers={"X-Team": "core"},
                        auth=AuthConfig("bearer", token="${TOKEN}"), timeout=1500)  # fmt: skip
    item, warnings = server("mcp-proxy", entry)
    assert item == {"transportType": "streamable-http", "url": "https://x.example.com/mcp",
                    "headers": {"X-Team": "core", "Authorization": "Bearer ${TOKEN}"},
                    "timeout": 1_500_000_000}  # fmt: skip
    assert warnings == []
    item, warnings = server("mcp-proxy", ServerEntry(url="https://x/sse", transport="sse",
                                                     timeout=1000))  # fmt: skip
    assert item == {"transportType": "sse", "url": "https://x/sse"}
    assert "streamable HTTP only" in warned(warnings, "timeout")
    item, warnings = server("mcp-proxy", ServerEntry(command="x", cwd="/d", timeout=5))
    assert item == {"command": "x"}
    warned(warnings, "cwd")
    warned(warnings, "timeout")


def test_mcp_proxy_tool_filters() -> None:
    def options(tools: ToolFilter) -> tuple[Any, list[str]]:
        item, warnings = server("mcp-proxy", ServerEntry(command="x", tools=tools))
        return item.get("options"), warnings

    assert options(ToolFilter(deny=("a", "b"))) == (
        {"toolFilter": {"mode": "block", "list": ["a", "b"]}}, [])  # fmt: skip
    got, warnings = options(ToolFilter(allow=("a", "b", "c*"), deny=("b",)))
    assert got == {"toolFilter": {"mode": "allow", "list": ["a"]}}
    assert "allow minus deny" in warned(warnings, "tools.deny")
    assert "'c*'" in warned(warnings, "tools.allow")
    got, warnings = options(ToolFilter(deny=("del*",)))
    assert got is None and "stay exposed" in warned(warnings, "tools.deny")
    got, warnings = options(ToolFilter(allow=()))
    assert got == {"disabled": True} and "disabled" in warned(warnings, "tools")


def test_mcp_proxy_oauth_is_left_to_a_warning() -> None:
    item, warnings = server("mcp-proxy", ServerEntry(url="https://x/mcp", auth=AuthConfig("oauth")))
    assert "headers" not in item and "does not sign in" in warned(warnings, "auth")


def test_mcp_proxy_parse() -> None:
    parsed = parse("mcp-proxy", json.dumps({"mcpProxy": {"addr": ":1"}, "mcpServers": {
        "gh": {"command": "npx", "args": ["$ROOT/x"], "env": {"T": "${GH}"},
               "options": {"toolFilter": {"mode": "BLOCK", "list": ["del"]}, "logEnabled": True}},
        "old": {"url": "https://x/sse", "headers": {"Authorization": "Bearer $TOKEN"}},
        "new": {"url": "https://x/mcp", "transportType": "streamable-http", "timeout": 2_500_000,
                "options": {"toolFilter": {"mode": "allow", "list": ["a"]}, "disabled": True}},
        "odd": {"command": "x", "surprise": 1},
    }}))  # fmt: skip
    e = parsed.entries
    assert e["gh"] == ServerEntry(command="npx", args=("${ROOT}/x",), env={"T": "${GH}"},
                                  tools=ToolFilter(deny=("del",)))  # fmt: skip
    assert e["old"] == ServerEntry(url="https://x/sse", transport="sse",
                                   auth=AuthConfig("bearer", token="${TOKEN}"))  # fmt: skip
    assert e["new"] == ServerEntry(url="https://x/mcp", transport="streamable-http", timeout=2,
                                   enabled=False, tools=ToolFilter(allow=("a",)))  # fmt: skip
    assert "gh: options.logEnabled is a setting of mcp-proxy: not imported" in parsed.warnings
    assert "new: timeout is rounded to 2 ms" in parsed.warnings
    assert any(w.startswith("odd: surprise ") for w in parsed.warnings)


# --- fastmcp ----------------------------------------------------------------------------------


def test_fastmcp_stdio_and_remote() -> None:
    entry = ServerEntry(command="node", args=("a.js",), cwd="/srv", timeout=20000,
                        description="d", inherit_env=("LANG",))  # fmt: skip
    item, warnings = server("fastmcp", entry)
    assert item == {"command": "node", "args": ["a.js"], "cwd": "/srv", "timeout": 20000,
                    "description": "d"}  # fmt: skip
    warned(warnings, "inherit_env")
    assert server("fastmcp", HTTP)[0] == {"url": "https://x.example.com/mcp", "transport": "http",
                                          "headers": {"X-Team": "core"}}  # fmt: skip
    assert server("fastmcp", SSE)[0]["transport"] == "sse"
    item, warnings = server("fastmcp", ServerEntry(url="https://x/mcp", auth=AuthConfig("oauth")))
    assert item["auth"] == "oauth" and "sign-in happens in FastMCP" in warned(warnings, "auth")


def test_fastmcp_tool_filters_are_tool_transforms() -> None:
    item, _ = server("fastmcp", ServerEntry(command="x", tools=ToolFilter(deny=("a",))))
    assert item["tools"] == {"a": {"enabled": False}} and "include_tags" not in item
    item, _ = server("fastmcp", ServerEntry(command="x", tools=ToolFilter(allow=("a", "b"))))
    assert item["tools"] == {"a": {"tags": ["mcpctl-allow"]}, "b": {"tags": ["mcpctl-allow"]}}
    assert item["include_tags"] == ["mcpctl-allow"]
    item, _ = server("fastmcp", ServerEntry(command="x", tools=ToolFilter(allow=())))
    assert item == {"command": "x", "include_tags": ["mcpctl-allow"]}, "nothing is exposed"
    assert parse("fastmcp", json.dumps({"mcpServers": {"s": item}})).entries["s"].tools == (
        ToolFilter(allow=()))  # fmt: skip


def test_fastmcp_parse() -> None:
    parsed = parse("fastmcp", json.dumps({"mcpServers": {
        "a": {"url": "https://x/api/sse?k=1", "auth": "${TOKEN}"},
        "b": {"url": "https://x/mcp", "auth": "oauth", "keep_alive": True},
        "c": {"command": "x", "tools": {"t": {"name": "renamed"}}, "include_tags": ["mine"]},
    }}))  # fmt: skip
    e = parsed.entries
    assert e["a"] == ServerEntry(url="https://x/api/sse?k=1", transport="sse",
                                 auth=AuthConfig("bearer", token="${TOKEN}"))  # fmt: skip
    assert e["b"] == ServerEntry(url="https://x/mcp", transport="streamable-http",
                                 auth=AuthConfig("oauth"))  # fmt: skip
    assert e["c"] == ServerEntry(command="x")
    assert any(w.startswith("b: keep_alive ") for w in parsed.warnings)
    assert any(w.startswith("c: tools.t ") for w in parsed.warnings)
    assert any(w.startswith("c: include_tags ") for w in parsed.warnings)


# --- mcp-proxy-py ---------------------------------------------------------------------------


def test_mcp_proxy_py_stdio_keeps_what_it_reads() -> None:
    entry = ServerEntry(command="uvx", args=("a",), env={"A": "1"}, cwd="/d", timeout=5,
                        inherit_env=True, tools=ToolFilter(deny=("x",)))  # fmt: skip
    item, warnings = server("mcp-proxy-py", entry)
    assert item == {"command": "uvx", "args": ["a"], "env": {"A": "1"}}
    for field in ("cwd", "timeout", "inherit_env", "tools"):
        warned(warnings, field)
    assert "--pass-environment" in warned(warnings, "inherit_env")


def test_mcp_proxy_py_remote_is_a_bridge_and_parses_back() -> None:
    entry = ServerEntry(url="https://x.example.com/mcp", transport="streamable-http",
                        headers={"X-Team": "core"},
                        auth=AuthConfig("bearer", token="abc"))  # fmt: skip
    item, warnings = server("mcp-proxy-py", entry)
    assert item == {"command": "mcp-proxy", "args": [
        "https://x.example.com/mcp", "--transport", "streamablehttp",
        "-H", "X-Team", "core", "-H", "Authorization", "Bearer abc"]}  # fmt: skip
    assert warnings == []
    assert parse("mcp-proxy-py", json.dumps({"mcpServers": {"s": item}})).entries["s"] == entry
    assert server("mcp-proxy-py", SSE)[0]["args"] == [SSE.url, "--transport", "sse"]
    basic = ServerEntry(url="https://x/mcp", transport="streamable-http",
                        auth=AuthConfig("basic", username="me", password="pw"))  # fmt: skip
    item, warnings = server("mcp-proxy-py", basic)
    assert item["args"][-4:] == ["--username", "me", "--password", "pw"] and warnings == []
    assert parse("mcp-proxy-py", json.dumps({"mcpServers": {"s": item}})).entries["s"] == basic
    item, warnings = server("mcp-proxy-py", ServerEntry(url="https://x/mcp",
                                                        auth=AuthConfig("oauth")))  # fmt: skip
    assert "does not sign in" in warned(warnings, "auth")


def test_mcp_proxy_py_parse() -> None:
    parsed = parse("mcp-proxy-py", json.dumps({"mcpServers": {
        "plain": {"command": "uvx", "args": ["x"], "timeout": 60, "transportType": "stdio"},
        "off": {"command": "uvx", "enabled": False},
        "sse": {"command": "/opt/bin/mcp-proxy", "args": ["http://h/sse"]},
        "eq": {"command": "mcp-proxy", "args": ["http://h/mcp", "--transport=streamablehttp"]},
        "odd": {"command": "mcp-proxy", "args": ["http://h/mcp", "--no-verify-ssl"]},
    }}))  # fmt: skip
    e = parsed.entries
    assert e["plain"] == ServerEntry(command="uvx", args=("x",))
    assert e["off"] == ServerEntry(command="uvx", enabled=False)
    assert e["sse"] == ServerEntry(url="http://h/sse", transport="sse")
    assert e["eq"] == ServerEntry(url="http://h/mcp", transport="streamable-http")
    assert e["odd"] == ServerEntry(command="mcp-proxy", args=("http://h/mcp", "--no-verify-ssl"))
    assert "plain: timeout is not read by mcp-proxy: not imported" in parsed.warnings
    assert any(w.startswith("odd: ") and "stdio" in w for w in parsed.warnings)


# --- 1mcp -------------------------------------------------------------------------------------


def test_one_mcp_stdio_and_remote() -> None:
    entry = ServerEntry(command="node", args=("a",), env={"K": "${KEY}"}, cwd="/app",
                        inherit_env=("PATH", "LANG"), timeout=9000)  # fmt: skip
    item, warnings = server("1mcp", entry)
    assert item == {"type": "stdio", "command": "node", "args": ["a"], "env": {"K": "${KEY}"},
                    "cwd": "/app", "inheritParentEnv": True,
                    "envFilter": ["PATH", "LANG", *TRUST_ENV],
                    "connectionTimeout": 9000}  # fmt: skip
    assert warnings == []
    assert server("1mcp", ServerEntry(command="x", inherit_env=True))[0]["inheritParentEnv"]
    assert server("1mcp", HTTP)[0] == {"type": "http", "url": "https://x.example.com/mcp",
                                       "headers": {"X-Team": "core"}}  # fmt: skip
    assert server("1mcp", SSE)[0]["type"] == "sse"
    oauth = AuthConfig("oauth", scopes=("read",), client_id="id", client_secret="${SECRET}",
                       callback_port=8765)  # fmt: skip
    item, warnings = server("1mcp", ServerEntry(url="https://x/mcp", auth=oauth))
    assert item["oauth"] == {"scopes": ["read"], "clientId": "id", "clientSecret": "${SECRET}"}
    assert "sign-in happens in 1mcp" in warned(warnings, "auth")
    warned(warnings, "auth.callback_port")


def test_one_mcp_tool_filters() -> None:
    item, warnings = server("1mcp", ServerEntry(command="x", tools=ToolFilter(deny=("a", "b*"))))
    assert item["disabledTools"] == ["a"] and "'b*'" in warned(warnings, "tools.deny")
    item, warnings = server("1mcp", ServerEntry(command="x", tools=ToolFilter(allow=("a",))))
    assert "disabledTools" not in item and "no allow list" in warned(warnings, "tools.allow")


def test_one_mcp_parse() -> None:
    parsed = parse("1mcp", json.dumps({"serverDefaults": {"timeout": 1}, "mcpServers": {
        "arr": {"command": "x", "env": ["A=1", "PATH", "B=$HOME/b"], "tags": ["t"]},
        "guess": {"url": "https://x/events", "requestTimeout": 5, "timeout": 7},
        "http": {"url": "https://x/mcp", "connectionTimeout": 3, "timeout": 7,
                 "oauth": {"scopes": ["r"], "autoRegister": True},
                 "disabled": True, "disabledTools": ["d"]},
        "pat": {"command": "x", "inheritParentEnv": True, "envFilter": ["NODE_*", "!SECRET"],
                "disabled": "{{#if x}}true{{/if}}"},
    }}))  # fmt: skip
    e = parsed.entries
    assert e["arr"] == ServerEntry(command="x", env={"A": "1", "B": "${HOME}/b"},
                                   inherit_env=("PATH",))  # fmt: skip
    assert e["guess"] == ServerEntry(url="https://x/events", transport="sse", timeout=7)
    assert e["http"] == ServerEntry(url="https://x/mcp", transport="streamable-http", timeout=3,
                                    auth=AuthConfig("oauth", scopes=("r",)), enabled=False,
                                    tools=ToolFilter(deny=("d",)))  # fmt: skip
    assert e["pat"].inherit_env is True and e["pat"].enabled
    w = parsed.warnings
    assert "serverDefaults is a 1mcp setting: not imported" in w
    assert any(x.startswith("arr: tags ") for x in w)
    assert any(x.startswith("guess: requestTimeout ") for x in w)
    assert any(x.startswith("http: oauth.autoRegister ") for x in w)
    assert any(x.startswith("pat: envFilter ") for x in w)
    assert any(x.startswith("pat: disabled ") for x in w)


EXPRESSIBLE = {
    "mcp-proxy": {
        "a": ServerEntry(command="npx", args=("-y", "x"), env={"T": "${T}"},
                         tools=ToolFilter(deny=("d",))),
        "b": ServerEntry(url="https://b/mcp", transport="streamable-http", timeout=1500,
                         headers={"X": "${X}"}, auth=AuthConfig("bearer", token="${TOK}"),
                         tools=ToolFilter(allow=("a",))),
        "c": ServerEntry(url="https://c/sse", transport="sse"),
    },
    "fastmcp": {
        "a": ServerEntry(command="npx", args=("x",), env={"K": "v"}, cwd="/d", timeout=9,
                         description="d", tools=ToolFilter(allow=("t",))),
        "b": ServerEntry(url="https://b/mcp", transport="streamable-http", timeout=5,
                         auth=AuthConfig("bearer", token="tok"), tools=ToolFilter(deny=("x",))),
        "c": ServerEntry(url="https://c/x", transport="sse", headers={"H": "1"}),
    },
    "mcp-proxy-py": {
        "a": ServerEntry(command="npx", args=("x",), env={"K": "v"}),
        "b": ServerEntry(url="https://b/mcp", transport="streamable-http", headers={"H": "1"},
                         auth=AuthConfig("basic", username="u", password="p")),
        "c": ServerEntry(url="https://c/sse", transport="sse",
                         auth=AuthConfig("bearer", token="t")),
    },
    "1mcp": {
        "a": ServerEntry(command="npx", args=("x",), env={"K": "${K}"}, cwd="/d",
                         inherit_env=("LANG",), timeout=7, tools=ToolFilter(deny=("x",))),
        "b": ServerEntry(url="https://b/api", transport="streamable-http",
                         auth=AuthConfig("bearer", token="${T}")),
        "c": ServerEntry(url="https://c/mcp", transport="sse", headers={"H": "${H}"}, timeout=3),
    },
}  # fmt: skip


@pytest.mark.parametrize("target", PROXIES)
def test_what_renders_without_warnings_parses_back_the_same(target: str) -> None:
    entries = EXPRESSIBLE[target]
    _, rendered = run(target, entries)
    assert rendered.warnings == []
    parsed = parse(target, rendered.text)
    assert parsed.entries == entries and parsed.warnings == []


# --- what each proxy is told, word for word -------------------------------------------------


def test_mcp_proxy_says_why_it_leaves_out_a_stdio_servers_directory_and_env_choice() -> None:
    _, warnings = server("mcp-proxy", ServerEntry(command="x", cwd="/d", inherit_env=("LANG",)))
    assert warnings == [
        "s: cwd is left out: mcp-proxy starts servers in its own directory",
        "s: inherit_env is implied: mcp-proxy gives each server its whole environment",
    ]


def test_mcp_proxy_remote_warnings_name_the_field_and_the_reason() -> None:
    entry = ServerEntry(url="https://${HOST:-x.example.com}/mcp", headers={"X-Team": "${T:-a}"},
                        auth=AuthConfig("oauth"))  # fmt: skip
    item, warnings = server("mcp-proxy", entry)
    assert item["url"] == "https://${HOST}/mcp" and item["headers"] == {"X-Team": "${T}"}
    assert warnings == [
        "s: url loses the default of ${HOST}: mcp-proxy has no ${VAR:-default}",
        "s: headers.X-Team loses the default of ${T}: mcp-proxy has no ${VAR:-default}",
        "s: auth (oauth) is left out: mcp-proxy does not sign in, so it connects without "
        "credentials",
    ]
    basic = ServerEntry(url="https://x/mcp", auth=AuthConfig("basic", username="u", password="p"))
    assert server("mcp-proxy", basic)[1][0].startswith("s: auth (basic) is left out: ")


def test_mcp_proxy_says_an_empty_allow_list_disables_the_server() -> None:
    _, warnings = server("mcp-proxy", ServerEntry(command="x", tools=ToolFilter(allow=())))
    assert warnings == [
        "s: tools allows no tool, which mcp-proxy cannot say (an empty list is no filter): "
        "the server is disabled"
    ]


def test_mcp_proxy_listen_needs_a_template_proxy_object_and_a_template_may_lack_one() -> None:
    with pytest.raises(UsageError) as caught:
        run("mcp-proxy", {"s": STDIO}, template={"mcpProxy": []}, listen="127.0.0.1:9")
    assert str(caught.value) == 'the template\'s "mcpProxy" must be a JSON object for --listen'
    # Without --listen, a template's odd or missing mcpProxy is the proxy's to refuse.
    for template in ({"mcpProxy": []}, {"mcpServers": {}}):
        doc, rendered = run("mcp-proxy", {"s": STDIO}, template=template)
        assert doc["mcpServers"]["s"]["command"] == "uvx" and rendered.warnings == []


def test_mcp_proxy_exposure_names_every_server_and_skips_a_templates_odd_server() -> None:
    [line] = exposure(render("mcp-proxy", {"a": STDIO}, listen=":9090", environ={}).warnings)
    assert line == (
        "mcpProxy: addr :9090 listens on every interface with no auth token: anyone who "
        "reaches it can use every server; set mcpProxy.options.authTokens (in a --template) "
        "or --listen 127.0.0.1:PORT"
    )
    template = {"mcpProxy": {"addr": ":9090", "options": {"authTokens": ["t"]}},
                "mcpServers": {"odd": "not an object"}}  # fmt: skip
    assert exposure(run("mcp-proxy", {"a": STDIO}, template=template)[1].warnings) == []


def test_mcp_proxy_parse_stdio_keeps_timeout_filter_and_disabled() -> None:
    parsed = parse("mcp-proxy", json.dumps({"mcpServers": {
        "s": {"command": "x", "timeout": 5_000_000_000,
              "options": {"toolFilter": {"mode": "allow", "list": ["a"]}, "disabled": True}},
    }}))  # fmt: skip
    assert parsed.entries["s"] == ServerEntry(command="x", timeout=5000, enabled=False,
                                              tools=ToolFilter(allow=("a",)))  # fmt: skip
    assert parsed.warnings == []


def test_mcp_proxy_parse_says_what_it_leaves_out() -> None:
    parsed = parse("mcp-proxy", json.dumps({"mcpServers": {
        "std": {"command": "x", "headers": {"H": "1"}, "options": 3},
        "rem": {"url": "https://x/mcp", "env": {"A": "1"}, "args": ["a"]},
        "nocmd": {"transportType": "stdio", "url": "https://x/mcp"},
        "mode": {"command": "x", "options": {"toolFilter": {"list": ["a"]}}},
        "odd": {"command": "x", "options": {"toolFilter": {"mode": "allow", "list": "abc"}}},
    }}))  # fmt: skip
    assert sorted(parsed.entries) == ["mode", "odd", "rem", "std"]
    assert parsed.entries["mode"].tools is None and parsed.entries["odd"].tools is None
    assert parsed.warnings == [
        "std: options is not an object: not imported",
        "std: headers applies to remote servers only: not imported",
        "rem: env applies to stdio servers only: not imported",
        "rem: args applies to stdio servers only: not imported",
        "nocmd: command is missing: skipped",
        "mode: options.toolFilter has mode '': not imported",
    ]


def test_one_mcp_render_warnings_name_the_field() -> None:
    entry = ServerEntry(command="x", cwd="/srv/${APP:-a}", tools=ToolFilter(allow=("a",)))
    item, warnings = server("1mcp", entry)
    assert item["cwd"] == "/srv/${APP}"
    assert warnings == [
        "s: cwd loses the default of ${APP}: 1mcp has no ${VAR:-default}",
        "s: tools.allow is left out: 1mcp has no allow list, only disabledTools, so every "
        "other tool is exposed",
    ]
    oauth = AuthConfig("oauth", client_id="${ID:-i}", client_secret="${SEC:-s}",
                       client_metadata_url="https://x/meta.json")  # fmt: skip
    entry = ServerEntry(url="https://${H:-x}/mcp", headers={"X": "${X:-1}"}, auth=oauth)
    item, warnings = server("1mcp", entry)
    assert item["oauth"] == {"clientId": "${ID}", "clientSecret": "${SEC}"}
    assert warnings == [
        "s: url loses the default of ${H}: 1mcp has no ${VAR:-default}",
        "s: headers.X loses the default of ${X}: 1mcp has no ${VAR:-default}",
        "s: auth (oauth): sign-in happens in 1mcp (its own OAuth flow and tokens)",
        "s: auth.client_id loses the default of ${ID}: 1mcp has no ${VAR:-default}",
        "s: auth.client_secret loses the default of ${SEC}: 1mcp has no ${VAR:-default}",
        "s: auth.client_metadata_url is left out: 1mcp has no such setting",
    ]
    basic = ServerEntry(url="https://x/mcp", auth=AuthConfig("basic", username="u", password="p"))
    assert server("1mcp", basic)[1][0].startswith("s: auth (basic) is left out: ")


def test_one_mcp_parse_env_list_and_inherit_choices() -> None:
    parsed = parse("1mcp", json.dumps({"mcpServers": {
        "list": {"command": "x", "env": ["A=b=c", "B=$HOME"]},
        "plain": {"command": "x", "env": {"A": "1"}, "envFilter": ["LANG"]},
        "all": {"command": "x", "inheritParentEnv": True},
        "trust": {"command": "x", "inheritParentEnv": True, "envFilter": list(TRUST_ENV)},
        "off": {"command": "x", "disabled": True},
    }}))  # fmt: skip
    e = parsed.entries
    assert e["list"] == ServerEntry(command="x", env={"A": "b=c", "B": "${HOME}"})
    assert e["plain"] == ServerEntry(command="x", env={"A": "1"})
    assert e["plain"].inherit_env is False
    assert e["all"].inherit_env is True
    assert e["trust"].inherit_env is False, "what mcpctl passes anyway is no choice of the entry"
    assert e["off"] == ServerEntry(command="x", enabled=False)
    assert parsed.warnings == []


def test_one_mcp_parse_oauth_fields() -> None:
    parsed = parse("1mcp", json.dumps({"mcpServers": {
        "o": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer t", "X": "1"},
              "oauth": {"scopes": ["r"], "clientId": "$ID", "clientSecret": "${SEC}"}},
        "odd": {"url": "https://x/mcp", "oauth": {"scopes": "read", "clientId": 3}},
    }}))  # fmt: skip
    assert parsed.entries["o"] == ServerEntry(
        url="https://x/mcp", transport="streamable-http",
        headers={"Authorization": "Bearer t", "X": "1"},
        auth=AuthConfig("oauth", scopes=("r",), client_id="${ID}", client_secret="${SEC}"),
    )  # fmt: skip
    assert parsed.entries["odd"].auth == AuthConfig("oauth")
    assert parsed.warnings == []


def test_one_mcp_parse_says_what_it_leaves_out() -> None:
    parsed = parse("1mcp", json.dumps({"mcpTemplates": {"t": {}}, "mcpServers": {
        "s": {"command": "x", "tags": ["t"], "requestTimeout": 1, "restartOnExit": True,
              "maxRestarts": 2, "restartDelay": 3, "connectionTimeout": 1.5},
        "r": {"url": "https://x/mcp", "restartDelay": 3},
        "nocmd": {"type": "stdio", "url": "https://x/mcp"},
    }}))  # fmt: skip
    assert sorted(parsed.entries) == ["r", "s"] and parsed.entries["s"].timeout == 2
    assert parsed.warnings == [
        "mcpTemplates is a 1mcp setting: not imported",
        "s: timeout is rounded to 2 ms",
        "s: tags is for 1mcp's routing: not imported",
        "s: requestTimeout has no field in mcpctl: not imported",
        "s: restartOnExit is 1mcp's supervision: not imported",
        "s: maxRestarts is 1mcp's supervision: not imported",
        "s: restartDelay is 1mcp's supervision: not imported",
        "r: restartDelay is 1mcp's supervision: not imported",
        "nocmd: command is missing: skipped",
    ]
