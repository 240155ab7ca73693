"""What a package spec installs now, asked of a local npm registry and PyPI JSON API on
127.0.0.1: the integrity recorded, the version a range or tag picks, the distribution chosen,
what a registry sends that is no version, redirects, answers from the cache when offline, and
an image's digest from a local ``docker``."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from mcpctl.registry.client import RegistryClient, host_of
from mcpctl.registry.metadata import MetadataCache
from mcpctl.registry.syncing import REFRESH_TIMEOUT, REQUEST_TIMEOUT
from mcpctl.snapshot import packageresolve
from mcpctl.snapshot.packageresolve import Resolution, resolve_packages
from mcpctl.snapshot.packagespec import PackageSpec, parse_spec
from tests.conftest import reserved_port
from tests.httpthread import reply, serving_http
from tests.stdinpipe import stdin_holding


class Docs:
    """Documents by path (``json``-able, or ``(status, headers)``), and the paths asked."""

    def __init__(self) -> None:
        self.docs: dict[str, Any] = {}
        self.asked: list[str] = []
        self.lock = threading.Lock()


@contextlib.contextmanager
def serving(docs: Docs) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            with docs.lock:
                docs.asked.append(self.path)
                doc = docs.docs.get(self.path)
            if doc is None:
                reply(self, 404, b'{"error": "Not found"}', {})
            elif isinstance(doc, tuple):
                reply(self, doc[0], b"", doc[1])
            else:
                reply(self, 200, json.dumps(doc).encode(), {"Content-Type": "application/json"})

    with serving_http(Handler) as url:
        yield url


@pytest.fixture
def site() -> Iterator[tuple[Docs, dict[str, str]]]:
    """A local registry, and the environment that points mcpctl's npm and PyPI at it."""
    docs = Docs()
    with serving(docs) as url:
        yield docs, {"MCPCTL_NPM_REGISTRY": url + "/", "MCPCTL_PYPI_URL": url + "/"}


Site = tuple[Docs, dict[str, str]]


def spec(command: str, *args: str) -> PackageSpec:
    found = parse_spec(command, list(args))
    assert found is not None
    return found


def npm_doc(versions: dict[str, Any], tags: Any = None) -> dict[str, Any]:
    return {"dist-tags": {"latest": max(versions)} if tags is None else tags,
            "versions": {v: {"dist": d} for v, d in versions.items()}}  # fmt: skip


def whl(name: str, sha: str, *, kind: str = "bdist_wheel", yanked: bool = False) -> dict[str, Any]:
    return {"filename": name, "packagetype": kind, "digests": {"sha256": sha}, "yanked": yanked}


def pypi_doc(version: Any, files: list[Any], releases: Any = None) -> dict[str, Any]:
    return {"info": {"version": version}, "urls": files, "releases": releases or {}}


def resolve(env: dict[str, str], **specs: PackageSpec) -> Resolution:
    return resolve_packages(specs, cache_file=None, environ=env)


# --- npm -------------------------------------------------------------------------------------


def test_npm_records_the_integrity_or_else_the_sha1(site: Site) -> None:
    docs, env = site
    docs.docs["/plain"] = npm_doc({"1.0.0": {"integrity": "sha512-aa", "shasum": "ff"},
                                   "1.1.0": {"shasum": "ee"}, "1.2.0": {"tarball": "x"},
                                   "1.3.0": "text"}, {"latest": "1.0.0"})  # fmt: skip
    docs.docs["/plain"]["versions"]["1.4.0"] = ["not", "an", "object"]
    docs.docs["/@org%2Fpkg"] = npm_doc({"2.0.0": {"integrity": "sha512-bb"}})
    found = resolve(env, a=spec("npx", "-y", "plain"), b=spec("npx", "-y", "plain@1.1.0"),
                    c=spec("npx", "-y", "plain@1.2.0"), d=spec("npx", "-y", "@org/pkg"),
                    e=spec("npx", "-y", "plain@1.3.0"), f=spec("npx", "-y", "plain@1.4.0"))  # fmt: skip
    pins = found.pins
    assert (pins["a"].version, pins["a"].integrity) == ("1.0.0", "sha512-aa")
    assert (pins["b"].version, pins["b"].integrity) == ("1.1.0", "sha1:ee")
    assert (pins["c"].version, pins["c"].integrity) == ("1.2.0", None)
    assert (pins["e"].version, pins["e"].integrity) == ("1.3.0", None)
    assert (pins["f"].version, pins["f"].integrity) == ("1.4.0", None)
    assert (pins["d"].name, pins["d"].version, pins["d"].integrity) == ("@org/pkg", "2.0.0",
                                                                         "sha512-bb")  # fmt: skip
    assert pins["b"].pinned and not pins["a"].pinned and pins["a"].ecosystem == "npm"
    assert (pins["b"].spec, pins["a"].spec) == ("1.1.0", "")
    assert found.warnings == [] and not found.offline
    assert sorted(docs.asked) == ["/@org%2Fpkg", "/plain"]  # one lookup per package


