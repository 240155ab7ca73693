"""One job, per runner: npx (:mod:`~mcpctl.prefetch.npm`), uvx (:mod:`~mcpctl.prefetch.uv`)
and docker (``docker pull``, unless the image is here already, as ``docker run`` would).

Each returns a :class:`~mcpctl.prefetch.results.PackageFetch`; none raises for what a
runner or a registry does. A registry that cannot be reached is found out before the runner
waits on it (npm retries for a minute): the job fails at once as ``offline``, unless the
package is already where the runner looks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from mcpctl.prefetch.commands import CommandRun, Commands, meaningful_line
from mcpctl.prefetch.plan import Job
from mcpctl.prefetch.results import PackageFetch

if TYPE_CHECKING:
    from mcpctl.snapshot.packages import PackagePin

__all__ = ["REACH_TIMEOUT", "Context", "run_job"]

REACH_TIMEOUT = 5.0
_OFFLINE = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|"
    r"network is unreachable|no such host|could not resolve|dns error|failed to lookup|"
    r"connection refused|tcp connect error|request failed after \d+ retries",
    re.IGNORECASE,
)
_INSTALL = {"npx": "install Node.js (it provides npx)", "uvx": "install uv: pip install uv",
            "docker": "install Docker"}  # fmt: skip


class Context:
    """What the jobs of one run share: the commands, the time limit, the registries found
    reachable or not, and where progress goes."""

    def __init__(self, timeout: float, report: Callable[[Job, str], None]) -> None:
        self.commands = Commands()
        self.timeout = timeout
        self.report = report
        self._reach: dict[str, str | None] = {}
        self._reach_lock = anyio.Lock()

    async def unreachable(self, url: str) -> str | None:
        """Why ``url`` cannot be reached (the network, DNS, a refused connection), or
        ``None`` when it answers anything at all; asked once per URL per run."""
        async with self._reach_lock:
            if url not in self._reach:
                self._reach[url] = await anyio.to_thread.run_sync(_unreachable, url)
            return self._reach[url]


def _unreachable(url: str) -> str | None:
    import time

    from mcpctl.errors import RegistryError
    from mcpctl.registry.client import OFFLINE_HINT, RegistryClient

    deadline = time.monotonic() + REACH_TIMEOUT + 1
    try:
        with RegistryClient(url, timeout=REACH_TIMEOUT, retries=0, deadline=deadline) as client:
            client.get_document(url)
    except RegistryError as exc:
        return exc.message if exc.hint == OFFLINE_HINT else None
    return None


def _proxied(job: Job) -> bool:
    """Whether the entry sends its runner through a proxy other than this process's (which
    the reachability check, made from here, would not use)."""
    import os

    names = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
    return any(job.env.get(n) != os.environ.get(n) for n in names)


def _failed(job: Job, run: CommandRun, what: str) -> PackageFetch:
    line = meaningful_line(run.tail)
    if run.timed_out:
        reason = f"{what} did not finish within {run.seconds:g} s"
    elif run.error is not None:
        reason = run.error
    else:
        reason = f"{what} failed (exit {run.code})" + (f": {line}" if line else "")
    offline = bool(line and _OFFLINE.search(line))
    return PackageFetch.of(job, "failed", reason=reason, offline=offline, seconds=run.seconds)


async def run_job(ctx: Context, job: Job) -> PackageFetch:
    """Fetch one job's package where its runner looks."""
    if job.program is None:
        return PackageFetch.of(
            job, "failed", reason=f"{job.runner} is not installed: {_INSTALL[job.runner]}"
        )
    ctx.report(job, "starting")
    if job.runner == "npx":
        return await _npx(ctx, job)
    if job.runner == "uvx":
        return await _uvx(ctx, job)
    return await _docker(ctx, job)


def _npm_check(job: Job, pin: PackagePin | None) -> Callable[[Path], str | None]:
    from mcpctl.prefetch.npm import installed_version

    def check(folder: Path) -> str | None:
        if pin is None:
            return None
        version, integrity = installed_version(folder, job.name)
        if version != pin.version:
            return f"the lock pins {job.name} {pin.version}, npm installed {version or 'nothing'}"
        if pin.integrity and integrity != pin.integrity:
            return (f"integrity mismatch: the lock records {pin.integrity}, the registry "
                    f"served {integrity or 'no integrity'}")  # fmt: skip
        return None

    return check


