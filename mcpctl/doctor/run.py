"""One run of every check, in the order the report shows them."""

from __future__ import annotations

import os

from mcpctl.auth.secrets import SecretStore
from mcpctl.config.trust import TrustStore
from mcpctl.doctor.caches import check_registries, check_snapshot
from mcpctl.doctor.config import check_config, load_entries, locate_config, trust_findings
from mcpctl.doctor.findings import SECTIONS, DoctorReport
from mcpctl.doctor.oauth import check_oauth, oauth_servers
from mcpctl.doctor.runtimes import RuntimeCheck, VersionLookup
from mcpctl.doctor.secrets import check_placeholders, keyring_finding, probe_keyring
from mcpctl.paths import Paths

__all__ = ["run_doctor"]


def run_doctor(
    config: str | os.PathLike[str] | None = None,
    *,
    store: SecretStore | None = None,
    lookup: VersionLookup | None = None,
    now: float | None = None,
) -> DoctorReport:
    """Check what mcpctl and the configured servers need, without starting any server.

    ``config`` is the ``--config`` value (default: ``MCPCTL_CONFIG``, the nearest file
    upwards, the user config dir); ``store`` the keyring (default: the OS's); ``lookup``
    the ``--version`` lookups (one per program per run); ``now`` the time ages are computed
    at. Never raises for what it finds: a broken file, keyring or cache is a finding.
    """
    choice = locate_config(config)
    entries = load_entries(choice)
    paths = Paths.from_env(config)
    trust = TrustStore.from_paths(paths).check(choice.path, entries)
    # The runtimes' --version lookups run while the file is validated and the keyring read;
    # none of a program that only a server waiting for approval names.
    runtimes = RuntimeCheck(entries, choice.path.parent, lookup, untrusted=trust.waiting())
    try:
        findings = check_config(choice) + trust_findings(trust)
        keyring = probe_keyring(store)
        placeholders, needs_keyring = check_placeholders(entries, keyring)
        oauth = check_oauth(entries, keyring, now)
        oauth_needs = oauth_servers(entries) if not keyring.usable else []
        findings.append(keyring_finding(keyring, needs_keyring, oauth_needs))
        findings += placeholders
        findings += runtimes.findings()
    finally:
        runtimes.lookup.finish()
    findings += oauth
    findings += check_registries(paths)
    findings += check_snapshot(paths, now)
    order = list(SECTIONS)
    findings.sort(key=lambda f: order.index(f.section))
    return DoctorReport(choice.path, choice.origin, findings)
