"""Which config file, how it was chosen, and whether it validates."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.config.trust import TrustStore
from mcpctl.doctor.config import (
    VALIDATE_FIX,
    ConfigChoice,
    check_config,
    load_entries,
    locate_config,
    trust_findings,
)
from tests.conftest import write_config


def test_the_origin_of_the_config(
    isolated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "mcpctl-home"
    choice = locate_config()
    assert (choice.path, choice.origin) == (
        home / "config" / "external-mcps.json",
        "user_config_dir",
    )
    assert not choice.explicit and "user config dir" in choice.described
    project = write_config(tmp_path / "external-mcps.json", {})
    choice = locate_config()  # the working directory is below tmp_path
    assert (choice.path, choice.origin) == (project, "nearest")
    monkeypatch.setenv("MCPCTL_CONFIG", str(tmp_path / "env.json"))
    assert locate_config().origin == "MCPCTL_CONFIG" and locate_config().explicit
    choice = locate_config(str(tmp_path / "opt.json"))
    assert (choice.path, choice.origin) == (tmp_path / "opt.json", "--config")


def test_a_named_file_that_is_missing_is_broken(tmp_path: Path) -> None:
    choice = locate_config(str(tmp_path / "nope.json"))
    [finding] = check_config(choice)
    assert (finding.code, finding.severity) == ("config_not_found", "error")
    assert load_entries(choice) == {}


def test_no_file_yet_is_only_info(isolated: Path) -> None:
    [finding] = check_config(locate_config())
    assert (finding.code, finding.severity) == ("config_not_created", "info")
    assert finding.fix is not None and "mcpctl add" in finding.fix


def test_a_valid_file(config_path: Path) -> None:
    write_config(config_path, {"a": {"url": "https://example.com/mcp"}})
    findings = check_config(locate_config())
    assert [(f.code, f.severity) for f in findings] == [
        ("config_file", "ok"), ("config_valid", "ok"),
    ]  # fmt: skip
    assert findings[0].details == {"path": str(config_path), "origin": "nearest"}
    assert findings[1].details == {"errors": 0, "warnings": 0, "servers": 1}


def test_warnings_and_errors_point_at_validate(config_path: Path) -> None:
    write_config(config_path, {"a": {"command": "surely-not-installed-anywhere"}})
    finding = check_config(locate_config())[1]
    assert (finding.code, finding.severity) == ("config_warnings", "warning")
    assert "command_not_found" in finding.message
    assert finding.fix is not None and "mcpctl validate" in finding.fix
    write_config(config_path, {"a": {"url": "https://example.com/mcp", "colour": "red"},
                               "b": {"url": "https://example.com/b"}})  # fmt: skip
    finding = check_config(locate_config())[1]
    assert (finding.code, finding.severity) == ("config_invalid", "error")
    assert finding.details == {"errors": 1, "warnings": 0, "servers": 2}
    assert "unknown_field" in finding.message
    assert list(load_entries(locate_config())) == ["b"]  # the lenient read keeps the rest


def test_a_file_that_is_not_json(config_path: Path) -> None:
    write_config(config_path, '{"a": ')
    finding = check_config(locate_config())[1]
    assert finding.code == "config_invalid" and "config_syntax" in finding.message
    assert load_entries(locate_config()) == {}


# --- what mutation testing found unpinned ----------------------------------------------------


def test_how_each_choice_is_described(tmp_path: Path) -> None:
    said = {
        origin: ConfigChoice(tmp_path / "c.json", origin).described
        for origin in ("--config", "MCPCTL_CONFIG", "nearest", "user_config_dir")
    }
    assert said == {
        "--config": "chosen with --config",
        "MCPCTL_CONFIG": "chosen by MCPCTL_CONFIG",
        "nearest": "the nearest external-mcps.json from the current directory upwards",
        "user_config_dir": "in the user config dir (no external-mcps.json from the current "
        "directory upwards)",
    }
    assert [ConfigChoice(tmp_path, o).explicit for o in said] == [True, True, False, False]


def test_a_missing_file_in_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    named = tmp_path / "nope.json"
    [finding] = check_config(locate_config(str(named)))
    assert finding.message == f"{named} does not exist (chosen with --config)"
    assert finding.fix == "check the path, or create the file with 'mcpctl add NAME -- COMMAND'"
    assert finding.details == {"path": str(named), "origin": "--config"}
    monkeypatch.setenv("MCPCTL_CONFIG", str(named))
    [finding] = check_config(locate_config())
    assert (finding.code, finding.severity) == ("config_not_found", "error")
    assert finding.message == f"{named} does not exist (chosen by MCPCTL_CONFIG)"


def test_no_file_yet_in_words(isolated: Path) -> None:
    choice = locate_config()
    [finding] = check_config(choice)
    assert finding.message == f"no config file yet: {choice.path} ({choice.described})"
    assert finding.fix == (
        "add a server with 'mcpctl add NAME -- COMMAND', or bring yours in with 'mcpctl import'"
    )
    assert finding.details == {"path": str(choice.path), "origin": "user_config_dir"}


def test_what_validation_found_in_words(config_path: Path) -> None:
    write_config(config_path, {"a": {"url": "https://example.com/mcp"},
                               "b": {"url": "https://example.com/b"}})  # fmt: skip
    file, valid = check_config(locate_config())
    assert (file.code, file.severity) == ("config_file", "ok")
    assert file.message == (
        f"{config_path} (the nearest external-mcps.json from the current directory upwards)"
    )
    assert (valid.message, valid.fix) == ("valid (2 servers)", None)
    write_config(config_path, {"a": {"command": "surely-not-installed-anywhere"}})
    warned = check_config(locate_config())[1]
    assert warned.message == "valid, with 1 warning in 1 server: command_not_found"
    assert warned.fix == VALIDATE_FIX
    assert warned.details == {"errors": 0, "warnings": 1, "servers": 1}
    write_config(config_path, {
        "a": {"url": "https://example.com/mcp", "colour": "red"},
        "b": {"command": "surely-not-installed-anywhere"},
        "c": {"url": "ftp://example.com"},
        "d": {"command": "x", "url": "https://example.com"},
        "e": {"url": "https://example.com/mcp", "timeout": "slow"},
    })  # fmt: skip
    broken = check_config(locate_config())[1]
    assert (broken.code, broken.severity, broken.fix) == ("config_invalid", "error", VALIDATE_FIX)
    assert broken.message == (
        "4 errors and 2 warnings in 5 servers: unknown_field, command_not_found, invalid_value, ..."
    )


def test_servers_waiting_for_approval(config_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPCTL_TRUST")
    monkeypatch.delenv("CI", raising=False)
    store = TrustStore.from_paths()
    one = {"a": ServerEntry(command="node", args=("a.js",))}
    write_config(config_path, {"a": {"command": "node", "args": ["a.js"]}})
    trust = store.check(config_path, one)
    [finding] = trust_findings(trust)
    assert (finding.section, finding.code, finding.severity) == (
        "config", "config_untrusted", "warning",
    )  # fmt: skip
    assert finding.message == (
        "not trusted: 1 server of it waits for approval (a); none of them is started, "
        "connected to or given a secret until then"
    )
    assert finding.fix == f"review it with '{trust.command()}'"
    assert finding.servers == ("a",)
    assert finding.details == {"path": str(config_path), "waiting": 1}
    many = {name: ServerEntry(command="node", args=(f"{name}.js",)) for name in "abcdef"}
    trust = store.check(config_path, many)
    [finding] = trust_findings(trust)
    assert finding.message.startswith(
        "not trusted: 6 servers of it wait for approval (a, b, c, d, e, ...); none of them"
    )
    assert finding.fix == f"review them with '{trust.command()}'"
    assert finding.servers == tuple("abcdef") and finding.details["waiting"] == 6
    five = {name: many[name] for name in "abcde"}
    [finding] = trust_findings(store.check(config_path, five))
    assert "(a, b, c, d, e); none" in finding.message


def test_a_trusted_file_has_no_trust_finding(config_path: Path) -> None:
    write_config(config_path, {"a": {"command": "node"}})
    trust = TrustStore.from_paths().check(config_path, {"a": ServerEntry(command="node")})
    assert trust_findings(trust) == []


def test_the_kinds_of_problem_are_cut_after_three(config_path: Path) -> None:
    servers = {
        "a": {"url": "https://example.com/mcp", "colour": "red"},
        "b": {"command": "surely-not-installed-anywhere"},
        "c": {"url": "ftp://example.com"},
    }
    write_config(config_path, servers)
    three = check_config(locate_config())[1]
    assert three.message.endswith(": unknown_field, command_not_found, invalid_value")
    write_config(config_path, {**servers, "d": {"command": "x", "url": "https://example.com"}})
    four = check_config(locate_config())[1]
    assert four.message.endswith(": unknown_field, command_not_found, invalid_value, ...")


def test_the_file_named_is_the_one_validated(config_path: Path, tmp_path: Path) -> None:
    write_config(config_path, {"a": {"url": "https://example.com/mcp"}})  # the nearest: valid
    named = write_config(tmp_path / "other.json", {"a": {"url": "https://example.com/mcp",
                                                         "colour": "red"}})  # fmt: skip
    finding = check_config(locate_config(str(named)))[1]
    assert finding.code == "config_invalid" and "unknown_field" in finding.message
