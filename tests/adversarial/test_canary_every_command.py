"""Every command of the app, with and without --json and -v: no canary secret in its output.

The commands are enumerated from the app itself (mcpctl.cli.app.build_command): a command
without an entry in STEPS fails test_every_command_is_covered, so a new command is covered
the day it is added. The canaries are random lowercase strings no pattern recognises, placed
where secrets live: the environment, the keyring (behind config placeholders), an OAuth
token, a literal secret in a file `import` reads, a value `secret set` reads from stdin, and a
literal secret `add` is given (and must refuse without echoing). The servers the commands
start receive them (leaky.py prints everything it gets on stderr and returns it from tools).

The commands run in this process (fast; the `cli` fixture of tests/adversarial/conftest.py
gives -v its logs) with an in-memory keyring backend; `watch`, which
runs until a signal, runs as a real process. tests/adversarial/test_secrets.py runs a
selection of commands as real processes, with a real HTTP server and a terminal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpctl.auth.records import OAuthRecord, save_record
from mcpctl.auth.secrets import SecretStore
from mcpctl.cli.app import build_command
from tests.conftest import MCPCTL, SERVERS, Cli, MemoryKeyring, free_port, write_config
from tests.registry.conftest import Publish
from tests.registry.server import make_record

PY = sys.executable
LEAKY = str(SERVERS / "leaky.py")


def canary() -> str:
    return f"canary{uuid.uuid4().hex}"


ENV_CANARY = canary()  # in the environment, behind ${CANARY_ENV}
KEYRING_CANARY = canary()  # in the keyring, behind ${CANARY_KEYRING}
TOKEN_CANARY = canary()  # an OAuth access token in the keyring
IMPORT_CANARY = canary()  # a literal secret in a file `import` reads
STDIN_CANARY = canary()  # the value `secret set` reads
LITERAL_CANARY = canary()  # a literal secret given to `add`, which must refuse it
CANARIES = {
    "env": ENV_CANARY, "keyring": KEYRING_CANARY, "oauth token": TOKEN_CANARY,
    "import": IMPORT_CANARY, "stdin": STDIN_CANARY, "literal": LITERAL_CANARY,
}  # fmt: skip

Step = tuple[list[str], str | None]  # (argv, stdin)


def steps(tmp: Path) -> dict[str, list[Step]]:
    """Each command's runs (earlier runs of a list prepare later ones)."""
    imported = tmp / "claude.json"
    return {
        "add": [
            (["add", "lit", "--env", f"API_KEY={LITERAL_CANARY}", "--", "echo", "x"], None),
            (["add", "lit2", "--url", "http://127.0.0.1:9/mcp", "--bearer", LITERAL_CANARY], None),
            (["add", "hook", "--url", "http://127.0.0.1:9/mcp", "--bearer", "${CANARY_ENV}"], None),
        ],
        "remove": [(["remove", "off"], None)],
        "enable": [(["enable", "off"], None)],
        "disable": [(["disable", "leaky"], None)],
        "undo": [(["disable", "off"], None), (["undo"], None), (["undo", "--list"], None)],
        "list": [(["list"], None)],
        "group add": [(["group", "add", "canaries", "leaky", "remote"], None)],
        "group list": [(["group", "list"], None)],
        "group remove": [
            (["group", "remove", "canaries", "remote"], None),
            (["group", "remove", "canaries"], None),
        ],
        "get": [(["get", "leaky"], None), (["get", "remote"], None), (["get", "signed"], None)],
        "validate": [(["validate"], None)],
        "schema": [(["schema"], None)],
        "health": [(["health"], None)],
        "tools": [(["tools"], None)],
        "call": [
            (["call", "leaky", "fail"], None),
            (["call", "leaky", "leak"], None),
        ],
        "registry add": [(["registry", "add", "again", str(tmp / "catalog.json")], None)],
        "registry list": [(["registry", "list"], None)],
        "registry remove": [(["registry", "remove", "cat"], None)],
        "registry sync": [(["registry", "sync", "cat"], None)],
        "discover": [(["discover", "canary"], None)],
        "show": [(["show", "io.example/canary"], None)],
        "outdated": [(["outdated", "--offline"], None)],
        "upgrade": [(["upgrade", "--offline", "--dry-run"], None)],
        "secret set": [(["secret", "set", "NEW_SECRET"], STDIN_CANARY)],
        "secret list": [(["secret", "list"], None)],
        "secret rm": [(["secret", "rm", "CANARY_KEYRING"], None)],
        # It prints the headers it is asked for by design (tests/render/test_delivery.py):
        # here, only the refusals, which must not.
        "secret headers": [
            (["secret", "headers", "leaky"], None),
            (["secret", "headers", "nope"], None),
        ],
        "auth login": [(["auth", "login", "signed", "--no-browser", "--timeout", "1s"], None)],
        "auth logout": [(["auth", "logout", "signed"], None)],
        "auth status": [(["auth", "status"], None)],
        "render": [
            (["render", "claude-desktop"], None),
            (["render", "claude-desktop", "--inline-secrets", "-o", str(tmp / "r.json")], None),
        ],
        "import": [
            (["import", "claude-desktop", str(imported), "--dry-run"], None),
            (["import", "claude-desktop", str(imported)], None),
        ],
        "snapshot save": [(["snapshot", "save"], None)],
        "snapshot diff": [(["snapshot", "save"], None), (["snapshot", "diff"], None)],
        "report": [(["report", "--probe"], None)],
        "doctor": [
            (["doctor"], None),
            (["doctor", "leaky"], None),
            (["doctor", "remote"], None),
            (["doctor", "signed"], None),
        ],
        "prefetch": [(["prefetch"], None), (["prefetch", "leaky", "remote"], None)],
        "trust": [
            (["trust", "--dry-run"], None),
            (["trust", "--yes"], None),
            (["trust", "--list"], None),
            (["trust", str(imported)], None),
        ],
        "untrust": [(["untrust"], None)],
        "completion install": [(["completion", "install", "bash", "--print-only"], None)],
        "completion show": [(["completion", "show", "bash"], None)],
        "watch": [],  # runs until a signal: test_watch_prints_no_secret
        # An MCP server until its client goes: every tool's result and resource, in real
        # processes, in tests/serve/test_reading.py (test_no_secret_value_leaves_...).
        "serve": [],
        # In this process only runs that stop before the exec (which would replace pytest);
        # tests/probe/test_launch.py runs servers through it in real processes.
        "run": [
            (["run", "off"], None),
            (["run", "remote"], None),
            (["run", "nope"], None),
            (["run", "ghost", "--config", str(tmp / "run.json")], None),
        ],
    }


