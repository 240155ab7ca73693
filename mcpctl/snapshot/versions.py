"""Version ranges as npm and pip read them, far enough to say what a spec installs now.

npm: exact versions, dist-tags (``latest``, ``next``), ``^`` and ``~``, x-ranges (``1``,
``1.2.x``, ``*``), comparators (``>=1.2 <2``), hyphen ranges and ``||``. PyPI (PEP 440):
``==`` (with ``.*``), ``!=``, ``~=``, ``>=``, ``<=``, ``>``, ``<`` and ``===``, comma-joined.
Pre-releases match only a range that names one, as both tools do. What is not understood
matches nothing: the caller reports the spec as unresolved rather than guessing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "best_npm",
    "best_pypi",
    "is_exact_npm",
    "is_npm_tag",
    "npm_satisfies",
    "pep440_key",
    "pypi_satisfies",
    "semver_key",
]

_SEMVER = re.compile(r"^[v=]?\s*(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_PARTIAL = re.compile(
    r"^[v=]?\s*(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?"
    r"(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)
_Key = tuple[int, int, int, tuple[tuple[int, int | str], ...]]
_RELEASE: tuple[tuple[int, int | str], ...] = ((2, 0),)


def semver_key(version: str) -> _Key | None:
    """The sort key of a semver version (a release sorts after its pre-releases), or
    ``None`` when it is not one."""
    m = _SEMVER.match(version.strip())
    if m is None:
        return None
    pre = m.group(4)
    ids: tuple[tuple[int, int | str], ...] = _pre_ids(pre) if pre else _RELEASE
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), ids


def is_exact_npm(spec: str) -> bool:
    """Whether an npm spec names one version (``1.2.3``, ``=1.2.3``, ``v1.2.3-rc.1``)."""
    return semver_key(spec) is not None


def is_npm_tag(spec: str) -> bool:
    """Whether an npm spec is a dist-tag (``latest``, ``next``) rather than a range."""
    text = spec.strip()
    return (
        bool(text)
        and re.fullmatch(r"[A-Za-z][A-Za-z0-9._-]*", text) is not None
        and (text not in ("x", "X"))
    )


def _bounds(comparator: str) -> list[tuple[str, _Key]] | None:
    """One npm comparator as ``(op, key)`` constraints (``None``: not understood)."""
    m = re.match(r"^(\^|~>?|>=|<=|>|<|=)?\s*(.*)$", comparator.strip())
    if m is None:
        return None
    op, rest = m.group(1) or "", m.group(2)
    if not rest.strip():
        return [] if op == "" else None
    p = _PARTIAL.match(rest)
    if p is None:
        return None
    parts = [None if x is None or x in "xX*" else int(x) for x in p.group(1, 2, 3)]
    pre = p.group(4)
    known = 0
    for part in parts:
        if part is None:
            break
        known += 1
    major, minor, patch = (x or 0 for x in parts)
    low: _Key = (major, minor, patch, _pre_ids(pre) if pre else _RELEASE)
    if known == 0:
        return [] if op in ("", "=", ">=", "<=", "^", "~", "~>") else [("<", (0, 0, 0, ((0, 0),)))]
    if known < 3:
        low = (major, minor, patch, ((0, 0),))  # 1.2 >= 1.2.0-0: pre-releases still ruled out
    if op in ("", "="):
        if known == 3:
            return [("=", low)]
        return [(">=", low), ("<", _next(major, minor, known))]
    if op == "^":
        if major > 0 or known == 1:
            high = (major + 1, 0, 0, ((0, 0),))
        elif minor > 0 or known == 2:
            high = (0, minor + 1, 0, ((0, 0),))
        else:
            high = (0, 0, patch + 1, ((0, 0),))
        return [(">=", low), ("<", high)]
    if op in ("~", "~>"):
        high = (major + 1, 0, 0, ((0, 0),)) if known == 1 else (major, minor + 1, 0, ((0, 0),))
        return [(">=", low), ("<", high)]
    if op == ">":
        return [(">", low)] if known == 3 else [(">=", _next(major, minor, known))]
    if op == "<=":
        return [("<=", low)] if known == 3 else [("<", _next(major, minor, known))]
    return [(op, low)]


def _pre_ids(pre: str) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split("."))


def _next(major: int, minor: int, known: int) -> _Key:
    return (major + 1, 0, 0, ((0, 0),)) if known == 1 else (major, minor + 1, 0, ((0, 0),))


def _holds(key: _Key, op: str, bound: _Key) -> bool:
    return {
        "=": key == bound, ">=": key >= bound, "<=": key <= bound, ">": key > bound,
        "<": key < bound,
    }[op]  # fmt: skip


def _alternatives(spec: str) -> list[list[tuple[str, _Key]]] | None:
    out = []
    for alt in spec.split("||"):
        text = alt.strip()
        hyphen = re.fullmatch(r"(\S+)\s+-\s+(\S+)", text)
        if hyphen:
            low, high = _bounds(">=" + hyphen.group(1)), _bounds("<=" + hyphen.group(2))
            if low is None or high is None:
                return None
            out.append(low + high)
            continue
        text = re.sub(r"(\^|~>?|>=|<=|>|<|=)\s+", r"\1", text)  # ">= 1.2" is ">=1.2"
        constraints: list[tuple[str, _Key]] = []
        for comparator in text.split() or [""]:
            found = _bounds(comparator)
            if found is None:
                return None
            constraints += found
        out.append(constraints)
    return out


def npm_satisfies(version: str, spec: str) -> bool:
    """Whether ``version`` is in the npm range ``spec`` (a pre-release only when the range
    names a pre-release of the same major.minor.patch)."""
    key = semver_key(version)
    alternatives = _alternatives(spec)
    if key is None or alternatives is None:
        return False
    for constraints in alternatives:
        if not all(_holds(key, op, bound) for op, bound in constraints):
            continue
        if key[3] != _RELEASE and not any(
            b[3] not in (_RELEASE, ((0, 0),)) and b[:3] == key[:3] for _, b in constraints
        ):
            continue
        return True
    return False


def best_npm(versions: Iterable[str], spec: str, latest: str | None = None) -> str | None:
    """The version npm installs for the range ``spec``: ``latest`` (the dist-tag) when it is
    in the range, else the highest version in it; ``None`` when none is."""
    if latest is not None and npm_satisfies(latest, spec):
        return latest
    matching = [v for v in versions if npm_satisfies(v, spec)]
    return max(matching, key=lambda v: semver_key(v) or (0, 0, 0, ()), default=None)


# --- PEP 440 ----------------------------------------------------------------------------

_PEP440 = re.compile(
    r"^v?(?:(\d+)!)?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?"
    r"(?:(?:-(\d+))|(?:[-_.]?(?:post|rev|r)[-_.]?(\d*)))?(?:[-_.]?dev[-_.]?(\d*))?"
    r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$",
    re.IGNORECASE,
)
_PreKey = tuple[int, int]
_PepKey = tuple[int, tuple[int, ...], _PreKey, int, int]


def pep440_key(version: str) -> _PepKey | None:
    """The sort key of a PEP 440 version, or ``None`` when it is not one."""
    m = _PEP440.match(version.strip())
    if m is None:
        return None
    epoch = int(m.group(1) or 0)
    release = tuple(int(x) for x in m.group(2).split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    letter = (m.group(3) or "").lower()
    rank = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
    dev = m.group(7)
    post = m.group(5) or m.group(6)
    if letter:
        pre: _PreKey = (rank[letter], int(m.group(4) or 0))
    elif dev is not None and post is None:
        pre = (-1, 0)  # 1.0.dev1 sorts before 1.0a1
    else:
        pre = (9, 0)
    post_key = int(post) if post is not None and post != "" else (0 if post == "" else -1)
    dev_key = int(dev or 0) if dev is not None else 1 << 30
    return epoch, release, pre, post_key, dev_key


def _is_pre(key: _PepKey) -> bool:
    return key[2][0] != 9 or key[4] != 1 << 30


def _pep_clause(key: _PepKey, version: str, op: str, text: str) -> bool:
    if op == "===":
        return version.strip() == text
    if text.endswith(".*") and op in ("==", "!="):
        prefix = pep440_key(text[:-2])
        if prefix is None:
            return False
        n = len(text[:-2].split("."))
        release = (*key[1], *(0,) * n)[:n]
        wanted = (*prefix[1], *(0,) * n)[:n]
        same = key[0] == prefix[0] and release == wanted
        return same if op == "==" else not same
    bound = pep440_key(text)
    if bound is None:
        return False
    if op == "~=":
        parts = text.split("+", maxsplit=1)[0].split(".")
        if len(parts) < 2:
            return False
        bumped = int(re.sub(r"\D.*", "", parts[-2]) or 0) + 1
        upper = pep440_key(".".join([*parts[:-2], str(bumped)]))
        return upper is not None and bound <= key < (upper[0], upper[1], (-2, 0), -1, 0)
    return {
        "==": key == bound, "!=": key != bound, ">=": key >= bound, "<=": key <= bound,
        ">": key > bound, "<": key < bound,
    }[op]  # fmt: skip


def pypi_satisfies(version: str, spec: str) -> bool:
    """Whether ``version`` is in the PEP 440 specifier ``spec`` (``>=1.2,<2``; empty: any).
    A pre-release matches only when a clause names one."""
    key = pep440_key(version)
    if key is None:
        return False
    clauses = [c.strip() for c in spec.split(",") if c.strip()]
    names_pre = False
    for clause in clauses:
        m = re.fullmatch(r"(===|==|!=|~=|>=|<=|>|<)\s*(\S+)", clause)
        if m is None or not _pep_clause(key, version, m.group(1), m.group(2)):
            return False
        bound = pep440_key(m.group(2).removesuffix(".*"))
        names_pre = names_pre or (bound is not None and _is_pre(bound))
    return not _is_pre(key) or names_pre


def best_pypi(versions: Iterable[str], spec: str) -> str | None:
    """The highest version in ``spec`` (pip's choice), or ``None``."""
    matching = [v for v in versions if pypi_satisfies(v, spec)]
    return max(matching, key=lambda v: pep440_key(v) or (0, (), (0, 0), 0, 0), default=None)
