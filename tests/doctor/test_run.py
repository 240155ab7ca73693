"""A whole run: every section in order, the verdict, and no server ever started."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mcpctl.auth.records import OAuthRecord, save_record
from mcpctl.auth.secrets import SecretStore
from mcpctl.doctor import SECTIONS, run_doctor
from mcpctl.doctor.runtimes import VersionLookup
from mcpctl.snapshot.files import save_snapshot
from mcpctl.snapshot.model import Snapshot
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


# --- what mutation testing found unpinned ----------------------------------------------------


def test_the_config_named_is_checked_not_the_nearest(
    config_path: Path, fake_bin: FakeBin, memory_keyring: MemoryKeyring, tmp_path: Path
) -> None:
    write_config(config_path, {"time": {"command": "uvx", "args": ["mcp-server-time"]}})
    other = tmp_path / "elsewhere" / "servers.json"
    other.parent.mkdir()
    write_config(other, {"web": {"url": "https://example.com/mcp"}})
    report = run_doctor(other)
    assert (report.config, report.config_origin) == (other, "--config")
    assert report.ok, [f.to_dict() for f in report.findings if f.severity == "error"]
    assert "runtime_missing" not in report.codes()  # the nearest file's uvx is not asked for


def test_a_program_of_a_server_waiting_for_approval_is_never_run(
    config_path: Path,
    fake_bin: FakeBin,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A project's own ``./bin/node`` is not asked its version before the file is trusted."""
    monkeypatch.delenv("MCPCTL_TRUST")
    monkeypatch.delenv("CI", raising=False)
    program = config_path.parent / "bin" / "node"
    program.parent.mkdir()
    ran = config_path.parent / "RAN"
    program.write_text(f"#!/bin/sh\necho ran > {ran}\necho v20.0.0\n")
    program.chmod(0o755)
    write_config(config_path, {"repo": {"command": "./bin/node", "args": ["server.js"]}})
    report = run_doctor()
    [untrusted] = [f for f in report.findings if f.code == "config_untrusted"]
    assert untrusted.servers == ("repo",)
    [withheld] = [f for f in report.findings if f.section == "runtimes"]
    assert (withheld.code, withheld.servers) == ("runtime_not_run", ("repo",))
    assert not ran.exists()


def test_the_version_lookup_given_is_the_one_used(
    config_path: Path, fake_bin: FakeBin, memory_keyring: MemoryKeyring
) -> None:
    fake_bin.add("node", hang=True)
    write_config(config_path, {"n": {"command": "node", "args": ["server.js"]}})
    started = time.monotonic()
    report = run_doctor(lookup=VersionLookup(timeout=0.3))
    assert time.monotonic() - started < 2.5  # not the default 3 s
    [finding] = [f for f in report.findings if f.code == "runtime_version_unknown"]
    assert "did not answer within 0.3 s" in finding.message


def test_the_keyring_given_is_the_one_read(config_path: Path, no_keyring: None) -> None:
    store = SecretStore(MemoryKeyring())
    store.set("DOCS_KEY", "docs-run-canary-0004")
    write_config(config_path, {"docs": {"url": "https://docs.example.com/mcp",
                                        "headers": {"X-Key": "${DOCS_KEY}"}}})  # fmt: skip
    report = run_doctor(store=store)
    assert "keyring_ok" in report.codes() and "placeholder_keyring" in report.codes()
    assert report.ok, [f.to_dict() for f in report.findings if f.severity == "error"]


def test_without_a_keyring_it_names_what_needs_one(
    config_path: Path, no_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCS_KEY", raising=False)
    write_config(config_path, {
        "docs": {"url": "https://docs.example.com/mcp", "auth": {"type": "oauth"}},
        "web": {"url": "https://web.example.com/mcp", "headers": {"X-Key": "${DOCS_KEY}"}},
    })  # fmt: skip
    report = run_doctor()
    [keyring] = [f for f in report.findings if f.section == "keyring"]
    assert (keyring.code, keyring.severity) == ("keyring_unavailable", "error")
    assert "needed by placeholder DOCS_KEY and the OAuth sign-in of docs" in keyring.message
    assert not report.ok


def test_an_oauth_server_alone_needs_the_keyring(config_path: Path, no_keyring: None) -> None:
    write_config(config_path, {
        "docs": {"url": "https://docs.example.com/mcp", "auth": {"type": "oauth"}},
    })  # fmt: skip
    [keyring] = [f for f in run_doctor().findings if f.section == "keyring"]
    assert keyring.severity == "error"
    assert keyring.message.endswith("; needed by the OAuth sign-in of docs")


def test_ages_are_computed_at_the_time_given(
    config_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_record(
        "docs",
        OAuthRecord("https://docs.example.com/mcp", access_token="at-run-canary-0005",
                    refresh_token="rt-run-canary-0006", expires_at=time.time() + 600),
    )  # fmt: skip
    write_config(config_path, {
        "docs": {"url": "https://docs.example.com/mcp", "auth": {"type": "oauth"}},
    })  # fmt: skip
    later = time.time() + 3600
    [oauth] = [f for f in run_doctor(now=later).findings if f.section == "oauth"]
    assert oauth.code == "oauth_signed_in" and oauth.details["expired"] is True
    assert "renewed on use" in oauth.message
    # A snapshot's age too.
    snapshot = config_path.parent / "lock.json"
    monkeypatch.setenv("MCPCTL_SNAPSHOT", str(snapshot))
    taken = datetime(2025, 1, 1, tzinfo=UTC)
    save_snapshot(Snapshot(taken.isoformat().replace("+00:00", "Z"), {}), snapshot)
    report = run_doctor(now=taken.timestamp() + 3 * 3600)
    [found] = [f for f in report.findings if f.code == "snapshot_found"]
    assert found.details["age_seconds"] == 3 * 3600 and "recorded 3 h ago" in found.message
