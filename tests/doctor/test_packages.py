"""Whether an npx/uvx package is cached locally, and which package a command names."""

from __future__ import annotations

import json
import locale
import os
from pathlib import Path

import pytest

from mcpctl.doctor import packages
from mcpctl.doctor.packages import CachedPackage, cached_package, package_of
from tests.doctor.fakes import FakeBin
from tests.stdinpipe import stdin_holding


@pytest.mark.parametrize(
    ("tool", "args", "package"),
    [
        ("npx", ["-y", "@modelcontextprotocol/server-memory@1.2.0"], "@modelcontextprotocol/server-memory"),
        ("npx", ["--yes", "server-github@latest", "--port", "3"], "server-github"),
        ("npx", ["-p", "@scope/pkg", "run-it"], "@scope/pkg"),
        ("uvx", ["mcp-server-time==1.0", "--local-timezone", "UTC"], "mcp-server-time"),
        ("uvx", ["--from", "git-mcp[all]", "git-mcp-server"], "git-mcp"),
        ("uvx", ["--python", "3.12", "mcp-server-fetch"], "mcp-server-fetch"),
        ("docker", ["run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/github/github-mcp-server"],
         "ghcr.io/github/github-mcp-server"),
        ("docker", ["ps"], None),
    ],
)  # fmt: skip
def test_package_of(tool: str, args: list[str], package: str | None) -> None:
    assert package_of(tool, args) == package


def test_npx_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm"))
    args = ["-y", "@scope/server@2"]
    found = cached_package("npx", args, "/usr/bin/npx")
    assert found is not None and found.cached is False and found.package == "@scope/server"
    pkg = tmp_path / "npm" / "_npx" / "0a1b2c" / "node_modules" / "@scope" / "server"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "@scope/server", "version": "2.0.1"}))
    (pkg / "index.js").write_text("x" * 5000)
    found = cached_package("npx", args, "/usr/bin/npx")
    assert found is not None and found.cached is True
    assert found.version == "2.0.1" and found.size is not None and found.size > 5000


def test_uvx_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    found = cached_package("uvx", ["mcp-server-time"], "/usr/bin/uvx")
    assert found is not None and found.cached is False
    (tmp_path / "uv" / "archive-v0" / "h1" / "mcp_server_time-2025.9.25.dist-info").mkdir(
        parents=True
    )
    found = cached_package("uvx", ["mcp-server-time"], "/usr/bin/uvx")
    assert found is not None and found.cached is True and found.version == "2025.9.25"


# --- which package a command names ----------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "package"),
    [
        # npx: the first argument that is not an option, or the one --package names
        ("npx", ["--", "server-a@1"], "server-a"),
        ("npx", ["--registry", "https://r.example", "server-b"], "server-b"),
        ("npx", ["--registry=https://r.example", "server-c"], "server-c"),
        ("npx", ["--cache", "/c", "-y", "server-d"], "server-d"),
        ("npx", ["--package=@scope/pkg@2", "bin"], "@scope/pkg"),
        ("npx", ["-y", "server-e", "-p", "not-the-package"], "not-the-package"),
        ("npx", ["-y", "-p"], None),
        ("npx", ["-y"], None),
        ("npx", [], None),
        ("npx", ["@scope/pkg"], "@scope/pkg"),
        ("npx", ["@scope"], "@scope"),
        ("npx", ["@"], "@"),
        ("npx", ["@scope/pkg@"], "@scope/pkg"),
        ("npx", ["my-alias@npm:real-pkg@1.0"], "my-alias"),  # an npm alias
        # uvx: likewise, with --from
        ("uvx", ["--from=git-mcp>=1", "git-mcp-server"], "git-mcp"),
        ("uvx", ["--from"], None),
        ("uvx", ["--with", "extra-dep", "server-f"], "server-f"),
        ("uvx", ["--python=3.12", "server-g"], "server-g"),
        ("uvx", ["pkg<2"], "pkg"),
        ("uvx", ["pkg>1"], "pkg"),
        ("uvx", ["pkg!=1"], "pkg"),
        ("uvx", ["pkg~=1.0"], "pkg"),
        ("uvx", ["pkg@1.0"], "pkg"),
        ("uvx", ["pkg; python_version>'3'"], "pkg"),
        ("uvx", ["pkg 1"], "pkg"),
        ("uvx", ["pkg[a,b]"], "pkg"),
        # docker: the image, the first argument after ``run`` that no option takes
        ("docker", ["--context", "remote", "run", "-i", "image-a"], "image-a"),
        ("docker", ["run", "--name", "x", "-v", "/a:/b", "image-b", "serve"], "image-b"),
        ("docker", ["run", "--env=A=1", "image-c"], "image-c"),
        ("docker", ["run", "--rm"], None),
        ("docker", [], None),
        # anything else names no package
        ("node", ["server.js"], None),
        ("python", ["-m", "server"], None),
    ],
)  # fmt: skip
def test_the_package_a_command_names(tool: str, args: list[str], package: str | None) -> None:
    assert package_of(tool, args) == package


