"""Where things live: the config, the user dirs, MCPCTL_HOME, backups and the snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl.config.validate import validate_config
from mcpctl.paths import CONFIG_FILENAME, Paths, backup_key, find_config, lock_key

ROOT = Path(__file__).resolve().parent.parent


def test_mcpctl_home_puts_everything_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPCTL_HOME", str(tmp_path / "h"))
    paths = Paths.from_env()
    assert paths.config_dir == tmp_path / "h" / "config"
    assert paths.discovery_cache == tmp_path / "h" / "cache" / "discovery.sqlite3"
    assert paths.snapshot == tmp_path / "h" / "state" / "last-known-mcps.json"
    assert paths.registries == tmp_path / "h" / "config" / "registries.json"
    assert paths.backups_root == tmp_path / "h" / "state" / "backups"
    assert paths.locks_dir == tmp_path / "h" / "state" / "locks"


def test_config_resolution_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated: Path
) -> None:
    monkeypatch.setenv("MCPCTL_HOME", str(tmp_path / "h"))
    assert Paths.from_env().config == tmp_path / "h" / "config" / CONFIG_FILENAME
    (isolated / CONFIG_FILENAME).write_text("{}")
    assert Paths.from_env().config == isolated / CONFIG_FILENAME
    monkeypatch.setenv("MCPCTL_CONFIG", str(tmp_path / "env.json"))
    assert Paths.from_env().config == tmp_path / "env.json"
    assert Paths.from_env("flag.json").config == Path("flag.json")


def test_snapshot_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MCPCTL_SNAPSHOT", str(tmp_path / "snap.json"))
    assert Paths.from_env().snapshot == tmp_path / "snap.json"


def test_platform_dirs_without_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MCPCTL_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert Paths.from_env().config_dir == tmp_path / "xdg" / "mcpctl"


def test_find_config_walks_up(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILENAME).write_text("{}")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config(deep) == tmp_path / CONFIG_FILENAME


def test_backup_key_is_stable_and_distinct(tmp_path: Path) -> None:
    a, b = tmp_path / "x" / CONFIG_FILENAME, tmp_path / "y" / CONFIG_FILENAME
    assert backup_key(a) == backup_key(a) and backup_key(a) != backup_key(b)
    assert backup_key(a).startswith("x-")


def test_lock_key_is_the_digest_of_the_resolved_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib

    a, b = tmp_path / "x" / CONFIG_FILENAME, tmp_path / "y" / CONFIG_FILENAME
    (tmp_path / "x").mkdir()
    a.write_text("{}")
    (tmp_path / "link.json").symlink_to(a)
    real = str(a.resolve())
    assert lock_key(a) == hashlib.sha256(real.encode()).hexdigest()[:32]
    assert lock_key(tmp_path / "link.json") == lock_key(a) != lock_key(b)
    monkeypatch.chdir(tmp_path)
    assert lock_key(Path("x") / CONFIG_FILENAME) == lock_key(a)
    monkeypatch.setenv("MCPCTL_HOME", str(tmp_path / "h"))
    assert (
        Paths.from_env().lock_for(a) == tmp_path / "h" / "state" / "locks" / f"{lock_key(a)}.lock"
    )


def test_bundled_example_is_valid_and_its_schema_current() -> None:
    from mcpctl.config.schema import config_json_schema

    report = validate_config(ROOT / "examples" / "external-mcps.json")
    assert report.ok, report.problems
    assert report.servers == 5
    committed = json.loads((ROOT / "examples" / "external-mcps.schema.json").read_text())
    assert committed == config_json_schema(), (
        "run: mcpctl schema > examples/external-mcps.schema.json"
    )