async def _npx(ctx: Context, job: Job) -> PackageFetch:
    from mcpctl.prefetch.npm import clean_npm, fill_npx, installed_version, npm_settings
    from mcpctl.probe.coldstart import npx_installed

    env = {**job.env}
    settings = await npm_settings(ctx.commands, job, env, ctx.timeout)
    if isinstance(settings, str):
        return PackageFetch.of(job, "failed", reason=settings)
    check = _npm_check(job, job.pin)
    here = npx_installed(settings.cache, job.packages)
    if here is not None and job.exact:
        complaint = check(here)
        if complaint is None:
            version, integrity = installed_version(here, job.name)
            return PackageFetch.of(job, "cached", where=str(here), version=version,
                                   integrity=integrity)  # fmt: skip
    # Through a proxy of npm's own, only npm can tell whether the registry answers.
    ping = settings.registry.rstrip("/") + "/-/ping"
    offline = None if settings.proxy or _proxied(job) else await ctx.unreachable(ping)
    if offline is not None and here is not None and check(here) is None:
        version, integrity = installed_version(here, job.name)  # what npx finds offline
        return PackageFetch.of(job, "cached", where=str(here), version=version,
                               integrity=integrity)  # fmt: skip
    if offline is not None:
        return PackageFetch.of(
            job,
            "failed",
            offline=True,
            reason=f"offline: npm's registry cannot be reached ({offline})",
        )
    ctx.report(job, "installing")
    run, folder, complaint = await fill_npx(
        ctx.commands, job, settings, env, ctx.timeout, check,
        lambda line: ctx.report(job, line), lambda phase: ctx.report(job, phase),
    )  # fmt: skip
    if complaint is not None:
        await clean_npm(ctx.commands, settings, job, folder, env)
        return PackageFetch.of(job, "failed", reason=complaint + "; removed from npm's cache",
                               seconds=run.seconds)  # fmt: skip
    if not run.ok:
        return _failed(job, run, "npm exec")
    if folder is None:
        return PackageFetch.of(job, "failed", seconds=run.seconds, reason=(
            f"npm exec installed nothing under {settings.cache / '_npx'} (the package is "
            "installed in the entry's folder, or npm is older than 7)"))  # fmt: skip
    version, integrity = installed_version(folder, job.name)
    return PackageFetch.of(job, "fetched", where=str(folder), version=version,
                           integrity=integrity, seconds=run.seconds)  # fmt: skip


async def _uv_cache(ctx: Context, job: Job, env: dict[str, str]) -> Path | None:
    from mcpctl.prefetch.uv import uv_program

    uv = uv_program(job)
    if uv is None:
        return None
    run = await ctx.commands.run([uv, "cache", "dir"], env=env, cwd=job.cwd, timeout=30)
    return Path(run.tail[-1]) if run.ok and run.tail else None


def _index(env: dict[str, str]) -> str:
    index = env.get("UV_DEFAULT_INDEX") or env.get("UV_INDEX_URL") or "https://pypi.org/simple"
    return index.split()[0].rstrip("/") + "/"


async def _uvx(ctx: Context, job: Job) -> PackageFetch:
    from mcpctl.prefetch.uv import uv_program, uvx_argv, wheel_hashes

    env = {**job.env}
    cache = await _uv_cache(ctx, job, env)
    where = str(cache) if cache is not None else None
    # The project's page of the index (its root lists every project: megabytes on PyPI).
    page = _index(env) + re.sub(r"[-_.]+", "-", job.name).lower() + "/"
    asked = not env.get("UV_OFFLINE") and not _proxied(job)
    offline = await ctx.unreachable(page) if asked else None
    ctx.report(job, "installing")
    run = await ctx.commands.run(uvx_argv(job, offline=offline is not None), env=env,
                                 cwd=job.cwd, timeout=ctx.timeout,
                                 on_line=lambda line: ctx.report(job, line))  # fmt: skip
    if offline is not None:
        if run.ok:
            return PackageFetch.of(job, "cached", where=where, seconds=run.seconds)
        return PackageFetch.of(
            job,
            "failed",
            offline=True,
            seconds=run.seconds,
            reason=f"offline: the package index cannot be reached ({offline})",
        )
    if not run.ok:
        return _failed(job, run, "uvx")
    pin = job.pin
    if pin is not None and pin.integrity:
        found = wheel_hashes(cache, job.name, pin.version) if cache is not None else []
        wanted = pin.integrity.removeprefix("sha256:")
        if wanted not in found:
            uv = uv_program(job)
            if uv is not None:
                await ctx.commands.run([uv, "cache", "clean", job.name], env=env, cwd=job.cwd,
                                       timeout=120)  # fmt: skip
            got = ", ".join(f"sha256:{h}" for h in found) or "no wheel record in uv's cache"
            return PackageFetch.of(job, "failed", seconds=run.seconds, reason=(
                f"sha256 mismatch: the lock records {pin.integrity}, uv fetched {got}; "
                "removed from uv's cache"))  # fmt: skip
    return PackageFetch.of(job, "fetched", where=where, seconds=run.seconds,
                           version=pin.version if pin else None,
                           integrity=pin.integrity if pin else None)  # fmt: skip


async def _docker(ctx: Context, job: Job) -> PackageFetch:
    assert job.program is not None
    image = job.packages[0]
    env = {**job.env}
    seen = await ctx.commands.run([job.program, "image", "inspect", "--format", "{{.Id}}", image],
                                  env=env, cwd=job.cwd, timeout=30)  # fmt: skip
    if seen.ok:
        return PackageFetch.of(job, "cached", where=image, seconds=seen.seconds)
    ctx.report(job, "pulling")
    run = await ctx.commands.run([job.program, "pull", *job.options, image], env=env,
                                 cwd=job.cwd, timeout=ctx.timeout,
                                 on_line=lambda line: ctx.report(job, line))  # fmt: skip
    if not run.ok:
        return _failed(job, run, "docker pull")
    return PackageFetch.of(job, "fetched", where=image, seconds=run.seconds)
