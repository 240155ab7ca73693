"""Filling npx's cache: what ``npx -y pkg@1.2.3`` will look up, installed by npm itself.

npm 7 and later run ``npx`` as ``npm exec``, which installs the packages it is given into
``<npm cache>/_npx/<key>`` (:func:`mcpctl.probe.coldstart.npx_key`) and keeps every
document and tarball it fetched in the cache (``_cacache``). So the faithful prefetch is
the same command with the same package specs, running ``node -e 0`` instead of the server:

    npm exec --yes --ignore-scripts --package=pkg@1.2.3 -- node -e 0

The same key, the same folder, the same cache: a later ``npx -y pkg@1.2.3`` finds the
package there and starts without the network (``npm_config_offline=true`` proves it).

Install scripts: the first pass runs none (``--ignore-scripts``), so that the integrity of a
pinned package is checked before any of its code runs. When the installed tree has a
package with an install script (``hasInstallScript`` in the folder's ``package-lock.json``),
skipping it would leave npx a tree it never builds, so the folder is removed and the same
command runs again with scripts, from the cache -- what ``npx`` would have run on its first
start. Either way the result is the tree npx itself makes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpctl.prefetch.commands import CommandRun, Commands
from mcpctl.prefetch.plan import Job
from mcpctl.probe.coldstart import npx_installed

__all__ = [
    "NpmSettings",
    "clean_npm",
    "clear_stale_lock",
    "fill_npx",
    "installed_version",
    "npm_settings",
]

MAX_LOCK_BYTES = 64 * 1024 * 1024
#: Seconds after which npx's folder lock, untouched, is taken for one a killed npx left.
STALE_LOCK = 3.0


@dataclass(frozen=True)
class NpmSettings:
    """Where npm keeps its cache, which registry it asks and through which proxy (``None``:
    none), as npm itself says for the entry's environment and folder."""

    npm: str
    cache: Path
    registry: str
    proxy: str | None = None


def npm_program(job: Job) -> str | None:
    """The ``npm`` beside the entry's ``npx`` (the same installation), else on PATH."""
    if job.program is not None:
        sibling = Path(job.program).with_name("npm")
        if sibling.is_file():
            return str(sibling)
    return shutil.which("npm", path=job.env.get("PATH"))


async def npm_settings(
    commands: Commands, job: Job, env: dict[str, str], timeout: float
) -> NpmSettings | str:
    """npm's cache folder and registry for ``job`` (``npm config get``, which reads the
    environment and every ``.npmrc`` as ``npx`` will); a string says why they are unknown."""
    npm = npm_program(job)
    if npm is None:
        return "npm is not installed (npx runs on it): install Node.js"
    run = await commands.run([npm, "config", "get", "cache", "registry", "https-proxy", "proxy",
                              *job.options],
                             env=env, cwd=job.cwd, timeout=timeout)  # fmt: skip
    values: dict[str, str] = {}
    for line in run.tail:
        key, eq, value = line.partition("=")
        if eq:
            values[key.strip()] = value.strip()
    if not run.ok or "cache" not in values:
        from mcpctl.prefetch.commands import meaningful_line

        return f"'npm config get' failed: {meaningful_line(run.tail) or run.error or run.code}"
    registry = values.get("registry") or "https://registry.npmjs.org/"
    proxies = [values.get(k) for k in ("https-proxy", "proxy")]
    proxy = next((p for p in proxies if p and p not in ("null", "undefined")), None)
    return NpmSettings(npm, Path(values["cache"]).expanduser(), registry, proxy)


def exec_argv(settings: NpmSettings, job: Job, *, scripts: bool) -> list[str]:
    """The ``npm exec`` that installs ``job`` where ``npx`` looks (see the module)."""
    argv = [settings.npm, "exec", "--yes", "--loglevel=http", "--update-notifier=false"]
    if not scripts:
        argv.append("--ignore-scripts")
    argv += list(job.options)
    argv += [f"--package={p}" for p in job.packages]
    return [*argv, "--", "node", "-e", "0"]


