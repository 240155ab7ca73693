"""mcpctl's main job on the bundled example, with no network: validate, list, health, tools.

    python examples/demo.py [--port PORT] [--serve]

It starts the example server (examples/servers/notes.py) over streamable HTTP on 127.0.0.1
(a free port unless --port), then runs from the repository root, on examples/demo.json:

    mcpctl --config examples/demo.json validate
    mcpctl --config examples/demo.json list
    mcpctl --config examples/demo.json trust --yes
    mcpctl --config examples/demo.json health
    mcpctl --config examples/demo.json tools --prefix underscore
    mcpctl --config examples/demo.json call remote add_note --arg text=...
    mcpctl --config examples/demo.json call remote list_notes

The config's stdio entry is run by mcpctl itself; the HTTP one is the server started here.
The config is not in mcpctl's config dir: like any project's file, its servers run once
approved (``trust --yes`` shows them and records the approval; docs/security.md).
The server is stopped, by its PID, however the demo ends: done, failed, Ctrl-C, SIGTERM or
SIGHUP. With --serve it stays up after the commands until Ctrl-C, to try more of them.
Exit code: 0 when every command succeeded, 1 otherwise, 128+N on signal N.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
CONFIG = "examples/demo.json"  # relative to ROOT, where every command runs
SERVER = ROOT / "examples" / "servers" / "notes.py"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
COMMANDS = (
    ["validate"],
    ["list"],
    ["trust", "--yes"],  # a project's file: what it runs is shown, then approved
    ["health"],
    ["tools", "--prefix", "underscore"],  # prefixed: the two entries serve the same tools
    ["call", "remote", "add_note", "--arg", "text=mcpctl works offline"],
    ["call", "remote", "list_notes"],
)


class Stopped(Exception):
    """A stop signal arrived."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def on_signal(signum: int, frame: FrameType | None) -> None:
    """Turn a stop signal into an exception, once: the clean-up itself is not interrupted."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signum)


def say(text: str) -> None:
    print(text, flush=True)


def free_port() -> int:
    """A port nothing listens on now (the server may still lose it to a race: retried)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def stop(proc: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """Stop a process by its PID: SIGTERM, then SIGKILL after ``grace`` seconds; reap it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def http_server(port: int | None, log: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """The example server over HTTP on 127.0.0.1, ready; stopped on the way out."""
    proc: subprocess.Popen[bytes] | None = None
    try:
        for _ in range(1 if port else 3):
            chosen = port or free_port()
            with log.open("wb") as out:
                # Its own session: a Ctrl-C at the terminal reaches the demo, which stops it.
                proc = subprocess.Popen(
                    [sys.executable, str(SERVER), "streamable-http", str(chosen)],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip
            deadline = time.monotonic() + 30
            while proc.poll() is None and not accepts(chosen) and time.monotonic() < deadline:
                time.sleep(0.05)
            if proc.poll() is None and accepts(chosen):
                yield proc, chosen
                return
            stop(proc)
        tail = log.read_text(errors="replace").strip().splitlines()[-5:]
        raise RuntimeError("the example server did not start:\n  " + "\n  ".join(tail))
    finally:
        if proc is not None:
            stop(proc)


def mcpctl_program() -> list[str]:
    """How to run the mcpctl installed beside this Python (the venv's), as the user would."""
    script = Path(sys.executable).parent / "mcpctl"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "mcpctl"]


def run(args: list[str], env: dict[str, str]) -> int:
    """One mcpctl command, shown, then run from the repository root; its exit code."""
    say(f"\n$ mcpctl --config {CONFIG} {shlex.join(args)}")
    proc = subprocess.Popen([*mcpctl_program(), "--config", CONFIG, *args], cwd=ROOT, env=env)
    try:
        return proc.wait()
    except Stopped:  # mcpctl stops the servers it started when it gets SIGTERM
        stop(proc, grace=10.0)
        raise


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--port", type=int, help="the example server's port (default: free)")
    parser.add_argument("--serve", action="store_true",
                        help="keep the example server running after the commands")  # fmt: skip
    opts = parser.parse_args()
    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)
    failed: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="mcpctl-demo-") as tmp, \
                http_server(opts.port, Path(tmp) / "server.log") as (server, port):  # fmt: skip
            say(f"example server: http://127.0.0.1:{port}/mcp (pid {server.pid})")
            # The config's placeholders: this Python (it has the SDK) and the port.
            env = {**os.environ, "PYTHON": sys.executable, "NOTES_PORT": str(port)}
            failed += [shlex.join(args) for args in COMMANDS if run(args, env) != 0]
            if failed:
                say(f"\nfailed: {', '.join(failed)}")
            if opts.serve:
                program = shlex.join(mcpctl_program())
                say(f"\nThe example server stays up until Ctrl-C. From {ROOT}, try:\n"
                    f"  PYTHON={shlex.quote(sys.executable)} NOTES_PORT={port} {program} "
                    f"--config {CONFIG} call remote now --arg timezone=Europe/Paris")  # fmt: skip
                server.wait()
                say("the example server ended by itself")
                return 1
    except Stopped as exc:
        say(f"\nstopped ({exc}); the example server is stopped too")
        return 128 + exc.signum
    except RuntimeError as exc:
        say(f"error: {exc}")
        return 1
    say("\nthe example server is stopped" + ("" if failed else "; all done"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
