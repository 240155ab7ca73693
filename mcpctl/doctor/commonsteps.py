"""The state one ``mcpctl doctor NAME`` carries from step to step, and the steps every server
has: ``config``, ``placeholders``, ``protocol`` and ``lists``.

:class:`CommonSteps` is the base of the diagnosis run by :mod:`~mcpctl.doctor.server`; the
steps only one kind of server has are :mod:`~mcpctl.doctor.stdiosteps` and
:mod:`~mcpctl.doctor.remotesteps`. ``protocol`` and ``lists`` read the result of the one probe
the diagnosis makes. A detail or a fix never holds a secret (:meth:`CommonSteps._safe`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from mcpctl.doctor.steps import StepDone, StepFailed
from mcpctl.errors import InvalidEntryError, PlaceholderError
from mcpctl.text import plural

if TYPE_CHECKING:
    from mcpctl.auth.secrets import SecretStore
    from mcpctl.config.model import ProtocolMode, ServerEntry
    from mcpctl.config.placeholders import ResolvedEntry, SecretSource
    from mcpctl.doctor.secrets import KeyringState
    from mcpctl.probe.eras import EraMemory
    from mcpctl.probe.health import ProbeResult
    from mcpctl.probe.layers import HttpAnswer, StdioRun

__all__ = ["CommonSteps"]


class CommonSteps:
    """One diagnosis under way: what its steps found so far, and the steps both kinds of
    server share."""

    #: Set by the run before the first step: the entry, and the seconds each step may take.
    entry: ServerEntry
    seconds: float
    #: The problems that make the entry unusable (the config step reports them).
    unusable: list[str]

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

    def _safe(self, text: str) -> str:
        """``text`` with every secret redacted (the entry's resolved values, and whatever
        looks like a credential)."""
        if self.resolved is not None:
            return self.resolved.redact(text)
        from mcpctl.config.redaction import redact

        return redact(text)

    # --- config and placeholders -------------------------------------------------------

    async def _config(self, problems: list[str]) -> StepDone:
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
        return StepDone(detail)

    def _keyring(self) -> KeyringState:
        if self.keyring is None:
            from mcpctl.doctor.secrets import probe_keyring

            self.keyring = probe_keyring(self.store)
        return self.keyring

    async def _placeholders(self) -> StepDone:
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
        return StepDone("; ".join(parts) if parts else "no ${VAR} placeholder")

    def _signs_in(self) -> bool:
        auth = self.entry.auth
        return self.entry.is_remote and auth is not None and auth.type == "oauth"

    # --- what the probe found -----------------------------------------------------------

    async def _protocol(self) -> StepDone:
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
    def _era(result: ProbeResult) -> StepDone:
        era = result.era
        assert era is not None
        how = "stateless era, server/discover" if era.name == "modern" else "initialize handshake"
        who = " ".join(x for x in (result.server_name, result.server_version) if x)
        detail = f"MCP {era.version} ({how}) over {result.transport}"
        if who:
            detail += f"; server {who}"
        exchange = "initialize" if era.name == "legacy" else "discover"
        ms = result.latency_ms.get("connect", 0.0) + result.latency_ms.get(exchange, 0.0)
        return StepDone(detail, ms)

    async def _lists(self) -> StepDone:
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
        return StepDone(detail, ms)
