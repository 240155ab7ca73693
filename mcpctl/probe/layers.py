"""One server checked layer by layer, for ``mcpctl doctor NAME``: the network layers of a
remote server (DNS, TCP, TLS, the first HTTP answer, its OAuth metadata) and the start of a
stdio server handed to the usual probe.

Each function answers with what it saw, or raises :class:`LayerFailed` with one line of
message and a fix; the verdicts are :mod:`mcpctl.doctor.server`'s. Nothing here prints, and
no secret (a header's value, a token) is ever part of what is returned.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from mcpctl.probe.failures import one_line

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
    "resolve_host",
    "run_stdio",
]

#: The body of the ``initialize`` request the HTTP check sends (any era answers it somehow).
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "mcpctl-doctor", "version": "1"},
    },
}
_MAX_METADATA = 256 * 1024


class LayerFailed(Exception):
    """A layer that does not work: ``message`` says what was seen, ``fix`` what to do."""

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix


# --- DNS and TCP ---------------------------------------------------------------------------


def host_and_port(url: str) -> tuple[str, int]:
    """The host and port a URL reaches (the scheme's default port when none is written)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    return host, port


def is_address(host: str) -> bool:
    """Whether ``host`` is an IP address (nothing to resolve)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def resolve_host(host: str, port: int, timeout: float) -> list[str]:
    """The addresses ``host`` resolves to, in the resolver's order.

    Raises:
        LayerFailed: the name does not resolve, or not within ``timeout``.
    """
    import anyio

    if not host:
        raise LayerFailed("the URL has no host", "fix the entry's url")

    def lookup() -> list[str]:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        return list(dict.fromkeys(str(info[4][0]) for info in infos))

    try:
        with anyio.fail_after(timeout):
            found = await anyio.to_thread.run_sync(lookup, abandon_on_cancel=True)
    except TimeoutError:
        raise LayerFailed(
            f"{host} did not resolve within {timeout:g} s", "check the network and DNS settings"
        ) from None
    except OSError as exc:
        raise LayerFailed(
            one_line(f"{host} does not resolve: {exc.strerror or exc}"),
            "check the host name in the entry's url, and the network",
        ) from None
    if not found:
        raise LayerFailed(f"{host} resolves to no address", "check the host name")
    return found


async def connect_tcp(addresses: list[str], port: int, timeout: float) -> str:
    """The first address of ``addresses`` that accepts a TCP connection on ``port``.

    Raises:
        LayerFailed: none does (the last failure is said), or not within ``timeout``.
    """
    import anyio

    last: str = "no address"
    for address in addresses:
        try:
            with anyio.fail_after(timeout):
                stream = await anyio.connect_tcp(address, port)
        except TimeoutError:
            last = f"{address} port {port}: no answer within {timeout:g} s"
            continue
        except OSError as exc:
            cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
            said = "connection refused" if isinstance(cause, ConnectionRefusedError) else None
            last = f"{address} port {port}: {said or cause.strerror or cause}"
            continue
        await stream.aclose()
        return address
    raise LayerFailed(
        one_line(f"cannot connect: {last}"),
        "is the server running and listening on that port, and is the URL right?",
    )


# --- TLS -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TlsReport:
    """A verified TLS handshake: the certificate's subject, issuer and expiry."""

    version: str | None
    subject: str | None
    issuer: str | None
    not_after: str | None
    days_left: int | None


def _name(rdns: Any) -> str | None:
    for rdn in rdns or ():
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None


_TLS_FIXES = {
    "self-signed": "the server's certificate is self-signed: give it one from a trusted CA, or "
    "trust it on this machine (SSL_CERT_FILE=/path/to/ca.pem)",
    "expired": "the server's certificate has expired: renew it on the server",
    "not yet valid": "the server's certificate is not valid yet: check the clocks of this "
    "machine and of the server",
    "hostname": "the certificate is for another name: use the host name it was issued for in "
    "the entry's url, or fix the server's certificate",
    "unknown issuer": "the certificate's issuer is not trusted here: install the CA "
    "(SSL_CERT_FILE=/path/to/ca.pem), or give the server a certificate from a public CA",
}


def _tls_problem(exc: ssl.SSLCertVerificationError) -> tuple[str, str]:
    text = str(getattr(exc, "verify_message", "") or exc)
    lowered = text.lower()
    if "self-signed" in lowered or "self signed" in lowered:
        kind = "self-signed"
    elif "expired" in lowered:
        kind = "expired"
    elif "not yet valid" in lowered:
        kind = "not yet valid"
    elif "hostname" in lowered or "ip address mismatch" in lowered:
        kind = "hostname"
    else:
        kind = "unknown issuer"
    return one_line(f"the certificate is not trusted: {text}"), _TLS_FIXES[kind]


async def check_tls(host: str, port: int, address: str, timeout: float) -> TlsReport:
    """A TLS handshake with ``address`` for ``host``, the certificate verified against the
    system's CAs (``SSL_CERT_FILE``/``SSL_CERT_DIR`` are honoured) and the host name.

    Raises:
        LayerFailed: the certificate is self-signed, expired, for another name, from an
        unknown issuer, or the handshake fails.
    """
    import anyio

    def handshake() -> TlsReport:
        context = ssl.create_default_context()
        with (
            socket.create_connection((address, port), timeout=timeout) as raw,
            context.wrap_socket(raw, server_hostname=host) as tls,
        ):
            cert = tls.getpeercert() or {}
            version = tls.version()
        not_after = cert.get("notAfter")
        expires = days = None
        if isinstance(not_after, str):
            when = datetime.fromtimestamp(ssl.cert_time_to_seconds(not_after), UTC)
            expires = when.isoformat(timespec="seconds")
            days = int((when.timestamp() - time.time()) // 86400)
        return TlsReport(
            version, _name(cert.get("subject")), _name(cert.get("issuer")), expires, days
        )

    try:
        with anyio.fail_after(timeout + 1):
            return await anyio.to_thread.run_sync(handshake, abandon_on_cancel=True)
    except ssl.SSLCertVerificationError as exc:
        message, fix = _tls_problem(exc)
        raise LayerFailed(message, fix) from None
    except ssl.SSLError as exc:
        raise LayerFailed(
            one_line(f"the TLS handshake failed: {exc.reason or exc}"),
            "does the server speak HTTPS on that port? (http:// instead?)",
        ) from None
    except TimeoutError:
        raise LayerFailed(
            f"no TLS handshake within {timeout:g} s", "does the server speak HTTPS on that port?"
        ) from None
    except OSError as exc:
        raise LayerFailed(one_line(f"the TLS connection failed: {exc.strerror or exc}")) from None


# --- HTTP and OAuth metadata ---------------------------------------------------------------


@dataclass(frozen=True)
class HttpAnswer:
    """The first answer of the server: its status, content type, and the scheme of its
    ``WWW-Authenticate`` challenge (with the protected-resource metadata URL it names)."""

    method: str
    status: int
    content_type: str
    challenge: str | None = None
    resource_metadata: str | None = None


def _challenge(header: str) -> tuple[str | None, str | None]:
    import re

    header = header.strip()
    if not header:
        return None, None
    scheme = one_line(header.split()[0].rstrip(","), 40)
    found = re.search(r'resource_metadata\s*=\s*"?([^",\s]+)"?', header)
    return scheme, (found.group(1) if found else None)


async def check_http(resolved: ResolvedEntry, transport: str | None, timeout: float) -> HttpAnswer:
    """What the endpoint answers to the first request a client sends: a POST of
    ``initialize`` (streamable HTTP), or a GET of the event stream (SSE) -- with the entry's
    headers, and its credentials unless it signs in with OAuth (the sign-in is the next
    layer's). Only the status line and headers are read.

    Raises:
        LayerFailed: no HTTP answer (the connection failed or timed out).
    """
    import anyio
    import httpx2

    from mcpctl.probe.streams import _auth_headers

    entry = resolved.entry
    assert entry.url is not None
    if entry.auth is not None and entry.auth.type == "oauth":
        headers, auth = dict(entry.headers), None
    else:
        headers, auth = _auth_headers(entry, resolved.name)
    sse = transport == "sse"
    try:
        with anyio.fail_after(timeout):
            async with httpx2.AsyncClient(headers=headers, auth=auth, timeout=timeout) as client:
                if sse:
                    request = client.build_request(
                        "GET", entry.url, headers={"Accept": "text/event-stream"}
                    )
                else:
                    request = client.build_request(
                        "POST",
                        entry.url,
                        json=_INITIALIZE,
                        headers={
                            "Accept": "application/json, text/event-stream",
                            "MCP-Protocol-Version": "2025-11-25",
                        },
                    )
                response = await client.send(request, stream=True)
                await response.aclose()
    except TimeoutError:
        raise LayerFailed(
            f"no HTTP answer within {timeout:g} s",
            "the server accepted the connection but did not answer",
        ) from None
    except httpx2.HTTPError as exc:
        raise LayerFailed(
            resolved.redact(one_line(f"no HTTP answer: {type(exc).__name__}: {exc}")),
            "does the server speak HTTP on that port?",
        ) from None
    scheme, metadata = _challenge(response.headers.get("www-authenticate", ""))
    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return HttpAnswer(request.method, response.status_code, ctype, scheme, metadata)


@dataclass
class AuthMetadata:
    """The OAuth metadata of a protected server: where its protected-resource metadata is,
    which authorization server it names, and whether that one publishes its own."""

    resource_url: str | None = None
    resource: str | None = None
    authorization_servers: list[str] = field(default_factory=list)
    issuer: str | None = None
    issuer_metadata_url: str | None = None
    problems: list[str] = field(default_factory=list)


def _well_known(url: str, suffix: str) -> list[str]:
    """``{origin}/.well-known/{suffix}{path}`` then ``{origin}/.well-known/{suffix}``."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    first = f"{origin}/.well-known/{suffix}{path}"
    return list(dict.fromkeys([first, f"{origin}/.well-known/{suffix}"]))


async def _get_json(client: Any, url: str) -> dict[str, Any] | None:
    try:
        response = await client.get(url, headers={"Accept": "application/json"})
    except Exception:  # a metadata URL that fails is one that is not there
        return None
    if response.status_code != 200 or len(response.content) > _MAX_METADATA:
        return None
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


async def auth_metadata(url: str, resource_metadata: str | None, timeout: float) -> AuthMetadata:
    """The protected-resource metadata of ``url`` (the URL its challenge named, else the
    well-known ones) and the metadata of the first authorization server it names. Never
    raises: what is missing is in ``problems``."""
    import anyio

    from mcpctl.httpclient import BoundedClient

    found = AuthMetadata()
    candidates = [resource_metadata] if resource_metadata else []
    candidates += _well_known(url, "oauth-protected-resource")
    try:
        with anyio.fail_after(timeout):
            async with BoundedClient(limit=timeout, max_bytes=_MAX_METADATA) as client:
                for candidate in dict.fromkeys(candidates):
                    data = await _get_json(client, urljoin(url, candidate))
                    if data is not None:
                        found.resource_url = urljoin(url, candidate)
                        found.resource = str(data.get("resource") or "") or None
                        servers = data.get("authorization_servers")
                        if isinstance(servers, list):
                            found.authorization_servers = [str(s) for s in servers if s]
                        break
                else:
                    found.problems.append("no protected-resource metadata")
                    return found
                if not found.authorization_servers:
                    found.problems.append(
                        "its protected-resource metadata names no authorization server"
                    )
                    return found
                issuer = found.authorization_servers[0]
                for candidate in (
                    *_well_known(issuer, "oauth-authorization-server"),
                    *_well_known(issuer, "openid-configuration"),
                ):
                    data = await _get_json(client, candidate)
                    if data is not None:
                        found.issuer = str(data.get("issuer") or issuer)
                        found.issuer_metadata_url = candidate
                        break
                else:
                    found.problems.append(
                        f"the authorization server {issuer} publishes no metadata"
                    )
    except TimeoutError:
        found.problems.append(f"the metadata did not arrive within {timeout:g} s")
    return found


# --- stdio ---------------------------------------------------------------------------------


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
