"""What a package spec installs now: :func:`resolve_packages` asks the registries -- the
npm registry's ``dist.integrity``, PyPI's sha256 of the distribution (a wheel preferred), a
local image's digest -- through their public metadata (:mod:`mcpctl.registry.metadata`),
cached in the cache dir; offline, the cache answers and the :class:`Resolution` says from
when."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mcpctl.snapshot.packagepins import UNRESOLVED, PackagePin
from mcpctl.snapshot.packagespec import PackageSpec

__all__ = ["DOCKER_TIMEOUT", "Resolution", "resolve_packages"]

DOCKER_TIMEOUT = 5.0


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