def test_only_npx_uvx_and_docker_are_looked_up(tmp_path: Path) -> None:
    assert cached_package("node", ["server.js"], "/usr/bin/node") is None
    assert cached_package("npx", ["-y"], "/usr/bin/npx") is None  # no package named
    assert cached_package("docker", ["ps"], "/usr/bin/docker") is None


# --- npx --------------------------------------------------------------------------------


def npx_package(root: Path, folder: str, name: str, manifest: str | None = None) -> Path:
    pkg = root / "_npx" / folder / "node_modules" / name
    pkg.mkdir(parents=True)
    if manifest is not None:
        (pkg / "package.json").write_text(manifest)
    return pkg


def clear_npm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("npm_config_cache", raising=False)
    monkeypatch.delenv("NPM_CONFIG_CACHE", raising=False)


def test_npx_looks_in_the_home_folders_npm_cache_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path))
    found = cached_package("npx", ["-y", "server-h"], "/usr/bin/npx")
    assert found == CachedPackage("npx", "server-h", False, where=str(tmp_path / ".npm" / "_npx"))
    folder = tmp_path / ".npm" / "_npx" / "f1"
    pkg = npx_package(tmp_path / ".npm", "f1", "server-h", '{"version": "1.0.0"}')
    (pkg / "a.js").write_bytes(b"x" * 100)
    found = cached_package("npx", ["-y", "server-h"], "/usr/bin/npx")
    assert found == CachedPackage(
        "npx", "server-h", True, 100 + len('{"version": "1.0.0"}'), str(folder), "1.0.0"
    )


def test_npx_reads_the_upper_case_cache_variable_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NPM_CONFIG_CACHE", str(tmp_path / "upper"))
    npx_package(tmp_path / "upper", "f1", "server-i", '{"version": "3"}')
    found = cached_package("npx", ["server-i"], "/usr/bin/npx")
    assert found is not None and found.cached is True and found.version == "3"


def test_npx_takes_the_first_cache_folder_in_name_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("npm_config_cache", str(tmp_path))
    npx_package(tmp_path, "b", "server-j", '{"version": "2.0.0"}')
    npx_package(tmp_path, "a", "server-j", '{"version": "1.0.0"}')
    npx_package(tmp_path, "c", "server-j", '{"version": "3.0.0"}')
    found = cached_package("npx", ["server-j"], "/usr/bin/npx")
    assert found is not None and found.version == "1.0.0"
    assert found.where == str(tmp_path / "_npx" / "a")


@pytest.mark.parametrize(
    "manifest", ["not json", "[1, 2]", '"text"', b"\xff\xfe".decode("latin-1")]
)
def test_an_npx_manifest_that_cannot_be_read_gives_no_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, manifest: str
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("npm_config_cache", str(tmp_path))
    pkg = npx_package(tmp_path, "a", "server-k")
    (pkg / "package.json").write_bytes(manifest.encode("latin-1"))
    found = cached_package("npx", ["server-k"], "/usr/bin/npx")
    assert found is not None and found.cached is True and found.version is None


def test_an_npx_manifest_of_a_megabyte_or_more_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("npm_config_cache", str(tmp_path))
    pkg = npx_package(tmp_path, "a", "server-l")
    text = '{"version": "9"}'
    (pkg / "package.json").write_text(text + " " * (1_000_000 - len(text)))
    found = cached_package("npx", ["server-l"], "/usr/bin/npx")
    assert found is not None and found.cached is True and found.version is None
    (pkg / "package.json").write_text(text + " " * (999_999 - len(text)))
    found = cached_package("npx", ["server-l"], "/usr/bin/npx")
    assert found is not None and found.version == "9"


def test_a_version_that_is_not_text_is_shown_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("npm_config_cache", str(tmp_path))
    npx_package(tmp_path, "a", "server-m", '{"version": 2}')
    found = cached_package("npx", ["server-m"], "/usr/bin/npx")
    assert found is not None and found.version == "2"


