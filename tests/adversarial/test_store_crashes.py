"""The config file under concurrent writers and writers killed mid-write.

Fifty ``mcpctl add`` processes at once all land in one valid file; a writer SIGKILLed at
random moments (many of them mid-write) leaves only the old or the new content, never a
torn file; a writer killed between its backup and its rename leaves no undo step for a
change that never landed, and the next writer cleans its temporary file.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpctl import ConfigStore, ServerEntry
from mcpctl.config.jsontext import dump_config
from tests.conftest import MCPCTL


@pytest.mark.slow
def test_fifty_concurrent_adds_all_land(tmp_path: Path) -> None:
    path = tmp_path / "external-mcps.json"
    path.write_text("{}\n")
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home"), "MCPCTL_LOCK_TIMEOUT": "120"}
    procs = [
        subprocess.Popen(
            [*MCPCTL, "--config", str(path), "add", f"s{i}", "--", "echo", str(i)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(50)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err.decode()
    data = json.loads(path.read_text())
    assert sorted(data) == sorted(f"s{i}" for i in range(50))
    assert all(data[f"s{i}"] == {"command": "echo", "args": [str(i)]} for i in range(50))
    # They took turns on one lock, in the state dir: nothing is left beside the file. (The
    # other lock is the trust record's: each server added is approved.)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert len(list((tmp_path / "home" / "state" / "locks").iterdir())) == 2
    record = json.loads((tmp_path / "home" / "state" / "trust.json").read_text())
    assert sorted(record["files"][str(path.resolve())]["servers"]) == sorted(data)


def _writer(path: str, ready: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    # Widen the moment the temp file exists (before its fsync), so random kills
    # land mid-write however fast this machine validates and serialises.
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        time.sleep(0.01)
        real_fsync(fd)

    os.fsync = slow_fsync  # this is a forked child: the patch dies with it
    store = ConfigStore(path, backups=Path(path).parent / "backups")
    store.config_dir = Path(path).parent  # the user's own file: only its write is timed
    big = {f"s{i}": {"command": "echo", "args": ["x" * 200] * 20} for i in range(150)}
    ready.set()
    flip = 0
    while True:
        flip ^= 1
        content = big if flip else {"small": {"command": "x"}}
        store.update(lambda doc, c=content: (doc.clear(), doc.update(c)), action="flip")


@pytest.mark.slow
def test_sigkill_during_writes_never_corrupts(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    big = {f"s{i}": {"command": "echo", "args": ["x" * 200] * 20} for i in range(150)}
    allowed = {dump_config({}), dump_config(big), dump_config({"small": {"command": "x"}})}
    path.write_bytes(dump_config({}))
    ctx = multiprocessing.get_context("fork")
    rng = random.Random(1234)
    mid_write = 0
    for attempt in range(400):
        if attempt >= 100 and mid_write >= 3:
            break  # enough kills landed mid-write to prove something
        ready = ctx.Event()
        proc = ctx.Process(target=_writer, args=(str(path), ready), daemon=True)
        proc.start()
        try:
            assert ready.wait(10)
            time.sleep(rng.uniform(0, 0.05))
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.join(10)
        mid_write += any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
        content = path.read_bytes()
        assert content in allowed
        json.loads(content)
    assert mid_write > 0, "no kill landed during a write: the test proves nothing"
    # The next writer cleans the leftovers of killed ones, and the lock is free.
    ConfigStore(path).add("after", ServerEntry(command="x"), force=True)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


KILLED_BETWEEN_BACKUP_AND_RENAME = """
import os, signal, sys
from pathlib import Path
import mcpctl.config.store as store
from mcpctl.config.model import ServerEntry

real = store.atomic_write

def dying(path, content, **kw):
    if Path(path).name == "c.json":  # the backup is taken; the rename never happens
        (Path(path).parent / ".c.json.5a5a5a5a.tmp").write_bytes(content[:10])
        os.kill(os.getpid(), signal.SIGKILL)
    real(path, content, **kw)

store.atomic_write = dying
store.ConfigStore(sys.argv[1], backups=Path(sys.argv[2])).add("second", ServerEntry(command="y"))
"""


def test_a_writer_killed_before_the_rename_leaves_no_undo_step(tmp_path: Path) -> None:
    path, backups = tmp_path / "c.json", tmp_path / "backups"
    store = ConfigStore(path, backups=backups)
    store.add("first", ServerEntry(command="x"))
    before = path.read_bytes()
    r = subprocess.run([sys.executable, "-c", KILLED_BETWEEN_BACKUP_AND_RENAME, str(path),
                        str(backups)], capture_output=True, timeout=60)  # fmt: skip
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert path.read_bytes() == before
    assert (tmp_path / ".c.json.5a5a5a5a.tmp").exists()
    # The change never landed, so it is not in the history: undo takes back "add first"
    # (without --force) and clears the dead writer's temporary file.
    assert [b.action for b in store.history()] == ["add first"]
    outcome = store.undo()
    assert outcome.action == "add first" and outcome.removed_file and not path.exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    # The next change reuses the version number the dead writer took.
    store.add("third", ServerEntry(command="z"))
    assert [b.action for b in store.history()] == ["add third"]
