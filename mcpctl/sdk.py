"""The MCP SDK, as mcpctl imports it: every name of the ``mcp`` package that mcpctl uses.

The rest of the package takes them from here (``from mcpctl.sdk import ClientSession``);
this is the only module that imports ``mcp``. It sits below :mod:`mcpctl.probe` (which
talks to servers) and :mod:`mcpctl.auth` (whose OAuth providers and sign-in are built on the
SDK's), the two packages allowed to use the SDK: both reach it without one importing the
other back; and below :mod:`mcpctl.serve` (``mcpctl serve``: mcpctl as an MCP server), the
one user of the SDK's server half (:data:`SERVER_MODULES`). The SDK's message types come
from their own package, ``mcp_types``, imported directly where they are used (in those
packages): it has no server half.

Why a module of its own: ``mcp/__init__`` and ``mcp/client/__init__`` re-export the SDK's
server side (the server session, starlette, uvicorn, click...): about 200 modules more, for
code a client never runs. Measured on a 2-core machine: ``mcpctl health --json`` of one stdio
server spends 0.2 s more, of wall time and of CPU, with the plain import (medians of 30
interleaved runs); importing :mod:`mcpctl.probe.connect` takes 0.37 s more (0.16 s of CPU).
So, in the ``mcpctl`` program (:func:`use_client_half`), the SDK modules are loaded with
unexecuted stand-ins in those two packages' places, removed afterwards: a module once loaded
is found without its parent, and a later ``import mcp`` gets the real package.

That swaps entries of ``sys.modules``, which is only safe in a process mcpctl owns: a daemon
that imports the library (and may import ``mcp`` from another thread) gets the plain import.
It also relies on the SDK's layout (``mcp`` and ``mcp.client`` are packages whose client
modules import each other by their full names); ``tests/test_sdk.py`` fails when that
changes, and at run time an unexpected layout gets the plain import.

The server half's names are always loaded with the plain import, even after
:func:`use_client_half` (a test process, or a program that probed before it serves): the
client modules loaded before are found as they are, and the rest of the package loads.

Names are loaded on first use, each from its module (:data:`MODULES`,
:data:`SERVER_MODULES`): importing this module does not import the SDK.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

TYPE_CHECKING = False  # importing typing would cost the quick paths (launcher, completion)

if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

    from mcp.client.auth.exceptions import OAuthFlowError
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
    from mcp.client.auth.oauth2 import OAuthClientProvider, OAuthContext
    from mcp.client.extension import ClaimContext, ResultClaim
    from mcp.client.session import ClientSession
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.client.subscriptions import ListenNotSupportedError, listen
    from mcp.server.elicitation import (
        AcceptedElicitation,
        AcceptedUrlElicitation,
        CancelledElicitation,
        DeclinedElicitation,
        ElicitationResult,
    )
    from mcp.server.mcpserver.context import Context
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp.server.mcpserver.resolve import Elicit, Resolve
    from mcp.server.mcpserver.server import MCPServer
    from mcp.server.stdio import stdio_server
    from mcp.server.transport_security import TransportSecuritySettings
    from mcp.shared.auth import (
        AuthorizationCodeResult,
        OAuthClientInformationFull,
        OAuthClientMetadata,
        OAuthMetadata,
        OAuthToken,
        ProtectedResourceMetadata,
    )
    from mcp.shared.exceptions import MCPError
    from mcp.shared.message import SessionMessage

__all__ = [
    "MODULES",
    "SERVER_MODULES",
    "AcceptedElicitation",
    "AcceptedUrlElicitation",
    "AuthorizationCodeResult",
    "CancelledElicitation",
    "ClaimContext",
    "ClientCredentialsOAuthProvider",
    "ClientSession",
    "Context",
    "DeclinedElicitation",
    "Elicit",
    "ElicitationResult",
    "ListenNotSupportedError",
    "MCPError",
    "MCPServer",
    "OAuthClientInformationFull",
    "OAuthClientMetadata",
    "OAuthClientProvider",
    "OAuthContext",
    "OAuthFlowError",
    "OAuthMetadata",
    "OAuthToken",
    "ProtectedResourceMetadata",
    "Resolve",
    "ResourceError",
    "ResultClaim",
    "SessionMessage",
    "ToolError",
    "TransportSecuritySettings",
    "listen",
    "sse_client",
    "stdio_server",
    "streamable_http_client",
    "use_client_half",
]

#: Each name this module gives -> the SDK module it comes from (the imports above, for
#: the type checker; ``tests/test_sdk.py`` keeps the two the same).
MODULES = {
    "OAuthFlowError": "mcp.client.auth.exceptions",
    "ClientCredentialsOAuthProvider": "mcp.client.auth.extensions.client_credentials",
    "OAuthClientProvider": "mcp.client.auth.oauth2",
    "OAuthContext": "mcp.client.auth.oauth2",
    "ClaimContext": "mcp.client.extension",
    "ResultClaim": "mcp.client.extension",
    "ClientSession": "mcp.client.session",
    "sse_client": "mcp.client.sse",
    "streamable_http_client": "mcp.client.streamable_http",
    "ListenNotSupportedError": "mcp.client.subscriptions",
    "listen": "mcp.client.subscriptions",
    "AuthorizationCodeResult": "mcp.shared.auth",
    "OAuthClientInformationFull": "mcp.shared.auth",
    "OAuthClientMetadata": "mcp.shared.auth",
    "OAuthMetadata": "mcp.shared.auth",
    "OAuthToken": "mcp.shared.auth",
    "ProtectedResourceMetadata": "mcp.shared.auth",
    "MCPError": "mcp.shared.exceptions",
    "SessionMessage": "mcp.shared.message",
}

#: The server half's names, for ``mcpctl serve`` (:mod:`mcpctl.serve`): always the plain
#: import, whatever :func:`use_client_half` says (a server needs the whole package).
SERVER_MODULES = {
    "AcceptedElicitation": "mcp.server.elicitation",
    "AcceptedUrlElicitation": "mcp.server.elicitation",
    "CancelledElicitation": "mcp.server.elicitation",
    "DeclinedElicitation": "mcp.server.elicitation",
    "ElicitationResult": "mcp.server.elicitation",
    "Context": "mcp.server.mcpserver.context",
    "ResourceError": "mcp.server.mcpserver.exceptions",
    "ToolError": "mcp.server.mcpserver.exceptions",
    "Elicit": "mcp.server.mcpserver.resolve",
    "Resolve": "mcp.server.mcpserver.resolve",
    "MCPServer": "mcp.server.mcpserver.server",
    "stdio_server": "mcp.server.stdio",
    "TransportSecuritySettings": "mcp.server.transport_security",
}

#: The packages whose ``__init__`` loads the server half: stand-ins take their place.
STAND_INS = ("mcp", "mcp.client")

_client_half = False


def use_client_half() -> None:
    """Load only the SDK's client modules from now on (for a process mcpctl owns)."""
    global _client_half  # noqa: PLW0603 -- one switch per process, set once by the program
    _client_half = True


def __getattr__(name: str) -> Any:
    module = MODULES.get(name)
    if module is not None:
        value = getattr(_import(module), name)
    elif name in SERVER_MODULES:
        value = getattr(importlib.import_module(SERVER_MODULES[name]), name)
    else:
        raise AttributeError(f"module 'mcpctl.sdk' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


def _import(name: str) -> ModuleType:
    """The SDK module ``name``: without the package's server half when the program switched
    that on and nothing has imported the real ``mcp`` yet."""
    if _client_half and name not in sys.modules and "mcp" not in sys.modules:
        _load_with_stand_ins(name)
    return importlib.import_module(name)


def _load_with_stand_ins(name: str) -> None:
    stand_ins = []
    try:
        for package in STAND_INS:
            if package in sys.modules:
                continue
            spec = importlib.util.find_spec(package)
            if spec is None or spec.submodule_search_locations is None:
                return  # an unexpected layout: the plain import still works
            sys.modules[package] = importlib.util.module_from_spec(spec)
            stand_ins.append(package)
        importlib.import_module(name)
    finally:
        for package in stand_ins:
            del sys.modules[package]
