"""Reading one server object of a proxy's file back: a field of the wrong type is left out
with a warning, and the server names that cannot be read are said."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mcpctl.config.model import MAX_TIMEOUT_MS, AuthConfig, ServerEntry, ToolFilter
from mcpctl.errors import UsageError
from mcpctl.render.base import RenderRequest
from mcpctl.render.proxies_common import (
    Reader,
    Writer,
    auth_headers,
    base_document,
    load_servers,
    split_bearer,
    tool_lists,
    valid_name,
)


def reader(data: dict[str, Any]) -> tuple[Reader, list[str]]:
    warnings: list[str] = []
    return Reader("s", data, warnings, lambda v: v.replace("$X", "${X}")), warnings


def test_fields_of_the_right_type_are_read_with_their_placeholders_back() -> None:
    r, warnings = reader({"command": "run $X", "args": ["a", "$X"], "env": {"K": "$X"},
                          "disabled": False, "timeout": 2.5})  # fmt: skip
    assert r.text("command") == "run ${X}"
    assert r.texts("args") == ("a", "${X}")
    assert r.mapping("env") == {"K": "${X}"}
    assert r.flag("disabled") is False
    assert r.number("timeout") == 2.5
    r.rest({})
    assert warnings == []


def test_absent_fields_are_nothing_and_not_warned() -> None:
    r, warnings = reader({})
    assert (r.text("a"), r.texts("b"), r.mapping("c"), r.flag("d"), r.number("e")) == (
        None, None, {}, None, None,
    )  # fmt: skip
    assert warnings == []


@pytest.mark.parametrize(
    ("method", "value", "empty", "kind"),
    [
        ("text", 1, None, "a string"),
        ("texts", ["a", 1], None, "a list of strings"),
        ("texts", "a", None, "a list of strings"),
        ("mapping", {"K": 1}, {}, "an object of strings"),
        ("mapping", ["K"], {}, "an object of strings"),
        ("flag", "yes", None, "true or false"),
        ("number", True, None, "a number"),
        ("number", "5", None, "a number"),
    ],
)
def test_a_field_of_the_wrong_type_is_left_out_with_a_warning(
    method: str, value: object, empty: object, kind: str
) -> None:
    r, warnings = reader({"f": value})
    assert getattr(r, method)("f") == empty
    assert warnings == [f"s: f is not {kind}: left out"]


def test_timeouts_are_rounded_and_kept_in_range() -> None:
    r, warnings = reader({})
    assert r.timeout("t", None) is None
    assert r.timeout("t", 1) == 1 and r.timeout("t", MAX_TIMEOUT_MS) == MAX_TIMEOUT_MS
    assert warnings == []
    assert r.timeout("t", 1500.4) == 1500
    assert warnings == ["s: t is rounded to 1500 ms"]
    warnings.clear()
    assert r.timeout("t", 0) is None
    assert r.timeout("t", MAX_TIMEOUT_MS + 1) is None
    assert warnings == [f"s: t is out of range (1 to {MAX_TIMEOUT_MS} ms): left out"] * 2


def test_fields_not_read_are_said_with_why_when_known() -> None:
    r, warnings = reader({"command": "x", "known": 1, "odd": 2})
    r.text("command")
    r.rest({"known": "is the proxy's own"})
    assert warnings == [
        "s: known is the proxy's own: not imported",
        "s: odd is not a field mcpctl knows: not imported",
    ]


def test_a_server_that_cannot_be_read_is_skipped_with_why() -> None:
    warnings: list[str] = []
    assert valid_name("ok-1", {}, warnings) and warnings == []
    assert not valid_name("bad name", {}, warnings)
    assert not valid_name("ok", ["not", "an", "object"], warnings)
    assert warnings == [
        "bad name: name is not a server name (1-64 of A-Z a-z 0-9 _ -): skipped",
        "ok: entry is not a JSON object: skipped",
    ]


def headers(auth: AuthConfig, *, inline: bool = False) -> tuple[dict[str, str], Writer]:
    entry = ServerEntry(url="https://a/mcp", auth=auth)
    request = RenderRequest({"s": entry}, inline_secrets=inline, environ={"U": "me", "P": "pw"})
    w = Writer("mcp-proxy", request, expands=False)
    return auth_headers(w, "s", entry), w


def test_header_auth_sends_its_header_and_authorization_by_default() -> None:
    assert headers(AuthConfig(type="header", name="X-Key", value="${K}"))[0] == {"X-Key": "${K}"}
    assert headers(AuthConfig(type="header", value="tok"))[0] == {"Authorization": "tok"}
    assert headers(AuthConfig(type="header", name="X-Key"))[0] == {"X-Key": ""}
    assert headers(AuthConfig(type="bearer"))[0] == {"Authorization": "Bearer "}
    sent, w = headers(AuthConfig(type="none"), inline=True)
    assert sent == {} and w.warnings == []


def test_basic_auth_is_written_encoded_only_with_inline_secrets() -> None:
    basic = AuthConfig(type="basic", username="${U}", password="${P}")
    sent, w = headers(basic)
    assert sent == {}
    assert w.warnings == [
        "s: auth (basic) is left out: its Authorization header holds the credentials "
        "encoded, which only --inline-secrets writes"
    ]
    sent, w = headers(basic, inline=True)
    assert sent == {"Authorization": "Basic " + base64.b64encode(b"me:pw").decode()}
    assert w.holds_secrets and w.warnings == []
    sent, _ = headers(AuthConfig(type="basic", username="me"), inline=True)
    assert sent == {"Authorization": "Basic " + base64.b64encode(b"me:").decode()}
    sent, _ = headers(AuthConfig(type="basic", password="pw"), inline=True)
    assert sent == {"Authorization": "Basic " + base64.b64encode(b":pw").decode()}


def test_a_proxy_file_is_plain_json_with_an_mcpservers_object() -> None:
    doc, servers = load_servers('{"mcpServers": {"a": {}}, "x": 1}', "mcp-proxy")
    assert (doc["x"], servers) == (1, {"a": {}})
    with pytest.raises(UsageError, match="not a mcp-proxy config"):
        load_servers('{"mcpServers": {}} // a comment', "mcp-proxy")  # JSON has none
    with pytest.raises(UsageError) as caught:
        load_servers("[1]", "fastmcp")
    assert caught.value.message == "not a fastmcp config: a JSON object was expected, not list"
    with pytest.raises(UsageError) as caught:
        load_servers('{"servers": {}}', "fastmcp")
    assert caught.value.message == 'not a fastmcp config: it has no "mcpServers" object'
    assert caught.value.hint == 'the servers are under "mcpServers": {"NAME": {...}}'


def test_only_an_authorization_header_becomes_bearer_auth() -> None:
    sent = {"X-Other": "Bearer abc", "Accept": "text/plain"}
    assert split_bearer(sent) == (sent, None)
    assert split_bearer({"authorization": "Bearer t0k", "A": "b"}) == (
        {"A": "b"}, AuthConfig("bearer", token="t0k"),
    )  # fmt: skip


def test_the_file_is_written_with_unicode_as_is() -> None:
    w = Writer("fastmcp", RenderRequest({}), expands=False)
    rendered = w.done({"mcpServers": {"café": {"command": "naïve ✓"}}})
    assert (
        rendered.text
        == '{\n  "mcpServers": {\n    "café": {\n      "command": "naïve ✓"\n    }\n  }\n}\n'
    )
    assert rendered.holds_secrets is False and rendered.warnings == []


def test_placeholders_a_target_does_not_expand_are_kept_with_a_warning() -> None:
    w = Writer("fastmcp", RenderRequest({}), expands=False)
    entry = ServerEntry(command="${BIN}/srv", args=("--k", "${B} ${A} ${B}"))
    assert w.stdio("s", entry) == {"command": "${BIN}/srv", "args": ["--k", "${B} ${A} ${B}"]}
    assert w.warnings == [
        "s: command keeps ${BIN} as written: fastmcp does not expand variables "
        "(--inline-secrets writes the values)",
        "s: args keeps ${A}, ${B} as written: fastmcp does not expand variables "
        "(--inline-secrets writes the values)",
    ]


def test_a_target_that_expands_says_what_it_would_read_as_a_variable() -> None:
    w = Writer("mcp-proxy", RenderRequest({}, environ={}), expands=True)
    assert w.text("s", "args", "price: $5 or $HOME") == "price: $5 or $HOME"
    assert w.warnings == ["s: args has '$HOME', which mcp-proxy expands as a variable"]


def test_tool_lists_for_a_target_of_exact_names_say_what_they_change() -> None:
    w = Writer("fastmcp", RenderRequest({}), expands=False)
    allowed = ToolFilter(allow=("read", "write", "get_*"), deny=("write",))
    assert tool_lists(w, "s", allowed) == (["read"], [])
    nothing = ToolFilter(allow=("write",), deny=("write",))
    assert tool_lists(w, "t", nothing) == ([], [])
    assert w.warnings == [
        "s: tools.allow pattern 'get_*' is left out: fastmcp takes exact tool names, so its "
        "tools are hidden",
        "s: tools.deny is folded into tools.allow: fastmcp gets the one list allow minus deny "
        "(read)",
        "t: tools.deny is folded into tools.allow: fastmcp gets the one list allow minus deny "
        "(nothing)",
    ]
    w.warnings.clear()
    assert tool_lists(w, "s", ToolFilter(allow=("a", "b"), deny=("c",)))[0] == ["a", "b"]
    assert w.warnings[-1].endswith("allow minus deny (a, b)")


def test_a_template_whose_servers_are_no_object_is_refused() -> None:
    with pytest.raises(UsageError) as caught:
        base_document({"mcpServers": ["a"]}, {"mcpProxy": {}})
    assert caught.value.message == 'the template\'s "mcpServers" must be a JSON object'


def test_the_base_document_is_a_copy_of_the_targets_settings_to_any_depth() -> None:
    """Changing the document rendered into, at any depth, leaves the target's own base
    settings (and a template) as they were, for the next rendering."""
    head = {"mcpProxy": {"options": {"panicIfInvalid": False}}}
    template = {"extra": {"nested": {"x": 1}}, "mcpServers": {"kept": {"command": "a"}}}
    doc, servers = base_document(template, head)
    doc["mcpProxy"]["options"]["panicIfInvalid"] = True
    doc["extra"]["nested"]["x"] = 2
    servers["new"] = {"command": "b"}
    assert head == {"mcpProxy": {"options": {"panicIfInvalid": False}}}
    assert template == {"extra": {"nested": {"x": 1}}, "mcpServers": {"kept": {"command": "a"}}}
