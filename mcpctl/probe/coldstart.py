"""A first start that downloads: where ``npx`` keeps what it installed, and whether a server
that did not answer in time was still downloading its package.

``npx -y pkg@1.2.3`` installs into ``<npm cache>/_npx/<key>``, the key being the first 16 hex
digits of the SHA-512 of the package specs it was given (``--package`` values, else the
first argument), sorted and joined by newlines; it starts without the network only when that
folder holds the package. :func:`npx_installed` finds it; :func:`cold_start` turns a start-up
time-out into "downloading on first start" when the package (npx), the unpacked wheel (uvx)
is not on this machine, or when the runner says on stderr that it is downloading.

Cheap on purpose: it runs only for a server that failed, reads a few files, starts nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from mcpctl.config.model import ServerEntry
from mcpctl.probe.childenv import ProbeError

__all__ = [
    "NPX_VALUED",
    "cold_start",
    "downloading",
    "npm_cache_dir",
    "npx_installed",
    "npx_key",
    "npx_packages",
    "runner_of",
]

#: npx options that take a value (the value is not the package).
NPX_VALUED = frozenset(
    {"-p", "--package", "-c", "--call", "--cache", "--registry", "--userconfig", "-w",
     "--workspace", "--prefix", "--node-options", "--loglevel"}
)  # fmt: skip

# What runners print while they fetch (npx without -y, uvx, docker run).
_DOWNLOADING = re.compile(
    r"will be installed|^\s*Downloading |^\s*Downloaded |^Resolved \d+ package|"
    r"^Prepared \d+ package|Unable to find image .* locally|: Pulling from |Pulling fs layer",
    re.IGNORECASE,
)


def runner_of(command: str | None) -> str | None:
    """``npx``, ``uvx`` or ``docker`` for a command that runs one of them, else ``None``."""
    if not command:
        return None
    name = re.split(r"[\\/]", command)[-1].lower()
    name = re.sub(r"\.(cmd|exe|bat|ps1)$", "", name)
    return name if name in ("npx", "uvx", "docker") else None


def npx_packages(args: Sequence[str]) -> list[str] | None:
    """The package specs an ``npx`` command line installs (its ``--package`` values, else its
    first argument), or ``None`` when it names none (``--call``, a placeholder)."""
    given: list[str] = []
    positional: str | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if arg == "--":
            positional = args[i + 1] if i + 1 < len(args) else None
            break
        if name in ("-c", "--call"):
            return None
        if name in ("-p", "--package"):
            if eq:
                given.append(value)
            elif i + 1 < len(args):
                given.append(args[i + 1])
                i += 1
        elif arg.startswith("-"):
            if not eq and arg in NPX_VALUED:
                i += 1
        else:
            positional = arg
            break
        i += 1
    packages = given or ([positional] if positional else [])
    if not packages or any("${" in p or "$(" in p for p in packages):
        return None
    return packages


def npx_key(packages: Sequence[str]) -> str:
    """The name of the folder under ``_npx`` that npx installs ``packages`` into."""
    text = "\n".join(sorted(packages, key=lambda p: (p.lower(), p)))
    return hashlib.sha512(text.encode()).hexdigest()[:16]


def _plain(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value if value and "${" not in value else None


def _home_expanded(value: str) -> Path:
    """A folder of npm's settings, its ``~`` made the home folder as npm does; as written for
    a user who does not exist (``Path.expanduser`` raises)."""
    path = Path(value)
    try:
        return path.expanduser()
    except RuntimeError:
        return path


def npm_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """npm's cache folder as npm finds it without being asked: ``npm_config_cache`` (in
    ``env``, else this process's environment), the user's ``.npmrc``, else ``~/.npm``."""
    sources = [env or {}, os.environ]
    for source in sources:
        for name in ("npm_config_cache", "NPM_CONFIG_CACHE"):
            value = _plain(source, name)
            if value:
                return _home_expanded(value)
    home = _plain(env or {}, "HOME") or str(Path.home())
    rc = Path(home) / ".npmrc"
    try:
        if rc.is_file() and rc.stat().st_size < 256_000:
            for line in rc.read_text(encoding="utf-8", errors="replace").splitlines():
                key, eq, value = line.partition("=")
                if eq and key.strip() == "cache" and value.strip():
                    return _home_expanded(value.strip().strip('"'))
    except OSError:
        pass
    return Path(home) / ".npm"


def _package_name(spec: str) -> str:
    """``@scope/pkg@1.2`` -> ``@scope/pkg``."""
    if spec.startswith("@"):
        scope, _, rest = spec.partition("/")
        return f"{scope}/{rest.partition('@')[0]}"
    return spec.partition("@")[0]


def npx_installed(cache: Path, packages: Sequence[str]) -> Path | None:
    """The ``_npx`` folder holding ``packages`` (each installed), or ``None``. The folder is
    found by its key, else by the list npx writes into its ``package.json``."""
    root = cache / "_npx"
    wanted = sorted(packages)
    candidates = [root / npx_key(packages)]
    try:
        if not candidates[0].is_dir() and root.is_dir():
            candidates = sorted(root.iterdir())
    except OSError:
        return None
    for folder in candidates:
        manifest = folder / "package.json"
        try:
            if not manifest.is_file() or manifest.stat().st_size > 1_000_000:
                continue
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        listed = data.get("_npx", {}).get("packages") if isinstance(data, dict) else None
        if not isinstance(listed, list) or sorted(map(str, listed)) != wanted:
            continue
        modules = folder / "node_modules"
        if all((modules / _package_name(p) / "package.json").is_file() for p in packages):
            return folder
    return None


def downloading(tail: Sequence[str]) -> bool:
    """Whether a runner's stderr says it is fetching its package (npx, uvx, docker)."""
    return any(_DOWNLOADING.search(line) for line in tail)


