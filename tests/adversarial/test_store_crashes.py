"""The config file under concurrent writers and writers killed mid-write.

Fifty ``mcpctl add`` processes at once all land in one valid file; a writer SIGKILLed at
random moments, and at each step of a write (stopped there by the test, which it tells),
leaves only the old or the new content, never a torn file; a writer killed between its backup and its rename leaves no undo step for a
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
from typing import Any

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


BIG = {f"s{i}": {"command": "echo", "args": ["x" * 200] * 20} for i in range(150)}
SMALL = {"small": {"command": "x"}}
# Where in a write of the file a writer is stopped to be killed: the temporary file half
# written, written but not synced, synced but not renamed; renamed, the directory not synced.
STAGES = ("partial", "written", "synced", "renamed")


def _writer(path: str, ready: Any, stop: tuple[str, int] | None, marker: Any) -> None:
    """Flip the file between two contents forever (a forked child, killed by the test).

    With ``stop=(stage, n)`` it stops in its ``n``-th write of the file at ``stage``, says so
    on ``marker`` (with the temporary file's path) and waits there for the kill."""
    target = Path(os.path.realpath(path))
    temps: set[int] = set()
    dirs: set[int] = set()
    writes = 0
    real_open, real_write, real_fsync = os.open, os.write, os.fsync
    real_replace = Path.replace
    tmp_path = ""

    def at(stage: str) -> None:
        if stop is not None and stop == (stage, writes):
            marker.send((stage, tmp_path))
            time.sleep(3600)  # the kill lands here

    def opening(file: Any, flags: int, *args: Any, **kw: Any) -> int:
        nonlocal writes, tmp_path
        fd = real_open(file, flags, *args, **kw)
        temps.discard(fd)  # a number closed since is used again
        dirs.discard(fd)
        name = Path(file)
        if flags & (os.O_WRONLY | os.O_RDWR) and (
            name == target  # written in place (a bug), or through a temporary file
            or (name.parent == target.parent and name.name.startswith(f".{target.name}."))
        ):
            writes += 1
            tmp_path = str(name)
            temps.add(fd)
        elif name == target.parent and flags & os.O_DIRECTORY:
            dirs.add(fd)
        return fd

    def writing(fd: int, data: Any) -> int:
        if fd in temps and stop is not None and stop == ("partial", writes):
            done = real_write(fd, bytes(data)[: max(1, len(data) // 2)])
            at("partial")
            return done
        return real_write(fd, data)

    def syncing(fd: int) -> None:
        if fd in temps:
            at("written")
        elif fd in dirs:
            at("renamed")
        real_fsync(fd)

    def replacing(self: Path, other: Any) -> Path:
        if str(self) == tmp_path:
            at("synced")
        return real_replace(self, other)

    # A forked child: the patches die with it.
    os.open, os.write, os.fsync = opening, writing, syncing  # type: ignore[assignment]
    Path.replace = replacing  # type: ignore[method-assign]
    store = ConfigStore(path, backups=Path(path).parent / "backups")
    store.config_dir = Path(path).parent  # the user's own file: only its write is timed
    ready.set()
    flip = 0
    while True:
        flip ^= 1
        content = BIG if flip else SMALL
        store.update(lambda doc, c=content: (doc.clear(), doc.update(c)), action="flip")


@pytest.mark.slow
def test_sigkill_during_writes_never_corrupts(tmp_path: Path) -> None:
    """A writer killed anywhere leaves the old or the new file: killed at random moments, and
    stopped at each step of a write -- told by the writer itself -- then killed there."""
    path = tmp_path / "c.json"
    allowed = {dump_config({}), dump_config(BIG), dump_config(SMALL)}
    path.write_bytes(dump_config({}))
    ctx = multiprocessing.get_context("fork")
    rng = random.Random(1234)
    # Each step of a write, in the 1st, 2nd and 3rd write of a writer (the old content
    # empty, big or small), then random moments: the lock, the backup, the re-read.
    stops: list[tuple[str, int] | None] = [(stage, n) for stage in STAGES for n in (1, 2, 3)]
    stops += [None] * 100
    landed: list[str] = []
    for stop in stops:
        ready = ctx.Event()
        theirs, marker = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_writer, args=(str(path), ready, stop, marker), daemon=True)
        proc.start()
        try:
            assert ready.wait(30)
            if stop is None:
                time.sleep(rng.uniform(0, 0.05))  # a random moment, whatever it is doing
            else:
                assert theirs.poll(60), f"the writer never reached {stop}"
                stage, tmp = theirs.recv()
                landed.append(stage)
                if Path(tmp) != path and stage != "renamed":  # the temporary file, whole or not
                    assert (Path(tmp).read_bytes() in allowed) is (stage != "partial")
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.join(10)
            theirs.close()
            marker.close()
        content = path.read_bytes()
        assert content in allowed, stop
        json.loads(content)
    assert landed == [stage for stage in STAGES for _ in (1, 2, 3)]
    # The next writer cleans the leftovers of killed ones, and the lock is free.
    ConfigStore(path).add("after", ServerEntry(command="x"), force=True)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


KILLED_BETWEEN_BACKUP_AND_RENAME = """
import os, signal, sys
from pathlib import Path
import mcpctl.config.filestore as filestore
import mcpctl.config.store as store
from mcpctl.config.model import ServerEntry

real = filestore.atomic_write

def dying(path, content, **kw):
    if Path(path).name == "c.json":  # the backup is taken; the rename never happens
        (Path(path).parent / ".c.json.5a5a5a5a.tmp").write_bytes(content[:10])
        os.kill(os.getpid(), signal.SIGKILL)
    real(path, content, **kw)

filestore.atomic_write = dying  # what FileStore writes with
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
