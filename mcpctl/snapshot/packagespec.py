"""Which package a stdio server's command line runs: ``npx``, ``uvx``, ``pipx run`` and
``docker run`` read into a :class:`PackageSpec` (the ecosystem, the package and the version
it asks for, and where in the arguments it stands)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from mcpctl.config.model import ServerEntry

__all__ = ["Ecosystem", "PackageSpec", "parse_spec", "specs_of"]

Ecosystem = Literal["npm", "pypi", "oci"]

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
    args: list[str], start: int, valued: set[str]
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
        elif arg in valued:
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
