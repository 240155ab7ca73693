"""No secret in any output, no terminal control from outside text: the canary tests.

Canary secrets are lowercase random strings: no pattern recognises them, so only the output
path's knowledge of the values can hide them. Every command runs as a real process, with and
without --json, -v and -q; the secrets travel through env, header and URL placeholders, in
text, structured content, tool errors, stderr (cut at 400 characters), non-JSON stdout, the
SDK's debug logs, and the environment of a server that inherits everything.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MCPCTL, SERVERS, write_config

pytestmark = pytest.mark.slow

LEAKY = str(SERVERS / "leaky.py")
CANARIES = {
    name: f"canary{uuid.uuid4().hex}"
    for name in ("CANARY_ARG", "CANARY_ENV", "CANARY_OTHER", "CANARY_HDR", "CANARY_URL")
}
UNREFERENCED = {"DEPLOY_API_TOKEN": f"canary{uuid.uuid4().hex}"}  # secret by its name only
ESCAPES = re.compile("[\x1b\x9b\u202e\x07\x08]")
# What the hostile server sends; on a terminal, rich's own styling uses other ESC sequences.
HOSTILE = ("\x1b[2J", "\x1b]0;", "\x9b", "\u202e", "\x1bc", "\x07", "\x08")


def run(args: list[str], cwd: Path, env: dict[str, str], *, tty: bool = False) -> str:
    """stdout + stderr of one mcpctl run."""
    argv = [*MCPCTL, *args]
    if tty:
        # A real terminal: rich draws tables and colours, the path attackers aim at.
        argv = ["script", "-qec", " ".join(_quote(a) for a in argv), "/dev/null"]
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=120)
    return r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


@pytest.fixture
def leaky_config(tmp_path: Path, http_server: Any) -> tuple[Path, dict[str, str]]:
    url = http_server("streamable-http")
    config = {
        "leaky": {
            "command": sys.executable, "args": [LEAKY, "--token", "${CANARY_ARG}"],
            "env": {"LEAKY_TOKEN": "${CANARY_ENV}"},
        },
        # Inherits mcpctl's whole environment and prints it: every other secret passes by.
        "nosy": {"command": sys.executable, "args": [LEAKY, "--exit", "--garbage"],
                 "inherit_env": True},
        "other": {"command": sys.executable, "args": [LEAKY],
                  "env": {"LEAKY_TOKEN": "${CANARY_OTHER}"}, "enabled": False},
        "remote": {"url": f"{url}/mcp?key=${{CANARY_URL}}",
                   "headers": {"X-Canary": "${CANARY_HDR}"}},
    }  # fmt: skip
    path = write_config(tmp_path / "external-mcps.json", config)
    env = {**os.environ, **CANARIES, **UNREFERENCED, "COLUMNS": "120", "NO_COLOR": "1"}
    env["MCPCTL_HOME"] = str(tmp_path / "home")
    return path, env


COMMANDS = [
    ["list"], ["list", "--json"], ["get", "leaky"], ["get", "remote", "--json"], ["validate"],
    ["health"], ["health", "--json"], ["-v", "health", "remote", "leaky"], ["-q", "health"],
    ["health", "nosy", "--json"], ["health", "other"],
    ["tools"], ["tools", "--json"],
    ["call", "leaky", "say"], ["call", "leaky", "leak"], ["call", "leaky", "leak", "--json"],
    ["call", "leaky", "fail"], ["call", "leaky", "fail", "--json"],
    ["call", "remote", "headers"], ["-v", "call", "remote", "headers", "--json"],
]  # fmt: skip


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_no_secret_reaches_any_output(
    leaky_config: tuple[Path, dict[str, str]], args: list[str]
) -> None:
    path, env = leaky_config
    out = run(args, path.parent, env)
    found = [name for name, value in {**CANARIES, **UNREFERENCED}.items() if value in out]
    assert not found, f"{found} leaked in `mcpctl {' '.join(args)}`:\n{out[-3000:]}"
    # Half a secret is a leak too (a line cut at 400 characters used to cut through one).
    for value in CANARIES.values():
        assert value[:16] not in out, (value, out[-2000:])


def test_the_canaries_really_travel(leaky_config: tuple[Path, dict[str, str]]) -> None:
    """The servers did receive the secrets: the outputs above are redacted, not empty."""
    path, env = leaky_config
    out = run(["call", "leaky", "leak", "--json"], path.parent, env)
    data = json.loads(out[: out.rindex("}") + 1])
    assert data["data"]["structured"]["token"] == "****"
    assert "****" in run(["call", "remote", "headers"], path.parent, env)


@pytest.mark.parametrize("tty", [False, True], ids=["piped", "tty"])
@pytest.mark.parametrize(
    "args", [["tools"], ["tools", "--json"], ["health"], ["call", "evil", "say"]]
)
def test_server_text_never_drives_the_terminal(tmp_path: Path, args: list[str], tty: bool) -> None:
    if tty and shutil.which("script") is None:
        pytest.skip("script (util-linux) is not installed")
    config = {
        "evil": {"command": sys.executable, "args": [LEAKY, "--hostile"]},
        "broken": {"command": sys.executable, "args": [LEAKY, "--hostile", "--exit"]},
    }
    write_config(tmp_path / "external-mcps.json", config)
    env = {**os.environ, "COLUMNS": "120", "MCPCTL_HOME": str(tmp_path / "home")}
    out = run(args, tmp_path, env, tty=tty)
    if tty:
        assert not [h for h in HOSTILE if h in out], repr(out[-2000:])
    else:
        assert not ESCAPES.findall(out), repr(out[-2000:])
    if "--json" in args:
        assert "\\u001b" in out  # JSON keeps the text, escaped
    elif args[0] == "tools":
        assert "\\x1b" in out  # people see what was there, as data


def test_lone_surrogates_never_crash_output(cli: Any, config_path: Path) -> None:
    config_path.write_text(
        '{"s": {"command": "echo", "args": ["x\\ud800y"], "description": "\\udfff"}}'
    )
    for args in (["list"], ["list", "--json"], ["get", "s"], ["get", "s", "--json"]):
        r = cli(*args)
        assert r.exit_code == 0, r.stderr
        assert "\\ud800" in r.stdout and "Traceback" not in r.stderr