def test_an_npx_cache_that_is_a_file_is_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("npm_config_cache", str(tmp_path))
    (tmp_path / "_npx").write_text("")
    found = cached_package("npx", ["server-n"], "/usr/bin/npx")
    assert found is not None and found.cached is False


# --- a package's size -------------------------------------------------------------------


def test_the_size_counts_every_file_below_and_follows_no_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm"))
    pkg = npx_package(tmp_path / "npm", "a", "server-o", "{}")
    (pkg / "deep" / "deeper").mkdir(parents=True)
    (pkg / "deep" / "deeper" / "b.bin").write_bytes(b"y" * 1000)
    (pkg / "deep" / "c.bin").write_bytes(b"z" * 10)
    outside = tmp_path / "big"
    outside.mkdir()
    (outside / "huge.bin").write_bytes(b"h" * 50_000)
    (pkg / "linked-dir").symlink_to(outside)
    (pkg / "linked-file").symlink_to(outside / "huge.bin")
    found = cached_package("npx", ["server-o"], "/usr/bin/npx")
    assert found is not None and found.size == 2 + 1000 + 10


def test_a_package_of_too_many_files_has_no_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("npm_config_cache", str(tmp_path))
    monkeypatch.setattr(packages, "MAX_FILES", 5)
    pkg = npx_package(tmp_path, "a", "server-p", "{}")  # the package's folders count too
    found = cached_package("npx", ["server-p"], "/usr/bin/npx")
    assert found is not None and found.size == 2  # node_modules, server-p, package.json: 3
    for i in range(2):
        (pkg / f"f{i}").write_text("")
    found = cached_package("npx", ["server-p"], "/usr/bin/npx")
    assert found is not None and found.size == 2  # 5 entries: not more than MAX_FILES
    (pkg / "f2").write_text("")
    found = cached_package("npx", ["server-p"], "/usr/bin/npx")
    assert found is not None and found.cached is True and found.size is None


# --- uvx --------------------------------------------------------------------------------


def test_an_installed_uv_tool_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    (tmp_path / "tools" / "server-q").mkdir(parents=True)
    (tmp_path / "tools" / "server-q" / "x").write_bytes(b"q" * 7)
    (tmp_path / "tools" / "server-r").mkdir()
    found = cached_package("uvx", ["server-q"], "/usr/bin/uvx")
    assert found == CachedPackage("uvx", "server-q", True, 7, str(tmp_path / "tools" / "server-q"))
    found = cached_package("uvx", ["Server-R"], "/usr/bin/uvx")  # its name in lower case
    assert found is not None and found.cached is True
    assert found.where == str(tmp_path / "tools" / "server-r")


def test_uv_tools_are_in_the_home_folder_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UV_TOOL_DIR", raising=False)
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    monkeypatch.setenv("HOME", str(tmp_path))
    tool = tmp_path / ".local" / "share" / "uv" / "tools" / "server-s"
    tool.mkdir(parents=True)
    found = cached_package("uvx", ["server-s"], "/usr/bin/uvx")
    assert found is not None and found.cached is True and found.where == str(tool)


def test_a_cached_archive_matches_the_normalized_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    archives = tmp_path / "uv" / "archive-v0"
    (archives / "h0" / "other_server-1.0.dist-info").mkdir(parents=True)
    (archives / "h0" / "notes.txt").write_text("")
    (archives / "h1" / "My_Server-2.0.dist-info").mkdir(parents=True)
    (archives / "h1" / "my_server" / "m.py").parent.mkdir()
    (archives / "h1" / "my_server" / "m.py").write_bytes(b"m" * 30)
    (archives / "stray-file").write_text("")
    found = cached_package("uvx", ["my.server"], "/usr/bin/uvx")
    assert found == CachedPackage("uvx", "my.server", True, 30, str(archives / "h1"), "2.0")
    found = cached_package("uvx", ["my--server"], "/usr/bin/uvx")
    assert found is not None and found.cached is True
    # An older archive keeps the name's dots.
    (archives / "h2" / "zope.iface-5.0.dist-info").mkdir(parents=True)
    found = cached_package("uvx", ["zope-iface"], "/usr/bin/uvx")
    assert found is not None and found.version == "5.0"


def test_a_cached_archive_without_a_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    (tmp_path / "uv" / "archive-v0" / "h1" / "server_t.dist-info").mkdir(parents=True)
    found = cached_package("uvx", ["server-t"], "/usr/bin/uvx")
    assert found is not None and found.cached is True and found.version is None


