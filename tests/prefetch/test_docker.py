"""``docker run`` entries: the image is pulled by the Docker the entry points at."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli, need_program, write_config

pytestmark = pytest.mark.integration


def test_a_docker_without_its_daemon_fails_naming_why(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    need_program("docker", "prefetch pulls images with the docker client")
    socket = tmp_path / "no-daemon.sock"  # the entry's env points docker at it
    write_config(config_path, {"time": {
        "command": "docker", "args": ["run", "-i", "--rm", "mcp/time:latest"],
        "env": {"DOCKER_HOST": f"unix://{socket}", "SECRET_TOKEN": "never-seen"},
    }})  # fmt: skip
    r = cli("prefetch", "--json")
    assert r.exit_code == 1, r.stdout + r.stderr
    item = r.json["data"]["packages"][0]
    assert (item["runner"], item["package"], item["status"]) == (
        "docker",
        "mcp/time:latest",
        "failed",
    )
    assert item["reason"].startswith("docker pull failed (exit 1): ")
    assert str(socket) in item["reason"] and not item["offline"]
