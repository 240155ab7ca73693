"""Which protocol era a connection speaks, decided once per connection.

As the 2026-07-28 revision's versioning page says: a client that speaks both eras first sends
``server/discover`` (stateless, the version in ``_meta``); any error that is not positive
evidence of a modern server -- method not found, an HTTP 400 from a session-bound server, a
result naming no modern version, no answer in time -- means the handshake era, and
``initialize`` follows on the same connection. An unsupported-version error (-32022) with a
``supported`` list is such evidence: the exchange is retried at a version both sides speak
and never falls back. The SDK's session does the exchanges (``discover``, ``initialize``,
``adopt``); this module only decides which to make, with a deadline on discovery so that a
server that stays silent on it costs a few seconds once (the era is then remembered:
:class:`mcpctl.probe.eras.EraMemory`), and turns a mismatch into one clear error (quoting
little of what the server said: :func:`mcpctl.probe.eras.describe_versions`). A server that
claimed the stateless era and then refuses the first request made that way gets the
handshake instead (:func:`handshake_instead`, from :meth:`mcpctl.probe.connect.Connection.
request`).
"""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError  # a discovery result that does not parse

from mcpctl.config.model import ProtocolMode
from mcpctl.errors import ProbeFailed
from mcpctl.probe.eras import Era, describe_versions, kept_versions
from mcpctl.probe.failures import one_line
from mcpctl.sdk import ClientSession, MCPError

__all__ = [
    "CLIENT_HANDSHAKE_VERSIONS",
    "CLIENT_MODERN_VERSIONS",
    "discover_timeout",
    "handshake_instead",
    "negotiate",
    "sse_mismatch",
]

CLIENT_HANDSHAKE_VERSIONS: tuple[str, ...] = tuple(HANDSHAKE_PROTOCOL_VERSIONS)
CLIENT_MODERN_VERSIONS: tuple[str, ...] = tuple(MODERN_PROTOCOL_VERSIONS)
# Discovery may take this long at most before the handshake is tried: the SDK's own bound.
MAX_DISCOVER_SECONDS = 10.0


def discover_timeout(timeout: float) -> float:
    """How long ``auto`` waits for ``server/discover`` within a connection's ``timeout``:
    a third of it, between 1 and 10 s, so the handshake that follows has time too."""
    return max(1.0, min(MAX_DISCOVER_SECONDS, timeout / 3))


async def negotiate(
    session: ClientSession,
    *,
    name: str,
    mode: ProtocolMode,
    transport: str,
    timeout: float,
    remembered: Era | None = None,
    pinned_by: str = "--protocol",
) -> Era:
    """Settle the era of ``session`` (entered, nothing sent yet) and return it.

    ``remembered`` (with ``mode="auto"``) is tried first, without discovery when it is the
    handshake; if it fails with a protocol error, the era is detected afresh, once.
    ``pinned_by`` names what pinned a ``modern``/``legacy`` mode, for the mismatch message.

    Raises:
        ProbeFailed: ``protocol_mismatch`` -- the server does not speak the pinned era, or
            no version both sides speak.
        MCPError: the server answered the exchange with another error.
    """
    if transport == "sse":  # the HTTP+SSE transport predates the stateless revisions
        if mode == "modern":
            raise sse_mismatch(name, pinned_by)
        return await _legacy(session, name, "transport" if mode == "auto" else "pinned", pinned_by)
    if mode == "legacy":
        return await _legacy(session, name, "pinned", pinned_by)
    if mode == "modern":
        return await _modern(session, name, timeout, "pinned", pinned_by)
    if remembered is not None:
        try:
            if remembered.name == "legacy":
                return await _legacy(session, name, "remembered", pinned_by)
            return await _modern(session, name, discover_timeout(timeout), "remembered", pinned_by)
        except (MCPError, ProbeFailed) as exc:
            if isinstance(exc, ProbeFailed) and exc.reason != "protocol_mismatch":
                raise
            # The server changed since: detect again (once), without repeating the exchange
            # that just failed.
            return await _auto(session, name, timeout, discover=remembered.name == "legacy")
    return await _auto(session, name, timeout)


def sse_mismatch(name: str, pinned_by: str) -> ProbeFailed:
    """The error for the stateless era asked of the SSE transport, which cannot speak it."""
    return ProbeFailed(
        name, "protocol_mismatch",
        "the sse transport speaks only the handshake revisions "
        f"({describe_versions(CLIENT_HANDSHAKE_VERSIONS)}); {pinned_by} asks for the "
        f"stateless ones ({describe_versions(CLIENT_MODERN_VERSIONS)})",
        hint=_fix(pinned_by, "legacy"),
    )  # fmt: skip


async def _auto(session: ClientSession, name: str, timeout: float, *, discover: bool = True) -> Era:
    supported: tuple[str, ...] = ()
    if discover:
        try:
            with anyio.fail_after(discover_timeout(timeout)):
                result = await session.discover()
            return _modern_era(session, result, "discovered")
        except MCPError as exc:
            named = _supported(exc)
            if named is not None:
                supported = named
                if not any(v in CLIENT_HANDSHAKE_VERSIONS for v in named):
                    raise _no_common_version(name, named) from None
        except (TimeoutError, RuntimeError, ValidationError):
            pass  # silent, no modern version in common, or not a discover result: handshake
    try:
        initialized = await session.initialize()
    except MCPError as exc:
        named = _supported(exc)
        if named is None or not any(v in CLIENT_MODERN_VERSIONS for v in named):
            raise
        # A discovery that answered after its deadline settled the connection as modern
        # before the handshake arrived: ask again, at a version both speak.
        with anyio.fail_after(timeout):
            result = await session.discover()
        return _modern_era(session, result, "discovered")
    except RuntimeError as exc:  # a handshake answer at a version of no handshake revision
        raise ProbeFailed(name, "protocol_mismatch", one_line(str(exc), 120)) from None
    return Era("legacy", str(initialized.protocol_version), kept_versions(supported), "fallback")


