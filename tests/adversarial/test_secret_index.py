"""The keyring's index of secret names under concurrent writers.

Keyrings cannot list their items, so ``SecretStore`` keeps the names in an ``index`` item it
reads, changes and writes back: twenty ``mcpctl secret set`` processes at once must each land
their name, not overwrite each other's index, and ``secret rm`` processes running beside
``secret set`` ones must neither drop a new name nor leave a deleted one. The processes are
released together: each waits on its stdin (``secret set`` for its value, ``secret rm`` for a
word to start), which is given to all once every one of them is asleep there, and the test
keyring answers reads a little late, as a Secret Service does over D-Bus.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpctl import procs
from tests.auth.filekeyring import BACKEND, DELAY_VAR, FILE_VAR, read_items
from tests.conftest import MCPCTL

ROOT = Path(__file__).resolve().parents[2]
COUNT = 20


def _all_waiting(pids: list[int], *, settle: float = 1.0, timeout: float = 180.0) -> None:
    """Return once every one of ``pids`` has slept (blocked on its stdin) for ``settle`` s:
    they are all past their imports, at the read that precedes the keyring.

    Linux tells a sleeping process; macOS says "running" of nearly every one, so there a
    process sleeps when its CPU time has not grown since the last look."""
    deadline = time.monotonic() + timeout
    since: float | None = None
    used: dict[int, float] = {}

    def sleeping(pid: int) -> bool:
        stat = procs.read_stat(pid)
        if stat is None:
            return False
        before, used[pid] = used.get(pid), stat.cpu
        if sys.platform.startswith("linux"):
            return stat.state == "sleeping"
        return not stat.dead and before == stat.cpu

    while time.monotonic() < deadline:
        waiting = [sleeping(pid) for pid in pids]  # each one looked at, every time
        if all(waiting):
            since = since or time.monotonic()
            if time.monotonic() - since >= settle:
                return
        else:
            since = None
        time.sleep(0.05)


def _env(tmp_path: Path, keyring_file: Path) -> dict[str, str]:
    return {
        **os.environ,
        "MCPCTL_HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(ROOT),
        "PYTHON_KEYRING_BACKEND": BACKEND,
        FILE_VAR: str(keyring_file),
        DELAY_VAR: "0.1",
    }


# ``mcpctl ARGS``, started only once a line arrives on stdin (past its imports by then).
GATED = """
import sys
import mcpctl.cli.app
from mcpctl.__main__ import run
sys.stdin.readline()
sys.argv[1:] = sys.argv[2:]
run()
"""


@pytest.mark.slow
def test_concurrent_secret_sets_keep_every_name(tmp_path: Path) -> None:
    keyring_file = tmp_path / "keyring.json"
    env = _env(tmp_path, keyring_file)
    names = [f"TOKEN_{i:02d}" for i in range(COUNT)]
    errs = [(tmp_path / f"{name}.err").open("wb") for name in names]
    procs = [
        subprocess.Popen(
            [*MCPCTL, "secret", "set", name],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        for name, err in zip(names, errs, strict=True)
    ]
    for err in errs:
        err.close()  # the children have their own
    try:
        _all_waiting([proc.pid for proc in procs])
        for i, proc in enumerate(procs):  # all at once: write and close each stdin
            assert proc.stdin is not None
            proc.stdin.write(f"value-{i:02d}-of-a-secret".encode())
            proc.stdin.close()
        for name, proc in zip(names, procs, strict=True):
            assert proc.wait(timeout=240) == 0, (tmp_path / f"{name}.err").read_text()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    listed = subprocess.run(
        [*MCPCTL, "secret", "list", "--json"],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr.decode()
    shown = json.loads(listed.stdout)["data"]
    shown_names = sorted(item["name"] for item in shown["secrets"])
    assert shown_names == names
    # Every value landed too, and the index names them all.
    items = read_items(keyring_file)
    assert all(items[f"mcpctl\x00secret:{n}"] == f"value-{i:02d}-of-a-secret"
               for i, n in enumerate(names))  # fmt: skip
    assert json.loads(items["mcpctl\x00index"])["secrets"] == names


@pytest.mark.slow
def test_secret_rm_beside_secret_set_keeps_the_index_exact(tmp_path: Path) -> None:
    keyring_file = tmp_path / "keyring.json"
    env = _env(tmp_path, keyring_file)
    pairs = COUNT // 2
    old = [f"OLD_{i:02d}" for i in range(pairs)]
    new = [f"NEW_{i:02d}" for i in range(pairs)]
    # The keyring as `secret set` left it for the old names.
    items = {f"mcpctl\x00secret:{n}": f"old-value-{n}" for n in old}
    items["mcpctl\x00index"] = json.dumps({"secrets": old}, separators=(",", ":"))
    keyring_file.write_text(json.dumps(items))
    runs = [("set", n) for n in new] + [("rm", n) for n in old]
    errs = [(tmp_path / f"{what}-{name}.err").open("wb") for what, name in runs]
    argv = {"set": [*MCPCTL, "secret", "set"], "rm": [sys.executable, "-c", GATED, "mcpctl",
                                                     "secret", "rm"]}  # fmt: skip
    started = [
        subprocess.Popen(
            [*argv[what], name],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        for (what, name), err in zip(runs, errs, strict=True)
    ]
    for err in errs:
        err.close()
    try:
        _all_waiting([proc.pid for proc in started])
        for (what, name), proc in zip(runs, started, strict=True):  # all at once
            assert proc.stdin is not None
            proc.stdin.write(f"value-of-{name}".encode() if what == "set" else b"go\n")
            proc.stdin.close()
        for (what, name), proc in zip(runs, started, strict=True):
            assert proc.wait(timeout=240) == 0, (tmp_path / f"{what}-{name}.err").read_text()
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    left = read_items(keyring_file)
    assert json.loads(left["mcpctl\x00index"])["secrets"] == new
    assert {k for k in left if k.startswith("mcpctl\x00secret:")} == {
        f"mcpctl\x00secret:{n}" for n in new
    }
    listed = subprocess.run([*MCPCTL, "secret", "list", "--json"], env=env,
                            capture_output=True, timeout=120, check=False)  # fmt: skip
    assert listed.returncode == 0, listed.stderr.decode()
    assert [item["name"] for item in json.loads(listed.stdout)["data"]["secrets"]] == new
