"""snapshot save and snapshot diff through the CLI: locations, every flag, the rug pull, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpctl.cli.snapshot import NO_EARLIER, diff_lines
from mcpctl.snapshot.diff import DefinitionChange, ServerChange, SnapshotDiff
from tests.conftest import SERVERS, Cli, write_config
from tests.snapshot.test_sarif import check_sarif
from tests.test_tokencount import independent_tokens

PY = sys.executable
SHIFTY = {"command": PY, "args": [str(SERVERS / "shifty.py")], "inherit_env": ["SHIFTY_MODE"]}
TIME = {"command": "uvx", "args": ["mcp-server-time"]}
GITHUB = {"command": "npx", "args": ["-y", "github"], "env": {"TOKEN": "${GITHUB_TOKEN}"}}
SECRET = "ghp_literalSecretValue1234567890abcdef"


def default_snapshot(isolated: Path) -> Path:
    return Path(os.environ["MCPCTL_HOME"]) / "state" / "last-known-mcps.json"


def names(path: Path) -> list[str]:
    return [m["name"] for m in json.loads(path.read_text())["mcps"]]


# --- save ------------------------------------------------------------------------------


def test_save_writes_the_enabled_servers_to_the_state_dir(
    cli: Cli, config_path: Path, isolated: Path
) -> None:
    write_config(config_path, {"time": TIME, "github": GITHUB, "off": {**TIME, "enabled": False}})
    r = cli("snapshot", "save", "--json")
    assert r.exit_code == 0, r.stderr
    target = default_snapshot(isolated)
    assert r.json["data"] == {"file": str(target), "timestamp": r.json["data"]["timestamp"],
                              "servers": 2, "probed": False, "probe_failed": [],
                              "secrets_redacted": []}  # fmt: skip
    assert names(target) == ["github", "time"]
    r = cli("snapshot", "save")
    assert r.stdout == "" and f"Wrote {target} (2 servers)" in r.stderr


def test_where_save_writes(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(config_path, {"time": TIME})
    env_file, flag_file, out_file = (
        tmp_path / "env.json",
        tmp_path / "flag.json",
        tmp_path / "o.json",
    )
    monkeypatch.setenv("MCPCTL_SNAPSHOT", str(env_file))
    assert cli("snapshot", "save").exit_code == 0 and env_file.exists()
    assert cli("snapshot", "save", "--snapshot", str(flag_file)).exit_code == 0
    assert flag_file.exists()
    assert cli("snapshot", "save", "--snapshot", str(flag_file), "-o", str(out_file)).exit_code == 0
    assert out_file.exists()


def test_save_never_writes_a_secret(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    write_config(config_path, {"api": {"url": "https://example.com/mcp",
                                       "headers": {"Authorization": f"Bearer {SECRET}"}}})  # fmt: skip
    lock = tmp_path / "lock.json"
    assert cli("snapshot", "save", "-o", str(lock)).exit_code == 0
    assert SECRET not in lock.read_text()


def test_save_probe_records_what_servers_offer_and_failures(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    write_config(config_path, {"shifty": SHIFTY, "gone": {"command": "/no/such/binary"}})
    lock = tmp_path / "mcp-lock.json"
    r = cli("snapshot", "save", "--probe", "-o", str(lock), env={"SHIFTY_MODE": ""})
    assert r.exit_code == 0, r.stderr
    assert "(2 servers, 1 probed, 1 failed)" in r.stderr
    assert "gone: probe failed: command_not_found" in r.stderr
    mcps = {m["name"]: m for m in json.loads(lock.read_text())["mcps"]}
    assert mcps["gone"]["probe"] == {"error": "command_not_found"}
    probe = mcps["shifty"]["probe"]
    assert [t["name"] for t in probe["tools"]] == ["add", "lookup"]
    assert probe["prompts"][0]["name"] == "greet"
    assert probe["resource_templates"][0]["definition"]["uriTemplate"] == "memo://{key}"
    assert probe["instructions"].startswith("sha256:")
    r = cli("snapshot", "save", "--probe", "-o", str(lock), "--json")
    assert r.json["data"]["probe_failed"] == ["gone"]
    assert any("gone: probe failed" in w for w in r.json["warnings"])


def test_internal_servers_are_recorded_as_internal(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    root = tmp_path / "mcps"
    (root / "guardian").mkdir(parents=True)
    (root / "guardian" / "package.json").write_text(json.dumps(
        {"name": "@x/guardian", "annabelle": {"mcpName": "guardian"}}
    ))  # fmt: skip
    write_config(config_path, {"time": TIME, "guardian": TIME})
    lock = tmp_path / "lock.json"
    r = cli("snapshot", "save", "-o", str(lock), "--internal-root", str(root))
    assert r.exit_code == 0
    types = {m["name"]: m["type"] for m in json.loads(lock.read_text())["mcps"]}
    assert types == {"guardian": "internal", "time": "external"}
    assert "has the name of an internal one" in r.stderr


# --- diff ------------------------------------------------------------------------------


def test_diff_without_an_earlier_snapshot_is_empty_with_a_note(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"time": TIME, "github": GITHUB})
    r = cli("snapshot", "diff", "--exit-code")
    assert r.exit_code == 0 and r.stdout == ""
    assert NO_EARLIER in r.stderr and "+ time" not in r.stdout
    r = cli("snapshot", "diff", "--json")
    data = r.json["data"]
    assert data["first"] and data["empty"] and data["added"] == [] and data["notes"] == [NO_EARLIER]
    assert data["earlier"] is None


def test_diff_shows_added_removed_and_reconfigured(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"time": TIME, "github": GITHUB})
    assert cli("snapshot", "save").exit_code == 0
    assert cli("snapshot", "diff", "--exit-code").exit_code == 0
    write_config(config_path, {"github": {**GITHUB, "args": ["-y", "github@2"],
                                          "env": {"TOKEN": "${OTHER}"}},
                               "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}})  # fmt: skip
    r = cli("snapshot", "diff")
    assert r.exit_code == 0
    assert r.stdout.splitlines() == ["+ fetch", "- time", "~ github (fields: args, env)"]
    assert "changes since" in r.stderr and "1 added, 1 removed, 1 changed" in r.stderr
    assert cli("snapshot", "diff", "--exit-code").exit_code == 1
    by_format, by_flag = (
        cli("snapshot", "diff", "--format", "json").json,
        cli("snapshot", "diff", "--json").json,
    )
    assert by_format["data"]["changed"][0]["fields"] == ["args", "env"]
    for doc in (by_format, by_flag):
        del doc["data"]["now"]
    assert by_format == by_flag and by_flag["command"] == "snapshot diff"


def test_diff_save_records_the_new_state(cli: Cli, config_path: Path, isolated: Path) -> None:
    write_config(config_path, {"time": TIME})
    r = cli("snapshot", "diff", "--save")
    assert r.exit_code == 0 and default_snapshot(isolated).exists()
    write_config(config_path, {"time": TIME, "github": GITHUB})
    r = cli("snapshot", "diff", "--save", "--exit-code", "--json")
    assert r.exit_code == 1 and r.json["data"]["added"] == ["github"]
    assert r.json["data"]["saved"] == str(default_snapshot(isolated))
    assert cli("snapshot", "diff", "--exit-code").exit_code == 0


def test_diff_against_a_lock_file_and_save_into_it(
    cli: Cli, config_path: Path, tmp_path: Path, isolated: Path
) -> None:
    lock = tmp_path / "mcp-lock.json"
    write_config(config_path, {"time": TIME})
    assert cli("snapshot", "save", "-o", str(lock)).exit_code == 0
    write_config(config_path, {"time": TIME, "github": GITHUB})
    r = cli("snapshot", "diff", "--against", str(lock), "--save", "--exit-code")
    assert r.exit_code == 1 and r.stdout == "+ github\n"
    assert names(lock) == ["github", "time"]
    assert not default_snapshot(isolated).exists()


def test_diff_reads_the_orchestrators_plain_file(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "last-known-mcps.json"
    plain.write_text(json.dumps({"timestamp": "2025-01-01T00:00:00.000Z", "mcps": [
        {"name": "time", "type": "external"}, {"name": "old", "type": "external"}]}))  # fmt: skip
    write_config(config_path, {"time": TIME, "github": GITHUB})
    r = cli("snapshot", "diff", "--snapshot", str(plain))
    assert r.exit_code == 0 and r.stdout.splitlines() == ["+ github", "- old"]
    assert "changes since 2025-01-01T00:00:00.000Z" in r.stderr


def test_the_snapshot_variable_is_the_default(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "env-snapshot.json"
    monkeypatch.setenv("MCPCTL_SNAPSHOT", str(path))
    write_config(config_path, {"time": TIME})
    assert cli("snapshot", "diff", "--save").exit_code == 0 and path.exists()


@pytest.mark.parametrize(
    ("content", "says"),
    [("{oops", "is not a snapshot: not valid JSON"), ('{"servers": {}}', "is not a snapshot")],
)
def test_a_bad_lock_file_is_a_usage_error(
    cli: Cli, config_path: Path, tmp_path: Path, content: str, says: str
) -> None:
    write_config(config_path, {"time": TIME})
    lock = tmp_path / "mcp-lock.json"
    lock.write_text(content)
    for args in (["--against", str(lock)], ["--snapshot", str(lock)]):
        r = cli("snapshot", "diff", *args)
        assert r.exit_code == 2, r.stderr
        assert f"error: {lock} {says}" in r.stderr and "Traceback" not in r.stderr
    r = cli("snapshot", "diff", "--against", str(lock), "--json")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "usage_error"


def test_a_missing_lock_file_named_with_against_is_an_error(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    write_config(config_path, {"time": TIME})
    r = cli("snapshot", "diff", "--against", str(tmp_path / "none.json"))
    assert r.exit_code == 2
    assert "there is no snapshot at" in r.stderr and "snapshot save --probe -o" in r.stderr


def test_option_errors(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"time": TIME})
    r = cli("snapshot", "diff", "--format", "sarif", "--json")
    assert r.exit_code == 2 and "choose one" in r.stdout + r.stderr
    assert cli("snapshot", "diff", "--format", "xml").exit_code == 2
    r = cli("snapshot", "save", "--probe", "--timeout", "soon")
    assert r.exit_code == 2 and "is not a duration" in r.stderr
    assert cli("snapshot", "save", "--concurrency", "0").exit_code == 2
    r = cli("snapshot")
    assert "save" in r.stdout and "diff" in r.stdout


def test_a_broken_config_is_reported(cli: Cli, config_path: Path) -> None:
    write_config(config_path, "{broken")
    r = cli("snapshot", "diff")
    assert r.exit_code == 2 and "Traceback" not in r.stderr


def test_diff_sarif(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    lock = tmp_path / "mcp-lock.json"
    write_config(config_path, {"time": TIME, "old": GITHUB})
    assert cli("snapshot", "save", "-o", str(lock)).exit_code == 0
    write_config(config_path, {"time": {**TIME, "args": ["mcp-server-time", "--tz=UTC"]},
                               "github": GITHUB})  # fmt: skip
    r = cli("snapshot", "diff", "--against", str(lock), "--format", "sarif", "--exit-code")
    assert r.exit_code == 1
    run = check_sarif(json.loads(r.stdout))
    results = {res["ruleId"]: res for res in run["results"]}
    assert set(results) == {"server-added", "server-removed", "server-changed"}
    added = results["server-added"]["locations"][0]["physicalLocation"]
    assert added["artifactLocation"]["uri"] == "external-mcps.json"
    line = config_path.read_text().splitlines().index('  "github": {') + 1
    assert added["region"] == {"startLine": line, "startColumn": 3}
    removed = results["server-removed"]["locations"][0]["physicalLocation"]
    assert removed["artifactLocation"]["uri"].endswith("mcp-lock.json")
    # First boot: an empty log, the note as a notification (and on stderr).
    r = cli("snapshot", "diff", "--format", "sarif")
    run = check_sarif(json.loads(r.stdout))
    assert run["results"] == [] and NO_EARLIER in r.stderr
    assert run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"] == NO_EARLIER


# --- probing: the rug pull ---------------------------------------------------------------


def test_a_rug_pull_fails_the_gate(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    lock = tmp_path / "mcp-lock.json"
    write_config(config_path, {"shifty": SHIFTY})
    assert (
        cli("snapshot", "save", "--probe", "-o", str(lock), env={"SHIFTY_MODE": ""}).exit_code == 0
    )
    gate = ("snapshot", "diff", "--probe", "--against", str(lock), "--exit-code")
    r = cli(*gate, env={"SHIFTY_MODE": ""})
    assert r.exit_code == 0 and r.stdout == "", r.stdout + r.stderr
    r = cli(*gate, env={"SHIFTY_MODE": "poison"})
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert lines[0] == "~ shifty"
    assert lines[1].startswith("! shifty: tool lookup changed (description, inputSchema")
    assert lines[2] == "    description was: Look up the weather of a city."
    assert lines[3].startswith("    description now: Look up the weather of a city. <IMPORTANT>")
    assert lines[-1].startswith("~ shifty: tokens ")  # the poison costs tokens too
    assert "definitions changed in place on shifty" in r.stderr
    r = cli(*gate, "--json", env={"SHIFTY_MODE": "poison,rename,extra"})
    change = r.json["data"]["changed"][0]
    assert change["renamed"] == {"tools": [{"old": "add", "new": "sum"}]}
    assert change["added"] == {"tools": ["delete_everything"]}
    assert r.json["data"]["definitions_changed"] == ["shifty"]
    assert r.json["data"]["tools_compared"] is True
    r = cli(*gate, "--format", "sarif", env={"SHIFTY_MODE": "poison"})
    run = check_sarif(json.loads(r.stdout))
    assert [res["ruleId"] for res in run["results"]] == ["definition-changed"]
    assert run["results"][0]["level"] == "error"


def test_renames_and_new_tools_read_as_such(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    lock = tmp_path / "mcp-lock.json"
    write_config(config_path, {"shifty": SHIFTY})
    cli("snapshot", "save", "--probe", "-o", str(lock), env={"SHIFTY_MODE": ""})
    r = cli("snapshot", "diff", "--probe", "--against", str(lock),
            env={"SHIFTY_MODE": "rename,extra,instructions"})  # fmt: skip
    # The tokens on both sides, counted here from the definitions each snapshot stored.
    after = tmp_path / "after.json"
    cli("snapshot", "save", "--probe", "-o", str(after),
        env={"SHIFTY_MODE": "rename,extra,instructions"})  # fmt: skip
    old, new = (independent_tokens(_stored_tools(path)) for path in (lock, after))
    assert old != new
    assert r.stdout.splitlines() == [
        "~ shifty", "    + tool delete_everything", "    tool renamed add -> sum",
        "! shifty: instructions changed",
        f"~ shifty: tokens {old:,} → {new:,} ({new - old:+,})",
    ]  # fmt: skip
    r = cli("snapshot", "diff", "--probe", "--json", "--against", str(lock),
            env={"SHIFTY_MODE": "rename,extra,instructions"})  # fmt: skip
    assert r.json["data"]["changed"][0]["tokens"] == {
        "encoding": "o200k_base", "old": old, "new": new, "change": new - old,
    }  # fmt: skip


def _stored_tools(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [t["definition"] for t in data["mcps"][0]["probe"]["tools"]]


def test_a_failed_probe_is_not_everything_removed(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    lock = tmp_path / "mcp-lock.json"
    write_config(config_path, {"shifty": SHIFTY})
    cli("snapshot", "save", "--probe", "-o", str(lock), env={"SHIFTY_MODE": ""})
    # The same configuration, but the server now fails to start.
    data = json.loads(lock.read_text())
    write_config(
        config_path, {"shifty": {**SHIFTY, "args": [str(SERVERS / "misbehave.py"), "exit"]}}
    )
    r = cli("snapshot", "diff", "--probe", "--against", str(lock), "--exit-code")
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        "~ shifty (fields: args)", "    ? probe failed (server_exited): what it offers is unknown",
    ]  # fmt: skip
    assert "- tool" not in r.stdout and "shifty: probe failed: server_exited" in r.stderr
    assert json.loads(lock.read_text()) == data  # not saved


def test_tools_are_not_compared_without_probe(cli: Cli, config_path: Path, tmp_path: Path) -> None:
    lock = tmp_path / "mcp-lock.json"
    write_config(config_path, {"shifty": SHIFTY})
    cli("snapshot", "save", "--probe", "-o", str(lock), env={"SHIFTY_MODE": ""})
    r = cli(
        "snapshot", "diff", "--against", str(lock), "--exit-code", env={"SHIFTY_MODE": "poison"}
    )
    assert r.exit_code == 0 and r.stdout == ""
    assert "tools were not compared" in r.stderr and "add --probe" in r.stderr
    r = cli("snapshot", "diff", "--against", str(lock), "--json")
    assert r.json["data"]["tools_compared"] is False
    assert any("tools were not compared" in w for w in r.json["warnings"])
    # Saving would lose the pins: refused.
    r = cli("snapshot", "diff", "--against", str(lock), "--save")
    assert r.exit_code == 2 and "would drop the probe data" in r.stderr
    # Probing against a snapshot without probe data: nothing to compare tools with.
    plain = tmp_path / "plain.json"
    cli("snapshot", "save", "-o", str(plain))
    r = cli("snapshot", "diff", "--probe", "--against", str(plain), env={"SHIFTY_MODE": ""})
    assert r.exit_code == 0 and "has no probe data" in r.stderr


# --- the human view -------------------------------------------------------------------------


def test_changed_text_is_shown_escaped_and_cut() -> None:
    long = "x" * 2500
    change = ServerChange("s", changed=[DefinitionChange("tools", "t", {
        "description": ("plain", "evil\x1b[2J\nnext line"),
        "inputSchema": ({"type": "object"}, None),
        "title": (None, long),
    })])  # fmt: skip
    lines = diff_lines(SnapshotDiff(changed=[change]))
    assert lines[1] == "! s: tool t changed (description, inputSchema, title)"
    assert lines[3] == "    description now: evil\\x1b[2J\\nnext line"
    assert lines[4] == '    inputSchema was: {"type": "object"}'
    assert lines[5] == "    inputSchema now: (none)"
    assert lines[7].endswith("… (500 more characters; see --json)")


# --- cost ------------------------------------------------------------------------------------

PROBE = """
import json, sys
from mcpctl.cli.app import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps(sorted(m for m in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["snapshot", "diff"], ["snapshot", "save"],
                                  ["snapshot", "diff", "--json"]])  # fmt: skip
