"""Shared fixtures: an isolated mcpctl home per test, and a CLI runner at a fixed width."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from keyring.backend import KeyringBackend
from typer.testing import CliRunner

from mcpctl.cli.app import main

WIDTH = "100"
# The loggers a run of mcpctl configures (the root, and the libraries' own with -v).
LOGGERS = ("", "mcp", "client", "httpx2", "httpcore2")
REQUIRE_INTEGRATION = os.environ.get("MCPCTL_REQUIRE_INTEGRATION") == "1"


def need_program(program: str, why: str) -> str:
    """The path of an outside program, or skip (fail under MCPCTL_REQUIRE_INTEGRATION=1)."""
    found = shutil.which(program)
    if found is None:
        message = f"{program} is not installed ({why})"
        if REQUIRE_INTEGRATION:
            pytest.fail(message + "; MCPCTL_REQUIRE_INTEGRATION=1 forbids skipping")
        pytest.skip(message)
    return found


def pytest_configure(config: pytest.Config) -> None:
    """Tests stop the processes they start with Ctrl-C's SIGINT. A suite started in the
    background by a script inherits SIGINT ignored, and so would every process it starts
    (mcpctl rightly keeps an ignored signal ignored): a handler of our own makes them start
    with the default again."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Under MCPCTL_REQUIRE_INTEGRATION=1 (CI) no test may skip, whatever the reason."""
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_INTEGRATION and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped, which MCPCTL_REQUIRE_INTEGRATION=1 forbids: {reason}"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own MCPCTL_HOME and working directory; no user file is touched.

    MCPCTL_TRUST=1: the tests' config files (in the working directory) are trusted, as the
    user's own; tests of trust itself (tests/config/test_trust*.py, tests/cli/test_trust.py,
    tests/adversarial/test_untrusted_repo.py) remove it, and CI, themselves.
    """
    home = tmp_path / "mcpctl-home"
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("MCPCTL_HOME", str(home))
    monkeypatch.setenv("MCPCTL_TRUST", "1")
    monkeypatch.delenv("MCPCTL_CONFIG", raising=False)
    monkeypatch.delenv("MCPCTL_SNAPSHOT", raising=False)
    monkeypatch.delenv("MCPCTL_DEBUG", raising=False)
    monkeypatch.setenv("COLUMNS", WIDTH)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(work)
    return work


@pytest.fixture
def config_path(isolated: Path) -> Path:
    """The config file the CLI uses by default in a test (in the working directory)."""
    return isolated / "external-mcps.json"


@dataclass
class Run:
    """The outcome of one CLI invocation."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


