"""An orchestrator's internal servers, found by the manifest in each sibling folder's
package.json: every field optional, anything unusable skipped with a warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.config.siblings import discover_internal, select_targets
from mcpctl.errors import ServerNotFoundError


def package(root: Path, folder: str, manifest: Any, **fields: Any) -> Path:
    (root / folder).mkdir(parents=True)
    path = root / folder / "package.json"
    path.write_text(json.dumps({"annabelle": manifest, **fields}))
    return path


def one(root: Path, manifest: Any, folder: str = "srv", **fields: Any) -> tuple[str, ServerEntry]:
    package(root, folder, manifest, **fields)
    servers, warnings = discover_internal(root)
    assert warnings == []
    ((name, entry),) = servers.items()
    return name, entry


@pytest.mark.parametrize(
    ("manifest", "fields", "name"),
    [
        ({"mcpName": "guardian", "name": "n"}, {"name": "p"}, "guardian"),
        ({"name": "filer"}, {"name": "p"}, "filer"),
        ({"mcpName": " ", "name": ""}, {"name": "@annabelle/memorizer"}, "memorizer"),
        ({}, {"name": "@scope/sub/Deep_Name-1"}, "Deep_Name-1"),
        ({}, {}, "srv"),
        ({"mcpName": 5}, {"name": ["x"]}, "srv"),
        ({"name": "--my server!--"}, {}, "my-server"),
        ({"name": "X-ray-X"}, {}, "X-ray-X"),
        ({"name": "!!!"}, {}, "srv"),
        ({"name": "x" * 70}, {}, "x" * 64),
    ],
)
def test_the_server_is_named_by_the_manifest_else_the_package_else_the_folder(
    tmp_path: Path, manifest: dict[str, Any], fields: dict[str, Any], name: str
) -> None:
    assert one(tmp_path, manifest, **fields)[0] == name


def test_a_long_folder_name_is_cut_to_a_server_name(tmp_path: Path) -> None:
    assert one(tmp_path, {"name": "!"}, folder="f" * 70)[0] == "f" * 64


@pytest.mark.parametrize(
    ("timeout", "kept"),
    [(5000, 5000), (1, 1), (3_600_000, 3_600_000), (3_600_001, None), (0, None), (-5, None),
     (True, None), ("5000", None), (1.5, None)],
)  # fmt: skip
def test_a_timeout_in_milliseconds_is_kept_up_to_an_hour(
    tmp_path: Path, timeout: Any, kept: int | None
) -> None:
    assert one(tmp_path, {"timeout": timeout})[1].timeout == kept


def test_a_command_server_gets_its_command_arguments_environment_and_folder(
    tmp_path: Path,
) -> None:
    manifest = {
        "command": "python3",
        "args": ["-m", "srv"],
        "env": {"A": "b", "N": 1},
        "description": "Mine",
        "sensitive": True,
        "entrypoint": "ignored.js",
    }
    _, entry = one(tmp_path, manifest, description="The package's")
    assert entry.command == "python3" and entry.args == ("-m", "srv")
    assert entry.env == {"A": "b"} and entry.cwd == str(tmp_path / "srv")
    assert entry.description == "Mine" and entry.sensitive is True and entry.url is None


@pytest.mark.parametrize(
    ("manifest", "fields", "args"),
    [
        ({"entrypoint": "build/e.js", "args": ["x", 1]}, {"main": "m.js"}, ["build/e.js"]),
        ({}, {"main": "lib/m.js"}, ["lib/m.js"]),
        ({"args": "x"}, {}, ["dist/index.js"]),
        ({"entrypoint": 5}, {}, []),
    ],
)
def test_without_usable_arguments_the_entry_point_is_run_with_node(
    tmp_path: Path, manifest: dict[str, Any], fields: dict[str, Any], args: list[str]
) -> None:
    _, entry = one(tmp_path, {"command": " ", **manifest}, **fields)
    assert entry.command == "node"
    assert entry.args == tuple(str(tmp_path / "srv" / a) for a in args)
    assert entry.description is None and entry.sensitive is False


@pytest.mark.parametrize("url", ["http://127.0.0.1:8010/mcp", "https://example.test/mcp"])
def test_a_manifest_with_an_address_is_a_remote_server(tmp_path: Path, url: str) -> None:
    _, entry = one(
        tmp_path, {"url": url, "command": "x", "timeout": 9, "sensitive": True, "description": 3}
    )
    assert entry.url == url and entry.command is None
    assert entry.timeout == 9 and entry.sensitive and entry.description is None


def test_an_address_that_is_not_http_is_ignored(tmp_path: Path) -> None:
    _, entry = one(tmp_path, {"url": "ftp://x/mcp"}, description="The package's")
    assert entry.url is None and entry.command == "node"
    assert entry.description == "The package's"


def test_every_folder_is_looked_at_whatever_the_ones_before_it_hold(tmp_path: Path) -> None:
    (tmp_path / "a-no-package").mkdir()
    (tmp_path / "b-file").write_text("{}")
    package(tmp_path, "c-named-twice", {}, name="dup")
    package(tmp_path, "d-no-manifest", {}).write_text('{"name": "plain"}')
    package(tmp_path, "e-not-an-object", {}).write_text("[1]")
    package(tmp_path, "f-disabled", {"enabled": False})
    package(tmp_path, "g-dup", {}, name="dup")
    bad = package(tmp_path, "h-bad-name", {"name": "!"})
    bad.parent.rename(tmp_path / "h bad name")
    bad = tmp_path / "h bad name" / "package.json"
    (tmp_path / "i-broken").mkdir()
    (tmp_path / "i-broken" / "package.json").write_text("{oops")
    bom = package(tmp_path, "j-bom", {"mcpName": "bom"})
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())
    package(tmp_path, "k-true", True, name="last")
    servers, warnings = discover_internal(tmp_path)
    assert list(servers) == ["dup", "bom", "last"]
    assert servers["dup"].cwd == str(tmp_path / "c-named-twice")
    assert warnings[:2] == [
        f"{tmp_path / 'g-dup' / 'package.json'}: internal server 'dup' is defined twice; skipped",
        f"{bad}: no usable server name; skipped",
    ]
    assert len(warnings) == 3
    assert warnings[2].startswith(f"{tmp_path / 'i-broken' / 'package.json'}: unreadable (")
    assert warnings[2].endswith("); skipped")


def test_a_root_that_cannot_be_scanned_is_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "nope"
    assert discover_internal(root) == (
        {},
        [f"cannot scan internal MCPs in {root}: No such file or directory"],
    )


def test_an_unknown_name_is_refused_with_a_guess_among_both_kinds() -> None:
    external = {"time": ServerEntry(command="t")}
    internal = {"guardian": ServerEntry(command="node")}
    with pytest.raises(ServerNotFoundError) as caught:
        select_targets(external, internal, names=["time", "guardain", "x"])
    assert caught.value.message == "no servers 'guardain', 'x'"
    assert caught.value.hint == "did you mean 'guardian'?"
