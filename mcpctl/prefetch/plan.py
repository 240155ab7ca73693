"""What to fetch for each server: the runner, the package (or image), where it goes.

A stdio entry whose command is ``npx``, ``uvx`` or ``docker run`` (``podman run``) gets a
:class:`Job`; the others are :class:`Skipped` with the reason (disabled, remote, no package
manager). Entries that fetch the same thing into the same place share one job.

The runner is run as the client runs it: mcpctl's environment with, of the entry's ``env``,
the variables that steer a runner (``npm_config_*``, ``UV_*``, ``DOCKER_*``, ``XDG_*``,
``HOME``, ``PATH``, proxies, CA certificates) -- so an entry that points npm's cache or
registry elsewhere is fetched there -- and never the server's own variables (a token meant
for the server does not reach an install script).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mcpctl.config.model import ServerEntry
from mcpctl.probe.coldstart import NPX_VALUED, npx_packages, runner_of

if TYPE_CHECKING:
    from mcpctl.config.placeholders import SecretSource
    from mcpctl.snapshot.packages import PackagePin

__all__ = ["RUNNER_SETTING", "Job", "Skipped", "plan_jobs"]

Runner = Literal["npx", "uvx", "docker"]

#: The names of an entry's variables that steer its runner (and so reach it here).
RUNNER_SETTING = re.compile(
    r"^(?:npm_config_\w+|NPM_CONFIG_\w+|NODE_\w+|UV_\w+|DOCKER_\w+|XDG_\w+|HOME|PATH|"
    r"(?:HTTPS?|ALL|NO)_PROXY|(?:https?|all|no)_proxy|SSL_CERT_(?:FILE|DIR)|"
    r"REQUESTS_CA_BUNDLE)$"
)

# uvx options that take a value (the value is not the package).
_UVX_VALUED = frozenset(
    {"--from", "--with", "--with-editable", "--with-requirements", "-w", "--python", "-p",
     "--index", "--index-url", "-i", "--extra-index-url", "--default-index", "--find-links",
     "-f", "--constraints", "-c", "--overrides", "--build-constraints", "-b", "--cache-dir",
     "--directory", "--project", "--config-file", "--resolution", "--prerelease",
     "--exclude-newer", "--index-strategy", "--keyring-provider", "--link-mode",
     "--python-preference", "--allow-insecure-host", "--env-file", "--python-platform"}
)  # fmt: skip
# npx options that decide nothing about what is installed (not passed on).
_NPX_OWN = frozenset({"-y", "--yes", "-n", "--no", "-q", "--quiet"})


@dataclass(frozen=True)
class Job:
    """One package to fetch. ``servers``: the entries that run it; ``spec``: the package as
    a person reads it (``pkg@1.2.3``, ``pkg==1.2``, ``image:tag``); ``packages``: npm's
    specs, uv's requirement, or the image; ``options``: the runner's own options of the
    entry that bear on what is installed; ``program``: the runner found (``None``: not
    installed); ``env`` and ``cwd``: what it runs with; ``pin``: the lock's, with
    ``--pinned``."""

    servers: tuple[str, ...]
    runner: Runner
    name: str
    spec: str
    packages: tuple[str, ...]
    options: tuple[str, ...]
    program: str | None
    env: dict[str, str] = field(hash=False)
    cwd: str | None
    pin: PackagePin | None = None
    exact: bool = False

    @property
    def server(self) -> str:
        """The first server that runs it (the one named in messages)."""
        return self.servers[0]


@dataclass(frozen=True)
class Skipped:
    """A server with nothing to fetch, and why."""

    server: str
    reason: str


def _overlay(
    name: str, entry: ServerEntry, secrets: SecretSource | None, environ: Mapping[str, str]
) -> tuple[dict[str, str], str | None]:
    """The runner's settings among the entry's variables, resolved, and its cwd.

    Raises:
        PlaceholderError: one of them names a variable that has no value.
    """
    from dataclasses import replace

    from mcpctl.config.placeholders import resolve_entry

    settings = {k: v for k, v in entry.env.items() if RUNNER_SETTING.match(k)}
    trimmed = replace(entry, command="true", args=(), env=settings, headers={}, auth=None)
    resolved = resolve_entry(name, trimmed, policy="error", environ=environ, secrets=secrets)
    assert resolved is not None
    return dict(resolved.entry.env), resolved.entry.cwd


def _options(args: tuple[str, ...], valued: frozenset[str], drop: frozenset[str]) -> list[str]:
    """The options before the first positional argument, less those in ``drop`` (with
    their values)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--" or not arg.startswith("-"):
            break
        name, eq, _ = arg.partition("=")
        takes = not eq and arg in valued
        if name not in drop:
            out.append(arg)
            if takes and i + 1 < len(args):
                out.append(args[i + 1])
        i += 2 if takes else 1
    return out


