"""Versions and ranges as npm and pip read them: what a spec installs now, and whether what a
registry names is a version at all.

npm: ``node-semver``, a port of the ``semver`` package npm itself uses, read in its loose mode
as npm reads a spec: exact versions, dist-tags (``latest``, ``next``), ``^`` and ``~``,
x-ranges (``1``, ``1.2.x``, ``*``), comparators (``>=1.2 <2``), hyphen ranges and ``||``; a
pre-release matches only a range that names a pre-release of the same ``major.minor.patch``.
PyPI: ``packaging`` (PEP 440 versions and specifiers, as pip reads them; a pre-release only
when a clause names one, or when nothing else matches). What is not understood matches
nothing: the caller reports the spec as unresolved rather than guessing.

A version a registry names is taken only as written in its canonical form: for npm exactly
what ``semver`` prints for it (``1.2.3``, ``1.2.3-rc.1``; never ``v1.2.3``, ``1.2.3\\n`` or
``1.2.3+build``), for PyPI a PEP 440 version made of the characters a version has. Anything
else -- a dist-tag pointing at ``"v\\u2028\\u001f1.2.3"`` -- is no version: it is neither
recorded in a lock nor written into a command.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

__all__ = [
    "MAX_LENGTH",
    "best_npm",
    "best_pypi",
    "is_npm_tag",
    "is_npm_version",
    "is_pypi_version",
    "npm_exact",
    "npm_satisfies",
    "pypi_exact",
    "pypi_satisfies",
]

#: The longest version or range read (npm's ``semver`` refuses longer versions; its parser
#: is slow on long text).
MAX_LENGTH = 256

# node-semver logs every comparison at debug level, and a refused range with its traceback at
# info: with -v that would flood stderr. mcpctl reports what it refuses itself.
logging.getLogger("nodesemver").setLevel(logging.WARNING)

_PYPI_CHARS = re.compile(r"[A-Za-z0-9.!+_-]+")
_NPM_TAG = re.compile(r"[A-Za-z0-9._~!*'()-]+")  # what encodeURIComponent leaves as is


def _text(value: object) -> str | None:
    """``value`` when it is text a version or range may be: printable ASCII, not too long
    (Python's ``\\s`` would take U+2028 or U+001F for a space where npm's does not)."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_LENGTH:
        return None
    return value if value.isascii() and value.isprintable() else None


# --- npm -----------------------------------------------------------------------------------


def _semver() -> Any:
    import nodesemver

    return nodesemver


def is_npm_version(text: object) -> bool:
    """Whether ``text`` is a semver version written canonically (``1.2.3``, ``1.0.0-rc.1``):
    the only form a version read from a registry is recorded in."""
    value = _text(text)
    return value is not None and _canonical_semver(value)


@lru_cache(maxsize=4096)
def _canonical_semver(value: str) -> bool:
    try:
        parsed = _semver().SemVer(value, False, False)
    except (ValueError, TypeError):
        return False
    return bool(parsed.version == value)


def npm_exact(spec: str) -> str | None:
    """The version an exact npm spec names (``1.2.3``, ``=1.2.3``, ``v1.2.3``: npm reads them
    all as ``1.2.3``), or ``None`` when the spec is a range, a tag or nothing."""
    value = _text(spec)
    if value is None or not value.strip():
        return None
    try:
        parsed = _semver().parse(value.strip(), True)
    except (ValueError, TypeError):
        return None
    return str(parsed.version) if parsed is not None and parsed.version else None


@lru_cache(maxsize=256)
def _npm_range(spec: str) -> Any:
    value = _text(spec) if spec else "*"
    if value is None:
        return None
    try:
        return _semver().make_range(value.strip() or "*", True)
    except (ValueError, TypeError):
        return None


def is_npm_tag(spec: str) -> bool:
    """Whether an npm spec is a dist-tag (``latest``, ``next``): neither a version nor a range,
    and a name npm accepts for a tag."""
    text = spec.strip()
    return (
        _text(spec) is not None
        and bool(text)
        and _NPM_TAG.fullmatch(text) is not None
        and npm_exact(text) is None
        and _npm_range(text) is None
    )


def npm_satisfies(version: str, spec: str) -> bool:
    """Whether ``version`` (a canonical version) is in the npm range ``spec`` (empty: any)."""
    found = _npm_range(spec)
    if found is None or not is_npm_version(version):
        return False
    try:
        return bool(found.test(version))
    except (ValueError, TypeError):
        return False


def best_npm(versions: Iterable[str], spec: str, latest: str | None = None) -> str | None:
    """The version npm installs for the range ``spec``: ``latest`` (the dist-tag) when it is
    in the range, else the highest version in it; ``None`` when none is. Only canonical
    versions are considered."""
    if latest is not None and npm_satisfies(latest, spec):
        return latest
    found = _npm_range(spec)
    if found is None:
        return None
    semver = _semver()
    best: Any = None
    for version in versions:
        if not npm_satisfies(version, spec):
            continue
        parsed = semver.SemVer(version, False, False)
        if best is None or best.compare(parsed) < 0:
            best = parsed
    return str(best.version) if best is not None else None


# --- PyPI ----------------------------------------------------------------------------------


def is_pypi_version(text: object) -> bool:
    """Whether ``text`` is a PEP 440 version, written with a version's characters only (no
    space, no control: what goes into ``pkg==VERSION``)."""
    value = _text(text)
    return value is not None and _PYPI_CHARS.fullmatch(value) is not None and _pep440(value)


@lru_cache(maxsize=4096)
def _pep440(value: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        Version(value)
    except InvalidVersion:
        return False
    return True


@lru_cache(maxsize=256)
def _specifiers(spec: str) -> Any:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if spec and _text(spec) is None:
        return None
    try:
        return SpecifierSet(spec)
    except InvalidSpecifier:
        return None


def pypi_exact(spec: str) -> str | None:
    """The version a PEP 440 spec pins (``==1.2``, ``===1.2``; not ``==1.*``), or ``None``."""
    found = _specifiers(spec)
    if found is None or len(found) != 1:
        return None
    (only,) = list(found)
    if only.operator == "===" or (only.operator == "==" and not only.version.endswith(".*")):
        return str(only.version)
    return None


def pypi_satisfies(version: str, spec: str) -> bool:
    """Whether ``version`` is in the PEP 440 specifier ``spec`` (``>=1.2,<2``; empty: any).
    A pre-release matches only when a clause names one."""
    found = _specifiers(spec)
    if found is None or not is_pypi_version(version):
        return False
    # Explicit: whether a bare contains() takes pre-releases changed across packaging releases.
    return bool(found.contains(version, prereleases=bool(found.prereleases)))


def best_pypi(versions: Iterable[str], spec: str) -> str | None:
    """The highest version in ``spec`` (pip's choice: pre-releases only when a clause names
    one, or when only pre-releases match), or ``None``."""
    found = _specifiers(spec)
    if found is None:
        return None
    from packaging.version import Version

    candidates = [v for v in versions if is_pypi_version(v)]
    matching = list(found.filter(candidates))
    return max(matching, key=Version, default=None)
