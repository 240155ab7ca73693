"""A start-up time-out told apart from a first download, without starting anything: which
runner a command is, where npm and uv keep what they fetched (on this machine, in a folder
made by the test), and the hint that names ``mcpctl prefetch``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.probe.childenv import ProbeError
from mcpctl.probe.coldstart import (
    cold_start,
    downloading,
    npm_cache_dir,
    npx_installed,
    npx_key,
    npx_packages,
    runner_of,
)

TIMEOUT = ProbeError("timeout", "no answer within 3 s", "raise its timeout")
HINT = (
    "downloading on first start: run 'mcpctl prefetch srv' (then it starts without the "
    "download), or raise its timeout"
)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of the test's own, and none of the caches' variables from outside."""
    for name in ("npm_config_cache", "NPM_CONFIG_CACHE", "UV_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.mark.parametrize(
    ("command", "runner"),
    [
        ("npx", "npx"),
        ("/usr/local/bin/npx", "npx"),
        (r"C:\Program Files\nodejs\NPX.CMD", "npx"),
        ("npx.exe", "npx"),
        ("uvx.bat", "uvx"),
        ("docker.ps1", "docker"),
        ("/opt/bin/uvx", "uvx"),
        ("npx.sh", None),
        ("node", None),
        ("mynpx", None),
        ("", None),
        (None, None),
    ],
)
def test_the_runner_is_the_commands_program_name(command: str | None, runner: str | None) -> None:
    assert runner_of(command) == runner


@pytest.mark.parametrize(
    ("args", "packages"),
    [
        (["--cache", "/c", "pkg"], ["pkg"]),  # a valued option's value is not the package
        (["--cache=/c", "pkg"], ["pkg"]),
        (["--loglevel", "silent", "-y", "pkg@2"], ["pkg@2"]),
        (["-y", "--package"], None),  # the value missing
        (["-p", "a", "-p", "b", "run"], ["a", "b"]),
        (["--call=echo"], None),
        (["-y", "--"], None),
        (["-y", "$(pkg)"], None),
        (["-p", "${A}", "cmd"], None),
        (["--quiet", "pkg", "--", "x"], ["pkg"]),
        (["-c", "echo", "pkg"], None),  # a command, not a package
        (["--call", "echo", "pkg"], None),
        (["--", "-pkg"], ["-pkg"]),  # after "--": the package, whatever it looks like
        (["-y", "--", "pkg@1"], ["pkg@1"]),  # the argument after "--", not before it
        (["-p", "a"], ["a"]),
        (["-y", "--cache", "/c", "pkg"], ["pkg"]),
    ],
)
def test_the_packages_npx_installs(args: list[str], packages: list[str] | None) -> None:
    assert npx_packages(args) == packages


def test_the_key_sorts_the_packages_without_regard_to_case() -> None:
    import hashlib

    assert npx_key(["b@1", "A@2", "a@1"]) == npx_key(["a@1", "b@1", "A@2"])
    expected = hashlib.sha512(b"a@1\nA@2\nb@1").hexdigest()[:16]
    assert npx_key(["b@1", "A@2", "a@1"]) == expected


