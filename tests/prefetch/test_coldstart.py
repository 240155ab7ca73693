"""A first start that downloads, told apart from a hang: ``health`` and ``doctor NAME`` name
``mcpctl prefetch`` when a server timed out while its package was not on this machine."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.prefetch.commands import meaningful_line
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.coldstart import cold_start, downloading, npx_installed, npx_key, npx_packages
from tests.conftest import Cli, write_config
from tests.prefetch.conftest import npx_entry
from tests.prefetch.npmregistry import HANGS, Registry


@pytest.mark.parametrize(
    ("args", "packages"),
    [
        (["-y", "pkg@1.2.3", "--port", "1"], ["pkg@1.2.3"]),
        (["--yes", "@scope/pkg@^1", "x"], ["@scope/pkg@^1"]),
        (["--registry", "http://r/", "-y", "pkg"], ["pkg"]),
        (["-p", "a@1", "--package=b@2", "cmd"], ["a@1", "b@2"]),
        (["-y", "--", "pkg@1"], ["pkg@1"]),
        (["-c", "echo hi"], None),
        (["-y", "${PKG}"], None),
        (["-y"], None),
    ],
)
def test_npx_packages_are_what_npx_installs(args: list[str], packages: list[str] | None) -> None:
    assert npx_packages(args) == packages


def test_the_npx_key_is_npms() -> None:
    # npm 11: sha512 of the sorted specs joined by newlines, 16 hex digits (the folder of
    # `npx -y @modelcontextprotocol/server-memory@2026.8.31`, as npm itself created it).
    assert npx_key(["@modelcontextprotocol/server-memory@2026.8.31"]) == "c98ccc168155bafa"


def test_downloading_lines() -> None:
    assert downloading(["npm warn exec The following package was not found and will be "
                        "installed: pkg@1.0.0"])  # fmt: skip
    assert downloading(["Unable to find image 'mcp/time:latest' locally"])
    assert downloading(["Downloading pydantic-core (2.2MiB)"])
    assert not downloading(["Server running on stdio", "listening"])


def test_meaningful_line_skips_npms_decoration() -> None:
    npm = [
        "npm http fetch GET 404 http://127.0.0.1:1/nope 3ms",
        "npm error code E404",
        "npm error 404 Not Found - GET http://127.0.0.1:1/nope - Not found",
        "npm error 404",
        "npm error 404  'nope@1.0.0' is not in this registry.",
        "npm error 404",
        "npm error 404 Note that you can also install from a",
        "npm error 404 tarball, folder, http url, or git url.",
        "npm error A complete log of this run can be found in: /root/.npm/_logs/x.log",
    ]
    assert meaningful_line(npm) == "'nope@1.0.0' is not in this registry."
    uv = ["  × No solution found when resolving tool dependencies:",
          "  ╰─▶ Because nope was not found in the package registry, we can conclude"]  # fmt: skip
    assert meaningful_line(uv) == (
        "Because nope was not found in the package registry, we can conclude"
    )
    uv_fetch = ["error: Failed to fetch: https://pypi.org/simple/x/",
                "  cause: error sending request for url (https://pypi.org/simple/x/)",
                "  cause: tcp connect error: Connection refused (os error 111)",
                "hint: Consider enabling use of system TLS certificates"]  # fmt: skip
    assert meaningful_line(uv_fetch) == (
        "Failed to fetch: https://pypi.org/simple/x/: tcp connect error: Connection refused "
        "(os error 111)"
    )
    docker = ["Using default tag: latest",
              "Error response from daemon: pull access denied for x, repository does not exist"]  # fmt: skip
    assert meaningful_line(docker) == (
        "Error response from daemon: pull access denied for x, repository does not exist"
    )
    assert meaningful_line([]) is None


def test_only_a_timeout_of_a_runner_gets_the_hint(tmp_path: Path) -> None:
    timeout = ProbeError("timeout", "no answer within 3 s", "raise its timeout")
    cache = {"npm_config_cache": str(tmp_path)}
    npx = ServerEntry(command="npx", args=("-y", "pkg@1.0.0"), env=cache)
    assert "mcpctl prefetch srv" in (cold_start("srv", npx, timeout, []).hint or "")
    other = ProbeError("server_exited", "it exited", None)
    assert cold_start("srv", npx, other, []) == other
    python = ServerEntry(command="python3", args=("server.py",))
    assert cold_start("srv", python, timeout, []) == timeout
    # Installed in the entry's folder: npx runs that copy, nothing to download.
    project = tmp_path / "project"
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "package.json").write_text("{}")
    local = ServerEntry(command="npx", args=("-y", "pkg@1.0.0"), env=cache, cwd=str(project))
    assert cold_start("srv", local, timeout, []) == timeout
    # Installed where npx looks: a hang, not a download.
    folder = tmp_path / "_npx" / npx_key(["pkg@1.0.0"])
    (folder / "node_modules" / "pkg").mkdir(parents=True)
    (folder / "node_modules" / "pkg" / "package.json").write_text("{}")
    (folder / "package.json").write_text('{"_npx": {"packages": ["pkg@1.0.0"]}}')
    assert npx_installed(tmp_path, ["pkg@1.0.0"]) == folder
    assert cold_start("srv", npx, timeout, []) == timeout
    # Unless npx says it is installing.
    said = ["npm warn exec The following package was not found and will be installed: x"]
    assert "mcpctl prefetch" in (cold_start("srv", npx, timeout, said).hint or "")


@pytest.mark.integration
def test_health_and_doctor_tell_a_first_download_from_a_hang(
    cli: Cli, config_path: Path, registry: Registry, npm_cache: Path
) -> None:
    registry.publish("fake-hang", "1.0.0", HANGS)
    registry.tarball_delay = 60.0  # the first start is still downloading when health gives up
    write_config(config_path, {"slow": npx_entry("fake-hang@1.0.0", registry, npm_cache,
                                                 timeout_ms=3000)})  # fmt: skip
    r = cli("health", "slow", "--json")
    assert r.exit_code == 1, r.stdout + r.stderr
    error = r.json["data"]["mcps"][0]["error"]
    assert error["code"] == "timeout"
    assert error["hint"].startswith("downloading on first start: run 'mcpctl prefetch slow'")
    human = cli("health", "slow")
    assert "downloading on first start: run 'mcpctl prefetch slow'" in human.stderr
    d = cli("doctor", "slow", "--json")
    assert d.exit_code == 1
    failed = next(s for s in d.json["data"]["steps"] if s["status"] == "failed")
    assert failed["fix"].startswith("downloading on first start: run 'mcpctl prefetch slow'")
    command = next(s for s in d.json["data"]["steps"] if s["id"] == "command")
    assert "mcpctl prefetch slow" in command["detail"]

    # Fetched ahead, the same server still does not answer: a hang, said as one.
    registry.tarball_delay = 0.0
    registry.release()
    started = time.monotonic()
    assert cli("prefetch", "slow").exit_code == 0
    # The npx that health stopped left its folder lock behind: npm would wait a minute.
    assert time.monotonic() - started < 30
    r = cli("health", "slow", "--json")
    error = r.json["data"]["mcps"][0]["error"]
    assert error["code"] == "timeout" and "prefetch" not in (error["hint"] or "")
