"""A lock file's package pins: their JSON form read and written, the warnings a lock gives,
and the lock's versions written into the commands (or why not)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.snapshot.packagepins import (
    PackagePin,
    pin_entries,
    pin_warnings,
    pins_from_data,
    pins_to_data,
)

DIGEST = "sha256:" + "ab" * 32


def test_a_pin_is_written_with_only_what_it_knows() -> None:
    bare = PackagePin("npm", "pkg", "", False)
    assert bare.to_data() == {"ecosystem": "npm", "name": "pkg", "spec": "", "pinned": False,
                              "status": "resolved"}  # fmt: skip
    full = PackagePin("pypi", "pkg", "==1.0", True, "1.0", "sha256:x", "pkg-1.0.whl",
                      "unresolved", "offline", "a -> b")  # fmt: skip
    assert full.to_data() == {
        "ecosystem": "pypi", "name": "pkg", "spec": "==1.0", "pinned": True,
        "version": "1.0", "integrity": "sha256:x", "file": "pkg-1.0.whl",
        "status": "unresolved", "reason": "offline", "redirect": "a -> b",
    }  # fmt: skip
    assert list(full.to_data()) == ["ecosystem", "name", "spec", "pinned", "version",
                                    "integrity", "file", "status", "reason",
                                    "redirect"]  # fmt: skip


def test_a_pin_s_label_is_its_version_or_digest() -> None:
    assert PackagePin("npm", "pkg", "", False, "1.0").label == "pkg 1.0"
    assert PackagePin("oci", "img", "", True, None, DIGEST).label == f"img {DIGEST}"
    assert PackagePin("oci", "img", "", True).label == "img ?"
    assert PackagePin("npm", "pkg", "", False).resolved
    assert not PackagePin("npm", "pkg", "", False, status="unresolved").resolved


def test_pins_are_written_by_server_and_read_back() -> None:
    pins = {
        "b": PackagePin("npm", "b", "^1", False, "1.2.0", "sha512-x"),
        "a": PackagePin("oci", "img", ":1", False, None, DIGEST, redirect="x -> y"),
        "c": PackagePin("pypi", "c", "", False, status="unresolved", reason="offline"),
        "d": PackagePin("pypi", "d", "", False, "1.0", "sha256:y", "d-1.0-py3-none-any.whl"),
    }
    data = pins_to_data(pins)
    assert list(data) == ["a", "b", "c", "d"]
    assert pins_from_data(data) == pins


def test_a_lock_s_pin_may_leave_out_what_has_a_default() -> None:
    assert pins_from_data({"s": {"name": "pkg"}}) == {
        "s": PackagePin("npm", "pkg", "", False, status="resolved")
    }
    assert pins_from_data({}) == {}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "packages: expected an object"),
        ({"s": "pkg"}, "packages.s: expected an object"),
        ({"s": {"name": "x", "ecosystem": 1}}, "packages.s.ecosystem: expected a string"),
        ({"s": {"name": "x", "redirect": []}}, "packages.s.redirect: expected a string"),
        ({"s": {"name": "x", "reason": {}}}, "packages.s.reason: expected a string"),
        ({"s": {"name": "x", "pinned": 1}}, "packages.s.pinned: expected true or false"),
        ({"s": {"name": "x", "pinned": None}}, "packages.s.pinned: expected true or false"),
        ({"s": {}}, "packages.s.name: expected a string"),
        ({"s": {"name": ""}}, "packages.s.name: expected a string"),
    ],
)
def test_a_bad_pin_is_refused_saying_where(data: Any, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        pins_from_data(data)
    assert str(caught.value) == message


def test_a_lock_warns_of_what_did_not_resolve_and_what_the_config_does_not_pin() -> None:
    pins = {
        "z": PackagePin("npm", "zz", "", False, "1.0.0"),
        "a": PackagePin("npm", "aa", "", False, status="unresolved", reason="offline"),
        "p": PackagePin("npm", "pp", "1.0.0", True, "1.0.0"),
    }
    assert pin_warnings(pins) == [
        "a: package aa unresolved: offline",
        "z: zz is not pinned in the config; recorded 1.0.0 as it resolves now",
    ]


def test_the_lock_s_versions_are_written_into_the_commands() -> None:
    entries = {
        "n": ServerEntry(command="npx", args=("-y", "@org/pkg@^1", "--flag")),
        "p": ServerEntry(command="uvx", args=("--from", "pkg[cli]>=1", "cmd")),
        "d": ServerEntry(command="docker", args=("run", "-i", "img:latest")),
        "local": ServerEntry(command="node", args=("server.js",)),
    }
    pins = {
        "n": PackagePin("npm", "@org/pkg", "^1", False, "1.2.3"),
        "p": PackagePin("pypi", "pkg", ">=1", False, "1.4"),
        "d": PackagePin("oci", "img", ":latest", False, "latest", DIGEST),
    }
    out, warnings = pin_entries(entries, pins)
    assert warnings == []
    assert out["n"].args == ("-y", "@org/pkg@1.2.3", "--flag")
    assert out["p"].args == ("--from", "pkg[cli]==1.4", "cmd")
    assert out["d"].args == ("run", "-i", f"img@{DIGEST}")
    assert out["local"] == entries["local"]
    assert out["n"].command == "npx"


def test_what_the_lock_does_not_pin_is_rendered_unpinned_saying_why() -> None:
    entries = {
        "missing": ServerEntry(command="npx", args=("-y", "a")),
        "other": ServerEntry(command="npx", args=("-y", "b")),
        "ecosystem": ServerEntry(command="uvx", args=("b",)),
        "down": ServerEntry(command="npx", args=("-y", "c")),
        "digest": ServerEntry(command="docker", args=("run", "img")),
        "noversion": ServerEntry(command="npx", args=("-y", "d")),
    }
    pins = {
        "other": PackagePin("npm", "a", "", False, "1.0.0"),
        "ecosystem": PackagePin("npm", "b", "", False, "1.0.0"),
        "down": PackagePin("npm", "c", "", False, status="unresolved", reason="offline"),
        "digest": PackagePin("oci", "img", "", False, None, "sha256:short"),
        "noversion": PackagePin("npm", "d", "", False, None, "sha512-x"),
    }
    out, warnings = pin_entries(entries, pins)
    assert out == entries
    assert sorted(warnings) == sorted([
        "missing: not in the lock file's packages: rendered unpinned",
        "other: the lock records a, the config runs b: rendered unpinned",
        "ecosystem: the lock records b, the config runs b: rendered unpinned",
        "down: the lock could not resolve it (offline): rendered unpinned",
        "digest: the lock's 'sha256:short' is not a version of img: rendered unpinned",
        "noversion: the lock's 'sha512-x' is not a version of d: rendered unpinned",
    ])  # fmt: skip


def test_an_image_without_a_digest_is_rendered_unpinned() -> None:
    entries = {"d": ServerEntry(command="docker", args=("run", "img"))}
    out, warnings = pin_entries(entries, {"d": PackagePin("oci", "img", "", False, "1.0")})
    assert out == entries
    assert warnings == ["d: the lock's '1.0' is not a version of img: rendered unpinned"]
    digest = "sha256:" + "AB" * 32  # a digest is written in lower case
    out, _ = pin_entries(entries, {"d": PackagePin("oci", "img", "", False, None, digest)})
    assert out == entries
    out, _ = pin_entries(entries, {"d": PackagePin("oci", "img", "", False, None, DIGEST + "0")})
    assert out == entries


@pytest.mark.parametrize("version", ["1.0; rm -rf ~", "1.0 --index-url=x", "latest", None])
def test_a_lock_s_pypi_version_that_is_no_version_is_not_written_into_the_command(
    version: str | None,
) -> None:
    entries = {"p": ServerEntry(command="uvx", args=("pkg",))}
    pin = PackagePin("pypi", "pkg", "", False, version, "sha256:" + "0" * 64)
    out, warnings = pin_entries(entries, {"p": pin})
    assert out == entries
    assert [w.split(":")[0] for w in warnings] == ["p"]
    assert warnings[0].endswith("is not a version of pkg: rendered unpinned")
