"""mcpctl secret set/list/rm: in an in-memory keyring, and in a real Secret Service."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MCPCTL, SERVERS, Cli, MemoryKeyring, write_config


def test_set_from_stdin_list_and_rm(
    cli: Cli, config_path: Path, memory_keyring: MemoryKeyring
) -> None:
    write_config(config_path, {
        "gh": {"command": "npx", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
        "db": {"url": "https://db.example/mcp", "headers": {"Authorization": "Bearer ${DB_TOKEN}"}},
    })  # fmt: skip
    r = cli("secret", "set", "GITHUB_TOKEN", input="ghp-secret-value\n")
    assert r.exit_code == 0, r.stderr
    assert memory_keyring.items[("mcpctl", "secret:GITHUB_TOKEN")] == "ghp-secret-value"
    assert "ghp-secret-value" not in r.stdout + r.stderr
    r = cli("secret", "list", "--json", env={"DB_TOKEN": ""})
    data = r.json["data"]
    assert data["secrets"] == [
        {"name": "GITHUB_TOKEN", "servers": ["gh"], "environment_overrides": False}
    ]
    assert data["backend"] == "memory (tests)" and "ghp-secret-value" not in r.stdout
    r = cli("secret", "list", "--json", env={"GITHUB_TOKEN": "x"})
    assert r.json["data"]["secrets"][0]["environment_overrides"] is True
    assert cli("secret", "rm", "GITHUB_TOKEN").exit_code == 0
    r = cli("secret", "rm", "GITHUB_TOKEN", "--json")
    assert r.exit_code == 2 and "no secret" in r.json["errors"][0]["message"]


def test_missing_placeholders_are_listed(
    cli: Cli, config_path: Path, memory_keyring: MemoryKeyring
) -> None:
    write_config(config_path, {"gh": {"command": "npx", "env": {"T": "${NOWHERE_TOKEN}"}}})
    r = cli("secret", "list", "--json")
    assert r.json["data"]["missing"] == ["NOWHERE_TOKEN"]
    assert any("NOWHERE_TOKEN" in w for w in r.json["warnings"])


@pytest.mark.parametrize(
    ("args", "stdin"), [(["bad-name"], "v"), (["TOKEN"], ""), (["TOKEN", "value"], "v")]
)
def test_bad_input(cli: Cli, memory_keyring: MemoryKeyring, args: list[str], stdin: str) -> None:
    r = cli("secret", "set", *args, input=stdin)
    assert r.exit_code == 2
    assert memory_keyring.items == {}


def test_no_keyring_is_exit_3_with_remedies(cli: Cli) -> None:
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        r = cli("secret", "set", "X_TOKEN", "--json", input="v")
        assert r.exit_code == 3 and r.json["errors"][0]["code"] == "keyring_unavailable"
        assert "PYTHON_KEYRING_BACKEND" in r.json["errors"][0]["hint"]
    finally:
        keyring.set_keyring(previous)


# --- a real Secret Service ------------------------------------------------------------


def mcpctl(args: list[str], env: dict[str, str], cwd: Path, stdin: str | None = None) -> Any:
    return subprocess.run([*MCPCTL, *args], input=stdin, env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


@pytest.mark.integration
@pytest.mark.slow
def test_secrets_in_a_real_secret_service_reach_servers_and_nothing_else(
    secret_service: dict[str, str], tmp_path: Path
) -> None:
    canary = f"canary{uuid.uuid4().hex}"
    env_canary = f"envcanary{uuid.uuid4().hex}"
    home = tmp_path / "home"
    env = {**secret_service, "MCPCTL_HOME": str(home), "OTHER_API_TOKEN": env_canary}
    config = write_config(tmp_path / "external-mcps.json", {
        "leaky": {"command": sys.executable, "args": [str(SERVERS / "leaky.py")],
                  "env": {"LEAKY_TOKEN": "${KEYRING_TOKEN}"}},
    })  # fmt: skip
    r = mcpctl(["secret", "set", "KEYRING_TOKEN"], env, tmp_path, stdin=canary)
    assert r.returncode == 0, r.stderr
    r = mcpctl(["secret", "list", "--json"], env, tmp_path)
    data = json.loads(r.stdout)["data"]
    assert "SecretService" in data["backend"] and data["secrets"][0]["name"] == "KEYRING_TOKEN"
    outputs = []
    for args in (["health"], ["health", "--json"], ["-v", "health"], ["tools", "--json"],
                 ["call", "leaky", "say"], ["call", "leaky", "leak", "--json"],
                 ["-v", "call", "leaky", "fail"], ["secret", "list"], ["list", "--json"]):  # fmt: skip
        run = mcpctl(args, env, tmp_path)
        outputs.append(run.stdout + run.stderr)
        if args[-1] == "say":
            assert "the token is ****" in run.stdout  # it reached the server, and was hidden
    for out in outputs:
        assert canary not in out and env_canary not in out
    files = [p for p in [*home.rglob("*"), config] if p.is_file()]
    assert files, "the run left its cache and state"
    for path in files:
        content = path.read_bytes()
        assert canary.encode() not in content and env_canary.encode() not in content, path
    r = mcpctl(["secret", "rm", "KEYRING_TOKEN"], env, tmp_path)
    assert r.returncode == 0
    r = mcpctl(["call", "leaky", "say"], env, tmp_path)  # gone from the keyring: missing
    assert r.returncode == 2 and "mcpctl secret set KEYRING_TOKEN" in r.stderr


# A stdio server that exits 0 only when its T is the value in the file named by argv[1].
CHECK_T = "import os, sys; sys.exit(0 if os.environ.get('T') == open(sys.argv[1]).read() else 7)"


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("backend", ["chosen by keyring", "named"])
def test_a_keyring_without_its_bus_is_unreachable_not_a_variable_not_set(
    secret_service: dict[str, str], tmp_path: Path, backend: str
) -> None:
    canary = f"canary{uuid.uuid4().hex}"
    expected = tmp_path / "expected"
    expected.write_text(canary)
    env = {**secret_service, "MCPCTL_HOME": str(tmp_path / "home")}
    config = write_config(tmp_path / "external-mcps.json", {
        "check": {"command": sys.executable, "args": ["-c", CHECK_T, str(expected)],
                  "env": {"T": "${API_TOKEN}"}},
        "remote": {"url": "http://127.0.0.1:9/mcp",
                   "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
    })  # fmt: skip
    assert mcpctl(["secret", "set", "API_TOKEN"], env, tmp_path, stdin=canary).returncode == 0
    r = mcpctl(["run", "check"], env, tmp_path)
    assert r.returncode == 0, r.stderr  # with its bus, the keyring's value reaches the server
    claude = write_config(tmp_path / "claude.json", {"mcpServers": {"remote": {
        "type": "http", "url": "http://127.0.0.1:9/mcp",
        "headersHelper": f"{sys.executable} -m mcpctl secret headers remote --config {config}",
    }}})  # fmt: skip

    gone = {k: v for k, v in env.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    if backend == "chosen by keyring":
        gone.pop("PYTHON_KEYRING_BACKEND")
    runs = {
        "run": mcpctl(["run", "check"], gone, tmp_path),
        "health": mcpctl(["health", "check", "--json"], gone, tmp_path),
        "headers": mcpctl(["secret", "headers", "remote", "--json"], gone, tmp_path),
        "as": mcpctl(["health", "--as", "claude-code", str(claude), "--json"], gone, tmp_path),
    }
    for name, run in runs.items():
        said = run.stdout + run.stderr
        assert canary not in said, name
        assert "API_TOKEN is not set" not in said and "secret set API_TOKEN" not in said, name
        assert "could not be asked" in said and "DBUS_SESSION_BUS_ADDRESS is unset" in said, name
    assert runs["run"].returncode == 3 and runs["run"].stdout == ""
    assert "hint: export API_TOKEN=... in the environment that starts mcpctl" in runs["run"].stderr
    assert runs["headers"].returncode == 3
    assert json.loads(runs["headers"].stdout)["errors"][0]["code"] == "variable_unreachable"
    row = json.loads(runs["health"].stdout)["data"]["mcps"][0]
    assert runs["health"].returncode == 1 and row["error"]["code"] == "variable_unreachable"
    row = json.loads(runs["as"].stdout)["data"]["mcps"][0]
    assert row["error"]["code"] == "headers_helper_failed"
    assert row["error"]["message"].startswith("its headers helper failed (exit 3): error: ")
