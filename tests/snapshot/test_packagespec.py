"""Which package a stdio server's command line runs (parse_spec, specs_of): the options each
launcher takes a value for, the forms of a spec, and what is no registry package.
test_packages.py has the common forms and the round trips through a lock."""

from __future__ import annotations

from typing import Any

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.snapshot.packagespec import PackageSpec, parse_spec, specs_of

DIGEST = "sha256:" + "a" * 64


@pytest.mark.parametrize(
    ("command", "args", "expected"),
    [
        # npx: an option's value is not the package; "--" ends the options.
        ("npx", ["--registry", "https://r", "pkg@1.0.0"], ("npm", "pkg", "1.0.0", "npx", 2, "npm")),
        ("npx", ["-w", "ws", "pkg"], ("npm", "pkg", "", "npx", 2, "npm")),
        ("npx", ["--", "pkg"], ("npm", "pkg", "", "npx", 1, "npm")),
        ("npx", ["-p", "pkg", "--package", "other", "cmd"], ("npm", "pkg", "", "npx", 1, "npm")),
        ("npx", ["--package", "pkg@2.0.0", "cmd"], ("npm", "pkg", "2.0.0", "npx", 1, "npm")),
        ("npx", ["-y", "pkg", "${X}"], ("npm", "pkg", "", "npx", 1, "npm")),
        ("npx", ["-p", "pkg"], ("npm", "pkg", "", "npx", 1, "npm")),
        ("npx", ["-y", "pkg@1.X"], ("npm", "pkg", "1.X", "npx", 1, "npm")),  # an X-range
        # The program's name: any folder, either slash, any case, a Windows suffix.
        (r"C:\bin\NPX.CMD", ["-y", "pkg"], ("npm", "pkg", "", "npx", 1, "npm")),
        ("npx.ps1", ["pkg"], ("npm", "pkg", "", "npx", 0, "npm")),
        ("npx.exe", ["pkg"], ("npm", "pkg", "", "npx", 0, "npm")),
        ("npx.bat", ["pkg"], ("npm", "pkg", "", "npx", 0, "npm")),
        # uvx, uv tool run, pipx run.
        ("uv", ["tool", "run", "pkg==1"], ("pypi", "pkg", "==1", "uvx", 2, "pypi")),
        ("uvx", ["--with", "x", "pkg"], ("pypi", "pkg", "", "uvx", 2, "pypi")),
        ("uvx", ["-p", "3.12", "-c", "c.txt", "pkg"], ("pypi", "pkg", "", "uvx", 4, "pypi")),
        ("uvx", ["--from", "pkg@1.2", "cmd"], ("pypi", "pkg", "==1.2", "uvx", 1, "pypi-at")),
        ("uvx", ["pkg @ 1.2"], ("pypi", "pkg", "==1.2", "uvx", 0, "pypi-at")),
        ("uvx", ["pkg@ 1.2"], ("pypi", "pkg", "==1.2", "uvx", 0, "pypi-at")),
        ("uvx", ["pkg>= 1, <2"], ("pypi", "pkg", ">=1,<2", "uvx", 0, "pypi")),
        ("uvx", ["pkg==1,"], ("pypi", "pkg", "==1", "uvx", 0, "pypi")),
        ("uvx", ["pkg~=1.2"], ("pypi", "pkg", "~=1.2", "uvx", 0, "pypi")),
        ("uvx", ["pkg!=1.2"], ("pypi", "pkg", "!=1.2", "uvx", 0, "pypi")),
        ("uvx", ["pkg===1.2"], ("pypi", "pkg", "===1.2", "uvx", 0, "pypi")),
        ("uvx", ["pkg<=2", "--flag"], ("pypi", "pkg", "<=2", "uvx", 0, "pypi")),
        ("uvx", ["pkg@latest"], ("pypi", "pkg", "", "uvx", 0, "pypi-at")),  # no version asked
        ("pipx", ["run", "--python", "3.12", "pkg"], ("pypi", "pkg", "", "pipx", 3, "pypi")),
        ("pipx", ["run", "--spec=pkg==1.0", "cmd"], ("pypi", "pkg", "==1.0", "pipx", 1, "pypi")),
        ("pipx", ["run", "--backend", "uv", "pkg"], ("pypi", "pkg", "", "pipx", 3, "pypi")),
        # docker and podman: short options with a value, long ones unless a known flag.
        ("podman", ["run", "-i", "img:1"], ("oci", "img", ":1", "podman", 2, "oci")),
        ("docker", ["run", "--env=K=v", "--name", "x", "img"], ("oci", "img", "", "docker", 4, "oci")),
        ("docker", ["run", "--rm", "--init", "--read-only", "img"], ("oci", "img", "", "docker", 4, "oci")),
        ("docker", ["run", "-e", "K", "-v", "a:b", "img"], ("oci", "img", "", "docker", 5, "oci")),
        ("docker", ["run", "localhost:5000/img:tag"],
         ("oci", "localhost:5000/img", ":tag", "docker", 1, "oci")),
        ("docker", ["run", "localhost:5000/img"], ("oci", "localhost:5000/img", "", "docker", 1, "oci")),
        ("docker", ["run", "img:1@" + DIGEST], ("oci", "img", ":1@" + DIGEST, "docker", 1, "oci")),
    ],
)  # fmt: skip
def test_a_spec_is_found_past_the_launcher_s_options(
    command: str, args: list[str], expected: tuple[Any, ...]
) -> None:
    spec = parse_spec(command, args)
    assert spec is not None
    assert (spec.ecosystem, spec.name, spec.requested, spec.launcher, spec.index, spec.form) == (
        expected
    )


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("npx", ["--"]),  # nothing after the options
        ("npx", ["-y", "${X}"]),  # a placeholder is no package
        ("npx", ["-y", "$(cat name)"]),
        ("npx", ["--call", "echo hi"]),
        ("npx", ["-p", "pkg", "-c", "serve"]),  # a command run with the package
        ("npx", ["-p", "pkg", "--call", "serve"]),
        ("npx", ["pkg@${VERSION}"]),  # a placeholder in the version
        ("npx", ["pkg@$(cat version)"]),
        ("npx", ["--", "--package", "pkg"]),  # past "--" nothing is an option
        ("npx", ["-", "pkg"]),  # "-" is an argument, not an option
        ("npx", ["-y", "--registry"]),  # an option missing its value
        ("npx", ["-y", "pkg@file"]),
        ("npx", ["-y", "@scope"]),  # a scope without a name
        ("npx", ["-y", "pkg@"]),
        ("npx", ["-y", "pkg@file:x"]),
        ("npx", ["-y", "pkg@git+x"]),
        ("npx", ["-y", "pkg@http1"]),
        ("npx", ["-y", "pkg@a/b"]),
        ("npx", ["-y", "pkg@a\\b"]),
        ("npx", ["-y", "pkg:x"]),
        ("npx", ["-y", "@org/pkg:x"]),
        ("npx", ["-y", "-"]),
        ("uv", ["run", "pkg"]),  # not "uv tool run"
        ("uv", ["run", "python", "server.py"]),
        ("uvx", ["-"]),
        ("uvx", ["--python", "3.12"]),  # no package at all
        ("uvx", ["pkg; python_version>'3'"]),  # an environment marker
        ("uvx", ["pkg==1;python_version>'3'"]),
        ("uvx", ["--python"]),
        ("uvx", ["pkg@1/2"]),
        ("uvx", ["pkg@1:2"]),
        ("uvx", ["pkg@1 2"]),
        ("uvx", ["pkg@"]),
        ("uvx", ["pkg==1 junk"]),
        ("uvx", ["-pkg"]),
        ("pipx", []),
        ("pipx", ["run", "pkg@1.2"]),  # only uv reads pkg@version
        ("pipx", ["run", "--spec", "pkg@1.2", "cmd"]),
        ("docker", []),
        ("docker", ["run", "Mcp/Time"]),  # not an image's name
        ("docker", ["run", "-i", "${IMAGE}"]),
        ("docker", ["run", "--name", "img"]),
        ("podman", ["pull", "img"]),
        ("", ["pkg"]),
    ],
)
def test_what_names_no_registry_package_is_not_read(command: str, args: list[str]) -> None:
    assert parse_spec(command, args) is None


