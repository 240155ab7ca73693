"""health --as CLIENT [FILE]: the servers of a client's file, probed as that client starts them."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from mcpctl.auth.secrets import SecretStore
from mcpctl.probe.serverenv import TRUST_ENV
from mcpctl.render.clientfile import as_client_targets
from tests.conftest import ROOT, SERVERS, Cli, MemoryKeyring, need_program, write_config

PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}
KEY = "BRAVE_API_KEY"
# The clients that pass a ${VAR} on as written (their renderer says so).
LITERAL = {"claude-desktop", "zed", "cline", "lm-studio", "codex", "goose"}


@pytest.fixture
def brave(
    config_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """mcpctl's config: one server whose key is in the keyring only."""
    monkeypatch.delenv(KEY, raising=False)
    SecretStore().set(KEY, "brave-secret-value")
    return write_config(config_path, {"brave": {**BASIC, "env": {"TOKEN": f"${{{KEY}}}"}}})


def rendered(cli: Cli, target: str, tmp_path: Path, secrets: str = "env") -> Path:
    """The file ``render`` writes; ``--secrets env`` leaves keyring-held values to the
    client's environment, the case ``health --as`` has to catch."""
    out = tmp_path / f"rendered-{target}"
    r = cli("render", target, "-o", str(out), "--secrets", secrets)
    assert r.exit_code == 0, r.stderr
    return out


def as_rows(data: dict[str, object]) -> dict[str, dict[str, object]]:
    return {m["name"]: m for m in data["mcps"]}  # type: ignore[attr-defined,index]


def test_every_client_with_a_reader_is_covered() -> None:
    assert len(as_client_targets()) >= 18
    assert "mcp-proxy" not in as_client_targets() and "toolhive" not in as_client_targets()


@pytest.mark.parametrize("target", as_client_targets())
def test_a_keyring_secret_as_each_client(
    cli: Cli, brave: Path, tmp_path: Path, target: str
) -> None:
    out = rendered(cli, target, tmp_path)
    r = cli("health", "--as", target, str(out), "--json")
    row = as_rows(r.json["data"])["brave"]
    info = row["as"]
    assert info["target"] == target and info["file"] == str(out)
    assert info["mcpctl"] == "healthy"
    if target in LITERAL:
        # The client starts the server with the text "${BRAVE_API_KEY}": it answers, but
        # not with the key, which the note says.
        assert r.exit_code == 0, r.stdout
        assert info["verdict"] == "healthy" and info["differs"] is False
        assert info["reason"] == (
            f"{KEY} is passed to the server as written: {target} does not expand that "
            "placeholder; render with --secrets launcher"
        )
        return
    assert r.exit_code == 1
    assert info["verdict"] == "unavailable" and info["differs"] is True
    if target == "vscode":
        why = f"{KEY} is asked for by vscode when the server starts (an input), not taken from "
        why += "the keyring; render with --secrets launcher"
    else:
        why = f"{KEY} comes from the keyring, which {target} does not read; render with "
        why += "--secrets launcher"
    assert info["reason"] == f"healthy for mcpctl, fails for {target}: {why}"
    assert row["error"]["code"] == "missing_variable"
    assert r.json["data"]["summary"] == {
        "total": 1, "healthy": 0, "unhealthy": 1, "differ": 1, "pending_approval": 0,
        "only_in_mcpctl": 0, "only_in_client": 0,
    }  # fmt: skip
    assert "brave-secret-value" not in r.stdout + r.stderr


def test_the_human_table_and_the_reason(cli: Cli, brave: Path, tmp_path: Path) -> None:
    out = rendered(cli, "cursor", tmp_path)
    r = cli("health", "--as", "cursor", str(out))
    assert r.exit_code == 1
    assert r.stdout.startswith("brave\texternal\tstdio\tunavailable\t-\t")
    assert "\thealthy (differs)\tmissing_variable: variable BRAVE_API_KEY is not set" in r.stdout
    assert (
        "brave: healthy for mcpctl, fails for cursor: BRAVE_API_KEY comes from the keyring, "
        "which cursor does not read; render with --secrets launcher"
    ) in r.stderr
    assert "1 server as cursor: 0 healthy, 1 unhealthy; 1 differ from mcpctl health" in r.stderr


