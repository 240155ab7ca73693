"""The runtimes check: real (fake) programs on PATH, their versions, what is missing."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.doctor import runtimes
from mcpctl.doctor.findings import Finding
from mcpctl.doctor.runtimes import (
    OTHER_HINT,
    RELATIVE_HINT,
    RUNTIMES,
    RuntimeCheck,
    Version,
    VersionLookup,
    check_runtimes,
    runtime_of,
)
from tests.doctor.fakes import FakeBin
from tests.stdinpipe import stdin_holding


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


# --- versions: what --version printed -----------------------------------------------------


def script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("body", "version"),
    [
        ('echo ""; echo "  "; echo "node v20.1.0-rc.1+b2 (x)"; echo "v9.9.9"', "20.1.0-rc.1+b2"),
        ('echo "version 7"', "version 7"),  # no dotted number: the line, as printed
        ("printf '%s' " + "a" * 70, "a" * 60),  # ... cut to 60 characters
        ('echo "Python 3.12.3" >&2', "3.12.3"),  # stderr when stdout says nothing
        ('echo "out 1.2"; echo "err 3.4" >&2', "1.2"),
        ("printf 'node v5.1.0 \\377\\n'", "5.1.0"),  # bytes that are not UTF-8
        ("printf '\\377 v6.2.0\\n' >&2", "6.2.0"),
    ],
)
def test_the_version_is_read_from_the_first_line_that_says_something(
    fake_bin: FakeBin, tmp_path: Path, body: str, version: str
) -> None:
    script(fake_bin.path / "node", body)
    [finding] = check_runtimes({"n": stdio("node")}, tmp_path)
    assert finding.code == "runtime_found" and finding.details["version"] == version
    assert finding.message == f"node: {fake_bin.path / 'node'} (node {version}); used by n"


def test_a_version_lookup_that_prints_nothing(fake_bin: FakeBin, tmp_path: Path) -> None:
    script(fake_bin.path / "docker", 'echo "   "')
    [finding] = check_runtimes({"box": stdio("docker")}, tmp_path)
    docker = fake_bin.path / "docker"
    assert finding == Finding(
        "runtimes", "runtime_version_unknown", "warning",
        f"docker: {docker}, but its version is unknown ('docker --version' printed nothing); "
        "used by box",
        fix=f"check the installation: run '{docker} --version'",
        subject="docker", servers=("box",),
        details={"command": "docker", "runtime": "docker", "path": str(docker), "version": None},
    )  # fmt: skip


def test_a_version_lookup_that_cannot_start(tmp_path: Path) -> None:
    lookup = VersionLookup()
    missing = str(tmp_path / "bin" / "node")
    assert lookup.run(missing) == Version(
        error="'node --version' failed: No such file or directory"
    )
    assert lookup.cache == {missing: lookup.run(missing)}


def test_a_version_lookup_reads_nothing_from_the_terminal(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    node = script(fake_bin.path / "node", 'if read line; then echo "v1.0"; else echo "v2.0"; fi')
    assert VersionLookup().run(str(node)) == Version("2.0")


def test_a_hanging_lookup_is_stopped_with_its_children_and_finish_collects_it(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    node = script(fake_bin.path / "node", f'/bin/sleep 30 &\necho $! > "{pids}"\nwait')
    lookup = VersionLookup(timeout=0.3)
    lookup.start([str(node)])
    lookup.finish()
    assert lookup.run(str(node)) == Version(error="'node --version' did not answer within 0.3 s")
    child = int(pids.read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        stat = Path(f"/proc/{child}/stat").read_text() if Path(f"/proc/{child}").exists() else ""
        if ") Z " in stat:  # a zombie waiting for init: stopped
            break
        time.sleep(0.05)
    stat = Path(f"/proc/{child}/stat").read_text() if Path(f"/proc/{child}").exists() else ""
    assert not stat or ") Z " in stat, "the lookup's child outlived it"


# --- which program gives the version --------------------------------------------------------


def test_docker_and_python_are_asked_themselves_wherever_they_are(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    other = tmp_path / "opt"
    other.mkdir()
    script(other / "python3.12", 'echo "Python 3.12.1"')
    script(other / "docker", 'echo "Docker version 26.1.0"')
    fake_bin.add("python", "Python 3.9.0")
    entries = {"py": stdio(str(other / "python3.12")), "box": stdio(str(other / "docker"))}
    found = {f.servers[0]: f.details["version"] for f in check_runtimes(entries, tmp_path)}
    assert found == {"py": "3.12.1", "box": "26.1.0"}


def test_npx_runs_on_the_node_on_path_without_one_beside_it(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    other = tmp_path / "opt"
    other.mkdir()
    script(other / "npx", "echo 10.0.0")
    (other / "node").write_text("not executable")
    fake_bin.add("node", "v18.2.0")
    [finding] = check_runtimes({"gh": stdio(str(other / "npx"))}, tmp_path)
    assert finding.details["version"] == "18.2.0"
    assert fake_bin.calls() == ["node --version"]


def test_a_runtime_command_in_another_case_is_asked_itself(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    other = tmp_path / "opt"
    other.mkdir()
    script(other / "Node.EXE", 'echo "v21.0.0"')
    fake_bin.add("node", "v18.0.0")
    [finding] = check_runtimes({"n": stdio(str(other / "Node.EXE"))}, tmp_path)
    assert finding.details["version"] == "21.0.0"


def test_a_runtime_command_with_a_cmd_suffix_is_asked_itself(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    other = tmp_path / "opt"
    other.mkdir()
    script(other / "node.cmd", 'echo "v21.0.0"')
    fake_bin.add("node", "v18.0.0")
    [finding] = check_runtimes({"n": stdio(str(other / "node.cmd"))}, tmp_path)
    assert finding.details["version"] == "21.0.0"


def test_uvx_without_uv_anywhere_is_asked_itself(fake_bin: FakeBin, tmp_path: Path) -> None:
    other = tmp_path / "opt"
    other.mkdir()
    script(other / "uvx", 'echo "uvx 0.6.0"')
    [finding] = check_runtimes({"t": stdio(str(other / "uvx"))}, tmp_path)
    assert finding.code == "runtime_found" and finding.details["version"] == "0.6.0"


def test_npx_without_node_says_so_in_full(fake_bin: FakeBin, tmp_path: Path) -> None:
    npx = fake_bin.add("npx")
    [finding] = check_runtimes({"gh": stdio("npx"), "fs": stdio("npx")}, tmp_path)
    assert finding == Finding(
        "runtimes", "runtime_missing", "error",
        f"npx is at {npx}, but node, which it runs on, is not on PATH; needed by gh and fs",
        fix=RUNTIMES["node"].hint, subject="npx", servers=("gh", "fs"),
        details={"command": "npx", "runtime": "node", "path": str(npx)},
    )  # fmt: skip


# --- where a command is found -----------------------------------------------------------------


def test_a_command_on_the_entrys_own_path(fake_bin: FakeBin, tmp_path: Path) -> None:
    own = tmp_path / "own-bin"
    own.mkdir()
    tool = script(own / "my-server", ": > STARTED")
    entries = {
        "a": stdio("my-server", env={"PATH": str(own)}),
        "b": stdio("my-server"),  # the same command on our PATH: another finding
        "c": stdio("gone-server", env={"PATH": str(own)}),
    }
    found = {f.servers[0]: f for f in check_runtimes(entries, tmp_path)}
    assert found["a"].message == f"my-server: {tool} (on the entry's PATH); used by a"
    assert found["a"].details == {"command": "my-server", "runtime": None, "path": str(tool)}
    assert found["b"].code == "command_missing"
    assert found["b"].message == "my-server is not on PATH; needed by b"
    assert found["c"].message == "gone-server is not on the entry's PATH; needed by c"
    assert not list(tmp_path.rglob("STARTED"))


def test_a_command_found_on_path_says_where(fake_bin: FakeBin, tmp_path: Path) -> None:
    tool = fake_bin.add("my-server")
    [finding] = check_runtimes({"a": stdio("my-server"), "b": stdio("my-server")}, tmp_path)
    assert finding == Finding(
        "runtimes", "command_found", "ok", f"my-server: {tool}; used by a and b",
        subject="my-server", servers=("a", "b"),
        details={"command": "my-server", "runtime": None, "path": str(tool)},
    )  # fmt: skip


def test_a_missing_path_command_names_the_folder_and_the_fix(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    [finding] = check_runtimes({"s": stdio("bin/server", cwd="~/proj")}, tmp_path)
    where = tmp_path / "~/proj"  # as written: no shell expands it
    assert finding == Finding(
        "runtimes", "command_missing", "error",
        f"bin/server is not an executable file in {where}; needed by s",
        fix=RELATIVE_HINT, subject="bin/server", servers=("s",),
        details={"command": "bin/server", "runtime": None, "path": None},
    )  # fmt: skip


def test_a_missing_runtime_by_path_has_the_runtimes_hint(fake_bin: FakeBin, tmp_path: Path) -> None:
    [finding] = check_runtimes({"s": stdio("./venv/bin/python3")}, tmp_path)
    assert (finding.code, finding.fix) == ("runtime_missing", RUNTIMES["python"].hint)
    assert finding.details == {"command": "./venv/bin/python3", "runtime": "python", "path": None}


def test_a_command_starting_with_a_tilde_is_a_path_as_written(
    fake_bin: FakeBin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As health and mcpctl run start it: no shell expands it, so one in the home is not it.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    script(tmp_path / "home" / "srv", "true")
    [finding] = check_runtimes({"s": stdio("~/srv")}, tmp_path)
    assert finding.code == "command_missing"
    (tmp_path / "~").mkdir()
    tool = script(tmp_path / "~" / "srv", "true")
    [finding] = check_runtimes({"s": stdio("~/srv")}, tmp_path)
    assert finding.code == "command_found" and finding.details["path"] == str(tool)
    (tmp_path / "~" / "dir").mkdir()
    [finding] = check_runtimes({"s": stdio("~/dir")}, tmp_path)
    assert finding.code == "command_missing"


def test_a_command_that_is_not_executable_is_missing(fake_bin: FakeBin, tmp_path: Path) -> None:
    (tmp_path / "srv.sh").write_text("#!/bin/sh\n")
    [finding] = check_runtimes({"s": stdio("./srv.sh")}, tmp_path)
    assert finding.code == "command_missing"


def test_a_cwd_set_by_a_placeholder_is_not_followed(fake_bin: FakeBin, tmp_path: Path) -> None:
    script(tmp_path / "srv.sh", "true")
    [finding] = check_runtimes({"s": stdio("./srv.sh", cwd="${WHERE}")}, tmp_path)
    assert finding.code == "command_found"


def test_commands_are_grouped_by_folder_command_and_path(fake_bin: FakeBin, tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        script(tmp_path / folder / "srv.sh", "true")
    fake_bin.add("my-server")
    entries = {
        "one": stdio("./srv.sh", cwd="a"),
        "two": stdio("./srv.sh", cwd="a"),
        "three": stdio("./srv.sh", cwd="b"),
        "four": stdio("my-server", cwd="a"),
        "five": stdio("my-server", cwd="b"),  # a bare name is the same wherever it starts
        "six": stdio("my-server", env={"PATH": str(fake_bin.path)}),
    }
    groups = sorted(f.servers for f in check_runtimes(entries, tmp_path))
    assert groups == [("four", "five"), ("one", "two"), ("six",), ("three",)]


@pytest.mark.parametrize("command", ["", "   "])
def test_a_blank_command_is_not_checked(fake_bin: FakeBin, tmp_path: Path, command: str) -> None:
    [finding] = check_runtimes({"s": stdio(command)}, tmp_path)
    assert finding.code == "runtimes_none"
    assert finding.message == "no enabled stdio server: no runtime needed"


def test_commands_set_by_placeholders_are_named_with_the_fix(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    fake_bin.add("my-server")
    entries = {
        "a": stdio("${BIN}"),
        "b": stdio("my-server", env={"PATH": "${HOME}/bin"}),
        "c": stdio("my-server"),
    }
    findings = check_runtimes(entries, tmp_path)
    assert [f.code for f in findings] == ["command_found", "command_unchecked"]
    assert findings[1] == Finding(
        "runtimes", "command_unchecked", "info",
        "the command of a and b is set by a placeholder (or found on a PATH that is): "
        "not checked",
        fix="start it once with 'mcpctl health NAME' to see whether it runs",
        servers=("a", "b"),
    )  # fmt: skip


# --- a config file nobody approved ----------------------------------------------------------


def test_an_untrusted_servers_own_program_is_not_run(fake_bin: FakeBin, tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    node = script(tmp_path / "bin" / "node", f': > "{tmp_path / "RAN"}"; echo v1.0.0')
    entries = {"repo": stdio("./bin/node"), "mine": stdio("./node", cwd="bin")}
    findings = RuntimeCheck(entries, tmp_path, untrusted=("repo",)).findings()
    assert findings[0] == Finding(
        "runtimes", "runtime_not_run", "info",
        f"./bin/node: {node}; its version is not asked: the config file is not trusted "
        "and repo waits for approval",
        fix="review the servers with 'mcpctl trust'", subject="./bin/node",
        servers=("repo",), details={"command": "./bin/node", "path": str(node)},
    )  # fmt: skip
    # The trusted server's, in a group of its own, is asked.
    assert findings[1].code == "runtime_found" and findings[1].servers == ("mine",)
    (tmp_path / "RAN").unlink()
    RuntimeCheck({"repo": stdio("./bin/node")}, tmp_path, untrusted=("repo",)).findings()
    assert not (tmp_path / "RAN").exists()


@pytest.mark.parametrize("command", ["~/node", "node"])
def test_an_untrusted_server_may_use_a_runtime_found_on_an_absolute_path(
    fake_bin: FakeBin, tmp_path: Path, command: str
) -> None:
    # "~/node" is a path (a folder named "~"), found from the config's folder: not run.
    (tmp_path / "~").symlink_to(fake_bin.path)
    fake_bin.add("node", "v20.0.0")
    [finding] = RuntimeCheck({"repo": stdio(command)}, tmp_path, untrusted=("repo",)).findings()
    expected = "runtime_found" if command == "node" else "runtime_not_run"
    assert finding.code == expected


def test_an_untrusted_bare_command_on_a_relative_path_is_not_run(
    fake_bin: FakeBin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rel").mkdir()
    script(tmp_path / "rel" / "node", f': > "{tmp_path / "RAN"}"; echo v1.0.0')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "rel")
    [finding] = RuntimeCheck({"repo": stdio("node")}, tmp_path, untrusted=("repo",)).findings()
    assert finding.code == "runtime_not_run" and not (tmp_path / "RAN").exists()


def test_trusted_servers_are_asked_when_others_are_not(fake_bin: FakeBin, tmp_path: Path) -> None:
    script(tmp_path / "node", "echo v3.0.0")
    [finding] = RuntimeCheck({"mine": stdio("./node")}, tmp_path, untrusted=("other",)).findings()
    assert finding.code == "runtime_found"


# --- what mutation testing found unpinned ---------------------------------------------------


def test_a_remote_entry_with_a_command_too_needs_no_runtime(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    entry = ServerEntry(url="https://example.com/mcp", command="npx", transport="streamable-http")
    [finding] = check_runtimes({"web": entry}, tmp_path)
    assert finding.code == "runtimes_none"


def test_a_lookup_is_given_no_more_than_its_timeout(fake_bin: FakeBin, tmp_path: Path) -> None:
    node = script(fake_bin.path / "node", 'echo "v1.0.0"')
    lookup = VersionLookup(timeout=0.0)
    assert lookup.run(str(node)) == Version(error="'node --version' did not answer within 0 s")


def test_a_lookup_reads_nothing_of_our_stdin(fake_bin: FakeBin, tmp_path: Path) -> None:
    node = script(fake_bin.path / "node", 'if read line; then echo "v1.0"; else echo "v2.0"; fi')
    with stdin_holding(b"a line\n"):
        assert VersionLookup().run(str(node)) == Version("2.0")


class Interrupted(BaseException):
    pass


def test_a_lookup_interrupted_while_waited_for_is_stopped(
    fake_bin: FakeBin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = script(fake_bin.path / "node", "exec /bin/sleep 30")
    lookup = VersionLookup()
    lookup.start([str(node)])
    proc, _ = lookup._running[str(node)]

    def interrupted(*_: object) -> Version:
        raise Interrupted

    monkeypatch.setattr(runtimes, "_collect", interrupted)
    with pytest.raises(Interrupted):
        lookup.run(str(node))
    assert proc.returncode is not None  # stopped and reaped


NO_SUCH_USER = "~mcpctl-no-such-user"


def test_a_bare_command_starting_with_a_tilde_is_looked_for_on_path(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    # As the spawn looks for it: no shell expands it, and it names no folder.
    tool = fake_bin.add("~srv")
    script(tmp_path / "~srv", "true")  # one in the config's folder is not it
    [finding] = check_runtimes({"s": stdio("~srv")}, tmp_path)
    assert (finding.code, finding.details["path"]) == ("command_found", str(tool))
    [finding] = check_runtimes({"s": stdio(NO_SUCH_USER)}, tmp_path)
    assert finding.message == f"{NO_SUCH_USER} is not on PATH; needed by s"


def test_a_home_folder_of_nobody_is_taken_as_written(fake_bin: FakeBin, tmp_path: Path) -> None:
    # Path.expanduser() raises for a user who does not exist: doctor never does.
    (tmp_path / NO_SUCH_USER).mkdir()
    tool = script(tmp_path / NO_SUCH_USER / "srv", "true")
    entries = {"s": stdio(f"{NO_SUCH_USER}/srv"), "c": stdio("./srv", cwd=NO_SUCH_USER)}
    findings = {f.servers[0]: f for f in check_runtimes(entries, tmp_path)}
    assert findings["s"].details["path"] == findings["c"].details["path"] == str(tool)


def test_stopping_a_lookup_whose_group_is_gone() -> None:
    proc = subprocess.Popen(
        ["/bin/true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    proc.communicate(timeout=10)
    runtimes._stop(proc)  # its group is no more: nothing to stop, nothing raised
    assert proc.returncode == 0


def test_a_lookup_whose_descendant_keeps_its_pipes_is_let_go_of(
    fake_bin: FakeBin, tmp_path: Path
) -> None:
    # The descendant left its group: killing the lookup's group leaves it, and our pipes, open.
    pids = tmp_path / "pids"
    node = script(
        fake_bin.path / "node",
        f'/usr/bin/setsid /bin/sleep 60 &\necho $! > "{pids}"\nexec /bin/sleep 60',
    )
    lookup = VersionLookup(timeout=0.3)
    results: list[object] = []

    def look() -> None:
        try:
            results.append(lookup.run(str(node)))
        except BaseException as exc:  # the test reports it
            results.append(exc)

    thread = threading.Thread(target=look, daemon=True)
    thread.start()
    try:
        thread.join(timeout=20)
        assert not thread.is_alive(), "the lookup waited for its descendant"
    finally:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (pids.exists() and pids.read_text().strip()):
            time.sleep(0.01)
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pids.read_text()), signal.SIGKILL)
        thread.join(timeout=20)
    assert results == [Version(error="'node --version' did not answer within 0.3 s")]


class Stopped:
    """A lookup as ``_stop`` sees it: its pipes held open by a descendant (``communicate``
    gives up), alive until waited for (a stuck kernel call) unless ``returncode`` says not."""

    pid = 4242

    def __init__(self, calls: list[object], returncode: int | None = None) -> None:
        self.calls, self.returncode = calls, returncode

    def kill(self) -> None:
        self.calls.append("kill")

    def communicate(self, timeout: float | None = None) -> tuple[bytes, bytes]:
        self.calls.append(("communicate", timeout))
        raise subprocess.TimeoutExpired("node", timeout or 0)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self) -> int:
        self.calls.append("wait")
        self.returncode = -9
        return -9


def test_stopping_a_lookup_whose_group_cannot_be_signalled(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []

    def killpg(pid: int, sig: int) -> None:
        calls.append(("killpg", pid, sig))
        raise PermissionError(1, "Operation not permitted")  # a descendant not ours to stop

    monkeypatch.setattr(os, "killpg", killpg)
    runtimes._stop(Stopped(calls))  # type: ignore[arg-type]
    # The lookup itself killed all the same, its pipes given a second, then waited for.
    assert calls == [("killpg", 4242, signal.SIGKILL), "kill", ("communicate", 1.0), "wait"]
    calls.clear()
    runtimes._stop(Stopped(calls, returncode=-9))  # type: ignore[arg-type]
    assert calls == [("killpg", 4242, signal.SIGKILL), "kill", ("communicate", 1.0)]
