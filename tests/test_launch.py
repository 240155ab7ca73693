"""mcpctl run NAME: the server replaces mcpctl, with its secrets and nothing more.

Every run is a real process (the launcher ends in an exec, which would replace pytest): the
server is a small script that writes what it got to a file, or tests/servers/basic.py behind
a second launcher, probed by ``mcpctl health``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from mcpctl import load_config, resolve_entry
from mcpctl.launch import fast_args
from mcpctl.probe.childenv import DEFAULT_INHERITED_ENV, child_env
from tests.auth.filekeyring import BACKEND, FILE_VAR
from tests.conftest import MCPCTL, ROOT, SERVERS, Cli, stop_process, write_config

PY = sys.executable
TIMEOUT = 30
# What a Python server sets in its own environment at start-up (PEP 538 locale coercion).
PYTHON_OWN = {"LC_CTYPE"}

SCRIPT = """
import json, os, signal, sys
out = sys.argv[1]
def done(signum, frame):
    with open(out + ".term", "w") as f:
        f.write("terminated")
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
with open(out + ".tmp", "w") as f:
    json.dump({"pid": os.getpid(), "env": sorted(os.environ), "tok": os.environ.get("TOK"),
               "environ": dict(os.environ), "cwd": os.getcwd(), "argv": sys.argv[2:]}, f)
os.replace(out + ".tmp", out)
mode = sys.argv[2] if len(sys.argv) > 2 else "exit0"
if mode == "wait":
    signal.pause()
sys.exit(int(mode[4:]))
"""


def secret() -> str:
    return f"launchtest{uuid.uuid4().hex}"


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    """A script server, a config with every kind of entry, an environment for mcpctl
    subprocesses with a file keyring."""
    script = tmp_path / "server.py"
    script.write_text(SCRIPT)
    out = tmp_path / "out.json"
    cwd = tmp_path / "server-dir"
    cwd.mkdir()
    cfg = write_config(tmp_path / "servers.json", {
        "s": {"command": PY, "args": [str(script), str(out)], "env": {"TOK": "${TOKEN}"},
              "cwd": str(cwd)},
        "seven": {"command": PY, "args": [str(script), str(out), "exit7"]},
        "waiter": {"command": PY, "args": [str(script), str(out), "wait"]},
        "remote": {"url": "https://mcp.example.com/mcp"},
        "off": {"command": PY, "args": [str(script), str(out)], "enabled": False},
        "gone": {"command": "no-such-server-binary-xyz", "args": ["--token", "${TOKEN}"]},
    })  # fmt: skip
    keyring = tmp_path / "keyring.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPCTL_")}
    env.pop("TOKEN", None)
    # The config is trusted as the suite's are (tests/config/test_trust_launch.py: when not).
    env.update({"PYTHONPATH": str(ROOT), "PYTHON_KEYRING_BACKEND": BACKEND,
                FILE_VAR: str(keyring), "MCPCTL_HOME": str(tmp_path / "home"),
                "MCPCTL_TRUST": "1"})  # fmt: skip
    return {"cfg": cfg, "out": out, "cwd": cwd, "env": env, "keyring": keyring}


def store_secret(keyring: Path, name: str, value: str) -> None:
    keyring.write_text(json.dumps({f"mcpctl\x00secret:{name}": value}))


def start(world: dict[str, Any], *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*MCPCTL, "--config", str(world["cfg"]), "run", *args], stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**world["env"], **env},
    )  # fmt: skip


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    finally:
        stop_process(proc)
    return proc.returncode, out, err


def written(path: Path, timeout: float = TIMEOUT) -> dict[str, Any]:
    """What the script server wrote (it writes the file whole, by a rename)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"the server wrote nothing to {path}"
        time.sleep(0.01)
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_the_server_replaces_mcpctl_with_a_minimal_environment(world: dict[str, Any]) -> None:
    token = secret()
    proc = start(world, "s", TOKEN=token, SOME_OTHER_SECRET=secret())
    code, out, err = finish(proc)
    assert code == 0, err
    got = written(world["out"])
    assert got["pid"] == proc.pid  # exec'd in place: the very process the client started
    assert got["tok"] == token
    assert Path(got["cwd"]) == world["cwd"]
    inherited = {name for name in DEFAULT_INHERITED_ENV if name in world["env"]}
    assert set(got["env"]) - PYTHON_OWN == inherited | {"TOK"}
    assert token not in out + err and out == "" and err == ""


def test_a_placeholder_missing_from_the_environment_comes_from_the_keyring(
    world: dict[str, Any],
) -> None:
    token = secret()
    store_secret(world["keyring"], "TOKEN", token)
    proc = start(world, "s")
    code, out, err = finish(proc)
    assert code == 0, err
    got = written(world["out"])
    assert got["pid"] == proc.pid and got["tok"] == token
    assert token not in out + err


def test_the_exit_status_is_the_servers(world: dict[str, Any]) -> None:
    code, out, err = finish(start(world, "seven"))
    assert code == 7, err
    assert out == ""


