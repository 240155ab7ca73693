"""``health --as FILE``: the literal secrets of a client's file never reach the output.

A client's file (a cloned repository's ``.cursor/mcp.json``, ``.codex/config.toml``,
``.continue/mcpServers/*.yaml``) may hold secrets as literals: a value under
``DB_PASSWORD``, the argument after ``--password``. ``health --as`` starts the servers as the
client would, with those values, and shows what they say on stderr. The servers here say the
values back (tests/servers/leaky.py prints its environment; its argument parser quotes the
argument it does not know); canaries are random lowercase strings, which no pattern
recognises: only knowing the values as secrets -- as ``import`` does, to move them to the
keyring -- hides them. Real processes, text and ``--json``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.conftest import SERVERS, write_config

pytestmark = pytest.mark.slow

LEAKY = str(SERVERS / "leaky.py")
PASSWORD = f"canary{uuid.uuid4().hex}"  # under DB_PASSWORD: secret by its name only
FLAG = f"canary{uuid.uuid4().hex}"  # after --password


def files() -> dict[str, tuple[str, str]]:
    """Each client's file with the two servers: (target, file name, text)."""
    py = json.dumps(sys.executable)
    leaky = json.dumps(LEAKY)
    toml = (
        f'[mcp_servers.env]\ncommand = {py}\nargs = [{leaky}, "--exit"]\n'
        f'env = {{ DB_PASSWORD = "{PASSWORD}" }}\n\n'
        f'[mcp_servers.flag]\ncommand = {py}\nargs = [{leaky}, "--password", "{FLAG}"]\n'
    )
    yaml = (
        f"mcpServers:\n  - name: env\n    command: {py}\n    args: [{leaky}, --exit]\n"
        f"    env: {{DB_PASSWORD: {PASSWORD}}}\n"
        f"  - name: flag\n    command: {py}\n    args: [{leaky}, --password, {FLAG}]\n"
    )
    cursor = {"mcpServers": {
        "env": {"command": sys.executable, "args": [LEAKY, "--exit"],
                "env": {"DB_PASSWORD": PASSWORD}},
        "flag": {"command": sys.executable, "args": [LEAKY, "--password", FLAG]},
    }}  # fmt: skip
    return {
        "json": ("cursor", "mcp.json", json.dumps(cursor, indent=2)),
        "toml": ("codex", "config.toml", toml),
        "yaml": ("continue", "servers.yaml", yaml),
    }


def leaks(text: str) -> list[str]:
    """The canaries, or the first half of one (a cut secret is a leak too), in ``text``."""
    return [c for c in (PASSWORD, FLAG) if c[: len(c) // 2] in text]


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("kind", ["json", "toml", "yaml"])
def test_health_as_hides_the_files_literal_secrets(
    isolated: Path, config_path: Path, kind: str, json_out: bool
) -> None:
    write_config(config_path, {})
    target, name, text = files()[kind]
    (isolated / name).write_text(text)
    args = [sys.executable, "-m", "mcpctl", "health", "--as", target, name, "--timeout", "30s"]
    done = subprocess.run(
        [*args, *(["--json"] if json_out else [])], cwd=isolated, env=dict(os.environ),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert "internal error" not in out, out
    assert done.returncode == 1, out  # both servers exit before the handshake
    assert leaks(out) == [], out
    # The servers did say them: what they said is shown, the values as ****.
    said = out if not json_out else json.dumps(json.loads(done.stdout)["data"]["mcps"])
    assert "'DB_PASSWORD': '****'" in said, said
    assert "unrecognized arguments: --password ****" in said, said
