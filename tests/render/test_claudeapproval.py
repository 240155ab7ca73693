"""Which servers of a project's .mcp.json Claude Code starts: its approvals, whose word counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpctl.render.base import Places
from mcpctl.render.claudeapproval import Approval, claude_approvals, settings_files


def places(tmp: Path, **environ: str) -> Places:
    return Places(home=tmp / "home", cwd=tmp / "proj", system="linux", environ=environ)


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    write(folder / ".mcp.json", {"mcpServers": {}})
    return folder


def trust(tmp: Path, folder: Path, accepted: Any = True) -> None:
    write(tmp / "home" / ".claude.json",
          {"projects": {str(folder): {"hasTrustDialogAccepted": accepted}}})  # fmt: skip


def test_only_a_projects_mcp_json_needs_approval(tmp_path: Path) -> None:
    assert claude_approvals(tmp_path / "home" / ".claude.json", ["a"], places(tmp_path)) is None
    assert claude_approvals(tmp_path / "mcp.json", ["a"], places(tmp_path)) is None


def test_settings_files_are_the_users_then_the_projects(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    assert settings_files(project, places(tmp_path)) == [
        tmp_path / "home" / ".claude" / "settings.json",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
    ]
    moved = places(tmp_path, CLAUDE_CONFIG_DIR=f" {tmp_path / 'conf'} ")
    assert settings_files(project, moved)[0] == tmp_path / "conf" / "settings.json"
    assert settings_files(project, places(tmp_path, CLAUDE_CONFIG_DIR="  "))[0] == (
        tmp_path / "home" / ".claude" / "settings.json"
    )


def test_a_server_nobody_answered_for_is_pending(tmp_path: Path, project: Path) -> None:
    found = claude_approvals(project / ".mcp.json", ["a", "b"], places(tmp_path))
    assert found == {"a": Approval("pending"), "b": Approval("pending")}


def test_the_users_settings_approve_names_or_all(tmp_path: Path, project: Path) -> None:
    user = write(tmp_path / "home" / ".claude" / "settings.json",
                 {"enabledMcpjsonServers": ["a", 3, "my.server"]})  # fmt: skip
    found = claude_approvals(project / ".mcp.json", ["a", "my:server", "c"], places(tmp_path))
    assert found == {
        "a": Approval("approved", f"{user}: enabledMcpjsonServers"),
        "my:server": Approval("approved", f"{user}: enabledMcpjsonServers"),  # both my_server
        "c": Approval("pending"),
    }
    write(user, {"enabledMcpjsonServers": ["my_server", "DB"]})
    found = claude_approvals(project / ".mcp.json", ["my.server", "FS", "db"], places(tmp_path))
    assert found == {
        "my.server": Approval("approved", f"{user}: enabledMcpjsonServers"),
        "FS": Approval("pending"),  # capitals are letters: DB is not FS
        "db": Approval("pending"),  # nor db: the case counts
    }
    write(user, {"enableAllProjectMcpServers": True, "enabledMcpjsonServers": ["a"]})
    found = claude_approvals(project / ".mcp.json", ["a", "c"], places(tmp_path))
    assert found == {
        "a": Approval("approved", f"{user}: enableAllProjectMcpServers"),
        "c": Approval("approved", f"{user}: enableAllProjectMcpServers"),
    }
    write(user, {"enableAllProjectMcpServers": "true", "enabledMcpjsonServers": "a"})
    found = claude_approvals(project / ".mcp.json", ["a"], places(tmp_path))
    assert found == {"a": Approval("pending")}, "only true itself, only a list of names"


def test_claude_config_dir_moves_the_users_settings(tmp_path: Path, project: Path) -> None:
    conf = tmp_path / "conf"
    user = write(conf / "settings.json", {"enabledMcpjsonServers": ["a"]})
    write(tmp_path / "home" / ".claude" / "settings.json", {"disabledMcpjsonServers": ["a"]})
    found = claude_approvals(project / ".mcp.json", ["a"],
                             places(tmp_path, CLAUDE_CONFIG_DIR=str(conf)))  # fmt: skip
    assert found == {"a": Approval("approved", f"{user}: enabledMcpjsonServers")}


def test_a_refusal_anywhere_wins(tmp_path: Path, project: Path) -> None:
    write(tmp_path / "home" / ".claude" / "settings.json",
          {"enableAllProjectMcpServers": True})  # fmt: skip
    shared = write(project / ".claude" / "settings.json", {"disabledMcpjsonServers": ["a"]})
    found = claude_approvals(project / ".mcp.json", ["a", "b"], places(tmp_path))
    assert found is not None
    assert found["a"] == Approval("rejected", f"{shared}: disabledMcpjsonServers")
    assert found["b"].state == "approved"


def test_the_projects_settings_count_once_the_folder_is_trusted(
    tmp_path: Path, project: Path
) -> None:
    shared = write(project / ".claude" / "settings.json", {"enabledMcpjsonServers": ["a"]})
    mcp = project / ".mcp.json"
    assert claude_approvals(mcp, ["a"], places(tmp_path)) == {"a": Approval("pending")}
    trust(tmp_path, project, accepted="yes")
    assert claude_approvals(mcp, ["a"], places(tmp_path)) == {"a": Approval("pending")}
    trust(tmp_path, tmp_path / "elsewhere")
    assert claude_approvals(mcp, ["a"], places(tmp_path)) == {"a": Approval("pending")}
    trust(tmp_path, project)
    approved = {"a": Approval("approved", f"{shared}: enabledMcpjsonServers")}
    assert claude_approvals(mcp, ["a"], places(tmp_path)) == approved
    # the trust record is read from CLAUDE_CONFIG_DIR when it is set
    conf = tmp_path / "conf"
    moved = places(tmp_path, CLAUDE_CONFIG_DIR=str(conf))
    assert claude_approvals(mcp, ["a"], moved) == {"a": Approval("pending")}
    write(conf / ".claude.json", {"projects": {str(project): {"hasTrustDialogAccepted": True}}})
    assert claude_approvals(mcp, ["a"], moved) == approved


def test_trusting_the_git_root_or_the_real_path_trusts_the_project(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    project = root / "sub"
    shared = write(project / ".claude" / "settings.json", {"enabledMcpjsonServers": ["a"]})
    write(project / ".mcp.json", {})
    git(root, "init", "-q")
    trust(tmp_path, root)
    approved = {"a": Approval("approved", f"{shared}: enabledMcpjsonServers")}
    assert claude_approvals(project / ".mcp.json", ["a"], places(tmp_path)) == approved
    link = tmp_path / "link"
    link.symlink_to(project)
    trust(tmp_path, project)
    linked = link / ".claude" / "settings.json"
    assert claude_approvals(link / ".mcp.json", ["a"], places(tmp_path)) == {
        "a": Approval("approved", f"{linked}: enabledMcpjsonServers")
    }
    trust(tmp_path, link)  # the path as the user opened it
    assert claude_approvals(link / ".mcp.json", ["a"], places(tmp_path)) == {
        "a": Approval("approved", f"{linked}: enabledMcpjsonServers")
    }
    trust(tmp_path, project)  # the project itself, below its git root
    assert claude_approvals(project / ".mcp.json", ["a"], places(tmp_path)) == approved
    linked_root = tmp_path / "linked-repo"
    linked_root.symlink_to(root)
    trust(tmp_path, linked_root)  # the git root as reached through a link
    assert claude_approvals(linked_root / "sub" / ".mcp.json", ["a"], places(tmp_path)) == {
        "a": Approval(
            "approved",
            f"{linked_root / 'sub' / '.claude' / 'settings.json'}: enabledMcpjsonServers",
        )
    }
    write(tmp_path / "home" / ".claude.json", {"projects": [str(project)]})
    assert claude_approvals(project / ".mcp.json", ["a"], places(tmp_path)) == {
        "a": Approval("pending")
    }


def test_an_untrusted_projects_local_settings_count_when_git_does_not_track_them(
    tmp_path: Path, project: Path
) -> None:
    local = write(project / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["a"]})
    write(project / ".claude" / "settings.json", {"enabledMcpjsonServers": ["b"]})
    mcp = project / ".mcp.json"
    pending = {"a": Approval("pending"), "b": Approval("pending")}
    assert claude_approvals(mcp, ["a", "b"], places(tmp_path)) == pending, "not a work tree"
    git(project, "init", "-q")
    mine = {"a": Approval("approved", f"{local}: enabledMcpjsonServers"), "b": Approval("pending")}
    assert claude_approvals(mcp, ["a", "b"], places(tmp_path)) == mine
    git(project, "add", "-f", ".claude/settings.local.json")  # it came with the clone
    assert claude_approvals(mcp, ["a", "b"], places(tmp_path)) == pending


def test_git_is_asked_quietly_and_as_claude_code_asks(
    tmp_path: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    write(project / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["a"]})
    mcp = project / ".mcp.json"
    git(project, "init", "-q")
    marker = tmp_path / "fsmonitor-ran"
    monitor = write(tmp_path / "fsmonitor.sh", f"#!/bin/sh\necho ran >> {marker}\n")
    monitor.chmod(0o755)
    git(project, "config", "core.fsmonitor", str(monitor))
    capfd.readouterr()
    found = claude_approvals(mcp, ["a"], places(tmp_path))
    assert found is not None and found["a"].state == "approved"
    assert not marker.exists(), "the repository's fsmonitor is not run"
    git(project, "add", "-f", ".claude/settings.local.json")  # this git runs it
    marker.unlink()
    capfd.readouterr()
    # the user's own GIT_LITERAL_PATHSPECS does not turn the case-blind pathspec into a name
    monkeypatch.setenv("GIT_LITERAL_PATHSPECS", "1")
    assert claude_approvals(mcp, ["a"], places(tmp_path)) == {"a": Approval("pending")}
    assert capfd.readouterr() == ("", ""), "git's output is not shown"
    assert not marker.exists(), "the repository's fsmonitor is not run"


def test_a_git_that_cannot_run_or_hangs(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = write(project / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["a"]})
    fake = tmp_path / "bin" / "git"
    write(fake, "not a program\n").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    mcp = project / ".mcp.json"
    approved = {"a": Approval("approved", f"{local}: enabledMcpjsonServers")}
    assert claude_approvals(mcp, ["a"], places(tmp_path)) == approved, "as Claude Code: counts"
    # given up after two seconds (it would say "not tracked" after thirty): does not count
    write(fake, f"#!{sys.executable}\nimport sys, time\ntime.sleep(30)\nsys.exit(1)\n")
    assert claude_approvals(mcp, ["a"], places(tmp_path)) == {"a": Approval("pending")}


def test_local_settings_without_git_count(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = write(project / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["a"]})
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    found = claude_approvals(project / ".mcp.json", ["a"], places(tmp_path))
    assert found == {"a": Approval("approved", f"{local}: enabledMcpjsonServers")}


@pytest.mark.parametrize("how", ["folder link", "file link", "nested git"])
def test_local_settings_that_may_not_be_the_users_do_not_count(
    tmp_path: Path, project: Path, how: str
) -> None:
    git(project, "init", "-q")
    data = {"enabledMcpjsonServers": ["a"]}
    if how == "folder link":
        write(tmp_path / "other" / "settings.local.json", data)
        (project / ".claude").symlink_to(tmp_path / "other")
    elif how == "file link":
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.local.json").symlink_to(
            write(tmp_path / "other.json", data)
        )
    else:
        write(project / ".claude" / "settings.local.json", data)
        (project / ".claude" / ".git").mkdir()
    found = claude_approvals(project / ".mcp.json", ["a"], places(tmp_path))
    assert found == {"a": Approval("pending")}


def test_unreadable_settings_count_as_empty_with_a_warning(tmp_path: Path, project: Path) -> None:
    user = write(tmp_path / "home" / ".claude" / "settings.json", "[1]")
    shared = write(project / ".claude" / "settings.json", "{not json")
    claude = write(tmp_path / "home" / ".claude.json", "null")
    local = project / ".claude" / "settings.local.json"
    local.mkdir(parents=True)
    warnings: list[str] = []
    found = claude_approvals(project / ".mcp.json", ["a"], places(tmp_path), warnings)
    assert found == {"a": Approval("pending")}
    assert len(warnings) == 4
    assert warnings[0] == f"{user}: not a JSON object; its MCP approvals are not read"
    assert warnings[1] == (
        f"{shared}: Expecting property name enclosed in double quotes (line 1, column 2); "
        "its MCP approvals are not read"
    )
    assert warnings[2] == (
        f"{local}: {local} is a directory, not a regular file; its MCP approvals are not read"
    )
    assert warnings[3] == (
        f"{claude}: not a JSON object; the folders Claude Code trusts are not read"
    )
    assert claude_approvals(project / ".mcp.json", ["a"], places(tmp_path)) == found
    assert os.path.isdir(local)


def test_settings_that_are_not_utf8_are_named_in_the_warning(tmp_path: Path, project: Path) -> None:
    user = tmp_path / "home" / ".claude" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_bytes(b'{"\xff": 1}')
    warnings: list[str] = []
    claude_approvals(project / ".mcp.json", ["a"], places(tmp_path), warnings)
    assert warnings == [
        f"{user}: {user}:1:3: not UTF-8 text (byte 0xff); its MCP approvals are not read"
    ]


def test_git_is_given_two_seconds(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Claude Code: a git that has not answered within 2 s (0.2 s here) is given up on."""
    write(project / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["a"]})
    fake = tmp_path / "bin" / "git"
    write(fake, f"#!{sys.executable}\nimport sys, time\ntime.sleep(30)\nsys.exit(1)\n").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    limits: list[object] = []
    real_run = subprocess.run

    def run(*args: Any, **kwargs: Any) -> Any:
        limits.append(kwargs.get("timeout"))
        return real_run(*args, **{**kwargs, "timeout": 0.2})

    monkeypatch.setattr(subprocess, "run", run)
    found = claude_approvals(project / ".mcp.json", ["a"], places(tmp_path))
    assert found == {"a": Approval("pending")}
    assert limits == [2]