def test_a_spec_is_shown_as_a_person_writes_it() -> None:
    def text(command: str, *args: str) -> str:
        spec = parse_spec(command, list(args))
        assert spec is not None
        return spec.text

    assert text("npx", "-y", "pkg") == "pkg"
    assert text("uvx", "pkg==1") == "pkg==1"
    assert text("npx", "-y", "@org/pkg@^1") == "@org/pkg@^1"
    assert text("uvx", "pkg[cli,x]>=1") == "pkg[cli,x]>=1"
    assert text("uvx", "pkg[cli]@1.2") == "pkg[cli]==1.2"
    assert text("docker", "run", "img:1") == "img:1"
    assert text("docker", "run", "img@" + DIGEST) == "img@" + DIGEST


def test_extras_are_kept_apart_from_the_name() -> None:
    spec = parse_spec("uvx", ["--from", "pkg[cli] == 1.2", "cmd"])
    assert spec is not None
    assert (spec.name, spec.extras, spec.requested, spec.exact) == ("pkg", "[cli]", "==1.2", "1.2")


@pytest.mark.parametrize(
    ("spec", "pinned", "exact"),
    [
        (PackageSpec("npm", "p", "=1.2.3", "npx", 0, "npm"), True, "1.2.3"),
        (PackageSpec("npm", "p", "^1.2.3", "npx", 0, "npm"), False, None),
        (PackageSpec("pypi", "p", "==1.2", "uvx", 0, "pypi"), True, "1.2"),
        (PackageSpec("pypi", "p", "==1.*", "uvx", 0, "pypi"), False, None),
        (PackageSpec("oci", "i", "@" + DIGEST, "docker", 0, "oci"), True, None),
        (PackageSpec("oci", "i", DIGEST, "docker", 0, "oci"), True, None),
        (PackageSpec("oci", "i", ":1.2.3", "docker", 0, "oci"), False, None),
        (PackageSpec("oci", "i", "", "docker", 0, "oci"), False, None),
    ],
)
def test_a_spec_is_pinned_when_it_names_one_version_or_digest(
    spec: PackageSpec, pinned: bool, exact: str | None
) -> None:
    assert (spec.pinned, spec.exact) == (pinned, exact)


