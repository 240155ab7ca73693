"""``mcpctl prefetch``: the packages of the stdio servers, fetched before a client starts them.

    from mcpctl.prefetch import prefetch

    report = prefetch(["github", "docs"])       # the config mcpctl would use here
    for item in report.items:                   # servers, status, runner, package, reason...
        ...
    report.exit_code                            # 0; 1 a package failed; 3 offline

A first start of ``npx -y pkg`` or ``uvx pkg`` downloads the package while the client waits
for the server's answer, and a client gives up after some seconds. Prefetching runs each
runner as the client will, so that it installs where the runner looks, without starting the
server: :mod:`~mcpctl.prefetch.npm` (npx's ``_npx`` folders), :mod:`~mcpctl.prefetch.uv`
(uv's cache), ``docker pull``. Several at once (``jobs``), each within ``timeout``. With a
lock file (``pinned``), exactly the versions it records, each checked against its integrity
(npm's ``dist.integrity``, a wheel's sha256) before any of its code runs; a mismatch is
removed from the cache.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from mcpctl.prefetch.results import FetchStatus, PackageFetch, PrefetchReport

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.config.placeholders import SecretSource
    from mcpctl.paths import Paths
    from mcpctl.prefetch.plan import Job
    from mcpctl.snapshot.packages import PackagePin

__all__ = [
    "DEFAULT_JOBS",
    "DEFAULT_TIMEOUT",
    "FetchProgress",
    "consent_gate",
    "prefetch",
    "prefetch_async",
]

DEFAULT_JOBS = 4
DEFAULT_TIMEOUT = 600.0


class FetchProgress(NamedTuple):
    """What one package is doing: ``text`` (a phase, or the runner's last line), and its
    ``status`` once it is done (``None`` while it runs)."""

    package: str
    servers: tuple[str, ...]
    text: str
    status: FetchStatus | None = None


def consent_gate(config: Path, entries: Mapping[str, ServerEntry], paths: Paths) -> None:
    """Refuse to fetch for servers ``entries`` of config file ``config`` unless the user
    approved them, as starting them would need.

    Fetching a package runs its package manager, and for some npm packages their install
    scripts, with the runner's settings resolved (secrets too): it is starting the server's
    code, so a file from elsewhere (a cloned repository) must be trusted first.

    Raises:
        UntrustedConfigError: some of ``entries`` wait for approval (``mcpctl trust``).
    """
    from mcpctl.config.trust import TrustStore

    TrustStore.from_paths(paths).require(config, entries)


def prefetch(
    names: Sequence[str] = (),
    config: str | os.PathLike[str] | None = None,
    *,
    groups: Sequence[str] = (),
    pinned: str | os.PathLike[str] | None = None,
    jobs: int = DEFAULT_JOBS,
    timeout: float = DEFAULT_TIMEOUT,
    secrets: SecretSource | None = None,
    on_progress: Callable[[FetchProgress], None] | None = None,
) -> PrefetchReport:
    """:func:`prefetch_async`, synchronous (it runs its own event loop)."""
    import anyio

    async def run() -> PrefetchReport:
        return await prefetch_async(
            names, config, groups=groups, pinned=pinned, jobs=jobs, timeout=timeout,
            secrets=secrets, on_progress=on_progress,
        )  # fmt: skip

    return anyio.run(run)


async def prefetch_async(
    names: Sequence[str] = (),
    config: str | os.PathLike[str] | None = None,
    *,
    groups: Sequence[str] = (),
    pinned: str | os.PathLike[str] | None = None,
    jobs: int = DEFAULT_JOBS,
    timeout: float = DEFAULT_TIMEOUT,
    secrets: SecretSource | None = None,
    on_progress: Callable[[FetchProgress], None] | None = None,
) -> PrefetchReport:
    """Fetch the packages of the stdio servers ``names`` and the members of ``groups``
    (neither: every server) where their runners look (see the module).

    ``config``: the ``--config`` value; ``pinned``: a lock file saved with ``snapshot save
    --packages`` (fetch exactly its versions, and check their integrity); ``jobs``: how many
    at once; ``timeout``: the seconds one package manager may take; ``secrets``: where
    placeholders in the runner's settings resolve besides the environment (the keyring);
    ``on_progress``: called (in the event loop) as each package moves on. Disabled and
    remote servers are skipped. Never raises for what a runner or registry does: the report
    says, with its exit code.

    Raises:
        ServerNotFoundError: a name is not in the config.
        GroupNotFoundError: no server is in one of ``groups``.
        UsageError: ``jobs`` or ``timeout`` is not positive; the lock file is missing or
            records no packages.
        ConfigNotFoundError, ConfigSyntaxError: the config cannot be read at all.
        UntrustedConfigError: a server to fetch is of a file that waits for approval.
    """
    import anyio

    from mcpctl.config.loader import read_config
    from mcpctl.config.redaction import register_config
    from mcpctl.config.siblings import select_targets
    from mcpctl.errors import UsageError
    from mcpctl.paths import Paths
    from mcpctl.prefetch.plan import plan_jobs
    from mcpctl.prefetch.runners import Context, run_job

    if jobs < 1 or timeout <= 0:
        raise UsageError("jobs and timeout must be positive")
    paths = Paths.from_env(config)
    loaded = read_config(paths.config, must_exist=paths.config_override is not None)
    entries = loaded.config.entries
    register_config(entries.values())  # output hides every entry's secrets
    chosen, warnings = select_targets(
        entries, {}, names=names, groups=groups, include_disabled=True
    )
    # Before a placeholder of theirs is resolved or a runner started: the servers to fetch.
    fetched = {n: e for n, e, _ in chosen if e.command is not None and e.enabled}
    consent_gate(loaded.path, fetched, paths)
    pins = _pins(Path(pinned)) if pinned is not None else None
    if pins is not None:
        warnings += pins[1]
    planned, skipped, more = plan_jobs(
        [(n, e) for n, e, _ in chosen], pins=pins[0] if pins else None, secrets=secrets,
        environ=os.environ,
    )  # fmt: skip
    report = PrefetchReport(loaded.path, warnings=warnings + more)

    def tell(job: Job, text: str, status: FetchStatus | None = None) -> None:
        if on_progress is not None:
            on_progress(FetchProgress(job.spec, job.servers, text, status))

    ctx = Context(timeout, tell)
    limiter = anyio.CapacityLimiter(jobs)
    done: dict[int, PackageFetch] = {}

    async def one(index: int, job: Job) -> None:
        async with limiter:
            try:
                outcome = await run_job(ctx, job)
            except (OSError, ValueError, RuntimeError) as exc:  # one job's failure is data
                outcome = PackageFetch.of(job, "failed", reason=f"{type(exc).__name__}: {exc}")
        done[index] = outcome
        tell(job, outcome.reason or outcome.status, outcome.status)

    async with anyio.create_task_group() as tg:
        for index, job in enumerate(planned):
            tg.start_soon(one, index, job)
    order = {name: i for i, (name, _, _) in enumerate(chosen)}
    items = [done[i] for i in range(len(planned))]
    items += [PackageFetch((s.server,), "skipped", reason=s.reason) for s in skipped]
    report.items = sorted(items, key=lambda item: order.get(item.servers[0], 0))
    return report


def _pins(lock: Path) -> tuple[dict[str, PackagePin], list[str]]:
    """The packages a lock file records, and warnings.

    Raises:
        UsageError: no such file, not a lock, or it records no packages.
    """
    from mcpctl.errors import UsageError
    from mcpctl.render.templatepins import load_pins

    _, packages, warnings = load_pins(lock)
    if packages is None:
        raise UsageError(
            f"{lock} records no packages, so it pins no version",
            hint=f"record them with: mcpctl snapshot save --packages -o {lock}",
        )
    return dict(packages), warnings
