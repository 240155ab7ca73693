"""mcpctl run NAME: the server replaces mcpctl, with its secrets and nothing more.

Every run is a real process (the launcher ends in an exec, which would replace pytest): the
server is a small script that writes what it got to a file, or tests/servers/basic.py behind
a second launcher, probed by ``mcpctl health``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
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


# In-process: what the launcher hands to exec (``os.execve`` caught just before the process
# would be replaced), its arguments, and what it says when it cannot run a server. Mutation
# testing sees only these: every test above runs mcpctl as a subprocess.


class Execed(BaseException):
    """Raised in place of the exec: the test process goes on."""


@pytest.fixture
def caught(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """``os.execve`` replaced by a record of its program, argv and environment, with the
    working directory and the two signals at that moment."""
    seen: dict[str, Any] = {}
    here = Path.cwd()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGPIPE, signal.SIGXFSZ)}

    def execve(program: str, argv: list[str], env: dict[str, str]) -> None:
        seen.update(program=program, argv=list(argv), env=dict(env), cwd=os.getcwd(),
                    signals={sig: signal.getsignal(sig) for sig in handlers})  # fmt: skip
        raise Execed

    monkeypatch.setattr(os, "execve", execve)
    try:
        yield seen
    finally:
        os.chdir(here)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]


def trusted_env() -> dict[str, str]:
    """An environment to resolve from and pass on: the suite's trust of its files, a PATH."""
    return {"PATH": os.environ["PATH"], "MCPCTL_TRUST": "1"}


def run_in_process(name: str, cfg: Path, environ: dict[str, str], secrets: Any = None) -> None:
    from mcpctl.launch import exec_server

    with pytest.raises(Execed):
        exec_server(name, config=str(cfg), environ=environ, secrets=secrets)


@pytest.mark.parametrize("way", ["fast", "full"])
def test_exec_gets_the_program_argv_cwd_and_environment(
    caught: dict[str, Any], tmp_path: Path, way: str
) -> None:
    from mcpctl.launch import _LOADED

    where = tmp_path / "server-dir"
    where.mkdir()
    entry: dict[str, Any] = {
        "command": "true", "args": ["--token", "${TOKEN}", "two words"],
        "env": {"TOK": "${TOKEN}", "FROM_KEYRING": "${KEPT}"}, "cwd": str(where),
        "inherit_env": ["SHARED"],
    }  # fmt: skip
    if way == "full":
        entry["tools"] = {"deny": ["x"]}  # a field only the config model reads
    cfg = write_config(tmp_path / "c.json", {"s": entry, "other": {"command": "true"}})
    environ = {"PATH": os.environ["PATH"], "HOME": "/home/someone", "TOKEN": "tok-1",
               "SHARED": "shared", "OTHER_SECRET": "no", "MCPCTL_TRUST": "1",
               "MCPCTL_HOME": str(tmp_path / "home")}  # fmt: skip
    asked: list[str] = []

    def secrets(name: str) -> str | None:
        asked.append(name)
        return {"KEPT": "from-the-keyring"}.get(name)

    _LOADED.clear()
    run_in_process("s", cfg, environ, secrets)
    true = shutil.which("true", path=environ["PATH"])
    assert caught["program"] == true
    assert caught["argv"] == ["true", "--token", "tok-1", "two words"]
    assert Path(caught["cwd"]) == where
    assert caught["signals"] == {signal.SIGPIPE: signal.SIG_DFL, signal.SIGXFSZ: signal.SIG_DFL}
    assert caught["env"] == {"PATH": environ["PATH"], "HOME": "/home/someone", "TOK": "tok-1",
                             "FROM_KEYRING": "from-the-keyring", "SHARED": "shared"}  # fmt: skip
    assert set(asked) == {"KEPT"}  # the environment first: the keyring only for what it lacks
    # The full path reads the config model (its entries kept for an error's redaction).
    assert bool(_LOADED) is (way == "full")