def test_npm_tags_name_a_version(site: Site) -> None:
    docs, env = site
    docs.docs["/plain"] = npm_doc(
        {"1.0.0": {"integrity": "sha512-1"}, "1.1.0": {}, "2.0.0-rc.1": {"integrity": "sha512-2"}},
        {"latest": "1.0.0", "next": "2.0.0-rc.1", "bad": 7, "gone": "3.0.0"},
    )
    found = resolve(env, n=spec("npx", "-y", "plain@next"), b=spec("npx", "-y", "plain@bad"),
                    g=spec("npx", "-y", "plain@gone"), r=spec("npx", "-y", "plain@^1"),
                    x=spec("npx", "-y", "plain@^5"))  # fmt: skip
    assert found.pins["n"].version == "2.0.0-rc.1"
    assert found.pins["r"].version == "1.0.0"  # the latest, when it satisfies the range
    assert found.warnings == []  # a latest that is a version is no news
    for server, wanted in (("b", "bad"), ("g", "gone"), ("x", "^5")):
        pin = found.pins[server]
        assert (pin.status, pin.reason) == ("unresolved", f"no version of plain matches {wanted!r}")


@pytest.mark.parametrize("tags", [["latest"], "1.0.0", None])
def test_npm_without_usable_tags_has_no_latest(site: Site, tags: Any) -> None:
    docs, env = site
    docs.docs["/plain"] = {"dist-tags": tags, "versions": {"1.0.0": {}}}
    found = resolve(env, s=spec("npx", "-y", "plain"), r=spec("npx", "-y", "plain@^1"))
    assert found.pins["s"].reason == "no version of plain matches 'latest'"
    assert found.pins["r"].version == "1.0.0"  # a range needs no tag


@pytest.mark.parametrize(
    ("doc", "why"),
    [([], "not an object"), ({"dist-tags": {}}, "no versions"), ({"versions": []}, "no versions")],
)
def test_an_npm_document_without_versions_is_unresolved(site: Site, doc: Any, why: str) -> None:
    docs, env = site
    docs.docs["/plain"] = doc
    pin = resolve(env, s=spec("npx", "-y", "plain@1.0.0")).pins["s"]
    assert pin.status == "unresolved" and (pin.reason or "").endswith(f"unexpected answer: {why}")
    assert (pin.ecosystem, pin.name, pin.spec, pin.pinned) == ("npm", "plain", "1.0.0", True)


def test_npm_versions_that_are_no_versions_are_counted_and_shown(site: Site) -> None:
    docs, env = site
    bogus = ["v1", "x" * 50, "1.0", "=1.0.0"]
    docs.docs["/four"] = npm_doc({"1.0.0": {}, **{b: {} for b in bogus}}, {"latest": "1.0.0"})
    docs.docs["/one"] = npm_doc({"1.0.0": {}, "v2": {}}, {"latest": "1.0.0"})
    docs.docs["/three"] = npm_doc({"1.0.0": {}, "a": {}, "b": {}, "c": {}}, {"latest": "1.0.0"})
    docs.docs["/two"] = npm_doc({"1.0.0": {}, "a": {}, "b": {}}, {"latest": "1.0.0"})
    found = resolve(env, f=spec("npx", "-y", "four"), o=spec("npx", "-y", "one"),
                    t=spec("npx", "-y", "three"), w=spec("npx", "-y", "two"))  # fmt: skip
    at = host_of(env["MCPCTL_NPM_REGISTRY"])
    assert found.warnings == [
        f"f: four: the npm registry at {at} lists 4 versions that are not versions, ignored: "
        f"'v1', '{'x' * 40}', '1.0', ...",
        f"o: one: the npm registry at {at} lists 1 version that are not versions, ignored: 'v2'",
        f"t: three: the npm registry at {at} lists 3 versions that are not versions, ignored: "
        "'a', 'b', 'c'",
        f"w: two: the npm registry at {at} lists 2 versions that are not versions, ignored: "
        "'a', 'b'",
    ]
    assert all(found.pins[k].version == "1.0.0" for k in "fotw")


