"""Which programs the enabled stdio servers need, whether they are installed, which versions.

Commands are grouped by what they run on: ``npx``/``node`` (Node.js), ``uvx``/``uv`` (uv),
``docker``, ``python``/``python3``; anything else is checked only for being installed. A
server's own program is never run: the only processes started are ``--version`` lookups of
the runtimes actually used (``node --version``, ``uv --version``, ``docker --version``,
``python3 --version``), each once per run and within a short timeout.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import find_placeholders
from mcpctl.config.runtimes import RUNTIMES, Runtime, runtime_of
from mcpctl.doctor.findings import Finding, name_servers

__all__ = [
    "RUNTIMES",
    "Runtime",
    "RuntimeCheck",
    "Version",
    "VersionLookup",
    "check_runtimes",
    "locate",
    "runtime_of",
]

SECTION = "runtimes"
VERSION_TIMEOUT = 3.0
_VERSION_RE = re.compile(r"(\d+\.\d+[0-9A-Za-z.+-]*)")


OTHER_HINT = "install it, or fix the entry's command (a program on PATH, or a path to one)"
RELATIVE_HINT = (
    "correct the path (a relative command is found from the entry's cwd, else from the "
    "config file's folder)"
)


def _is_path(command: str) -> bool:
    return os.sep in command or (os.altsep is not None and os.altsep in command)


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def locate(command: str, base: Path) -> str | None:
    """Where ``command`` is: on PATH (a bare name, even one starting with ``~``), or a path
    (relative ones from ``base``, ``~`` as written: the server's exec expands none, as
    ``find_program`` says); ``None`` when it is not an executable file."""
    if _is_path(command):
        candidate = base / command
        return str(candidate) if _executable(candidate) else None
    return shutil.which(command)


@dataclass(frozen=True)
class Version:
    """What ``PROGRAM --version`` said: the version, or why there is none."""

    version: str | None = None
    error: str | None = None


def _parse_version(text: str) -> str | None:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    match = _VERSION_RE.search(line)
    return match.group(1) if match else (line[:60] or None)


@dataclass
class VersionLookup:
    """``PROGRAM --version`` of programs, each asked once per run, all at once.

    :meth:`start` launches the lookups and returns at once (they run while other checks
    do); :meth:`run` waits for one, within ``timeout`` seconds of its start; :meth:`finish`
    waits for (or stops) whatever is still running.
    """

    timeout: float = VERSION_TIMEOUT
    cache: dict[str, Version] = field(default_factory=dict)
    _running: dict[str, tuple[subprocess.Popen[bytes], float]] = field(default_factory=dict)

    def start(self, programs: Iterable[str]) -> None:
        """Launch the lookups of ``programs`` (paths) not asked yet."""
        for program in programs:
            if program in self.cache or program in self._running:
                continue
            try:
                proc = subprocess.Popen(
                    [program, "--version"],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    # Its own group: a wrapper script's children are stopped with it.
                    start_new_session=os.name == "posix",
                )
            except OSError as exc:
                self.cache[program] = Version(
                    error=f"{_asked(program)} failed: {exc.strerror or exc}"
                )
                continue
            self._running[program] = (proc, time.monotonic() + self.timeout)

    def run(self, program: str) -> Version:
        """The version of ``program`` (a path): asked now unless it was already."""
        self.start([program])
        if program in self._running:
            proc, deadline = self._running.pop(program)
            try:
                self.cache[program] = _collect(program, proc, deadline, self.timeout)
            except BaseException:  # interrupted while waiting: it must not outlive the run
                _stop(proc)
                raise
        return self.cache[program]

    def finish(self) -> None:
        """Collect every lookup still running (none is left behind)."""
        for program in list(self._running):
            self.run(program)


def _asked(program: str) -> str:
    return f"'{Path(program).name} --version'"


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a lookup that took too long, with what it started (its process group, which is
    its own), and reap it."""
    if os.name == "posix":
        import signal

        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=1.0)
    if proc.poll() is None:  # only a stuck kernel call keeps a killed process alive
        proc.wait()


