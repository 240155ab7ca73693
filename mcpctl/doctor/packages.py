"""Whether the package or image a stdio server's ``npx``/``uvx``/``docker`` command names is
already on this machine, and its size: a first start that has to download it takes long.

Looked up where each tool keeps its copies -- npx: ``~/.npm/_npx/*/node_modules/PKG`` (or
under ``npm_config_cache``); uvx: ``uv tool dir``'s ``PKG`` and the uv cache's unpacked
archives (``UV_CACHE_DIR``, else ``uv cache dir``); docker: ``docker image inspect``, with a
short deadline. Nothing is downloaded; a lookup that cannot be made says so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CachedPackage", "cached_package", "package_of"]

LOOKUP_TIMEOUT = 3.0
#: Files counted at most when sizing a cached package (a huge tree is not walked whole).
MAX_FILES = 50_000

# npx options that take a value (the value is not the package).
_NPX_VALUED = {"-p", "--package", "-c", "--call", "--cache", "--registry", "--userconfig"}
# uvx options that take a value.
_UVX_VALUED = {
    "--from",
    "--with",
    "-w",
    "--python",
    "-p",
    "--index",
    "--index-url",
    "--extra-index-url",
    "--with-requirements",
    "--constraint",
    "-c",
    "--directory",
    "--env-file",
    "--cache-dir",
    "--default-index",
}
# docker run options that take a value.
_DOCKER_VALUED = {
    "-e",
    "--env",
    "--env-file",
    "-v",
    "--volume",
    "--name",
    "-p",
    "--publish",
    "--network",
    "--net",
    "-w",
    "--workdir",
    "--entrypoint",
    "-u",
    "--user",
    "--mount",
    "-l",
    "--label",
    "--platform",
    "--pull",
    "--add-host",
    "-h",
    "--hostname",
    "--memory",
    "-m",
    "--cpus",
    "--restart",
    "--log-driver",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--device",
    "--ulimit",
    "--tmpfs",
    "--gpus",
    "--runtime",
    "--ipc",
    "--pid",
    "--dns",
}


@dataclass(frozen=True)
class CachedPackage:
    """What a runtime command runs: its tool, the package or image, and whether (and where,
    how big) it is on this machine. ``cached`` is ``None`` when it could not be told."""

    tool: str
    package: str
    cached: bool | None
    size: int | None = None
    where: str | None = None
    version: str | None = None
    note: str | None = None


def _first_positional(args: Sequence[str], valued: set[str]) -> str | None:
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--":
            continue
        if arg.startswith("-"):
            if "=" not in arg and arg in valued:
                skip = True
            continue
        return arg
    return None


def _option(args: Sequence[str], names: set[str]) -> str | None:
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in names:
            if eq:
                return value
            if i + 1 < len(args):
                return args[i + 1]
    return None


def _npm_name(spec: str) -> str:
    """``@scope/pkg@1.2`` -> ``@scope/pkg``; ``pkg@latest`` -> ``pkg``."""
    if spec.startswith("@"):
        head, _, rest = spec[1:].partition("@")
        return "@" + head if rest or head else spec
    return spec.split("@", 1)[0]


def _py_name(spec: str) -> str:
    """``pkg[extra]==1.0`` / ``pkg@1.0`` -> ``pkg``."""
    return re.split(r"[\[<>=!~@; ]", spec, maxsplit=1)[0]


def package_of(tool: str, args: Sequence[str]) -> str | None:
    """The package (npx, uvx) or image (docker) a runtime command's arguments name."""
    if tool == "npx":
        spec = _option(args, {"-p", "--package"}) or _first_positional(args, _NPX_VALUED)
        return _npm_name(spec) if spec else None
    if tool == "uvx":
        spec = _option(args, {"--from"}) or _first_positional(args, _UVX_VALUED)
        return _py_name(spec) if spec else None
    if tool == "docker":
        rest = list(args)
        if "run" not in rest:
            return None
        return _first_positional(rest[rest.index("run") + 1 :], _DOCKER_VALUED)
    return None


