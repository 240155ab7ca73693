"""Where a rendered proxy listens: ``HOST:PORT`` read and checked, and whether it is private.

Only targets whose file holds the address the proxy listens on take one (``listens``: the Go
``mcp-proxy``); the others are told where their address goes instead (``listen_hint``).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Protocol

from mcpctl.errors import UsageError

__all__ = ["ListenAddress", "listen_for", "parse_listen"]

# A host name: dot-separated labels of letters, digits and inner hyphens (RFC 1123).
HOSTNAME_RE = re.compile(
    r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?"
)
BRACKETED_RE = re.compile(r"\[(?P<host>[^\]]*)\]:(?P<port>[^:]*)")
FORM = "HOST:PORT (127.0.0.1:9090, [::1]:9090, or :9090 for every interface)"


@dataclass(frozen=True)
class ListenAddress:
    """A listen address: ``host`` (``""``: every interface) and ``port``."""

    host: str
    port: int

    @property
    def ipv6(self) -> bool:
        """Whether the host is an IPv6 address (written in brackets)."""
        return ":" in self.host

    @property
    def addr(self) -> str:
        """The Go form: ``127.0.0.1:9090``, ``[::1]:9090``, ``:9090``."""
        host = f"[{self.host}]" if self.ipv6 else self.host
        return f"{host}:{self.port}"

    @property
    def every_interface(self) -> bool:
        """Whether it listens on every interface (no host, ``0.0.0.0`` or ``::``)."""
        return self.host in ("", "0.0.0.0", "::")  # noqa: S104 (a check, not a bind)

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` to reach it on this machine (loopback for every interface)."""
        if self.every_interface:
            host = "[::1]" if self.host == "::" else "127.0.0.1"
        else:
            host = f"[{self.host}]" if self.ipv6 else self.host
        return f"http://{host}:{self.port}"

    @property
    def loopback(self) -> bool:
        """Whether only this machine can reach it (a loopback address, or ``localhost``)."""
        name = self.host.lower().rstrip(".")
        if name == "localhost" or name.endswith(".localhost"):
            return True
        try:
            return ipaddress.ip_address(self.host.partition("%")[0]).is_loopback
        except ValueError:
            return False


def parse_listen(text: str) -> ListenAddress:
    """``HOST:PORT`` as a :class:`ListenAddress`: an IPv4 address, a host name or an IPv6
    address in brackets (``[::1]:9090``), or nothing before the colon (every interface);
    a port from 1 to 65535.

    Raises:
        UsageError: ``text`` is not of that form.
    """
    value = text.strip()
    bracketed = BRACKETED_RE.fullmatch(value)
    if bracketed is not None:
        host, port = bracketed["host"], bracketed["port"]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise UsageError(f"listen address {text!r}: {host!r} is not an IPv6 address",
                             hint=f"give {FORM}") from None  # fmt: skip
    elif value.startswith("["):
        raise UsageError(f"listen address {text!r} is not [IPV6]:PORT", hint=f"give {FORM}")
    else:
        host, colon, port = value.rpartition(":")
        if not colon:
            raise UsageError(f"listen address {text!r} has no port", hint=f"give {FORM}")
        if ":" in host:
            raise UsageError(f"listen address {text!r}: an IPv6 address goes in brackets",
                             hint=f"give [{host}]:{port}")  # fmt: skip
        if host and not _ipv4_or_name(host):
            raise UsageError(f"listen address {text!r}: {host!r} is neither an IP address "
                             "nor a host name", hint=f"give {FORM}")  # fmt: skip
    if not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        raise UsageError(f"listen address {text!r}: the port must be a number from 1 to 65535",
                         hint=f"give {FORM}")  # fmt: skip
    return ListenAddress(host, int(port))


class _Target(Protocol):
    """What :func:`listen_for` reads of a :class:`~mcpctl.render.base.Target` (whose module
    imports this one: naming it here would make the two import each other)."""

    @property
    def name(self) -> str: ...

    @property
    def family(self) -> str: ...


def listen_for(target: _Target, text: str) -> ListenAddress:
    """``text`` read as where ``target``'s proxy listens.

    Raises:
        UsageError: ``target``'s file holds no listen address (the hint says where it goes),
            or ``text`` is not ``HOST:PORT``.
    """
    if not getattr(target, "listens", False):
        why = {
            "proxy": "its file holds no listen address",
            "client": "a client does not listen",
            "cluster": "the cluster decides where its servers listen",
        }[target.family]
        hint = getattr(target, "listen_hint", None) or "--listen is for the mcp-proxy target"
        raise UsageError(f"--listen does not apply to {target.name}: {why}", hint=hint)
    return parse_listen(text)


def _ipv4_or_name(host: str) -> bool:
    if host.replace(".", "").isdigit():  # 999.1.1.1 is a bad address, not a name
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return False
        return True
    return HOSTNAME_RE.fullmatch(host) is not None