def test_a_signal_reaches_the_server(world: dict[str, Any]) -> None:
    proc = start(world, "waiter")
    try:
        got = written(world["out"])  # its SIGTERM handler is in place once it has written
        assert got["pid"] == proc.pid
        proc.send_signal(signal.SIGTERM)
        code, _, err = finish(proc)
    finally:
        stop_process(proc)
    assert code == 0, err
    assert (world["out"].parent / "out.json.term").read_text() == "terminated"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["s"], ["error: variable TOKEN is not set", "hint:", "mcpctl secret set TOKEN"]),
        (["ss"], ["error: no server 'ss'", "hint: did you mean 's'?"]),
        (["remote"], ["remote is a remote server (https://mcp.example.com/mcp)",
                      "mcpctl run starts stdio servers"]),
        (["off"], ["error: off is disabled", "hint: mcpctl enable off"]),
        (["gone"], ["command 'no-such-server-binary-xyz' not found on PATH", "hint: install"]),
    ],
)  # fmt: skip
def test_what_cannot_run_is_said_on_stderr_only(
    world: dict[str, Any], args: list[str], says: list[str]
) -> None:
    token = secret()
    env = {"TOKEN": token} if args == ["gone"] else {}
    code, out, err = finish(start(world, *args, **env))
    assert code == 2, err
    assert out == ""  # stdout is the client's protocol channel
    for text in says:
        assert text in err, err
    assert token not in err
    assert not world["out"].exists()


def test_a_config_named_but_missing_is_an_error(world: dict[str, Any], tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*MCPCTL, "run", "s", "--config", str(tmp_path / "nope.json")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=world["env"],
    )  # fmt: skip
    code, out, err = finish(proc)
    assert code == 2 and out == "" and "there is no config file" in err


