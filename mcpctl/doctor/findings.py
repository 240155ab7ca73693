"""What ``mcpctl doctor`` reports: findings, each with a stable code, and the report of a run.

A finding never holds a secret's value: only names (of variables, servers, runtimes), where a
value comes from, paths, versions and ages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "CODES",
    "SECTIONS",
    "SEVERITIES",
    "DoctorReport",
    "Finding",
    "Severity",
    "name_servers",
]

Severity = Literal["ok", "info", "warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("ok", "info", "warning", "error")

#: The sections of a report, in the order they are shown, with their titles.
SECTIONS: dict[str, str] = {
    "config": "Config file",
    "keyring": "Keyring",
    "placeholders": "Placeholders",
    "runtimes": "Runtimes",
    "oauth": "OAuth sign-ins",
    "registries": "Registry cache",
    "snapshot": "Snapshot",
}

Detail = str | int | float | bool | None

#: Every code a finding can have, by section. Codes are stable: scripts may match on them.
CODES: dict[str, tuple[str, ...]] = {
    "config": ("config_file", "config_not_created", "config_not_found", "config_valid",
               "config_warnings", "config_invalid", "config_untrusted"),
    "keyring": ("keyring_ok", "keyring_unavailable"),
    "placeholders": ("placeholders_none", "placeholder_env", "placeholder_keyring",
                     "placeholder_default", "placeholder_empty", "placeholder_missing"),
    "runtimes": ("runtimes_none", "runtime_found", "runtime_version_unknown", "runtime_missing",
                 "command_found", "command_missing", "command_unchecked", "runtime_not_run"),
    "oauth": ("oauth_none", "oauth_signed_in", "oauth_signed_out", "oauth_expired",
              "oauth_stale", "oauth_sign_in_needed", "oauth_unchecked"),
    "registries": ("registries_invalid", "cache_empty", "cache_never_synced", "cache_fresh",
                   "cache_stale", "cache_sync_failed", "cache_unreadable"),
    "snapshot": ("snapshot_none", "snapshot_found", "snapshot_unreadable"),
}  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """One thing doctor checked.

    ``code`` is stable (scripts may match on it); ``fix`` says what to run or do when the
    severity is not ``ok``; ``servers`` are the enabled servers it concerns; ``details`` are
    machine-readable facts (a path, a version, an age in seconds) -- never a secret.
    """

    section: str
    code: str
    severity: Severity
    message: str
    fix: str | None = None
    subject: str | None = None
    servers: tuple[str, ...] = ()
    details: Mapping[str, Detail] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A code outside the list would be an undocumented one: a bug of the check.
        if self.code not in CODES.get(self.section, ()):
            raise ValueError(f"unknown doctor finding {self.section}/{self.code}")

    def to_dict(self) -> dict[str, Any]:
        """JSON form (an item of ``data.findings``)."""
        return {
            "section": self.section,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "fix": self.fix,
            "subject": self.subject,
            "servers": list(self.servers),
            "details": dict(self.details),
        }


@dataclass
class DoctorReport:
    """Every finding of one run, in section order."""

    config: Path
    config_origin: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """How many findings of each severity (every severity present, zero or not)."""
        counts: dict[str, int] = dict.fromkeys(SEVERITIES, 0)
        for finding in self.findings:
            counts[finding.severity] += 1
        return counts

    @property
    def ok(self) -> bool:
        """True when nothing is broken (no error; warnings allowed)."""
        return not any(f.severity == "error" for f in self.findings)

    def section(self, name: str) -> list[Finding]:
        """The findings of one section, in the order found."""
        return [f for f in self.findings if f.section == name]

    def codes(self) -> list[str]:
        """The codes of every finding, in order (handy in tests and scripts)."""
        return [f.code for f in self.findings]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``mcpctl doctor --json`` data)."""
        return {
            "config": str(self.config),
            "config_origin": self.config_origin,
            "ok": self.ok,
            "counts": self.counts,
            "findings": [f.to_dict() for f in self.findings],
        }


def name_servers(servers: Sequence[str], limit: int = 5) -> str:
    """``a, b and c`` -- or ``a, b, c, d, e and 7 more`` past ``limit`` names."""
    names = list(servers)
    if len(names) > limit:
        return f"{', '.join(names[:limit])} and {len(names) - limit} more"
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"
