"""A whole run: every section in order, the verdict, and no server ever started."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from mcpctl.auth.records import OAuthRecord, save_record
from mcpctl.auth.secrets import SecretStore
from mcpctl.doctor import SECTIONS, run_doctor
from tests.conftest import MemoryKeyring, write_config
from tests.doctor.fakes import FakeBin


def test_a_healthy_setup(
    config_path: Path,
    fake_bin: FakeBin,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_bin.add("node", "v20.11.0")
    fake_bin.add("npx")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-run-canary-0001")
    SecretStore().set("DOCS_KEY", "docs-run-canary-0002")
    save_record(
        "docs",
        OAuthRecord("https://docs.example.com/mcp", access_token="at-run-canary-0003",
                    expires_at=time.time() + 600),
    )  # fmt: skip
    write_config(config_path, {
        "github": {"command": "npx", "args": ["-y", "server-github"],
                   "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
        "docs": {"url": "https://docs.example.com/mcp", "auth": {"type": "oauth"},
                 "headers": {"X-Key": "${DOCS_KEY}"}},
    })  # fmt: skip
    report = run_doctor()
    assert report.ok, [f.to_dict() for f in report.findings if f.severity == "error"]
    assert report.config == config_path and report.config_origin == "nearest"
    assert report.codes() == [
        "config_file", "config_valid", "keyring_ok", "placeholder_env", "placeholder_keyring",
        "runtime_found", "oauth_signed_in", "cache_empty", "snapshot_none",
    ]  # fmt: skip
    sections = [f.section for f in report.findings]
    assert sections == sorted(sections, key=list(SECTIONS).index)
    assert report.counts == {"ok": 7, "info": 2, "warning": 0, "error": 0}
    data = report.to_dict()
    assert data["ok"] is True and len(data["findings"]) == 9
    text = json.dumps(data)
    for secret in ("ghp-run-canary-0001", "docs-run-canary-0002", "at-run-canary-0003"):
        assert secret not in text


def test_something_broken_makes_the_report_not_ok(
    config_path: Path, fake_bin: FakeBin, memory_keyring: MemoryKeyring
) -> None:
    write_config(config_path, {"time": {"command": "uvx", "args": ["mcp-server-time"]}})
    report = run_doctor()
    assert not report.ok
    assert [f.code for f in report.findings if f.severity == "error"] == ["runtime_missing"]


def test_no_server_is_started_only_version_lookups(
    config_path: Path,
    fake_bin: FakeBin,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each server command here would leave a marker file if it ran; only the runtimes'
    --version may run."""
    for name in ("node", "npx", "uv", "uvx", "docker", "python3", "my-server"):
        fake_bin.add(name)
    script = config_path.parent / "run.sh"
    script.write_text(f"#!/bin/sh\necho started > {fake_bin.marker}\n")
    script.chmod(0o755)
    write_config(config_path, {
        name: {"command": command, "args": ["serve"]}
        for name, command in (
            ("a", "node"), ("b", "npx"), ("c", "uvx"), ("d", "docker"), ("e", "python3"),
            ("f", "my-server"), ("g", str(fake_bin.path / "my-server")), ("h", "./run.sh"),
        )
    })  # fmt: skip
    started: list[list[str]] = []
    real_popen = subprocess.Popen

    class Recording(real_popen):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            started.append([str(a) for a in args])
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Recording)
    report = run_doctor()
    assert not fake_bin.marker.exists()
    assert started and all(argv[1:] == ["--version"] for argv in started), started
    assert sorted(Path(argv[0]).name for argv in started) == ["docker", "node", "python3", "uv"]
    assert sorted(fake_bin.calls()) == [
        "docker --version", "node --version", "python3 --version", "uv --version",
    ]  # fmt: skip
    assert report.ok, [f.to_dict() for f in report.findings if f.severity == "error"]
