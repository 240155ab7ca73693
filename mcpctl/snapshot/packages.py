"""The code a stdio server runs, pinned: which package and version, and its integrity.

A lock file's configuration fingerprints pin what mcpctl was told to run; ``npx -y pkg``
still runs whatever ``pkg`` is today. :func:`parse_spec` reads the artifact from a command
line (``npx``, ``uvx``, ``pipx run``, ``docker run``), :func:`resolve_packages` asks the
registries what it is now -- the npm registry's ``dist.integrity``, PyPI's sha256 of the
distribution (a wheel preferred), a local image's digest -- and :func:`diff_packages` says
what moved since the lock was saved: a new version (``moved``), the same version with other
bytes (``republished``). :func:`pin_entries` writes a lock's versions into the commands.

Lookups use the registries' public metadata (:mod:`mcpctl.registry.metadata`), cached in the
cache dir; offline, the cache answers and the result says from when.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from mcpctl.config.model import ServerEntry

__all__ = [
    "UNRESOLVED",
    "PackageChange",
    "PackagePin",
    "PackageSpec",
    "Resolution",
    "diff_packages",
    "parse_spec",
    "pin_entries",
    "pins_from_data",
    "pins_to_data",
    "resolve_packages",
    "specs_of",
]

Ecosystem = Literal["npm", "pypi", "oci"]
UNRESOLVED = "unresolved"
DOCKER_TIMEOUT = 5.0

# --- parsing command lines ---------------------------------------------------------------

_NPM_NAME = re.compile(r"^(?:@[A-Za-z0-9~][\w.~-]*/)?[A-Za-z0-9~][\w.~-]*$")
_PYPI_NAME = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(\[[A-Za-z0-9,._ -]*\])?")
_NPX_VALUED = {"-p", "--package", "-c", "--call", "--cache", "--registry", "--userconfig",
               "-w", "--workspace", "--prefix", "--node-options"}  # fmt: skip
_UVX_VALUED = {
    "--from", "--with", "--with-editable", "--with-requirements", "-w", "--python", "-p",
    "--index", "--index-url", "-i", "--extra-index-url", "--default-index", "--find-links",
    "-f", "--constraints", "-c", "--overrides", "--build-constraints", "-b", "--cache-dir",
    "--directory", "--project", "--config-file", "--color", "--refresh-package",
    "--reinstall-package", "--upgrade-package", "-P", "--resolution", "--prerelease",
    "--exclude-newer", "--index-strategy", "--keyring-provider", "--link-mode",
    "--python-preference", "--allow-insecure-host", "--no-binary-package",
    "--no-build-package", "--config-setting", "-C", "--env-file", "--python-platform",
    "--torch-backend",
}  # fmt: skip
_PIPX_VALUED = {"--spec", "--python", "--pip-args", "--index-url", "-i", "--backend",
                "--fetch-missing-python"}  # fmt: skip
_DOCKER_VALUED_SHORT = {"-e", "-v", "-p", "-w", "-u", "-m", "-h", "-l", "-a", "-c"}
_DOCKER_FLAGS = {
    "--rm", "--init", "--privileged", "--read-only", "--interactive", "--tty", "--detach",
    "--no-healthcheck", "--oom-kill-disable", "--publish-all", "--sig-proxy", "--quiet",
    "--disable-content-trust", "--help",
}  # fmt: skip


@dataclass(frozen=True)
class PackageSpec:
    """The artifact a command line runs.

    ``requested`` is the version part as written (npm: a version, range or dist-tag; PyPI: a
    PEP 440 specifier such as ``==1.2`` or ``>=1``; OCI: the tag, or ``@sha256:...``), empty
    when none is; ``index`` is the position in ``args`` of the token that holds it, and
    ``form`` how that token is written (``npm``, ``pypi-at``: ``pkg@1.2``, ``pypi``:
    ``pkg==1.2``, ``oci``).
    """

    ecosystem: Ecosystem
    name: str
    requested: str
    launcher: str
    index: int
    form: str
    extras: str = ""

    @property
    def pinned(self) -> bool:
        """Whether the spec names one version (one digest, for an image)."""
        return self.exact is not None or (
            self.ecosystem == "oci"
            and ("@sha256:" in self.requested or self.requested.startswith("sha256:"))
        )

    @property
    def exact(self) -> str | None:
        """The one version an npm or PyPI spec names (``pkg@=1.2.3``: ``1.2.3``;
        ``pkg==1.2``: ``1.2``), else ``None``."""
        from mcpctl.snapshot.versions import npm_exact, pypi_exact

        if self.ecosystem == "npm":
            return npm_exact(self.requested)
        if self.ecosystem == "pypi":
            return pypi_exact(self.requested)
        return None

    @property
    def text(self) -> str:
        """The spec as a person reads it (``pkg@^1``, ``pkg==1.2``, ``image:tag``)."""
        if self.ecosystem == "npm":
            return f"{self.name}@{self.requested}" if self.requested else self.name
        if self.ecosystem == "pypi":
            return f"{self.name}{self.extras}{self.requested}"
        return f"{self.name}{self.requested}"


def _program(command: str) -> str:
    name = re.split(r"[\\/]", command)[-1].lower()
    return re.sub(r"\.(cmd|exe|bat|ps1)$", "", name)


def _options(
    args: list[str], start: int, valued: set[str], short_valued: set[str] | None = None
) -> tuple[dict[str, tuple[str, int]], int | None]:
    """The options before the first positional argument (each option's first value and its
    index), and the index of that argument."""
    found: dict[str, tuple[str, int]] = {}
    i = start
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return found, (i + 1 if i + 1 < len(args) else None)
        if not arg.startswith("-") or arg == "-":
            return found, i
        name, eq, value = arg.partition("=")
        if eq and name.startswith("--"):
            found.setdefault(name, (value, i))
        elif arg in valued or (short_valued is not None and arg in short_valued):
            if i + 1 < len(args):
                found.setdefault(arg, (args[i + 1], i + 1))
            i += 1
        i += 1
    return found, None


def _npm(token: str) -> tuple[str, str] | None:
    """(name, requested) of an npm registry spec; ``None`` for a URL, path, alias, git."""
    if token.startswith("@"):
        scope, slash, rest = token.partition("/")
        if not slash:
            return None
        name, at, requested = rest.partition("@")
        name = f"{scope}/{name}"
    else:
        name, at, requested = token.partition("@")
    if not _NPM_NAME.match(name) or ":" in name:
        return None
    if at and not requested:
        return None
    if any(c in requested for c in ":/\\") or requested.startswith(("http", "git", "file")):
        return None
    return name, requested


def _pypi(token: str, at_form: bool) -> tuple[str, str, str, str] | None:
    """(name, extras, requested, form) of a requirement (``pkg``, ``pkg[x]==1``, ``pkg@1``)."""
    m = _PYPI_NAME.match(token)
    if m is None:
        return None
    name, extras = m.group(1), m.group(2) or ""
    rest = token[m.end() :].strip()
    if not rest:
        return name, extras, "", "pypi"
    if rest.startswith("@"):
        version = rest[1:].strip()
        if not at_form or not version or " " in version or "/" in version or ":" in version:
            return None  # a direct reference (pkg @ https://...)
        return name, extras, "" if version == "latest" else f"=={version}", "pypi-at"
    if ";" in rest or not re.fullmatch(r"(?:(?:===|==|!=|~=|>=|<=|>|<)\s*[^,\s]+\s*,?\s*)+", rest):
        return None
    return name, extras, re.sub(r"\s+", "", rest).rstrip(","), "pypi"


def parse_spec(command: str | None, args: tuple[str, ...] | list[str]) -> PackageSpec | None:
    """The package a stdio command line runs, or ``None`` when it runs none mcpctl can look
    up (a local program, a git URL or path, a placeholder in the spec).

    Read: ``npx [-y|--yes] PKG[@SPEC]``, ``npx -p PKG[@SPEC] CMD`` (scoped ``@org/pkg@1.2``),
    ``uvx PKG``, ``uvx PKG@1.2``, ``uvx PKG==1.2``, ``uvx --from PKG==1.2 CMD``,
    ``pipx run PKG``, ``pipx run --spec PKG==1.2 CMD``, ``docker run [FLAGS] IMAGE``.
    """
    if not command:
        return None
    program, argv = _program(command), list(args)
    if any("${" in a or "$(" in a for a in argv):
        argv = [a if "${" not in a and "$(" not in a else "\0" for a in argv]
    spec: PackageSpec | None = None
    if program == "npx":
        options, at = _options(argv, 0, _NPX_VALUED)
        if "-c" in options or "--call" in options:
            return None
        given = options.get("-p") or options.get("--package")
        token, index = (
            given if given is not None else ((argv[at], at) if at is not None else ("", -1))
        )
        parsed = _npm(token) if token else None
        if parsed is not None:
            spec = PackageSpec("npm", parsed[0], parsed[1], "npx", index, "npm")
    elif program in ("uvx", "pipx") or (program == "uv" and argv[:2] == ["tool", "run"]):
        start = 2 if program == "uv" else 0
        launcher = "uvx" if program in ("uvx", "uv") else "pipx"
        if launcher == "pipx":
            if not argv or argv[0] != "run":
                return None
            start = 1
        options, at = _options(argv, start, _UVX_VALUED if launcher == "uvx" else _PIPX_VALUED)
        given = options.get("--from") or options.get("--spec")
        if given is not None:
            token, index, at_form = given[0], given[1], launcher == "uvx"
        elif at is not None:
            token, index, at_form = argv[at], at, launcher == "uvx"
        else:
            return None
        parsed_py = _pypi(token, at_form)
        if parsed_py is not None:
            name, extras, requested, form = parsed_py
            spec = PackageSpec("pypi", name, requested, launcher, index, form, extras)
    elif program in ("docker", "podman") and argv[:1] == ["run"]:
        options, at = _options(argv, 1, set(), _DOCKER_VALUED_SHORT)
        i = 1
        while i < len(argv):  # long options take a value unless they are known flags
            arg = argv[i]
            if not arg.startswith("-"):
                break
            long_valued = arg.startswith("--") and "=" not in arg and arg not in _DOCKER_FLAGS
            if long_valued or arg in _DOCKER_VALUED_SHORT:
                i += 1
            i += 1
        if i < len(argv) and argv[i] != "\0":
            image = argv[i]
            name, requested = _image(image)
            if name:
                spec = PackageSpec("oci", name, requested, program, i, "oci")
    if spec is None or "\0" in (spec.name, spec.requested) or spec.index < 0:
        return None
    if argv[spec.index] == "\0":
        return None
    return spec


def _image(image: str) -> tuple[str, str]:
    """(repository, ``:tag`` and/or ``@sha256:...``) of an image reference."""
    name, at, digest = image.partition("@")
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag = ""
    if colon > slash:
        name, tag = name[:colon], name[colon:]
    if not re.fullmatch(r"[a-z0-9][a-z0-9._/:-]*", name):
        return "", ""
    return name, tag + (at + digest if at else "")


def specs_of(entries: Mapping[str, ServerEntry]) -> dict[str, PackageSpec]:
    """The package of each enabled stdio entry that runs one."""
    out: dict[str, PackageSpec] = {}
    for name, entry in entries.items():
        if not entry.enabled or entry.is_remote:
            continue
        spec = parse_spec(entry.command, entry.args)
        if spec is not None:
            out[name] = spec
    return out


# --- pins ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackagePin:
    """What a server's spec resolved to: ``version`` and ``integrity`` (npm's
    ``dist.integrity``; ``sha256:<hex>`` of a PyPI distribution, ``file`` naming it; an
    image's digest), or ``status`` ``unresolved`` with the ``reason``. ``redirect``
    (``"registry.npmjs.org -> other.host"``) says that the registry redirected the lookup to
    another host, which answered."""

    ecosystem: str
    name: str
    spec: str
    pinned: bool
    version: str | None = None
    integrity: str | None = None
    file: str | None = None
    status: str = "resolved"
    reason: str | None = None
    redirect: str | None = None

    @property
    def resolved(self) -> bool:
        """Whether a version (or a digest) is known."""
        return self.status != UNRESOLVED

    @property
    def label(self) -> str:
        """``pkg 1.2.0`` (``image@sha256:...`` for an image without a version)."""
        return f"{self.name} {self.version or self.integrity or '?'}"

    def to_data(self) -> dict[str, Any]:
        """The JSON view (as written in a lock file)."""
        out: dict[str, Any] = {"ecosystem": self.ecosystem, "name": self.name,
                               "spec": self.spec, "pinned": self.pinned}  # fmt: skip
        for key in ("version", "integrity", "file"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["status"] = self.status
        for key in ("reason", "redirect"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def pins_to_data(pins: Mapping[str, PackagePin]) -> dict[str, Any]:
    """The ``packages`` section of a lock file (sorted by server)."""
    return {name: pins[name].to_data() for name in sorted(pins)}


def pins_from_data(data: Any) -> dict[str, PackagePin]:
    """The pins of a lock file's ``packages`` section.

    Raises:
        ValueError: it is not an object of objects, or a value has the wrong type (the
            message says where).
    """
    if not isinstance(data, dict):
        raise ValueError("packages: expected an object")
    out: dict[str, PackagePin] = {}
    for server, item in data.items():
        if not isinstance(item, dict):
            raise ValueError(f"packages.{server}: expected an object")
        values: dict[str, Any] = {}
        for key in ("ecosystem", "name", "spec", "version", "integrity", "file", "status",
                    "reason", "redirect"):  # fmt: skip
            value = item.get(key)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"packages.{server}.{key}: expected a string")
            values[key] = value
        pinned = item.get("pinned", False)
        if not isinstance(pinned, bool):
            raise ValueError(f"packages.{server}.pinned: expected true or false")
        if not values["name"]:
            raise ValueError(f"packages.{server}.name: expected a string")
        out[server] = PackagePin(
            values["ecosystem"] or "npm", values["name"], values["spec"] or "", pinned,
            values["version"], values["integrity"], values["file"],
            values["status"] or "resolved", values["reason"], values["redirect"],
        )  # fmt: skip
    return out


# --- resolving ----------------------------------------------------------------------------


@dataclass
class Resolution:
    """The pins of the servers, and where they came from: ``offline`` when a registry could
    not be reached and the cache answered (``cache_time``: the oldest document used).
    ``warnings``: what a registry sent that was not used (a dist-tag or a version that is no
    version), and lookups a redirect took to another host."""

    pins: dict[str, PackagePin] = field(default_factory=dict)
    offline: bool = False
    cache_time: float | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def cache_time_text(self) -> str | None:
        """The cache's time, as a snapshot writes times."""
        if self.cache_time is None:
            return None
        when = datetime.fromtimestamp(self.cache_time, UTC)
        return when.isoformat(timespec="seconds").replace("+00:00", "Z")

    @property
    def note(self) -> str | None:
        """``checked against the cache from <time>: offline``, when so."""
        if not self.offline:
            return None
        when = self.cache_time_text or "an unknown time"
        return f"checked against the cache from {when}: offline"

    def to_data(self) -> dict[str, Any]:
        """The JSON view of where the answers came from."""
        return {"offline": self.offline, "cache_time": self.cache_time_text}