def test_an_npm_tag_naming_no_version_is_not_followed(site: Site) -> None:
    docs, env = site
    docs.docs["/plain"] = npm_doc({"1.0.0": {}, "1.5.0": {}, "../x": {}},
                                  {"latest": "../x", "beta": "1.5.0 || 9"})  # fmt: skip
    found = resolve(env, s=spec("npx", "-y", "plain"), b=spec("npx", "-y", "plain@beta"),
                    r=spec("npx", "-y", "plain@^1"))  # fmt: skip
    at = f"the npm registry at {host_of(env['MCPCTL_NPM_REGISTRY'])}"
    assert found.pins["s"].reason == f"{at} names '../x' as its 'latest' dist-tag: not a version"
    assert (
        found.pins["b"].reason == f"{at} names '1.5.0 || 9' as its 'beta' dist-tag: not a version"
    )
    assert found.pins["r"].version == "1.5.0"  # the highest, latest being no version
    assert f"r: plain: {at} names '../x' as its 'latest' dist-tag, which is not a version: " \
        "not recorded" in found.warnings  # fmt: skip


# --- PyPI ------------------------------------------------------------------------------------


def test_pypi_records_a_pure_wheel_first(site: Site) -> None:
    docs, env = site
    files = [whl("demo-1.0.tar.gz", "s0", kind="sdist"),
             whl("demo-1.0-cp312-cp312-linux_x86_64.whl", "s1"),
             whl("demo-1.0-py3-none-any.whl", "s2", kind="wheel?"),
             whl("demo-0.9-py2-none-any.whl", "s3", yanked=True),
             "text", {"filename": "x.whl", "digests": {"md5": "m"}},
             {"filename": 5, "digests": {"sha256": "s"}}]  # fmt: skip
    docs.docs["/pypi/demo-time/json"] = pypi_doc("1.0", files)
    pin = resolve(env, s=spec("uvx", "Demo_Time")).pins["s"]
    assert (pin.ecosystem, pin.name, pin.version) == ("pypi", "Demo_Time", "1.0")
    assert (pin.integrity, pin.file) == ("sha256:s2", "demo-1.0-py3-none-any.whl")
    assert docs.asked == ["/pypi/demo-time/json"]  # the name as PyPI normalises it


@pytest.mark.parametrize(("files", "chosen"), [
    ([whl("a-1.tar.gz", "s0", kind="sdist"), whl("a-1-cp3-abi3-x.whl", "s1")], "s1"),
    ([whl("a-1.tar.gz", "s0", kind="sdist"), whl("a-1.zip", "s9", kind="sdist")], "s0"),
    ([whl("b-1-py3-none-any.whl", "s5"), whl("a-1-py3-none-any.whl", "s4")], "s4"),
    ([whl("a-0.tar.gz", "s0", kind="sdist"), whl("a-1.zip", "s9")], "s9"),
    (["text", {"filename": "y.whl", "digests": ["x"]}, whl("a-1.tar.gz", "s0", kind="sdist")],
     "s0"),
    ([whl("a-1-py3-none-any.whl", "s4", yanked=True), whl("a-1.tar.gz", "s0", kind="sdist")],
     "s0"),
    ([whl("a-1-py3-none-any.whl", "s4", yanked=True), whl("a-1.tar.gz", "s0", yanked=True)],
     "s4"),
])  # fmt: skip
def test_pypi_prefers_a_wheel_that_is_not_yanked(site: Site, files: list[Any], chosen: str) -> None:
    docs, env = site
    docs.docs["/pypi/a/json"] = pypi_doc("1", files)
    assert resolve(env, s=spec("uvx", "a")).pins["s"].integrity == f"sha256:{chosen}"