class Cli:
    """Runs mcpctl in-process, the way typer's CliRunner runs a Typer app.

    What a run does to the logging setup (``-v`` puts a handler on its stderr, a stream that
    closes with the run) is undone after it, as the end of a process would."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(
        self, *args: str, input: str | None = None, env: dict[str, str] | None = None
    ) -> Run:
        saved = [(lg, list(lg.handlers), lg.level, lg.propagate)
                 for lg in map(logging.getLogger, LOGGERS)]  # fmt: skip
        try:
            with self.runner.isolation(input=input, env=env) as (out, err, _):
                code = main(list(args))
                sys.stdout.flush()
                sys.stderr.flush()
                stdout = out.getvalue().decode()
                stderr = err.getvalue().decode()
        finally:
            for lg, handlers, level, propagate in saved:
                lg.handlers, lg.level, lg.propagate = handlers, level, propagate
        return Run(code, stdout, stderr)


@pytest.fixture
def cli() -> Iterator[Cli]:
    yield Cli()


def write_config(path: Path, data: dict[str, Any] | str) -> Path:
    text = data if isinstance(data, str) else json.dumps(data, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


MCPCTL = [sys.executable, "-m", "mcpctl"]


# --- real servers --------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "servers"
CACHE = ROOT / ".cache"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def reserved_port() -> Iterator[int]:
    """A loopback port that no other socket on the machine gets while the block runs.

    :func:`free_port` hands its port back at once: until the server a test starts binds it,
    any process may take it (every outgoing connection picks an ephemeral port). Here a
    socket stays bound to it (not listening) with ``SO_REUSEADDR``: the kernel then gives it
    to no ``bind(0)`` and no outgoing connection, while a server that sets ``SO_REUSEADDR``
    too (anyio's listeners, uvicorn) binds and listens on it.
    """
    import socket

    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


def wait_for_port(port: int, proc: Any, timeout: float = 30.0) -> None:
    import socket
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: it exists and has not exited (a zombie waits to be reaped)."""
    from mcpctl import procs

    stat = procs.read_stat(pid)
    return stat is not None and not stat.dead


def stop_process(proc: Any) -> None:
    """Stop a process we started, by its PID (never by name)."""
    import subprocess

    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.fixture
def http_server() -> Iterator[Any]:
    """Start tests/servers/basic.py over 'sse' or 'streamable-http'; returns its base URL."""
    import subprocess

    procs: list[Any] = []

    def start(transport: str) -> str:
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, str(SERVERS / "basic.py"), transport, str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        procs.append(proc)
        wait_for_port(port, proc)
        return f"http://127.0.0.1:{port}"

    yield start
    for proc in procs:
        stop_process(proc)


def published_time_server() -> str:
    """mcp-server-time from PyPI, in its own virtual environment (installed by .ci/run)."""
    path = os.environ.get("MCPCTL_TEST_TIME_SERVER") or str(
        CACHE / "servers" / "time" / "bin" / "mcp-server-time"
    )
    if not Path(path).exists():
        message = f"mcp-server-time is not installed at {path} (run .ci/run, or set MCPCTL_TEST_TIME_SERVER)"
        if REQUIRE_INTEGRATION:
            pytest.fail(message)
        pytest.skip(message)
    return path


def claude_code() -> str:
    """Claude Code's CLI from npm (installed by .ci/run into .cache/claude)."""
    path = os.environ.get("MCPCTL_TEST_CLAUDE") or str(
        CACHE / "claude" / "node_modules" / ".bin" / "claude"
    )
    if not Path(path).exists():
        message = f"Claude Code is not installed at {path} (run .ci/run, or set MCPCTL_TEST_CLAUDE)"
        if REQUIRE_INTEGRATION:
            pytest.fail(message)
        pytest.skip(message)
    return path


def published_npm_server(package: str) -> list[str]:
    """An npm server installed by .ci/run into .cache/npm, run with node (no npx download)."""
    node = need_program("node", "the npm reference servers run on Node.js")
    entry = CACHE / "npm" / "node_modules" / "@modelcontextprotocol" / package / "dist" / "index.js"
    if not entry.exists():
        message = f"@modelcontextprotocol/{package} is not installed at {entry} (run .ci/run)"
        if REQUIRE_INTEGRATION:
            pytest.fail(message)
        pytest.skip(message)
    return [node, str(entry)]


# --- keyrings --------------------------------------------------------------------------


class MemoryKeyring(KeyringBackend):
    """An in-memory ``keyring`` backend for unit tests (never the product's fallback)."""

    priority = 1  # type: ignore[assignment]
    name = "memory (tests)"  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        from keyring.errors import PasswordDeleteError

        if self.items.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """``keyring`` uses a fresh in-memory backend for the test (in this process)."""
    import keyring

    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture(scope="module")
def secret_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A real Secret Service (gnome-keyring on a private D-Bus session), unlocked, with a
    throwaway HOME: the environment for subprocesses that use it."""
    import subprocess
    import time

    dbus = need_program("dbus-daemon", "the Secret Service runs on a D-Bus session bus")
    gnome = need_program("gnome-keyring-daemon", "it is the Secret Service the tests use")
    home = tmp_path_factory.mktemp("keyring-home")
    (home / "run").mkdir(mode=0o700)
    env = {**os.environ, "HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run"),
           "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
           "XDG_CONFIG_HOME": str(home / "config"), "MCPCTL_TRUST": "1"}  # fmt: skip
    bus = subprocess.Popen(
        [dbus, "--session", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    daemon = None
    try:
        assert bus.stdout is not None
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().decode().strip()
        daemon = subprocess.Popen(
            [gnome, "--foreground", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        assert daemon.stdin is not None
        daemon.stdin.write(b"throwaway-test-password")
        daemon.stdin.close()
        env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.SecretService.Keyring"
        probe = "import keyring; keyring.get_password('mcpctl-tests', 'ready')"
        deadline = time.monotonic() + 20
        while True:
            ready = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                                   timeout=20)  # fmt: skip
            if ready.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Secret Service did not come up: {ready.stderr[-500:]!r}")
            time.sleep(0.2)
        yield env
    finally:
        for proc in (daemon, bus):
            if proc is not None:
                stop_process(proc)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """No usable keyring backend, as on a headless machine without a Secret Service."""
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)
