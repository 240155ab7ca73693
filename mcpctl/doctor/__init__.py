"""Doctor: what mcpctl and the configured servers need, checked without starting a server.

    from mcpctl.doctor import run_doctor

    report = run_doctor()            # the config mcpctl would use here
    for finding in report.findings:  # code, severity (ok/info/warning/error), message, fix
        ...
    report.ok                        # False when something is broken (an error finding)

* :mod:`~mcpctl.doctor.findings` -- findings and the report;
* :mod:`~mcpctl.doctor.config` -- which config file, and whether it validates;
* :mod:`~mcpctl.doctor.secrets` -- the keyring, and where each placeholder resolves from;
* :mod:`~mcpctl.doctor.oauth` -- the OAuth sign-ins;
* :mod:`~mcpctl.doctor.runtimes` -- the programs stdio servers run on, installed or not, and
  their versions (the table of runtimes itself is :mod:`mcpctl.config.runtimes`, which
  ``validate`` shares for its install hints);
* :mod:`~mcpctl.doctor.caches` -- the discovery cache and the snapshot;
* :mod:`~mcpctl.doctor.run` -- all of them, in order;
* :mod:`~mcpctl.doctor.server` -- one server diagnosed layer by layer (``mcpctl doctor
  NAME``): :func:`diagnose_server`; :mod:`~mcpctl.doctor.steps` -- what its steps report;
  :mod:`~mcpctl.doctor.commonsteps`, :mod:`~mcpctl.doctor.stdiosteps`,
  :mod:`~mcpctl.doctor.remotesteps` -- the steps; :mod:`~mcpctl.doctor.packages` -- whether
  the package or image of an npx/uvx/docker command is cached.

Names are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpctl._lazy import lazy_exports

if TYPE_CHECKING:
    from mcpctl.doctor.findings import SECTIONS, DoctorReport, Finding, Severity
    from mcpctl.doctor.run import run_doctor
    from mcpctl.doctor.runtimes import VersionLookup
    from mcpctl.doctor.server import diagnose_server
    from mcpctl.doctor.steps import DoctorStep, ServerDiagnosis

__all__ = [
    "SECTIONS",
    "DoctorReport",
    "DoctorStep",
    "Finding",
    "ServerDiagnosis",
    "Severity",
    "VersionLookup",
    "diagnose_server",
    "run_doctor",
]

_LAZY = {
    "SECTIONS": "mcpctl.doctor.findings",
    "DoctorReport": "mcpctl.doctor.findings",
    "Finding": "mcpctl.doctor.findings",
    "Severity": "mcpctl.doctor.findings",
    "VersionLookup": "mcpctl.doctor.runtimes",
    "run_doctor": "mcpctl.doctor.run",
    "DoctorStep": "mcpctl.doctor.steps",
    "ServerDiagnosis": "mcpctl.doctor.steps",
    "diagnose_server": "mcpctl.doctor.server",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
