"""SIGINT, SIGTERM and SIGHUP end ``mcpctl prefetch`` and every process it started: npm,
and what npm started, while a download hangs."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import MCPCTL, alive, write_config
from tests.prefetch.conftest import npx_entry
from tests.prefetch.npmregistry import Registry

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _default_signals() -> None:
    # A shell without job control starts background jobs with SIGINT ignored, and mcpctl
    # leaves ignored signals ignored: give it the defaults a terminal would.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _descendants(pid: int) -> list[int]:
    import psutil

    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_stops_every_package_manager(
    sig: signal.Signals, registry: Registry, npm_cache: Path, tmp_path: Path
) -> None:
    registry.publish("fake-a", "1.0.0")
    registry.publish("fake-b", "1.0.0")
    registry.tarball_delay = 60.0  # both downloads hang until the signal
    config = write_config(tmp_path / "external-mcps.json", {
        "a": npx_entry("fake-a@1.0.0", registry, npm_cache),
        "b": npx_entry("fake-b@1.0.0", registry, npm_cache),
    })  # fmt: skip
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen([*MCPCTL, "--config", str(config), "prefetch", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                            preexec_fn=_default_signals)  # fmt: skip  # noqa: PLW1509
    try:
        deadline = time.monotonic() + 60
        tarballs = [r for r in registry.requests if r.endswith(".tgz")]
        while len(tarballs) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            tarballs = [r for r in registry.requests if r.endswith(".tgz")]
        assert len(tarballs) == 2, registry.requests  # both npm installs are downloading
        started = _descendants(proc.pid)
        assert len(started) >= 2
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + sig, err
        assert "Traceback" not in err
        deadline = time.monotonic() + 10
        while any(alive(p) for p in started) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in started if alive(p)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
