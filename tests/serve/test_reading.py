"""The read-only tools and resources of ``mcpctl serve``, through the SDK's client, in both
protocol eras: structured results that match their output schemas, secrets never in them,
a third party's text marked as theirs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import mcp_types as types
import pytest

from tests.conftest import SERVERS
from tests.serve.conftest import ERAS, PY, Served, basic_server, error_text, structured

READ_ONLY = {"list_servers", "health", "doctor", "list_tools", "search_registries",
             "snapshot_diff"}  # fmt: skip
CHANGES = {"add_server", "add_from_registry", "enable_server", "disable_server",
           "remove_server", "secret_set"}  # fmt: skip
TOKEN = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
KEPT = "kept" + "q7w8e9r0t1y2u3i4o5p6"  # no pattern knows it: only the keyring does


def run(fn: Any) -> Any:
    return anyio.run(fn)


def check_schema(tool: types.Tool, result: types.CallToolResult) -> dict[str, Any]:
    """The result's structured content, valid against the tool's output schema."""
    data = structured(result)
    assert tool.output_schema is not None, tool.name
    jsonschema.validate(data, tool.output_schema)
    return data


@pytest.mark.parametrize("mode", ERAS)
def test_read_only_by_default_every_tool_with_an_output_schema(served: Served, mode: str) -> None:
    served.write({"time": basic_server()})

    async def go() -> tuple[set[str], set[str], str]:
        async with served.client(mode=mode) as client:
            plain = {t.name for t in (await client.list_tools()).tools}
        async with served.client("--allow-changes", mode=mode) as client:
            listed = (await client.list_tools()).tools
            assert all(t.output_schema for t in listed), [t.name for t in listed]
            return plain, {t.name for t in listed}, client.protocol_version

    plain, changing, version = run(go)
    assert plain == READ_ONLY
    assert changing == READ_ONLY | CHANGES
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")


@pytest.mark.parametrize("mode", ERAS)
def test_list_servers_shows_state_transport_group_and_never_a_secret(
    served: Served, mode: str
) -> None:
    served.env["GH_TOKEN"] = TOKEN  # a placeholder's value in the environment
    served.write({
        "github": {"command": "npx", "args": ["-y", "gh"], "env": {"GITHUB_TOKEN": "${GH_TOKEN}"},
                   "groups": ["work"], "description": "GitHub \x1b[2J tools"},
        "docs": {"url": "https://docs.example/mcp", "enabled": False,
                 "headers": {"X-Api-Key": TOKEN}},
    })  # fmt: skip

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with served.client(mode=mode) as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "list_servers")
            everything = check_schema(tool, await client.call_tool("list_servers", {}))
            work = structured(await client.call_tool("list_servers", {"group": "work"}))
            return everything, work

    everything, work = run(go)
    rows = {s["name"]: s for s in everything["servers"]}
    assert rows["github"]["state"] == "enabled" and rows["docs"]["state"] == "disabled"
    assert rows["github"]["transport"] == "stdio" and rows["docs"]["transport"] == "streamable-http"
    assert rows["github"]["groups"] == ["work"] and rows["github"]["secrets"] == ["GH_TOKEN"]
    assert rows["github"]["target"] == "npx -y gh"
    assert rows["github"]["description"] == {
        "untrusted": True,
        "source": "config",
        "value": "GitHub \\x1b[2J tools",
    }  # an escape is shown, never sent as it is
    assert rows["docs"]["entry"]["headers"] == {"X-Api-Key": "****"}
    assert "description" not in rows["github"]["entry"]  # only where it is marked
    assert [s["name"] for s in work["servers"]] == ["github"]
    assert TOKEN not in json.dumps(everything)


@pytest.mark.parametrize("mode", ERAS)
def test_health_probes_and_marks_what_the_server_says(served: Served, mode: str) -> None:
    served.write({
        "basic": basic_server(),
        "hostile": {"command": PY, "args": [str(SERVERS / "hostile.py"), "--exit"]},
    })  # fmt: skip

    async def go() -> dict[str, Any]:
        async with served.client(mode=mode) as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "health")
            return check_schema(tool, await client.call_tool("health", {"timeout_seconds": 60}))

    data = run(go)
    by_name = {s["name"]: s for s in data["servers"]}
    assert data["total"] == 2 and data["healthy"] == 1
    assert by_name["basic"]["status"] == "healthy" and by_name["basic"]["tool_count"]
    assert by_name["basic"]["server_info"]["untrusted"] is True
    hostile = by_name["hostile"]
    assert hostile["status"] == "unavailable" and hostile["error"]["code"] == "server_exited"
    stderr = hostile["stderr"]
    assert stderr["untrusted"] is True and stderr["source"] == "server hostile"
    assert any("fatal" in line for line in stderr["value"])
    assert "\x1b" not in json.dumps(data, ensure_ascii=False)


@pytest.mark.parametrize("mode", ERAS)
def test_no_secret_value_leaves_through_any_read_tool(served: Served, mode: str) -> None:
    # leaky.py prints its environment on stderr and says its token everywhere it can; one
    # secret comes from the environment, one from the keyring.
    import subprocess

    from tests.conftest import MCPCTL

    served.env["LEAK_TOKEN"] = TOKEN
    kept = subprocess.run([*MCPCTL, "secret", "set", "KEPT"], input=KEPT, env=served.env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    leaky = {"command": PY, "args": [str(SERVERS / "leaky.py"), "--token", "${LEAK_TOKEN}",
                                     "--describe"], "env": {"LEAKY_TOKEN": "${KEPT}"}}  # fmt: skip
    dying = {**leaky, "args": [*leaky["args"], "--exit"]}
    served.write({"leaky": leaky, "dying": dying})

    async def go() -> list[str]:
        async with served.client(mode=mode) as client:
            texts = []
            for name, args in (("list_servers", {}), ("health", {}), ("list_tools", {}),
                               ("doctor", {"name": "dying"}), ("snapshot_diff", {"probe": True})):  # fmt: skip
                result = await client.call_tool(name, args)
                texts.append(json.dumps(result.structured_content) + repr(result.content))
            for uri in ("mcpctl://config", "mcpctl://report"):
                texts.append(repr(await client.read_resource(uri)))
            return texts

    texts = run(go)
    for secret in (TOKEN, KEPT):
        assert all(secret not in t for t in texts), next(t for t in texts if secret in t)[:400]
    assert "leak" in texts[2]  # the tools were listed (with the token redacted)


@pytest.mark.parametrize("mode", ERAS)
def test_list_tools_costs_and_marks_descriptions(served: Served, mode: str) -> None:
    served.write({
        "basic": {**basic_server(), "tools": {"deny": ["slow"]}},
        "hostile": {"command": PY, "args": [str(SERVERS / "hostile.py")]},
    })  # fmt: skip

    async def go() -> dict[str, Any]:
        async with served.client(mode=mode) as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "list_tools")
            return check_schema(
                tool, await client.call_tool("list_tools", {"prefix": "underscore"})
            )

    data = run(go)
    tools = {t["name"]: t for t in data["tools"]}
    assert "mcp_basic_echo" in tools and "mcp_basic_slow" not in tools  # deny is honoured
    echo = tools["mcp_basic_echo"]
    assert echo["tokens"] > 0 and echo["exposed"] and echo["params"] == "text*: string"
    assert echo["description"]["untrusted"] and echo["description"]["source"] == "server basic"
    assert echo["input_schema"]["value"]["required"] == ["text"]
    totals = {s["name"]: s["tokens"] for s in data["servers"]}
    assert data["total_tokens"] == sum(totals.values()) > 0
    say = tools["mcp_hostile_say"]
    assert say["description"]["source"] == "server hostile"
    assert "\x1b" not in json.dumps(data, ensure_ascii=False)
    assert "\\x1b" in say["description"]["value"]


@pytest.mark.parametrize("mode", ERAS)
def test_doctor_names_the_failing_layer(served: Served, mode: str) -> None:
    served.write({"broken": {"command": PY, "args": [str(SERVERS / "misbehave.py"), "exit"]}})

    async def go() -> tuple[dict[str, Any], str]:
        async with served.client(mode=mode) as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "doctor")
            found = check_schema(tool, await client.call_tool("doctor", {"name": "broken"}))
            unknown = error_text(await client.call_tool("doctor", {"name": "brokn"}))
            return found, unknown

    found, unknown = run(go)
    assert not found["ok"] and found["next"] == "protocol"
    spawn = next(s for s in found["steps"] if s["id"] == "spawn")
    assert spawn["status"] == "failed" and "exit status 3" in spawn["detail"]
    assert "stderr" not in spawn["detail"]  # mcpctl's words; the server's come apart
    assert spawn["stderr"]["untrusted"] and spawn["stderr"]["source"] == "server broken"
    assert "server_not_found" in unknown and "broken" in unknown  # the hint names it


@pytest.mark.parametrize("mode", ERAS)
def test_search_registries_marks_the_registrys_words(served: Served, mode: str) -> None:
    async def go() -> dict[str, Any]:
        async with served.client(mode=mode) as client:
            tool = next(
                t for t in (await client.list_tools()).tools if t.name == "search_registries"
            )
            return check_schema(
                tool, await client.call_tool("search_registries", {"query": "clock"})
            )

    data = run(go)
    [hit] = data["results"]
    assert hit["name"] == "io.example/clock" and hit["version"] == "1.2.0"
    assert hit["needs_secrets"] and hit["transports"] == ["stdio"]
    assert hit["description"]["untrusted"] and hit["description"]["source"] == "registry local"
    assert "IGNORE PREVIOUS INSTRUCTIONS" in hit["description"]["value"]


@pytest.mark.parametrize("mode", ERAS)
def test_snapshot_diff_against_a_lock_file(served: Served, mode: str) -> None:
    import subprocess

    from tests.conftest import MCPCTL

    served.write({"basic": basic_server()})
    lock = served.tmp / "mcp-lock.json"
    saved = subprocess.run([*MCPCTL, "--config", str(served.config), "snapshot", "save", "-o",
                            str(lock)], env=served.env, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert saved.returncode == 0, saved.stderr
    served.write({"basic": basic_server("--tools", "3"), "other": basic_server()})

    async def go() -> tuple[dict[str, Any], str]:
        async with served.client(mode=mode) as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "snapshot_diff")
            found = check_schema(tool, await client.call_tool("snapshot_diff",
                                                              {"against": str(lock)}))  # fmt: skip
            missing = error_text(await client.call_tool("snapshot_diff",
                                                        {"against": str(served.tmp / "no.json")}))  # fmt: skip
            return found, missing

    found, missing = run(go)
    assert found["changed"] and found["added"] == ["other"] and found["removed"] == []
    assert [s["name"] for s in found["servers"]] == ["basic"]
    assert "args" in found["servers"][0]["fields"]
    assert found["against"] == str(lock) and not found["tools_compared"]
    assert "there is no snapshot" in missing


@pytest.mark.parametrize("mode", ERAS)
def test_resources_config_redacted_and_last_report(served: Served, mode: str) -> None:
    served.write({"docs": {"url": "https://docs.example/mcp", "headers": {"X-Api-Key": TOKEN},
                           "description": "Docs"}})  # fmt: skip

    async def go() -> tuple[list[str], dict[str, Any], dict[str, Any]]:
        async with served.client(mode=mode) as client:
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            config = await client.read_resource("mcpctl://config")
            report = await client.read_resource("mcpctl://report")
            texts = [c.text for c in (*config.contents, *report.contents)
                     if isinstance(c, types.TextResourceContents)]  # fmt: skip
            return listed, json.loads(texts[0]), json.loads(texts[1])

    listed, config, report = run(go)
    assert sorted(listed) == ["mcpctl://config", "mcpctl://report"]
    assert config["document"]["docs"]["headers"] == {"X-Api-Key": "****"}
    assert config["document"]["docs"]["description"] == {
        "untrusted": True, "source": "config", "value": "Docs",
    }  # fmt: skip
    assert config["path"] == str(served.config)
    assert report["report"] is None and "no snapshot yet" in report["note"]


def test_what_a_server_answered_comes_apart_from_mcpctls_words(served: Served) -> None:
    # raw.py answers every list (list-error), or prompts/list only (prompts-error), with
    # the JSON-RPC error "the index is unavailable": the server's words, not mcpctl's.
    served.write({
        "lists": {"command": PY, "args": [str(SERVERS / "raw.py"), "list-error"]},
        "prompts": {"command": PY, "args": [str(SERVERS / "raw.py"), "prompts-error"]},
    })  # fmt: skip

    async def go() -> dict[str, Any]:
        async with served.client() as client:
            return structured(await client.call_tool("health", {}))

    by_name = {s["name"]: s for s in run(go)["servers"]}
    lists, prompts = by_name["lists"], by_name["prompts"]
    assert (
        lists["error"]["code"] == "list_failed" and lists["error"]["message"] == "tools/list failed"
    )
    assert lists["error"]["quoted"]["untrusted"] and "index is unavailable" in lists["error"][
        "quoted"]["value"]  # fmt: skip
    assert prompts["status"] == "degraded" and prompts["reasons"] == ["prompts/list failed"]
    assert "index is unavailable" in prompts["answered"][0]["value"]
    assert "index is unavailable" not in json.dumps([prompts["reasons"], lists["error"]["message"]])


def test_a_project_file_nobody_approved_starts_nothing(served: Served, tmp_path: Path) -> None:
    """serve's config is a project's file (not in mcpctl's config dir): until the user runs
    ``mcpctl trust``, a tool that would start a server refuses it, and says how to approve."""
    served.env.pop("MCPCTL_TRUST", None)
    served.env.pop("CI", None)
    ran = tmp_path / "ran"
    served.write({"notes": {"command": "sh", "args": ["-c", f"touch {ran}"]}})

    async def go() -> tuple[str, str, dict[str, Any]]:
        async with served.client() as client:
            refused = error_text(await client.call_tool("health", {}))
            diagnosed = error_text(await client.call_tool("doctor", {"name": "notes"}))
            listed = structured(await client.call_tool("list_servers", {}))
            return refused, diagnosed, listed

    refused, diagnosed, listed = run(go)
    for text in (refused, diagnosed):
        assert "is not trusted" in text and "mcpctl trust" in text, text
    assert [s["name"] for s in listed["servers"]] == ["notes"]  # reading stays open
    assert not ran.exists()
    approve = subprocess.run(
        [PY, "-m", "mcpctl", "--config", str(served.config), "trust", "--yes"],
        env=served.env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert approve.returncode == 0, approve.stderr

    async def again() -> None:
        async with served.client() as client:
            await client.call_tool("health", {})

    run(again)
    assert ran.exists()