def test_npms_cache_is_found_where_npm_looks(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert npm_cache_dir() == home / ".npm"
    assert npm_cache_dir({"HOME": str(tmp_path)}) == tmp_path / ".npm"  # the entry's home
    assert npm_cache_dir({"HOME": "${HOME}"}) == home / ".npm"  # a placeholder is no value
    (home / ".npmrc").write_text('registry=x\n cache = "~/npmcache"\n')
    assert npm_cache_dir() == home / "npmcache"
    (home / ".npmrc").write_text("cache=\ncache=/elsewhere\n")
    assert npm_cache_dir() == Path("/elsewhere")
    (home / ".npmrc").write_text("cache=/big\n" + "#" * 256_000)
    assert npm_cache_dir() == home / ".npm"  # too large to be read
    monkeypatch.setenv("NPM_CONFIG_CACHE", "~/upper")
    assert npm_cache_dir() == home / "upper"
    monkeypatch.setenv("npm_config_cache", "/lower")
    assert npm_cache_dir() == Path("/lower")
    assert npm_cache_dir({"npm_config_cache": "/entry"}) == Path("/entry")  # the entry's first
    assert npm_cache_dir({"NPM_CONFIG_CACHE": "/entry2"}) == Path("/entry2")
    assert npm_cache_dir({"npm_config_cache": "${CACHE}"}) == Path("/lower")


def test_npms_cache_of_a_user_who_does_not_exist_is_taken_as_written(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nobody = "~mcpctl-no-such-user/cache"  # Path.expanduser raises for it
    (home / ".npmrc").write_text(f"cache={nobody}\n")
    assert npm_cache_dir() == Path(nobody)
    monkeypatch.setenv("NPM_CONFIG_CACHE", nobody)
    assert npm_cache_dir() == Path(nobody)


def test_a_folder_starting_with_a_tilde_is_where_npx_looks_as_written(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # npx starts in the entry's folder as written (no shell expands it): its node_modules.
    monkeypatch.chdir(tmp_path)
    for folder in (home, tmp_path / "~"):
        (folder / "node_modules" / "pkg").mkdir(parents=True)
        (folder / "node_modules" / "pkg" / "package.json").write_text("{}")
    entry = ServerEntry(command="npx", args=("-y", "pkg@1"), cwd="~")
    assert cold_start("srv", entry, TIMEOUT, []) == TIMEOUT  # its own copy: no download
    (tmp_path / "~" / "node_modules" / "pkg" / "package.json").unlink()
    assert cold_start("srv", entry, TIMEOUT, []).hint == HINT  # the home's copy is not it
    entry = ServerEntry(command="npx", args=("-y", "pkg@1"), cwd="~mcpctl-no-such-user")
    assert cold_start("srv", entry, TIMEOUT, []).hint == HINT  # and no error


def installed(cache: Path, packages: list[str], folder: str | None = None) -> Path:
    """``packages`` installed the way npx does, in ``_npx/<key>`` (or ``folder``)."""
    where = cache / "_npx" / (folder or npx_key(packages))
    for spec in packages:
        name = spec if spec.startswith("@") and spec.count("@") == 1 else spec.rpartition("@")[0]
        (where / "node_modules" / name).mkdir(parents=True)
        (where / "node_modules" / name / "package.json").write_text("{}")
    (where / "package.json").write_text(json.dumps({"_npx": {"packages": packages}}))
    return where


def test_an_installed_package_is_found_by_its_key(tmp_path: Path) -> None:
    specs = ["@scope/pkg@1.2", "other@3"]
    folder = installed(tmp_path, specs)
    assert npx_installed(tmp_path, specs) == folder
    assert npx_installed(tmp_path, ["other@3", "@scope/pkg@1.2"]) == folder
    assert npx_installed(tmp_path, ["other@3"]) is None  # the folder holds more


def test_an_installed_package_is_found_by_its_list_when_the_key_differs(tmp_path: Path) -> None:
    folder = installed(tmp_path, ["pkg@1"], folder="0000000000000000")
    installed(tmp_path, ["else@1"], folder="1111111111111111")
    assert npx_installed(tmp_path, ["pkg@1"]) == folder
    assert npx_installed(tmp_path, ["missing@1"]) is None
    assert npx_installed(tmp_path / "nowhere", ["pkg@1"]) is None


@pytest.mark.parametrize(
    "damage",
    ["no-module", "no-manifest", "not-json", "not-an-object", "no-list", "huge"],
)
def test_a_folder_that_does_not_hold_the_package_is_not_it(tmp_path: Path, damage: str) -> None:
    folder = installed(tmp_path, ["pkg@1"])
    manifest = folder / "package.json"
    if damage == "no-module":
        (folder / "node_modules" / "pkg" / "package.json").unlink()
    elif damage == "no-manifest":
        manifest.unlink()
    elif damage == "not-json":
        manifest.write_text("{")
    elif damage == "not-an-object":
        manifest.write_text('["pkg@1"]')
    elif damage == "no-list":
        manifest.write_text('{"_npx": {"packages": "pkg@1"}}')
    else:
        manifest.write_text(json.dumps({"_npx": {"packages": ["pkg@1"]}, "x": "#" * 1_000_001}))
    assert npx_installed(tmp_path, ["pkg@1"]) is None


@pytest.mark.parametrize(
    "line",
    [
        "Need to install the following packages: pkg@1 -- they WILL BE INSTALLED",
        "  Downloading cpython-3.12 (20.0MiB)",
        " Downloaded pydantic-core",
        "Resolved 12 packages in 1.2s",
        "Prepared 3 packages in 40ms",
        "Unable to find image 'mcp/time:latest' locally",
        "latest: Pulling from mcp/time",
        "a1b2c3: Pulling fs layer",
    ],
)
def test_what_a_runner_prints_while_it_downloads(line: str) -> None:
    assert downloading(["listening", line])


@pytest.mark.parametrize(
    "line",
    ["Server Downloading nothing", "Resolved the name", "Pulling the config", "Prepared to serve"],
)
def test_what_only_looks_like_a_download(line: str) -> None:
    assert not downloading([line])


def npx(tmp_path: Path, *args: str, **kwargs: object) -> ServerEntry:
    env = {"npm_config_cache": str(tmp_path / "cache")}
    return ServerEntry(command="npx", args=args or ("-y", "pkg@1"), env=env, **kwargs)  # type: ignore[arg-type]


def test_a_runner_that_timed_out_with_its_package_missing_gets_the_hint(tmp_path: Path) -> None:
    found = cold_start("srv", npx(tmp_path), TIMEOUT, [])
    assert found == ProbeError(
        "timeout", "no answer within 3 s, still downloading its package", HINT
    )
    installed(tmp_path / "cache", ["pkg@1"])
    assert cold_start("srv", npx(tmp_path), TIMEOUT, []) == TIMEOUT  # a hang
    said = ["Downloading pkg"]
    assert cold_start("srv", npx(tmp_path), TIMEOUT, said).hint == HINT
    assert cold_start("srv", npx(tmp_path, "-c", "x"), TIMEOUT, []) == TIMEOUT  # no package
    remote = ServerEntry(url="https://x.example/mcp", command="npx", transport="streamable-http")
    assert cold_start("srv", remote, TIMEOUT, said) == TIMEOUT
    docker = ServerEntry(command="docker", args=("run", "-i", "mcp/time"))
    assert cold_start("srv", docker, TIMEOUT, []) == TIMEOUT  # docker says so on stderr
    assert cold_start("srv", docker, TIMEOUT, ["Unable to find image 'x' locally"]).hint == HINT


def test_an_npx_entrys_placeholders_are_not_its_cache(tmp_path: Path, home: Path) -> None:
    installed(home / ".npm", ["pkg@1"])
    entry = ServerEntry(command="npx", args=("-y", "pkg@1"), env={"npm_config_cache": "${C}"})
    assert cold_start("srv", entry, TIMEOUT, []) == TIMEOUT  # found in ~/.npm


def test_an_npx_package_in_the_entrys_folder_is_run_from_there(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "node_modules" / "@s" / "p").mkdir(parents=True)
    (project / "node_modules" / "@s" / "p" / "package.json").write_text("{}")
    entry = npx(tmp_path, "-y", "@s/p@2", cwd=str(project))
    assert cold_start("srv", entry, TIMEOUT, []) == TIMEOUT
    assert cold_start("srv", npx(tmp_path, "-y", "@s/other@2", cwd=str(project)), TIMEOUT, []).hint


def uv_cache(root: Path, *dists: str) -> Path:
    for i, dist in enumerate(dists):
        (root / "archive-v0" / f"h{i}" / f"{dist}.dist-info").mkdir(parents=True)
    (root / "archive-v0").mkdir(parents=True, exist_ok=True)
    return root


@pytest.mark.parametrize(
    ("args", "cached"),
    [
        (("mcp-server-time",), True),
        (("mcp_server.time==1.0",), True),  # names compared normalized
        (("--from", "MCP-Server-Time[cli]>=1", "mcp-time"), True),
        (("--from=mcp-server-time@1.0", "x"), True),
        (("-q", "mcp-server-fetch"), False),
        (("--from", "other", "mcp-server-time"), False),
    ],
)
def test_a_uvx_package_is_looked_for_in_uvs_cache(
    tmp_path: Path, args: tuple[str, ...], cached: bool
) -> None:
    cache = uv_cache(tmp_path / "uv", "mcp_server_time-1.0.0", "other_thing-2")
    (cache / "archive-v0" / "h0" / "README").write_text("")
    entry = ServerEntry(command="uvx", args=args, env={"UV_CACHE_DIR": str(cache)})
    assert (cold_start("srv", entry, TIMEOUT, []) == TIMEOUT) is cached


def test_uvs_cache_is_found_where_uv_looks(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = ServerEntry(command="uvx", args=("mcp-server-time",))
    assert cold_start("srv", entry, TIMEOUT, []) == TIMEOUT  # no cache at all: not known
    uv_cache(home / ".cache" / "uv")
    assert cold_start("srv", entry, TIMEOUT, []).hint == HINT
    uv_cache(home / ".cache" / "uv", "mcp_server_time-1")
    assert cold_start("srv", entry, TIMEOUT, []) == TIMEOUT
    xdg = tmp_path / "xdg"
    uv_cache(xdg / "uv")
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    assert cold_start("srv", entry, TIMEOUT, []).hint == HINT
    with_xdg = ServerEntry(
        command="uvx", args=("mcp-server-time",), env={"XDG_CACHE_HOME": str(home / ".cache")}
    )
    assert cold_start("srv", with_xdg, TIMEOUT, []) == TIMEOUT
    monkeypatch.setenv("UV_CACHE_DIR", str(home / ".cache" / "uv"))
    assert cold_start("srv", entry, TIMEOUT, []) == TIMEOUT
    (tmp_path / "bare").mkdir()
    bare = ServerEntry(
        command="uvx", args=("mcp-server-time",), env={"UV_CACHE_DIR": str(tmp_path / "bare")}
    )
    assert cold_start("srv", bare, TIMEOUT, []).hint == HINT  # a cache without archives
    placeholder = ServerEntry(command="uvx", args=("${PKG}",))
    assert cold_start("srv", placeholder, TIMEOUT, []) == TIMEOUT
    options = ServerEntry(command="uvx", args=("--quiet",))
    assert cold_start("srv", options, TIMEOUT, []) == TIMEOUT


@pytest.mark.parametrize(
    ("args", "packages"),
    [
        (["--package=@scope/a@1", "--package", "b", "run-it"], ["@scope/a@1", "b"]),
        (["-p=a", "-p", "b", "x"], ["a", "b"]),
        (["--package=a", "cmd"], ["a"]),
        (["-y", "--package", "a", "--package", "b"], ["a", "b"]),
    ],
)
def test_every_package_option_is_read_in_either_spelling(
    args: list[str], packages: list[str]
) -> None:
    assert npx_packages(args) == packages


def test_the_key_sorts_an_underscore_before_the_letters_as_npm_does() -> None:
    import hashlib

    # npm sorts with localeCompare: "_" before any letter, whatever the case.
    expected = hashlib.sha512(b"mcp_tools@1\nmcpx@2").hexdigest()[:16]
    assert npx_key(["mcpx@2", "mcp_tools@1"]) == expected


def test_the_folder_listing_the_packages_is_found_past_others(tmp_path: Path) -> None:
    """Without the key's folder every folder is read, in order: ones without a manifest,
    with one that is not JSON, or listing other packages are passed over."""
    root = tmp_path / "_npx"
    (root / "0000000000000001").mkdir(parents=True)  # no manifest
    (root / "0000000000000002").mkdir()
    (root / "0000000000000002" / "package.json").write_text("{")
    installed(tmp_path, ["else@1"], folder="0000000000000003")
    folder = installed(tmp_path, ["pkg@1"], folder="0000000000000004")
    assert npx_installed(tmp_path, ["pkg@1"]) == folder


def test_an_error_other_than_a_timeout_is_returned_as_it_is(tmp_path: Path) -> None:
    exited = ProbeError("server_exited", "the server exited with code 1", None)
    assert cold_start("srv", npx(tmp_path), exited, ["Downloading pkg"]) == exited


# --- the limits and odd spellings of the files read ----------------------------------------


def npmrc_of_size(home: Path, size: int, cache: str = "/from-npmrc") -> None:
    """A ``.npmrc`` naming ``cache``, padded with a comment to exactly ``size`` bytes."""
    line = f"cache={cache}\n#"
    (home / ".npmrc").write_bytes((line + "#" * (size - len(line) - 1) + "\n").encode())
    assert (home / ".npmrc").stat().st_size == size


def test_an_npmrc_just_under_its_limit_is_read_and_one_at_it_is_not(home: Path) -> None:
    npmrc_of_size(home, 256_000 - 1)
    assert npm_cache_dir() == Path("/from-npmrc")
    npmrc_of_size(home, 256_000)
    assert npm_cache_dir() == home / ".npm"


def test_an_npmrc_that_is_not_utf8_is_still_read(home: Path) -> None:
    (home / ".npmrc").write_bytes(b"; caf\xe9 in latin-1\ncache=/latin\n")
    assert npm_cache_dir() == Path("/latin")


@pytest.mark.parametrize(
    ("line", "cache"),
    [
        ("cache=/a=b", "/a=b"),  # split at the first "=" only
        ('cache="/npmX"', "/npmX"),  # only the quotes are taken off
        ("cache = /npmX ", "/npmX"),
    ],
)
def test_an_npmrc_cache_value_is_kept_whole(home: Path, line: str, cache: str) -> None:
    (home / ".npmrc").write_text(line + "\n")
    assert npm_cache_dir() == Path(cache)


def manifest_of_size(folder: Path, packages: list[str], size: int) -> None:
    """``folder``'s ``package.json`` listing ``packages``, padded to exactly ``size`` bytes."""
    head = json.dumps({"_npx": {"packages": packages}, "pad": ""})
    text = head[:-2] + "x" * (size - len(head)) + head[-2:]
    (folder / "package.json").write_text(text)
    assert (folder / "package.json").stat().st_size == size


def test_a_manifest_at_its_limit_is_read_and_one_past_it_is_not(tmp_path: Path) -> None:
    folder = installed(tmp_path, ["pkg@1"])
    manifest_of_size(folder, ["pkg@1"], 1_000_000)
    assert npx_installed(tmp_path, ["pkg@1"]) == folder
    manifest_of_size(folder, ["pkg@1"], 1_000_001)
    assert npx_installed(tmp_path, ["pkg@1"]) is None


def test_a_manifest_without_npxs_list_is_not_the_folder(tmp_path: Path) -> None:
    folder = installed(tmp_path, ["pkg@1"])
    (folder / "package.json").write_text('{"name": "x"}')
    assert npx_installed(tmp_path, ["pkg@1"]) is None
    (folder / "package.json").write_text('{"_npx": {}}')
    assert npx_installed(tmp_path, ["pkg@1"]) is None


def test_a_package_without_a_version_in_the_entrys_folder_is_run_from_there(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "package.json").write_text("{}")
    assert cold_start("srv", npx(tmp_path, "-y", "pkg", cwd=str(project)), TIMEOUT, []) == TIMEOUT
    (project / "node_modules" / "@s" / "p").mkdir(parents=True)
    (project / "node_modules" / "@s" / "p" / "package.json").write_text("{}")
    assert cold_start("srv", npx(tmp_path, "-y", "@s/p", cwd=str(project)), TIMEOUT, []) == TIMEOUT


def test_without_a_cwd_the_folder_mcpctl_runs_in_is_the_entrys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "package.json").write_text("{}")
    monkeypatch.chdir(project)
    assert cold_start("srv", npx(tmp_path, "-y", "pkg@1"), TIMEOUT, []) == TIMEOUT


@pytest.mark.parametrize(
    ("args", "downloading"),
    [
        (("--from",), False),  # no value and nothing else: no package named, not known
        (("mcp-server-time", "--from"), False),  # the last --from names nothing
        (("--from=mcp-server-time==1.0", "x"), False),  # split at the first "=" only
        (("--from=other==1.0", "mcp-server-time"), True),
    ],
)
def test_uvxs_from_at_the_end_or_with_a_version(
    tmp_path: Path, args: tuple[str, ...], downloading: bool
) -> None:
    cache = uv_cache(tmp_path / "uv", "mcp_server_time-1.0.0")
    entry = ServerEntry(command="uvx", args=args, env={"UV_CACHE_DIR": str(cache)})
    found = cold_start("srv", entry, TIMEOUT, [])
    assert found == (TIMEOUT._replace(message=f"{TIMEOUT.message}, still downloading its package",
                                      hint=HINT) if downloading else TIMEOUT)  # fmt: skip
