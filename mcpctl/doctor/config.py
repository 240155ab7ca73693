"""The config file: which one is in use, how it was chosen, and whether it validates."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mcpctl.config.model import ServerEntry
from mcpctl.config.trustview import FileTrust
from mcpctl.doctor.findings import Finding, Severity
from mcpctl.paths import Paths, find_config
from mcpctl.text import plural

__all__ = ["ConfigChoice", "check_config", "load_entries", "locate_config", "trust_findings"]

VALIDATE_FIX = "run 'mcpctl validate' to see each problem with its line and a hint"

_ORIGINS = {
    "--config": "chosen with --config",
    "MCPCTL_CONFIG": "chosen by MCPCTL_CONFIG",
    "nearest": "the nearest external-mcps.json from the current directory upwards",
    "user_config_dir": "in the user config dir (no external-mcps.json from the current "
    "directory upwards)",
}


@dataclass(frozen=True)
class ConfigChoice:
    """The config file in use and how it was chosen (``origin``: ``--config``,
    ``MCPCTL_CONFIG``, ``nearest`` or ``user_config_dir``)."""

    path: Path
    origin: str

    @property
    def explicit(self) -> bool:
        """Whether the file was named (then it must exist)."""
        return self.origin in ("--config", "MCPCTL_CONFIG")

    @property
    def described(self) -> str:
        """How it was chosen, in words."""
        return _ORIGINS[self.origin]


def locate_config(config: str | os.PathLike[str] | None = None) -> ConfigChoice:
    """The config file :class:`~mcpctl.paths.Paths` resolves (``config``: the ``--config``
    value), and which of its rules chose it."""
    path = Paths.from_env(config).config.absolute()
    if config is not None:
        origin = "--config"
    elif os.environ.get("MCPCTL_CONFIG"):
        origin = "MCPCTL_CONFIG"
    elif find_config() is not None:
        origin = "nearest"
    else:
        origin = "user_config_dir"
    return ConfigChoice(path, origin)


def load_entries(choice: ConfigChoice) -> dict[str, ServerEntry]:
    """The usable entries of the file, read leniently (none when it is missing or broken)."""
    from mcpctl.config.loader import load_config

    return load_config(choice.path).config.entries if choice.path.is_file() else {}


def check_config(choice: ConfigChoice) -> list[Finding]:
    """Findings about the file: which one, how it was chosen, whether it validates."""
    from mcpctl.config.validate import validate_config

    path = choice.path
    severity: Severity
    details = {"path": str(path), "origin": choice.origin}
    if not path.exists():
        if choice.explicit:
            return [
                Finding(
                    "config",
                    "config_not_found",
                    "error",
                    f"{path} does not exist ({choice.described})",
                    fix="check the path, or create the file with 'mcpctl add NAME -- COMMAND'",
                    details=details,
                )
            ]
        return [
            Finding(
                "config",
                "config_not_created",
                "info",
                f"no config file yet: {path} ({choice.described})",
                fix="add a server with 'mcpctl add NAME -- COMMAND', or bring yours in with "
                "'mcpctl import'",
                details=details,
            )
        ]
    findings = [
        Finding("config", "config_file", "ok", f"{path} ({choice.described})", details=details)
    ]
    report = validate_config(path)
    errors, warnings, servers = report.error_count, report.warning_count, report.servers
    counts = {"errors": errors, "warnings": warnings, "servers": servers}
    # The kinds of problem, for a first idea of what validate will say.
    kinds = list(dict.fromkeys(p.code for p in report.problems))
    shown = ", ".join(kinds[:3]) + (", ..." if len(kinds) > 3 else "")
    in_servers = f"in {plural(servers, 'server')}: {shown}"
    if errors:
        message = f"{plural(errors, 'error')} and {plural(warnings, 'warning')} {in_servers}"
        code, severity, fix = "config_invalid", "error", VALIDATE_FIX
    elif warnings:
        message = f"valid, with {plural(warnings, 'warning')} {in_servers}"
        code, severity, fix = "config_warnings", "warning", VALIDATE_FIX
    else:
        message, code, severity, fix = (
            f"valid ({plural(servers, 'server')})",
            "config_valid",
            "ok",
            None,
        )
    findings.append(Finding("config", code, severity, message, fix=fix, details=counts))
    return findings


def trust_findings(trust: FileTrust) -> list[Finding]:
    """A warning when servers of the file wait for approval (nothing of them is started)."""
    waiting = trust.waiting()
    if not waiting:
        return []
    return [
        Finding(
            "config",
            "config_untrusted",
            "warning",
            f"not trusted: {plural(len(waiting), 'server')} of it "
            f"{'waits' if len(waiting) == 1 else 'wait'} for approval "
            f"({', '.join(waiting[:5])}{', ...' if len(waiting) > 5 else ''}); none of them "
            "is started, connected to or given a secret until then",
            fix=f"review {'it' if len(waiting) == 1 else 'them'} with '{trust.command()}'",
            servers=tuple(waiting),
            details={"path": str(trust.path), "waiting": len(waiting)},
        )
    ]
