"""doctor NAME's library: one server diagnosed layer by layer, stopping at the first layer
that fails -- against real servers on 127.0.0.1 (stdio test servers, the OAuth test server,
TLS servers with certificates made here)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpctl.auth.secrets import SecretStore
from mcpctl.doctor.server import ServerDiagnosis, diagnose_server
from mcpctl.errors import ServerNotFoundError
from tests.conftest import (
    SERVERS,
    MemoryKeyring,
    reserved_port,
    stop_process,
    wait_for_port,
    write_config,
)
from tests.tlsserver import make_certificate, make_key, tls_servers, write_pem

PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}
TIMEOUT = 30.0
ENV_CANARY = "env-doctor-name-canary-4c1e"
KEYRING_CANARY = "keyring-doctor-name-canary-9a7b"


def diagnose(name: str, config: dict[str, Any], path: Path, **options: Any) -> ServerDiagnosis:
    write_config(path, config)
    return diagnose_server(name, timeout=options.pop("timeout", TIMEOUT), **options)


def statuses(d: ServerDiagnosis) -> dict[str, str]:
    return {s.id: s.status for s in d.steps}


def assert_stopped_at(d: ServerDiagnosis, failed: str, following: str | None) -> None:
    """Every step before ``failed`` passed, it failed, every later one is skipped, and the
    first of those is the one named next."""
    ids = [s.id for s in d.steps]
    at = ids.index(failed)
    assert [s.status for s in d.steps[:at]] == ["passed"] * at, d.to_dict()
    assert d.steps[at].status == "failed", d.to_dict()
    assert all(s.status == "skipped" for s in d.steps[at + 1 :]), d.to_dict()
    assert d.next == following
    assert d.failed is d.steps[at] and not d.ok
    assert d.steps[at].fix, "a failed step says how to fix it"


# --- stdio -----------------------------------------------------------------------------------


def test_healthy_stdio_server_passes_every_step(config_path: Path) -> None:
    d = diagnose("basic", {"basic": BASIC}, config_path)
    assert [s.id for s in d.steps] == ["config", "placeholders", "command", "spawn",
                                       "protocol", "lists"]  # fmt: skip
    assert d.ok and d.next is None and d.failed is None, d.to_dict()
    assert d.transport == "stdio"
    by_id = {s.id: s for s in d.steps}
    assert by_id["command"].detail.startswith(f"{PY}: ")
    assert "started (pid " in by_id["spawn"].detail
    assert "basic-test-server" in by_id["protocol"].detail
    assert by_id["lists"].detail.startswith("10 tools")
    assert all(s.ms >= 0 for s in d.steps)


@pytest.mark.parametrize(
    ("protocol", "said"),
    [("legacy", "(initialize handshake)"), ("modern", "(stateless era, server/discover)")],
)
def test_protocol_step_names_the_era_spoken(config_path: Path, protocol: str, said: str) -> None:
    d = diagnose("basic", {"basic": BASIC}, config_path, protocol=protocol)
    step = d.step("protocol")
    assert step is not None and step.status == "passed", d.to_dict()
    assert said in step.detail
    version = "2026-07-28" if protocol == "modern" else "2025-11-25"
    assert f"MCP {version} " in step.detail


def test_missing_command_fails_at_command(config_path: Path) -> None:
    d = diagnose("gone", {"gone": {"command": "no-such-program-doctor-x"}}, config_path)
    assert_stopped_at(d, "command", "spawn")
    step = d.step("command")
    assert step is not None and "'no-such-program-doctor-x' is not found on PATH" in step.detail


@pytest.mark.parametrize("how", ["absolute", "relative"])
def test_a_command_file_that_is_not_executable_fails_at_command(
    config_path: Path, tmp_path: Path, how: str
) -> None:
    script = tmp_path / "bin" / "server"
    script.parent.mkdir()
    script.write_text(f"#!{PY}\nprint('never run')\n")
    script.chmod(0o644)  # no execute bit for anyone, root included
    entry = {"command": str(script)} if how == "absolute" else {
        "command": "./server", "cwd": str(script.parent)}  # fmt: skip
    d = diagnose("plain", {"plain": entry}, config_path)
    assert_stopped_at(d, "command", "spawn")
    step = d.step("command")
    assert step is not None
    assert step.detail == f"{entry['command']!r} is not executable ({script})", step.detail
    assert step.fix == f"chmod +x {script}"
    script.chmod(0o755)  # the same file, executable: past the command step
    d = diagnose("plain", {"plain": entry}, config_path, timeout=5.0)
    assert statuses(d)["command"] == "passed", d.to_dict()


def test_server_exiting_at_once_fails_at_spawn_with_status_and_stderr(config_path: Path) -> None:
    code = "import sys; sys.stderr.write('cannot open the database\\n'); sys.exit(3)"
    d = diagnose("quits", {"quits": {"command": PY, "args": ["-c", code]}}, config_path)
    assert_stopped_at(d, "spawn", "protocol")
    step = d.step("spawn")
    assert step is not None
    assert "exit status 3" in step.detail
    assert "cannot open the database" in step.detail
    assert step.stderr == ("cannot open the database",)


def test_a_server_that_fails_without_a_variable_names_the_ones_it_did_not_get(
    config_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It works by hand, where the shell has AWS_PROFILE; mcpctl starts it with a few variables.
    monkeypatch.setenv("AWS_PROFILE", "work-profile-value")
    monkeypatch.setenv("DOCTOR_ENV_NOT_PASSED", "value-never-shown")
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/corp.pem")  # passed by default: not named
    entry = {"command": PY, "args": [str(SERVERS / "misbehave.py"), "needs", "AWS_PROFILE",
                                     "error: no credentials (is AWS_PROFILE set?)"]}  # fmt: skip
    d = diagnose("aws", {"aws": entry}, config_path)
    assert_stopped_at(d, "spawn", "protocol")
    step = d.step("spawn")
    assert step is not None and step.fix is not None
    assert "it started without " in step.detail and "which a run by hand would have" in step.detail
    named = step.detail.split("environment variables (", 1)[1]
    assert named.startswith("AWS_PROFILE, ")  # what its stderr mentions comes first
    assert "SSL_CERT_FILE" not in named
    assert '"inherit_env": ["AWS_PROFILE"' in step.fix
    assert "work-profile-value" not in json.dumps(d.to_dict())  # names, never values
    assert "value-never-shown" not in json.dumps(d.to_dict())
    # The entry names it: it starts, and nothing is said about the environment.
    d = diagnose("aws", {"aws": {**entry, "inherit_env": ["AWS_PROFILE"]}}, config_path)
    assert d.ok, d.to_dict()


def test_server_writing_garbage_fails_at_protocol(config_path: Path) -> None:
    code = "import sys, time; print('hello, not json', flush=True); time.sleep(60)"
    d = diagnose("noisy", {"noisy": {"command": PY, "args": ["-c", code]}}, config_path,
                 timeout=5.0)  # fmt: skip
    assert_stopped_at(d, "protocol", "lists")
    step = d.step("protocol")
    assert step is not None and "hello, not json" in step.detail


def test_missing_placeholder_fails_at_placeholders(
    config_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCTOR_NAME_UNSET", raising=False)
    entry = {**BASIC, "env": {"KEY": "${DOCTOR_NAME_UNSET}"}}
    d = diagnose("basic", {"basic": entry}, config_path)
    assert_stopped_at(d, "placeholders", "command")
    step = d.step("placeholders")
    assert step is not None and "DOCTOR_NAME_UNSET: missing" in step.detail
    assert "mcpctl secret set DOCTOR_NAME_UNSET" in (step.fix or "")


def test_no_secret_value_in_any_step(
    config_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Values from the environment and the keyring reach the server, never a step -- not
    even when the server writes them on stderr and exits."""
    monkeypatch.setenv("DOCTOR_NAME_ENV", ENV_CANARY)
    SecretStore().set("DOCTOR_NAME_KEY", KEYRING_CANARY)
    code = ("import os, sys; sys.stderr.write(os.environ['A'] + ' ' + os.environ['B'] + '\\n');"
            " sys.exit(4)")  # fmt: skip
    entry = {"command": PY, "args": ["-c", code],
             "env": {"A": "${DOCTOR_NAME_ENV}", "B": "${DOCTOR_NAME_KEY}"}}  # fmt: skip
    d = diagnose("leaky", {"leaky": entry}, config_path)
    assert_stopped_at(d, "spawn", "protocol")
    placeholders = d.step("placeholders")
    assert placeholders is not None
    assert "DOCTOR_NAME_ENV: environment" in placeholders.detail
    assert "DOCTOR_NAME_KEY: keyring" in placeholders.detail
    spawn = d.step("spawn")
    assert spawn is not None and "****" in spawn.detail, "the stderr line is shown, redacted"
    text = json.dumps(d.to_dict())
    assert ENV_CANARY not in text and KEYRING_CANARY not in text