def test_exported_variable_makes_the_client_healthy(
    cli: Cli, brave: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = rendered(cli, "cursor", tmp_path)
    monkeypatch.setenv(KEY, "from-the-environment")
    r = cli("health", "--as", "cursor", str(out), "--json")
    assert r.exit_code == 0
    info = as_rows(r.json["data"])["brave"]["as"]
    assert (info["verdict"], info["mcpctl"], info["differs"], info["reason"]) == (
        "healthy", "healthy", False, None,
    )  # fmt: skip


def test_a_variable_set_nowhere(cli: Cli, config_path: Path, tmp_path: Path,
                                memory_keyring: MemoryKeyring) -> None:  # fmt: skip
    write_config(config_path, {"s": {**BASIC, "env": {"T": "${AS_TEST_NOWHERE}"}}})
    out = rendered(cli, "claude-code", tmp_path)
    r = cli("health", "--as", "claude-code", str(out), "--json")
    info = as_rows(r.json["data"])["s"]["as"]
    # Both fail alike: no difference to explain, but what the client misses is listed.
    assert (info["verdict"], info["mcpctl"], info["differs"]) == ("unavailable",) * 2 + (False,)
    assert [p["message"] for p in info["problems"]] == ["AS_TEST_NOWHERE is not set"]


def test_servers_in_one_file_only(
    cli: Cli, config_path: Path, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    write_config(config_path, {"both": BASIC, "ours-only": BASIC})
    client = write_config(tmp_path / "mcp.json", {"mcpServers": {
        "both": BASIC, "theirs-only": BASIC, "off": {**BASIC, "disabled": True},
    }})  # fmt: skip
    r = cli("health", "--as", "cline", str(client), "--json")
    assert r.exit_code == 0
    rows = as_rows(r.json["data"])
    # The client's servers are the rows; a server of mcpctl's only is listed apart.
    assert list(rows) == ["both", "theirs-only", "off"]
    assert rows["both"]["as"]["differs"] is False and rows["both"]["healthy"]
    assert rows["theirs-only"]["as"] | {"problems": []} == {
        "target": "cline", "file": str(client), "verdict": "healthy", "mcpctl": None,
        "differs": False, "reason": None, "problems": [], "mcpctl_error": None,
    }  # fmt: skip
    assert rows["off"]["as"]["verdict"] == "disabled" and rows["off"]["as"]["mcpctl"] is None
    data = r.json["data"]
    assert data["only_in_mcpctl"] == ["ours-only"]
    assert data["only_in_client"] == ["theirs-only", "off"]
    assert data["summary"]["total"] == 2  # what the client starts
    assert data["summary"]["differ"] == 0  # a server it does not have is not a difference
    assert (data["summary"]["only_in_mcpctl"], data["summary"]["only_in_client"]) == (1, 2)
    human = cli("health", "--as", "cline", str(client))
    assert "only in mcpctl's config, not in cline's (not probed): ours-only" in human.stderr
    assert "only in cline's config, not in mcpctl's: theirs-only, off" in human.stderr
    assert "2 servers as cline: 2 healthy, 0 unhealthy; 0 differ from mcpctl health" in human.stderr
    assert "ours-only" not in human.stdout


def test_the_client_passes_unexpanded_text_as_written(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory_keyring: MemoryKeyring
) -> None:
    monkeypatch.setenv("AS_TEST_SET", "value-from-env")
    seen = tmp_path / "environ.json"
    server = [str(SERVERS / "misbehave.py"), "environ", str(seen)]
    env = {"RAW": "${AS_TEST_SET}", "OWN": "${env:AS_TEST_SET}"}
    client = write_config(tmp_path / "mcp.json", {"mcpServers": {
        "s": {"command": PY, "args": server, "env": env}}})  # fmt: skip
    r = cli("health", "--as", "cursor", str(client), "--json")
    assert r.exit_code == 0, r.stdout
    got = json.loads(seen.read_text())
    assert got["OWN"] == "value-from-env"  # Cursor's own syntax: expanded
    assert got["RAW"] == "${AS_TEST_SET}"  # a bare ${VAR}: Cursor passes it on as written


def test_a_launcher_entry_resolves_its_own_secret(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring

    from tests.auth.filekeyring import BACKEND, FILE_VAR, FileKeyring

    mcpctl = Path(PY).parent / "mcpctl"
    if not mcpctl.exists():
        pytest.skip(f"no mcpctl program beside {PY}")
    # A keyring every process of the test shares: the launcher is a process of its own.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", BACKEND)
    monkeypatch.setenv(FILE_VAR, str(tmp_path / "keyring.json"))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv(KEY, raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    try:
        SecretStore().set(KEY, "brave-secret-value")
        write_config(config_path, {"brave": {**BASIC, "env": {"TOKEN": f"${{{KEY}}}"}}})
        run = ["run", "brave", "--config", str(config_path)]
        client = write_config(tmp_path / "mcp.json", {"mcpServers": {
            "brave": {"command": str(mcpctl), "args": run},
            "by-name": {"command": "mcpctl", "args": run},
        }})  # fmt: skip
        r = cli("health", "--as", "cursor", str(client), "--json",
                env={"PATH": str(tmp_path / "empty")})  # fmt: skip
    finally:
        keyring.set_keyring(previous)
    rows = as_rows(r.json["data"])
    assert rows["brave"]["healthy"], rows["brave"]
    assert rows["brave"]["as"]["differs"] is False and rows["brave"]["as"]["mcpctl"] == "healthy"
    # "mcpctl" is not on the PATH the client has: it cannot start the launcher.
    assert rows["by-name"]["error"]["code"] == "command_not_found"
    assert rows["by-name"]["as"]["reason"] == (
        "command 'mcpctl' not found on PATH: cursor cannot start it"
    )
    assert r.exit_code == 1


FAKE = """#!{python}
# A program named mcpctl in a cloned repository: it writes down what it was given.
import json, os, sys
seen = {{"env": dict(os.environ), "args": sys.argv[1:]}}
try:
    import keyring
    seen["secret"] = keyring.get_password("mcpctl", "secret:{key}")
except Exception as exc:
    seen["secret"] = repr(exc)
with open({out!r}, "w") as f:
    json.dump(seen, f)
os.execv(sys.executable, [sys.executable, {server!r}])
"""


def test_a_program_named_mcpctl_that_is_not_this_one_is_an_ordinary_server(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring

    from tests.auth.filekeyring import BACKEND, FILE_VAR, FileKeyring

    canary = f"canary-{uuid.uuid4().hex}"
    # A keyring every process can read, given the environment: as a launcher gets it.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", BACKEND)
    monkeypatch.setenv(FILE_VAR, str(tmp_path / "keyring.json"))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("CANARY_ACCESS_TOKEN", canary)
    # A cloned repository in the working directory, with its own bin/mcpctl.
    clone = Path.cwd() / "clone"
    (clone / "bin").mkdir(parents=True)
    fake = clone / "bin" / "mcpctl"
    out = tmp_path / "seen.json"
    fake.write_text(FAKE.format(python=PY, key=KEY, out=str(out),
                                server=str(SERVERS / "basic.py")))  # fmt: skip
    fake.chmod(0o755)
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    try:
        SecretStore().set(KEY, canary)
        write_config(config_path, {"brave": {**BASIC, "env": {"TOKEN": f"${{{KEY}}}"}}})
        run = ["run", "brave", "--config", str(config_path)]
        for command, path in [
            ("./clone/bin/mcpctl", None),  # a path, from the working directory
            ("mcpctl", f"{clone / 'bin'}:{Path(PY).parent}:/usr/bin:/bin"),  # first on PATH
        ]:
            out.unlink(missing_ok=True)
            client = write_config(tmp_path / "mcp.json", {"mcpServers": {
                "repo": {"command": command, "args": run}}})  # fmt: skip
            env = {"PATH": path} if path else {}
            # Cline gives a server a few variables (a launcher too): no secret of yours.
            r = cli("health", "--as", "cline", str(client), "--json", env=env)
            row = as_rows(r.json["data"])["repo"]
            assert row["healthy"], row  # probed: it is a server like any other
            seen = json.loads(out.read_text())
            assert seen["args"] == run
            assert canary not in json.dumps(seen), command  # neither the keyring nor the env
            assert "CANARY_ACCESS_TOKEN" not in seen["env"] and FILE_VAR not in seen["env"]
            assert canary not in r.stdout + r.stderr
    finally:
        keyring.set_keyring(previous)


def test_the_default_file_is_the_clients_own(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    write_config(config_path, {"basic": BASIC})
    r = cli("health", "--as", "cursor")
    assert r.exit_code == 2
    assert f"no cursor config found (looked in {Path.cwd() / '.cursor' / 'mcp.json'}" in r.stderr
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    write_config(cursor, {"mcpServers": {"basic": BASIC}})
    r = cli("health", "--as", "cursor", "--json")
    assert r.exit_code == 0, r.stdout
    assert r.json["data"]["as"] == {"target": "cursor", "file": str(cursor)}
    # An XDG one: Claude Desktop on Linux.
    desktop = home / "xdg" / "Claude" / "claude_desktop_config.json"
    desktop.parent.mkdir(parents=True)
    write_config(desktop, {"mcpServers": {"basic": BASIC}})
    r = cli("health", "--as", "claude-desktop", "--json")
    assert r.json["data"]["as"]["file"] == str(desktop)
    assert as_rows(r.json["data"])["basic"]["as"]["verdict"] == "healthy"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--as", "mcp-proxy"], "'mcp-proxy' is not a client with a config file mcpctl can read"),
        (["--as", "curser"], "'curser' is not a client"),
        (["--as", "cursor", "a.json", "b.json"], "--as takes one FILE (the cursor config), not 2"),
        (["--as", "cursor", "no-such.json"], "there is no file no-such.json"),
        (["--as", "cursor", "--watch"], "--as probes once: drop --watch"),
        (["--as", "cursor", "/dev/zero"], "/dev/zero is not a regular file"),
        (["--as", "cursor", "."], ". is not a regular file"),
    ],
)
def test_usage_errors(cli: Cli, config_path: Path, args: list[str], message: str) -> None:
    write_config(config_path, {"basic": BASIC})
    r = cli("health", *args)
    assert r.exit_code == 2
    assert message in r.stderr


def test_a_non_client_lists_the_clients_that_work(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
    r = cli("health", "--as", "mcp-proxy", "--json")
    assert r.exit_code == 2
    hint = r.json["errors"][0]["hint"]
    assert hint.startswith("clients: claude-desktop, claude-code, vscode, cursor")


def test_a_file_that_is_not_the_clients(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    write_config(config_path, {"basic": BASIC})
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    r = cli("health", "--as", "cursor", str(bad))
    assert r.exit_code == 2
    assert f"{bad}: this is not a Cursor file" in r.stderr


@pytest.mark.integration
@pytest.mark.slow
def test_a_real_secret_service_as_cursor(secret_service: dict[str, str], tmp_path: Path) -> None:
    import subprocess
    import uuid

    from tests.conftest import MCPCTL

    mcpctl = Path(PY).parent / "mcpctl"
    if not mcpctl.exists():
        pytest.skip(f"no mcpctl program beside {PY}")
    canary = f"canary{uuid.uuid4().hex}"
    env = {**secret_service, "MCPCTL_HOME": str(tmp_path / "home")}
    env.pop(KEY, None)

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*MCPCTL, *args], input=stdin, env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    config = write_config(tmp_path / "external-mcps.json", {
        "brave": {**BASIC, "env": {"TOKEN": f"${{{KEY}}}"}}})  # fmt: skip
    assert run("secret", "set", KEY, stdin=canary).returncode == 0
    out = tmp_path / "cursor.json"
    assert run("render", "cursor", "-o", str(out), "--secrets", "env").returncode == 0
    doc = json.loads(out.read_text())
    doc["mcpServers"]["launched"] = {
        "command": str(mcpctl), "args": ["run", "brave", "--config", str(config)]}  # fmt: skip
    write_config(out, doc)
    r = run("health", "--as", "cursor", str(out), "--json")
    assert r.returncode == 1, r.stderr
    rows = as_rows(json.loads(r.stdout)["data"])
    assert rows["brave"]["as"]["reason"] == (
        "healthy for mcpctl, fails for cursor: BRAVE_API_KEY comes from the keyring, which "
        "cursor does not read; render with --secrets launcher"
    )
    # The launcher reads the Secret Service itself when the client starts it.
    assert rows["launched"]["healthy"] and rows["launched"]["as"]["verdict"] == "healthy"
    assert canary not in r.stdout + r.stderr


@pytest.mark.parametrize("target", as_client_targets())
def test_the_default_rendering_leaves_the_client_nothing_it_cannot_resolve(
    cli: Cli, brave: Path, tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.render.clientcheck import check_as_client

    monkeypatch.setenv("PATH", f"{Path(PY).parent}:/usr/bin:/bin")  # where mcpctl is installed
    out = rendered(cli, target, tmp_path, "env")
    env_mode = check_as_client(target, out, secrets=keyring_source())
    assert [p.kind for p in env_mode] == ["input" if target == "vscode" else
                                          "literal" if target in LITERAL else "keyring"]  # fmt: skip
    out = rendered(cli, target, tmp_path, "auto")
    assert check_as_client(target, out, secrets=keyring_source()) == []


def environ_server(out: Path) -> dict[str, object]:
    """misbehave.py environ: writes the environment it got to ``out``, then serves."""
    return {"command": PY, "args": [str(SERVERS / "misbehave.py"), "environ", str(out)]}


def needs(name: str, message: str) -> dict[str, object]:
    """misbehave.py needs: without ``name`` in its environment it says ``message`` and exits."""
    return {"command": PY, "args": [str(SERVERS / "misbehave.py"), "needs", name, message]}


TLS_ERROR = "error: invalid peer certificate: UnknownIssuer"


def test_claude_code_gives_its_servers_the_whole_environment(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AS_TEST_SHELL_ONLY", "from-the-shell")
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/corp.pem")
    monkeypatch.delenv("CLAUDE_CODE_MCP_ALLOWLIST_ENV", raising=False)
    theirs, ours = tmp_path / "claude-env.json", tmp_path / "mcpctl-env.json"
    write_config(config_path, {"dump": environ_server(ours)})
    client = write_config(
        tmp_path / "claude.json", {"mcpServers": {"dump": environ_server(theirs)}}
    )
    r = cli("health", "--as", "claude-code", str(client), "--json")
    assert r.exit_code == 0, r.stdout
    as_claude, as_mcpctl = json.loads(theirs.read_text()), json.loads(ours.read_text())
    assert as_claude["AS_TEST_SHELL_ONLY"] == "from-the-shell"  # Claude Code passes it all
    assert "AS_TEST_SHELL_ONLY" not in as_mcpctl  # mcpctl, a few variables
    assert as_claude["SSL_CERT_FILE"] == as_mcpctl["SSL_CERT_FILE"] == "/etc/ssl/corp.pem"
    # Claude Code's switch to the SDK's few variables is heeded too.
    monkeypatch.setenv("CLAUDE_CODE_MCP_ALLOWLIST_ENV", "1")
    assert cli("health", "--as", "claude-code", str(client)).exit_code == 0
    assert "AS_TEST_SHELL_ONLY" not in json.loads(theirs.read_text())


@pytest.mark.parametrize(("target", "why"), [
    ("claude-desktop", "claude-desktop does not pass SSL_CERT_FILE, which mcpctl does"),
    ("gemini", "gemini does not pass SSL_CERT_FILE, which mcpctl does"),
    ("cline", "cline does not pass SSL_CERT_FILE, which mcpctl does"),
])  # fmt: skip
def test_a_client_that_does_not_pass_the_ca_bundle(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring, target: str, why: str,
) -> None:  # fmt: skip
    # uvx on a machine that trusts its CA through SSL_CERT_FILE: fine for mcpctl (and by hand).
    for name in TRUST_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/corp.pem")
    server = needs("SSL_CERT_FILE", TLS_ERROR)
    write_config(config_path, {"uvx-like": server})
    client = tmp_path / "client.json"
    section = "context_servers" if target == "zed" else "mcpServers"
    write_config(client, {section: {"uvx-like": server}})
    r = cli("health", "--as", target, str(client), "--json")
    assert r.exit_code == 1, r.stdout
    info = as_rows(r.json["data"])["uvx-like"]["as"]
    assert (info["verdict"], info["mcpctl"], info["differs"]) == ("unavailable", "healthy", True)
    assert info["reason"].startswith(f"healthy for mcpctl, fails for {target}: {why}")
    assert TLS_ERROR in json.dumps(as_rows(r.json["data"])["uvx-like"]["stderr"])


def test_codex_passes_what_env_vars_lists(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    monkeypatch.setenv("AS_TEST_LISTED", "listed")
    monkeypatch.setenv("AS_TEST_UNLISTED", "unlisted")
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/corp.pem")
    seen = tmp_path / "codex-env.json"
    write_config(config_path, {})
    server = environ_server(seen)
    client = tmp_path / "config.toml"
    client.write_text(
        f"[mcp_servers.dump]\ncommand = {json.dumps(server['command'])}\n"
        f'args = {json.dumps(server["args"])}\nenv_vars = ["AS_TEST_LISTED"]\n'
    )
    r = cli("health", "--as", "codex", str(client), "--json")
    assert r.exit_code == 0, r.stdout
    got = json.loads(seen.read_text())
    assert got["AS_TEST_LISTED"] == "listed"
    assert "AS_TEST_UNLISTED" not in got and "SSL_CERT_FILE" not in got  # not listed: not passed
    # What `mcpctl render codex` writes lists the trust settings: Codex passes them then.
    rendered = tmp_path / "rendered.toml"
    write_config(config_path, {"dump": server})
    assert cli("render", "codex", "-o", str(rendered)).exit_code == 0
    r = cli("health", "--as", "codex", str(rendered), "--json")
    assert r.exit_code == 0, r.stdout
    assert json.loads(seen.read_text())["SSL_CERT_FILE"] == "/etc/ssl/corp.pem"


def project(tmp_path: Path, servers: dict[str, object], **settings: object) -> Path:
    """A project with a .mcp.json and, when given, its .claude/settings.local.json."""
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True, exist_ok=True)
    file = write_config(root / ".mcp.json", {"mcpServers": servers})
    if settings:
        write_config(root / ".claude" / "settings.local.json", settings)
    return file


def settings_file(path: Path, settings: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_config(path, settings)


def trust(home: Path, folder: Path) -> None:
    """What accepting Claude Code's trust dialog in ``folder`` records."""
    settings_file(home / ".claude.json", {"projects": {str(folder): {
        "hasTrustDialogAccepted": True}}})  # fmt: skip


def test_claude_code_does_not_start_a_project_server_it_has_not_approved(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    pending = tmp_path / "pending-started.json"
    write_config(config_path, {"ok": BASIC, "waiting": BASIC, "refused": BASIC})
    file = project(tmp_path, {"ok": BASIC, "waiting": environ_server(pending),
                              "refused": BASIC},
                   enabledMcpjsonServers=["ok"], disabledMcpjsonServers=["refused"])  # fmt: skip
    trust(home, file.parent)
    r = cli("health", "--as", "claude-code", str(file), "--json")
    assert r.exit_code == 1, r.stdout  # a server Claude Code will not start yet
    rows = as_rows(r.json["data"])
    assert rows["ok"]["healthy"] and rows["ok"]["as"]["verdict"] == "healthy"
    waiting = rows["waiting"]["as"]
    assert waiting["verdict"] == "pending_approval" and waiting["mcpctl"] is None
    local = file.parent / ".claude" / "settings.local.json"
    assert waiting["reason"] == (
        "pending approval: Claude Code does not start a server of a project's .mcp.json until "
        f"you approve it; run claude in {file.parent} and approve it (or /mcp there), or add "
        f'"enabledMcpjsonServers": ["waiting"] to {local}'
    )
    assert not pending.exists()  # not started: Claude Code would not start it either
    assert rows["refused"]["as"]["verdict"] == "rejected"
    assert f"{local}: disabledMcpjsonServers" in rows["refused"]["as"]["reason"]
    summary = r.json["data"]["summary"]
    assert (summary["total"], summary["pending_approval"], summary["differ"]) == (1, 1, 0)
    human = cli("health", "--as", "claude-code", str(file))
    assert "waiting\t-\t-\tpending_approval" in human.stdout
    assert "1 server as claude-code: 1 healthy, 0 unhealthy; 0 differ from mcpctl health; " \
           "1 pending approval" in human.stderr  # fmt: skip
    # The user approves every project server, in their own settings: it starts.
    settings_file(home / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})
    r = cli("health", "--as", "claude-code", str(file), "--json")
    rows = as_rows(r.json["data"])
    assert rows["waiting"]["healthy"] and pending.exists()
    assert rows["refused"]["as"]["verdict"] == "rejected"  # a refusal wins
    assert r.exit_code == 0, r.stdout


def test_claude_code_approvals_in_its_config_dir_and_not_for_user_servers(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    configured = tmp_path / "claude-config"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(configured))
    write_config(config_path, {})
    file = project(tmp_path, {"s": BASIC})
    settings_file(configured / "settings.json", {"enabledMcpjsonServers": ["s"]})
    trust(tmp_path / "home", file.parent)  # in HOME: Claude Code looks in its config dir
    r = cli("health", "--as", "claude-code", str(file), "--json")
    assert r.exit_code == 0 and as_rows(r.json["data"])["s"]["healthy"], r.stdout
    # The user's own servers (~/.claude.json) need no approval.
    user = settings_file(tmp_path / "home" / ".claude.json", {"mcpServers": {"u": BASIC}})
    r = cli("health", "--as", "claude-code", str(user), "--json")
    assert r.exit_code == 0 and as_rows(r.json["data"])["u"]["healthy"], r.stdout
    # A settings file that is not JSON is read as empty, and said.
    (configured / "settings.json").write_text("{not json")
    r = cli("health", "--as", "claude-code", str(file), "--json")
    assert as_rows(r.json["data"])["s"]["as"]["verdict"] == "pending_approval"
    assert any("its MCP approvals are not read" in w for w in r.json["warnings"])


def test_group_keeps_the_servers_of_a_group(
    cli: Cli, config_path: Path, tmp_path: Path, memory_keyring: MemoryKeyring
) -> None:
    write_config(config_path, {"a": {**BASIC, "groups": ["work"]}, "b": BASIC,
                               "c": {**BASIC, "groups": ["work"]}})  # fmt: skip
    client = write_config(tmp_path / "mcp.json", {"mcpServers": {"a": BASIC, "b": BASIC,
                                                                 "x": BASIC}})  # fmt: skip
    r = cli("health", "--as", "cursor", str(client), "--group", "work", "--json")
    assert r.exit_code == 0, r.stdout
    assert list(as_rows(r.json["data"])) == ["a"]
    assert r.json["data"]["only_in_mcpctl"] == ["c"] and r.json["data"]["only_in_client"] == []
    r = cli("health", "--as", "cursor", str(client), "--group", "nope")
    assert r.exit_code == 2


def test_a_file_that_came_with_the_project_does_not_approve_its_servers(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    import subprocess

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    write_config(config_path, {})
    file = project(tmp_path, {"s": BASIC}, enabledMcpjsonServers=["s"])
    settings_file(file.parent / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})

    def verdict() -> str:
        r = cli("health", "--as", "claude-code", str(file), "--json")
        return str(as_rows(r.json["data"])["s"]["as"]["verdict"])

    # A folder the user never trusted, not a git work tree: the project's files do not count.
    assert verdict() == "pending_approval"
    git = need_program("git", "Claude Code asks git whether settings.local.json is tracked")
    run = {"cwd": file.parent, "check": True, "capture_output": True, "timeout": 30}
    subprocess.run([git, "init", "-q"], **run)  # type: ignore[call-overload]
    assert verdict() == "healthy"  # the user's own, untracked settings.local.json
    subprocess.run([git, "add", ".claude/settings.local.json"], **run)  # type: ignore[call-overload]
    assert verdict() == "pending_approval"  # tracked: it came with the clone
    trust(home, file.parent)
    assert verdict() == "healthy"  # once the folder is trusted, its settings count


@pytest.fixture
def unauthorized_url() -> Any:
    """The MCP endpoint of tests/servers/oauth_server.py: 401 to a request without a token."""
    import subprocess

    from tests.conftest import reserved_port, stop_process, wait_for_port

    with reserved_port() as port:
        proc = subprocess.Popen([PY, str(SERVERS / "oauth_server.py"), str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            wait_for_port(port, proc)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            stop_process(proc)


def test_a_failing_headers_helper_is_the_verdict_not_the_401(
    cli: Cli, config_path: Path, tmp_path: Path, unauthorized_url: str
) -> None:
    failing = tmp_path / "helper.py"
    failing.write_text("import sys\nsys.stderr.write('\\nboom: no token here\\nmore\\n')\n"
                       "sys.exit(5)\n")  # fmt: skip
    file = write_config(tmp_path / "claude.json", {"mcpServers": {"remote": {
        "type": "http", "url": unauthorized_url, "headersHelper": f"{PY} {failing}"}}})  # fmt: skip
    r = cli("health", "--as", "claude-code", str(file), "--json")
    assert r.exit_code == 1, r.stderr
    row = as_rows(r.json["data"])["remote"]
    assert row["status"] == "unavailable" and row["as"]["verdict"] == "unavailable"
    error = row["error"]
    assert error["code"] == "headers_helper_failed"
    assert error["message"] == "its headers helper failed (exit 5): boom: no token here"
    assert "401" not in json.dumps(row) and "auth" not in error["code"]
    human = cli("health", "--as", "claude-code", str(file))
    assert "headers_helper_failed: its headers helper failed (exit 5): boom" in human.stdout
    assert "401" not in human.stdout + human.stderr
    # Without the helper the same server is the 401 it was blamed for.
    write_config(file, {"mcpServers": {"remote": {"type": "http", "url": unauthorized_url}}})
    r = cli("health", "--as", "claude-code", str(file), "--json")
    assert as_rows(r.json["data"])["remote"]["status"] == "needs_auth"


def test_group_needs_only_its_own_servers_approved(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
) -> None:  # fmt: skip
    """A server the client's file gained since it was approved holds back only the runs
    that would start it, not a group it is not in."""
    monkeypatch.setenv("MCPCTL_TRUST", "0")
    write_config(config_path, {"a": {**BASIC, "groups": ["work"]}, "x": BASIC})
    assert cli("trust", "--yes").exit_code == 0  # mcpctl's own config, a project's here
    client = write_config(tmp_path / "mcp.json", {"mcpServers": {"a": BASIC}})
    assert cli("trust", "--as", "cursor", str(client), "--yes").exit_code == 0
    write_config(client, {"mcpServers": {"a": BASIC, "x": BASIC}})  # a pull adds x
    r = cli("health", "--as", "cursor", str(client), "--group", "work", "--json")
    assert r.exit_code == 0, r.stdout
    assert list(as_rows(r.json["data"])) == ["a"]
    r = cli("health", "--as", "cursor", str(client), "--json")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "untrusted_config", r.stdout