def _uv_has(env: Mapping[str, str], spec: str) -> bool | None:
    """Whether the uv cache holds an unpacked wheel of the requirement's project (``None``:
    the cache is not where it can be found without asking uv)."""
    name = re.split(r"[\[<>=!~@; ]", spec, maxsplit=1)[0]
    norm = re.sub(r"[-_.]+", "_", name).lower()
    cache = _plain(env, "UV_CACHE_DIR") or _plain(os.environ, "UV_CACHE_DIR")
    if cache is None:
        xdg = _plain(env, "XDG_CACHE_HOME") or _plain(os.environ, "XDG_CACHE_HOME")
        cache = str(Path(xdg) / "uv" if xdg else Path.home() / ".cache" / "uv")
    archives = Path(cache) / "archive-v0"
    if not archives.is_dir():
        return None if not Path(cache).is_dir() else False
    try:
        for folder in archives.iterdir():
            for item in folder.iterdir():
                if item.name.endswith(".dist-info"):
                    dist = item.name.removesuffix(".dist-info").partition("-")[0]
                    if re.sub(r"[-_.]+", "_", dist).lower() == norm:
                        return True
    except OSError:
        return None
    return False


def _uvx_spec(args: Sequence[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg == "--from" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--from="):
            return arg.partition("=")[2]
    return next((a for a in args if not a.startswith("-")), None)


def _not_cached(entry: ServerEntry, runner: str) -> bool:
    env = {k: v for k, v in entry.env.items() if "${" not in v}
    if runner == "npx":
        packages = npx_packages(entry.args)
        if packages is None:
            return False
        here = Path(entry.cwd or ".") / "node_modules"
        if all((here / _package_name(p) / "package.json").is_file() for p in packages):
            return False  # npx runs the folder's own copy
        return npx_installed(npm_cache_dir(env), packages) is None
    if runner == "uvx":
        spec = _uvx_spec(entry.args)
        return spec is not None and "${" not in spec and _uv_has(env, spec) is False
    return False  # docker says so on stderr ("Unable to find image")


def cold_start(name: str, entry: ServerEntry, error: ProbeError, tail: Sequence[str]) -> ProbeError:
    """``error`` (a start-up time-out), told apart from a hang: when the server's npx/uvx
    package is not on this machine, or its runner says on stderr that it is downloading,
    the hint says so and names ``mcpctl prefetch``; any other error is returned as it is."""
    runner = runner_of(entry.command)
    if error.code != "timeout" or runner is None or entry.is_remote:
        return error
    if not (downloading(tail) or _not_cached(entry, runner)):
        return error
    return error._replace(
        message=f"{error.message}, still downloading its package",
        hint=f"downloading on first start: run 'mcpctl prefetch {name}' (then it starts "
        "without the download), or raise its timeout",
    )