def test_unknown_name_is_the_usual_not_found_error(config_path: Path) -> None:
    with pytest.raises(ServerNotFoundError) as caught:
        diagnose("basik", {"basic": BASIC}, config_path)
    assert caught.value.hint == "did you mean 'basic'?"


def test_disabled_server_fails_at_config(config_path: Path) -> None:
    d = diagnose("basic", {"basic": {**BASIC, "enabled": False}}, config_path)
    assert_stopped_at(d, "config", "placeholders")
    assert "mcpctl enable basic" in (d.steps[0].fix or "")


# --- remote ----------------------------------------------------------------------------------


def test_closed_port_fails_at_connect(config_path: Path) -> None:
    with reserved_port() as port:  # bound, never listening: connections are refused
        d = diagnose("down", {"down": {"url": f"http://127.0.0.1:{port}/mcp"}}, config_path)
    assert [s.id for s in d.steps] == ["config", "placeholders", "resolve", "connect", "http",
                                       "auth", "protocol", "lists"]  # fmt: skip
    assert_stopped_at(d, "connect", "http")
    step = d.step("connect")
    assert step is not None and f"127.0.0.1 port {port}" in step.detail


def test_closed_https_port_names_tls_next(config_path: Path) -> None:
    with reserved_port() as port:
        d = diagnose("down", {"down": {"url": f"https://127.0.0.1:{port}/mcp"}}, config_path)
    assert_stopped_at(d, "connect", "tls")