def test_a_package_the_uv_cache_lacks_names_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    found = cached_package("uvx", ["server-u"], "/usr/bin/uvx")
    assert found == CachedPackage("uvx", "server-u", False, where=str(tmp_path / "uv"))


def fake_uv(fake_bin: FakeBin, script: str) -> Path:
    """A ``uv`` that runs ``script`` for ``uv cache dir``."""
    uv = fake_bin.path / "uv"
    uv.write_text(f'#!/bin/sh\nif [ "$1 $2" = "cache dir" ]; then\n{script}\nexit 0\nfi\nexit 2\n')
    uv.chmod(0o755)
    return uv


def test_the_uv_cache_is_asked_of_uv_next_to_uvx(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_bin: FakeBin
) -> None:
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    monkeypatch.delenv("UV_CACHE_DIR", raising=False)
    cache = tmp_path / "asked-cache"
    (cache / "archive-v0" / "h1" / "server_v-1.2.dist-info").mkdir(parents=True)
    # uv on PATH points elsewhere; the one next to uvx is asked first.
    fake_uv(fake_bin, f'echo "{tmp_path / "wrong"}"')
    beside = tmp_path / "beside"
    beside.mkdir()
    uv = beside / "uv"
    uv.write_text(f'#!/bin/sh\necho "  {cache}"\necho second-line\n')
    uv.chmod(0o755)
    found = cached_package("uvx", ["server-v"], str(beside / "uvx"))
    assert found is not None and found.cached is True and found.version == "1.2"
    # Without a uv next to uvx, the one on PATH.
    found = cached_package("uvx", ["server-v"], str(tmp_path / "elsewhere" / "uvx"))
    assert found == CachedPackage("uvx", "server-v", False, where=str(tmp_path / "wrong"))


@pytest.mark.parametrize("script", ["exit 1", "echo", 'echo "   "', 'echo "/somewhere" ; exit 3'])
def test_a_uv_cache_that_cannot_be_located_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_bin: FakeBin, script: str
) -> None:
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    monkeypatch.delenv("UV_CACHE_DIR", raising=False)
    fake_uv(fake_bin, script)
    found = cached_package("uvx", ["server-w"], str(fake_bin.path / "uvx"))
    assert found == CachedPackage("uvx", "server-w", None, note="the uv cache could not be located")


def test_without_uv_the_cache_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_bin: FakeBin
) -> None:
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    monkeypatch.delenv("UV_CACHE_DIR", raising=False)
    found = cached_package("uvx", ["server-x"], str(fake_bin.path / "uvx"))
    assert found is not None and found.cached is None


# --- docker -----------------------------------------------------------------------------


def fake_docker(fake_bin: FakeBin, script: str) -> Path:
    """A ``docker`` that logs its arguments and runs ``script``."""
    docker = fake_bin.path / "docker"
    docker.write_text(f'#!/bin/sh\necho "$*" >> "{fake_bin.log}"\n{script}\n')
    docker.chmod(0o755)
    return docker


@pytest.mark.parametrize(
    ("script", "cached", "size", "note"),
    [
        ("echo 123456", True, 123456, None),
        ('echo " 42 "', True, 42, None),
        ("echo", True, None, None),
        ("echo 1.5e9", True, None, None),
        ('echo "Error: No such image: img" >&2; exit 1', False, None, None),
        ('echo "Error response from daemon: NOT FOUND" >&2; exit 1', False, None, None),
        ('echo "Cannot connect to the Docker DAEMON" >&2; exit 1', None, None,
         "the Docker daemon is not reachable"),
        ('echo "permission denied" >&2; exit 1', None, None, "Docker failed"),
    ],
)  # fmt: skip
def test_a_docker_image_is_looked_up_with_image_inspect(
    fake_bin: FakeBin, script: str, cached: bool | None, size: int | None, note: str | None
) -> None:
    docker = fake_docker(fake_bin, script)
    found = cached_package(str(docker), ["run", "-i", "img:1"], str(docker))
    assert found == CachedPackage("docker", "img:1", cached, size, note=note)
    assert fake_bin.calls() == ["image inspect --format {{.Size}} img:1"]


def test_docker_reads_nothing_from_the_terminal(fake_bin: FakeBin) -> None:
    docker = fake_docker(fake_bin, "if read line; then echo 1; else echo 2; fi")
    found = cached_package("docker", ["run", "img"], str(docker))
    assert found is not None and found.size == 2


