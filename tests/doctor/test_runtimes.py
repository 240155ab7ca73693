"""The runtimes check: real (fake) programs on PATH, their versions, what is missing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.doctor.findings import Finding
from mcpctl.doctor.runtimes import (
    OTHER_HINT,
    RELATIVE_HINT,
    RUNTIMES,
    VersionLookup,
    check_runtimes,
    runtime_of,
)
from tests.doctor.fakes import FakeBin


def stdio(command: str, **more: object) -> ServerEntry:
    return ServerEntry(command=command, **more)  # type: ignore[arg-type]


def by_subject(findings: list[Finding]) -> dict[str | None, Finding]:
    return {f.subject: f for f in findings}


@pytest.mark.parametrize(
    ("command", "runtime"),
    [
        ("npx", "node"), ("node", "node"), ("/opt/node/bin/npx", "node"), ("uvx", "uv"),
        ("uv", "uv"), ("docker", "docker"), ("python", "python"), ("python3", "python"),
        ("python3.12", "python"), ("/venv/bin/python3", "python"), ("npx.cmd", "node"),
        ("mcp-server-time", None), ("./server", None), ("pythonista", None),
    ],
)  # fmt: skip
def test_commands_are_grouped_by_runtime(command: str, runtime: str | None) -> None:
    found = runtime_of(command)
    assert (found.name if found else None) == runtime


def test_installed_runtimes_report_their_versions(fake_bin: FakeBin, tmp_path: Path) -> None:
    fake_bin.add("node", "v20.11.0")
    fake_bin.add("npx", "10.2.4")
    fake_bin.add("uv", "uv 0.4.20 (0e1b25a53 2024-10-08)")
    fake_bin.add("uvx", "uv-uvx 0.4.20")
    fake_bin.add("docker", "Docker version 27.0.3, build 7d4bcd8")
    fake_bin.add("python3", "Python 3.12.3")
    entries = {
        "github": stdio("npx", args=("-y", "@modelcontextprotocol/server-github")),
        "files": stdio("npx"),
        "local": stdio("node", args=("server.js",)),
        "time": stdio("uvx", args=("mcp-server-time",)),
        "box": stdio("docker", args=("run", "-i", "image")),
        "py": stdio("python3", args=("-m", "server")),
    }
    findings = by_subject(check_runtimes(entries, tmp_path))
    assert {f.code for f in findings.values()} == {"runtime_found"}
    assert {f.severity for f in findings.values()} == {"ok"}
    assert {s: f.details["version"] for s, f in findings.items()} == {
        "npx": "20.11.0", "node": "20.11.0", "uvx": "0.4.20", "docker": "27.0.3",
        "python3": "3.12.3",
    }  # fmt: skip
    assert findings["npx"].servers == ("github", "files")
    assert findings["npx"].details["path"] == str(fake_bin.path / "npx")
    assert (
        "node 20.11.0" in findings["npx"].message and "github and files" in findings["npx"].message
    )
    # npx's version is node's, asked once for both; uvx's is uv's.
    calls = fake_bin.calls()
    assert sorted(calls) == [
        "docker --version",
        "node --version",
        "python3 --version",
        "uv --version",
    ]
    assert not fake_bin.marker.exists()


@pytest.mark.parametrize(
    ("command", "hint"),
    [
        ("npx", "https://nodejs.org"), ("node", "https://nodejs.org"),
        ("uvx", "https://docs.astral.sh/uv/"), ("docker", "install Docker"),
        ("python3", "install Python 3"),
    ],
)  # fmt: skip
def test_a_missing_runtime_is_an_error_with_the_install_hint(
    fake_bin: FakeBin, tmp_path: Path, command: str, hint: str
) -> None:
    [finding] = check_runtimes({"srv": stdio(command)}, tmp_path)
    assert (finding.code, finding.severity) == ("runtime_missing", "error")
    assert finding.fix is not None and hint in finding.fix
    assert finding.servers == ("srv",)
    assert f"{command} is not on PATH; needed by srv" == finding.message


def test_a_missing_other_command_is_an_error(fake_bin: FakeBin, tmp_path: Path) -> None:
    [finding] = check_runtimes({"a": stdio("mcp-server-x"), "b": stdio("mcp-server-x")}, tmp_path)
    assert (finding.code, finding.severity, finding.fix) == ("command_missing", "error", OTHER_HINT)
    assert finding.servers == ("a", "b")


def test_an_installed_other_command_is_found_and_never_run(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    fake_bin.add("mcp-server-x")
    [finding] = check_runtimes({"a": stdio("mcp-server-x", args=("--serve",))}, tmp_path)
    assert (finding.code, finding.severity) == ("command_found", "ok")
    assert fake_bin.calls() == []  # not even --version: it is no runtime


def test_npx_without_node_is_broken(fake_bin: FakeBin, tmp_path: Path) -> None:
    fake_bin.add("npx")
    [finding] = check_runtimes({"gh": stdio("npx")}, tmp_path)
    assert (finding.code, finding.severity) == ("runtime_missing", "error")
    assert "node, which it runs on, is not on PATH" in finding.message
    assert finding.fix == RUNTIMES["node"].hint


def test_uvx_without_uv_asks_uvx(fake_bin: FakeBin, tmp_path: Path) -> None:
    fake_bin.add("uvx", "uvx 0.5.1")
    [finding] = check_runtimes({"t": stdio("uvx")}, tmp_path)
    assert finding.code == "runtime_found" and finding.details["version"] == "0.5.1"
    assert fake_bin.calls() == ["uvx --version"]


def test_node_beside_npx_wins_over_path(fake_bin: FakeBin, tmp_path: Path) -> None:
    other = tmp_path / "node-22" / "bin"
    other.mkdir(parents=True)
    for name, version in (("npx", "10.0.0"), ("node", "v22.1.0")):
        script = other / name
        script.write_text(f'#!/bin/sh\necho "{version}"\n')
        script.chmod(0o755)
    fake_bin.add("node", "v18.0.0")
    [finding] = check_runtimes({"gh": stdio(str(other / "npx"))}, tmp_path)
    assert finding.details["version"] == "22.1.0"


def test_a_failing_version_lookup_is_a_warning(fake_bin: FakeBin, tmp_path: Path) -> None:
    fake_bin.add("docker", "Cannot connect", code=1)
    [finding] = check_runtimes({"box": stdio("docker")}, tmp_path)
    assert (finding.code, finding.severity) == ("runtime_version_unknown", "warning")
    assert "'docker --version' exited with 1" in finding.message
    assert finding.fix is not None and "docker --version" in finding.fix


def test_a_hanging_version_lookup_is_stopped_within_the_timeout(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    fake_bin.add("node", hang=True)
    started = time.monotonic()
    [finding] = check_runtimes({"n": stdio("node")}, tmp_path, VersionLookup(timeout=0.3))
    assert time.monotonic() - started < 5  # its sleeping child was stopped with it
    assert finding.code == "runtime_version_unknown"
    assert "did not answer within 0.3 s" in finding.message


def test_lookups_are_asked_once_per_run(fake_bin: FakeBin, tmp_path: Path) -> None:
    fake_bin.add("node", "v20.0.0")
    lookup = VersionLookup()
    entries = {"a": stdio("node"), "b": stdio("npx")}
    fake_bin.add("npx")
    check_runtimes(entries, tmp_path, lookup)
    check_runtimes(entries, tmp_path, lookup)
    assert fake_bin.calls() == ["node --version"]
    check_runtimes(entries, tmp_path)  # a new run asks again
    assert fake_bin.calls() == ["node --version"] * 2


def test_relative_commands_start_from_the_cwd_or_the_config_folder(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    (tmp_path / "srv").mkdir()
    tool = tmp_path / "srv" / "run.sh"
    tool.write_text("#!/bin/sh\ntouch STARTED\n")
    tool.chmod(0o755)
    entries = {
        "here": stdio("./srv/run.sh"),
        "in-cwd": stdio("./run.sh", cwd="srv"),
        "gone": stdio("./missing.sh"),
    }
    findings = {f.servers[0]: f for f in check_runtimes(entries, tmp_path)}
    assert findings["here"].code == findings["in-cwd"].code == "command_found"
    assert findings["gone"].code == "command_missing" and findings["gone"].fix == RELATIVE_HINT
    assert f"not an executable file in {tmp_path}" in findings["gone"].message
    assert not list(tmp_path.rglob("STARTED"))


def test_disabled_remote_and_placeholder_commands(fake_bin: FakeBin, tmp_path: Path) -> None:
    entries = {
        "off": stdio("npx", enabled=False),
        "web": ServerEntry(url="https://example.com/mcp"),
    }
    [finding] = check_runtimes(entries, tmp_path)
    assert (finding.code, finding.severity) == ("runtimes_none", "ok")
    entries["custom"] = stdio("${SERVER_BIN}")
    [finding] = check_runtimes(entries, tmp_path)
    assert (finding.code, finding.severity, finding.servers) == (
        "command_unchecked",
        "info",
        ("custom",),
    )