@pytest.fixture
def oauth_server() -> Iterator[str]:
    """tests/servers/oauth_server.py: an MCP endpoint that answers 401 with a challenge and
    publishes its protected-resource and authorization-server metadata. Its URL."""
    with reserved_port() as port:
        proc = subprocess.Popen(
            [PY, str(SERVERS / "oauth_server.py"), str(port), "--access-ttl", "3600"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            wait_for_port(port, proc)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            stop_process(proc)


@pytest.mark.parametrize("signs_in", [True, False])
def test_401_with_metadata_fails_at_auth(
    config_path: Path, memory_keyring: MemoryKeyring, oauth_server: str, signs_in: bool
) -> None:
    entry: dict[str, Any] = {"url": oauth_server}
    if signs_in:
        entry["auth"] = {"type": "oauth"}
    d = diagnose("docs", {"docs": entry}, config_path)
    assert_stopped_at(d, "auth", "protocol")
    http, auth = d.step("http"), d.step("auth")
    assert http is not None and "HTTP 401" in http.detail and "(Bearer)" in http.detail
    assert auth is not None
    origin = oauth_server.removesuffix("/mcp")
    assert f"protected-resource metadata at {origin}/.well-known/oauth-protected-resource" in (
        auth.detail
    )
    assert f"authorization server {origin}" in auth.detail
    assert "mcpctl auth docs" in (auth.fix or "")
    assert ("not signed in" in auth.detail) is signs_in


# --- TLS -------------------------------------------------------------------------------------


@pytest.fixture
def tls_server() -> Iterator[Any]:
    """``start(cert, key) -> port``: TLS servers on 127.0.0.1, stopped with the test."""
    with tls_servers() as start:
        yield start


def test_self_signed_certificate_fails_at_tls(
    config_path: Path, tmp_path: Path, tls_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    key = make_key()
    cert = make_certificate("127.0.0.1", key, None, (-1, 30), ca=False)
    port = tls_server(*write_pem(cert, key, tmp_path, "self"))
    d = diagnose("selfie", {"selfie": {"url": f"https://127.0.0.1:{port}/mcp"}}, config_path)
    assert_stopped_at(d, "tls", "http")
    step = d.step("tls")
    assert step is not None and "self-signed" in step.detail
    assert "self-signed" in (step.fix or "") and "SSL_CERT_FILE" in (step.fix or "")


def test_expired_certificate_fails_at_tls(
    config_path: Path, tmp_path: Path, tls_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A certificate from a CA this machine trusts (SSL_CERT_FILE), expired yesterday."""
    ca_key, key = make_key(), make_key()
    ca = make_certificate("doctor test CA", ca_key, None, (-30, 30), ca=True)
    ca_path, _ = write_pem(ca, ca_key, tmp_path, "ca")
    leaf = make_certificate("127.0.0.1", key, ("doctor test CA", ca_key), (-10, -1), ca=False)
    port = tls_server(*write_pem(leaf, key, tmp_path, "leaf"))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_path))
    d = diagnose("old", {"old": {"url": f"https://127.0.0.1:{port}/mcp"}}, config_path)
    assert_stopped_at(d, "tls", "http")
    step = d.step("tls")
    assert step is not None and "expired" in step.detail
    assert "renew it" in (step.fix or "")


def test_valid_certificate_passes_tls_with_days_left(
    config_path: Path, tmp_path: Path, tls_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca_key, key = make_key(), make_key()
    ca = make_certificate("doctor test CA", ca_key, None, (-30, 365), ca=True)
    ca_path, _ = write_pem(ca, ca_key, tmp_path, "ca")
    leaf = make_certificate("127.0.0.1", key, ("doctor test CA", ca_key), (-1, 90), ca=False)
    port = tls_server(*write_pem(leaf, key, tmp_path, "leaf"))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_path))
    d = diagnose("fine", {"fine": {"url": f"https://127.0.0.1:{port}/mcp"}}, config_path,
                 timeout=5.0)  # fmt: skip
    step = d.step("tls")
    assert step is not None and step.status == "passed", d.to_dict()
    assert "from doctor test CA" in step.detail
    assert "days left" in step.detail
    assert d.failed is not None and d.failed.id == "http"  # it closes without answering HTTP


def test_healthy_remote_server_passes_every_step(config_path: Path, http_server: Any) -> None:
    url = http_server("streamable-http") + "/mcp"
    d = diagnose("remote", {"remote": {"url": url}}, config_path)
    assert d.ok and d.next is None, d.to_dict()
    assert [s.id for s in d.steps] == ["config", "placeholders", "resolve", "connect", "http",
                                       "auth", "protocol", "lists"]  # fmt: skip
    by_id = {s.id: s for s in d.steps}
    assert "POST initialize: HTTP 200" in by_id["http"].detail
    assert by_id["auth"].detail == "no sign-in asked for"
    assert "over streamable-http" in by_id["protocol"].detail
    assert by_id["lists"].detail.startswith("10 tools")


# --- what mutation testing found unpinned ----------------------------------------------------
# Fast: each stops before anything is started (or at a server that never answers).

GONE = "/nonexistent/doctor-name-program"


def test_the_config_named_is_the_one_read_sync_and_async(config_path: Path, tmp_path: Path) -> None:
    import anyio

    from mcpctl.doctor.server import diagnose_server_async

    write_config(config_path, {"here": {"command": GONE}})
    other = write_config(tmp_path / "other.json", {"there": {"command": GONE}})
    for d in (
        diagnose_server("there", other, timeout=TIMEOUT),
        anyio.run(lambda: diagnose_server_async("there", str(other), timeout=TIMEOUT)),
    ):
        assert_stopped_at(d, "command", "spawn")
        assert (d.name, d.transport) == ("there", "stdio")
        config = d.step("config")
        assert config is not None and config.detail.startswith(f"found in {other}, valid")
    with pytest.raises(ServerNotFoundError):
        diagnose_server("here", other, timeout=TIMEOUT)


def test_the_keyring_given_is_the_one_read_sync_and_async(
    config_path: Path, no_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    from mcpctl.doctor.server import diagnose_server_async

    monkeypatch.delenv("DOCTOR_NAME_STORED", raising=False)
    store = SecretStore(MemoryKeyring())
    store.set("DOCTOR_NAME_STORED", KEYRING_CANARY)
    entry = {"command": GONE, "env": {"K": "${DOCTOR_NAME_STORED}"}}
    write_config(config_path, {"s": entry})
    for d in (
        diagnose_server("s", timeout=TIMEOUT, store=store),
        anyio.run(lambda: diagnose_server_async("s", timeout=TIMEOUT, store=store)),
    ):
        assert_stopped_at(d, "command", "spawn")
        step = d.step("placeholders")
        assert step is not None and step.detail == "DOCTOR_NAME_STORED: keyring"
        assert KEYRING_CANARY not in json.dumps(d.to_dict())


def test_the_config_step_reads_only_the_entry_s_own_problems(config_path: Path) -> None:
    config = {
        "w": {"command": GONE},
        "w2": {"command": 5},  # another server's problem, its name sharing a prefix
        "odd": {"command": GONE, "a key": 1},  # its path: odd['a key']
    }
    d = diagnose("w", config, config_path)
    step = d.step("config")
    assert step is not None and step.status == "passed"
    assert step.detail == f"found in {config_path}, valid, enabled"
    d = diagnose("odd", config, config_path)
    assert_stopped_at(d, "config", "placeholders")
    step = d.step("config")
    assert step is not None and step.detail.startswith(
        "the entry 'odd' is not valid: odd['a key']: "
    )


def test_an_entry_that_is_not_valid_fails_at_config_with_its_errors(config_path: Path) -> None:
    config = {"bad": {"command": 5, "args": "x"}, "ok": {"command": GONE}}
    d = diagnose("bad", config, config_path)
    assert [s.id for s in d.steps] == ["config", "placeholders", "command", "spawn",
                                       "protocol", "lists"]  # fmt: skip
    assert_stopped_at(d, "config", "placeholders")
    step = d.step("config")
    assert step is not None
    assert step.detail.startswith("the entry 'bad' is not valid: bad.")
    assert "warning:" not in step.detail
    assert step.detail.endswith(" (and 1 more)")
    assert step.ms >= 0


def test_an_https_address_in_capitals_has_a_tls_step(config_path: Path) -> None:
    with reserved_port() as port:
        d = diagnose("down", {"down": {"url": f"HTTPS://127.0.0.1:{port}/mcp"}}, config_path)
    assert [s.id for s in d.steps] == ["config", "placeholders", "resolve", "connect", "tls",
                                       "http", "auth", "protocol", "lists"]  # fmt: skip
    assert_stopped_at(d, "connect", "tls")
    # stopped before the probe: the transport is the entry's
    assert (d.name, d.transport) == ("down", "streamable-http")


SILENT = {"command": PY, "args": ["-c", "import time; time.sleep(30)"]}


def test_the_timeout_given_is_each_step_s_limit(config_path: Path) -> None:
    d = diagnose("silent", {"silent": {**SILENT, "timeout": 8_000}}, config_path, timeout=1)
    assert d.failed is not None and d.failed.id in ("spawn", "protocol"), d.to_dict()
    assert d.failed.ms < 6_000, d.to_dict()


def test_without_a_timeout_the_entry_s_own_is_each_step_s_limit(config_path: Path) -> None:
    write_config(config_path, {"silent": {**SILENT, "timeout": 1000}})
    d = diagnose_server("silent")
    assert d.failed is not None and d.failed.id in ("spawn", "protocol"), d.to_dict()
    assert d.failed.ms < 6_000, d.to_dict()


class Ticks:
    """A clock for the diagnosis's own timing: each reading a second after the last."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


def test_each_step_s_time_and_the_config_s_includes_reading_the_file(
    config_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.doctor import server

    monkeypatch.setattr(server, "time", Ticks())
    d = diagnose("gone", {"gone": {"command": GONE}}, config_path)
    # the file read in one tick, each step in one more; the config step's time has both
    assert [(s.id, s.status, s.ms) for s in d.steps[:4]] == [
        ("config", "passed", 2000.0),
        ("placeholders", "passed", 1000.0),
        ("command", "failed", 1000.0),
        ("spawn", "skipped", 0.0),
    ]
    d = diagnose("off", {"off": {"command": GONE, "enabled": False}}, config_path)
    assert [(s.id, s.status, s.ms) for s in d.steps[:2]] == [
        ("config", "failed", 2000.0),
        ("placeholders", "skipped", 0.0),
    ]


def test_the_transport_is_the_one_the_server_speaks(config_path: Path, http_server: Any) -> None:
    url = http_server("sse") + "/sse"
    d = diagnose("old", {"old": {"url": url}}, config_path)
    assert d.ok, d.to_dict()
    assert d.transport == "sse"
    step = d.step("http")
    assert step is not None and step.detail.startswith("GET (event stream): HTTP 200")


def test_the_era_memory_given_learns_the_era_spoken_sync_and_async(config_path: Path) -> None:
    import anyio

    from mcpctl.config.loader import read_config
    from mcpctl.doctor.server import diagnose_server_async
    from mcpctl.probe.eras import EraMemory

    write_config(config_path, {"basic": BASIC})
    entry = read_config(config_path).config.entries["basic"]
    for run in (
        lambda memory: diagnose_server("basic", timeout=TIMEOUT, eras=memory),
        lambda memory: anyio.run(
            lambda: diagnose_server_async("basic", timeout=TIMEOUT, eras=memory)
        ),
    ):
        memory = EraMemory()
        d = run(memory)
        assert d.ok, d.to_dict()
        era = memory.recall(entry)
        assert era is not None and era.name in ("modern", "legacy")


def test_without_a_timeout_a_remote_entry_s_own_limits_its_network_steps(
    config_path: Path,
) -> None:
    with socket.socket() as mute:  # accepts connections (the kernel does), never answers
        mute.bind(("127.0.0.1", 0))
        mute.listen(8)
        url = f"http://127.0.0.1:{mute.getsockname()[1]}/mcp"
        write_config(config_path, {"mute": {"url": url, "timeout": 1000}})
        d = diagnose_server("mute")
    assert_stopped_at(d, "http", "auth")
    step = d.step("http")
    assert step is not None and step.detail == "no HTTP answer within 1 s", d.to_dict()


def test_a_failed_step_s_time_is_the_probe_s_own_when_it_has_one(
    config_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.doctor import server

    monkeypatch.setattr(server, "time", Ticks())
    code = "import sys; sys.exit(3)"
    d = diagnose("quits", {"quits": {"command": PY, "args": ["-c", code]}}, config_path)
    assert_stopped_at(d, "spawn", "protocol")
    step = d.step("spawn")
    assert step is not None and step.ms != 1000.0 and step.ms > 0  # not a tick of our clock


def test_a_passed_step_s_time_is_the_probe_s_own_when_it_has_one(
    config_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.doctor import server

    monkeypatch.setattr(server, "time", Ticks())
    d = diagnose("basic", {"basic": BASIC}, config_path)
    assert d.ok, d.to_dict()
    ms = {s.id: s.ms for s in d.steps}
    assert ms["config"] == 2000.0 and ms["placeholders"] == 1000.0
    assert ms["protocol"] != 1000.0 and ms["lists"] != 1000.0  # the probe's measures


def test_a_config_named_must_exist_the_usual_one_need_not(
    config_path: Path, tmp_path: Path
) -> None:
    from mcpctl.errors import ConfigNotFoundError

    missing = tmp_path / "missing.json"
    with pytest.raises(ConfigNotFoundError) as caught:
        diagnose_server("x", missing, timeout=TIMEOUT)
    assert caught.value.message == f"there is no config file at {missing}"
    from mcpctl.paths import Paths

    usual = Paths.from_env().config
    assert not usual.exists()
    with pytest.raises(ServerNotFoundError) as found:
        diagnose_server("x", timeout=TIMEOUT)
    assert found.value.message == f"no server 'x' in {usual}"


def test_only_an_approved_server_is_diagnosed(
    config_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpctl.config.loader import read_config
    from mcpctl.config.trust import TrustStore
    from mcpctl.errors import UntrustedConfigError

    monkeypatch.delenv("MCPCTL_TRUST", raising=False)
    monkeypatch.delenv("CI", raising=False)  # a pipeline trusts the checked-out file
    write_config(config_path, {"ok": {"command": GONE}, "new": {"command": GONE, "args": ["x"]}})
    with pytest.raises(UntrustedConfigError):
        diagnose_server("ok", timeout=TIMEOUT)
    entries = read_config(config_path).config.entries
    TrustStore.from_paths().trust(config_path, {"ok": entries["ok"]})
    d = diagnose_server("ok", timeout=TIMEOUT)  # the other one waits; this one is approved
    assert_stopped_at(d, "command", "spawn")
    with pytest.raises(UntrustedConfigError):
        diagnose_server("new", timeout=TIMEOUT)


def test_a_step_failing_without_a_fix_says_none(config_path: Path) -> None:
    # A server that answers every request with a plain JSON-RPC error, and writes nothing
    # to stderr (no variable to suggest): nothing to advise.
    code = (
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if 'id' in m:\n"
        "        error = {'code': -32603, 'message': 'no session for you'}\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': error}), flush=True)\n"
    )
    entry = {"command": PY, "args": ["-c", code], "protocol": "legacy"}
    d = diagnose("refuses", {"refuses": entry}, config_path, timeout=10.0)
    step = d.step("protocol")
    assert step is not None and step.status == "failed", d.to_dict()
    assert step.detail == "mcp_error: no session for you"
    assert step.fix is None