def read_lock(folder: Path) -> dict[str, Any]:
    """The ``packages`` of the npx folder's ``package-lock.json`` (empty when unreadable)."""
    from mcpctl.config.safefile import read_file
    from mcpctl.errors import McpctlError

    try:
        raw = read_file(folder / "package-lock.json", limit=MAX_LOCK_BYTES)
        data = json.loads(raw) if raw is not None else None
    except (McpctlError, ValueError):  # an unreadable lock: nothing known
        return {}
    packages = data.get("packages") if isinstance(data, dict) else None
    return packages if isinstance(packages, dict) else {}


def installed_version(folder: Path, name: str) -> tuple[str | None, str | None]:
    """(version, integrity) of ``name`` as installed in an npx folder."""
    item = read_lock(folder).get(f"node_modules/{name}")
    if not isinstance(item, dict):
        return None, None
    version, integrity = item.get("version"), item.get("integrity")
    return (version if isinstance(version, str) else None,
            integrity if isinstance(integrity, str) else None)  # fmt: skip


def has_install_scripts(folder: Path) -> list[str]:
    """The packages of an npx folder that have an install script."""
    return sorted(
        key.rpartition("node_modules/")[2]
        for key, item in read_lock(folder).items()
        if isinstance(item, dict) and item.get("hasInstallScript") is True
    )


async def clear_stale_lock(folder: Path) -> bool:
    """Remove the lock of an npx folder that an npx killed while installing left behind (a
    client that gave up on a first start): whether one was removed.

    npm holds the lock (a folder, ``concurrency.lock``) by touching it every second, and
    takes over one left behind only after a minute. One untouched for :data:`STALE_LOCK`
    seconds is removed; one still touched is left to npm, which waits for it.
    """
    import contextlib
    import time

    import anyio

    lock = folder / "concurrency.lock"
    give_up = time.monotonic() + STALE_LOCK + 1.5
    while time.monotonic() < give_up:
        try:
            age = time.time() - lock.stat().st_mtime
        except OSError:
            return False
        if age > STALE_LOCK:
            with contextlib.suppress(OSError):
                shutil.rmtree(lock)
                return True
            return False
        await anyio.sleep(0.25)
    return False


async def fill_npx(
    commands: Commands,
    job: Job,
    settings: NpmSettings,
    env: dict[str, str],
    timeout: float,
    check: Callable[[Path], str | None],
    on_line: Callable[[str], None],
    on_phase: Callable[[str], None],
) -> tuple[CommandRun, Path | None, str | None]:
    """Install ``job`` into npx's cache (see the module). ``check`` looks at the installed
    folder before any script runs and says what is wrong (a pin's integrity), or ``None``.
    Returns the last command's run, the folder, and the check's complaint."""
    from mcpctl.probe.coldstart import npx_key

    await clear_stale_lock(settings.cache / "_npx" / npx_key(job.packages))
    run = await commands.run(exec_argv(settings, job, scripts=False), env=env, cwd=job.cwd,
                             timeout=timeout, on_line=on_line)  # fmt: skip
    if not run.ok:
        return run, None, None
    folder = npx_installed(settings.cache, job.packages)
    if folder is None:
        return run, None, None
    complaint = check(folder)
    if complaint is not None:
        return run, folder, complaint
    scripted = has_install_scripts(folder)
    if scripted:
        on_phase(f"running install scripts ({', '.join(scripted[:3])})")
        shutil.rmtree(folder, ignore_errors=True)
        run = await commands.run(exec_argv(settings, job, scripts=True), env=env, cwd=job.cwd,
                                 timeout=timeout, on_line=on_line)  # fmt: skip
        folder = npx_installed(settings.cache, job.packages) if run.ok else None
    return run, folder, None


async def clean_npm(
    commands: Commands, settings: NpmSettings, job: Job, folder: Path | None, env: dict[str, str]
) -> None:
    """Leave nothing of ``job`` that ``npx`` would start without fetching it again: its npx
    folder, and its tarball and document in npm's cache."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    for spec in job.packages:
        listed = await commands.run([settings.npm, "cache", "ls", spec], env=env, cwd=job.cwd,
                                    timeout=60)  # fmt: skip
        keys = [ln.strip() for ln in listed.tail if ln.strip().startswith("make-fetch-happen:")]
        for key in keys:
            await commands.run([settings.npm, "cache", "clean", key], env=env, cwd=job.cwd,
                               timeout=60)  # fmt: skip