def test_without_a_cwd_the_server_starts_where_mcpctl_is(
    caught: dict[str, Any], tmp_path: Path
) -> None:
    cfg = write_config(tmp_path / "c.json", {"s": {"command": "true"}})
    run_in_process("s", cfg, trusted_env(), lambda name: None)
    assert caught["cwd"] == os.getcwd() and caught["argv"] == ["true"]


def test_the_fast_path_looks_each_secret_up_once_in_the_keyring(
    caught: dict[str, Any], tmp_path: Path, memory_keyring: Any
) -> None:
    from mcpctl.auth.secrets import SecretStore

    SecretStore().set("KEPT", "kept-value")
    looked: list[tuple[str, str]] = []
    real_get = memory_keyring.get_password

    def get_password(service: str, username: str) -> str | None:
        looked.append((service, username))
        return real_get(service, username)

    memory_keyring.get_password = get_password
    cfg = write_config(tmp_path / "c.json", {"s": {"command": "true", "env": {"K": "${KEPT}"}}})
    run_in_process("s", cfg, trusted_env())
    assert caught["env"]["K"] == "kept-value"
    assert len(looked) == 1


def test_a_secret_the_keyring_lacks_is_missing_on_the_full_path_too(
    caught: dict[str, Any], tmp_path: Path, memory_keyring: Any
) -> None:
    from mcpctl.errors import PlaceholderError
    from mcpctl.launch import exec_server

    cfg = write_config(tmp_path / "c.json", {"s": {"command": "true", "env": {"K": "${NONE}"}}})
    with pytest.raises(PlaceholderError, match="NONE"):
        exec_server("s", config=str(cfg), environ=trusted_env())
    assert caught == {}


def test_the_fast_path_leaves_an_unstartable_entry_to_the_full_one(
    caught: dict[str, Any], tmp_path: Path
) -> None:
    """A command with a NUL byte or one not found: the full path explains it."""
    from mcpctl.errors import CommandNotFoundError, McpctlError
    from mcpctl.launch import exec_server

    cfg = write_config(tmp_path / "c.json", {
        "gone": {"command": "no-such-server-binary-xyz", "env": {"T": "${TOKEN}"}},
        "nul": {"command": "true", "args": ["${BAD}"]},
    })  # fmt: skip
    env = {**trusted_env(), "TOKEN": "hidden-token-value", "BAD": "a\x00b"}
    with pytest.raises(CommandNotFoundError, match="no-such-server-binary-xyz"):
        exec_server("gone", config=str(cfg), environ=env, secrets=lambda n: None)
    with pytest.raises(McpctlError):
        exec_server("nul", config=str(cfg), environ=env, secrets=lambda n: None)
    assert caught == {}


@pytest.mark.parametrize(
    ("name", "error", "says"),
    [
        ("remote", "UsageError", "remote is a remote server (https://mcp.example.com/mcp): "
         "mcpctl run starts stdio servers"),
        ("off", "UsageError", "off is disabled"),
        ("nope", "ServerNotFoundError", "no server 'nope'"),
    ],
)  # fmt: skip
def test_what_exec_server_refuses(
    caught: dict[str, Any], tmp_path: Path, name: str, error: str, says: str
) -> None:
    from mcpctl import errors
    from mcpctl.launch import exec_server

    cfg = write_config(tmp_path / "c.json", {
        "remote": {"url": "https://mcp.example.com/mcp"},
        "off": {"command": "true", "enabled": False},
    })  # fmt: skip
    with pytest.raises(getattr(errors, error)) as raised:
        exec_server(name, config=str(cfg), environ=trusted_env(),
                    secrets=lambda n: None)  # fmt: skip
    assert says in raised.value.message
    if name == "remote":
        assert raised.value.hint == "a client connects to a remote server by its URL"
    if name == "off":
        assert raised.value.hint == "mcpctl enable off"
    assert caught == {}


