"""Sign-in tests: the OAuth test server as a subprocess, mcpctl as a subprocess over a
file-backed test keyring, and a stand-in for the person at the browser."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.auth.filekeyring import BACKEND, FILE_VAR, oauth_record
from tests.conftest import MCPCTL, ROOT, SERVERS, reserved_port, stop_process, wait_for_port

TOKEN_PREFIX = "mcpctltest"  # every token the test server issues starts with it
RUN_TIMEOUT = 60
#: How long the test server's access tokens live: longer than any test, however slow the
#: machine. A test that needs a token expired says so (:meth:`Mcpctl.expire`); none waits.
TTL = 3600.0


@dataclass
class OAuthServer:
    """A running tests/servers/oauth_server.py."""

    proc: subprocess.Popen[bytes]
    port: int
    as_port: int | None
    path: str = "/mcp"
    next_as_port: int | None = None  # the authorization server it can move to

    @property
    def next_as_origin(self) -> str:
        """The origin of the authorization server it can move to."""
        assert self.next_as_port is not None
        return f"http://127.0.0.1:{self.next_as_port}"

    @property
    def url(self) -> str:
        """The MCP endpoint."""
        return f"http://127.0.0.1:{self.port}{self.path}"

    @property
    def as_origin(self) -> str:
        """The authorization server's origin."""
        return f"http://127.0.0.1:{self.as_port or self.port}"

    def control(self, which: str, /, **params: str) -> Any:
        return httpx2.post(f"{self.as_origin}/_test/{which}", params=params, timeout=10).json()

    def control_json(self, which: str, body: Any, /, **params: str) -> Any:
        """A test control with a JSON body (non-finite numbers written as ``Infinity``)."""
        url = f"{self.as_origin}/_test/{which}"
        content = json.dumps(body).encode()
        return httpx2.post(url, params=params, content=content, timeout=10).json()

    def report(self, origin: str | None = None) -> dict[str, Any]:
        """What an authorization server saw (default: the first one)."""
        url = f"{origin or self.as_origin}/_test/stats"
        data: dict[str, Any] = httpx2.get(url, timeout=10).json()
        return data

    def stats(self, origin: str | None = None) -> dict[str, int]:
        return dict(self.report(origin)["stats"])


def oauth_entry(server: OAuthServer, **auth: Any) -> dict[str, Any]:
    """A config entry for ``server`` with ``"auth": {"type": "oauth", **auth}``."""
    return {"url": server.url, "auth": {"type": "oauth", **auth}}


@pytest.fixture
def oauth_server() -> Iterator[Any]:
    """Start OAuth test servers: ``start(access_ttl=TTL, own_origin=False, client=None, *args,
    moving=False)``; ``moving``: with a second authorization server to move to (on its own
    origin, as the first then is). Their ports stay reserved for the test (no other process
    can take one before the server binds it)."""
    procs: list[subprocess.Popen[bytes]] = []
    ports = ExitStack()

    def reserve() -> int:
        return ports.enter_context(reserved_port())

    def start(access_ttl: float = TTL, own_origin: bool = False, client: str | None = None,
              *extra: str, moving: bool = False) -> OAuthServer:  # fmt: skip
        port = reserve()
        as_port = reserve() if own_origin or moving else None
        next_as_port = reserve() if moving else None
        args = [
            sys.executable,
            str(SERVERS / "oauth_server.py"),
            str(port),
            "--access-ttl",
            str(access_ttl),
        ]
        if as_port:
            args += ["--as-port", str(as_port)]
        if next_as_port:
            args += ["--next-as-port", str(next_as_port)]
        if client:
            args += ["--client", client]
        args += extra
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        for each in (port, as_port, next_as_port):
            if each:
                wait_for_port(each, proc)
        path = "/sse" if "--sse" in extra else "/mcp"
        return OAuthServer(proc, port, as_port, path, next_as_port)

    with ports:
        yield start
        for proc in procs:
            stop_process(proc)


@pytest.fixture
def callback_port() -> Iterator[int]:
    """A port for the loopback redirect URI of a sign-in, reserved for the whole test: mcpctl
    listens on it, but no other process can take it in the seconds before."""
    with reserved_port() as port:
        yield port


@dataclass
class Outcome:
    """One mcpctl run."""

    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


EXPIRE = """
import sys, time
from mcpctl.auth.records import load_record, save_record
record = load_record(sys.argv[1])
assert record is not None and record.expires_at is not None, "no sign-in with an expiry"
record.expires_at = time.time() - 60
save_record(sys.argv[1], record)
"""


