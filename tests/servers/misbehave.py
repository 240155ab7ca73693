"""MCP servers that go wrong in the ways real ones do, for the fault tests.

python misbehave.py exit               # error on stderr, exits 3 at once
python misbehave.py hang [FILE]        # reads stdin, never answers (its pid -> FILE)
python misbehave.py garbage            # prints non-JSON on stdout, never answers
python misbehave.py flood              # floods stderr (~20 MB) while serving correctly
python misbehave.py stdout-flood [FILE] # 100 MB on stdout, one line without an end, then hangs
python misbehave.py stubborn [FILE]    # ignores SIGTERM, SIGINT and SIGHUP, never answers
python misbehave.py crash              # dies of SIGSEGV at once
python misbehave.py environ FILE       # its environment -> FILE (JSON), then serves correctly
python misbehave.py needs NAME [MSG]   # without NAME in its environment: MSG on stderr, exits 2
python misbehave.py proxy-password     # says HTTPS_PROXY's password on stderr, exits 2
python misbehave.py spawn FILE [hang]  # starts a child, then serves correctly (or hangs)
python misbehave.py setsid FILE [hang] # the same, but the child calls os.setsid()
python misbehave.py daemon FILE [hang] # the same, but the child double-forks: the
                                       # grandchild is orphaned in a session of its own

The last three write "SERVER_PID DESCENDANT_PID" to FILE (atomically) once the descendant is
in place, before serving: a test waits for the file, then knows every pid to watch.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time


def serve() -> None:
    # basic.py (and the MCP SDK, a second of CPU) is loaded only by the modes that serve:
    # the others start in milliseconds, like a real server that waits on something.
    import importlib

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    importlib.import_module("basic").server.run("stdio")


SLEEPER = "import time; time.sleep(3600)"
# The child leaves the server's session and group, then says so (its pid) on stdout.
SETSID = "import os, time; os.setsid(); print(os.getpid(), flush=True); time.sleep(3600)"
# The child leaves the session, forks and exits at once: the grandchild is an orphan.
DAEMON = (
    "import os, time\n"
    "os.setsid()\n"
    "if os.fork():\n"
    "    os._exit(0)\n"
    "print(os.getpid(), flush=True)\n"
    "time.sleep(3600)\n"
)


def write_pids(path: str, *pids: int) -> None:
    with open(path + ".tmp", "w") as f:
        f.write(" ".join(str(p) for p in pids))
    os.replace(path + ".tmp", path)


def hang() -> None:
    for _ in sys.stdin:
        pass
    time.sleep(3600)


def with_descendant(kind: str, path: str) -> None:
    if kind == "spawn":
        child = subprocess.Popen([sys.executable, "-c", SLEEPER])
        descendant = child.pid
    else:
        child = subprocess.Popen(
            [sys.executable, "-c", SETSID if kind == "setsid" else DAEMON], stdout=subprocess.PIPE
        )
        assert child.stdout is not None
        descendant = int(child.stdout.readline())
        child.stdout.close()
        if kind == "daemon":
            child.wait()  # the middle process is gone: the grandchild is reparented
    write_pids(path, os.getpid(), descendant)


def main() -> None:
    mode = sys.argv[1]
    if mode in ("spawn", "setsid", "daemon"):
        with_descendant(mode, sys.argv[2])
        if sys.argv[3:] == ["hang"]:
            hang()
        serve()
        return
    if mode == "environ":
        with open(sys.argv[2], "w") as f:
            json.dump(dict(os.environ), f)
        serve()
        return
    if mode == "needs":
        if sys.argv[2] not in os.environ:  # as uvx without the CA bundle a machine trusts
            print(sys.argv[3] if sys.argv[3:] else f"{sys.argv[2]} is not set", file=sys.stderr)
            sys.exit(2)
        serve()
        return
    if mode == "proxy-password":
        from urllib.parse import urlsplit

        print(f"proxy refused {urlsplit(os.environ['HTTPS_PROXY']).password}", file=sys.stderr)
        sys.exit(2)
    if mode == "exit":
        print("fatal: configuration file not found: /etc/example.toml", file=sys.stderr)
        print("hint: set EXAMPLE_CONFIG", file=sys.stderr)
        sys.exit(3)
    if mode == "hang":
        if sys.argv[2:]:
            write_pids(sys.argv[2], os.getpid())
        hang()
    if mode == "stdout-flood":
        if sys.argv[2:]:
            write_pids(sys.argv[2], os.getpid())
        chunk = b"x" * (1 << 20)
        with contextlib.suppress(OSError):  # the reader went away: that is the point
            for _ in range(100):
                sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
        hang()
    if mode == "stubborn":
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        if sys.argv[2:]:
            write_pids(sys.argv[2], os.getpid())
        hang()
    if mode == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "garbage":
        while True:
            print("Welcome to the server! <html>not json</html>", flush=True)
            time.sleep(0.05)
    if mode == "flood":

        def flood() -> None:
            chunk = ("x" * 1023 + "\n") * 1024
            for _ in range(20):
                sys.stderr.write(chunk)
            sys.stderr.flush()

        thread = threading.Thread(target=flood, daemon=True)
        thread.start()
        thread.join()  # the flood happens before and while the client waits
        serve()


if __name__ == "__main__":
    main()
