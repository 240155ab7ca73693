"""The network layers of a remote server, checked one by one for ``mcpctl doctor NAME``: the
host name resolved, a TCP connection, the TLS certificate; and :class:`LayerFailed`, what
every layer check raises (one line of message and a fix).

Nothing here prints, and no secret is ever part of what is returned.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from mcpctl.probe.failures import one_line

__all__ = [
    "LayerFailed",
    "TlsReport",
    "check_tls",
    "connect_tcp",
    "host_and_port",
    "is_address",
    "resolve_host",
]


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