def test_pypi_a_pinned_version_is_asked_of_its_own_document(site: Site) -> None:
    docs, env = site
    docs.docs["/pypi/demo/1.0%2Blocal/json"] = pypi_doc("1.0+local", [whl("d-1.whl", "s1")])
    docs.docs["/pypi/demo/2.0/json"] = pypi_doc("2.0", [])
    docs.docs["/pypi/demo/3.0/json"] = pypi_doc("3.0 ; rm", [whl("d-3.whl", "s3")])
    docs.docs["/pypi/demo/a%2Fb/json"] = pypi_doc("1.0", [whl("d-1.whl", "s1")])
    found = resolve(env, s=spec("uvx", "demo==1.0+local"), e=spec("uvx", "demo==2.0"),
                    n=spec("uvx", "demo==3.0"), w=spec("uvx", "demo===a/b"))  # fmt: skip
    assert (found.pins["s"].version, found.pins["s"].integrity) == ("1.0+local", "sha256:s1")
    assert found.pins["s"].pinned
    assert found.pins["e"].reason == "demo 2.0 has no distribution files"
    at = f"PyPI at {host_of(env['MCPCTL_PYPI_URL'])}"
    # A pinned version's document naming no version is refused once, with no warning besides.
    assert found.pins["n"].reason == f"{at} names '3.0 ; rm' as the version: not a version"
    assert found.warnings == []
    # A version with a slash stays one part of the path: it names no other document.
    assert sorted(docs.asked) == ["/pypi/demo/1.0%2Blocal/json", "/pypi/demo/2.0/json",
                                  "/pypi/demo/3.0/json", "/pypi/demo/a%2Fb/json"]  # fmt: skip


def test_pypi_a_range_the_latest_satisfies_needs_one_lookup(site: Site) -> None:
    docs, env = site
    docs.docs["/pypi/demo/json"] = pypi_doc("1.5", [whl("d-1.5.whl", "s15")], {"1.5": []})
    found = resolve(env, s=spec("uvx", "demo>=1"), x=spec("uvx", "demo>=3"))
    assert (found.pins["s"].version, found.pins["s"].integrity) == ("1.5", "sha256:s15")
    assert found.pins["x"].reason == "no version of demo matches '>=3'"
    assert docs.asked == ["/pypi/demo/json"]
    assert found.warnings == []  # a latest that is a version is no news


def test_pypi_a_range_picks_the_best_release_not_yanked(site: Site) -> None:
    docs, env = site
    releases = {"1.0": [whl("d-1.0.whl", "a")], "1.2": [whl("d-1.2.whl", "b", yanked=True)],
                "1.1": [whl("d-1.1.whl", "c"), whl("d-1.1.tgz", "d", yanked=True)],
                "2.0": [whl("d-2.0.whl", "e")]}  # fmt: skip
    docs.docs["/pypi/demo/json"] = pypi_doc("2.0", [whl("d-2.0.whl", "e")], releases)
    docs.docs["/pypi/demo/1.1/json"] = pypi_doc("1.1", releases["1.1"])
    pin = resolve(env, s=spec("uvx", "demo<2")).pins["s"]
    assert (pin.version, pin.integrity, pin.file) == ("1.1", "sha256:c", "d-1.1.whl")
    assert (pin.ecosystem, pin.name, pin.spec, pin.pinned) == ("pypi", "demo", "<2", False)
    assert docs.asked == ["/pypi/demo/json", "/pypi/demo/1.1/json"]


def test_pypi_records_the_version_a_range_picked_whatever_its_document_says(site: Site) -> None:
    docs, env = site
    releases = {"1.0": [whl("d-1.0.whl", "a")], "2.0": [whl("d-2.0.whl", "b")]}
    docs.docs["/pypi/demo/json"] = pypi_doc("2.0", releases["2.0"], releases)
    docs.docs["/pypi/demo/1.0/json"] = pypi_doc(None, releases["1.0"])  # a mirror's, no version
    pin = resolve(env, s=spec("uvx", "demo<2")).pins["s"]
    assert (pin.status, pin.version, pin.integrity) == ("resolved", "1.0", "sha256:a")


@pytest.mark.parametrize("doc", [[], {"info": "x"}, {"releases": {}}])
def test_a_pypi_document_without_info_is_unresolved(site: Site, doc: Any) -> None:
    docs, env = site
    docs.docs["/pypi/demo/json"] = doc
    pin = resolve(env, s=spec("uvx", "demo")).pins["s"]
    assert pin.status == "unresolved" and (pin.reason or "").endswith("unexpected answer: no info")


def test_pypi_without_a_list_of_files(site: Site) -> None:
    docs, env = site
    docs.docs["/pypi/demo/json"] = {"info": {"version": "1.0"}, "urls": None}
    assert resolve(env, s=spec("uvx", "demo")).pins["s"].reason == (
        "demo 1.0 has no distribution files"
    )


