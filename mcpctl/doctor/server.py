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

A detail or a fix never holds a secret: placeholders are reported by where their value comes
from (environment, keyring, default), never by value; a sign-in by its state and expiry.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcpctl.errors import InvalidEntryError, PlaceholderError, ServerNotFoundError
from mcpctl.text import plural, stderr_cause

if TYPE_CHECKING:
    from mcpctl.auth.secrets import SecretStore
    from mcpctl.config.model import ProtocolMode, ServerEntry
    from mcpctl.config.placeholders import ResolvedEntry, SecretSource
    from mcpctl.doctor.secrets import KeyringState
    from mcpctl.probe.eras import EraMemory
    from mcpctl.probe.health import ProbeResult
    from mcpctl.probe.layers import HttpAnswer, StdioRun

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

StepStatus = Literal["passed", "failed", "skipped"]

#: The steps of each kind of server, in order, with what each checks.
STDIO_STEPS: dict[str, str] = {
    "config": "the entry exists, validates and is enabled",
    "placeholders": "where each ${VAR} comes from",
    "command": "the command is installed (and its package or image cached)",
    "spawn": "the process starts and stays up",
    "protocol": "it speaks MCP: the protocol era and version",
    "lists": "its tools, prompts and resources can be listed",
}
REMOTE_STEPS: dict[str, str] = {
    "config": STDIO_STEPS["config"],
    "placeholders": STDIO_STEPS["placeholders"],
    "resolve": "the host name resolves",
    "connect": "a TCP connection is accepted",
    "tls": "the certificate is valid, for that host, and not expired",
    "http": "the endpoint answers HTTP, as MCP",
    "auth": "its sign-in: OAuth metadata, and whether mcpctl is signed in",
    "protocol": STDIO_STEPS["protocol"],
    "lists": STDIO_STEPS["lists"],
}


@dataclass(frozen=True)
class DoctorStep:
    """One layer checked: ``status`` passed, failed or skipped (not checked: an earlier step
    failed); ``ms`` the time it took; ``detail`` what was seen; ``fix`` what to do when it
    failed; ``stderr`` the server's own last lines when they tell why (``detail`` ends with
    them: ``; stderr: ...``; :attr:`own_detail` is ``detail`` without them: mcpctl's
    words only)."""

    id: str
    status: StepStatus
    ms: float = 0.0
    detail: str = ""
    fix: str | None = None
    stderr: tuple[str, ...] = ()

    @property
    def own_detail(self) -> str:
        """``detail`` without the server's lines of stderr it quotes."""
        quoted = stderr_note(self.stderr)
        if quoted and self.detail.endswith(quoted):
            return self.detail[: -len(quoted)]
        return self.detail

    def to_dict(self) -> dict[str, Any]:
        """JSON form (an item of ``data.steps``)."""
        data: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "ms": round(self.ms, 1),
            "detail": self.detail,
            "fix": self.fix,
        }
        if self.stderr:
            data["stderr"] = list(self.stderr)
        return data


def stderr_note(lines: tuple[str, ...]) -> str:
    """How a step's detail quotes a server's last lines of stderr (``""`` for none)."""
    return "; stderr: " + " | ".join(lines) if lines else ""


@dataclass
class ServerDiagnosis:
    """Every step of one server's diagnosis, in order."""

    name: str
    transport: str
    steps: list[DoctorStep] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every step passed."""
        return all(s.status == "passed" for s in self.steps)

    @property
    def failed(self) -> DoctorStep | None:
        """The step that failed, if one did."""
        return next((s for s in self.steps if s.status == "failed"), None)

    @property
    def next(self) -> str | None:
        """The step it would check next, had the failed one passed."""
        if self.failed is None:
            return None
        return next((s.id for s in self.steps if s.status == "skipped"), None)

    def step(self, step_id: str) -> DoctorStep | None:
        """The step of that id, if this kind of server has it."""
        return next((s for s in self.steps if s.id == step_id), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``mcpctl doctor NAME --json`` data)."""
        return {
            "name": self.name,
            "transport": self.transport,
            "ok": self.ok,
            "steps": [s.to_dict() for s in self.steps],
            "next": self.next,
        }


