"""The OAuth sign-ins of the enabled servers, as ``mcpctl auth status`` computes them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpctl.config.model import ServerEntry
from mcpctl.doctor.findings import Finding
from mcpctl.doctor.secrets import KeyringState
from mcpctl.errors import McpctlError

__all__ = ["check_oauth", "oauth_servers"]


def oauth_servers(entries: Mapping[str, ServerEntry]) -> list[str]:
    """The enabled remote servers that sign in with OAuth."""
    return [
        name
        for name, e in entries.items()
        if e.enabled and e.is_remote and e.auth is not None and e.auth.type == "oauth"
    ]


def check_oauth(
    entries: Mapping[str, ServerEntry], keyring: KeyringState, now: float | None = None
) -> list[Finding]:
    """The sign-in of each enabled OAuth server, as ``mcpctl auth status`` computes it."""
    from mcpctl.auth.records import load_record, token_status
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.config.placeholders import resolve_text

    servers = oauth_servers(entries)
    if not servers:
        return [Finding("oauth", "oauth_none", "ok", "no enabled server signs in with OAuth")]
    findings: list[Finding] = []
    for name in servers:
        fix = f"sign in with 'mcpctl auth {name}'"
        if keyring.store is None:
            findings.append(
                Finding(
                    "oauth",
                    "oauth_unchecked",
                    "warning",
                    f"{name}: its sign-in cannot be read (no usable keyring)",
                    fix=keyring.hint or "make a keyring usable, then 'mcpctl auth status'",
                    subject=name,
                    servers=(name,),
                )
            )
            continue
        url = entries[name].url
        try:
            secrets = keyring_source(keyring.store)
            resolved = resolve_text(url, secrets=secrets, policy="empty") if url else None
            status = token_status(name, resolved, load_record(name, keyring.store), now)
        except McpctlError as exc:  # the keyring failed after the probe, or a bad record
            keyring.broke(exc)
            findings.append(
                Finding(
                    "oauth",
                    "oauth_unchecked",
                    "warning",
                    f"{name}: its sign-in cannot be read ({keyring.problem})",
                    fix=keyring.hint,
                    subject=name,
                    servers=(name,),
                )
            )
            continue
        findings.append(_oauth_finding(name, status, fix))
    return findings


def _oauth_finding(name: str, status: dict[str, Any], fix: str) -> Finding:
    details = {key: status[key] for key in ("signed_in", "expires_at", "expired", "refreshable")}
    problem = status["problem"]

    def bad(code: str, text: str) -> Finding:
        return Finding(
            "oauth",
            code,
            "error",
            f"{name}: {text}",
            fix=fix,
            subject=name,
            servers=(name,),
            details=details,
        )

    if status["stale"]:
        return bad("oauth_stale", "signed in for another URL (the entry's url changed)")
    if problem == "expired":
        return bad("oauth_expired", "the sign-in expired and cannot be renewed")
    if problem:
        return bad("oauth_sign_in_needed", f"signing in again is needed ({problem})")
    if not status["signed_in"]:
        return bad("oauth_signed_out", "not signed in")
    expires = status["expires_at"]
    text = f"signed in (expires {expires})" if expires else "signed in"
    if status["expired"]:
        text = f"signed in (the access token expired {expires}; it is renewed on use)"
    return Finding(
        "oauth",
        "oauth_signed_in",
        "ok",
        f"{name}: {text}",
        subject=name,
        servers=(name,),
        details=details,
    )