def test_a_pypi_latest_that_is_no_version(site: Site) -> None:
    docs, env = site
    releases = {"1.0": [whl("d-1.0.whl", "s1")]}
    docs.docs["/pypi/demo/json"] = pypi_doc("1.0 ; rm", [whl("d.whl", "s")], releases)
    docs.docs["/pypi/other/json"] = pypi_doc(7, [whl("d.whl", "s")], "not a dict")
    found = resolve(env, s=spec("uvx", "demo"), r=spec("uvx", "demo>=1"), o=spec("uvx", "other"),
                    q=spec("uvx", "other>=1"))  # fmt: skip
    at = f"PyPI at {host_of(env['MCPCTL_PYPI_URL'])}"
    assert found.pins["s"].reason == f"{at} names '1.0 ; rm' as the version: not a version"
    assert found.pins["r"].version == "1.0"
    assert found.warnings == [
        f"r: demo: {at} names '1.0 ; rm' as its latest version, which is not a version: "
        "not recorded"
    ]
    assert found.pins["o"].reason == "no version of other matches ''"
    assert found.pins["q"].reason == "no version of other matches '>=1'"  # a number: no latest


def test_a_mirror_without_version_documents_answers_from_the_project(site: Site) -> None:
    docs, env = site
    releases = {"0.9": [whl("d-0.9.whl", "s09")], "1.0": [whl("d-1.0.whl", "s10")]}
    docs.docs["/pypi/demo/json"] = pypi_doc("1.0", releases["1.0"], releases)
    found = resolve(env, p=spec("uvx", "demo==0.9"), m=spec("uvx", "demo==0.8"),
                    r=spec("uvx", "demo<1"))  # fmt: skip
    assert (found.pins["p"].version, found.pins["p"].integrity) == ("0.9", "sha256:s09")
    assert (found.pins["r"].version, found.pins["r"].integrity) == ("0.9", "sha256:s09")
    missing = found.pins["m"]
    assert missing.status == "unresolved" and "not found (404)" in (missing.reason or "")
    assert "/pypi/demo/0.8/json" in (missing.reason or "")


def test_a_mirror_without_version_documents_answers_a_pinned_version_alone(
    site: Site, tmp_path: Path
) -> None:
    docs, env = site
    releases = {"0.9": [whl("d-0.9.whl", "s09")], "1.0": [whl("d-1.0.whl", "s10")]}
    docs.docs["/pypi/demo/json"] = pypi_doc("1.0", releases["1.0"], releases)
    kept = tmp_path / "metadata.json"
    found = resolve_packages({"p": spec("uvx", "demo==0.9")}, cache_file=kept, environ=env)
    assert (found.pins["p"].version, found.pins["p"].integrity) == ("0.9", "sha256:s09")
    assert (found.pins["p"].file, found.warnings) == ("d-0.9.whl", [])
    assert docs.asked == ["/pypi/demo/0.9/json", "/pypi/demo/json"]
    # The project's document is kept, as every document fetched is.
    assert (
        env["MCPCTL_PYPI_URL"].rstrip("/") + "/pypi/demo/json"
        in json.loads(kept.read_text(encoding="utf-8"))["documents"]
    )


def test_a_registry_that_cannot_be_read_leaves_the_package_unresolved(site: Site) -> None:
    docs, env = site
    docs.docs["/pypi/demo/json"] = (500, {})
    found = resolve_packages({"s": spec("uvx", "demo")}, cache_file=None, environ=env,
                             client_factory=lambda u, **kw: RegistryClient(u, retries=0, **kw))  # fmt: skip
    assert found.pins["s"].status == "unresolved" and "HTTP 500" in (found.pins["s"].reason or "")
    assert not found.offline


def test_each_package_is_looked_up_whatever_comes_before_it(site: Site) -> None:
    docs, env = site
    docs.docs["/pypi/demo/json"] = pypi_doc("1.0", [whl("d-1.0.whl", "s10")], {"1.0": []})
    docs.docs["/plain"] = npm_doc({"1.0.0": {"integrity": "sha512-a"}})
    digest = "sha256:" + "a" * 64
    found = resolve(env, i=spec("docker", "run", "-i", f"mcp/demo@{digest}"),
                    g=spec("uvx", "gone>=1"), x=spec("uvx", "demo>=3"),
                    n=spec("npx", "-y", "plain"))  # fmt: skip
    assert (found.pins["i"].ecosystem, found.pins["i"].integrity) == ("oci", digest)
    assert found.pins["g"].status == "unresolved" and "(404)" in (found.pins["g"].reason or "")
    assert found.pins["x"].reason == "no version of demo matches '>=3'"
    assert (found.pins["n"].version, found.pins["n"].integrity) == ("1.0.0", "sha512-a")
    # An image is no package of either registry: neither is asked about it.
    assert sorted(docs.asked) == ["/plain", "/pypi/demo/json", "/pypi/gone/json"]