def _npm_doc(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError("not an object")
    tags = data.get("dist-tags")
    versions = data.get("versions")
    if not isinstance(versions, dict):
        raise ValueError("no versions")
    out: dict[str, Any] = {
        "tags": {k: v for k, v in (tags or {}).items() if isinstance(v, str)}
        if isinstance(tags, dict)
        else {},
        "versions": {},
    }
    for version, meta in versions.items():
        dist = meta.get("dist") if isinstance(meta, dict) else None
        integrity = None
        if isinstance(dist, dict):
            if isinstance(dist.get("integrity"), str):
                integrity = dist["integrity"]
            elif isinstance(dist.get("shasum"), str):
                integrity = "sha1:" + dist["shasum"]
        out["versions"][str(version)] = integrity
    return out


def _pypi_files(urls: Any) -> list[dict[str, Any]]:
    files = []
    for item in urls if isinstance(urls, list) else []:
        if not isinstance(item, dict):
            continue
        digests = item.get("digests")
        sha = digests.get("sha256") if isinstance(digests, dict) else None
        filename = item.get("filename")
        if isinstance(sha, str) and isinstance(filename, str):
            files.append({"file": filename, "sha256": sha,
                          "wheel": item.get("packagetype") == "bdist_wheel"
                          or filename.endswith(".whl"),
                          "yanked": item.get("yanked") is True})  # fmt: skip
    return files


def _pypi_doc(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or not isinstance(data.get("info"), dict):
        raise ValueError("no info")
    version = data["info"].get("version")
    releases = data.get("releases")
    files = {
        str(v): _pypi_files(items)
        for v, items in (releases.items() if isinstance(releases, dict) else [])
    }
    yanked = {v for v, items in files.items() if items and all(f["yanked"] for f in items)}
    return {
        "version": version if isinstance(version, str) else None,
        "releases": sorted(v for v in files if v not in yanked),
        "files": _pypi_files(data.get("urls")),
        "release_files": files,
    }


def _best_file(files: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The distribution to record: a wheel before an sdist, a pure one first, by name."""
    live = [f for f in files if not f.get("yanked")] or files
    ranked = sorted(live, key=lambda f: (not f.get("wheel"), "none-any" not in str(f["file"]),
                                         str(f["file"])))  # fmt: skip
    return ranked[0] if ranked else None


def _pypi_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def resolve_packages(
    specs: Mapping[str, PackageSpec],
    *,
    cache_file: Path | None,
    environ: Mapping[str, str] | None = None,
    timeout: float | None = None,
    deadline: float | None = None,
    docker: Callable[[str], tuple[str | None, str | None]] | None = None,
    client_factory: Callable[..., Any] | None = None,
) -> Resolution:
    """What each spec installs now (``deadline``: a :func:`time.monotonic` time no lookup
    goes past; by default the one of the commands that refresh a registry before answering;
    ``cache_file``: where fetched documents are kept, ``None`` for none).
    Every failure is an unresolved pin with its reason; never raises for what a registry
    sends.
    """
    from mcpctl.registry.client import host_of
    from mcpctl.registry.metadata import MetadataCache, fetch_all, npm_registry, pypi_url
    from mcpctl.registry.syncing import REFRESH_TIMEOUT, REQUEST_TIMEOUT

    npm_base, pypi_base = npm_registry(environ), pypi_url(environ)
    if deadline is None:
        deadline = time.monotonic() + REFRESH_TIMEOUT
    cache = MetadataCache.load(cache_file)
    out = Resolution()

    def project(spec: PackageSpec) -> str:
        if spec.ecosystem == "npm":
            return f"{npm_base}/{quote(spec.name, safe='@')}"
        return f"{pypi_base}/pypi/{_pypi_name(spec.name)}/json"

    def release(spec: PackageSpec, version: str) -> str:
        return f"{pypi_base}/pypi/{_pypi_name(spec.name)}/{quote(version, safe='')}/json"

    def first_url(spec: PackageSpec) -> str:
        if spec.ecosystem == "pypi" and spec.pinned:
            return release(spec, spec.exact or "")
        return project(spec)

    looked_up = {s for s in specs.values() if s.ecosystem != "oci"}
    reducers = {"npm": _npm_doc, "pypi": _pypi_doc}
    first = {first_url(s): reducers[s.ecosystem] for s in looked_up}
    kw: dict[str, Any] = {"timeout": timeout or REQUEST_TIMEOUT, "deadline": deadline}
    if client_factory is not None:
        kw["client_factory"] = client_factory
    fetched = fetch_all(first, cache, **kw)
    # A PyPI range may pick a version other than the latest: its own document has its files.
    final: dict[str, str] = {}
    chosen: dict[str, str] = {}
    skipped: dict[str, list[object]] = {}  # a latest version that is not one
    for server, spec in specs.items():
        if spec.ecosystem == "oci":
            continue
        final[server] = first_url(spec)
        if spec.ecosystem != "pypi" or spec.pinned or not spec.requested:
            continue
        doc = fetched[final[server]]
        if doc.data is None:
            continue
        from mcpctl.snapshot.versions import best_pypi, is_pypi_version, pypi_satisfies

        latest = doc.data.get("version")
        if latest is not None and not is_pypi_version(latest):
            skipped[server] = [latest]
        if isinstance(latest, str) and pypi_satisfies(latest, spec.requested):
            chosen[server] = latest
        else:
            version = best_pypi(doc.data.get("releases") or [], spec.requested)
            if version is None:
                continue
            chosen[server] = version
            final[server] = release(spec, version)
    second = {url: _pypi_doc for url in final.values() if url not in fetched}
    fetched.update(fetch_all(second, cache, **kw))
    # A PyPI without the per-version document (a mirror): the project's lists every release.
    fallback: dict[str, str] = {}
    for server, spec in specs.items():
        got = fetched.get(final.get(server, ""))
        missing = got is not None and got.error is not None and "(404)" in got.error
        if spec.ecosystem == "pypi" and missing and final[server] != project(spec):
            fallback[server] = project(spec)
    third = {url: _pypi_doc for url in fallback.values() if url not in fetched}
    fetched.update(fetch_all(third, cache, **kw))
    for server, url in fallback.items():
        whole = fetched[url]
        version = chosen.get(server) or specs[server].exact or ""
        if whole.data is not None:
            files = (whole.data.get("release_files") or {}).get(version)
            if files is not None:
                chosen[server] = version
                fetched[f"{final[server]}#fallback"] = replace(
                    whole, data={"version": version, "files": files}
                )
                final[server] = f"{final[server]}#fallback"
    cache.save()
    for server, spec in specs.items():
        if spec.ecosystem == "oci":
            out.pins[server] = _oci_pin(spec, docker or _docker_digest)
            continue
        url = final[server].removesuffix("#fallback")
        doc = fetched[final[server]]
        registry = f"{'the npm registry' if spec.ecosystem == 'npm' else 'PyPI'} at {host_of(url)}"
        if doc.redirect is not None:
            out.warnings.append(
                f"{server}: {spec.name}: {registry} redirected the lookup to another host, "
                f"{doc.redirect[1]}, which answered"
            )
        if spec.ecosystem == "npm":
            pin, notes = _npm_pin(spec, doc.data, doc.error, registry)
        else:
            version = chosen.get(server)
            notes = [_not_a_version(spec.name, registry, "as its latest version", w)
                     for w in skipped.get(server, [])]  # fmt: skip
            if version is None and spec.requested and not spec.pinned and doc.data is not None:
                pin = _unresolved(spec, f"no version of {spec.name} matches {spec.requested!r}")
            else:
                pin = _pypi_pin(spec, doc.data, doc.error, version, registry)
        if doc.redirect is not None and pin.resolved:
            pin = replace(pin, redirect=f"{doc.redirect[0]} -> {doc.redirect[1]}")
        out.pins[server] = pin
        out.warnings += [f"{server}: {note}" for note in notes]
        if doc.offline:
            out.offline = True
            if doc.data is not None:
                out.cache_time = min(out.cache_time or doc.fetched_at, doc.fetched_at)
    return out


def _unresolved(spec: PackageSpec, reason: str) -> PackagePin:
    return PackagePin(spec.ecosystem, spec.name, spec.requested, spec.pinned,
                      status=UNRESOLVED, reason=reason)  # fmt: skip


def _not_a_version(package: str, registry: str, what: str, value: object) -> str:
    """The warning for a value a registry gave where a version belongs."""
    return f"{package}: {registry} names {value!r} {what}, which is not a version: not recorded"


def _npm_pin(
    spec: PackageSpec, data: Any, error: str | None, registry: str
) -> tuple[PackagePin, list[str]]:
    """The pin of an npm spec, and warnings for what the registry sent that is no version
    (a dist-tag pointing at one is not followed; such versions are never candidates)."""
    from mcpctl.snapshot.versions import best_npm, is_npm_tag, is_npm_version

    if data is None:
        return _unresolved(spec, error or "no answer"), []
    raw_tags: dict[str, Any] = data.get("tags") or {}
    raw_versions: dict[str, Any] = data.get("versions") or {}
    versions = {v: i for v, i in raw_versions.items() if is_npm_version(v)}
    notes: list[str] = []
    bogus = [v for v in raw_versions if v not in versions]
    if bogus:
        shown = ", ".join(repr(v[:40]) for v in bogus[:3]) + (", ..." if len(bogus) > 3 else "")
        notes.append(f"{spec.name}: {registry} lists {len(bogus)} "
                     f"version{'s' if len(bogus) > 1 else ''} that are not versions, "
                     f"ignored: {shown}")  # fmt: skip
    wanted = spec.requested.strip()
    tag = "latest" if not wanted else wanted if is_npm_tag(wanted) else None
    version: str | None
    if tag is not None:
        version = raw_tags.get(tag)
        if version is not None and not is_npm_version(version):
            reason = f"{registry} names {version!r} as its {tag!r} dist-tag: not a version"
            return _unresolved(spec, reason), notes
    elif spec.exact is not None:
        version = spec.exact
    else:
        latest = raw_tags.get("latest")
        if latest is not None and not is_npm_version(latest):
            notes.append(_not_a_version(spec.name, registry, "as its 'latest' dist-tag", latest))
            latest = None
        version = best_npm(versions, wanted, latest)
    if version is None or version not in versions:
        reason = f"no version of {spec.name} matches {wanted or 'latest'!r}"
        return _unresolved(spec, reason), notes
    pin = PackagePin("npm", spec.name, spec.requested, spec.pinned, version, versions[version])
    return pin, notes


def _pypi_pin(
    spec: PackageSpec, data: Any, error: str | None, chosen: str | None, registry: str
) -> PackagePin:
    if data is None:
        return _unresolved(spec, error or "no answer")
    from mcpctl.snapshot.versions import is_pypi_version

    version = chosen or data.get("version")
    if not isinstance(version, str):
        return _unresolved(spec, f"no version of {spec.name} matches {spec.requested!r}")
    if not is_pypi_version(version):
        return _unresolved(spec, f"{registry} names {version!r} as the version: not a version")
    best = _best_file(data.get("files") or [])
    if best is None:
        return _unresolved(spec, f"{spec.name} {version} has no distribution files")
    return PackagePin("pypi", spec.name, spec.requested, spec.pinned, version,
                      f"sha256:{best['sha256']}", str(best["file"]))  # fmt: skip


def _oci_pin(
    spec: PackageSpec, docker: Callable[[str], tuple[str | None, str | None]]
) -> PackagePin:
    tag = spec.requested.partition("@")[0].lstrip(":") or "latest"
    if "@" in spec.requested:
        written = spec.requested.partition("@")[2]
        return PackagePin("oci", spec.name, spec.requested, True, tag, written)
    digest, why = docker(f"{spec.name}:{tag}")
    if digest is None:
        return _unresolved(spec, why or "no digest")
    return PackagePin("oci", spec.name, spec.requested, False, tag, digest)


def _docker_digest(image: str) -> tuple[str | None, str | None]:
    """(the digest ``docker image inspect`` knows for a local image, or why not). The
    image's registry is not asked: only an image pulled here has a known digest."""
    import json
    import shutil

    program = shutil.which("docker")
    if program is None:
        return None, "docker is not installed: the image's digest is unknown"
    try:
        done = subprocess.run(
            [program, "image", "inspect", "--format", "{{json .RepoDigests}}", image],
            capture_output=True, text=True, timeout=DOCKER_TIMEOUT, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, f"docker image inspect gave no answer within {DOCKER_TIMEOUT:g} s"
    except OSError as exc:
        return None, f"docker image inspect failed: {exc.strerror or exc}"
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["failed"])[0][:200]
        return None, f"not pulled here (docker image inspect: {first}); the registry is not asked"
    try:
        digests = json.loads(done.stdout or "null")
    except ValueError:
        digests = None
    repo = image.rsplit(":", 1)[0] if image.rfind(":") > image.rfind("/") else image
    found = [d for d in digests or [] if isinstance(d, str) and "@" in d]
    same = [d for d in found if d.split("@")[0] in (repo, f"docker.io/{repo}",
                                                     f"docker.io/library/{repo}")]  # fmt: skip
    picked = same or found
    if not picked:
        return None, "the local image has no registry digest (built here, never pushed)"
    return picked[0].split("@", 1)[1], None


# --- differences ----------------------------------------------------------------------------

ChangeKind = Literal["moved", "republished", "unpinned", "unresolved"]


@dataclass(frozen=True)
class PackageChange:
    """What one server's package did since the lock: ``moved`` to another version (or
    package), ``republished`` (the same version, other bytes), ``unpinned`` (a warning: the
    spec names no version, so what runs can change any day), ``unresolved`` (it could not be
    looked up now)."""

    server: str
    kind: ChangeKind
    old: str | None = None
    new: str | None = None
    pinned: bool = False
    reason: str | None = None

    @property
    def fails(self) -> bool:
        """Whether ``--exit-code`` fails on it."""
        return self.kind in ("moved", "republished")

    @property
    def message(self) -> str:
        """``moved 1.2.0 → 1.3.0 (unpinned)``, ``republished: same version, different
        integrity``..."""
        if self.kind == "moved":
            return f"moved {self.old} → {self.new} ({'pinned' if self.pinned else 'unpinned'})"
        if self.kind == "republished":
            return f"republished: same version ({self.new}), different integrity"
        if self.kind == "unpinned":
            return f"unpinned spec {self.new!r}: what runs can change any day"
        return f"unresolved: {self.reason}"

    def to_data(self) -> dict[str, Any]:
        """The JSON view."""
        return {"server": self.server, "kind": self.kind, "old": self.old, "new": self.new,
                "pinned": self.pinned, "reason": self.reason,
                "message": self.message}  # fmt: skip


def _version_text(pin: PackagePin) -> str:
    return pin.version or pin.integrity or "?"


def diff_packages(
    old: Mapping[str, PackagePin], new: Mapping[str, PackagePin]
) -> list[PackageChange]:
    """What each server's package did from the lock (``old``) to now (``new``), by server:
    moved and republished are changes; unpinned and unresolved are warnings."""
    out: list[PackageChange] = []
    for server in sorted(new):
        now = new[server]
        before = old.get(server)
        if not now.resolved:
            out.append(PackageChange(server, "unresolved", pinned=now.pinned, reason=now.reason))
        elif before is not None and before.resolved:
            if (before.ecosystem, before.name) != (now.ecosystem, now.name):
                out.append(PackageChange(server, "moved", before.label, now.label, now.pinned))
            elif before.version != now.version:
                out.append(PackageChange(server, "moved", _version_text(before),
                                         _version_text(now), now.pinned))  # fmt: skip
            elif None not in (before.integrity, now.integrity) and (
                before.integrity != now.integrity
            ):
                out.append(PackageChange(server, "republished", now.version, now.version,
                                         now.pinned))  # fmt: skip
        if not now.pinned:
            out.append(PackageChange(server, "unpinned", new=_spec_text(now)))
    return out


def _spec_text(pin: PackagePin) -> str:
    if pin.ecosystem == "npm":
        return f"{pin.name}@{pin.spec}" if pin.spec else pin.name
    return f"{pin.name}{pin.spec}"


# --- pinning commands ---------------------------------------------------------------------


def pin_entries(
    entries: Mapping[str, ServerEntry], pins: Mapping[str, PackagePin]
) -> tuple[dict[str, ServerEntry], list[str]]:
    """``entries`` with each package spec replaced by the version the lock recorded
    (``npx -y pkg@1.2.0``, ``uvx pkg==1.2.0``, ``uvx --from pkg==1.2.0 cmd``,
    ``image@sha256:...``), and a warning for each package-running server the lock does not
    pin (missing, unresolved, or another package now)."""
    out = dict(entries)
    warnings: list[str] = []
    for name, spec in specs_of(entries).items():
        pin = pins.get(name)
        if pin is None:
            warnings.append(f"{name}: not in the lock file's packages: rendered unpinned")
            continue
        if not pin.resolved or (pin.ecosystem, pin.name) != (spec.ecosystem, spec.name):
            why = (
                f"the lock records {pin.name}, the config runs {spec.name}"
                if pin.resolved
                else f"the lock could not resolve it ({pin.reason})"
            )
            warnings.append(f"{name}: {why}: rendered unpinned")
            continue
        token = _pinned_token(spec, pin)
        if token is None:
            warnings.append(
                f"{name}: the lock's {pin.version or pin.integrity!r} is not a version of "
                f"{spec.name}: rendered unpinned"
            )
            continue
        entry = entries[name]
        args = list(entry.args)
        args[spec.index] = token
        out[name] = replace(entry, args=tuple(args))
    return out, warnings


def _pinned_token(spec: PackageSpec, pin: PackagePin) -> str | None:
    """The spec naming the lock's version, or ``None`` when the lock holds no valid one (a
    lock file may come from anywhere: nothing but a version goes into a command)."""
    from mcpctl.snapshot.versions import is_npm_version, is_pypi_version

    version = pin.version or ""
    if spec.ecosystem == "npm":
        return f"{spec.name}@{version}" if is_npm_version(version) else None
    if spec.ecosystem == "pypi":
        return f"{spec.name}{spec.extras}=={version}" if is_pypi_version(version) else None
    if pin.integrity and re.fullmatch(r"sha256:[0-9a-f]{64}", pin.integrity):
        return f"{spec.name}@{pin.integrity}"
    return None