def test_specs_of_takes_the_enabled_stdio_servers_that_run_a_package() -> None:
    entries = {
        "npm": ServerEntry(command="npx", args=("-y", "pkg@1.0.0")),
        "off": ServerEntry(command="npx", args=("-y", "pkg"), enabled=False),
        "remote": ServerEntry(url="https://example.com/mcp"),
        "local": ServerEntry(command="node", args=("server.js",)),
        "py": ServerEntry(command="uvx", args=("tool==2",)),
    }
    found = specs_of(entries)
    assert sorted(found) == ["npm", "py"]
    assert (found["npm"].name, found["npm"].requested) == ("pkg", "1.0.0")
    assert (found["py"].name, found["py"].requested) == ("tool", "==2")


def test_a_scoped_npm_name_ends_at_the_first_at_sign_after_its_scope() -> None:
    # As npm reads it (npm-package-arg): the rest, `1@2`, is what is asked for (no version
    # nor tag npm accepts, so it resolves to nothing), never a name `@org/pkg@1`.
    spec = parse_spec("npx", ["-y", "@org/pkg@1@2"])
    assert spec is not None and (spec.name, spec.requested) == ("@org/pkg", "1@2")
    plain = parse_spec("npx", ["-y", "pkg@1@2"])
    assert plain is not None and (plain.name, plain.requested) == ("pkg", "1@2")
