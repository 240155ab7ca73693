"""The keyring, and where each ``${VAR}`` placeholder of the enabled servers resolves from.

Placeholders are looked up where :mod:`mcpctl.config.placeholders` would resolve them -- the
environment, then the keyring, then the default -- and only *where* each resolves from is
reported: a value read from the keyring to know it is there goes nowhere.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from mcpctl.auth.secrets import SecretStore
from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import find_placeholders
from mcpctl.doctor.findings import Finding, Severity, name_servers
from mcpctl.errors import McpctlError

__all__ = [
    "KeyringState",
    "PlaceholderUse",
    "check_placeholders",
    "keyring_finding",
    "placeholder_source",
    "placeholder_uses",
    "probe_keyring",
]

PROBE_ITEM = "doctor:probe"  # never written: reading it shows whether the keyring answers


@dataclass
class KeyringState:
    """Whether the keyring answers: ``store`` is set when it does."""

    store: SecretStore | None
    backend: str | None = None
    problem: str | None = None
    hint: str | None = None

    @property
    def usable(self) -> bool:
        """Whether secrets and sign-ins can be read."""
        return self.store is not None

    def broke(self, exc: Exception) -> None:
        """Record that the keyring failed during a later read (it is not used again)."""
        self.store = None
        self.problem = _keyring_problem(exc)
        self.hint = getattr(exc, "hint", None) or self.hint


def _keyring_problem(exc: Exception) -> str:
    if isinstance(exc, McpctlError):
        return exc.message
    return f"the keyring failed: {type(exc).__name__}: {exc}".rstrip(": ")


def probe_keyring(store: SecretStore | None = None) -> KeyringState:
    """Choose the backend and read an item that does not exist: either works or it does not.

    Never raises: a keyring that fails in any way is reported, not fatal.
    """
    store = store or SecretStore()
    backend = None
    try:
        backend = store.backend_name()
        store.get_item(PROBE_ITEM)
    except McpctlError as exc:  # no keyring, or it failed (SecretStore wraps every failure)
        return KeyringState(None, backend, _keyring_problem(exc), getattr(exc, "hint", None))
    return KeyringState(store, backend)


def keyring_finding(state: KeyringState, variables: list[str], oauth_servers: list[str]) -> Finding:
    """The keyring's finding: broken when a placeholder or a sign-in needs it and it cannot
    be read, a warning when nothing needs it."""
    details = {"backend": state.backend, "usable": state.usable}
    if state.usable:
        return Finding(
            "keyring",
            "keyring_ok",
            "ok",
            f"{state.backend}: usable (a test read worked)",
            subject=state.backend,
            details=details,
        )
    needs = []
    if variables:
        noun = "placeholder" if len(variables) == 1 else "placeholders"
        needs.append(f"{noun} {name_servers(variables)}")
    if oauth_servers:
        needs.append(f"the OAuth sign-in of {name_servers(oauth_servers)}")
    backend = f"{state.backend}: " if state.backend else ""
    message = f"{backend}{state.problem}"
    message += f"; needed by {' and '.join(needs)}" if needs else "; nothing needs it now"
    fix = state.hint or "set the values as environment variables instead"
    severity: Severity = "error" if needs else "warning"
    return Finding(
        "keyring",
        "keyring_unavailable",
        severity,
        message,
        fix=fix,
        subject=state.backend,
        details=details,
    )


# --- placeholders ------------------------------------------------------------------------


@dataclass
class PlaceholderUse:
    """One variable: the enabled servers whose entries use it, and those that use it
    without a default."""

    name: str
    servers: list[str] = field(default_factory=list)
    without_default: list[str] = field(default_factory=list)


def _texts(entry: ServerEntry) -> list[str]:
    """Every string a placeholder is expanded in (as :func:`resolve_entry` does)."""
    texts = [
        entry.command or "",
        *entry.args,
        *entry.env.values(),
        entry.cwd or "",
        entry.url or "",
        *entry.headers.values(),
    ]
    auth = entry.auth
    if auth is not None:
        creds = (
            auth.token,
            auth.value,
            auth.username,
            auth.password,
            auth.client_id,
            auth.client_secret,
        )
        texts += [c for c in creds if c]
    return texts


def placeholder_uses(entries: Mapping[str, ServerEntry]) -> dict[str, PlaceholderUse]:
    """The ``${VAR}`` placeholders of the enabled entries, by name, in order of appearance."""
    uses: dict[str, PlaceholderUse] = {}
    for server, entry in entries.items():
        if not entry.enabled:
            continue
        for text in _texts(entry):
            for ph in find_placeholders(text) if "${" in text else ():
                use = uses.setdefault(ph.name, PlaceholderUse(ph.name))
                if server not in use.servers:
                    use.servers.append(server)
                if ph.default is None and server not in use.without_default:
                    use.without_default.append(server)
    return uses


def check_placeholders(
    entries: Mapping[str, ServerEntry], keyring: KeyringState
) -> tuple[list[Finding], list[str]]:
    """Where each placeholder resolves from, and the variables that need the keyring but
    could not be looked up there (it is unusable)."""
    findings: list[Finding] = []
    needs_keyring: list[str] = []
    for name, use in placeholder_uses(entries).items():
        source = placeholder_source(name, keyring)
        if source is None and not keyring.usable and use.without_default:
            needs_keyring.append(name)
        findings.append(_placeholder_finding(use, source, keyring.usable))
    if not findings:
        findings.append(
            Finding(
                "placeholders",
                "placeholders_none",
                "ok",
                "no ${VAR} placeholder in the enabled servers",
            )
        )
    return findings, needs_keyring


def _placeholder_finding(use: PlaceholderUse, source: str | None, keyring: bool) -> Finding:
    name, servers = use.name, tuple(use.servers)
    who = name_servers(servers)
    to_set = f"'mcpctl secret set {name}', or export {name}=..."
    if source == "environment" and os.environ.get(name) == "":
        return Finding(
            "placeholders",
            "placeholder_empty",
            "warning",
            f"{name}: set in the environment, but empty; used by {who}",
            fix=f"export {name} with its value, or unset it to use the keyring or the default",
            subject=name,
            servers=servers,
            details={"variable": name, "source": source},
        )
    if source is not None:
        code, where = (
            ("placeholder_env", "the environment")
            if source == "environment"
            else ("placeholder_keyring", "the keyring")
        )
        return Finding(
            "placeholders",
            code,
            "ok",
            f"{name}: from {where}; used by {who}",
            subject=name,
            servers=servers,
            details={"variable": name, "source": source},
        )
    if not use.without_default:
        return Finding(
            "placeholders",
            "placeholder_default",
            "info",
            f"{name}: not set; the default written in the config is used; used by {who}",
            fix=f"to set it: {to_set}",
            subject=name,
            servers=servers,
            details={"variable": name, "source": "default"},
        )
    partly = " (a default covers the others)" if use.without_default != use.servers else ""
    where = "the environment or the keyring" if keyring else "the environment"
    fix = f"store it with {to_set}" if keyring else f"export {name}=... (no usable keyring)"
    needed = tuple(use.without_default)
    return Finding(
        "placeholders",
        "placeholder_missing",
        "error",
        f"{name}: not set in {where}, and no default; needed by {name_servers(needed)}{partly}",
        fix=fix,
        subject=name,
        servers=needed,
        details={"variable": name, "source": "missing"},
    )


def placeholder_source(name: str, keyring: KeyringState) -> str | None:
    """``environment`` or ``keyring`` -- where the value is -- or ``None``."""
    if name in os.environ:
        return "environment"
    if keyring.store is None:
        return None
    try:
        # The value is read to know it is there, and dropped: it goes nowhere.
        return "keyring" if keyring.store.get(name) is not None else None
    except McpctlError as exc:  # the keyring failed after the probe: reported with it
        keyring.broke(exc)
        return None
