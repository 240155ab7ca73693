"""``mcpctl prefetch`` with real npm against a local registry: what npx finds afterwards,
and the failures (404, offline, an integrity mismatch), each naming the package and why."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from mcpctl.probe.coldstart import npx_key
from tests.conftest import Cli, free_port, write_config
from tests.prefetch.conftest import npx_entry
from tests.prefetch.npmregistry import Registry

pytestmark = pytest.mark.integration


def npx_offline(spec: str, registry: Registry, cache: Path) -> subprocess.CompletedProcess[str]:
    """``npx -y SPEC`` as a client starts it, with npm told it is offline."""
    env = {**os.environ, "npm_config_registry": registry.base + "/",
           "npm_config_cache": str(cache), "npm_config_offline": "true",
           "npm_config_update_notifier": "false"}  # fmt: skip
    return subprocess.run(
        ["npx", "-y", spec], capture_output=True, text=True, timeout=120, env=env,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def test_a_prefetched_package_starts_with_npx_offline(
    cli: Cli, config_path: Path, registry: Registry, npm_cache: Path
) -> None:
    registry.publish("fake-a", "1.0.0")
    write_config(config_path, {"a": npx_entry("fake-a@1.0.0", registry, npm_cache)})
    before = npx_offline("fake-a@1.0.0", registry, npm_cache)
    assert before.returncode != 0  # nothing cached: npx cannot start it offline
    r = cli("prefetch", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    item = r.json["data"]["packages"][0]
    assert item["status"] == "fetched" and item["version"] == "1.0.0"
    # The folder is the one npx keys by the spec it is given.
    assert item["where"] == str(npm_cache / "_npx" / npx_key(["fake-a@1.0.0"]))
    after = npx_offline("fake-a@1.0.0", registry, npm_cache)
    assert after.returncode == 0, after.stderr
    assert "fake package fake-a 1.0.0 ran" in after.stdout
    # npx ran what prefetch installed: it made no folder of its own.
    assert [p.name for p in (npm_cache / "_npx").iterdir()] == [npx_key(["fake-a@1.0.0"])]
    # The package itself never ran during the prefetch (node -e 0 did).
    assert not any("ran" in line for line in r.stderr.splitlines())
    # Again: it is there, nothing is asked of the registry.
    asked = len(registry.requests)
    again = cli("prefetch", "--json")
    assert again.json["data"]["packages"][0]["status"] == "cached"
    assert len(registry.requests) == asked


def test_a_missing_package_fails_naming_it_and_npms_reason(
    cli: Cli, config_path: Path, registry: Registry, npm_cache: Path
) -> None:
    registry.publish("fake-a", "1.0.0")
    write_config(config_path, {
        "good": npx_entry("fake-a@1.0.0", registry, npm_cache),
        "bad": npx_entry("fake-nope@1.0.0", registry, npm_cache),
    })  # fmt: skip
    r = cli("prefetch", "--json")
    assert r.exit_code == 1, r.stdout + r.stderr
    by = {p["servers"][0]: p for p in r.json["data"]["packages"]}
    assert by["good"]["status"] == "fetched"
    assert by["bad"]["status"] == "failed" and not by["bad"]["offline"]
    assert "'fake-nope@1.0.0' could not be found" in by["bad"]["reason"]
    [error] = r.json["errors"]
    assert error["code"] == "prefetch_failed"
    assert error["message"].startswith("bad: fake-nope@1.0.0: npm exec failed")
    # Human output names it too, on stderr.
    human = cli("prefetch")
    assert human.exit_code == 1
    assert "bad: fake-nope@1.0.0:" in human.stderr and "could not be found" in human.stderr


def test_an_unreachable_registry_is_exit_3_at_once(
    cli: Cli, config_path: Path, npm: str, npm_cache: Path
) -> None:
    port = free_port()  # nothing listens there
    entry = {"command": "npx", "args": ["-y", "fake-a@1.0.0"],
             "env": {"npm_config_registry": f"http://127.0.0.1:{port}/",
                     "npm_config_cache": str(npm_cache)}}  # fmt: skip
    write_config(config_path, {"a": entry})
    started = time.monotonic()
    r = cli("prefetch", "--json")
    took = time.monotonic() - started
    assert r.exit_code == 3, r.stdout + r.stderr
    item = r.json["data"]["packages"][0]
    assert item["offline"] is True and item["reason"].startswith("offline: npm's registry")
    assert f"127.0.0.1:{port}" in item["reason"]
    assert r.json["errors"][0]["code"] == "offline"
    assert took < 30  # npm alone retries for a minute and more


def lock_file(path: Path, server: str, name: str, version: str, integrity: str) -> Path:
    data = {"version": 1, "timestamp": "2026-01-01T00:00:00Z", "mcps": [],
            "packages": {server: {"ecosystem": "npm", "name": name, "spec": "",
                                  "pinned": False, "version": version,
                                  "integrity": integrity, "status": "resolved"}}}  # fmt: skip
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_pinned_fetches_the_locked_version_and_checks_its_integrity(
    cli: Cli, config_path: Path, registry: Registry, npm_cache: Path, tmp_path: Path
) -> None:
    old = registry.publish("fake-a", "1.0.0")
    registry.publish("fake-a", "2.0.0")  # the latest: what the unpinned spec would get
    write_config(config_path, {"a": npx_entry("fake-a", registry, npm_cache)})
    lock = lock_file(tmp_path / "lock.json", "a", "fake-a", "1.0.0", old)
    r = cli("prefetch", "--pinned", str(lock), "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    item = r.json["data"]["packages"][0]
    assert item["package"] == "fake-a@1.0.0" and item["version"] == "1.0.0"
    assert item["integrity"] == old
    assert npx_offline("fake-a@1.0.0", registry, npm_cache).returncode == 0


def test_an_integrity_mismatch_fails_and_leaves_nothing_runnable(
    cli: Cli, config_path: Path, registry: Registry, npm_cache: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "postinstall-ran"
    registry.publish(
        "fake-s",
        "1.0.0",
        scripts={"postinstall": f"node -e \"require('fs').writeFileSync('{marker}', 'x')\""},
    )
    write_config(config_path, {"s": npx_entry("fake-s@1.0.0", registry, npm_cache)})
    other = "sha512-" + "A" * 86 + "=="
    lock = lock_file(tmp_path / "lock.json", "s", "fake-s", "1.0.0", other)
    r = cli("prefetch", "--pinned", str(lock), "--json")
    assert r.exit_code == 1, r.stdout + r.stderr
    item = r.json["data"]["packages"][0]
    assert item["status"] == "failed"
    assert item["reason"].startswith(f"integrity mismatch: the lock records {other}")
    assert r.json["errors"][0]["message"].startswith("s: fake-s@1.0.0: integrity mismatch")
    assert not marker.exists()  # checked before any script of it ran
    assert not (npm_cache / "_npx" / npx_key(["fake-s@1.0.0"])).exists()
    assert npx_offline("fake-s@1.0.0", registry, npm_cache).returncode != 0


def test_install_scripts_run_when_the_package_has_some(
    cli: Cli, config_path: Path, registry: Registry, npm_cache: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "postinstall-ran"
    registry.publish(
        "fake-s",
        "1.0.0",
        scripts={"postinstall": f"node -e \"require('fs').writeFileSync('{marker}', 'x')\""},
    )
    write_config(config_path, {"s": npx_entry("fake-s@1.0.0", registry, npm_cache)})
    r = cli("prefetch", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert marker.exists()  # what npx's own first start would have run
    assert npx_offline("fake-s@1.0.0", registry, npm_cache).returncode == 0


def test_skipped_servers_are_noted_and_names_are_checked(
    cli: Cli, config_path: Path, registry: Registry, npm_cache: Path
) -> None:
    registry.publish("fake-a", "1.0.0")
    off = {**npx_entry("fake-a@1.0.0", registry, npm_cache), "enabled": False}
    write_config(config_path, {
        "off": off, "remote": {"url": "https://example.invalid/mcp"},
        "local": {"command": "python3", "args": ["server.py"]},
        "a": npx_entry("fake-a@1.0.0", registry, npm_cache), "b": npx_entry("fake-a@1.0.0",
                                                                       registry, npm_cache),
    })  # fmt: skip
    r = cli("prefetch", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    items = r.json["data"]["packages"]
    reasons = {i["servers"][0]: i["reason"] for i in items if i["status"] == "skipped"}
    assert reasons == {"off": "disabled", "remote": "a remote server: nothing to install",
                       "local": "runs python3, not npx, uvx or docker: nothing to fetch"}  # fmt: skip
    shared = [i for i in items if i["status"] == "fetched"]
    assert [i["servers"] for i in shared] == [["a", "b"]]  # one install for both
    assert not (npm_cache / "_npx").exists() or len(list((npm_cache / "_npx").iterdir())) == 1
    assert cli("prefetch", "nope").exit_code == 2
    missing = cli("prefetch", "--group", "nope", "--json")
    assert missing.exit_code == 2 and missing.json["errors"][0]["code"] == "group_not_found"
