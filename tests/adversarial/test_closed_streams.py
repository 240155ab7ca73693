"""mcpctl started with a standard descriptor closed (``mcpctl list >&-``, ``mcpctl run NAME
2>&-``, ``mcpctl health 1>&- 2>&-``), as real processes: the shell closes them, as a client
or a script may.

A closed stdout is output that cannot be written: exit 120, told on stderr when stderr is
open, never a traceback. A closed stderr or stdin changes nothing else. ``mcpctl run`` still
starts the server, which gets ``/dev/null`` where the client gave it nothing, so that the
first file it opens does not become its stderr.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import MCPCTL, SERVERS, write_config

REDIRECTS = {"0": "<&-", "1": ">&-", "2": "2>&-"}
DEADLINE = 60.0

# A server stand-in: opens its data file, then writes on stderr and stdout (by descriptor, as
# any runtime does), and records what each standard descriptor was.
REPORTER = """
import json, os, sys
data = os.open(sys.argv[1] + ".data", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
for fd in (1, 2):
    try:
        os.write(fd, b"noise from the server\\n")
    except OSError:
        pass
seen = {}
for fd in (0, 1, 2):
    try:
        seen[fd] = os.readlink(f"/proc/self/fd/{fd}") if fd != data else "data file"
    except OSError:
        seen[fd] = "closed"
os.write(data, b"data\\n")
with open(sys.argv[1], "w") as out:
    json.dump({"fds": seen, "data_fd": data}, out)
"""


def run_closed(closed: str, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """``mcpctl ARGS`` with the descriptors in ``closed`` closed by the shell; the outcome
    (what reached the pipes of the descriptors left open) and the seconds it took."""
    script = 'exec "$@" ' + " ".join(REDIRECTS[fd] for fd in closed)
    started = time.monotonic()
    done = subprocess.run(
        ["sh", "-c", script, "sh", *MCPCTL, *args],
        capture_output=True, text=True, timeout=DEADLINE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return done, time.monotonic() - started


@pytest.fixture
def servers(config_path: Path) -> Path:
    basic = {"command": sys.executable, "args": [str(SERVERS / "basic.py")]}
    return write_config(config_path, {"basic": basic})


@pytest.mark.parametrize(
    "args",
    [("list",), ("list", "--json"), ("--help",), ("health", "--timeout", "20s"),
     ("health", "--json", "--timeout", "20s"), ("doctor",), ("get", "basic")],
)  # fmt: skip
def test_a_closed_stdout_is_output_that_cannot_be_written(
    args: tuple[str, ...], servers: Path
) -> None:
    done, seconds = run_closed("1", *args)
    assert done.returncode == 120, done.stderr
    assert done.stderr.endswith(
        "error: the output could not be written: standard output is closed\n"
    )
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert seconds < DEADLINE
    assert json.loads(servers.read_text(encoding="utf-8"))  # the config is untouched


@pytest.mark.parametrize("args", [("list",), ("health", "--timeout", "20s"), ("doctor", "basic")])
def test_with_stdout_and_stderr_closed_nothing_is_written(
    args: tuple[str, ...], servers: Path
) -> None:
    before = servers.read_bytes()
    done, _ = run_closed("12", *args)
    assert done.returncode == 120
    assert done.stdout == done.stderr == ""
    assert servers.read_bytes() == before


def test_a_closed_stderr_or_stdin_changes_nothing_else(servers: Path) -> None:
    done, _ = run_closed("2", "list")
    assert done.returncode == 0 and done.stdout.startswith("basic\tstdio")
    done, _ = run_closed("2", "health", "--timeout", "20s", "--json")
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["ok"] is True
    done, _ = run_closed("0", "list", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True
    # An add still lands, and the file is only JSON: nothing was written into it by mistake.
    done, _ = run_closed("2", "add", "other", "--", "true")
    assert done.returncode == 0
    assert set(json.loads(servers.read_text(encoding="utf-8"))) == {"basic", "other"}


@pytest.mark.parametrize("closed", ["0", "1", "2", "12", "012"])
@pytest.mark.parametrize("quick", [True, False], ids=["--config", "found"])
def test_run_starts_the_server_with_dev_null_for_what_the_client_closed(
    closed: str, quick: bool, config_path: Path, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    script = tmp_path / "reporter.py"
    script.write_text(REPORTER, encoding="utf-8")
    write_config(
        config_path, {"s": {"command": sys.executable, "args": [str(script), str(report)]}}
    )
    args = ("run", "s", "--config", str(config_path)) if quick else ("run", "s")
    done, seconds = run_closed(closed, *args)
    assert done.returncode == 0, done.stderr
    assert seconds < DEADLINE
    seen = json.loads(report.read_text(encoding="utf-8"))
    for fd in "012":
        if fd in closed:
            assert seen["fds"][fd] == "/dev/null", seen
        elif fd != "0":  # stdin is /dev/null here anyway
            assert seen["fds"][fd].startswith("pipe:"), seen
    # The server's own file got a descriptor of its own, and only its data.
    assert seen["data_fd"] > 2
    assert Path(f"{report}.data").read_text() == "data\n"
    assert "Traceback" not in done.stderr