# --- redirects, time limits, the cache -------------------------------------------------------


def test_a_lookup_redirected_to_another_host_is_said_and_recorded(site: Site) -> None:
    docs, env = site
    there = env["MCPCTL_NPM_REGISTRY"].rstrip("/")
    docs.docs["/plain"] = npm_doc({"1.0.0": {"integrity": "sha512-a"}})
    front = Docs()
    front.docs["/plain"] = (302, {"Location": there + "/plain"})
    front.docs["/nothing"] = (302, {"Location": there + "/nothing"})
    with serving(front) as served:
        url = served.replace("127.0.0.1", "localhost")
        found = resolve({"MCPCTL_NPM_REGISTRY": url}, s=spec("npx", "-y", "plain"),
                        n=spec("npx", "-y", "nothing"))  # fmt: skip
    here, away = host_of(url), host_of(there)
    assert found.pins["s"].redirect == f"{here} -> {away}"
    assert found.pins["n"].status == "unresolved" and found.pins["n"].redirect is None
    assert found.warnings == [
        f"s: plain: the npm registry at {here} redirected the lookup to another host, {away}, "
        "which answered",
    ]


class Factory:
    def __init__(self) -> None:
        self.made: list[dict[str, Any]] = []

    def __call__(self, url: str, **kw: Any) -> RegistryClient:
        self.made.append(kw)
        return RegistryClient(url, **kw)


def test_each_lookup_gets_the_time_limits(site: Site) -> None:
    docs, env = site
    docs.docs["/plain"] = npm_doc({"1.0.0": {}})
    factory = Factory()
    began = time.monotonic()
    resolve_packages({"s": spec("npx", "-y", "plain")}, cache_file=None, environ=env,
                     client_factory=factory)  # fmt: skip
    [kw] = factory.made
    assert kw["timeout"] == REQUEST_TIMEOUT
    assert began + REFRESH_TIMEOUT <= kw["deadline"] <= time.monotonic() + REFRESH_TIMEOUT
    deadline = time.monotonic() + 60  # passed on, never reached
    resolve_packages({"s": spec("npx", "-y", "plain")}, cache_file=None, environ=env,
                     client_factory=factory, timeout=2.5, deadline=deadline)  # fmt: skip
    assert factory.made[1] == {"timeout": 2.5, "deadline": deadline}
    # A range's release document, and a mirror's project document, get them too.
    releases = {"0.9": [whl("d-0.9.whl", "s09")], "1.0": [whl("d-1.0.whl", "s10")]}
    docs.docs["/pypi/demo/json"] = pypi_doc("1.0", releases["1.0"], releases)
    docs.docs["/pypi/demo/0.9/json"] = pypi_doc("0.9", releases["0.9"])
    docs.docs["/pypi/other/json"] = pypi_doc("1.0", releases["1.0"], releases)
    found = resolve_packages({"r": spec("uvx", "demo<1"), "p": spec("uvx", "other==0.9")},
                             cache_file=None, environ=env, client_factory=factory,
                             timeout=2.5, deadline=deadline)  # fmt: skip
    assert [found.pins[k].version for k in "rp"] == ["0.9", "0.9"]
    assert factory.made[2:] == [{"timeout": 2.5, "deadline": deadline}] * 4