@dataclass
class Mcpctl:
    """Runs mcpctl as a subprocess over the file-backed test keyring; keeps every output to
    prove no token ever reaches one."""

    workdir: Path
    keyring: Path
    env: dict[str, str]
    outcomes: list[Outcome] = field(default_factory=list)

    def __call__(
        self, *args: str, input: str | None = None, timeout: float = RUN_TIMEOUT
    ) -> Outcome:
        r = subprocess.run([*MCPCTL, *args], input=input, capture_output=True, text=True,
                           env=self.env, cwd=self.workdir, timeout=timeout)  # fmt: skip
        return self.keep(Outcome(args, r.returncode, r.stdout, r.stderr))

    def keep(self, outcome: Outcome) -> Outcome:
        self.outcomes.append(outcome)
        return outcome

    def start(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([*MCPCTL, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=self.env, cwd=self.workdir)  # fmt: skip

    def config(self, servers: dict[str, Any]) -> None:
        (self.workdir / "external-mcps.json").write_text(json.dumps(servers, indent=2))

    def record(self, server: str) -> dict[str, Any] | None:
        return oauth_record(self.keyring, server)

    def expire(self, name: str, server: OAuthServer) -> None:
        """What the end of the access token's life does, without waiting for the clock: the
        server refuses every access token it issued, and the stored sign-in of ``name`` says
        its access token expired a minute ago (written through mcpctl's own record API, in
        mcpctl's environment: the keyring it uses, whichever that is)."""
        server.control("expire-access")
        done = subprocess.run([sys.executable, "-c", EXPIRE, name], capture_output=True,
                              text=True, env=self.env, cwd=self.workdir, timeout=RUN_TIMEOUT)  # fmt: skip
        assert done.returncode == 0, done.stderr

    def assert_no_token_leaked(self, *servers: OAuthServer) -> None:
        issued = [t for s in servers for t in s.report()["issued"]]
        assert issued, "the test server issued no token: the test proves nothing"
        for o in self.outcomes:
            for text in (o.stdout, o.stderr):
                assert TOKEN_PREFIX not in text, (o.args, text)
                for token in issued:
                    assert token not in text, (o.args, text)


@pytest.fixture
def mcpctl(isolated: Path, tmp_path: Path) -> Mcpctl:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    keyring = tmp_path / "keyring.json"
    env.update({
        "PYTHONPATH": str(ROOT), "PYTHON_KEYRING_BACKEND": BACKEND, FILE_VAR: str(keyring),
        "MCPCTL_HOME": os.environ["MCPCTL_HOME"],
    })  # fmt: skip
    env.pop("MCPCTL_AUTH_TIMEOUT", None)
    return Mcpctl(isolated, keyring, env)


@dataclass
class Browser:
    """The person at the browser: reads the address from ``mcpctl auth``'s stderr, opens it
    (without following redirects: the authorization server answers with one), then delivers
    the answer -- to the loopback callback, or pasted on stdin.

    A thread reads the process's stderr, so no read ever blocks past a deadline."""

    address: str | None = None
    answer: str | None = None
    lines: list[str] = field(default_factory=list)
    _queue: queue.Queue[str | None] = field(default_factory=queue.Queue)
    _reader: threading.Thread | None = None

    def watch(self, proc: subprocess.Popen[str]) -> None:
        stream = proc.stderr
        assert stream is not None

        def pump() -> None:
            for line in stream:
                self._queue.put(line)
            self._queue.put(None)

        self._reader = threading.Thread(target=pump, daemon=True)
        self._reader.start()

    def _next(self, timeout: float) -> str | None:
        try:
            line = self._queue.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        if line is not None:
            self.lines.append(line)
        return line

    def read_address(self, proc: subprocess.Popen[str], timeout: float = 30) -> str:
        if self._reader is None:
            self.watch(proc)
        deadline = time.monotonic() + timeout
        while (line := self._next(deadline - time.monotonic())) is not None:
            if line.startswith("http"):
                self.address = line.strip()
                return self.address
        raise AssertionError(f"no address on stderr: {''.join(self.lines)}")

    def rest(self, timeout: float = 10) -> str:
        """What the process wrote on stderr after the address, once it has ended."""
        if self._reader is not None:
            self._reader.join(timeout)
        while self._next(0) is not None:
            pass
        return "".join(self.lines)

    def authorize(self) -> str:
        assert self.address is not None
        r = httpx2.get(self.address, follow_redirects=False, timeout=10)
        assert r.status_code in (302, 303, 307), (r.status_code, r.text)
        self.answer = r.headers["location"]
        return self.answer

    def deliver(self, answer: str | None = None) -> httpx2.Response:
        return httpx2.get(answer or self.answer or "", timeout=10)


def finish(proc: subprocess.Popen[str], timeout: float = RUN_TIMEOUT) -> str:
    """Wait for a process whose stderr a :class:`Browser` reads; its stdout."""
    try:
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            stop_process(proc)
    assert proc.stdout is not None
    return proc.stdout.read()


def sign_in(mcpctl: Mcpctl, name: str, *extra: str, how: str = "callback",
            tamper: Any = None) -> tuple[Outcome, Browser]:  # fmt: skip
    """``mcpctl auth NAME --no-browser``, answered by a :class:`Browser` through the callback
    (``how="callback"``), pasted on stdin (``"paste"``), or not at all (``"none"``).
    ``tamper`` may change the answer before it is delivered."""
    browser = Browser()
    proc = mcpctl.start("auth", name, "--no-browser", *extra)
    try:
        browser.read_address(proc)
        if how != "none":
            answer = browser.authorize()
            if tamper is not None:
                answer = tamper(answer)
            if how == "paste":
                assert proc.stdin is not None
                proc.stdin.write(answer + "\n")
                proc.stdin.flush()
            else:
                browser.deliver(answer)
    except BaseException:
        stop_process(proc)  # the test failed: no waiting for mcpctl's own timeout
        raise
    finally:
        out = finish(proc)
    outcome = mcpctl.keep(Outcome(("auth", name, *extra), proc.returncode, out, browser.rest()))
    return outcome, browser
