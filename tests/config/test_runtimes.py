"""The runtime a stdio server's command runs on, and the hint to install it."""

from __future__ import annotations

import pytest

from mcpctl.config.runtimes import RUNTIMES, install_hint, runtime_of


@pytest.mark.parametrize(
    ("command", "runtime"),
    [
        ("npx", "node"),
        ("/usr/local/bin/node", "node"),
        ("NPX.EXE", "node"),  # Windows names, in any case
        ("npx.cmd", "node"),
        ("node.exe", "node"),
        ("uvx", "uv"),
        ("uv.exe", "uv"),
        ("docker", "docker"),
        ("docker.exe", "docker"),
        ("/usr/bin/python3.12", "python"),
        ("python.exe", "python"),
        ("Python3.EXE", "python"),
        ("python3", "python"),
    ],
)  # fmt: skip
def test_a_known_command_has_its_runtime(command: str, runtime: str) -> None:
    found = runtime_of(command)
    assert found is not None and found.name == runtime
    assert found is RUNTIMES[runtime]


@pytest.mark.parametrize("command", ["deno", "./server", "npx.sh", "exe", "node.exe.bak", ""])
def test_another_command_has_none(command: str) -> None:
    assert runtime_of(command) is None


def test_the_install_hint_is_the_runtimes_or_the_callers() -> None:
    assert install_hint("npx.exe", "other") == (
        "install Node.js (it provides node and npx): https://nodejs.org"
    )
    assert install_hint("/opt/bin/uvx", "other") == RUNTIMES["uv"].hint
    assert "docs.astral.sh/uv" in RUNTIMES["uv"].hint
    assert install_hint("python3.11", "other") == RUNTIMES["python"].hint
    assert install_hint("my-server", "check the path") == "check the path"
