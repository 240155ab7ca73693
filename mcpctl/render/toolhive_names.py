"""What the two halves of the ``toolhive`` target agree on: the render half
(:mod:`mcpctl.render.toolhive`) writes these names into manifests, the parse half
(:mod:`mcpctl.render.toolhive_parse`) reads them back. Both import this module, not each other
(the render half loads the parse half only when a manifest is read).
"""

from __future__ import annotations

import re

__all__ = ["DESCRIPTION_KEY", "KINDS", "NAME_KEY", "var_of_key"]

NAME_KEY, DESCRIPTION_KEY = "mcpctl/server", "mcpctl/description"
KINDS = ("MCPServer", "MCPRemoteProxy", "MCPExternalAuthConfig", "MCPGroup", "VirtualMCPServer")


def var_of_key(key: str) -> str:
    """The variable a Secret key stands for (``github_token`` -> ``GITHUB_TOKEN``)."""
    name = re.sub(r"[^A-Z0-9_]", "_", key.upper())
    return f"_{name}" if name[:1].isdigit() or not name else name
