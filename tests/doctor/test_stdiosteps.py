"""doctor NAME's steps of a stdio server: ``command`` (the program found, its package or
image cached) and ``spawn`` (the process starts and stays up) -- with real programs: fake
ones on a PATH of their own, and Python servers."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.doctor.server import ServerDiagnosis, diagnose_server
from mcpctl.probe.childenv import child_env
from mcpctl.probe.eras import EraMemory
from tests.conftest import SERVERS, write_config
from tests.doctor.fakes import FakeBin

PY = sys.executable
IMAGE = "ghcr.io/example/server"
TIMEOUT = 10.0
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}


def diagnose(name: str, config: dict[str, Any], path: Path) -> ServerDiagnosis:
    write_config(path, config)
    return diagnose_server(name, timeout=TIMEOUT)


def command_step(d: ServerDiagnosis) -> tuple[str, str, str | None]:
    step = d.step("command")
    assert step is not None
    return step.status, step.detail, step.fix


def fake_docker(fake_bin: FakeBin, *, size: str = "", error: str = "") -> Path:
    """A ``docker`` whose ``image inspect`` prints ``size`` or fails with ``error``."""
    docker = fake_bin.path / "docker"
    answer = f'echo "{error}" >&2\nexit 1\n' if error else f'echo "{size}"\nexit 0\n'
    docker.write_text(f'#!/bin/sh\nif [ "$1" = "image" ]; then\n{answer}fi\nexit 2\n')
    docker.chmod(0o755)
    return docker


DOCKER = {"command": "docker", "args": ["run", "-i", "--rm", IMAGE]}


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        ("0", "0 B"),
        ("1023", "1023 B"),
        ("1024", "1.0 KB"),
        ("1536", "1.5 KB"),
        (str(1024 * 1024 - 1), "1024.0 KB"),
        (str(1024 * 1024), "1.0 MB"),
        (str(5 * 1024**3), "5.0 GB"),
        (str(3 * 1024**4), "3072.0 GB"),
    ],
)
def test_a_cached_image_and_its_size(
    config_path: Path, fake_bin: FakeBin, size: str, shown: str
) -> None:
    docker = fake_docker(fake_bin, size=size)
    status, detail, _ = command_step(diagnose("img", {"img": DOCKER}, config_path))
    assert status == "passed"
    assert detail == f"docker: {docker}; {IMAGE} is cached, {shown}"


def test_a_cached_image_of_unknown_size(config_path: Path, fake_bin: FakeBin) -> None:
    docker = fake_docker(fake_bin, size="")
    _, detail, _ = command_step(diagnose("img", {"img": DOCKER}, config_path))
    assert detail == f"docker: {docker}; {IMAGE} is cached"


def test_an_image_not_pulled_yet_says_the_first_start_downloads_it(
    config_path: Path, fake_bin: FakeBin
) -> None:
    docker = fake_docker(fake_bin, error=f"Error: No such image: {IMAGE}")
    status, detail, _ = command_step(diagnose("img", {"img": DOCKER}, config_path))
    assert status == "passed"
    assert detail == (
        f"docker: {docker}; {IMAGE} not cached: the first start downloads it "
        "('mcpctl prefetch img' fetches it ahead)"
    )


def test_whether_an_image_is_cached_can_be_unknown(config_path: Path, fake_bin: FakeBin) -> None:
    docker = fake_docker(fake_bin, error="Cannot connect to the Docker daemon")
    _, detail, _ = command_step(diagnose("img", {"img": DOCKER}, config_path))
    assert detail == (
        f"docker: {docker}; whether {IMAGE} is cached is unknown "
        "(the Docker daemon is not reachable)"
    )


def test_a_cached_npx_package_with_its_version(
    config_path: Path, fake_bin: FakeBin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm"))
    npx = fake_bin.add("npx")
    pkg = tmp_path / "npm" / "_npx" / "0a1b2c" / "node_modules" / "server-notes"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text('{"name": "server-notes", "version": "2.0.1"}')
    size = (pkg / "package.json").stat().st_size
    entry = {"command": "npx", "args": ["-y", "server-notes@2"]}
    _, detail, _ = command_step(diagnose("notes", {"notes": entry}, config_path))
    assert detail == f"npx: {npx}; server-notes 2.0.1 is cached, {size} B"


def test_a_command_found_on_the_entrys_own_path(
    config_path: Path, fake_bin: FakeBin, tmp_path: Path
) -> None:
    own = tmp_path / "own-bin"
    own.mkdir()
    program = own / "my-server"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    entry = {"command": "my-server", "env": {"PATH": str(own)}}
    status, detail, _ = command_step(diagnose("mine", {"mine": entry}, config_path))
    assert status == "passed"
    assert detail == f"my-server: {program} (on the entry's PATH)"


def test_a_command_missing_from_the_entrys_own_path(
    config_path: Path, fake_bin: FakeBin, tmp_path: Path
) -> None:
    fake_bin.add("my-server")  # on mcpctl's PATH, not on the entry's
    entry = {"command": "my-server", "env": {"PATH": str(tmp_path / "empty")}}
    d = diagnose("mine", {"mine": entry}, config_path)
    status, detail, fix = command_step(d)
    assert status == "failed"
    assert detail == "'my-server' is not found on the entry's PATH"
    assert fix  # how to install it
    assert not fake_bin.marker.exists()


def test_a_missing_file_is_named_where_it_was_looked_for(
    config_path: Path, fake_bin: FakeBin, tmp_path: Path
) -> None:
    entry = {"command": "./bin/server", "cwd": str(tmp_path)}
    status, detail, _ = command_step(diagnose("gone", {"gone": entry}, config_path))
    assert status == "failed"
    assert detail == f"'./bin/server' is not found at {tmp_path / 'bin' / 'server'}"


def test_a_server_killed_by_a_signal_says_which(config_path: Path) -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    d = diagnose("killed", {"killed": {"command": PY, "args": ["-c", code]}}, config_path)
    step = d.step("spawn")
    assert step is not None and step.status == "failed", d.to_dict()
    assert step.detail.startswith("the process exited at once (signal 9), before answering")


def test_a_server_exiting_at_once_without_an_error_says_status_0(config_path: Path) -> None:
    d = diagnose("quits", {"quits": {"command": PY, "args": ["-c", "pass"]}}, config_path)
    step = d.step("spawn")
    assert step is not None and step.status == "failed", d.to_dict()
    assert step.detail.startswith("the process exited at once (exit status 0), before answering")


def test_a_working_directory_that_does_not_exist_fails_the_spawn(
    config_path: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "gone"
    entry = {"command": PY, "args": ["-c", "pass"], "cwd": str(missing)}
    d = diagnose("lost", {"lost": entry}, config_path)
    assert [s.status for s in d.steps[:4]] == ["passed", "passed", "passed", "failed"], d.to_dict()
    step = d.step("spawn")
    assert step is not None
    assert (step.detail, step.fix) == (
        f"working directory {str(missing)!r} does not exist",
        "fix the entry's cwd",
    )


def test_the_era_spoken_is_remembered(config_path: Path) -> None:
    memory = EraMemory()
    write_config(config_path, {"basic": BASIC})
    d = diagnose_server("basic", timeout=30.0, eras=memory)
    assert d.ok, d.to_dict()
    era = memory.recall(ServerEntry(command=PY, args=tuple(BASIC["args"])))
    assert era is not None and era.name in ("legacy", "modern")


def test_a_package_still_downloading_is_told_apart_from_a_hang(
    config_path: Path, fake_bin: FakeBin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe waits the diagnosis's timeout, not the entry's, and the hint names the
    server to prefetch."""
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm"))  # nothing cached
    npx = fake_bin.path / "npx"
    npx.write_text("#!/bin/sh\nexec /bin/sleep 60\n")
    npx.chmod(0o755)
    write_config(config_path, {"cold": {"command": "npx", "args": ["-y", "server-cold"]}})
    started = time.monotonic()
    d = diagnose_server("cold", timeout=1.0)
    assert time.monotonic() - started < 15
    step = d.step("protocol")
    assert step is not None and step.status == "failed", d.to_dict()
    assert step.fix is not None and "run 'mcpctl prefetch cold'" in step.fix


def test_a_server_exiting_at_once_says_how_to_see_more(
    config_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every variable of ours passed on, nothing is said about the environment: the
    fix is the probe's own."""
    code = "import sys; sys.stderr.write('cannot open the database\\n'); sys.exit(3)"
    entry = {"command": PY, "args": ["-c", code]}
    passed = child_env(ServerEntry(command=PY, args=("-c", code)))
    for name in list(os.environ):
        if name not in passed and not name.startswith("MCPCTL_"):
            monkeypatch.delenv(name)
    d = diagnose("quits", {"quits": entry}, config_path)
    step = d.step("spawn")
    assert step is not None and step.status == "failed", d.to_dict()
    assert "environment variables" not in step.detail
    assert step.fix == "its last lines of stderr are shown; run the command by hand to see more"


def test_the_spawn_step_takes_the_time_of_the_start_alone(config_path: Path) -> None:
    d = diagnose("basic", {"basic": BASIC}, config_path)
    assert d.ok, d.to_dict()
    by_id = {s.id: s for s in d.steps}
    # The process's start, not the probe that followed it (the handshake waits for the
    # server's interpreter to load).
    assert by_id["spawn"].ms < by_id["protocol"].ms + by_id["lists"].ms