def command_paths() -> set[str]:
    """Every leaf command of the app, as its words ("registry add")."""
    found: set[str] = set()
    stack: list[tuple[list[str], Any]] = [([], build_command())]
    while stack:
        words, command = stack.pop()
        subs = getattr(command, "commands", None)
        if subs:
            stack.extend(([*words, name], sub) for name, sub in subs.items())
        else:
            found.add(" ".join(words))
    return found


def test_every_command_is_covered(tmp_path: Path) -> None:
    listed = set(steps(tmp_path))
    assert command_paths() - listed == set(), "commands without a canary run: add them to STEPS"
    assert listed - command_paths() == set(), "STEPS names commands the app does not have"


def leaks(text: str) -> list[str]:
    """The canaries (or their first half: a cut secret is a leak too) found in ``text``."""
    return [where for where, value in CANARIES.items() if value[:18] in text]


@pytest.fixture
def world(
    tmp_path: Path, config_path: Path, memory_keyring: MemoryKeyring, catalog: Publish,
    monkeypatch: pytest.MonkeyPatch, cli: Cli,
) -> Iterator[Path]:  # fmt: skip
    """A config whose servers get every canary, a file registry, a sign-in, a file to import."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # no user file is read or written
    monkeypatch.setenv("CANARY_ENV", ENV_CANARY)
    monkeypatch.setenv("DEPLOY_API_TOKEN", ENV_CANARY)  # a secret by its name only
    SecretStore().set("CANARY_KEYRING", KEYRING_CANARY)
    dead = f"http://127.0.0.1:{free_port()}/mcp"  # nothing listens: refused at once
    save_record("signed", OAuthRecord(dead, access_token=TOKEN_CANARY,
                                      refresh_token=TOKEN_CANARY, expires_at=time.time() + 600))  # fmt: skip
    write_config(config_path, {
        "leaky": {"command": PY, "args": [LEAKY, "--token", "${CANARY_ENV}"],
                  "env": {"LEAKY_TOKEN": "${CANARY_KEYRING}"}, "timeout": 20000},
        "off": {"command": PY, "args": [LEAKY], "env": {"LEAKY_TOKEN": "${CANARY_ENV}"},
                "enabled": False},
        "remote": {"url": dead + "?key=${CANARY_KEYRING}",
                   "headers": {"Authorization": "Bearer ${CANARY_ENV}"}, "timeout": 3000},
        "signed": {"url": dead, "auth": {"type": "oauth"}, "timeout": 3000},
    })  # fmt: skip
    write_config(tmp_path / "run.json", {  # its command holds a secret: its error must not
        "ghost": {"command": str(tmp_path / "no-such-dir" / "${CANARY_ENV}"),
                  "env": {"K": "${CANARY_KEYRING}"}},
    })  # fmt: skip
    (tmp_path / "claude.json").write_text(json.dumps({"mcpServers": {
        "imp": {"command": "npx", "args": ["-y", "x"], "env": {"API_TOKEN": IMPORT_CANARY}},
        "imp2": {"url": f"https://h.example/mcp?token={IMPORT_CANARY}",
                 "headers": {"Authorization": f"Bearer {IMPORT_CANARY}"}},
    }}))  # fmt: skip
    assert cli("registry", "remove", "official").exit_code == 0  # no network beyond 127.0.0.1
    path = catalog(make_record("io.example/canary", description="finds canaries"))
    assert cli("registry", "add", "cat", str(path)).exit_code == 0
    yield tmp_path


VARIANTS = {"plain": [], "json": ["--json"], "verbose": ["-v"]}
IN_PROCESS = sorted(command for command, runs in steps(Path("/unused")).items() if runs)


@pytest.mark.parametrize("command", IN_PROCESS)
def test_no_command_prints_a_secret(world: Path, cli: Cli, command: str) -> None:
    runs = steps(world)[command]
    for variant, extra in VARIANTS.items():
        for argv, stdin in runs:
            r = cli(*extra, *argv, input=stdin)
            out = r.stdout + r.stderr
            where = f"`mcpctl {' '.join([*extra, *argv])}` ({variant})"
            assert not leaks(out), f"{leaks(out)} canary leaked in {where}:\n{out[-3000:]}"
            assert r.exit_code in (0, 1, 2, 3), (where, r.exit_code, out[-2000:])
            assert "Traceback" not in out and "internal_error" not in out, (where, out[-2000:])
            if variant == "json":
                json.loads(r.stdout)  # one envelope, whatever happened


def test_the_canaries_reach_where_they_should(world: Path, cli: Cli) -> None:
    """The outputs above are clean because they are redacted, not because nothing ran."""
    r = cli("--json", "call", "leaky", "leak")
    assert r.exit_code == 0, r.stdout + r.stderr
    structured = r.json["data"]["structured"]
    assert structured["token"] == "****" and structured["argv"] == ["--token", "****"]
    r = cli("render", "claude-desktop", "--inline-secrets", "-o", str(world / "r.json"))
    assert r.exit_code == 0, r.stderr
    assert {ENV_CANARY, KEYRING_CANARY} <= set((world / "r.json").read_text().split('"'))
    assert cli("import", "claude-desktop", str(world / "claude.json")).exit_code == 0
    store = SecretStore()
    assert IMPORT_CANARY in {store.get(name) for name in store.names()}


def test_watch_prints_no_secret(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "external-mcps.json", {"a": {"command": "echo"}})
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home"), "CANARY_ENV": ENV_CANARY}
    outputs = []
    for extra in VARIANTS.values():
        proc = subprocess.Popen(
            [*MCPCTL, *extra, "--config", str(cfg), "watch", "--debounce", "0.1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        try:
            assert proc.stderr is not None and proc.stdout is not None
            before = [proc.stderr.readline()]  # -v: debug lines come first
            while not before[-1].startswith("watching ") and len(before) < 10:
                before.append(proc.stderr.readline())
            assert before[-1].startswith("watching "), before
            write_config(cfg, {"a": {"command": "echo", "env": {"K": "${CANARY_ENV}"}},
                               "b": {"command": "echo", "args": [ENV_CANARY]}})  # fmt: skip
            first = proc.stdout.readline()
            write_config(cfg, {"a": {"command": "echo"}})
            second = proc.stdout.readline()
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=20)
            err = "".join(before) + err
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        assert first and second, (first, second, err)
        outputs.append(first + second + out + err)
    for out in outputs:
        assert ENV_CANARY[:18] not in out, out


@pytest.mark.integration
@pytest.mark.slow
def test_secrets_from_a_real_secret_service_stay_out_of_the_output(
    tmp_path: Path, secret_service: dict[str, str]
) -> None:
    """The keyring canary from gnome-keyring, through real processes and -v."""
    cfg = write_config(tmp_path / "external-mcps.json", {
        "leaky": {"command": PY, "args": [LEAKY, "--token", "${CANARY_KEYRING}"],
                  "env": {"LEAKY_TOKEN": "${CANARY_KEYRING}"}, "timeout": 20000},
    })  # fmt: skip
    env = {**secret_service, "MCPCTL_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}

    def mcpctl(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*MCPCTL, "--config", str(cfg), *argv], input=stdin, env=env,
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    assert mcpctl("secret", "set", "CANARY_KEYRING", stdin=KEYRING_CANARY).returncode == 0
    done = mcpctl("--json", "call", "leaky", "leak")
    assert done.returncode == 0 and json.loads(done.stdout)["data"]["structured"]["token"] == "****"
    for argv in (["secret", "list"], ["-v", "health"], ["--json", "-v", "call", "leaky", "fail"]):
        done = mcpctl(*argv)
        assert KEYRING_CANARY[:18] not in done.stdout + done.stderr, (argv, done.stderr[-2000:])
        assert "Traceback" not in done.stderr, argv