def test_an_untrusted_file_is_refused_before_any_secret_is_looked_up(
    caught: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.errors import UntrustedConfigError
    from mcpctl.launch import exec_server

    monkeypatch.delenv("MCPCTL_TRUST", raising=False)
    monkeypatch.delenv("CI", raising=False)
    asked: list[str] = []

    def secrets(name: str) -> str:
        asked.append(name)
        return "v"

    for fields in ({}, {"tools": {"deny": ["x"]}}):
        cfg = write_config(tmp_path / "c.json", {
            "s": {"command": "true", "env": {"K": "${KEPT}"}, **fields}})  # fmt: skip
        env = {"PATH": os.environ["PATH"], "MCPCTL_HOME": os.environ["MCPCTL_HOME"]}
        with pytest.raises(UntrustedConfigError):
            exec_server("s", config=str(cfg), environ=env, secrets=secrets)
        assert asked == [] and caught == {}


def test_a_failed_start_names_the_server_and_hides_its_secrets(
    caught: dict[str, Any], tmp_path: Path
) -> None:
    from mcpctl.config.redaction import redactor
    from mcpctl.errors import McpctlError
    from mcpctl.launch import exec_server

    program = tmp_path / "not-executable"
    program.write_text("#!/bin/sh\n")
    cfg = write_config(tmp_path / "c.json", {
        "s": {"command": str(program), "tools": {"deny": ["x"]}},
        "other": {"command": "true", "env": {"K": "${OTHER_VALUE}"}},
    })  # fmt: skip
    # Whatever prints the error hides the values of every entry's placeholders.
    value = f"plain{uuid.uuid4().hex}"
    with pytest.raises(McpctlError) as raised:
        exec_server("s", config=str(cfg), environ={**trusted_env(), "OTHER_VALUE": value},
                    secrets=lambda n: None)  # fmt: skip
    assert "not-executable" in str(raised.value)
    assert value not in redactor()(f"it was {value}")
    assert caught == {}


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["--config"], None),
        (["--config", "f.json"], None),
        (["--config="], None),
        (["--config=", "run", "s"], None),
        (["--config", "-x", "run", "s"], None),
        (["run", "s", "--config", "-x"], None),
        (["run", "s", "--config="], None),
        (["run", "s", "--config=-x"], None),
        (["run", "s", "--config", "a", "b"], None),
        (["run", "s", "--other", "a"], None),
        (["run", "s", "--other=a"], None),
        (["--config=a", "run", "s", "--config=b"], None),
        (["--config", "a", "run", "s", "--config=b"], None),
        (["--configx", "a", "run", "s"], None),
        (["run", "-s"], None),
        (["stop", "s"], None),
        ([], None),
        (("run", "s"), ("s", None)),
        (["run", "s=t", "--config=a=b"], ("s=t", "a=b")),
        (["--config=a=b", "run", "s"], ("s", "a=b")),
        (["--config", "run", "run", "s"], ("s", "run")),
    ],
)
def test_fast_args_takes_nothing_but_a_plain_run_line(
    argv: list[str], parsed: tuple[str, str | None] | None
) -> None:
    assert fast_args(argv) == parsed


