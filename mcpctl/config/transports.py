"""The one table of transports: how each one is named, reached and configured.

Everything that names a transport reads it from here: the config model and its pydantic
schema, the field checks (what an entry of that transport needs and what does not apply),
the connection code (``opener``: the function of :mod:`mcpctl.probe.streams` that opens its
streams), the CLI's choices and the registry conversion. Adding a transport is one entry in
:data:`TRANSPORTS` and its name in :data:`Transport`.

It lives in the config package because the config model is built on it; the connection code
(:mod:`mcpctl.probe`) reads it from here too. This module imports nothing heavy and defines
no dataclass (each costs ~1 ms to create): the config's hot paths read it.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = [
    "DEFAULT_REMOTE",
    "REMOTE_FALLBACKS",
    "TRANSPORTS",
    "TRANSPORT_NAMES",
    "Transport",
    "TransportSpec",
    "remote_transports",
]

Transport = Literal["stdio", "streamable-http", "sse"]


class TransportSpec(NamedTuple):
    """One transport.

    Attributes:
        name: as written in the config's ``transport`` field.
        remote: reached over HTTP (``url``) rather than spawned (``command``).
        requires: the field an entry of this transport must have.
        fields: the fields that only apply to this kind of server.
        opener: the name of the function in :mod:`mcpctl.probe.streams` that opens it.
        summary: one line for help texts and docs.
    """

    name: Transport
    remote: bool
    requires: str
    fields: tuple[str, ...]
    opener: str
    summary: str


_STDIO_FIELDS = ("command", "args", "env", "cwd", "inherit_env")
_REMOTE_FIELDS = ("url", "headers", "auth")

TRANSPORTS: dict[str, TransportSpec] = {
    spec.name: spec
    for spec in (
        TransportSpec("stdio", False, "command", _STDIO_FIELDS, "open_stdio",
                      "a local process spawned by the host, spoken to over stdin/stdout"),
        TransportSpec("streamable-http", True, "url", _REMOTE_FIELDS, "open_streamable_http",
                      "the current HTTP transport (one endpoint, POST + optional SSE stream)"),
        TransportSpec("sse", True, "url", _REMOTE_FIELDS, "open_sse",
                      "the older HTTP+SSE transport (an event stream and a POST endpoint)"),
    )
}  # fmt: skip
TRANSPORT_NAMES: tuple[Transport, ...] = tuple(spec.name for spec in TRANSPORTS.values())

# A url without a transport: the current transport is assumed, and tried first when
# connecting; the others in this order follow if the server does not speak it.
DEFAULT_REMOTE: Transport = "streamable-http"
REMOTE_FALLBACKS: tuple[Transport, ...] = ("streamable-http", "sse")


def remote_transports() -> tuple[Transport, ...]:
    """The names of the transports reached over HTTP."""
    return tuple(spec.name for spec in TRANSPORTS.values() if spec.remote)
