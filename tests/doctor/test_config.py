"""Which config file, how it was chosen, and whether it validates."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpctl.doctor.config import check_config, load_entries, locate_config
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
