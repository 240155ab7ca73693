"""mcpctl as an MCP server: ``mcpctl serve`` gives an agent mcpctl's own tools.

    from mcpctl.serve import Workspace, build_server, run

    run(Workspace(Paths.from_env(), allow_changes=False))   # stdio, until stdin closes

It sits above the rest of the library (it calls :mod:`mcpctl.doctor`, :mod:`mcpctl.probe`,
:mod:`mcpctl.registry`, :mod:`mcpctl.render`, :mod:`mcpctl.snapshot`, :mod:`mcpctl.auth` and
:mod:`mcpctl.config`; nothing calls it but the CLI), and builds on the MCP SDK's own server
(its names from :mod:`mcpctl.sdk`):

* :mod:`~mcpctl.serve.workspace` -- the config file the tools act on; the gate every tool
  passes before it starts a server;
* :mod:`~mcpctl.serve.reading` -- the read-only tools, each a thin call into the library;
* :mod:`~mcpctl.serve.changes` and :mod:`~mcpctl.serve.consent` -- changes planned, then
  shown to the user in a form, then written through the config's store;
* :mod:`~mcpctl.serve.secrets` and :mod:`~mcpctl.serve.secretpage` -- a secret typed by the
  user on a page of this machine (URL-mode elicitation), straight into the keyring;
* :mod:`~mcpctl.serve.marks` -- results cleaned (secrets redacted, controls escaped) and a
  third party's text marked as theirs; :mod:`~mcpctl.serve.models` -- the results' schemas;
* :mod:`~mcpctl.serve.tools`, :mod:`~mcpctl.serve.changetools` and :mod:`~mcpctl.serve.app`
  -- the server and its tools;
* :mod:`~mcpctl.serve.http` and :mod:`~mcpctl.serve.running` -- stdio or loopback HTTP
  behind a token; everything started is stopped at the end.

Names are loaded on first use: importing this package does not import the SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpctl._lazy import lazy_exports

if TYPE_CHECKING:
    from mcpctl.serve.app import build_server
    from mcpctl.serve.http import Endpoint, loopback_endpoint
    from mcpctl.serve.running import run
    from mcpctl.serve.workspace import Workspace

__all__ = ["Endpoint", "Workspace", "build_server", "loopback_endpoint", "run"]

_LAZY = {
    "build_server": "mcpctl.serve.app",
    "Endpoint": "mcpctl.serve.http",
    "loopback_endpoint": "mcpctl.serve.http",
    "run": "mcpctl.serve.running",
    "Workspace": "mcpctl.serve.workspace",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
