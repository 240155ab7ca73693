"""What a server offers, whole (mcpctl.probe.catalog): its tools as sent, its prompts and
resource templates, every page, who it is and which era it speaks -- listed in-process
from a scripted peer (tests/probe/scriptedpeer.py), and from tests/servers/raw.py (a stdio
server without the SDK, quick to start) for catalog() and catalog_all()."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from mcpctl.config.model import ServerEntry
from mcpctl.probe.catalog import Catalog, catalog, catalog_all, catalog_of
from mcpctl.probe.eras import Era, EraMemory
from mcpctl.sdk import MCPError
from tests.conftest import SERVERS
from tests.probe.scriptedpeer import MODERN, NOT_FOUND, initialized, with_connection

ALL_CAPS = {
    "tools": {},
    "prompts": {},
    "resources": {},
    "logging": {},
    "completions": {},
    "experimental": {},
}
TOOL = {
    "name": "echo",
    "description": "says it back",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    "_meta": {"vendor/x": 1},
    "icons": [{"src": "https://example.com/e.png"}],
}
MODERN_RESULT = {"ttlMs": 0, "cacheScope": "private", "resultType": "complete"}
PROMPT = {"name": "greet", "description": "hello", "arguments": [{"name": "who"}]}
TEMPLATE = {"name": "file", "uriTemplate": "file:///{path}", "mimeType": "text/plain"}


def server(capabilities: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {**initialized(), "capabilities": capabilities, **more}


def listed(answers: dict[str, list[Any]]) -> tuple[Any, Any]:
    answers = {"server/discover": [NOT_FOUND], **answers}
    return with_connection(answers, catalog_of)


def test_a_catalog_holds_every_definition_as_sent() -> None:
    found, peer = listed(
        {
            "initialize": [server(ALL_CAPS, instructions="use echo")],
            "tools/list": [{"tools": [TOOL]}],
            "prompts/list": [{"prompts": [PROMPT]}],
            "resources/templates/list": [{"resourceTemplates": [TEMPLATE]}],
        }
    )
    assert isinstance(found, Catalog) and found.ok and found.error is None
    assert found.name == "srv" and found.transport == "stdio" and found.type == "external"
    assert found.capabilities == [
        "tools", "resources", "prompts", "logging", "completions", "experimental",
    ]  # fmt: skip
    assert found.tools == [TOOL]
    assert found.prompts == [PROMPT]
    assert found.resource_templates == [TEMPLATE]
    assert found.server_info == {"name": "peer", "version": "1"}
    assert found.protocol_version == "2025-11-25"
    assert found.era == Era("legacy", "2025-11-25", (), "fallback")
    assert found.instructions == "use echo"
    assert found.warnings == []
    assert peer.methods[-3:] == ["tools/list", "prompts/list", "resources/templates/list"]


def test_only_what_the_server_advertises_is_listed() -> None:
    found, peer = listed({"initialize": [server({"prompts": {}, "logging": {}})],
                          "prompts/list": [{"prompts": [PROMPT]}]})  # fmt: skip
    assert found.capabilities == ["prompts", "logging"]
    assert found.tools == [] and found.resource_templates == [] and found.prompts == [PROMPT]
    assert "tools/list" not in peer.methods and "resources/templates/list" not in peer.methods
    found, peer = listed({"initialize": [server({"resources": {}})],
                          "resources/templates/list": [{"resourceTemplates": [TEMPLATE]}]})  # fmt: skip
    assert found.capabilities == ["resources"] and found.resource_templates == [TEMPLATE]
    assert peer.methods[-1] == "resources/templates/list" and "prompts/list" not in peer.methods


def test_a_server_advertising_nothing_lists_nothing() -> None:
    found, peer = listed({"initialize": [server({})]})
    assert found.capabilities == [] and found.tools == [] and found.prompts == []
    assert peer.methods == ["server/discover", "initialize"]
    assert found.to_dict()["capabilities"] == []


def test_every_page_is_listed_with_its_cursor() -> None:
    second = {**TOOL, "name": "add"}
    found, peer = listed(
        {
            "initialize": [server({"tools": {}, "prompts": {}})],
            "tools/list": [{"tools": [TOOL], "nextCursor": "p2"}, {"tools": [second]}],
            "prompts/list": [
                {"prompts": [PROMPT], "nextCursor": "q2"},
                {"prompts": [{"name": "bye"}]},
            ],
        }
    )
    assert [t["name"] for t in found.tools] == ["echo", "add"]
    assert [p["name"] for p in found.prompts] == ["greet", "bye"]
    cursors = [(m, (p or {}).get("cursor")) for m, p in peer.asked if m.endswith("/list")]
    assert cursors == [
        ("tools/list", None), ("tools/list", "p2"), ("prompts/list", None), ("prompts/list", "q2"),
    ]  # fmt: skip


def test_resource_templates_are_paged_too() -> None:
    found, peer = listed(
        {
            "initialize": [server({"resources": {}})],
            "resources/templates/list": [
                {"resourceTemplates": [TEMPLATE], "nextCursor": "r2"},
                {"resourceTemplates": [{**TEMPLATE, "name": "dir", "uriTemplate": "dir:///{p}"}]},
            ],
        }
    )
    assert [t["name"] for t in found.resource_templates] == ["file", "dir"]
    assert [(p or {}).get("cursor") for m, p in peer.asked if m.endswith("list")] == [None, "r2"]


def test_a_tool_is_kept_as_the_server_sent_it_before_any_repair() -> None:
    untyped = {"name": "read", "inputSchema": {"properties": {"path": {"type": "string"}}}}
    found, _ = listed({"initialize": [server({"tools": {}})], "tools/list": [{"tools": [untyped]}]})
    assert found.tools == [untyped]  # no "type" added
    assert found.warnings == ["tool 'read': inputSchema has no \"type\"; read as an object schema"]


def test_an_advertised_list_the_server_lacks_is_a_warning() -> None:
    long = "x" * 300
    found, _ = listed(
        {
            "initialize": [server({"tools": {}, "prompts": {}, "resources": {}})],
            "tools/list": [{"tools": [TOOL]}],
            "prompts/list": [(-32601, "no prompts here", None)],
            "resources/templates/list": [(-32601, long, None)],
        }
    )
    assert found.ok and found.tools == [TOOL] and found.prompts == []
    assert found.warnings == [
        "it advertises prompts but cannot list them (no prompts here)",
        f"it advertises resource templates but cannot list them ({'x' * 119}…)",
    ]


def test_another_listing_error_is_raised() -> None:
    found, _ = listed(
        {"initialize": [server({"prompts": {}})], "prompts/list": [(-32603, "down", None)]}
    )
    assert isinstance(found, MCPError) and found.error.message == "down"


def test_a_method_lost_after_the_first_page_is_raised() -> None:
    found, _ = listed(
        {
            "initialize": [server({"tools": {}})],
            "tools/list": [{"tools": [TOOL], "nextCursor": "p2"}, (-32601, "gone", None)],
        }
    )
    assert isinstance(found, MCPError) and found.error.message == "gone"


def test_a_modern_servers_catalog() -> None:
    discovered = {
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {}},
        "instructions": "modern",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "2"}},
    }
    found, peer = with_connection(
        {"server/discover": [discovered], "tools/list": [{"tools": [TOOL], **MODERN_RESULT}]},
        catalog_of,
    )
    assert found.capabilities == ["tools"] and found.tools == [TOOL]
    assert found.era == Era("modern", MODERN, (MODERN,), "discovered")
    assert found.protocol_version == MODERN and found.instructions == "modern"
    assert found.server_info == {"name": "m", "version": "2"}
    assert "initialize" not in peer.methods


def test_a_server_that_does_not_say_who_it_is() -> None:
    discovered = {"supportedVersions": [MODERN], "capabilities": {}}
    found, _ = with_connection({"server/discover": [discovered]}, catalog_of)
    assert found.server_info is None and found.instructions is None
    assert found.to_dict()["serverInfo"] is None


def test_the_json_form() -> None:
    era = Era("legacy", "2025-11-25", ("2025-11-25",), "fallback")
    good = Catalog(
        "a", "builtin", "sse", {"name": "n"}, "2025-11-25", era, "hi", ["tools"],
        [TOOL], [PROMPT], [TEMPLATE], warnings=["w"],
    )  # fmt: skip
    assert good.to_dict() == {
        "name": "a",
        "type": "builtin",
        "transport": "sse",
        "serverInfo": {"name": "n"},
        "protocolVersion": "2025-11-25",
        "protocol": era.to_dict(),
        "instructions": "hi",
        "capabilities": ["tools"],
        "tools": [TOOL],
        "prompts": [PROMPT],
        "resourceTemplates": [TEMPLATE],
        "error": None,
        "warnings": ["w"],
    }
    bad = Catalog("b", error="timeout", message="no answer", hint="raise it")
    assert not bad.ok
    assert bad.to_dict()["error"] == {"code": "timeout", "message": "no answer", "hint": "raise it"}
    assert bad.to_dict()["protocol"] is None and bad.to_dict()["transport"] == "stdio"
    assert bad.to_dict()["type"] == "external"


# --- catalog() and catalog_all(): a real stdio server, and servers that fail ----------------


def raw(mode: str = "clean") -> ServerEntry:
    return ServerEntry(command=sys.executable, args=(str(SERVERS / "raw.py"), mode), timeout=20000)


def run(fn: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(60):
            return await fn()

    return anyio.run(bounded)


def test_catalog_of_a_real_server() -> None:
    found = run(lambda: catalog("raw", raw(), protocol="legacy"))
    assert found.ok, found
    assert found.name == "raw" and found.transport == "stdio"
    assert [t["name"] for t in found.tools] == ["get_time"]
    assert found.server_info == {"name": "raw-test-server", "version": "0.1.0"}
    assert found.era == Era("legacy", "2025-11-25", (), "pinned")
    assert found.latency_ms > 0 and found.stderr == []


def test_a_failing_server_is_a_catalog_with_its_error_never_an_exception() -> None:
    script = "import sys; sys.stderr.write('bad token\\n'); sys.exit(3)"
    entry = ServerEntry(command=sys.executable, args=("-c", script), timeout=20000)
    found = run(lambda: catalog("dies", entry, kind="builtin"))
    assert not found.ok and found.error == "server_exited", found
    assert found.type == "builtin" and found.message and found.tools == []
    assert found.stderr == ["bad token"]
    assert found.latency_ms > 0


def test_a_server_that_cannot_start_has_its_code_message_and_hint() -> None:
    entry = ServerEntry(command="/nonexistent/mcp-server-x")
    found = run(lambda: catalog("gone", entry))
    assert not found.ok and found.error == "command_not_found", found
    assert "/nonexistent/mcp-server-x" in (found.message or "")
    assert found.hint


def test_a_listing_failure_is_the_catalogs_error() -> None:
    found = run(lambda: catalog("broken", raw("list-error"), protocol="legacy"))
    assert (
        not found.ok and found.error is not None and "index is unavailable" in (found.message or "")
    ), found


def test_catalog_all_in_input_order_reporting_each() -> None:
    seen: list[str] = []
    entries = [
        ("z", ServerEntry(command="/nonexistent/z"), "external"),
        ("a", raw(), "builtin"),
    ]
    found = run(lambda: catalog_all(entries, on_result=lambda c: seen.append(c.name),
                                    protocol="legacy"))  # fmt: skip
    assert list(found) == ["z", "a"] and sorted(seen) == ["a", "z"]
    assert found["z"].error == "command_not_found" and found["a"].ok
    assert found["a"].type == "builtin" and found["a"].era is not None
    assert found["a"].era.detected == "pinned"
    mapping = run(lambda: catalog_all({"only": ServerEntry(command="/nonexistent/o")}))
    assert list(mapping) == ["only"] and mapping["only"].type == "external"


def test_an_advertised_tool_list_the_server_lacks_is_a_warning() -> None:
    found, _ = listed({"initialize": [server({"tools": {}})], "tools/list": [NOT_FOUND]})
    assert found.ok and found.tools == []
    assert found.warnings == [
        "it advertises tools but cannot list them (Method not found: server/discover)"
    ]


def test_a_catalog_says_which_transport_it_was_listed_over() -> None:
    found, _ = with_connection(
        {"server/discover": [NOT_FOUND], "initialize": [server({})]}, catalog_of, transport="sse"
    )
    assert found.transport == "sse"


# The stateless era on the server's word, refused by the first request: each list is
# asked through the connection, which then takes the handshake and asks again.
REFUSED = (-32600, "send initialize first", None)
STATELESS = {"supportedVersions": [MODERN], "resultType": "complete"}


def test_the_first_list_refused_in_the_stateless_era_is_asked_again_after_the_handshake() -> None:
    for capability, method, key, item in (
        ("tools", "tools/list", "tools", TOOL),
        ("prompts", "prompts/list", "prompts", PROMPT),
        ("resources", "resources/templates/list", "resourceTemplates", TEMPLATE),
    ):
        found, peer = with_connection(
            {
                "server/discover": [{**STATELESS, "capabilities": {capability: {}}}],
                method: [REFUSED, {key: [item]}],
                "initialize": [server({capability: {}})],
            },
            catalog_of,
        )
        assert isinstance(found, Catalog), (method, found)
        assert found.era == Era("legacy", "2025-11-25", (), "fallback"), method
        assert found.protocol_version == "2025-11-25"
        assert peer.methods == ["server/discover", method, "initialize", method]
        assert (found.tools or found.prompts or found.resource_templates) == [item]


def silent_server(**kw: Any) -> ServerEntry:
    script = '{"initialize": ["silent"]}'
    args = (str(SERVERS / "scripted.py"), script)
    return ServerEntry(command=sys.executable, args=args, **{"timeout": 60000, **kw})


def test_the_timeout_given_bounds_the_catalog_over_the_entrys() -> None:
    found = run(lambda: catalog("slow", silent_server(), timeout=1))
    assert found.error == "timeout" and found.type == "external", found
    assert 1000 <= found.latency_ms < 50_000
    many = run(lambda: catalog_all({"slow": silent_server()}, timeout=1))
    assert many["slow"].error == "timeout"


def test_the_servers_name_is_in_its_errors() -> None:
    entry = ServerEntry(command=sys.executable, args=("x", "${MCPCTL_TEST_NOT_SET_Q}"))
    found = run(lambda: catalog("named", entry))
    assert found.error == "missing_variable" and "'named'" in (found.message or "")


def test_a_remote_servers_transport_is_known_when_it_cannot_be_reached() -> None:
    from tests.conftest import reserved_port

    with reserved_port() as port:
        for transport, expected in ((None, "streamable-http"), ("sse", "sse")):
            entry = ServerEntry(url=f"http://127.0.0.1:{port}/mcp", transport=transport,
                                timeout=10000)  # fmt: skip
            found = run(lambda e=entry: catalog("far", e))
            assert not found.ok and found.transport == expected, found


def scripted_args() -> tuple[str, str]:
    return (str(SERVERS / "scripted.py"), "${MCPCTL_TEST_SCRIPT_Q}")


def test_secrets_fill_the_entrys_placeholders() -> None:
    entry = ServerEntry(command=sys.executable, args=scripted_args(), timeout=20000)
    secrets = {"MCPCTL_TEST_SCRIPT_Q": json.dumps({"initialize": [{"result": initialized()}]})}
    one = run(lambda: catalog("s", entry, secrets=secrets.get, protocol="legacy"))
    assert one.ok and one.server_info == {"name": "peer", "version": "1"}, one
    many = run(lambda: catalog_all({"s": entry}, secrets=secrets.get, protocol="legacy"))
    assert many["s"].ok, many["s"]


def test_the_era_detected_is_remembered(tmp_path: Path) -> None:
    script = json.dumps({"initialize": [{"result": initialized()}]})
    entry = ServerEntry(command=sys.executable, args=(str(SERVERS / "scripted.py"), script),
                        timeout=20000)  # fmt: skip
    memory = EraMemory(tmp_path / "eras.json")
    first = run(lambda: catalog("e", entry, eras=memory))
    assert first.ok and first.era is not None and first.era.detected == "fallback"
    assert memory.recall(entry) == Era("legacy", "2025-11-25", (), "remembered")
    other = EraMemory(tmp_path / "other.json")
    many = run(lambda: catalog_all({"e": entry}, eras=other))
    assert many["e"].ok and other.recall(entry) is not None


def test_catalog_all_uses_the_servers_it_started_early(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    script = json.dumps({"initialize": [{"result": initialized()}]})
    entry = ServerEntry(
        command=sys.executable, args=(str(SERVERS / "scripted.py"), script), timeout=20000,
        env={"SCRIPTED_SERVER_STARTS": str(starts)},
    )  # fmt: skip
    found = run(lambda: catalog_all({"a": entry, "b": entry}, protocol="legacy"))
    assert found["a"].ok and found["b"].ok
    assert len(starts.read_text().splitlines()) == 2  # one process each, none wasted


def test_a_cursor_sent_again_ends_the_listing_with_a_warning() -> None:
    found, _ = listed(
        {
            "initialize": [server({"tools": {}})],
            "tools/list": [
                {"tools": [TOOL], "nextCursor": "p"},
                {"tools": [{**TOOL, "name": "add"}], "nextCursor": "p"},
            ],
        }
    )
    assert [t["name"] for t in found.tools] == ["echo", "add"]
    assert found.warnings == ["tools: the server sent the cursor 'p' again; the listing ends there"]


def test_secrets_reach_servers_started_late_too() -> None:
    # one start-up slot: the second server is started by its catalog, not beforehand
    entry = ServerEntry(command=sys.executable, args=scripted_args(), timeout=20000)
    secrets = {"MCPCTL_TEST_SCRIPT_Q": json.dumps({"initialize": [{"result": initialized()}]})}
    found = run(lambda: catalog_all({"a": entry, "b": entry}, secrets=secrets.get,
                                    concurrency=1, protocol="legacy"))  # fmt: skip
    assert found["a"].ok and found["b"].ok, found


# --- what mutation testing found unpinned ---------------------------------------------------


def test_catalog_all_hands_the_fan_out_its_slots_and_secrets(monkeypatch: Any) -> None:
    # How many servers start at once, and which start before their catalog (those whose
    # placeholders the secrets fill), is the fan-out's (tests/probe/test_fanout.py).
    from mcpctl.probe import health

    told: dict[str, Any] = {}
    fan_out = health.run_all

    async def spy(entries: Any, work: Any, **options: Any) -> Any:
        told.update(options)
        return await fan_out(entries, work, **options)

    monkeypatch.setattr(health, "run_all", spy)
    secrets: dict[str, str] = {}
    found = run(lambda: catalog_all({"gone": ServerEntry(command="/nonexistent/g")},
                                    concurrency=3, secrets=secrets.get))  # fmt: skip
    assert found["gone"].error == "command_not_found"
    assert (told["concurrency"], told["secrets"]) == (3, secrets.get)


def test_a_catalog_frees_its_start_up_slot_and_keeps_the_spawns_stderr() -> None:
    from mcpctl.probe.catalog import _catalog
    from mcpctl.probe.health import Speaking
    from mcpctl.probe.spawn import StdioDiagnostics

    freed: list[str] = []
    found = run(lambda: _catalog("raw", raw(), "external", 20, None, Speaking(protocol="legacy"),
                                 None, lambda: freed.append("freed")))  # fmt: skip
    assert found.ok and freed == ["freed"], found
    # The diagnostics of a server started before its catalog: its stderr is the catalog's.
    diag = StdioDiagnostics()
    diag.stderr.append("booting")
    gone = ServerEntry(command="/nonexistent/g")
    found = run(lambda: _catalog("gone", gone, "external", 20, None, Speaking(), None, None, diag))
    assert found.error == "command_not_found" and found.stderr == ["booting"]