def _collect(
    program: str, proc: subprocess.Popen[bytes], deadline: float, timeout: float
) -> Version:
    try:
        out, err = proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _stop(proc)
        return Version(error=f"{_asked(program)} did not answer within {timeout:g} s")
    if proc.returncode != 0:
        return Version(error=f"{_asked(program)} exited with {proc.returncode}")
    version = _parse_version(out.decode("utf-8", "replace") or err.decode("utf-8", "replace"))
    if version is None:
        return Version(error=f"{_asked(program)} printed nothing")
    return Version(version=version)


def _version_program(runtime: Runtime, command: str, found: str) -> str | None:
    """The program whose ``--version`` gives the runtime's version for ``command`` (found at
    ``found``): the command itself when it is the runtime, else the runtime beside it or on
    PATH (``npx`` -> ``node``; ``uvx`` -> ``uv``, else ``uvx`` itself)."""
    name = Path(command).name.lower().removesuffix(".exe").removesuffix(".cmd")
    if name == runtime.program or runtime.name in ("docker", "python"):
        return found
    sibling = Path(found).with_name(runtime.program)
    if _executable(sibling):
        return str(sibling)
    on_path = shutil.which(runtime.program)
    if on_path is not None:
        return on_path
    return found if runtime.name == "uv" else None


@dataclass
class _Use:
    command: str
    base: Path
    servers: list[str] = field(default_factory=list)
    path: str | None = None  # the entries' own PATH, when they set one


_OWN = " (on the entry's PATH)"


def _locate(use: _Use) -> str | None:
    """Where the command of ``use`` is: a bare name on the entries' own PATH when they set
    one, as the spawn looks for it (:func:`~mcpctl.probe.serverenv.find_program`)."""
    if use.path is not None and not _is_path(use.command):
        from mcpctl.probe.serverenv import find_program

        return find_program(use.command, {"PATH": use.path})
    return locate(use.command, use.base)


def _uses(entries: Mapping[str, ServerEntry], base: Path) -> tuple[list[_Use], list[str]]:
    """The distinct commands of the enabled stdio entries, and the servers whose command is
    a placeholder (not checked)."""
    uses: dict[tuple[str, str, str | None], _Use] = {}
    unchecked: list[str] = []
    for name, entry in entries.items():
        command = entry.command
        if not entry.enabled or entry.is_remote or command is None or not command.strip():
            continue
        own_path = entry.env.get("PATH")
        if find_placeholders(command) or (own_path is not None and find_placeholders(own_path)):
            unchecked.append(name)
            continue
        where = base
        if _is_path(command) and entry.cwd is not None and not find_placeholders(entry.cwd):
            where = base / entry.cwd
        key = (str(where) if _is_path(command) else "", command, own_path)
        uses.setdefault(key, _Use(command, where, path=own_path)).servers.append(name)
    return list(uses.values()), unchecked


class RuntimeCheck:
    """The runtimes check of one run: built, it has found every command and launched the
    version lookups; :meth:`findings` waits for them (other checks can run meanwhile).

    ``base`` is the config file's folder, where relative commands start.
    """

    def __init__(
        self,
        entries: Mapping[str, ServerEntry],
        base: Path,
        lookup: VersionLookup | None = None,
        untrusted: Collection[str] = (),
    ) -> None:
        self.lookup = lookup or VersionLookup()
        self.uses, self.unchecked = _uses(entries, base)
        self.located = [_locate(u) for u in self.uses]
        self.programs: list[str | None] = []
        self.withheld: set[int] = set()
        for i, (use, found) in enumerate(zip(self.uses, self.located, strict=True)):
            runtime, program = runtime_of(use.command), None
            if runtime is not None and found is not None:
                program = _version_program(runtime, use.command, found)
            if program is not None and untrusted and not _safe_to_ask(use, program, untrusted):
                program = None
                self.withheld.add(i)
            self.programs.append(program)
        self.lookup.start(p for p in self.programs if p is not None)

    def findings(self) -> list[Finding]:
        """A finding per distinct command, and one for the commands set by a placeholder."""
        try:
            found = [
                _withheld(use, located)
                if i in self.withheld
                else _finding(use, located, program, self.lookup)
                for i, (use, located, program) in enumerate(
                    zip(self.uses, self.located, self.programs, strict=True)
                )
            ]
        finally:
            self.lookup.finish()
        if self.unchecked:
            found.append(
                Finding(
                    SECTION,
                    "command_unchecked",
                    "info",
                    f"the command of {name_servers(self.unchecked)} is set by a placeholder "
                    "(or found on a PATH that is): not checked",
                    fix="start it once with 'mcpctl health NAME' to see whether it runs",
                    servers=tuple(self.unchecked),
                )
            )
        if not found:
            found.append(
                Finding(
                    SECTION, "runtimes_none", "ok", "no enabled stdio server: no runtime needed"
                )
            )
        return found


