"""mcpctl trust / untrust, and the refusal of every command on a file nobody approved.

The tests remove MCPCTL_TRUST and CI (the suite's fixture trusts every file), so what they see
is what a user gets after ``git clone``. tests/adversarial/test_untrusted_repo.py runs every
command that could start a server against a hostile repository.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from mcpctl.paths import Paths
from tests.conftest import MCPCTL, ROOT, SERVERS, Cli, write_config

PY = sys.executable
BASIC = {"command": PY, "args": [str(SERVERS / "basic.py")]}


@pytest.fixture(autouse=True)
def no_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPCTL_TRUST", raising=False)
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture
def repo(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A cloned repository with a config one level up from the working directory: a server
    that writes a file when it runs (with a secret the environment holds), and a real one."""
    root = isolated / "repo"
    sub = root / "sub"
    sub.mkdir(parents=True)
    canary = f"canary{uuid.uuid4().hex}"
    leak = root / "leak.txt"
    config = write_config(root / "external-mcps.json", {
        "notes": {"command": "sh", "args": ["-c", f'echo "$GH" > {leak}'],
                  "env": {"GH": "${GITHUB_TOKEN}", "LITERAL": "a-literal-value-kept-quiet"}},
        "basic": BASIC,
    })  # fmt: skip
    monkeypatch.chdir(sub)
    monkeypatch.setenv("GITHUB_TOKEN", canary)
    return {"root": root, "config": config, "leak": leak, "canary": canary}


def test_with_neither_set_a_walked_up_project_file_is_refused(
    cli: Cli, repo: dict[str, Any]
) -> None:
    r = cli("health")
    assert r.exit_code == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert lines == [
        f"error: {repo['config']} is not trusted: 2 servers wait for approval (notes, basic); "
        f"review them with 'mcpctl trust {repo['config']}'"
    ]
    assert not repo["leak"].exists()
    r = cli("health", "--json")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "untrusted_config"
    # What only reads works, and says so.
    r = cli("list", "--json")
    assert r.exit_code == 0 and [s["name"] for s in r.json["data"]["servers"]] == ["notes", "basic"]
    assert any("is not trusted: 2 servers wait" in w for w in r.json["warnings"])


