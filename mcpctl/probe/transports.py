"""The table of transports, under its former name: it lives in :mod:`mcpctl.config.transports`.

The config model needs the table, and the config package must not import this one (which
imports it): the table moved there, and this module still gives its names.
"""

from __future__ import annotations

from mcpctl.config.transports import (
    DEFAULT_REMOTE,
    REMOTE_FALLBACKS,
    TRANSPORT_NAMES,
    TRANSPORTS,
    Transport,
    TransportSpec,
    remote_transports,
)

__all__ = [
    "DEFAULT_REMOTE",
    "REMOTE_FALLBACKS",
    "TRANSPORTS",
    "TRANSPORT_NAMES",
    "Transport",
    "TransportSpec",
    "remote_transports",
]