def test_offline_the_cache_answers_and_says_from_when(site: Site, tmp_path: Path) -> None:
    docs, env = site
    docs.docs["/plain"] = npm_doc({"1.0.0": {"integrity": "sha512-a"}})
    docs.docs["/pypi/demo/json"] = pypi_doc("1.0", [whl("d.whl", "s")])
    kept = tmp_path / "metadata.json"
    specs = {"n": spec("npx", "-y", "plain"), "p": spec("uvx", "demo")}
    online = resolve_packages(specs, cache_file=kept, environ=env)
    assert not online.offline and online.cache_time is None and online.note is None
    assert online.to_data() == {"offline": False, "cache_time": None}
    # The PyPI document is older than the npm one: the resolution gives the oldest time.
    data = json.loads(kept.read_text(encoding="utf-8"))
    for url, record in data["documents"].items():
        record["fetched_at"] = 1_700_000_000.0 if "/pypi/" in url else 1_700_000_100.0
    kept.write_text(json.dumps(data), encoding="utf-8")
    with reserved_port() as port:
        dead = f"http://127.0.0.1:{port}"
        away = {"MCPCTL_NPM_REGISTRY": dead, "MCPCTL_PYPI_URL": dead}
        # The cache is keyed by URL: the same URLs, now unreachable.
        moved = {k.replace(env["MCPCTL_NPM_REGISTRY"].rstrip("/"), dead): v
                 for k, v in data["documents"].items()}  # fmt: skip
        kept.write_text(json.dumps({**data, "documents": moved}), encoding="utf-8")
        offline = resolve_packages(specs, cache_file=kept, environ=away)
        assert offline.pins["n"].version == "1.0.0" and offline.pins["p"].version == "1.0"
        assert offline.offline and offline.cache_time == 1_700_000_000.0
        assert offline.cache_time_text == "2023-11-14T22:13:20Z"
        assert offline.note == "checked against the cache from 2023-11-14T22:13:20Z: offline"
        assert offline.to_data() == {"offline": True, "cache_time": "2023-11-14T22:13:20Z"}
        # Nothing kept for a package: offline, unresolved, and no time to give.
        none = resolve_packages({"x": spec("npx", "-y", "other")}, cache_file=kept, environ=away)
        assert none.offline and none.cache_time is None
        assert "nothing cached" in (none.pins["x"].reason or "")
        assert none.note == "checked against the cache from an unknown time: offline"


def test_offline_a_kept_document_without_data_is_no_answer(tmp_path: Path) -> None:
    kept = tmp_path / "metadata.json"
    with reserved_port() as port:
        dead = f"http://127.0.0.1:{port}"
        cache = MetadataCache.load(kept)
        cache.put(f"{dead}/plain", None, None, 1_700_000_000.0)
        cache.put(f"{dead}/pypi/demo/json", None, None, 1_700_000_000.0)
        cache.save()
        specs = {"n": spec("npx", "-y", "plain"), "p": spec("uvx", "demo")}
        env = {"MCPCTL_NPM_REGISTRY": dead, "MCPCTL_PYPI_URL": dead}
        found = resolve_packages(specs, cache_file=kept, environ=env)
    assert [(p.status, p.reason) for p in found.pins.values()] == [("unresolved", "no answer")] * 2
    assert found.offline and found.cache_time is None


def test_the_cache_file_is_written(site: Site, tmp_path: Path) -> None:
    docs, env = site
    docs.docs["/plain"] = npm_doc({"1.0.0": {}})
    kept = tmp_path / "metadata.json"
    resolve_packages({"s": spec("npx", "-y", "plain")}, cache_file=kept, environ=env)
    assert list(json.loads(kept.read_text(encoding="utf-8"))["documents"]) == [
        env["MCPCTL_NPM_REGISTRY"].rstrip("/") + "/plain"
    ]


# --- images ----------------------------------------------------------------------------------


def test_an_image_pinned_by_digest_needs_no_docker() -> None:
    digest = "sha256:" + "a" * 64

    def docker(image: str) -> tuple[str | None, str | None]:
        raise AssertionError("not asked")

    found = resolve_packages({"d": spec("docker", "run", "-i", f"mcp/time:1.2@{digest}"),
                              "e": spec("docker", "run", "-i", f"mcp/time@{digest}")},
                             cache_file=None, docker=docker)  # fmt: skip
    assert (found.pins["d"].version, found.pins["d"].integrity) == ("1.2", digest)
    assert found.pins["d"].pinned and found.pins["d"].ecosystem == "oci"
    assert (found.pins["d"].name, found.pins["d"].spec) == ("mcp/time", f":1.2@{digest}")
    assert (found.pins["e"].version, found.pins["e"].integrity) == ("latest", digest)


def test_an_image_s_tag_is_asked_of_docker() -> None:
    asked: list[str] = []

    def docker(image: str) -> tuple[str | None, str | None]:
        asked.append(image)
        return (None, None) if image.endswith(":2") else ("sha256:" + "b" * 64, None)

    found = resolve_packages({"t": spec("docker", "run", "-i", "ghcr.io/o/img:1.0"),
                              "u": spec("docker", "run", "ghcr.io/o/img:2"),
                              "x": spec("docker", "run", "ghcr.io/o/img:X1")},
                             cache_file=None, docker=docker)  # fmt: skip
    assert sorted(asked) == ["ghcr.io/o/img:1.0", "ghcr.io/o/img:2", "ghcr.io/o/img:X1"]
    t = found.pins["t"]
    assert (t.ecosystem, t.name) == ("oci", "ghcr.io/o/img")
    assert (t.version, t.integrity, t.pinned, t.spec) == ("1.0", "sha256:" + "b" * 64, False,
                                                          ":1.0")  # fmt: skip
    assert (found.pins["u"].status, found.pins["u"].reason) == ("unresolved", "no digest")