def test_main_says_why_on_stderr_and_returns_the_code(
    caught: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcpctl.launch import main

    cfg = write_config(tmp_path / "c.json", {
        "off": {"command": "true", "enabled": False, "env": {"K": "sk-live-abcdefghijklmnop1234"}},
        "bad": {"command": "true\u001b[31m"},
    })  # fmt: skip
    assert main(["run", "--help"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "error: usage: mcpctl run NAME [--config FILE]\nhint: mcpctl run --help\n"
    assert main(["run", "off", "--config", str(cfg)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", "error: off is disabled\nhint: mcpctl enable off\n")
    assert main(["run", "nope", "--config", str(cfg)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (
        f"error: no server 'nope' in {cfg}\nhint: run 'mcpctl list' to see the servers\n"
    )
    assert caught == {}


def test_main_execs_the_server_named(caught: dict[str, Any], tmp_path: Path) -> None:
    from mcpctl.launch import main

    cfg = write_config(tmp_path / "c.json", {"s": {"command": "true", "args": ["a"]}})
    with pytest.raises(Execed):
        main(["--config", str(cfg), "run", "s"])
    assert caught["argv"] == ["true", "a"]


def test_main_reports_notes_and_escapes_controls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl import launch
    from mcpctl.errors import McpctlError

    class Noted(McpctlError):
        exit_code = 5

    def refuse(name: str, *, config: str | None = None) -> None:
        error = Noted(f"bad \x1b[31m{name}", hint="try again")
        error.details = ["first note", "second note"]
        raise error

    monkeypatch.setattr(launch, "exec_server", refuse)
    assert launch.main(["run", "s"]) == 5
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("error: bad \\x1b[31ms\nnote: first note\nnote: second note\n"
                   "hint: try again\n")  # fmt: skip


def test_main_turns_a_bug_into_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl import launch

    def broken(name: str, *, config: str | None = None) -> None:
        raise RuntimeError("  first line\nsecond line")

    monkeypatch.setattr(launch, "exec_server", broken)
    assert launch.main(["run", "s"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("error: internal error: RuntimeError: first line\nhint: this is a bug in "
                   "mcpctl; run again with MCPCTL_DEBUG=1 and report it\n")  # fmt: skip

    def blank(name: str, *, config: str | None = None) -> None:
        raise RuntimeError("  ")

    monkeypatch.setattr(launch, "exec_server", blank)
    assert launch.main(["run", "s"]) == 1
    assert capsys.readouterr().err.startswith("error: internal error: RuntimeError: \n")

    def interrupted(name: str, *, config: str | None = None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(launch, "exec_server", interrupted)
    assert launch.main(["run", "s"]) == 130
    assert capsys.readouterr() == ("", "")

    monkeypatch.setattr(launch, "exec_server", broken)
    monkeypatch.setenv("MCPCTL_DEBUG", "1")
    with pytest.raises(RuntimeError, match="first line"):
        launch.main(["run", "s"])


def test_a_config_named_but_missing_is_said_in_process(
    caught: dict[str, Any], tmp_path: Path
) -> None:
    from mcpctl.errors import ConfigNotFoundError
    from mcpctl.launch import exec_server

    with pytest.raises(ConfigNotFoundError, match="there is no config file"):
        exec_server("s", config=str(tmp_path / "nope.json"), environ=trusted_env(),
                    secrets=lambda n: None)  # fmt: skip
    assert caught == {}


@pytest.mark.parametrize("fields", [{}, {"tools": {"deny": ["x"]}}], ids=["fast", "full"])
def test_trust_comes_from_the_environment_given(
    caught: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fields: dict[str, Any]
) -> None:
    """``environ``, not this process's own, says whether every file is trusted."""
    from mcpctl.errors import UntrustedConfigError
    from mcpctl.launch import exec_server

    cfg = write_config(tmp_path / "c.json", {"s": {"command": "true", **fields}})
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("MCPCTL_TRUST", "1")
    with pytest.raises(UntrustedConfigError):
        exec_server("s", config=str(cfg), environ={"PATH": os.environ["PATH"]},
                    secrets=lambda n: None)  # fmt: skip
    assert caught == {}
    monkeypatch.delenv("MCPCTL_TRUST")
    run_in_process("s", cfg, trusted_env(), lambda n: None)
    assert caught["argv"] == ["true"]


def test_an_approved_entry_takes_the_fast_path(
    caught: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.config.trust import TrustStore
    from mcpctl.launch import _LOADED

    monkeypatch.delenv("MCPCTL_TRUST", raising=False)
    monkeypatch.delenv("CI", raising=False)
    cfg = write_config(tmp_path / "c.json", {"s": {"command": "true", "args": ["approved"]},
                                             "t": {"command": "true"}})  # fmt: skip
    TrustStore.from_paths().trust(cfg, {"s": load_config(cfg).config.entries["s"]})
    _LOADED.clear()
    run_in_process("s", cfg, {"PATH": os.environ["PATH"]}, lambda n: None)
    assert caught["argv"] == ["true", "approved"]
    assert _LOADED == []  # the quick path: the config model never read the file


def test_errors_of_the_full_path_name_the_server(tmp_path: Path) -> None:
    from mcpctl.errors import PlaceholderError, ProbeFailed
    from mcpctl.launch import exec_server

    bad = tmp_path / "bad"
    bad.write_text("not a program\n")
    bad.chmod(0o755)
    cfg = write_config(tmp_path / "c.json", {
        "needs": {"command": "true", "env": {"K": "${NOPE}"}},
        "bad": {"command": str(bad)},
    })  # fmt: skip
    with pytest.raises(PlaceholderError) as missing:
        exec_server("needs", config=str(cfg), environ=trusted_env(), secrets=lambda n: None)
    assert missing.value.message == "variable NOPE is not set (in server 'needs')"
    with pytest.raises(ProbeFailed) as failed:
        exec_server("bad", config=str(cfg), environ=trusted_env(), secrets=lambda n: None)
    assert failed.value.message.startswith(f"bad: cannot start '{bad}': ")


def test_a_relative_command_is_found_from_the_entry_s_cwd(
    caught: dict[str, Any], tmp_path: Path
) -> None:
    where = tmp_path / "server-dir"
    where.mkdir()
    program = where / "serve.sh"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    cfg = write_config(tmp_path / "c.json", {"s": {"command": "./serve.sh", "cwd": str(where)}})
    run_in_process("s", cfg, trusted_env(), lambda n: None)
    assert caught["program"] == str(program) and caught["argv"] == ["./serve.sh"]


@pytest.mark.parametrize("fields", [{}, {"tools": {"deny": ["x"]}}], ids=["fast", "full"])
def test_an_exec_that_fails_in_the_entry_s_cwd_comes_back_as_it_was(
    tmp_path: Path, fields: dict[str, Any]
) -> None:
    """The real exec fails (a file that is no program): this process's working directory and
    signals are as they were, and the error says why."""
    from mcpctl.errors import ProbeFailed
    from mcpctl.launch import exec_server

    where = tmp_path / "server-dir"
    where.mkdir()
    bad = where / "bad"
    bad.write_text("not a program\n")
    bad.chmod(0o755)
    cfg = write_config(tmp_path / "c.json", {"s": {"command": str(bad), "cwd": str(where),
                                                   **fields}})  # fmt: skip
    here = Path.cwd()
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGPIPE, signal.SIGXFSZ)}
    assert handlers[signal.SIGPIPE] != signal.SIG_DFL  # Python ignores it: restored after
    with pytest.raises(ProbeFailed, match="Exec format error"):
        exec_server("s", config=str(cfg), environ=trusted_env(), secrets=lambda n: None)
    assert Path.cwd() == here
    assert {sig: signal.getsignal(sig) for sig in handlers} == handlers


def test_what_mcpctl_wrote_is_flushed_before_the_exec(
    caught: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    out, err = io.BytesIO(), io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="utf-8"))
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(err, encoding="utf-8"))
    sys.stdout.write("said before")
    sys.stderr.write("warned before")
    seen: dict[str, bytes] = {}
    execve = os.execve

    def looking(program: str, argv: list[str], env: dict[str, str]) -> None:
        seen.update(out=out.getvalue(), err=err.getvalue())
        execve(program, argv, env)

    monkeypatch.setattr(os, "execve", looking)
    cfg = write_config(tmp_path / "c.json", {"s": {"command": "true"}})
    run_in_process("s", cfg, trusted_env(), lambda n: None)
    assert seen == {"out": b"said before", "err": b"warned before"}
    monkeypatch.setattr(sys, "stdout", None)  # no stream at all (a closed one is /dev/null)
    monkeypatch.setattr(sys, "stderr", None)
    run_in_process("s", cfg, trusted_env(), lambda n: None)
    assert caught["argv"] == ["true"]


def test_an_error_without_a_hint_has_no_hint_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl import launch
    from mcpctl.errors import McpctlError

    def refuse(name: str, *, config: str | None = None) -> None:
        raise McpctlError("refused")

    monkeypatch.setattr(launch, "exec_server", refuse)
    assert launch.main(["run", "s"]) == McpctlError.exit_code
    assert capsys.readouterr() == ("", "error: refused\n")
