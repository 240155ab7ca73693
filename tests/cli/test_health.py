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
    by_status = {"healthy": 1, "degraded": 0, "needs_auth": 0, "unhealthy": 0, "unavailable": 1}
    assert data["summary"] == {"total": 2, "healthy": 1, "unhealthy": 1, "by_status": by_status}
    assert data["fail_on"] == ["degraded", "needs_auth", "unhealthy", "unavailable"]
    assert data["slow_ms"] == 2000
    mcps = {m["name"]: m for m in data["mcps"]}
    assert mcps["basic"]["status"] == "healthy" and mcps["broken"]["status"] == "unavailable"
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
    assert r.stderr.endswith("1 server: 1 healthy\n")


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
    # Repaired, so usable (healthy keeps its meaning), but degraded: exit 1.
    assert r.exit_code == 1, r.stdout
    assert r.json["ok"] is False and r.json["errors"] == []
    mcp = r.json["data"]["mcps"][0]
    assert mcp["healthy"] and mcp["error"] is None and mcp["tool_count"] == 6
    assert mcp["status"] == "degraded" and mcp["degraded"][0].startswith("mcpctl repaired")
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
    assert human.exit_code == 1
    assert human.stdout.startswith("raw\texternal\tstdio\tdegraded\t6\t")
    assert "\tmcpctl repaired its tool list (6 problems: " in human.stdout
    assert "warning: raw: tool 'read_file': inputSchema has no" in human.stderr
    assert human.stderr.endswith("1 server: 0 healthy, 1 degraded\n")
    tolerated = cli("health", "--fail-on", "unhealthy", "--json")
    assert tolerated.exit_code == 0 and tolerated.json["ok"] is True


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


def raw_mode(mode: str, **env: str) -> dict[str, object]:
    return {"command": PY, "args": [str(SERVERS / "raw.py"), mode], "env": env}


def test_a_failed_list_is_degraded_with_every_reason_under_v(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"idx": raw_mode("list-error")})
    r = cli("health", "--json")
    assert r.exit_code == 1
    mcp = r.json["data"]["mcps"][0]
    assert mcp["status"] == "degraded" and mcp["available"] and not mcp["healthy"]
    assert mcp["error"]["code"] == "list_failed" and mcp["tool_count"] is None
    assert mcp["degraded"] == [
        "prompts/list failed: the index is unavailable",
        "resources/list failed: the index is unavailable",
    ]
    assert r.json["errors"][0]["reason"] == "list_failed"
    human = cli("health")
    row = human.stdout.split("\t")
    assert row[3] == "degraded"
    assert row[-1] == "list_failed: tools/list failed: the index is unavailable (+2 more, -v)\n"
    assert "idx: the server answered, but could not list its tools" in human.stderr
    wide = cli("health", "-v")
    assert wide.stdout.rstrip("\n").endswith(
        "list_failed: tools/list failed: the index is unavailable; prompts/list failed: the "
        "index is unavailable; resources/list failed: the index is unavailable"
    )
    # Tolerated: exit 0, and the envelope's errors hold only what fails the run.
    ok = cli("health", "--fail-on", "unhealthy", "--json")
    assert ok.exit_code == 0 and ok.json["ok"] is True and ok.json["errors"] == []
    assert ok.json["data"]["mcps"][0]["error"]["code"] == "list_failed"


def test_a_failed_prompts_list_is_degraded(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"p": raw_mode("prompts-error")})
    r = cli("health", "--json")
    assert r.exit_code == 1
    mcp = r.json["data"]["mcps"][0]
    assert (mcp["status"], mcp["healthy"], mcp["tool_count"]) == ("degraded", True, 1)
    assert mcp["degraded"] == ["prompts/list failed: the index is unavailable"]


