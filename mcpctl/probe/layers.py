"""One server checked layer by layer, for ``mcpctl doctor NAME``: the network layers of a
remote server (DNS, TCP, TLS, the first HTTP answer, its OAuth metadata) and the start of a
stdio server handed to the usual probe.

Each function answers with what it saw, or raises :class:`LayerFailed` with one line of
message and a fix; the verdicts are :mod:`mcpctl.doctor.server`'s. Nothing here prints, and
no secret (a header's value, a token) is ever part of what is returned.

The network layers are :mod:`mcpctl.probe.netlayers`, the HTTP ones
:mod:`mcpctl.probe.httplayers`; this module starts a stdio server and re-exports their names.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcpctl.probe.httplayers import AuthMetadata, HttpAnswer, auth_metadata, check_http
from mcpctl.probe.netlayers import (
    LayerFailed,
    TlsReport,
    check_tls,
    connect_tcp,
    host_and_port,
    is_address,
    resolve_host,
)

if TYPE_CHECKING:
    from mcpctl.config.model import ProtocolMode, ServerEntry
    from mcpctl.config.placeholders import ResolvedEntry, SecretSource
    from mcpctl.probe.eras import EraMemory
    from mcpctl.probe.health import ProbeResult
    from mcpctl.probe.spawn import StdioDiagnostics

__all__ = [
    "AuthMetadata",
    "HttpAnswer",
    "LayerFailed",
    "StdioRun",
    "TlsReport",
    "auth_metadata",
    "check_http",
    "check_tls",
    "connect_tcp",
    "host_and_port",
    "is_address",
    "resolve_host",
    "run_stdio",
]


@dataclass
class StdioRun:
    """A stdio server started, then probed as ``mcpctl health`` probes it."""

    spawn_ms: float
    result: ProbeResult
    diagnostics: StdioDiagnostics
    pid: int | None = None


async def run_stdio(
    name: str,
    entry: ServerEntry,
    resolved: ResolvedEntry,
    *,
    timeout: float,
    secrets: SecretSource | None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
) -> StdioRun:
    """Start the server (before the MCP SDK is imported, so that it boots meanwhile), then
    probe it. Never raises for a failing server.

    Raises:
        LayerFailed: the process cannot be started at all (the OS refused it).
    """
    from mcpctl.probe.spawn import StdioDiagnostics, spawn_error, spawn_server

    started = time.perf_counter()
    try:
        process = await spawn_server(resolved.entry)
    except OSError as exc:
        error = spawn_error(exc, resolved.entry)
        raise LayerFailed(resolved.redact(error.message), error.hint) from None
    spawn_ms = (time.perf_counter() - started) * 1000
    # The probe's modules and the SDK load while the server boots.
    from mcpctl.probe.health import Speaking, _probe

    diag = StdioDiagnostics()
    diag.pid = process.pid
    diag.started_at = started  # the probe's latency, and so a failed spawn step, start here
    speaking = Speaking(protocol, eras)
    result = await _probe(
        name,
        entry,
        "external",
        timeout,
        "error",
        secrets,
        speaking,
        (process, resolved),
        None,
        diag,
    )
    return StdioRun(spawn_ms, result, diag, process.pid)