def test_without_probe_nothing_heavy_is_imported(tmp_path: Path, args: list[str]) -> None:
    cfg = tmp_path / "external-mcps.json"
    cfg.write_text(
        json.dumps({f"s{i}": {"command": "echo", "env": {"T": "${T}"}} for i in range(50)})
    )
    env = {**os.environ, "MCPCTL_HOME": str(tmp_path / "h")}
    for _ in range(2):  # the second run has an earlier snapshot to compare with
        r = subprocess.run([PY, "-c", PROBE, "--config", str(cfg), *args, "--snapshot",
                            str(tmp_path / "snap.json")], capture_output=True, text=True, env=env,
                           timeout=60, cwd=tmp_path)  # fmt: skip
        assert r.returncode == 0, r.stderr
        if args[1] == "diff":
            subprocess.run([PY, "-m", "mcpctl", "--config", str(cfg), "snapshot", "save",
                            "--snapshot", str(tmp_path / "snap.json")], env=env, timeout=60,
                           capture_output=True, check=True)  # fmt: skip
    loaded: Any = {m.split(".")[0] for m in json.loads(r.stderr.strip().splitlines()[-1])}
    assert not loaded & {"mcp", "mcp_types", "httpx2", "pydantic", "anyio", "keyring", "rich"}


def test_sarif_with_save_points_at_the_lock_as_it_was(
    cli: Cli, config_path: Path, tmp_path: Path
) -> None:
    lock = tmp_path / "mcp-lock.json"
    write_config(config_path, {"time": TIME, "old": GITHUB})
    cli("snapshot", "save", "-o", str(lock))
    before = lock.read_text().splitlines()
    write_config(config_path, {"time": TIME})
    r = cli("snapshot", "diff", "--against", str(lock), "--format", "sarif", "--save")
    [result] = check_sarif(json.loads(r.stdout))["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert '"name": "old"' in before[region["startLine"]]
    assert names(lock) == ["time"] and "Wrote" in r.stderr
