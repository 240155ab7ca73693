"""health / tools / call through the CLI, internal MCPs, naming."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry, ToolFilter
from mcpctl.config.siblings import discover_internal, select_targets
from mcpctl.probe.naming import build_catalog, prefixed
from tests.conftest import MCPCTL, SERVERS, Cli, write_config

PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}


def test_health_json_has_the_seeds_shape(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {
        "basic": BASIC,
        "broken": {"command": PY, "args": [str(SERVERS / "misbehave.py"), "exit"]},
        "off": {**BASIC, "enabled": False},
    })  # fmt: skip
    r = cli("health", "--json")
    assert r.exit_code == 1
    data = r.json["data"]
    assert data["scope"] == "all"
    assert data["summary"] == {"total": 2, "healthy": 1, "unhealthy": 1}
    mcps = {m["name"]: m for m in data["mcps"]}
    assert (
        mcps["basic"]["healthy"]
        and mcps["basic"]["available"]
        and mcps["basic"]["type"] == "external"
    )
    assert (
        mcps["basic"]["tool_count"] == 4 and mcps["basic"]["server"]["name"] == "basic-test-server"
    )
    assert mcps["broken"]["error"]["code"] == "server_exited"
    assert mcps["broken"]["stderr"][-1] == "hint: set EXAMPLE_CONFIG"
    assert r.json["ok"] is False


def test_health_human_table_and_exit_0(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
    r = cli("health")
    assert r.exit_code == 0
    assert r.stdout.startswith("basic\texternal\tstdio\thealthy\t4\t")
    assert "1 server: 1 healthy, 0 unhealthy" in r.stderr


def test_health_named_and_unknown(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC, "other": {"command": "no-such-command-xyz"}})
    r = cli("health", "basic", "--json")
    assert r.exit_code == 0 and [m["name"] for m in r.json["data"]["mcps"]] == ["basic"]
    r = cli("health", "basc")
    assert r.exit_code == 2 and "did you mean 'basic'" in r.stderr


def test_health_timeout_option(cli: Cli, config_path: Path) -> None:
    write_config(
        config_path, {"hang": {"command": PY, "args": [str(SERVERS / "misbehave.py"), "hang"]}}
    )
    start = time.monotonic()
    r = cli("health", "--timeout", "1", "--json")
    assert time.monotonic() - start < 1 + 1.5
    assert r.json["data"]["mcps"][0]["error"]["code"] == "timeout"


def make_internal(root: Path, folder: str, manifest: object, **package: object) -> Path:
    d = root / folder
    d.mkdir(parents=True)
    (d / "package.json").write_text(
        json.dumps({"name": f"@annabelle/{folder}", "annabelle": manifest, **package})
    )
    return d


def test_internal_mcps_are_discovered_tolerantly(tmp_path: Path) -> None:
    make_internal(tmp_path, "guardian", {"mcpName": "guardian", "sensitive": True, "timeout": 5000})
    make_internal(tmp_path, "filer", True, main="build/main.js", description="Files")
    make_internal(
        tmp_path, "memorizer", {"command": PY, "args": ["x.py"], "env": {"A": "b", "N": 1}}
    )
    make_internal(tmp_path, "off", {"enabled": False})
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "package.json").write_text('{"name": "not-an-mcp"}')
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "package.json").write_text("{oops")
    servers, warnings = discover_internal(tmp_path)
    assert sorted(servers) == ["filer", "guardian", "memorizer"]
    assert servers["guardian"].command == "node" and servers["guardian"].sensitive
    assert servers["guardian"].args == (str(tmp_path / "guardian" / "dist" / "index.js"),)
    assert servers["filer"].args == (str(tmp_path / "filer" / "build" / "main.js"),)
    assert servers["filer"].description == "Files"
    assert servers["memorizer"].env == {"A": "b"} and servers["memorizer"].cwd == str(
        tmp_path / "memorizer"
    )
    assert len(warnings) == 1 and "broken" in warnings[0]
    assert discover_internal(tmp_path / "nope")[1]


def test_select_targets_conflicts_scope_and_disabled() -> None:
    ext = {"guardian": ServerEntry(command="x"), "time": ServerEntry(command="t"),
           "off": ServerEntry(command="o", enabled=False)}  # fmt: skip
    internal = {"guardian": ServerEntry(command="node")}
    targets, warnings = select_targets(ext, internal)
    assert [(n, k) for n, _, k in targets] == [("guardian", "internal"), ("time", "external")]
    assert "external server 'guardian'" in warnings[0]
    only_ext, _ = select_targets(ext, internal, scope="external")
    assert [n for n, _, _ in only_ext] == ["time"]
    named, _ = select_targets(ext, internal, names=["off"])
    assert [n for n, _, _ in named] == ["off"]


def test_health_with_internal_root(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    root = tmp_path / "mcps"
    make_internal(
        root,
        "guardian",
        {"mcpName": "guardian", "command": PY, "args": [str(SERVERS / "basic.py")]},
    )
    write_config(config_path, {"guardian": {"command": "clash"}, "basic": BASIC})
    r = cli("health", "--internal-root", str(root), "--json")
    assert r.exit_code == 0, r.stdout
    kinds = {m["name"]: m["type"] for m in r.json["data"]["mcps"]}
    assert kinds == {"guardian": "internal", "basic": "external"}
    assert any("guardian" in w and "internal" in w for w in r.json["warnings"])
    r = cli("health", "--scope", "internal", "--json", env={"MCPCTL_INTERNAL_ROOT": str(root)})
    assert [m["name"] for m in r.json["data"]["mcps"]] == ["guardian"]
    assert r.json["data"]["scope"] == "internal"


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


def test_tools_catalog_with_prefix_and_filters(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": {**BASIC, "tools": {"deny": ["fail"]}}})
    r = cli("tools", "--prefix", "underscore", "--json")
    assert r.exit_code == 0
    names = [t["name"] for t in r.json["data"]["tools"]]
    assert names == ["mcp_basic_echo", "mcp_basic_add", "mcp_basic_weather"]
    add = r.json["data"]["tools"][1]
    assert add["params"] == "a*: integer, b*: integer" and add["description"] == "Add two integers."
    r = cli("tools", "--all", "--json")
    assert [t["name"] for t in r.json["data"]["tools"]][-1] == "fail"
    assert r.json["data"]["tools"][-1]["exposed"] is False
    human = cli("tools", "--prefix", "colon")
    assert human.stdout.splitlines()[0].startswith("basic:echo\tbasic\ttext*: string\t")


def test_tools_collision_exits_1(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"a_b": {**BASIC, "tools": {"allow": ["echo"]}},
                               "a": {**BASIC, "tools": {"allow": ["b_echo", "echo"]}}})  # fmt: skip
    # "a" has no tool b_echo, so no collision yet under underscore: mcp_a_b_echo vs mcp_a_echo.
    assert cli("tools", "--prefix", "underscore").exit_code == 0
    write_config(config_path, {"x": BASIC, "y": BASIC})
    r = cli("tools", "--prefix", "none", "--json")
    assert r.exit_code == 1 and r.json["data"]["collisions"]
    assert any("name collision" in w for w in r.json["warnings"])


def test_call_prints_text_and_structured(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
    r = cli("call", "basic", "add", "--arg", "a=2", "--arg", "b=40")
    assert r.exit_code == 0 and json.loads(r.stdout) == {"result": 42}
    r = cli("call", "basic", "echo", "-a", "text=123")
    assert r.stdout.strip() in ('{\n  "result": "123"\n}', "123") or json.loads(r.stdout) == {
        "result": "123"
    }
    r = cli("call", "basic", "weather", "--args-json", '{"city": "Rome", "days": 1}', "--json")
    assert r.json["data"]["structured"] == {"city": "Rome", "days": 1, "forecast": ["sunny"]}


def test_call_args_from_file_and_stdin(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
    (tmp_path / "args.json").write_text('{"a": 1, "b": 2}')
    assert json.loads(
        cli("call", "basic", "add", "--args-json", f"@{tmp_path / 'args.json'}").stdout
    ) == {"result": 3}
    r = cli("call", "basic", "add", "--args-json", "-", input='{"a": 5, "b": 5}')
    assert json.loads(r.stdout) == {"result": 10}


def test_call_tool_error_exits_1_with_the_servers_message(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
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


def test_health_watch_prints_only_changes_and_stops_on_sigterm(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"basic": BASIC})
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    proc = subprocess.Popen([*MCPCTL, "--config", str(cfg), "health", "--watch", "--interval", "0.5", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert (
            first["name"] == "basic" and first["status"] == "healthy" and first["previous"] is None
        )
        time.sleep(1.2)  # a few more rounds: no change, so nothing is printed
        proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert rest == "" and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_health_watch_reports_a_server_going_down(tmp_path: Path) -> None:
    flag = tmp_path / "down"
    script = (
        "import os, runpy, sys; "
        f"sys.exit(3) if os.path.exists({str(flag)!r}) else None; "
        f"sys.argv = [{str(SERVERS / 'basic.py')!r}]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    cfg = write_config(
        tmp_path / "external-mcps.json", {"flappy": {"command": PY, "args": ["-c", script]}}
    )
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    proc = subprocess.Popen([*MCPCTL, "--config", str(cfg), "health", "--watch", "--interval", "0.3", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["status"] == "healthy"
        flag.write_text("x")
        down = json.loads(proc.stdout.readline())
        assert (down["previous"], down["status"]) == ("healthy", "unavailable")
        assert down["error"]["code"] == "server_exited"
        flag.unlink()
        up = json.loads(proc.stdout.readline())
        assert (up["previous"], up["status"]) == ("unavailable", "healthy")
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_the_program_leaves_fast_with_all_its_output(config_path: Path, tmp_path: Path) -> None:
    # After the SDK is loaded, `mcpctl` exits without the interpreter's teardown: what it
    # printed must still all arrive, with the right exit code.
    write_config(config_path, {"basic": BASIC, "gone": {"command": "no-such-command-xyz"}})
    text = "".join(f"{i:07d}\n" for i in range(40_000))  # 320 KB: many pipe buffers
    (tmp_path / "args.json").write_text(json.dumps({"text": text}))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered pipes
    env["MCPCTL_HOME"] = str(tmp_path / "home")
    base = [*MCPCTL, "--config", str(config_path)]
    r = subprocess.run([*base, "call", "basic", "echo", "--args-json", f"@{tmp_path / 'args.json'}"],
                       capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"result": text}
    r = subprocess.run([*base, "health"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1
    assert r.stdout.startswith("basic\texternal\tstdio\thealthy\t4\t")
    assert "gone\texternal" in r.stdout
    assert r.stderr.endswith("2 servers: 1 healthy, 1 unhealthy\n")