@pytest.fixture
def fake_docker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A ``docker`` program first on PATH: write its script's body to the file it yields."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "docker"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    yield program


def script(program: Path, body: str) -> None:
    program.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)


def inspect(image: str) -> tuple[str | None, str | None]:
    return packageresolve._docker_digest(image)


def test_docker_not_installed(fake_docker: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(fake_docker.parent))
    assert inspect("mcp/time:latest") == (
        None, "docker is not installed: the image's digest is unknown"
    )  # fmt: skip


def test_docker_gives_the_digest_of_the_image_s_own_repository(fake_docker: Path) -> None:
    digests = ["other/repo@sha256:111", "nodigest", 5, "docker.io/mcp/time@sha256:222"]
    script(fake_docker, f"echo \"$@\" > {fake_docker}.args\necho '{json.dumps(digests)}'")
    assert inspect("mcp/time:latest") == ("sha256:222", None)
    args = fake_docker.with_suffix(".args").read_text(encoding="utf-8").split()
    assert args == ["image", "inspect", "--format", "{{json", ".RepoDigests}}", "mcp/time:latest"]
    script(fake_docker, """echo '["docker.io/library/time@sha256:333", "x/y@sha256:444"]'""")
    assert inspect("time:1") == ("sha256:333", None)
    script(fake_docker, """echo '["x/y@sha256:444"]'""")
    assert inspect("localhost:5000/time") == ("sha256:444", None)  # another's, when none is its own
    script(fake_docker, """echo '["x/y@sha256:444", "localhost:5000/time@sha256:555"]'""")
    assert inspect("localhost:5000/time") == ("sha256:555", None)
    assert inspect("localhost:5000/time:1") == ("sha256:555", None)


@pytest.mark.parametrize("out", ["'[]'", "null", "", "'not json'"])
def test_a_local_image_without_a_registry_digest(fake_docker: Path, out: str) -> None:
    script(fake_docker, f"echo {out}")
    assert inspect("mine:latest") == (
        None, "the local image has no registry digest (built here, never pushed)"
    )  # fmt: skip


def test_an_image_not_pulled_here(fake_docker: Path) -> None:
    script(fake_docker, "echo 'Error: No such image: mine:latest' >&2\necho second >&2\nexit 1")
    assert inspect("mine:latest") == (
        None, "not pulled here (docker image inspect: Error: No such image: mine:latest); "
        "the registry is not asked",
    )  # fmt: skip
    script(fake_docker, "exit 1")
    assert inspect("mine:latest")[1] == (
        "not pulled here (docker image inspect: failed); the registry is not asked"
    )
    script(fake_docker, "printf '%0300d' 0 >&2\nexit 1")
    assert inspect("mine:latest")[1] == (
        f"not pulled here (docker image inspect: {'0' * 200}); the registry is not asked"
    )


def test_docker_that_answers_nothing_in_time(
    fake_docker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(packageresolve, "DOCKER_TIMEOUT", 0.3)
    script(fake_docker, "exec sleep 30")
    began = time.monotonic()
    assert inspect("mine:latest") == (None, "docker image inspect gave no answer within 0.3 s")
    assert time.monotonic() - began < 10


def test_docker_that_cannot_be_run(fake_docker: Path) -> None:
    fake_docker.write_text("#!/nonexistent/interpreter\n", encoding="utf-8")
    fake_docker.chmod(0o755)
    digest, why = inspect("mine:latest")
    assert digest is None
    assert why == "docker image inspect failed: No such file or directory"


def test_docker_does_not_read_the_caller_s_input(
    fake_docker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``docker`` that reads its input gets none, not the caller's (a pipe that never ends)."""
    monkeypatch.setattr(packageresolve, "DOCKER_TIMEOUT", 3.0)
    script(fake_docker, "read line\necho '[\"mine@sha256:666\"]'")
    with stdin_holding(None):
        assert inspect("mine:latest") == ("sha256:666", None)