def test_a_docker_that_does_not_answer_in_time_is_unknown(
    fake_bin: FakeBin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(packages, "LOOKUP_TIMEOUT", 0.5)
    docker = fake_docker(fake_bin, "exec sleep 30")
    (fake_bin.path / "sleep").symlink_to("/bin/sleep")
    found = cached_package("docker", ["run", "img"], str(docker))
    assert found == CachedPackage("docker", "img", None, note="Docker did not answer in time")


def test_a_docker_that_cannot_run_is_unknown(tmp_path: Path) -> None:
    found = cached_package("docker", ["run", "img"], str(tmp_path / "no-docker"))
    assert found == CachedPackage("docker", "img", None, note="Docker did not answer in time")


@pytest.mark.parametrize("command", ["DOCKER", "docker.exe", "Docker.EXE", "/opt/x/docker.cmd"])
def test_the_command_is_known_by_its_name_in_any_case(fake_bin: FakeBin, command: str) -> None:
    docker = fake_docker(fake_bin, "echo 5")
    found = cached_package(command, ["run", "img"], str(docker))
    assert found is not None and found.tool == "docker" and found.size == 5


# --- what mutation testing found unpinned ---------------------------------------------------


def test_a_manifest_is_read_as_utf_8_whatever_the_locale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("npm_config_cache", str(tmp_path))
    pkg = npx_package(tmp_path, "a", "server-v")
    (pkg / "package.json").write_bytes('{"version": "3.1", "author": "Zoë"}'.encode())
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # ASCII: where no encoding is named
    try:
        found = cached_package("npx", ["server-v"], "/usr/bin/npx")
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    assert found is not None and found.version == "3.1"


def test_docker_reads_nothing_of_our_stdin(fake_bin: FakeBin) -> None:
    docker = fake_docker(fake_bin, "if read line; then echo 1; else echo 2; fi")
    with stdin_holding(b"a line\n"):
        found = cached_package("docker", ["run", "img"], str(docker))
    assert found is not None and found.size == 2


def test_a_folder_that_cannot_be_listed_is_passed_over_by_the_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As root, which the tests may run as, every folder can be listed: os.scandir refuses
    # the first folder below the package's instead, whichever it is.
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("npm_config_cache", str(tmp_path))
    pkg = npx_package(tmp_path, "a", "server-w", "{}")
    for folder in ("d1", "d2"):
        (pkg / folder).mkdir()
        (pkg / folder / "f.bin").write_bytes(b"x" * 100)
    scandir, refused = os.scandir, []

    def refusing(path: object) -> object:
        if Path(str(path)).parent == pkg and not refused:
            refused.append(path)
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", refusing)
    found = cached_package("npx", ["server-w"], "/usr/bin/npx")
    assert refused and found is not None and found.size == 2 + 100


def test_an_archive_that_cannot_be_listed_is_passed_over_by_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    archives = tmp_path / "uv" / "archive-v0"
    for folder in ("h0", "h1"):
        (archives / folder / "server_x-1.0.dist-info").mkdir(parents=True)
    iterdir, refused = Path.iterdir, []

    def refusing(path: Path) -> object:
        if path.parent == archives and not refused:
            refused.append(path)
            raise PermissionError(13, "Permission denied", str(path))
        return iterdir(path)

    monkeypatch.setattr(Path, "iterdir", refusing)
    found = cached_package("uvx", ["server-x"], "/usr/bin/uvx")
    assert refused and found is not None and found.cached is True
    assert found.where == str(archives / ({"h0", "h1"} - {refused[0].name}).pop())


def test_a_cache_folder_that_cannot_be_listed_holds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_npm_env(monkeypatch)
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm"))
    npx_package(tmp_path / "npm", "a", "server-y", "{}")
    monkeypatch.setenv("UV_TOOL_DIR", str(tmp_path / "tools"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv"))
    archives = tmp_path / "uv" / "archive-v0"
    (archives / "h0" / "server_y-1.0.dist-info").mkdir(parents=True)
    refused = {tmp_path / "npm" / "_npx", archives}
    iterdir = Path.iterdir

    def refusing(path: Path) -> object:
        if path in refused:
            raise PermissionError(13, "Permission denied", str(path))
        return iterdir(path)

    monkeypatch.setattr(Path, "iterdir", refusing)
    found = cached_package("npx", ["server-y"], "/usr/bin/npx")
    assert found == CachedPackage("npx", "server-y", False, where=str(tmp_path / "npm" / "_npx"))
    found = cached_package("uvx", ["server-y"], "/usr/bin/uvx")
    assert found == CachedPackage("uvx", "server-y", False, where=str(tmp_path / "uv"))