def _locate(command: str, env: Mapping[str, str], base: str | None) -> str | None:
    if "/" in command or "\\" in command:
        path = Path(base or ".") / command
        return str(path) if path.is_file() else None
    return shutil.which(command, path=env.get("PATH"))


def plan_jobs(
    chosen: list[tuple[str, ServerEntry]],
    *,
    pins: Mapping[str, PackagePin] | None = None,
    secrets: SecretSource | None = None,
    environ: Mapping[str, str],
) -> tuple[list[Job], list[Skipped], list[str]]:
    """The jobs of the ``chosen`` servers (in order, shared where the same package goes to
    the same place), the servers skipped, and warnings (a server the lock does not pin)."""
    from mcpctl.errors import PlaceholderError
    from mcpctl.snapshot.packages import parse_spec, pin_entries

    jobs: dict[tuple[object, ...], Job] = {}
    skipped: list[Skipped] = []
    warnings: list[str] = []
    for name, original in chosen:
        if not original.enabled:
            skipped.append(Skipped(name, "disabled"))
            continue
        if original.is_remote:
            skipped.append(Skipped(name, "a remote server: nothing to install"))
            continue
        runner = runner_of(original.command)
        entry = original
        pin = None
        if pins is not None and runner is not None:
            spec = parse_spec(entry.command, entry.args)
            pin = pins.get(name)
            usable = (
                spec is not None and pin is not None and pin.resolved
                and (pin.ecosystem, pin.name) == (spec.ecosystem, spec.name)
            )  # fmt: skip
            pinned, _ = pin_entries({name: entry}, {name: pin} if usable and pin else {})
            if usable and pinned[name] is not entry:
                entry = pinned[name]
            else:
                warnings.append(f"{name}: the lock does not pin its package: fetched as configured")
                pin = None
        if runner is None:
            what = original.command or "?"
            skipped.append(Skipped(name, f"runs {what}, not npx, uvx or docker: nothing to fetch"))
            continue
        try:
            overlay, cwd = _overlay(name, entry, secrets, environ)
        except PlaceholderError as exc:
            skipped.append(Skipped(name, f"not fetched: {exc.message}"))
            continue
        job = _job(name, entry, runner, overlay, cwd, pin, environ)
        if isinstance(job, Skipped):
            skipped.append(job)
            continue
        key = (job.runner, job.packages, job.options, tuple(sorted(overlay.items())), cwd)
        if key in jobs:
            first = jobs[key]
            jobs[key] = Job(**{**first.__dict__, "servers": (*first.servers, name)})
        else:
            jobs[key] = job
    return list(jobs.values()), skipped, warnings


def _job(
    name: str,
    entry: ServerEntry,
    runner: Runner | str,
    overlay: dict[str, str],
    cwd: str | None,
    pin: PackagePin | None,
    environ: Mapping[str, str],
) -> Job | Skipped:
    from mcpctl.snapshot.packages import parse_spec

    env = {**environ, **overlay}
    program = _locate(entry.command or "", env, cwd)
    args = entry.args
    if runner == "npx":
        packages = npx_packages(args)
        if packages is None:
            return Skipped(name, "its npx command names no package mcpctl can fetch")
        options = _options(args, NPX_VALUED, _NPX_OWN | {"-p", "--package"})
        spec = parse_spec(entry.command, args)
        exact = spec is not None and spec.pinned and len(packages) == 1
        shown = " ".join(packages)
        return Job((name,), "npx", spec.name if spec else shown, shown, tuple(packages),
                   tuple(options), program, env, cwd, pin, exact)  # fmt: skip
    spec = parse_spec(entry.command, args)
    if spec is None or "${" in spec.text:
        return Skipped(name, f"its {runner} command names no package mcpctl can fetch")
    if runner == "uvx":
        requirement = f"{spec.name}{spec.extras}{spec.requested}"
        options = _options(args, _UVX_VALUED, frozenset({"--from"}))
        return Job((name,), "uvx", spec.name, requirement, (requirement,), tuple(options),
                   program, env, cwd, pin, spec.pinned)  # fmt: skip
    if spec.ecosystem != "oci":
        return Skipped(name, f"its {runner} command names no image")
    image = f"{spec.name}{spec.requested}"
    platform = [a for i, a in enumerate(args)
                if a.startswith("--platform") or (i and args[i - 1] == "--platform")]  # fmt: skip
    return Job((name,), "docker", spec.name, image, (image,), tuple(platform), program,
               env, cwd, pin, spec.pinned)  # fmt: skip
