"""One server diagnosed layer by layer: ``mcpctl doctor NAME``.

    from mcpctl.doctor.server import diagnose_server

    diagnosis = diagnose_server("github")      # the config mcpctl would use here
    for step in diagnosis.steps:               # id, status (passed/failed/skipped), ms, detail, fix
        ...
    diagnosis.next                             # the first step not checked after a failure

The steps run in order and stop at the first that fails; the rest are ``skipped``. A stdio
server: ``config``, ``placeholders``, ``command``, ``spawn``, ``protocol``, ``lists``. A remote
one: ``config``, ``placeholders``, ``resolve``, ``connect``, ``tls`` (https only), ``http``,
``auth``, ``protocol``, ``lists``. The server is started (or reached) once: its probe is the
one ``mcpctl health NAME`` runs, and the steps after ``spawn`` (or ``auth``) read its result.
What a step reports, and the tables of steps, are :mod:`~mcpctl.doctor.steps` (re-exported
here); the steps themselves :mod:`~mcpctl.doctor.commonsteps`, :mod:`~mcpctl.doctor.stdiosteps`
and :mod:`~mcpctl.doctor.remotesteps`; this module runs them in order.

A detail or a fix never holds a secret: placeholders are reported by where their value comes
from (environment, keyring, default), never by value; a sign-in by its state and expiry.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from mcpctl.doctor.remotesteps import RemoteSteps
from mcpctl.doctor.stdiosteps import StdioSteps
from mcpctl.doctor.steps import (
    REMOTE_STEPS,
    STDIO_STEPS,
    DoctorStep,
    ServerDiagnosis,
    StepDone,
    StepFailed,
    StepStatus,
    stderr_note,
)
from mcpctl.errors import ServerNotFoundError

if TYPE_CHECKING:
    from mcpctl.auth.secrets import SecretStore
    from mcpctl.config.model import ProtocolMode, ServerEntry
    from mcpctl.probe.eras import EraMemory

__all__ = [
    "REMOTE_STEPS",
    "STDIO_STEPS",
    "DoctorStep",
    "ServerDiagnosis",
    "StepStatus",
    "diagnose_server",
    "diagnose_server_async",
    "stderr_note",
]


def diagnose_server(
    name: str,
    config: str | os.PathLike[str] | None = None,
    *,
    timeout: float | None = None,
    store: SecretStore | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
) -> ServerDiagnosis:
    """Diagnose one server layer by layer (see the module); synchronous.

    ``config`` is the ``--config`` value; ``timeout`` the seconds each network step and the
    probe may take (default: the entry's timeout); ``store`` the keyring (default: the OS's,
    read only when a placeholder or a sign-in needs it); ``protocol`` and ``eras`` those of
    :func:`mcpctl.probe.probe`. Never raises for what it finds.

    Raises:
        ServerNotFoundError: no server ``name`` in the config.
        ConfigNotFoundError, ConfigSyntaxError: the config cannot be read at all.
        UntrustedConfigError: the config file is not trusted and the server was not
            approved (``mcpctl trust``).
    """
    import anyio

    async def run() -> ServerDiagnosis:
        return await diagnose_server_async(
            name, config, timeout=timeout, store=store, protocol=protocol, eras=eras
        )

    return anyio.run(run)


async def diagnose_server_async(
    name: str,
    config: str | os.PathLike[str] | None = None,
    *,
    timeout: float | None = None,
    store: SecretStore | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
) -> ServerDiagnosis:
    """:func:`diagnose_server`, in an event loop that is already running."""
    run = _Diagnosis(name, config, timeout, store, protocol, eras)
    return await run.go()


class _Diagnosis(StdioSteps, RemoteSteps):
    """One server's diagnosis: its steps, in order."""

    async def go(self) -> ServerDiagnosis:
        started = time.perf_counter()
        entry, problems = self._load()
        self.load_ms = (time.perf_counter() - started) * 1000
        self.entry = entry
        self.seconds = self.timeout if self.timeout is not None else entry.timeout_ms / 1000
        remote = entry.is_remote
        diagnosis = ServerDiagnosis(self.name, entry.effective_transport)
        plan: list[tuple[str, Callable[[], Awaitable[StepDone]]]] = [
            ("config", lambda: self._config(problems)),  # its time: the file's reading
            ("placeholders", self._placeholders),
        ]
        if remote:
            plan += [("resolve", self._resolve), ("connect", self._connect)]
            if (entry.url or "").lower().startswith("https:"):
                plan.append(("tls", self._tls))
            plan += [("http", self._http), ("auth", self._auth), ("protocol", self._remote)]
        else:
            plan += [
                ("command", self._command),
                ("spawn", self._spawn),
                ("protocol", self._protocol),
            ]
        plan.append(("lists", self._lists))
        failed = False
        for step_id, check in plan:
            if failed:
                diagnosis.steps.append(DoctorStep(step_id, "skipped"))
                continue
            started = time.perf_counter()
            try:
                done = await check()
            except StepFailed as exc:
                ms = exc.ms if exc.ms is not None else (time.perf_counter() - started) * 1000
                if step_id == "config":
                    ms += self.load_ms
                fix = self._safe(exc.fix) if exc.fix else None
                tail = tuple(self._safe(line) for line in exc.stderr)
                detail = self._safe(exc.detail) + stderr_note(tail)
                diagnosis.steps.append(DoctorStep(step_id, "failed", ms, detail, fix, tail))
                failed = True
                continue
            ms = done.ms if done.ms is not None else (time.perf_counter() - started) * 1000
            if step_id == "config":
                ms += self.load_ms
            diagnosis.steps.append(DoctorStep(step_id, "passed", ms, self._safe(done.detail)))
        if self.result is not None:
            diagnosis.transport = self.result.transport
        return diagnosis

    def _load(self) -> tuple[ServerEntry, list[str]]:
        """The entry (read leniently, so that an entry with problems is still diagnosed) and
        the problems of the file that concern it."""
        from mcpctl.config.loader import read_config
        from mcpctl.config.model import ServerEntry
        from mcpctl.config.redaction import register_config
        from mcpctl.config.trust import TrustStore
        from mcpctl.paths import Paths

        paths = Paths.from_env(self.config)
        loaded = read_config(paths.config, must_exist=paths.config_override is not None)
        register_config(loaded.config.entries.values())  # output hides every entry's secrets
        self.path = loaded.path
        mine = [
            p
            for p in loaded.problems
            if p.path == self.name or p.path.startswith((f"{self.name}.", f"{self.name}["))
        ]
        errors = [p for p in mine if p.severity == "error"]
        texts = [f"{p.path}: {p.message}" for p in errors] or [
            f"warning: {p.path}: {p.message}" for p in mine
        ]
        entry = loaded.config.entries.get(self.name)
        if entry is None:
            if errors:
                # Written in the file, but not usable: the config step says why.
                self.unusable = texts
                return ServerEntry(command="?"), texts
            raise ServerNotFoundError.for_names([self.name], loaded.config.entries, loaded.path)
        # Its layers start it, connect to it and resolve its secrets: only once approved.
        TrustStore.from_paths(paths).require(loaded.path, {self.name: entry})
        self.unusable = []
        return entry, texts
