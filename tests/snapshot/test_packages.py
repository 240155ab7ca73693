"""Package pins: specs read from command lines, resolved against a local npm registry and
PyPI JSON API, compared (moved, republished, unpinned, offline) and written into renders."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpctl.config.model import ServerEntry
from mcpctl.snapshot.packages import (
    PackageChange,
    PackagePin,
    Resolution,
    compare_packages,
    diff_packages,
    parse_spec,
    pin_entries,
    pins_from_data,
    resolve_packages,
)
from mcpctl.snapshot.versions import best_npm, best_pypi, npm_satisfies, pypi_satisfies
from tests.conftest import Cli, write_config
from tests.snapshot.pkgserver import Packages, integrity, serving

# --- parsing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "args", "expected"),
    [
        ("npx", ["-y", "pkg"], ("npm", "pkg", "", False, 1)),
        ("npx", ["--yes", "pkg@1.2.3", "--flag"], ("npm", "pkg", "1.2.3", True, 1)),
        ("npx", ["pkg@latest"], ("npm", "pkg", "latest", False, 0)),
        ("npx", ["-y", "pkg@^1"], ("npm", "pkg", "^1", False, 1)),
        ("npx", ["-y", "@org/pkg@1.2.3"], ("npm", "@org/pkg", "1.2.3", True, 1)),
        ("npx", ["-y", "@org/pkg"], ("npm", "@org/pkg", "", False, 1)),
        ("npx", ["-p", "@org/pkg@2.0.0", "cmd"], ("npm", "@org/pkg", "2.0.0", True, 1)),
        ("npx", ["--package=pkg@1.0.0", "cmd"], ("npm", "pkg", "1.0.0", True, 0)),
        ("/usr/local/bin/npx", ["-y", "pkg"], ("npm", "pkg", "", False, 1)),
        ("npx.cmd", ["-y", "pkg"], ("npm", "pkg", "", False, 1)),
        ("uvx", ["mcp-server-time"], ("pypi", "mcp-server-time", "", False, 0)),
        ("uvx", ["mcp-server-time@1.2"], ("pypi", "mcp-server-time", "==1.2", True, 0)),
        ("uvx", ["mcp-server-time@latest"], ("pypi", "mcp-server-time", "", False, 0)),
        ("uvx", ["pkg==1.2.0"], ("pypi", "pkg", "==1.2.0", True, 0)),
        ("uvx", ["pkg>=1,<2"], ("pypi", "pkg", ">=1,<2", False, 0)),
        ("uvx", ["--from", "pkg==1.2", "cmd"], ("pypi", "pkg", "==1.2", True, 1)),
        ("uvx", ["--python", "3.12", "--from=pkg[cli]", "cmd"], ("pypi", "pkg", "", False, 2)),
        ("pipx", ["run", "pkg"], ("pypi", "pkg", "", False, 1)),
        ("pipx", ["run", "--spec", "pkg==1.0", "cmd"], ("pypi", "pkg", "==1.0", True, 2)),
        ("docker", ["run", "-i", "--rm", "-e", "K=v", "--name", "x", "mcp/time"],
         ("oci", "mcp/time", "", False, 7)),
        ("docker", ["run", "-it", "--network=host", "ghcr.io/o/img:1.0"],
         ("oci", "ghcr.io/o/img", ":1.0", False, 3)),
        ("docker", ["run", "-i", "mcp/time@sha256:" + "a" * 64],
         ("oci", "mcp/time", "@sha256:" + "a" * 64, True, 2)),
    ],
)  # fmt: skip
def test_specs_are_read_from_command_lines(
    command: str, args: list[str], expected: tuple[Any, ...]
) -> None:
    spec = parse_spec(command, args)
    assert spec is not None
    assert (spec.ecosystem, spec.name, spec.requested, spec.pinned, spec.index) == expected


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("node", ["server.js"]),
        ("npx", ["-y", "github:org/repo"]),
        ("npx", ["-y", "./local"]),
        ("npx", ["-y", "https://example.com/x.tgz"]),
        ("npx", ["-c", "echo hi"]),
        ("npx", ["-y", "${PACKAGE}"]),
        ("npx", []),
        ("uvx", ["pkg @ https://example.com/pkg.whl"]),
        ("pipx", ["install", "pkg"]),
        ("docker", ["ps"]),
        ("docker", ["run", "-i"]),
        (None, []),
    ],
)
def test_what_is_no_registry_package_is_not_read(command: str | None, args: list[str]) -> None:
    assert parse_spec(command, args) is None


_NAME = st.from_regex(r"(@[a-z][a-z0-9-]{0,8}/)?[a-z][a-z0-9._-]{0,12}", fullmatch=True)
_VERSION = st.tuples(*(st.integers(0, 99),) * 3).map(lambda t: ".".join(map(str, t)))


@given(name=_NAME, version=_VERSION, yes=st.sampled_from(["-y", "--yes"]))
def test_npx_specs_parse_and_pin_round_trip(name: str, version: str, yes: str) -> None:
    spec = parse_spec("npx", [yes, name, "--stdio"])
    assert spec is not None and (spec.name, spec.requested, spec.pinned) == (name, "", False)
    pin = PackagePin("npm", name, "", False, version, "sha512-x")
    entries, warnings = pin_entries({"s": ServerEntry(command="npx", args=(yes, name, "--stdio"))},
                                    {"s": pin})  # fmt: skip
    assert warnings == []
    assert entries["s"].args == (yes, f"{name}@{version}", "--stdio")
    again = parse_spec("npx", entries["s"].args)
    assert again is not None and (again.name, again.requested, again.pinned) == (
        name,
        version,
        True,
    )


@given(name=st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True), version=_VERSION)
def test_uvx_specs_pin_round_trip(name: str, version: str) -> None:
    pin = PackagePin("pypi", name, "", False, version, "sha256:x")
    for args in ((name,), ("--from", name, "cmd")):
        entries, _ = pin_entries({"s": ServerEntry(command="uvx", args=args)}, {"s": pin})
        again = parse_spec("uvx", entries["s"].args)
        assert again is not None and again.requested == f"=={version}" and again.pinned


def test_version_ranges() -> None:
    versions = ["1.0.0", "1.2.0", "1.3.0", "2.0.0-rc.1", "0.2.5"]
    assert best_npm(versions, "^1.2.0") == "1.3.0"
    assert best_npm(["1.0.0", "2.0.0", "3.0.0"], "^1") == "1.0.0"  # never the next major
    assert best_npm(versions, "~1.2") == "1.2.0"
    assert best_npm(versions, ">=1.2 <1.3") == "1.2.0"
    assert best_npm(versions, "1.0.0 - 1.2.0") == "1.2.0"
    assert best_npm(versions, "^0.2.1") == "0.2.5"
    assert best_npm(versions, "*") == "1.3.0"  # a pre-release only when the range names one
    assert best_npm(versions, "^2.0.0-rc.0") == "2.0.0-rc.1"
    assert best_npm(versions, "^1", latest="1.2.0") == "1.2.0"  # npm prefers the latest tag
    assert not npm_satisfies("1.2.0", "not a range")
    py = ["1.0", "1.2.3", "1.3.0rc1", "1.3.0", "2.0", "2.0.post1"]
    assert best_pypi(py, "~=1.2") == "1.3.0"
    assert best_pypi(py, ">=1,<2,!=1.3.0") == "1.2.3"
    assert best_pypi(py, "==1.*") == "1.3.0"
    assert best_pypi(py, "") == "2.0.post1"
    assert pypi_satisfies("1.3.0rc1", ">=1.3.0rc1")
    assert not pypi_satisfies("1.3.0rc1", ">=1")


def test_diff_kinds() -> None:
    old = {
        "a": PackagePin("npm", "a", "", False, "1.0.0", "sha512-a1"),
        "b": PackagePin("npm", "b", "1.0.0", True, "1.0.0", "sha512-b1"),
        "c": PackagePin("pypi", "c", "==2", True, "2", "sha256:c"),
    }
    new = {
        "a": PackagePin("npm", "a", "", False, "1.1.0", "sha512-a2"),
        "b": PackagePin("npm", "b", "1.0.0", True, "1.0.0", "sha512-OTHER"),
        "c": PackagePin("pypi", "c", "==2", True, status="unresolved", reason="offline"),
    }
    changes = {(c.server, c.kind): c for c in diff_packages(old, new)}
    assert changes["a", "moved"].message == "moved 1.0.0 → 1.1.0 (unpinned)"
    assert ("a", "unpinned") in changes
    assert changes["b", "republished"].message.startswith("republished: same version")
    assert changes["c", "unresolved"].reason == "offline"
    assert sorted(changes) == [("a", "moved"), ("a", "unpinned"), ("b", "republished"),
                               ("c", "unresolved")]  # fmt: skip
    assert diff_packages(old, old) == [c for c in diff_packages(old, old) if c.kind == "unpinned"]


def test_a_lock_with_bad_packages_is_refused() -> None:
    with pytest.raises(ValueError, match=r"packages\.s\.version"):
        pins_from_data({"s": {"name": "x", "version": 3}})
    with pytest.raises(ValueError, match="pinned"):
        pins_from_data({"s": {"name": "x", "pinned": "yes"}})


# --- resolving against local registries ------------------------------------------------------


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[Packages]:
    packages = Packages()
    packages.publish_npm("@demo/server", "1.0.0")
    packages.publish_npm("plain", "2.0.0")
    packages.publish_npm("plain", "3.0.0-beta.1", latest=False)
    packages.publish_pypi("demo-time", "0.9", latest=False)
    packages.publish_pypi("demo-time", "1.0")
    with serving(packages) as url:
        monkeypatch.setenv("MCPCTL_NPM_REGISTRY", url)
        monkeypatch.setenv("MCPCTL_PYPI_URL", url)
        yield packages


CONFIG = {
    "everything": {"command": "npx", "args": ["-y", "@demo/server"]},
    "plain": {"command": "npx", "args": ["-y", "plain@2.0.0"]},
    "time": {"command": "uvx", "args": ["demo-time"]},
    "old-time": {"command": "uvx", "args": ["--from", "demo-time==0.9", "demo-time"]},
    "local": {"command": "node", "args": ["server.js"]},
}


def test_save_records_versions_and_integrity(
    cli: Cli, config_path: Path, registry: Packages
) -> None:
    write_config(config_path, CONFIG)
    r = cli("snapshot", "save", "--packages", "-o", "lock.json", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    lock = json.loads(Path("lock.json").read_text())
    pins = lock["packages"]
    assert sorted(pins) == ["everything", "old-time", "plain", "time"]  # node runs no package
    assert pins["everything"] == {
        "ecosystem": "npm", "name": "@demo/server", "spec": "", "pinned": False,
        "version": "1.0.0", "integrity": integrity("@demo/server", "1.0.0"), "status": "resolved",
    }  # fmt: skip
    assert pins["plain"]["version"] == "2.0.0" and pins["plain"]["pinned"] is True
    assert pins["time"]["version"] == "1.0"
    assert pins["time"]["integrity"] == "sha256:" + registry.wheel_sha("demo-time", "1.0")
    assert pins["time"]["file"].endswith(".whl")  # the wheel, not the sdist
    assert pins["old-time"]["version"] == "0.9" and pins["old-time"]["pinned"] is True
    assert pins["old-time"]["integrity"] == "sha256:" + registry.wheel_sha("demo-time", "0.9")
    assert "/pypi/demo-time/0.9/json" in registry.requests
    assert any("everything: @demo/server is not pinned in the config" in w
               for w in r.json["warnings"])  # fmt: skip
    assert r.json["data"]["packages"]["offline"] is False


def test_diff_reports_moved_republished_and_unpinned(
    cli: Cli, config_path: Path, registry: Packages
) -> None:
    write_config(config_path, CONFIG)
    assert cli("snapshot", "save", "--packages", "-o", "lock.json").exit_code == 0
    r = cli("snapshot", "diff", "--packages", "--against", "lock.json", "--exit-code")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "everything: unpinned spec '@demo/server'" in r.stderr
    assert "plain: unpinned" not in r.stderr

    registry.publish_npm("@demo/server", "1.1.0")
    registry.publish_npm("plain", "2.0.0", salt="evil")  # the same version, other bytes
    registry.publish_pypi("demo-time", "1.1")
    r = cli("snapshot", "diff", "--packages", "--against", "lock.json", "--exit-code")
    assert r.exit_code == 1, r.stdout + r.stderr
    assert "! everything: package moved 1.0.0 → 1.1.0 (unpinned)" in r.stdout
    assert "! plain: package republished: same version (2.0.0), different integrity" in r.stdout
    assert "! time: package moved 1.0 → 1.1 (unpinned)" in r.stdout
    assert "old-time" not in r.stdout  # pinned, and unchanged
    assert "3 packages moved or republished" in r.stderr
    r = cli("snapshot", "diff", "--packages", "--against", "lock.json", "--json")
    assert r.exit_code == 0
    kinds = {(c["server"], c["kind"]) for c in r.json["data"]["packages"]["changes"]}
    assert kinds == {("everything", "moved"), ("everything", "unpinned"),
                     ("plain", "republished"), ("time", "moved"), ("time", "unpinned")}  # fmt: skip
    assert r.json["data"]["packages"]["compared"] is True


def test_revalidation_uses_etags(cli: Cli, config_path: Path, registry: Packages) -> None:
    write_config(config_path, CONFIG)
    assert cli("snapshot", "save", "--packages", "-o", "lock.json").exit_code == 0
    assert registry.not_modified == 0
    assert cli("snapshot", "diff", "--packages", "--against", "lock.json").exit_code == 0
    assert registry.not_modified == 4  # every document, unchanged, came back as 304


def test_offline_the_lock_is_checked_against_the_cache(
    cli: Cli, config_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(config_path, CONFIG)
    packages = Packages()
    packages.publish_npm("@demo/server", "1.0.0")
    packages.publish_npm("plain", "2.0.0")
    packages.publish_pypi("demo-time", "0.9", latest=False)
    packages.publish_pypi("demo-time", "1.0")
    with serving(packages) as url:
        monkeypatch.setenv("MCPCTL_NPM_REGISTRY", url)
        monkeypatch.setenv("MCPCTL_PYPI_URL", url)
        assert cli("snapshot", "save", "--packages", "-o", "lock.json").exit_code == 0
    # The registry is gone: its port is closed, as the network is when unreachable.
    r = cli("snapshot", "diff", "--packages", "--against", "lock.json", "--exit-code", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    data = r.json["data"]
    assert data["packages"]["offline"] is True
    assert any(n.startswith("checked against the cache from 20") and n.endswith(": offline")
               for n in data["notes"])  # fmt: skip
    assert not [c for c in data["packages"]["changes"] if c["kind"] == "unresolved"]
    # With no cache either, each package is unresolved, with the reason: never a traceback.
    monkeypatch.setenv("MCPCTL_HOME", str(Path("elsewhere").absolute()))
    r = cli("snapshot", "diff", "--packages", "--against", "lock.json", "--exit-code")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "? everything: package unresolved: cannot reach" in r.stdout
    assert "nothing cached" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr


@pytest.mark.parametrize("mode", ["invalid_json", "huge", "500"])
def test_a_misbehaving_registry_leaves_the_package_unresolved(
    mode: str, registry: Packages
) -> None:
    registry.mode = mode
    spec = parse_spec("npx", ["-y", "plain"])
    assert spec is not None
    found = resolve_packages({"s": spec}, cache_file=None)
    pin = found.pins["s"]
    assert not pin.resolved and pin.reason


def test_a_range_resolves_to_what_it_would_install(registry: Packages) -> None:
    registry.publish_npm("plain", "2.5.0")
    registry.publish_pypi("demo-time", "2.0")
    specs = {
        "caret": parse_spec("npx", ["-y", "plain@^2"]),
        "tag": parse_spec("npx", ["-y", "plain@latest"]),
        "none": parse_spec("npx", ["-y", "plain@^9"]),
        "py": parse_spec("uvx", ["demo-time<2"]),
    }
    found = resolve_packages({k: v for k, v in specs.items() if v is not None}, cache_file=None)
    assert found.pins["caret"].version == "2.5.0"
    assert found.pins["tag"].version == "2.5.0"
    assert not found.pins["none"].resolved
    assert found.pins["py"].version == "1.0"
    assert found.pins["py"].integrity == "sha256:" + registry.wheel_sha("demo-time", "1.0")


def test_a_pypi_without_version_documents_answers_from_the_project(registry: Packages) -> None:
    registry.mode = "no_version_docs"
    registry.publish_pypi("demo-time", "2.0")
    specs = {"old": parse_spec("uvx", ["--from", "demo-time==0.9", "x"]),
             "range": parse_spec("uvx", ["demo-time<2"])}  # fmt: skip
    found = resolve_packages({k: v for k, v in specs.items() if v is not None}, cache_file=None)
    assert found.pins["old"].integrity == "sha256:" + registry.wheel_sha("demo-time", "0.9")
    assert found.pins["range"].version == "1.0"
    assert found.pins["range"].integrity == "sha256:" + registry.wheel_sha("demo-time", "1.0")


def test_docker_digest_from_the_local_image() -> None:
    spec = parse_spec("docker", ["run", "-i", "--rm", "mcp/time"])
    assert spec is not None
    seen: list[str] = []

    def docker(image: str) -> tuple[str | None, str | None]:
        seen.append(image)
        return "sha256:" + "b" * 64, None

    pin = resolve_packages({"t": spec}, cache_file=None, docker=docker).pins["t"]
    assert seen == ["mcp/time:latest"]
    assert (pin.version, pin.integrity, pin.pinned) == ("latest", "sha256:" + "b" * 64, False)
    gone = resolve_packages({"t": spec}, cache_file=None,
                            docker=lambda _: (None, "not pulled here")).pins["t"]  # fmt: skip
    assert (gone.status, gone.reason) == ("unresolved", "not pulled here")


# --- render --pinned -------------------------------------------------------------------------


def test_render_pinned_writes_the_versions(cli: Cli, config_path: Path, registry: Packages) -> None:
    write_config(config_path, {
        **CONFIG,
        "image": {"command": "docker", "args": ["run", "-i", "--rm", "mcp/time:1"]},
        "later": {"command": "npx", "args": ["-y", "plain"]},
    })  # fmt: skip
    assert cli("snapshot", "save", "--packages", "-o", "lock.json").exit_code == 0
    lock = json.loads(Path("lock.json").read_text())
    lock["packages"]["image"] = {"ecosystem": "oci", "name": "mcp/time", "spec": ":1",
                                 "pinned": False, "version": "1",
                                 "integrity": "sha256:" + "c" * 64}  # fmt: skip
    del lock["packages"]["later"]
    Path("lock.json").write_text(json.dumps(lock))
    registry.publish_npm("@demo/server", "1.1.0")  # the lock, not the registry, decides
    r = cli("render", "mcp-proxy", "--pinned", "lock.json", "--secrets", "env", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    servers = json.loads(r.json["data"]["text"])["mcpServers"]
    assert servers["everything"]["args"] == ["-y", "@demo/server@1.0.0"]
    assert servers["plain"]["args"] == ["-y", "plain@2.0.0"]
    assert servers["time"]["args"] == ["demo-time==1.0"]
    assert servers["old-time"]["args"] == ["--from", "demo-time==0.9", "demo-time"]
    assert servers["image"]["args"] == ["run", "-i", "--rm", "mcp/time@sha256:" + "c" * 64]
    assert servers["later"]["args"] == ["-y", "plain"]
    assert "later: not in the lock file's packages: rendered unpinned" in r.json["warnings"]


def test_render_pinned_with_a_lock_without_packages_warns(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"everything": {"command": "npx", "args": ["-y", "pkg"]}})
    assert cli("snapshot", "save", "-o", "lock.json").exit_code == 0
    r = cli("render", "mcp-proxy", "--pinned", "lock.json")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "records no packages" in r.stderr
    assert '"pkg"' in r.stdout


@given(command=st.sampled_from(["npx", "uvx", "pipx", "docker", "uv", "podman", "x"]),
       args=st.lists(st.text(max_size=30), max_size=8))  # fmt: skip
def test_any_command_line_parses_without_raising(command: str, args: list[str]) -> None:
    spec = parse_spec(command, args)
    if spec is not None:
        assert 0 <= spec.index < len(args) and spec.name
        pinned, _ = pin_entries(
            {"s": ServerEntry(command=command, args=tuple(args))},
            {"s": PackagePin(spec.ecosystem, spec.name, "", False, "1.0.0", "sha256:" + "0" * 64)},
        )
        assert len(pinned["s"].args) == len(args)


def test_save_over_a_lock_with_packages_needs_packages(
    cli: Cli, config_path: Path, registry: Packages
) -> None:
    write_config(config_path, CONFIG)
    assert cli("snapshot", "save", "--packages", "-o", "lock.json").exit_code == 0
    r = cli("snapshot", "diff", "--against", "lock.json", "--save")
    assert r.exit_code == 2
    assert "--save would drop the package pins" in r.stderr
    assert "add --packages" in r.stderr
    r = cli("snapshot", "diff", "--packages", "--against", "lock.json", "--save")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert json.loads(Path("lock.json").read_text())["packages"]["plain"]["version"] == "2.0.0"


def test_a_lock_with_a_bad_packages_section_is_exit_2(cli: Cli, config_path: Path) -> None:
    write_config(config_path, CONFIG)
    Path("lock.json").write_text(json.dumps({"timestamp": "t", "mcps": [],
                                             "packages": {"plain": {"name": 7}}}))  # fmt: skip
    r = cli("snapshot", "diff", "--packages", "--against", "lock.json")
    assert r.exit_code == 2
    assert "packages.plain.name" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_launched_server_is_not_rendered_pinned_and_says_so(
    cli: Cli, config_path: Path, registry: Packages
) -> None:
    write_config(config_path, {"everything": {"command": "npx", "args": ["-y", "@demo/server"],
                                              "env": {"TOKEN": "${secret:demo-token}"}}})  # fmt: skip
    assert cli("snapshot", "save", "--packages", "-o", "lock.json").exit_code == 0
    r = cli("render", "claude-code", "--pinned", "lock.json", "--secrets", "launcher", "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert any("everything: runs through 'mcpctl run'" in w for w in r.json["warnings"])


def test_a_lock_s_version_that_is_no_version_is_not_rendered() -> None:
    entries = {
        "n": ServerEntry(command="npx", args=("-y", "pkg")),
        "p": ServerEntry(command="uvx", args=("pkg",)),
        "d": ServerEntry(command="docker", args=("run", "-i", "img")),
    }
    pins = {
        "n": PackagePin("npm", "pkg", "", False, "1.0.0 --inspect=0.0.0.0", "sha512-x"),
        "p": PackagePin("pypi", "pkg", "", False, "1.0 ; rm", "sha256:x"),
        "d": PackagePin("oci", "img", "", False, "latest", "sha256:nothex"),
    }
    out, warnings = pin_entries(entries, pins)
    assert out == entries
    assert len(warnings) == 3 and all("rendered unpinned" in w for w in warnings)


def test_a_registry_version_that_is_no_version_is_unresolved(registry: Packages) -> None:
    registry.npm["plain"]["dist-tags"]["latest"] = "evil/../x"
    registry.npm["plain"]["versions"]["evil/../x"] = {"dist": {"integrity": "sha512-x"}}
    spec = parse_spec("npx", ["-y", "plain"])
    assert spec is not None
    pin = resolve_packages({"s": spec}, cache_file=None).pins["s"]
    assert not pin.resolved and "not a version" in (pin.reason or "")


# --- what mutation testing found unpinned ----------------------------------------------------


def test_each_kind_of_change_says_what_happened_and_whether_it_fails() -> None:
    moved = PackageChange("s", "moved", "1.0.0", "1.1.0", pinned=True)
    assert moved.message == "moved 1.0.0 → 1.1.0 (pinned)"
    republished = PackageChange("s", "republished", "1.0.0", "1.0.0")
    assert republished.message == "republished: same version (1.0.0), different integrity"
    unpinned = PackageChange("s", "unpinned", new="pkg@^1")
    assert unpinned.message == "unpinned spec 'pkg@^1': what runs can change any day"
    unresolved = PackageChange("s", "unresolved", reason="offline")
    assert unresolved.message == "unresolved: offline"
    assert moved.fails and republished.fails
    assert not unpinned.fails and not unresolved.fails
    assert moved.to_data() == {"server": "s", "kind": "moved", "old": "1.0.0", "new": "1.1.0",
                               "pinned": True, "reason": None,
                               "message": "moved 1.0.0 → 1.1.0 (pinned)"}  # fmt: skip
    assert unresolved.to_data() == {"server": "s", "kind": "unresolved", "old": None,
                                    "new": None, "pinned": False, "reason": "offline",
                                    "message": "unresolved: offline"}  # fmt: skip


def test_a_package_replaced_by_another_is_moved_by_name() -> None:
    old = {"s": PackagePin("npm", "a", "1.0.0", True, "1.0.0", "sha512-a")}
    new = {"s": PackagePin("npm", "b", "1.0.0", True, "1.0.0", "sha512-b")}
    assert diff_packages(old, new) == [PackageChange("s", "moved", "a 1.0.0", "b 1.0.0", True)]
    other = {"s": PackagePin("pypi", "a", "==1.0.0", True, "1.0.0", "sha256:a")}
    assert diff_packages(old, other) == [PackageChange("s", "moved", "a 1.0.0", "a 1.0.0", True)]


def test_a_moved_version_keeps_the_pinned_flag_and_shows_a_digest_without_a_version() -> None:
    old = {"s": PackagePin("oci", "img", "@sha256:a", True, None, "sha256:a")}
    new = {"s": PackagePin("oci", "img", "@sha256:b", True, "2.0", "sha256:b")}
    assert diff_packages(old, new) == [PackageChange("s", "moved", "sha256:a", "2.0", True)]
    bare = {"s": PackagePin("oci", "img", "@sha256:b", True, "2.0")}
    neither = {"s": PackagePin("oci", "img", "", True)}
    assert diff_packages(neither, bare)[0].old == "?"


def test_an_integrity_not_known_on_one_side_is_no_republishing() -> None:
    known = {"s": PackagePin("npm", "a", "1.0.0", True, "1.0.0", "sha512-a")}
    unknown = {"s": PackagePin("npm", "a", "1.0.0", True, "1.0.0", None)}
    assert diff_packages(known, unknown) == []
    assert diff_packages(unknown, known) == []
    assert diff_packages(known, known) == []


def test_a_lock_s_unresolved_pin_is_no_base_to_compare() -> None:
    old = {"s": PackagePin("npm", "a", "1.0.0", True, status="unresolved", reason="offline")}
    new = {"s": PackagePin("npm", "a", "1.0.0", True, "2.0.0", "sha512-a")}
    assert diff_packages(old, new) == []
    assert diff_packages({}, new) == []


def test_an_unresolved_package_keeps_its_pinned_flag() -> None:
    new = {"s": PackagePin("npm", "a", "1.0.0", True, status="unresolved", reason="offline")}
    assert diff_packages({}, new) == [
        PackageChange("s", "unresolved", pinned=True, reason="offline")
    ]


@pytest.mark.parametrize(
    ("pin", "shown"),
    [
        (PackagePin("npm", "a", "^1", False, "1.0.0"), "a@^1"),
        (PackagePin("npm", "a", "", False, "1.0.0"), "a"),
        (PackagePin("pypi", "a", ">=1", False, "1.0"), "a>=1"),
        (PackagePin("oci", "img", ":latest", False, "latest"), "img:latest"),
    ],
)
def test_an_unpinned_spec_is_shown_as_written(pin: PackagePin, shown: str) -> None:
    assert diff_packages({}, {"s": pin}) == [PackageChange("s", "unpinned", new=shown)]


def test_compare_packages_warns_of_a_lock_without_packages_and_of_unpinned_specs() -> None:
    now = Resolution(
        pins={"a": PackagePin("npm", "a", "", False, "1.0.0"),
              "b": PackagePin("npm", "b", "1.0.0", True, "1.0.0")},
        warnings=["registry said something"],
    )  # fmt: skip
    changes, warnings = compare_packages(None, now, source="lock.json")
    assert changes == [PackageChange("a", "unpinned", new="a")]
    assert warnings == [
        "registry said something",
        "packages were not compared: lock.json records none; save it with --packages",
        "a: unpinned spec 'a': what runs can change any day",
    ]
    assert now.warnings == ["registry said something"]  # the resolution is left as it was
    _, warnings = compare_packages(None, now, source=None)
    assert not any("not compared" in w for w in warnings)
    recorded = {"b": PackagePin("npm", "b", "1.0.0", True, "0.9.0")}
    changes, warnings = compare_packages(recorded, now, source="lock.json")
    assert [c.kind for c in changes] == ["unpinned", "moved"]
    assert not any("not compared" in w for w in warnings)


def test_a_republished_version_names_it_on_both_sides_and_keeps_the_pinned_flag() -> None:
    old = {"s": PackagePin("npm", "a", "1.0.0", True, "1.0.0", "sha512-a")}
    new = {"s": PackagePin("npm", "a", "1.0.0", True, "1.0.0", "sha512-b")}
    assert diff_packages(old, new) == [
        PackageChange("s", "republished", "1.0.0", "1.0.0", pinned=True)
    ]