def test_slow_is_degraded_against_the_slow_option(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"late": raw_mode("slow", RAW_SERVER_DELAY="1")})
    for value in ("100ms", "0.1"):  # a bare number is seconds
        r = cli("health", "--slow", value, "--json")
        assert r.exit_code == 1, value
        mcp = r.json["data"]["mcps"][0]
        assert mcp["status"] == "degraded" and mcp["healthy"]
        assert mcp["degraded"][0].startswith("slow: tools/list took ")
        assert r.json["data"]["slow_ms"] == 100
    human = cli("health", "--slow", "100ms")
    assert "\tdegraded\t" in human.stdout and "\tslow: tools/list took " in human.stdout
    relaxed = cli("health", "--slow", "30s", "--json")
    assert relaxed.exit_code == 0 and relaxed.json["data"]["mcps"][0]["status"] == "healthy"
    for bad in ("soon", "0"):
        bad_run = cli("health", "--slow", bad)
        assert bad_run.exit_code == 2 and "--slow" in bad_run.stderr


def test_fail_on_narrows_the_exit_code(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"raw": RAW, "gone": {"command": "no-such-command-xyz"}})
    expected = {
        (): 1,
        ("degraded",): 1,
        ("needs_auth",): 0,
        ("unhealthy",): 1,  # unavailable counts as unhealthy
        ("unavailable",): 1,
        ("needs_auth,degraded",): 1,
    }
    for values, code in expected.items():
        args = [a for v in values for a in ("--fail-on", v)]
        assert cli("health", *args).exit_code == code, values
    r = cli("health", "--fail-on", "needs_auth", "--fail-on", "unhealthy", "--json")
    assert r.json["data"]["fail_on"] == ["needs_auth", "unhealthy", "unavailable"]
    assert [e["reason"] for e in r.json["errors"]] == ["command_not_found"]
    only_raw = cli("health", "raw", "--fail-on", "unhealthy,needs_auth")
    assert only_raw.exit_code == 0
    bad = cli("health", "--fail-on", "degradd")
    assert bad.exit_code == 2 and "did you mean 'degraded'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_the_status_column_is_coloured_on_a_terminal() -> None:
    from mcpctl.cli.health import _health_table
    from mcpctl.cli.health_live import STYLES
    from mcpctl.probe.health import ProbeResult

    table = _health_table([ProbeResult("a", available=True, healthy=True, degraded=["slow"])])
    assert table.rows[0][3] == "degraded" and table.rows[0][-1] == "slow"
    assert table.styles == {3: STYLES}
    assert STYLES["degraded"] != STYLES["healthy"] != STYLES["needs_auth"]


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
    starts = tmp_path / "starts"  # one line per round: the server is started for each
    counted = {"command": "sh", "args": ["-c", f'echo $$ >> "{starts}"; exec "{PY}" "$@"', "sh",
                                         *BASIC["args"]]}  # fmt: skip
    cfg = write_config(tmp_path / "external-mcps.json", {"basic": counted})
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
        # A few more rounds: no change, so nothing is printed.
        deadline = time.monotonic() + 60
        while not (starts.exists() and len(starts.read_text().split()) >= 3):
            assert time.monotonic() < deadline and proc.poll() is None, "no more rounds"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert rest == "" and "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


@pytest.mark.slow
def test_health_watch_reports_the_new_states(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"raw": RAW})
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    for json_flag, check in (("--json", "json"), (None, "text")):
        args = [*MCPCTL, "--config", str(cfg), "health", "--watch", "--interval", "30s"]
        proc = subprocess.Popen([*args, *([json_flag] if json_flag else [])],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                text=True, preexec_fn=_default_signals)  # fmt: skip  # noqa: PLW1509
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if check == "json":
                event = json.loads(line)
                assert (event["status"], event["healthy"]) == ("degraded", True)
                assert event["degraded"][0].startswith("mcpctl repaired its tool list")
                assert event["reasons"] == event["degraded"]
            else:
                assert " raw new -> degraded (mcpctl repaired its tool list (6 problems" in line
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)
            assert proc.returncode == 0
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
    assert r.stderr.endswith("2 servers: 1 healthy, 1 unavailable\n")