def test_a_real_server_through_two_launchers_is_healthy(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "servers.json"
    write_config(cfg, {
        "inner": {"command": PY, "args": [str(SERVERS / "basic.py")],
                  "env": {"BASIC_TOKEN": "${INNER_TOKEN}"}},
        # The inner launcher gets the probe's minimal environment: the suite's trust of
        # every file is passed on by name.
        "outer": {"command": PY, "args": ["-m", "mcpctl", "run", "inner", "--config", str(cfg)],
                  "env": {"INNER_TOKEN": "${INNER_TOKEN}", "PYTHONPATH": str(ROOT),
                          "MCPCTL_TRUST": "1"}},
    })  # fmt: skip
    token = secret()
    monkeypatch.setenv("INNER_TOKEN", token)
    r = cli("--config", str(cfg), "--json", "health", "outer")
    assert r.exit_code == 0, r.stdout + r.stderr
    (mcp,) = r.json["data"]["mcps"]
    assert mcp["name"] == "outer" and mcp["healthy"], mcp
    assert mcp["server"]["name"] == "basic-test-server"
    assert token not in r.stdout + r.stderr


@pytest.mark.parametrize("found", ["named", "upwards"])
def test_the_fast_path_imports_nothing_heavy(
    world: dict[str, Any], tmp_path: Path, found: str
) -> None:
    entries = {"t": {"command": "true", "env": {"TOK": "${TOKEN}"}}}
    cfg = write_config(world["cfg"], entries)
    named = ["--config", str(cfg)]
    here = None
    if found == "upwards":  # a client starting `mcpctl run t` in a project, no --config
        project = tmp_path / "project"
        here = project / "src" / "deep"
        here.mkdir(parents=True)
        write_config(project / "external-mcps.json", entries)
        named = []
    r = subprocess.run(
        [PY, "-X", "importtime", "-m", "mcpctl", "run", "t", *named], cwd=here,
        capture_output=True, text=True, env={**world["env"], "TOKEN": secret()}, timeout=TIMEOUT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    imported = {line.split("|")[-1].strip() for line in r.stderr.splitlines() if "|" in line}
    assert "mcpctl.launch" in imported  # the fast path ran
    heavy = {"typer", "rich", "pydantic", "anyio", "mcp", "keyring", "click", "psutil"}
    assert not {name.split(".")[0] for name in imported} & heavy
    # A plain entry is read without the config model: not even typing, dataclasses or pathlib.
    assert "mcpctl.config.quickentry" in imported
    assert not imported & {"typing", "dataclasses", "pathlib", "mcpctl.config.model"}


def test_an_entry_beyond_the_quick_path_still_runs(world: dict[str, Any]) -> None:
    data = json.loads(world["cfg"].read_text())
    data["s"]["tools"] = {"deny": ["x"]}  # a field only the config model reads
    write_config(world["cfg"], data)
    r = subprocess.run(
        [PY, "-X", "importtime", "-m", "mcpctl", "--config", str(world["cfg"]), "run", "s"],
        capture_output=True, text=True, env={**world["env"], "TOKEN": "tok"}, timeout=TIMEOUT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "mcpctl.config.model" in r.stderr  # the full path started it
    assert written(world["out"])["tok"] == "tok"


@pytest.mark.parametrize("inherit", [None, ["SHARED", "UNSET_ANYWHERE"], True])
@pytest.mark.parametrize("way", ["fast", "full"])
def test_the_server_gets_the_environment_child_env_promises_on_both_paths(
    world: dict[str, Any], way: str, inherit: list[str] | bool | None
) -> None:
    """Every variable and value the server sees, on the fast path and on the full one (an
    entry only the config model reads), is what child_env says: the few inherited ones, the
    entry's own resolved, what inherit_env names -- and nothing else mcpctl had."""
    data = json.loads(world["cfg"].read_text())
    entry = {**data["s"], "env": {"TOK": "${TOKEN}", "PLAIN": "a value", "HOME": "/srv/home"}}
    if inherit is not None:
        entry["inherit_env"] = inherit
    if way == "full":
        entry["tools"] = {"deny": ["x"]}  # a field only the config model reads
    cfg = write_config(world["cfg"], {"s": entry})
    token, other = secret(), secret()
    env = {**world["env"], "TOKEN": token, "SHARED": "shared", "OTHER_SECRET": other,
           "BASH_FUNC_f%%": "() {  echo hi\n}"}  # fmt: skip
    r = subprocess.run(
        [PY, "-X", "importtime", "-m", "mcpctl", "--config", str(cfg), "run", "s"],
        capture_output=True, text=True, env=env, timeout=TIMEOUT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert ("mcpctl.config.model" in r.stderr) == (way == "full"), "not the path meant"
    got: dict[str, str] = written(world["out"])["environ"]
    loaded = load_config(cfg)
    resolved = resolve_entry("s", loaded.config.entries["s"], policy="error", environ=env)
    assert resolved is not None
    promised = child_env(resolved.entry, env)
    for name in PYTHON_OWN - promised.keys():
        got.pop(name, None)
    assert got == promised
    assert got["TOK"] == token and got["PLAIN"] == "a value" and got["HOME"] == "/srv/home"
    assert ("OTHER_SECRET" in got) is (inherit is True)
    assert ("SHARED" in got) is (inherit is not None)
    assert "UNSET_ANYWHERE" not in got
    if inherit is None:
        inherited = {n for n in DEFAULT_INHERITED_ENV if n in env}
        assert got.keys() == inherited | {"TOK", "PLAIN", "HOME"}


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["run", "s"], ("s", None)),
        (["run", "s", "--config", "f.json"], ("s", "f.json")),
        (["run", "s", "--config=f.json"], ("s", "f.json")),
        (["--config", "f.json", "run", "s"], ("s", "f.json")),
        (["--config=f.json", "run", "s"], ("s", "f.json")),
        (["run", "--help"], None),
        (["run", "s", "--help"], None),
        (["-v", "run", "s"], None),
        (["--json", "run", "s"], None),
        (["run", "s", "--json"], None),
        (["run", "s", "extra"], None),
        (["run"], None),
        (["run", "s", "--config"], None),
        (["--config", "a", "run", "s", "--config", "b"], None),
        (["list"], None),
    ],
)
def test_only_plain_run_lines_take_the_fast_path(
    argv: list[str], parsed: tuple[str, str | None] | None
) -> None:
    assert fast_args(argv) == parsed


def test_a_failed_exec_leaves_this_process_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.errors import CommandNotFoundError
    from mcpctl.launch import exec_server

    cfg = write_config(tmp_path / "c.json", {
        "gone": {"command": "no-such-server-binary-xyz", "cwd": str(tmp_path)},
    })  # fmt: skip
    here = Path.cwd()
    pipe = signal.getsignal(signal.SIGPIPE)
    with pytest.raises(CommandNotFoundError, match="not found"):
        exec_server("gone", config=str(cfg), secrets=lambda name: None)
    assert Path.cwd() == here and signal.getsignal(signal.SIGPIPE) == pipe


@pytest.mark.parametrize("fields", [{}, {"tools": {"deny": ["x"]}}], ids=["quick", "full"])
def test_trust_and_proxy_settings_pass_on_both_paths(
    world: dict[str, Any], tmp_path: Path, fields: dict[str, Any]
) -> None:
    # The quick path takes a plain entry; a tool filter sends it through the config model.
    script = tmp_path / "server.py"
    cfg = write_config(tmp_path / "trust.json", {
        "t": {"command": PY, "args": [str(script), str(world["out"])], **fields}})  # fmt: skip
    trust = {"SSL_CERT_FILE": "/etc/ssl/corp.pem", "HTTPS_PROXY": "http://proxy:3128",
             "no_proxy": "localhost", "NODE_EXTRA_CA_CERTS": "/etc/ssl/corp.pem"}  # fmt: skip
    env = {**world["env"], **trust, "UNRELATED_SETTING": "x"}
    proc = subprocess.Popen([*MCPCTL, "run", "t", "--config", str(cfg)], env=env, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip
    code, _, err = finish(proc)
    assert code == 0, err
    got = set(written(world["out"])["env"])
    assert set(trust) <= got and "UNRELATED_SETTING" not in got