def _size(path: Path) -> int | None:
    total = files = 0
    stack = [path]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    files += 1
                    if files > MAX_FILES:
                        return None
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return total


def _npx(package: str) -> CachedPackage:
    # npm reads its settings from npm_config_* variables, in lower case as it documents them.
    cache = os.environ.get("npm_config_cache") or os.environ.get("NPM_CONFIG_CACHE")  # noqa: SIM112
    root = Path(cache) if cache else Path.home() / ".npm"
    npx = root / "_npx"
    try:
        dirs = sorted(npx.iterdir()) if npx.is_dir() else []
    except OSError:
        dirs = []
    for folder in dirs:
        manifest = folder / "node_modules" / package / "package.json"
        if manifest.is_file():
            version = None
            try:
                if manifest.stat().st_size < 1_000_000:
                    data = json.loads(manifest.read_text(encoding="utf-8"))
                    version = str(data.get("version")) if isinstance(data, dict) else None
            except (OSError, ValueError):
                pass
            return CachedPackage("npx", package, True, _size(folder), str(folder), version)
    return CachedPackage("npx", package, False, where=str(npx))


def _run(argv: list[str]) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=LOOKUP_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _uv_cache_dir(uv: str | None) -> Path | None:
    if os.environ.get("UV_CACHE_DIR"):
        return Path(os.environ["UV_CACHE_DIR"])
    if uv is None:
        return None
    done = _run([uv, "cache", "dir"])
    if done is None or done.returncode != 0 or not done.stdout.strip():
        return None
    return Path(done.stdout.strip().splitlines()[0])


def _uvx(package: str, uv: str | None) -> CachedPackage:
    norm = re.sub(r"[-_.]+", "_", package).lower()
    tools = os.environ.get("UV_TOOL_DIR")
    tool_dir = Path(tools) if tools else Path.home() / ".local" / "share" / "uv" / "tools"
    for name in (package, package.lower()):
        if (tool_dir / name).is_dir():
            folder = tool_dir / name
            return CachedPackage("uvx", package, True, _size(folder), str(folder))
    cache = _uv_cache_dir(uv)
    if cache is None:
        return CachedPackage("uvx", package, None, note="the uv cache could not be located")
    archives = cache / "archive-v0"
    try:
        folders = list(archives.iterdir()) if archives.is_dir() else []
    except OSError:
        folders = []
    for folder in folders:
        try:
            names = [p.name for p in folder.iterdir()]
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                dist, _, version = name.removesuffix(".dist-info").partition("-")
                if re.sub(r"[-_.]+", "_", dist).lower() == norm:
                    return CachedPackage(
                        "uvx", package, True, _size(folder), str(folder), version or None
                    )
    return CachedPackage("uvx", package, False, where=str(cache))


def _docker(image: str, docker: str) -> CachedPackage:
    done = _run([docker, "image", "inspect", "--format", "{{.Size}}", image])
    if done is None:
        return CachedPackage("docker", image, None, note="Docker did not answer in time")
    if done.returncode == 0:
        text = done.stdout.strip()
        return CachedPackage("docker", image, True, int(text) if text.isdigit() else None)
    error = done.stderr.lower()
    if "no such image" in error or "not found" in error:
        return CachedPackage("docker", image, False)
    note = "the Docker daemon is not reachable" if "daemon" in error else "Docker failed"
    return CachedPackage("docker", image, None, note=note)


def cached_package(command: str, args: Sequence[str], found: str) -> CachedPackage | None:
    """Whether what ``command`` (``npx``, ``uvx``, ``docker``; found at ``found``) would run
    is on this machine already; ``None`` for another command, or when no package is named."""
    tool = Path(command).name.lower().removesuffix(".exe").removesuffix(".cmd")
    package = package_of(tool, args)
    if package is None:
        return None
    if tool == "npx":
        return _npx(package)
    if tool == "uvx":
        import shutil

        uv = shutil.which("uv", path=str(Path(found).parent)) or shutil.which("uv")
        return _uvx(package, uv)
    return _docker(package, found)
