"""health through the CLI (and --watch), internal MCPs, the program's exit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.config.siblings import discover_internal, select_targets
from tests.conftest import MCPCTL, SERVERS, Cli, write_config

PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}
BASIC_TOOL_COUNT = 10
RAW = {"command": PY, "args": [str(SERVERS / "raw.py")]}


def test_health_json_has_the_orchestrators_shape(cli: Cli, config_path: Path) -> None:
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
        mcps["basic"]["tool_count"] == BASIC_TOOL_COUNT
        and mcps["basic"]["server"]["name"] == "basic-test-server"
    )
    assert mcps["broken"]["error"]["code"] == "server_exited"
    assert mcps["broken"]["stderr"][-1] == "hint: set EXAMPLE_CONFIG"
    assert r.json["ok"] is False


def test_health_human_table_and_exit_0(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
    r = cli("health")
    assert r.exit_code == 0
    assert r.stdout.startswith(f"basic\texternal\tstdio\thealthy\t{BASIC_TOOL_COUNT}\t")
    assert "1 server: 1 healthy, 0 unhealthy" in r.stderr


def test_health_named_and_unknown(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC, "other": {"command": "no-such-command-xyz"}})
    r = cli("health", "basic", "--json")
    assert r.exit_code == 0 and [m["name"] for m in r.json["data"]["mcps"]] == ["basic"]
    r = cli("health", "basc")
    assert r.exit_code == 2 and "did you mean 'basic'" in r.stderr


@pytest.mark.parametrize(("value", "seconds"), [("1", 1.0), ("1s", 1.0), ("1500ms", 1.5)])
def test_health_timeout_option(cli: Cli, config_path: Path, value: str, seconds: float) -> None:
    write_config(
        config_path, {"hang": {"command": PY, "args": [str(SERVERS / "misbehave.py"), "hang"]}}
    )
    start = time.monotonic()
    r = cli("health", "--timeout", value, "--json")
    assert time.monotonic() - start < seconds + 1.5
    error = r.json["data"]["mcps"][0]["error"]
    assert error["code"] == "timeout"
    assert error["message"] == f"no answer within {seconds:g} s"
    assert "slow to start" in error["hint"]
    assert r.json["warnings"] == []


def test_health_timeout_bare_number_and_bad_values(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
    r = cli("health", "--timeout", "700", "--json")
    assert r.exit_code == 0
    assert any("--timeout 700 is read as 700 s" in w for w in r.json["warnings"])
    for bad in ("soon", "0", "-1s", "5 parsecs"):
        r = cli("health", "--timeout", bad)
        assert r.exit_code == 2, bad
        assert "--timeout" in r.stderr and "Traceback" not in r.stderr


def test_health_of_a_server_with_a_non_conforming_tool_list(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"raw": RAW})
    r = cli("health", "--json")
    assert r.exit_code == 0, r.stdout
    assert r.json["ok"] is True and r.json["errors"] == []
    mcp = r.json["data"]["mcps"][0]
    assert mcp["healthy"] and mcp["error"] is None and mcp["tool_count"] == 6
    assert len(mcp["warnings"]) == 6
    warnings = r.json["warnings"]
    assert (
        "raw: tool 'read_file': inputSchema has no \"type\"; read as an object schema" in warnings
    )
    assert any(w.startswith("raw: tool 'annotated': annotations ") for w in warnings)
    assert any(w.startswith("raw: tool 'list_names': outputSchema") for w in warnings)
    assert any(w.startswith("raw: tool #5: name ") for w in warnings)
    assert all("\n" not in w and len(w) < 200 for w in warnings)
    human = cli("health")
    assert human.exit_code == 0
    assert human.stdout.startswith("raw\texternal\tstdio\thealthy\t6\t")
    assert "warning: raw: tool 'read_file': inputSchema has no" in human.stderr


def test_health_failure_that_is_a_validation_error_is_one_line(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"raw": {**RAW, "args": [*RAW["args"], "bad-init"]}})
    r = cli("health", "--json")
    assert r.exit_code == 1
    error = r.json["data"]["mcps"][0]["error"]
    assert error["code"] == "probe_failed"
    assert "\n" not in error["message"] and len(error["message"]) <= 300
    assert "errors.pydantic.dev" not in r.stdout
    assert r.json["errors"][0]["reason"] == "probe_failed"
    human = cli("health")
    assert "Traceback" not in human.stderr and "pydantic" not in human.stdout + human.stderr


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


@pytest.mark.slow
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


def _default_signals() -> None:
    # A shell without job control starts background jobs with SIGINT ignored, and mcpctl
    # leaves ignored signals ignored: give it the defaults a terminal would.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.slow
def test_health_watch_prints_only_changes_and_stops_on_sigterm(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"basic": BASIC})
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    proc = subprocess.Popen([*MCPCTL, "--config", str(cfg), "health", "--watch", "--interval", "500ms", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                            preexec_fn=_default_signals)  # fmt: skip  # noqa: PLW1509
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


@pytest.mark.slow
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
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                            preexec_fn=_default_signals)  # fmt: skip  # noqa: PLW1509
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


@pytest.mark.slow
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
    assert r.stdout == text + "\n"  # the text block, whole
    r = subprocess.run([*base, "health"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 1
    assert r.stdout.startswith(f"basic\texternal\tstdio\thealthy\t{BASIC_TOOL_COUNT}\t")
    assert "gone\texternal" in r.stdout
    assert r.stderr.endswith("2 servers: 1 healthy, 1 unhealthy\n")