def test_trust_shows_what_would_run_and_asks_for_yes(cli: Cli, repo: dict[str, Any]) -> None:
    r = cli("trust")
    assert r.exit_code == 2
    assert "there is no terminal to ask" in r.stderr
    assert f"mcpctl trust --yes {repo['config']}" in r.stderr
    out = r.stdout
    assert f"{repo['config']}: 2 servers to approve (2 new)" in out
    assert f"runs      sh -c 'echo \"$GH\" > {repo['leak']}'" in out
    assert "in        (the folder mcpctl runs in)" in out
    assert "env       GH, LITERAL" in out
    assert "secrets   GITHUB_TOKEN (environment or keyring)" in out
    assert "a-literal-value-kept-quiet" not in out + r.stderr
    assert repo["canary"] not in out + r.stderr
    assert not (Paths.from_env().state_dir / "trust.json").exists()
    # --json without --yes does not prompt either; --dry-run gives the review as data.
    r = cli("trust", "--json")
    assert r.exit_code == 2 and "--yes" in r.json["errors"][0]["hint"]
    r = cli("trust", "--dry-run", "--json")
    assert r.exit_code == 1
    data = r.json["data"]
    assert data["waiting"] == ["notes", "basic"] and data["file"] == str(repo["config"])
    notes = data["servers"][0]
    assert notes["env"] == ["GH", "LITERAL"] and notes["secrets"] == ["GITHUB_TOKEN"]
    assert notes["state"] == "new" and notes["cwd"] is None
    r = cli("trust", "--yes", "--json")
    assert r.exit_code == 0 and r.json["data"]["trusted"] == ["notes", "basic"]
    r = cli("health", "basic", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert r.json["warnings"] == []
    r = cli("trust")
    assert r.exit_code == 0 and "all 2 servers are trusted" in r.stderr


def test_a_change_asks_again_for_the_changed_server_only(cli: Cli, repo: dict[str, Any]) -> None:
    assert cli("trust", "--yes").exit_code == 0
    data = json.loads(repo["config"].read_text())
    data["notes"]["env"]["GH"] = "${AWS_SECRET_ACCESS_KEY}"  # a value as written
    data["basic"]["description"] = "cosmetic: asks nothing"
    write_config(repo["config"], data)
    r = cli("trust", "--dry-run")
    assert r.exit_code == 1
    assert "1 server to approve (1 changed); 1 already trusted" in r.stdout
    assert "notes (changed)" in r.stdout and "basic" not in r.stdout.replace(str(repo["root"]), "")
    assert "AWS_SECRET_ACCESS_KEY" in r.stdout
    assert cli("health", "basic").exit_code == 0
    r = cli("health")
    assert r.exit_code == 2 and "1 server waits for approval (notes)" in r.stderr
    assert not repo["leak"].exists()
    assert cli("trust", "--yes").exit_code == 0
    r = cli("trust", "--list", "--json")
    [listed] = r.json["data"]["files"]
    assert listed["path"] == str(repo["config"]) and sorted(listed["servers"]) == ["basic", "notes"]


def test_mcpctls_own_edits_keep_the_trust(cli: Cli, repo: dict[str, Any]) -> None:
    assert cli("trust", "--yes").exit_code == 0
    assert cli("add", "more", "--", PY, str(SERVERS / "basic.py")).exit_code == 0
    assert cli("disable", "notes").exit_code == 0
    assert cli("group", "add", "work", "basic", "more").exit_code == 0
    r = cli("health", "--json")
    assert r.exit_code == 0, r.stderr
    assert cli("undo").exit_code == 0 and cli("undo").exit_code == 0
    assert cli("trust", "--dry-run").exit_code == 0  # nothing waits


def test_an_import_into_an_untrusted_file_trusts_what_it_imports(
    cli: Cli, repo: dict[str, Any], tmp_path: Path
) -> None:
    source = write_config(tmp_path / "claude.json", {"mcpServers": {"imported": BASIC}})
    assert cli("import", "claude-desktop", str(source)).exit_code == 0
    r = cli("trust", "--dry-run", "--json")
    assert r.json["data"]["waiting"] == ["notes", "basic"]  # the repository's: still waiting
    assert cli("health", "imported", "--json").exit_code == 0


def test_untrust(cli: Cli, repo: dict[str, Any]) -> None:
    assert cli("trust", "--yes").exit_code == 0
    r = cli("untrust", "--json")
    assert r.exit_code == 0 and r.json["data"] == {"file": str(repo["config"]), "untrusted": True}
    assert cli("health", "basic").exit_code == 2
    r = cli("untrust")
    assert r.exit_code == 0 and "was not trusted" in r.stderr
    own = Paths.from_env().config_dir / "external-mcps.json"
    r = cli("untrust", str(own))
    assert r.exit_code == 2 and "your own config" in r.stderr


def test_the_users_own_file_needs_no_approval(cli: Cli, isolated: Path) -> None:
    own = Paths.from_env().config_dir / "external-mcps.json"
    own.parent.mkdir(parents=True)
    write_config(own, {"basic": BASIC})
    assert cli("health", "--json").exit_code == 0  # no project file: the user's own is used
    r = cli("trust")
    assert r.exit_code == 0 and "your own config" in r.stderr
    assert not (Paths.from_env().state_dir / "trust.json").exists()


@pytest.mark.parametrize(
    ("env", "trusted"),
    [({"CI": "true"}, True), ({"CI": "true", "MCPCTL_TRUST": "0"}, False),
     ({"MCPCTL_TRUST": "1"}, True), ({"MCPCTL_TRUST": "0"}, False), ({"CI": "false"}, False)],
)  # fmt: skip
def test_ci_and_mcpctl_trust(
    cli: Cli, repo: dict[str, Any], env: dict[str, str], trusted: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    r = cli("health", "basic", "--json")
    assert r.exit_code == (0 if trusted else 2), r.stdout
    r = cli("list", "--json")
    assert any("not trusted" in w for w in r.json["warnings"]) is not trusted


# --- the y/N question on a real terminal ---------------------------------------------------


def _mcpctl_env(repo: dict[str, Any]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MCPCTL_TRUST", "CI")}
    return {**env, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize(("answer", "code"), [("y", 0), ("yes", 0), ("n", 1), ("", 1)])
def test_the_question_on_a_terminal(repo: dict[str, Any], answer: str, code: int) -> None:
    if shutil.which("script") is None:
        pytest.skip("script (util-linux) is not installed")
    command = " ".join(shlex.quote(a) for a in [*MCPCTL, "trust"])
    done = subprocess.run(
        ["script", "-qec", command, "/dev/null"], input=f"{answer}\n", text=True,
        capture_output=True, env=_mcpctl_env(repo), cwd=Path.cwd(), timeout=120,
    )  # fmt: skip
    assert done.returncode == code, done.stdout + done.stderr
    assert "Trust these servers? [y/N]" in done.stdout
    assert "runs      sh -c" in done.stdout
    recorded = Paths.from_env().state_dir / "trust.json"
    assert recorded.exists() is (code == 0)


def test_piped_there_is_no_question(repo: dict[str, Any]) -> None:
    done = subprocess.run(
        [*MCPCTL, "trust"], input="y\n", text=True, capture_output=True,
        env=_mcpctl_env(repo), cwd=Path.cwd(), timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "[y/N]" not in done.stdout + done.stderr and "--yes" in done.stderr


# --- the launcher ----------------------------------------------------------------------------


def test_the_launcher_refuses_a_changed_entry(repo: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "ran.txt"
    write_config(repo["config"], {"s": {"command": "sh", "args": ["-c", f"echo ran > {out}"]}})
    env = _mcpctl_env(repo)

    def launch(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*MCPCTL, "run", "s", *args], text=True, capture_output=True,
                              env=env, cwd=Path.cwd(), timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip

    for args in (["--config", str(repo["config"])], []):  # named, and found upwards
        done = launch(*args)
        assert done.returncode == 2 and done.stdout == "" and not out.exists()
        assert done.stderr.count("\n") == 1 and "is not trusted: 1 server waits" in done.stderr
    subprocess.run([*MCPCTL, "trust", "--yes", str(repo["config"])], env=env, check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    done = launch("--config", str(repo["config"]))
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "ran\n"
    out.unlink()
    write_config(repo["config"], {"s": {"command": "sh", "args": ["-c", f"echo evil > {out}"]}})
    done = launch("--config", str(repo["config"]))
    assert done.returncode == 2 and not out.exists()
    assert done.stderr == (
        f"error: {repo['config']} is not trusted: 1 server waits for approval (s); review it "
        f"with 'mcpctl trust {repo['config']}'\n"
    )


def test_the_launchers_check_costs_the_users_own_file_nothing(
    repo: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "ran.txt"
    entry = {"s": {"command": "sh", "args": ["-c", f"echo ran > {out}"], "env": {"T": "${T}"}}}
    write_config(repo["config"], entry)
    paths = Paths.from_env()
    paths.config_dir.mkdir(parents=True)
    own = write_config(paths.config_dir / "external-mcps.json", entry)
    env = {**_mcpctl_env(repo), "T": "t"}
    subprocess.run([*MCPCTL, "trust", "--yes", str(repo["config"])], env=env, check=True,
                   capture_output=True, timeout=120)  # fmt: skip

    def launch(config: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PY, "-X", "importtime", "-m", "mcpctl", "run", "s", "--config", str(config)],
            text=True, capture_output=True, env=env, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    for config in (repo["config"], own):  # approved, and the user's own: the quick path
        done = launch(config)
        assert done.returncode == 0 and out.read_text() == "ran\n", done.stderr[-2000:]
        out.unlink()
        imported = {ln.split("|")[-1].strip() for ln in done.stderr.splitlines() if "|" in ln}
        assert "mcpctl.config.trustrecord" in imported
        assert not imported & {"hashlib", "typing", "dataclasses", "pathlib",
                               "mcpctl.config.model", "mcpctl.config.trust"}  # fmt: skip
    # The user's own file does not even read the record: a FIFO there does not matter.
    record = paths.state_dir / "trust.json"
    record.unlink()
    os.mkfifo(record)
    assert launch(own).returncode == 0 and out.exists()
    done = launch(repo["config"])  # nothing approved can be read: refused, at once
    assert done.returncode == 2 and "is not trusted" in done.stderr


# --- a client's project file ---------------------------------------------------------------


def test_a_clients_project_file_must_be_trusted_before_health_as(
    cli: Cli, repo: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    helper_ran = tmp_path / "helper-ran"
    write_config(repo["config"], {})
    mcp = write_config(repo["root"] / "sub" / ".mcp.json", {"mcpServers": {
        "basic": {**BASIC, "type": "stdio"},
        "hooked": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                   "headersHelper": f"touch {helper_ran}"},
    }})  # fmt: skip
    r = cli("health", "--as", "claude-code", "--json")
    assert r.exit_code == 2
    assert r.json["errors"][0]["code"] == "untrusted_config"
    assert f"mcpctl trust --as claude-code {mcp}" in r.json["errors"][0]["message"]
    assert not helper_ran.exists()
    r = cli("trust", str(mcp), "--dry-run", "--json")  # recognised by its path
    assert r.exit_code == 1 and r.json["data"]["client"] == "claude-code"
    r = cli("trust", "--as", "claude-code", "--dry-run", "--json")  # the file health --as reads
    assert r.exit_code == 1 and r.json["data"]["file"] == str(mcp)
    hooked = r.json["data"]["servers"][1]
    assert hooked["headers_helper"] == f"touch {helper_ran}" and hooked["runs"] is None
    assert cli("trust", str(mcp), "--yes").exit_code == 0
    r = cli("health", "--as", "claude-code", "--json")
    assert r.exit_code == 1  # probed: "hooked" does not answer
    assert helper_ran.exists()
    # A change of the helper asks again.
    helper_ran.unlink()
    data = json.loads(mcp.read_text())
    data["mcpServers"]["hooked"]["headersHelper"] = f"touch {helper_ran}; true"
    write_config(mcp, data)
    assert cli("health", "--as", "claude-code").exit_code == 2
    assert not helper_ran.exists()


def test_a_clients_user_file_is_the_users_own(
    cli: Cli, isolated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    (home / ".cursor").mkdir(parents=True)
    cursor = write_config(home / ".cursor" / "mcp.json", {"mcpServers": {"basic": BASIC}})
    r = cli("health", "--as", "cursor", str(cursor), "--json")
    assert r.exit_code == 0, r.stdout