def _safe_to_ask(use: _Use, program: str, untrusted: Collection[str]) -> bool:
    """Whether ``program --version`` may run for ``use``: a server waiting for approval
    (``mcpctl trust``) may name a program of its project's (``./bin/node``), which must not
    run; a runtime found on PATH by an absolute folder is the user's own."""
    if not any(server in untrusted for server in use.servers):
        return True
    return not _is_path(use.command) and Path(program).is_absolute()


def _withheld(use: _Use, found: str | None) -> Finding:
    """A program of a config file nobody approved: found, not run."""
    servers = tuple(use.servers)
    return Finding(
        SECTION,
        "runtime_not_run",
        "info",
        f"{use.command}: {found}; its version is not asked: the config file is not trusted "
        f"and {name_servers(servers)} waits for approval",
        fix="review the servers with 'mcpctl trust'",
        subject=use.command,
        servers=servers,
        details={"command": use.command, "path": found},
    )


def check_runtimes(
    entries: Mapping[str, ServerEntry], base: Path, lookup: VersionLookup | None = None
) -> list[Finding]:
    """A finding per distinct command of the enabled stdio servers (``base``: the config
    file's folder, where relative commands start), and one for commands set by a placeholder.
    """
    return RuntimeCheck(entries, base, lookup).findings()


def _finding(use: _Use, found: str | None, program: str | None, lookup: VersionLookup) -> Finding:
    runtime = runtime_of(use.command)
    servers = tuple(use.servers)
    who = name_servers(servers)
    details: dict[str, str | None] = {
        "command": use.command,
        "runtime": runtime.name if runtime else None,
        "path": found,
    }
    if found is None:
        where = (
            f"not an executable file in {use.base}"
            if _is_path(use.command)
            else ("not on the entry's PATH" if use.path is not None else "not on PATH")
        )
        hint = runtime.hint if runtime else (RELATIVE_HINT if _is_path(use.command) else OTHER_HINT)
        code = "runtime_missing" if runtime else "command_missing"
        return Finding(
            SECTION,
            code,
            "error",
            f"{use.command} is {where}; needed by {who}",
            fix=hint,
            subject=use.command,
            servers=servers,
            details=details,
        )
    if runtime is None:
        return Finding(
            SECTION,
            "command_found",
            "ok",
            f"{use.command}: {found}{_OWN if use.path is not None else ''}; used by {who}",
            subject=use.command,
            servers=servers,
            details=details,
        )
    if program is None:  # npx without node
        return Finding(
            SECTION,
            "runtime_missing",
            "error",
            f"{use.command} is at {found}, but {runtime.program}, which it runs on, is not on "
            f"PATH; needed by {who}",
            fix=runtime.hint,
            subject=use.command,
            servers=servers,
            details=details,
        )
    version = lookup.run(program)
    details["version"] = version.version
    if version.version is None:
        return Finding(
            SECTION,
            "runtime_version_unknown",
            "warning",
            f"{use.command}: {found}, but its version is unknown ({version.error}); used by {who}",
            fix=f"check the installation: run '{program} --version'",
            subject=use.command,
            servers=servers,
            details=details,
        )
    return Finding(
        SECTION,
        "runtime_found",
        "ok",
        f"{use.command}: {found} ({runtime.name} {version.version}); used by {who}",
        subject=use.command,
        servers=servers,
        details=details,
    )