async def _legacy(session: ClientSession, name: str, detected: str, pinned_by: str) -> Era:
    try:
        result = await session.initialize()
    except MCPError as exc:
        named = _supported(exc)
        if named is None:
            raise
        if not any(v in CLIENT_MODERN_VERSIONS for v in named):
            raise _no_common_version(name, named) from None
        raise ProbeFailed(
            name, "protocol_mismatch",
            f"the server speaks only {describe_versions(named)}; {_asked(detected, pinned_by)} "
            f"the handshake revisions ({describe_versions(CLIENT_HANDSHAKE_VERSIONS)})",
            hint=_fix(pinned_by, "modern") if detected == "pinned" else None,
        ) from None  # fmt: skip
    except RuntimeError as exc:
        raise ProbeFailed(name, "protocol_mismatch", one_line(str(exc), 120)) from None
    return Era("legacy", str(result.protocol_version), (), detected)


async def _modern(
    session: ClientSession, name: str, seconds: float, detected: str, pinned_by: str
) -> Era:
    asked = (
        f"{_asked(detected, pinned_by)} the stateless revisions "
        f"({describe_versions(CLIENT_MODERN_VERSIONS)})"
    )
    hint = _fix(pinned_by, "legacy") if detected == "pinned" else None
    try:
        with anyio.fail_after(seconds):
            result = await session.discover()
    except MCPError as exc:
        named = _supported(exc)
        said = (
            f"the server speaks only {describe_versions(named)}"
            if named is not None
            else await _handshake_only(session, exc, seconds)
        )
        raise ProbeFailed(name, "protocol_mismatch", f"{said}; {asked}", hint=hint) from None
    except TimeoutError:
        raise ProbeFailed(
            name, "protocol_mismatch",
            f"the server did not answer server/discover within {seconds:g} s; {asked}",
            hint=hint,
        ) from None  # fmt: skip
    except RuntimeError as exc:  # the discover result names no version in common
        # (the session keeps no result it could not adopt: its error names the versions)
        raise ProbeFailed(name, "protocol_mismatch", f"{one_line(str(exc), 160)}; {asked}",
                          hint=hint) from None  # fmt: skip
    return _modern_era(session, result, detected)


def _modern_era(session: ClientSession, result: types.DiscoverResult, detected: str) -> Era:
    version = session.protocol_version or result.supported_versions[-1]
    return Era("modern", version, kept_versions(result.supported_versions), detected)


def _supported(exc: MCPError) -> tuple[str, ...] | None:
    """The versions an unsupported-version error names, or ``None`` for any other error.

    Read leniently: a server that names its versions but not the one asked for (``requested``
    is required by the schema, and left out by real servers) still names them."""
    if exc.code != types.UNSUPPORTED_PROTOCOL_VERSION:
        return None
    data = exc.error.data
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return None
    return tuple(v for v in supported if isinstance(v, str))


async def _handshake_only(session: ClientSession, exc: MCPError, seconds: float) -> str:
    """What a server that refused ``server/discover`` speaks, asked with the handshake (the
    connection is closed after the mismatch anyway): the message names its version."""
    try:
        with anyio.fail_after(seconds):
            result = await session.initialize()
    except (MCPError, RuntimeError, TimeoutError):
        return f"the server does not answer server/discover ({one_line(exc.error.message, 80)})"
    offered = one_line(str(result.protocol_version), 40)
    return f"the server speaks the handshake revisions (it offered {offered})"


async def handshake_instead(session: ClientSession, seconds: float) -> Era | None:
    """The handshake era, when a server that said it speaks the stateless one (in
    ``server/discover``) refused the first request made that way: ``initialize`` on the same
    connection, ``None`` when that fails too (then the refusal stands). ``seconds`` bound
    the exchange."""
    try:
        with anyio.fail_after(seconds):
            result = await session.initialize()
    except (MCPError, RuntimeError, TimeoutError):
        return None
    return Era("legacy", str(result.protocol_version), (), "fallback")


def _no_common_version(name: str, supported: tuple[str, ...]) -> ProbeFailed:
    return ProbeFailed(
        name, "protocol_mismatch",
        f"the server speaks only {describe_versions(supported)}; mcpctl speaks "
        f"{describe_versions((*CLIENT_HANDSHAKE_VERSIONS, *CLIENT_MODERN_VERSIONS))}",
        hint="upgrade mcpctl (pip install -U mcpctl), or pin an older server version",
    )  # fmt: skip


def _asked(detected: str, pinned_by: str) -> str:
    if detected == "pinned":
        return f"{pinned_by} asks for"
    if detected == "transport":
        return "its transport allows only"
    return "mcpctl tried"


def _fix(pinned_by: str, other: str) -> str:
    if pinned_by.startswith("--"):
        return f"use --protocol auto (or --protocol {other})"
    return f'set "protocol": "auto" (or "{other}") in the entry, or pass --protocol auto'
