"""tools and call through the CLI: catalog and naming, arguments, timeouts, content, auth."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import ToolFilter
from mcpctl.probe.naming import build_catalog, prefixed
from tests.conftest import SERVERS, Cli, write_config
from tests.test_tokencount import independent_tokens

PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}
BASIC_TOOLS = ["echo", "add", "weather", "fail", "slow", "record", "image", "audio", "resource",
               "headers"]  # fmt: skip
CALL_LOG_VAR = "BASIC_SERVER_CALL_LOG"


@pytest.fixture
def remote_basic(
    http_server: Any, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """basic.py over streamable HTTP as server 'basic' (one process for many calls).

    Returns the file its ``record`` tool appends to: what reached the server.
    """
    log = tmp_path / "calls.log"
    monkeypatch.setenv(CALL_LOG_VAR, str(log))  # inherited by the server started next
    write_config(config_path, {"basic": {"url": http_server("streamable-http") + "/mcp"}})
    return log


# --- tools -----------------------------------------------------------------------------


@pytest.mark.slow
def test_tools_catalog_with_prefix_and_filters(cli: Cli, config_path: Path) -> None:
    filters = {"allow": ["echo", "add", "weather", "fail"], "deny": ["fail"]}
    write_config(config_path, {"basic": {**BASIC, "tools": filters}})
    r = cli("tools", "--prefix", "underscore", "--json")
    assert r.exit_code == 0
    names = [t["name"] for t in r.json["data"]["tools"]]
    assert names == ["mcp_basic_echo", "mcp_basic_add", "mcp_basic_weather"]
    add = r.json["data"]["tools"][1]
    assert add["params"] == "a*: integer, b*: integer" and add["description"] == "Add two integers."
    r = cli("tools", "--all", "--json")
    listed = r.json["data"]["tools"]
    assert [t["name"] for t in listed] == BASIC_TOOLS
    hidden = {t["name"] for t in listed if not t["exposed"]}
    assert hidden == set(BASIC_TOOLS) - {"echo", "add", "weather"}
    human = cli("tools", "--prefix", "colon")
    assert human.stdout.splitlines()[0].startswith("basic:echo\tbasic\ttext*: string\t")


@pytest.mark.slow
def test_bare_names_shared_by_two_servers_are_a_warning_unless_asked(
    cli: Cli, config_path: Path
) -> None:
    write_config(config_path, {"x": BASIC, "y": BASIC})
    r = cli("tools", "--json")
    # A host that prefixes tools does not see them collide: not a failure, but said.
    assert (r.exit_code, r.json["ok"], r.json["errors"]) == (0, True, [])
    assert r.json["data"]["collisions"][0] == {
        "name": "echo",
        "sources": [["x", "echo"], ["y", "echo"]],
    }
    assert "name collision: 'echo' is exposed by x/echo, y/echo" in r.json["warnings"]
    # A CI gate on the budget is not failed by it either.
    assert cli("tools", "--budget", "1000000").exit_code == 0
    # Asked for: every collision is an error, never ok: false with no error.
    r = cli("tools", "--collisions", "error", "--json")
    assert (r.exit_code, r.json["ok"]) == (1, False)
    assert {e["code"] for e in r.json["errors"]} == {"name_collision"}
    assert len(r.json["errors"]) == len(r.json["data"]["collisions"]) == len(BASIC_TOOLS)
    assert not any("name collision" in w for w in r.json["warnings"])


@pytest.mark.slow
def test_a_prefixed_name_that_still_collides_is_an_error(cli: Cli, config_path: Path) -> None:
    extra = {"command": PY, "args": [str(SERVERS / "legacy_tasks.py")],
             "env": {"LEGACY_TASKS_TOOL": "b_echo"}, "tools": {"allow": ["b_echo"]}}  # fmt: skip
    write_config(config_path, {"a_b": {**BASIC, "tools": {"allow": ["echo"]}}, "a": extra})
    r = cli("tools", "--prefix", "underscore", "--json")
    assert (r.exit_code, r.json["ok"]) == (1, False)
    (err,) = r.json["errors"]
    assert err["code"] == "name_collision"
    assert err["message"] == "name collision: 'mcp_a_b_echo' is exposed by a_b/echo, a/b_echo"
    assert "tools.allow/deny" in err["hint"]
    # Under another naming, or told to warn, the same servers pass.
    assert cli("tools", "--prefix", "colon").exit_code == 0
    r = cli("tools", "--prefix", "underscore", "--collisions", "warn", "--json")
    assert (r.exit_code, r.json["errors"]) == (0, [])
    assert any("name collision" in w for w in r.json["warnings"])


def test_a_server_that_cannot_be_listed_is_an_error_of_the_run(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"gone": {"command": "no-such-server-binary-xyz"}, "ok": BASIC})
    r = cli("tools", "--json")
    assert (r.exit_code, r.json["ok"]) == (1, False)
    (err,) = r.json["errors"]
    assert err["code"] == "probe_failed" and err["message"].startswith("gone: ")
    assert r.json["data"]["failed"][0]["name"] == "gone"


def test_tools_mark_the_tools_that_run_as_tasks(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"rep": {"command": PY, "args": [str(SERVERS / "legacy_tasks.py")]}})
    r = cli("tools", "--json")
    assert r.exit_code == 0, r.stderr
    support = {t["name"]: t["task_support"] for t in r.json["data"]["tools"]}
    assert support["build_report"] == "required" and support["maybe_report"] == "optional"
    assert support["echo"] is None
    # The last column of the table; piped, tab-separated (empty for a plain tool).
    rows = {line.split("\t")[0]: line.split("\t") for line in cli("tools").stdout.splitlines()}
    assert rows["build_report"][-1] == "required" and rows["echo"][-1] == ""
    # And the call waits for the task.
    called = cli("call", "rep", "build_report", "--arg", "polls=1", "--json")
    assert called.exit_code == 0, called.stderr
    assert called.json["data"]["text"] == "report ready after 1 polls"


@pytest.mark.slow
def test_tools_tokens_and_the_budget(cli: Cli, config_path: Path) -> None:
    filters = {"allow": ["echo", "add", "weather", "fail"], "deny": ["fail"]}
    write_config(
        config_path,
        {"basic": {**BASIC, "tools": filters}, "other": {**BASIC, "tools": {"allow": ["echo"]}}},
    )
    r = cli("tools", "--prefix", "underscore", "--all", "--json")
    assert r.exit_code == 0, r.stderr
    listed = r.json["data"]["tools"]
    # Each tool: its definition as the host sends it, under the exposed (prefixed) name.
    for t in listed:
        assert t["tokens"] == independent_tokens([t]), t["name"]
    exposed = {
        s: [t for t in listed if t["server"] == s and t["exposed"]] for s in ("basic", "other")
    }
    totals = {s: independent_tokens(tools) for s, tools in exposed.items()}
    servers = {s["name"]: s["tokens"] for s in r.json["data"]["servers"]}
    assert servers == {
        s: {"encoding": "o200k_base", "total": n, "estimated": False} for s, n in totals.items()
    }
    total = sum(totals.values())
    assert r.json["data"]["tokens"] == {"encoding": "o200k_base", "total": total, "estimated": 0}
    assert not any(t["tokens_estimated"] for t in listed)
    # Hidden tools cost nothing: the filters are applied before the budget.
    assert total < independent_tokens(listed)

    ok = cli("tools", "--prefix", "underscore", "--budget", str(total), "--json")
    assert ok.exit_code == 0 and ok.json["errors"] == []
    assert ok.json["data"]["budget"] == {"limit": total, "total": total, "over": 0}
    over = cli("tools", "--prefix", "underscore", "--budget", str(total - 10))
    assert over.exit_code == 1
    costly, cheap = sorted(totals.items(), key=lambda kv: -kv[1])
    assert (
        f"error: the exposed tools cost {total:,} tokens (o200k_base), 10 over the budget of "
        f"{total - 10:,}: {costly[0]} {costly[1]:,}, {cheap[0]} {cheap[1]:,}"
    ) in " ".join(over.stderr.split())
    data = cli("tools", "--prefix", "underscore", "--budget", str(total - 10), "--json").json
    assert data["errors"][0]["code"] == "over_budget" and data["data"]["budget"]["over"] == 10
    # The text table ends with each tool's tokens.
    echo = {**listed[0], "name": "echo"}
    first = cli("tools", "basic").stdout.splitlines()[0]
    assert first.endswith(f"\t{independent_tokens([echo])}\t")  # then TASK: none


def test_tools_of_a_server_with_a_non_conforming_list(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"raw": {"command": PY, "args": [str(SERVERS / "raw.py")]}})
    r = cli("tools", "--json")
    assert r.exit_code == 0, r.stdout
    tools = {t["name"]: t for t in r.json["data"]["tools"]}
    assert tools["read_file"]["params"] == "path*: string"
    assert tools["read_file"]["input_schema"]["type"] == "object"
    assert any("read_file" in w and '"type"' in w for w in r.json["warnings"])


def test_naming_and_collisions() -> None:
    assert prefixed("gh", "search", "underscore") == "mcp_gh_search"
    assert prefixed("gh", "search", "colon") == "gh:search"
    catalog, collisions = build_catalog(
        [("a_b", ["c", "secret"], ToolFilter(deny=("secret",))), ("a", ["b_c"], None)], "underscore"
    )
    assert [(c.name, c.exposed) for c in catalog] == [
        ("mcp_a_b_c", True),
        ("mcp_a_b_secret", False),
        ("mcp_a_b_c", True),
    ]
    assert collisions[0].name == "mcp_a_b_c" and collisions[0].sources == (
        ("a_b", "c"),
        ("a", "b_c"),
    )
    assert build_catalog([("a_b", ["c"], None), ("a", ["b_c"], None)], "colon")[1] == []


# --- call ------------------------------------------------------------------------------


@pytest.mark.slow
def test_call_prints_text_and_structured(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
    r = cli("call", "basic", "add", "--arg", "a=2", "--arg", "b=40")
    assert r.exit_code == 0 and r.stdout == "42\n"  # its text, not {"result": 42}
    r = cli("call", "basic", "echo", "-a", "text=123")  # a string by the schema, not 123
    assert r.exit_code == 0 and r.stdout == "123\n"
    r = cli("call", "basic", "add", "--arg", "a=2", "--arg", "b=40", "--structured")
    assert r.exit_code == 0 and json.loads(r.stdout) == {"result": 42}
    r = cli("call", "basic", "weather", "--args-json", '{"city": "Rome", "days": 1}', "--json")
    assert r.json["data"]["structured"] == {"city": "Rome", "days": 1, "forecast": ["sunny"]}


STRUCTURED = {"command": PY, "args": [str(SERVERS / "basic.py"), "--structured"]}
SUMMARY = {"city": "Rome", "sky": "sunny", "celsius": 21}


def test_call_prints_the_text_of_a_result_with_both_as_a_host_shows_it(
    cli: Cli, config_path: Path
) -> None:
    write_config(config_path, {"s": STRUCTURED})
    r = cli("call", "s", "summary", "--arg", "city=Rome")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "It is sunny in Rome, 21 °C.\n"
    r = cli("call", "s", "summary", "--arg", "city=Rome", "--structured")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout) == SUMMARY
    for flags in ([], ["--structured"]):  # the envelope carries both, whatever the flag
        rj = cli("call", "s", "summary", "--arg", "city=Rome", "--json", *flags)
        assert rj.exit_code == 0
        assert rj.json["data"]["text"] == "It is sunny in Rome, 21 °C."
        assert rj.json["data"]["structured"] == SUMMARY
        assert rj.json["data"]["content"] == [
            {"type": "text", "text": "It is sunny in Rome, 21 °C."}
        ]


def test_call_prints_structured_content_when_it_is_all_there_is(
    cli: Cli, config_path: Path
) -> None:
    write_config(config_path, {"s": STRUCTURED})
    r = cli("call", "s", "figures")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout) == {"count": 3, "unit": "items"}
    rj = cli("call", "s", "figures", "--json")
    assert rj.json["data"]["content"] == [] and rj.json["data"]["text"] == ""


def test_call_structured_without_structured_content_exits_2(cli: Cli, remote_basic: Path) -> None:
    r = cli("call", "basic", "image", "--structured")
    assert r.exit_code == 2 and r.stdout == ""
    assert "error: basic/image returned no structured content" in r.stderr
    assert "hint: drop --structured to print its text" in r.stderr
    rj = cli("call", "basic", "image", "--structured", "--json")
    assert rj.exit_code == 2 and rj.json["errors"][0]["code"] == "usage_error"
    assert rj.json["data"]["content"][0]["type"] == "image"  # the result is kept


def test_call_args_from_file_and_stdin(cli: Cli, remote_basic: Path, tmp_path: Path) -> None:
    (tmp_path / "args.json").write_text('{"a": 1, "b": 2}')
    r = cli("call", "basic", "add", "--args-json", f"@{tmp_path / 'args.json'}")
    assert r.stdout == "3\n"
    r = cli("call", "basic", "add", "--args-json", "-", input='{"a": 5, "b": 5}')
    assert r.stdout == "10\n"


def test_call_tool_error_exits_1_with_the_servers_message(cli: Cli, remote_basic: Path) -> None:
    r = cli("call", "basic", "fail", "--arg", "message=quota exceeded")
    assert r.exit_code == 1
    assert "Error calling MCP server:" in r.stderr and "quota exceeded" in r.stderr
    rj = cli("call", "basic", "fail", "--arg", "message=quota exceeded", "--json")
    assert rj.json["errors"][0]["code"] == "tool_error"


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["call", "basic", "ad"], 2, "did you mean 'add'"),
        (["call", "nope", "x"], 2, "no server 'nope'"),
        (["call", "basic", "add", "--arg", "noequals"], 2, "key=value"),
        (["call", "basic", "add", "--args-json", "[1]"], 2, "JSON object"),
        (["call", "basic", "add", "--args-json", "{bad"], 2, "not valid JSON"),
        (["call", "basic", "add", "--timeout", "soon"], 2, "not a duration"),
        (["call", "missing", "x"], 2, "not found"),
        (["call", "exits", "x"], 3, "exited"),
    ],
)
def test_call_errors(cli: Cli, config_path: Path, args: list[str], code: int, needle: str) -> None:
    write_config(config_path, {"basic": BASIC, "missing": {"command": "no-such-command-xyz"},
                               "exits": {"command": PY, "args": [str(SERVERS / "misbehave.py"), "exit"]}})  # fmt: skip
    r = cli(*args)
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert needle in r.stderr
    assert "Traceback" not in r.stderr


# --- arguments are checked before the call ---------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["record", "--arg", "times=2"], "record: missing required argument note (string)"),
        (["record", "--arg", "note=x", "--arg", "times=two"],
         "record: argument times must be integer, got a string"),
        (["record", "--args-json", '{"note": "x", "times": 1.5}'],
         "record: argument times must be integer, got a number"),
        (["record", "--arg", "note=x", "--arg", "time=2"],
         "record: unknown argument 'time' (did you mean 'times'?)"),
        (["weather", "--arg", "city=Oslo", "--arg", "dayz=3"],
         "weather: unknown argument 'dayz' (did you mean 'days'?)"),
    ],
)  # fmt: skip
def test_call_with_bad_arguments_exits_2_and_never_calls(
    cli: Cli, remote_basic: Path, args: list[str], message: str
) -> None:
    r = cli("call", "basic", *args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert f"error: {message}" in r.stderr
    assert "hint: its parameters: " in r.stderr
    rj = cli("call", "basic", *args, "--json")
    assert rj.exit_code == 2
    assert rj.json["errors"] == [
        {"code": "invalid_arguments", "message": message, "hint": rj.json["errors"][0]["hint"]}
    ]
    assert not remote_basic.exists(), "a call with bad arguments reached the server"


def test_call_with_good_arguments_reaches_the_server(cli: Cli, remote_basic: Path) -> None:
    r = cli("call", "basic", "record", "--arg", "note=hello", "--arg", "times=2")
    assert r.exit_code == 0, r.stderr
    assert remote_basic.read_text() == "hello\nhello\n"
    r = cli("call", "basic", "weather", "--arg", "city=Oslo", "--arg", "days=3", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json["data"]["structured"] == {"city": "Oslo", "days": 3,
                                            "forecast": ["sunny"] * 3}  # fmt: skip


# --- timeouts --------------------------------------------------------------------------


def test_call_timeout_while_the_tool_runs(cli: Cli, remote_basic: Path) -> None:
    r = cli("call", "basic", "slow", "--arg", "seconds=30", "--timeout", "1s")
    assert r.exit_code == 3, (r.stdout, r.stderr)
    assert "the tool 'slow' did not answer within 1 s" in r.stderr
    assert "raise --timeout" in r.stderr and "slow to start" not in r.stderr
    rj = cli("call", "basic", "slow", "--arg", "seconds=30", "--timeout", "500ms", "--json")
    assert rj.exit_code == 3
    error = rj.json["errors"][0]
    assert error["code"] == "probe_failed" and error["reason"] == "timeout"
    assert error["message"] == "basic: the tool 'slow' did not answer within 0.5 s"
    assert "--timeout" in error["hint"]


def test_call_timeout_durations(cli: Cli, remote_basic: Path) -> None:
    r = cli("call", "basic", "slow", "--arg", "seconds=0.1", "--timeout", "2m", "--json")
    assert r.exit_code == 0 and r.json["data"]["text"] == "slept 0.1 s"
    assert r.json["warnings"] == []
    r = cli("call", "basic", "slow", "--arg", "seconds=0", "--timeout", "900", "--json")
    assert r.exit_code == 0
    assert any("--timeout 900 is read as 900 s" in w for w in r.json["warnings"])


# --- content that is not text ----------------------------------------------------------


def test_call_shows_one_line_per_non_text_block(cli: Cli, remote_basic: Path) -> None:
    rj = cli("call", "basic", "image", "--json")
    assert rj.exit_code == 0
    [block] = rj.json["data"]["content"]
    png = base64.b64decode(block["data"])  # the whole image, base64
    assert png.startswith(b"\x89PNG") and block["mimeType"] == "image/png"
    assert rj.json["data"]["text"] == f"[image/png, {len(png):,} bytes]"
    r = cli("call", "basic", "image")
    assert r.exit_code == 0 and r.stdout == f"[image/png, {len(png):,} bytes]\n"

    rj = cli("call", "basic", "audio", "--json")
    [block] = rj.json["data"]["content"]
    wav = base64.b64decode(block["data"])
    assert wav.startswith(b"RIFF") and block["mimeType"] == "audio/wav"
    assert cli("call", "basic", "audio").stdout == f"[audio/wav, {len(wav):,} bytes]\n"

    r = cli("call", "basic", "resource")
    assert r.exit_code == 0
    assert r.stdout.splitlines() == [
        "two resources follow",
        "[resource memo://note (text/plain), 15 bytes]",
        "[resource memo://blob (application/octet-stream), 256 bytes]",
    ]
    content = cli("call", "basic", "resource", "--json").json["data"]["content"]
    assert content[1]["resource"] == {"uri": "memo://note", "mimeType": "text/plain",
                                      "text": "hello, resource"}  # fmt: skip
    assert base64.b64decode(content[2]["resource"]["blob"]) == bytes(range(256))


# --- headers and auth ------------------------------------------------------------------

KEY = "k3y-value-7781"
TOKEN = "t0ken-value-5512"
USER = "alice-9921"
PASSWORD = "pa55word-3318"
SECRETS = {"T_KEY": KEY, "T_TOKEN": TOKEN, "T_USER": USER, "T_PASS": PASSWORD}


@pytest.mark.slow
@pytest.mark.parametrize(("transport", "path"), [("streamable-http", "/mcp"), ("sse", "/sse")])
def test_headers_and_auth_arrive_resolved_and_never_show_in_health(
    cli: Cli, config_path: Path, http_server: Any, transport: str, path: str
) -> None:
    url = http_server(transport) + path
    write_config(config_path, {
        "bearer": {"url": url, "transport": transport,
                   "headers": {"X-Api-Key": "${T_KEY}"},
                   "auth": {"type": "bearer", "token": "${T_TOKEN}"}},
        "basic-auth": {"url": url, "transport": transport,
                       "auth": {"type": "basic", "username": "${T_USER}", "password": "${T_PASS}"}},
    })  # fmt: skip
    # What arrived, as the library sees it (a library caller gets results unredacted)...
    import anyio

    from mcpctl.config.loader import load_config
    from mcpctl.probe import call_tool

    entries = load_config(config_path).config.entries
    with pytest.MonkeyPatch.context() as mp:
        for name, value in SECRETS.items():
            mp.setenv(name, value)
        got = anyio.run(lambda: call_tool("bearer", entries["bearer"], "headers"))
        basic_got = anyio.run(lambda: call_tool("basic-auth", entries["basic-auth"], "headers"))
    assert got.structured["x-api-key"] == KEY
    assert got.structured["authorization"] == f"Bearer {TOKEN}"
    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert basic_got.structured["authorization"] == f"Basic {basic}"
    # ...and what the CLI shows of the server's echo: the values, and what derives from
    # them (the Basic credentials), are redacted in structured content too.
    r = cli("call", "bearer", "headers", "--json", env=SECRETS)
    assert r.exit_code == 0, r.stderr
    assert r.json["data"]["structured"]["x-api-key"] == "****"
    assert r.json["data"]["structured"]["authorization"] == "Bearer ****"
    r = cli("call", "basic-auth", "headers", "--json", env=SECRETS)
    assert r.exit_code == 0, r.stderr
    assert r.json["data"]["structured"]["authorization"] == "Basic ****"

    shown = [cli("health", "--json", env=SECRETS), cli("health", env=SECRETS)]
    assert shown[0].exit_code == 0, shown[0].stdout
    assert [m["transport"] for m in shown[0].json["data"]["mcps"]] == [transport] * 2
    shown.append(cli("tools", "--json", env=SECRETS))
    for run in shown:
        for secret in (KEY, TOKEN, USER, PASSWORD, basic):
            assert secret not in run.stdout + run.stderr


def test_call_reads_args_json_before_starting_the_server(cli: Cli, config_path: Path) -> None:
    # The server's command does not exist: an --args-json typo must be what is reported.
    write_config(config_path, {"x": {"command": "definitely-not-installed-mcp"}})
    r = cli("call", "x", "t", "--args-json", "{bad", "--json")
    assert r.exit_code == 2 and "--args-json is not valid JSON" in r.json["errors"][0]["message"]
    r = cli("call", "x", "t", "--args-json", "{}", "--json")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "command_not_found"
