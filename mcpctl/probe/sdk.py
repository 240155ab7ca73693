"""How the MCP SDK is imported: whole (the library's default), or only its client half.

``mcp/__init__`` and ``mcp/client/__init__`` re-export the server side as well (the server
session, starlette, uvicorn...): about 0.3 s of CPU on every connecting command, for code a
client never runs. The ``mcpctl`` program calls :func:`use_client_half` before it imports
the probe; :mod:`mcpctl.probe.connect` then loads the client modules it needs with unexecuted
stand-ins in the two packages' places, removed afterwards, so a later ``import mcp`` gets the
real package.

That swaps entries of ``sys.modules``, which is only safe in a process mcpctl owns: a daemon
that imports the library (and may import ``mcp`` from another thread) gets the plain import.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

__all__ = ["CLIENT_MODULES", "load", "load_modules", "use_client_half"]

# Every SDK module mcpctl.probe imports: once loaded, they are found without their parent.
CLIENT_MODULES = (
    "mcp.client.session",
    "mcp.client.sse",
    "mcp.client.streamable_http",
    "mcp.shared.exceptions",
    "mcp.shared.message",
)

_client_half = False


def use_client_half() -> None:
    """Load only the SDK's client modules from now on (for a process mcpctl owns)."""
    global _client_half  # noqa: PLW0603 -- one switch per process, set once by the program
    _client_half = True


def load() -> None:
    """Import the SDK's client modules: the client half if switched on, else plainly."""
    load_modules(*CLIENT_MODULES)


def load_modules(*names: str) -> None:
    """Import SDK modules ``names`` (``mcp.client.auth.oauth2``...) the way :func:`load` does:
    without the package's server half when the program switched that on."""
    if _client_half and "mcp" not in sys.modules:
        _load_client_half(names)
    for name in names:
        importlib.import_module(name)


def _load_client_half(names: tuple[str, ...]) -> None:
    stand_ins = []
    try:
        for name in ("mcp", "mcp.client"):
            if name in sys.modules:
                continue
            spec = importlib.util.find_spec(name)
            if spec is None or spec.submodule_search_locations is None:
                return  # an unexpected layout: the plain imports still work
            sys.modules[name] = importlib.util.module_from_spec(spec)
            stand_ins.append(name)
        for name in names:
            importlib.import_module(name)
    finally:
        for name in stand_ins:
            del sys.modules[name]
