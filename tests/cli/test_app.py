"""The root command: global options, help, version, the error contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpctl import __version__
from mcpctl.cli.app import build_command
from tests.conftest import MCPCTL, Cli, write_config


def all_commands() -> list[tuple[str, object]]:
    root = build_command()
    out = []
    stack = [("", root)]
    while stack:
        prefix, cmd = stack.pop()
        for name, sub in getattr(cmd, "commands", {}).items():
            out.append((f"{prefix}{name}", sub))
            stack.append((f"{prefix}{name} ", sub))
    return sorted(out)


def test_every_command_has_help_with_an_example(cli: Cli) -> None:
    from tools.docgen import examples_of
    from tools.doclines import check_command_line, shell_commands

    commands = all_commands()
    assert {name for name, _ in commands} >= {
        "add", "remove", "list", "get", "enable", "disable", "undo", "validate", "schema",
    }  # fmt: skip
    root = build_command()
    for name, cmd in commands:
        assert cmd.help and cmd.help.strip(), f"{name} has no help"  # type: ignore[attr-defined]
        assert "Examples:" in cmd.help, f"{name} has no examples"  # type: ignore[attr-defined]
        # Each example is an mcpctl command line the app parses: no stale option, no
        # missing or extra argument, no value a choice refuses.
        invocations = [c for line in examples_of(cmd.help) for c in shell_commands(line)]  # type: ignore[attr-defined]
        assert invocations, f"{name}: no 'mcpctl ...' line under Examples:"
        for args in invocations:
            try:
                check_command_line(root, args)
            except Exception as exc:
                pytest.fail(f"{name}: example 'mcpctl {' '.join(args)}' does not parse: {exc}")
        for param in cmd.params:  # type: ignore[attr-defined]
            if getattr(param, "param_type_name", "") == "option":
                assert param.help, f"{name} {param.opts} has no help"
        r = cli(*name.split(), "--help")
        assert r.exit_code == 0
        assert "Usage:" in r.stdout


def test_help_and_no_args(cli: Cli) -> None:
    r = cli("--help")
    assert r.exit_code == 0 and "external-mcps.json" in r.stdout
    bare = cli()
    assert bare.exit_code == 0 and bare.stdout == r.stdout and bare.stderr == ""


@pytest.mark.parametrize("group", ["registry", "secret", "auth"])
def test_a_group_alone_prints_its_help(cli: Cli, group: str) -> None:
    r = cli(group)
    assert r.exit_code == 0 and "Usage:" in r.stdout and r.stderr == ""


def test_version(cli: Cli) -> None:
    r = cli("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"mcpctl {__version__}"
    r = cli("--version", "--json")
    assert r.exit_code == 0
    assert r.json == {"mcpctl": 1, "command": "version", "ok": True,
                      "data": {"version": __version__}, "warnings": [], "errors": []}  # fmt: skip


def test_failed_checks_list_their_problems_in_errors(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"a": {"comand": "x"}, "b": {"command": "definitely-not-here-mcp"}})
    r = cli("validate", "--json")
    assert r.exit_code == 1 and r.json["ok"] is False
    assert sorted(e["code"] for e in r.json["errors"]) == ["missing_field", "unknown_field"]
    assert any(e["message"].startswith("a.comand: ") for e in r.json["errors"])
    r = cli("health", "b", "--json")
    assert r.exit_code == 1 and r.json["ok"] is False
    assert r.json["errors"] == [{
        "code": "probe_failed", "reason": "command_not_found",
        "message": "b: command 'definitely-not-here-mcp' not found on PATH",
        "hint": r.json["data"]["mcps"][0]["error"]["hint"],
    }]  # fmt: skip
    assert r.json["errors"][0]["hint"]


@pytest.mark.parametrize(
    "args",
    [
        ["--config", "{cfg}", "list", "--json"],
        ["list", "--config", "{cfg}", "--json"],
        ["--json", "list", "--config", "{cfg}"],
        ["--json", "--config", "{cfg}", "list"],
        ["-q", "list", "--json", "--config={cfg}"],
    ],
)
def test_global_options_before_and_after_the_command(
    cli: Cli, tmp_path: Path, args: list[str]
) -> None:
    cfg = write_config(tmp_path / "elsewhere.json", {"only": {"command": "x"}})
    r = cli(*[a.replace("{cfg}", str(cfg)) for a in args])
    assert r.exit_code == 0, r.stderr
    assert [s["name"] for s in r.json["data"]["servers"]] == ["only"]


def test_mcpctl_config_env(cli: Cli, tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "env.json", {"fromenv": {"command": "x"}})
    r = cli("list", "--json", env={"MCPCTL_CONFIG": str(cfg)})
    assert [s["name"] for s in r.json["data"]["servers"]] == ["fromenv"]


def test_config_is_found_upwards(cli: Cli, isolated: Path) -> None:
    write_config(isolated / "external-mcps.json", {"up": {"command": "x"}})
    deep = isolated / "a" / "b"
    deep.mkdir(parents=True)
    os.chdir(deep)
    r = cli("list", "--json")
    assert r.json["data"]["config"] == str(isolated / "external-mcps.json")


def test_usage_error_in_json_mode_is_an_envelope(cli: Cli) -> None:
    r = cli("list", "--json", "--bogus")
    assert r.exit_code == 2
    doc = r.json
    assert doc["mcpctl"] == 1 and doc["command"] == "list" and doc["ok"] is False
    assert doc["errors"][0]["code"] == "usage_error"
    assert "--bogus" in doc["errors"][0]["message"]


def test_unknown_command(cli: Cli) -> None:
    r = cli("frobnicate")
    assert r.exit_code == 2 and "frobnicate" in r.stderr


def test_envelope_shape_on_success(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {})
    doc = cli("list", "--json").json
    assert set(doc) == {"mcpctl", "command", "ok", "data", "warnings", "errors"}
    assert doc["ok"] is True and doc["errors"] == []


def test_subprocess_no_traceback_and_debug_shows_it(tmp_path: Path) -> None:
    cfg = tmp_path / "dir.json"
    cfg.mkdir()
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    r = subprocess.run(
        [*MCPCTL, "--config", str(cfg), "list"], capture_output=True, text=True, env=env, timeout=60
    )
    assert r.returncode == 2
    assert "is a directory" in r.stderr and "Traceback" not in r.stderr


def test_internal_error_is_one_line_unless_debug(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpctl.cli import quick

    def boom(*_a: object, **_k: object) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(quick, "read_config", boom)
    r = cli("list")
    assert r.exit_code == 1
    assert "internal error: RuntimeError: kaboom" in r.stderr and "MCPCTL_DEBUG" in r.stderr
    monkeypatch.setenv("MCPCTL_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli("list")


def test_python_dash_m_and_console_script_agree(tmp_path: Path) -> None:
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    r = subprocess.run([*MCPCTL, "--version"], capture_output=True, text=True, env=env, timeout=60)
    assert r.stdout.strip() == f"mcpctl {__version__}"
    script = Path(sys.executable).parent / "mcpctl"
    if script.exists():
        r2 = subprocess.run(
            [str(script), "--version"], capture_output=True, text=True, env=env, timeout=60
        )
        assert r2.stdout == r.stdout


def test_broken_pipe_is_quiet(tmp_path: Path) -> None:
    cfg = tmp_path / "big.json"
    cfg.write_text(json.dumps({f"s{i}": {"command": "x" * 200} for i in range(2000)}))
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    proc = subprocess.Popen([*MCPCTL, "--config", str(cfg), "list"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a full disk)")
@pytest.mark.parametrize(
    "args", [["list"], ["list", "--json"], ["--config", "none.json", "list", "--json"]]
)
def test_output_on_a_full_disk_is_one_line_on_stderr(tmp_path: Path, args: list[str]) -> None:
    cfg = tmp_path / "external-mcps.json"
    cfg.write_text(json.dumps({f"s{i}": {"command": "x" * 200} for i in range(200)}))
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    env.pop("MCPCTL_DEBUG", None)
    with Path("/dev/full").open("w") as full:
        r = subprocess.run([*MCPCTL, *args], stdout=full, stderr=subprocess.PIPE, text=True,
                           env=env, cwd=tmp_path, timeout=60)  # fmt: skip
    assert "Traceback" not in r.stderr
    if "none.json" in args:  # the error itself: its envelope cannot be written, its text can
        assert r.returncode == 2 and "there is no config file at none.json" in r.stderr
    else:
        assert r.returncode == 120
        assert r.stderr.strip() == "error: the output could not be written: No space left on device"


@pytest.mark.parametrize("debug", [False, True])
def test_an_exception_python_cannot_raise_shows_no_traceback(tmp_path: Path, debug: bool) -> None:
    # What a signal landing in a half-built object leaves: a __del__ that fails.
    script = (
        "import sys\n"
        "class HalfBuilt:\n"
        "    def __del__(self):\n"
        "        raise AttributeError('no attribute _debug')\n"
        "from mcpctl.cli import app\n"
        "app.main = lambda **_: (HalfBuilt(), 0)[1]\n"
        "app.run()\n"
    )
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    env.pop("MCPCTL_DEBUG", None)
    if debug:
        env["MCPCTL_DEBUG"] = "1"
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env=env, timeout=60)  # fmt: skip
    assert r.returncode == 0
    assert ("Traceback" in r.stderr) is debug, r.stderr


def test_command_module_map_matches_the_modules() -> None:
    from importlib import import_module

    from mcpctl.cli.app import COMMAND_MODULES, MODULES

    found: dict[str, str] = {}
    for module in MODULES:
        group = import_module(f"mcpctl.cli.{module}").app
        for info in group.registered_commands:
            found[str(info.name)] = module
        for sub in group.registered_groups:
            found[str(sub.name)] = module
    assert found == COMMAND_MODULES


def test_a_named_command_builds_only_itself() -> None:
    root = build_command(["--json", "list"])
    assert set(root.commands) == {"list"}
    assert set(build_command(["registry", "list"]).commands) == {"registry"}
    groups = [cmd for _, cmd in all_commands() if getattr(cmd, "commands", None)]
    nested = sum(len(group.commands) for group in groups)  # type: ignore[attr-defined]
    assert len(build_command(["--help"]).commands) == len(all_commands()) - nested


@pytest.mark.parametrize("args", [["list"], ["list", "--json"]])
def test_a_reader_that_stops_early_is_not_a_failure(tmp_path: Path, args: list[str]) -> None:
    """``mcpctl list | head -1``: the pipe closes under mcpctl; it exits 0, silently."""
    path = tmp_path / "external-mcps.json"
    entries = {f"s{i}": {"command": "npx", "args": ["-y", "pkg", "x" * 200]} for i in range(2000)}
    path.write_text(json.dumps(entries))
    read, write = os.pipe()
    proc = subprocess.Popen(
        [*MCPCTL, "--config", str(path), *args], stdout=write, stderr=subprocess.PIPE
    )
    os.close(write)
    with os.fdopen(read, "rb") as reader:
        reader.read(10)  # then the reader goes away, as head does
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert err == b""
