"""MCP servers that go wrong in the ways real ones do, for the fault tests.

python misbehave.py exit        # error on stderr, exits 3 at once
python misbehave.py hang        # reads stdin, never answers
python misbehave.py garbage     # prints non-JSON on stdout, never answers
python misbehave.py flood       # floods stderr (~20 MB) while serving correctly
python misbehave.py spawn FILE  # starts a child (its pid -> FILE), then serves correctly
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time


def serve() -> None:
    from tests_servers_basic import server

    server.run("stdio")


def main() -> None:
    mode = sys.argv[1]
    if mode == "exit":
        print("fatal: configuration file not found: /etc/example.toml", file=sys.stderr)
        print("hint: set EXAMPLE_CONFIG", file=sys.stderr)
        sys.exit(3)
    if mode == "hang":
        for _ in sys.stdin:
            pass
        time.sleep(3600)
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
    if mode == "spawn":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        with open(sys.argv[2], "w") as f:
            f.write(str(child.pid))
        serve()


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import importlib

    sys.modules["tests_servers_basic"] = importlib.import_module("basic")
    main()
