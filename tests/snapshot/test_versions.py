"""Versions and ranges: npm's read as npm's own semver package reads them (checked against it,
run by node), PyPI's as PEP 440 says, and nothing that is not a version taken for one."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from mcpctl.snapshot.versions import (
    best_npm,
    best_pypi,
    is_npm_tag,
    is_npm_version,
    is_pypi_version,
    npm_exact,
    npm_satisfies,
    pypi_exact,
    pypi_satisfies,
)
from tests.conftest import need_program

VERSIONS = [
    "0.0.1", "0.0.2", "0.1.0", "0.1.5", "0.2.0", "0.2.1", "0.2.5", "0.3.0-beta.1",
    "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0.0-rc.1", "1.0.0-0", "1.0.0", "1.0.1",
    "1.2.0", "1.2.3", "1.2.4-rc.1", "1.2.4", "1.3.0", "1.10.0", "2.0.0-rc.1", "2.0.0", "2.0.1",
    "2.5.0", "3.0.0-beta.1", "3.0.0", "10.0.0",
]  # fmt: skip
RANGES = [
    "*", "", "x", "1", "1.x", "1.2.x", "1.2", "^1.2.3", "^0.2.1", "^0.0.1", "^0", "^0.x",
    "^1.x", "~1.2.3", "~1.2", "~1", "~0.2.0", ">=1.2.3", ">1.2.3", "<2.0.0", "<=1.2.3",
    ">=1.0.0 <2.0.0", ">=1.2 <1.3", "1.0.0 - 1.2.0", "1.2 - 2", "1 - 2.0.0-rc.1",
    "^1.0.0 || ^2.0.0", "1.x || >=2.5.0", "<1.0.0 || >=3", "^2.0.0-rc.0", "~1.2.4-rc.0",
    ">=1.0.0-alpha", "^1.0.0-alpha.1", "=1.2.3", "v1.2.3", "1.2.3", "^1.2.3-beta", "~>1.2",
    ">= 1.2.3", "> 1.0.0 < 2.0.0", "1.2.3 - 1.2.4-rc.1", "<1.0.0-rc.1", "^0.3.0-beta.0",
    ">=0.0.0", "<0.0.1", "~0.0.1", "^0.0", "0.x || 2.x", ">1", "<=1.2", ">1.2", "<1.2",
    "1.2.3beta", "not a range", "^1.2.3 <2 || 3.x", "x.x.x", "1.*",
    ">=1.2.3beta", ">=01.2.3", "^01.2.3", "=  1.2.3",  # what npm's loose reading takes
]  # fmt: skip

ORACLE = """
const semver = require(process.argv[1]);
const {versions, ranges} = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = {};
for (const r of ranges) {
  const valid = semver.validRange(r, true) !== null;
  out[r] = {max: valid ? semver.maxSatisfying(versions, r, true) : null,
            sat: versions.filter(v => valid && semver.satisfies(v, r, true))};
}
console.log(JSON.stringify(out));
"""


def _npm_semver() -> str:
    """The semver package npm itself uses (shipped inside npm)."""
    npm = need_program("npm", "npm's own semver package is the reference for npm ranges")
    root = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, timeout=60,
                          check=True).stdout.strip()  # fmt: skip
    found = Path(root) / "npm" / "node_modules" / "semver"
    assert found.is_dir(), f"npm ships no semver package at {found}"
    return str(found)


def test_npm_ranges_read_as_npm_reads_them() -> None:
    node = need_program("node", "npm's own semver package is the reference for npm ranges")
    done = subprocess.run(
        [node, "-e", ORACLE, _npm_semver()],
        input=json.dumps({"versions": VERSIONS, "ranges": RANGES}),
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    truth = json.loads(done.stdout)
    wrong = []
    for spec, want in truth.items():
        got = [v for v in VERSIONS if npm_satisfies(v, spec)]
        if got != want["sat"]:
            wrong.append((spec, "satisfies", want["sat"], got))
        if best_npm(VERSIONS, spec) != want["max"]:
            wrong.append((spec, "max", want["max"], best_npm(VERSIONS, spec)))
    assert not wrong


def test_npm_prefers_the_latest_tag_in_range() -> None:
    assert best_npm(["1.0.0", "1.2.0", "1.3.0"], "^1", latest="1.2.0") == "1.2.0"
    assert best_npm(["1.0.0", "2.0.0"], "^1", latest="2.0.0") == "1.0.0"
    assert best_npm(["1.0.0", "1.3.0"], "^1", latest="1.3.0\n") == "1.3.0"  # not the tag
    assert best_npm(["1.0.0", "v1.9.0", "1.9.0\n"], "^1") == "1.0.0"


@pytest.mark.parametrize(
    ("text", "version"),
    [("1.2.3", True), ("1.0.0-rc.1", True), ("v1.2.3", False), ("=1.2.3", False),
     ("1.2.3\n", False), (" 1.2.3", False), ("v\u2028\u001f1.2.3", False),
     ("1.2.3+build", False), ("01.2.3", False), ("1.2", False), ("latest", False),
     ("1.2.3-\u202e", False), ("1." * 200 + "1", False), (123, False), (None, False)],
)  # fmt: skip
def test_npm_versions_are_canonical_or_nothing(text: object, version: bool) -> None:
    assert is_npm_version(text) is version


def test_npm_specs_are_versions_ranges_or_tags() -> None:
    assert npm_exact("=1.2.3") == npm_exact("v1.2.3") == npm_exact("1.2.3") == "1.2.3"
    assert npm_exact("v\u2028\u001f1.2.3") is None  # npm does not take these for spaces
    assert npm_exact("^1") is None and npm_exact("latest") is None
    assert is_npm_tag("latest") and is_npm_tag("next") and is_npm_tag("beta-2")
    assert not is_npm_tag("x") and not is_npm_tag("^1") and not is_npm_tag("1.2.3")
    assert not is_npm_tag("la test") and not is_npm_tag("evil/../x")
    assert not npm_satisfies("1.2.3", "1.2.3\u2028")


def test_a_long_range_is_refused_at_once() -> None:
    started = time.monotonic()
    for spec in (" " * 10_000 + "1.2.3", "^1.2.3 " * 2_000, "1" * 5_000):
        assert best_npm(["1.2.3"], spec) is None
        assert not is_npm_tag(spec)
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize(
    ("version", "spec", "matches"),
    [
        ("1.0.post1", ">1.0", False),  # a post-release of the bound is not "greater"
        ("1.0", "==1.0+local", False),
        ("1.0+local", "==1.0", True),
        ("1.1.dev1", "<1.1", False),  # nor a pre-release of the bound "less"
        ("1.1a1", "<1.1", False),
        ("1.0.1", "~=1.0", True),
        ("2.0", "~=1.0", False),
        ("1.3.0rc1", ">=1", False),  # a pre-release only when a clause names one
        ("1.3.0rc1", ">=1.3.0rc1", True),
        ("1.4", "==1.*", True),
        ("1.0", "===1.0", True),
        ("1.0.0", "===1.0", False),
        ("1.0", "", True),
        ("1.0", ">=1,<2,!=1.0", False),
        ("1.0", ">=1\u2028", False),
    ],
)  # fmt: skip
def test_pypi_specifiers_as_pep_440_reads_them(version: str, spec: str, matches: bool) -> None:
    assert pypi_satisfies(version, spec) is matches


def test_pypi_choice_and_pins() -> None:
    py = ["1.0", "1.2.3", "1.3.0rc1", "1.3.0", "2.0", "2.0.post1", "3.0\n"]
    assert best_pypi(py, "~=1.2") == "1.3.0"
    assert best_pypi(py, ">=1,<2,!=1.3.0") == "1.2.3"
    assert best_pypi(py, "") == "2.0.post1"  # never the one that is no version
    assert best_pypi(["1.0rc1", "2.0rc1"], ">=1") == "2.0rc1"  # only pre-releases: pip's rule
    assert best_pypi(py, "not a spec") is None
    assert pypi_exact("==1.2") == "1.2" and pypi_exact("===weird") == "weird"
    assert pypi_exact("==1.*") is None and pypi_exact(">=1") is None
    assert pypi_exact("==1,==2") is None
    assert is_pypi_version("1.0.post1") and is_pypi_version("1!2.0+local.1")
    assert not is_pypi_version("1.2.3\n") and not is_pypi_version(" 1.0")
    assert not is_pypi_version("1.0\u2028") and not is_pypi_version("latest")


# --- what mutation testing found unpinned ----------------------------------------------------


def test_a_version_of_up_to_256_characters_is_read() -> None:
    pypi = "1" + ".1" * 127 + "1"
    npm = "1.2." + "1" * 252
    assert len(pypi) == len(npm) == 256
    assert is_pypi_version(pypi) and is_npm_version(npm)
    assert not is_pypi_version(pypi + "1") and not is_npm_version(npm + "1")


def test_a_one_character_range_is_read() -> None:
    assert best_npm(["1.0.0", "2.0.0", "2.1.0"], "*") == "2.1.0"
    assert best_npm(["1.0.0", "1.5.0", "2.1.0"], "1") == "1.5.0"
    assert npm_satisfies("2.0.0", "2") and not npm_satisfies("1.0.0", "2")
    assert is_pypi_version("1")


def test_a_control_character_is_no_space_even_in_ascii() -> None:
    # Python's strip() takes U+001F for a space; npm does not: no version, no tag.
    assert npm_exact("\x1f1.2.3") is None and npm_exact("1.2.3\x1f") is None
    assert not is_npm_tag("\x1flatest")
    assert not npm_satisfies("1.2.3", "\x1f^1")
    assert best_pypi(["1.0"], "\x1f>=1") is None


def test_pypi_versions_are_compared_as_versions_not_text() -> None:
    assert best_pypi(["9.0", "10.0", "2.0"], "") == "10.0"
    assert best_pypi(["1.10", "1.9"], ">=1") == "1.10"
    assert best_pypi(["1.0", "1.5"], ">=2") is None  # none in range
    assert best_pypi([], "") is None