class StepFailed(Exception):
    """What a step saw that does not work, and how to fix it."""

    def __init__(
        self,
        detail: str,
        fix: str | None = None,
        ms: float | None = None,
        stderr: tuple[str, ...] = (),
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fix = fix
        self.ms = ms
        self.stderr = stderr


@dataclass
class _Done:
    """A passed step's detail, and its time when it is not the wall time of the step (the
    probe's own measure of the phase)."""

    detail: str
    ms: float | None = None


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


class _Diagnosis:
    def __init__(
        self,
        name: str,
        config: str | os.PathLike[str] | None,
        timeout: float | None,
        store: SecretStore | None,
        protocol: ProtocolMode | None,
        eras: EraMemory | None,
    ) -> None:
        self.name = name
        self.config = config
        self.timeout = timeout
        self.store = store
        self.protocol = protocol
        self.eras = eras
        self.keyring: KeyringState | None = None
        self.resolved: ResolvedEntry | None = None
        self.secrets: SecretSource | None = None
        self.path = Path()
        self.load_ms = 0.0
        self.run: StdioRun | None = None
        self.result: ProbeResult | None = None
        self.addresses: list[str] = []
        self.address: str | None = None
        self.answer: HttpAnswer | None = None

    # --- the run -------------------------------------------------------------------------

    async def go(self) -> ServerDiagnosis:
        started = time.perf_counter()
        entry, problems = self._load()
        self.load_ms = (time.perf_counter() - started) * 1000
        self.entry = entry
        self.seconds = self.timeout if self.timeout is not None else entry.timeout_ms / 1000
        remote = entry.is_remote
        diagnosis = ServerDiagnosis(self.name, entry.effective_transport)
        plan: list[tuple[str, Callable[[], Awaitable[_Done]]]] = [
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

    def _safe(self, text: str) -> str:
        """``text`` with every secret redacted (the entry's resolved values, and whatever
        looks like a credential)."""
        if self.resolved is not None:
            return self.resolved.redact(text)
        from mcpctl.config.redaction import redact

        return redact(text)

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

    # --- config and placeholders -------------------------------------------------------

    async def _config(self, problems: list[str]) -> _Done:
        if self.unusable:
            first = self.unusable[0]
            more = f" (and {len(self.unusable) - 1} more)" if len(self.unusable) > 1 else ""
            raise StepFailed(
                f"the entry {self.name!r} is not valid: {first}{more}",
                "run 'mcpctl validate' to see each problem with its line and a hint",
            )
        if not self.entry.enabled:
            raise StepFailed(f"{self.name} is disabled", f"enable it: 'mcpctl enable {self.name}'")
        from mcpctl.config.placeholders import unspawnable

        problem = unspawnable(self.entry)
        if problem is not None:
            raise StepFailed(
                f"the entry {self.name!r} cannot be started: {problem}",
                "run 'mcpctl validate' to see each problem with its line and a hint",
            )
        detail = f"found in {self.path}, valid, enabled"
        if problems:
            detail += f"; {plural(len(problems), 'warning')}: {problems[0]}"
        return _Done(detail)

    def _keyring(self) -> KeyringState:
        if self.keyring is None:
            from mcpctl.doctor.secrets import probe_keyring

            self.keyring = probe_keyring(self.store)
        return self.keyring

    async def _placeholders(self) -> _Done:
        from mcpctl.config.placeholders import resolve_entry
        from mcpctl.doctor.secrets import placeholder_source, placeholder_uses

        uses = placeholder_uses({self.name: self.entry})
        parts: list[str] = []
        missing: list[str] = []
        needs_keyring = any(n not in os.environ for n in uses) or self._signs_in()
        keyring = self._keyring() if needs_keyring else None
        for var, use in uses.items():
            source = placeholder_source(var, keyring) if keyring is not None else None
            if var in os.environ:
                source = "environment (empty)" if os.environ[var] == "" else "environment"
            if source is None:
                source = "missing" if use.without_default else "default"
            if source == "missing":
                missing.append(var)
            parts.append(f"{var}: {source}")
        if keyring is not None and keyring.store is not None:
            from mcpctl.auth.secrets import keyring_source

            self.secrets = keyring_source(keyring.store)
        if missing:
            var = missing[0]
            where = "the environment or the keyring"
            if keyring is not None and not keyring.usable:
                where = f"the environment (the keyring is unusable: {keyring.problem})"
            raise StepFailed(
                f"{'; '.join(parts)} -- {', '.join(missing)} not set in {where}, and no default",
                f"store it with 'mcpctl secret set {var}', or export {var}=...",
            )
        try:
            self.resolved = resolve_entry(
                self.name, self.entry, policy="error", secrets=self.secrets
            )
        except (PlaceholderError, InvalidEntryError) as exc:
            raise StepFailed(exc.message, exc.hint) from None
        return _Done("; ".join(parts) if parts else "no ${VAR} placeholder")

    def _signs_in(self) -> bool:
        auth = self.entry.auth
        return self.entry.is_remote and auth is not None and auth.type == "oauth"

    # --- stdio ---------------------------------------------------------------------------

    async def _command(self) -> _Done:
        from mcpctl.config.runtimes import install_hint
        from mcpctl.doctor.packages import cached_package
        from mcpctl.doctor.runtimes import OTHER_HINT
        from mcpctl.probe.childenv import child_env
        from mcpctl.probe.serverenv import find_program

        assert self.resolved is not None
        entry = self.resolved.entry
        command = entry.command or ""
        # What the spawn runs: found on the entry's own PATH (resolved) when it sets one.
        own_path = "PATH" in entry.env
        found = find_program(command, child_env(entry), entry.cwd)
        if found is None:
            base = Path(entry.cwd) if entry.cwd else Path.cwd()
            there = base / command
            if os.sep in command and there.is_file():
                # There, but no execute bit: "not found" would send the user the wrong way.
                raise StepFailed(
                    self._safe(f"{command!r} is not executable ({there})"),
                    self._safe(f"chmod +x {there}"),
                )
            where = (
                f"at {there}"
                if os.sep in command
                else ("on the entry's PATH" if own_path else "on PATH")
            )
            raise StepFailed(
                self._safe(f"{command!r} is not found {where}"), install_hint(command, OTHER_HINT)
            )
        detail = f"{command}: {found}" + (" (on the entry's PATH)" if own_path else "")
        package = cached_package(command, entry.args, found)
        if package is not None:
            if package.cached:
                size = f", {_size(package.size)}" if package.size is not None else ""
                version = f" {package.version}" if package.version else ""
                detail += f"; {package.package}{version} is cached{size}"
            elif package.cached is False:
                detail += (
                    f"; {package.package} not cached: the first start downloads it "
                    f"('mcpctl prefetch {self.name}' fetches it ahead)"
                )
            else:
                detail += f"; whether {package.package} is cached is unknown ({package.note})"
        return _Done(detail)

    async def _spawn(self) -> _Done:
        from mcpctl.probe.layers import LayerFailed, run_stdio

        assert self.resolved is not None
        try:
            self.run = await run_stdio(
                self.name,
                self.entry,
                self.resolved,
                timeout=self.seconds,
                secrets=self.secrets,
                protocol=self.protocol,
                eras=self.eras,
            )
        except LayerFailed as exc:
            raise StepFailed(exc.message, exc.fix) from None
        result = self.result = self.run.result
        error = result.error
        if error is not None and error.code in (
            "server_exited",
            "spawn_failed",
            "command_not_found",
            "missing_variable",
            "variable_unreachable",
        ):
            diag = self.run.diagnostics
            detail = error.message
            if error.code == "server_exited":
                code = diag.returncode
                how = f"exit status {code}" if code is None or code >= 0 else f"signal {-code}"
                detail = f"the process exited at once ({how}), before answering"
            said = tuple(stderr_cause(diag.tail()))  # the lines health shows too
            detail, fix = self._env_note(detail, error.hint, diag.tail())
            raise StepFailed(detail, fix, result.latency_ms.get("total"), said)
        return _Done(f"started (pid {self.run.pid}) and stayed up", self.run.spawn_ms)

    async def _protocol(self) -> _Done:
        result = self.result
        assert result is not None
        if not result.available:
            error = result.error
            assert error is not None
            detail, fix = self._env_note(f"{error.code}: {error.message}", error.hint,
                                         result.stderr)  # fmt: skip
            raise StepFailed(detail, fix, result.latency_ms.get("total"))
        return self._era(result)

    def _env_note(self, detail: str, fix: str | None, stderr: list[str]) -> tuple[str, str | None]:
        """A failed start that wrote to stderr: which of the user's variables it lacked."""
        from mcpctl.doctor.envdiff import with_env_note

        assert self.resolved is not None
        return with_env_note(detail, fix, self.resolved.entry, stderr)

    @staticmethod
    def _era(result: ProbeResult) -> _Done:
        era = result.era
        assert era is not None
        how = "stateless era, server/discover" if era.name == "modern" else "initialize handshake"
        who = " ".join(x for x in (result.server_name, result.server_version) if x)
        detail = f"MCP {era.version} ({how}) over {result.transport}"
        if who:
            detail += f"; server {who}"
        exchange = "initialize" if era.name == "legacy" else "discover"
        ms = result.latency_ms.get("connect", 0.0) + result.latency_ms.get(exchange, 0.0)
        return _Done(detail, ms)

    async def _lists(self) -> _Done:
        result = self.result
        assert result is not None
        ms = sum(
            result.latency_ms.get(k, 0.0)
            for k in ("list_tools", "list_prompts", "list_resources", "ping")
        )
        failures = [d for d in result.degraded if "/list failed" in d]
        if result.error is not None:
            error = result.error
            raise StepFailed(f"{error.code}: {error.message}", error.hint, ms)
        if failures:
            raise StepFailed(
                failures[0], "the server answered, but could not list; its logs may say why", ms
            )
        counts = []
        for what, count in (
            ("tool", result.tool_count),
            ("prompt", result.prompt_count),
            ("resource", result.resource_count),
        ):
            offered = what + "s" in result.capabilities
            counts.append(plural(count or 0, what) if offered else f"no {what}s offered")
        detail = ", ".join(counts)
        if result.warnings:
            detail += f"; mcpctl repaired its tool list ({result.warnings[0]})"
        return _Done(detail, ms)

    # --- remote --------------------------------------------------------------------------

    def _host(self) -> tuple[str, int]:
        from mcpctl.probe.layers import host_and_port

        assert self.resolved is not None
        return host_and_port(self.resolved.entry.url or "")

    async def _resolve(self) -> _Done:
        from mcpctl.probe.layers import LayerFailed, is_address, resolve_host

        host, port = self._host()
        if is_address(host.strip("[]")):
            self.addresses = [host.strip("[]")]
            return _Done(f"{host} is an address (nothing to resolve)")
        try:
            self.addresses = await resolve_host(host, port, self.seconds)
        except LayerFailed as exc:
            raise StepFailed(exc.message, exc.fix) from None
        shown = ", ".join(self.addresses[:4]) + (", ..." if len(self.addresses) > 4 else "")
        return _Done(f"{host}: {shown}")

    async def _connect(self) -> _Done:
        from mcpctl.probe.layers import LayerFailed, connect_tcp

        _, port = self._host()
        try:
            self.address = await connect_tcp(self.addresses, port, self.seconds)
        except LayerFailed as exc:
            raise StepFailed(exc.message, exc.fix) from None
        return _Done(f"connected to {self.address} port {port}")

    async def _tls(self) -> _Done:
        from mcpctl.probe.layers import LayerFailed, check_tls

        host, port = self._host()
        assert self.address is not None
        try:
            tls = await check_tls(host, port, self.address, self.seconds)
        except LayerFailed as exc:
            raise StepFailed(exc.message, exc.fix) from None
        detail = f"{tls.version or 'TLS'}; certificate for {tls.subject or host}"
        if tls.issuer:
            detail += f" from {tls.issuer}"
        if tls.not_after is not None:
            detail += f", valid until {tls.not_after} ({plural(tls.days_left or 0, 'day')} left)"
        if tls.days_left is not None and tls.days_left < 14:
            detail += "; it expires soon: renew it"
        return _Done(detail)

    async def _http(self) -> _Done:
        from mcpctl.probe.failures import http_error
        from mcpctl.probe.layers import LayerFailed, check_http

        assert self.resolved is not None
        transport = self.entry.transport
        try:
            answer = await check_http(self.resolved, transport, self.seconds)
            if transport is None and answer.status in (404, 405):
                # Perhaps it speaks the older transport: its event stream is a GET.
                sse = await check_http(self.resolved, "sse", self.seconds)
                if sse.status < 400 and sse.content_type == "text/event-stream":
                    answer = sse
        except LayerFailed as exc:
            raise StepFailed(exc.message, exc.fix) from None
        self.answer = answer
        what = "POST initialize" if answer.method == "POST" else "GET (event stream)"
        detail = f"{what}: HTTP {answer.status}, {answer.content_type or 'no content type'}"
        if answer.status in (401, 403):
            scheme = f" ({answer.challenge})" if answer.challenge else ""
            return _Done(f"{detail}; it asks for credentials{scheme}")
        if answer.status >= 400 or "html" in answer.content_type:
            error = http_error(answer.status, self.name)
            if answer.status < 400:
                raise StepFailed(
                    f"{detail}: an HTML page, not MCP", "check the URL's path (often /mcp or /sse)"
                )
            raise StepFailed(
                f"{detail}: {error.message}",
                error.hint or "check the URL's path (often /mcp or /sse)",
            )
        return _Done(detail)

    async def _auth(self) -> _Done:
        from mcpctl.probe.layers import auth_metadata

        answer = self.answer
        assert answer is not None and self.resolved is not None
        url = self.resolved.entry.url or ""
        asked = answer.status == 401
        parts: list[str] = []
        if answer.status == 403:
            raise StepFailed(
                "the server answered 403 Forbidden", "the credentials lack the needed permissions"
            )
        if asked or self._signs_in():
            meta = await auth_metadata(url, answer.resource_metadata, self.seconds)
            if meta.resource_url:
                parts.append(f"protected-resource metadata at {meta.resource_url}")
            if meta.issuer:
                parts.append(f"authorization server {meta.issuer}")
            parts += meta.problems
        status = self._sign_in_state(url) if self._signs_in() else None
        signed_in = status is not None and status["signed_in"] and not status["problem"]
        if status is not None:
            parts.append(_sign_in_text(status))
        if asked and not signed_in:
            challenge = f" ({answer.challenge})" if answer.challenge else ""
            said = "asks for a sign-in" if answer.challenge else "refuses the request"
            if status is None:
                parts.append("the entry does not sign in with OAuth")
            fix = f"sign in with 'mcpctl auth {self.name}'"
            if not self._signs_in():
                fix += ' (its entry needs "auth": {"type": "oauth"})'
                if not answer.challenge:
                    fix = f"set the credentials of {self.name!r} (its headers), or {fix}"
            raise StepFailed(
                f"the server answered 401{challenge} and {said}; " + "; ".join(parts), fix
            )
        if status is not None and status["problem"]:
            raise StepFailed("; ".join(parts), f"sign in with 'mcpctl auth {self.name}'")
        if not parts:
            parts.append("no sign-in asked for")
        return _Done("; ".join(parts))

    def _sign_in_state(self, url: str) -> dict[str, Any] | None:
        """The sign-in as ``mcpctl auth status`` shows it -- never a token."""
        from mcpctl.auth.records import load_record, token_status
        from mcpctl.errors import McpctlError

        keyring = self._keyring()
        if keyring.store is None:
            return {
                "signed_in": False,
                "problem": f"the keyring is unusable ({keyring.problem})",
                "expires_at": None,
                "expired": None,
                "refreshable": False,
                "stale": False,
            }
        try:
            return token_status(self.name, url, load_record(self.name, keyring.store))
        except McpctlError as exc:
            return {
                "signed_in": False,
                "problem": exc.message,
                "expires_at": None,
                "expired": None,
                "refreshable": False,
                "stale": False,
            }

    async def _remote(self) -> _Done:
        from mcpctl.probe.health import probe

        self.result = result = await probe(
            self.name,
            self.entry,
            timeout=self.seconds,
            secrets=self.secrets,
            protocol=self.protocol,
            eras=self.eras,
        )
        return await self._protocol() if result.available else self._remote_failed(result)

    @staticmethod
    def _remote_failed(result: ProbeResult) -> _Done:
        error = result.error
        assert error is not None
        raise StepFailed(
            f"{error.code}: {error.message}", error.hint, result.latency_ms.get("total")
        )


def _sign_in_text(status: dict[str, Any]) -> str:
    if status["problem"]:
        return f"sign-in: {status['problem']}"
    if not status["signed_in"]:
        return "not signed in"
    expires = status.get("expires_at")
    if status.get("expired"):
        renew = "renewed on use" if status.get("refreshable") else "not renewable"
        return f"signed in (the access token expired {expires}; {renew})"
    return f"signed in (expires {expires})" if expires else "signed in"


def _size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
