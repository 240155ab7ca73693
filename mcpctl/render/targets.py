"""The table of render/import targets: each name, and the module that defines it.

A target module exposes ``TARGETS``: a mapping of target names to :class:`~mcpctl.render.base.
Target` objects. Only the module of the target asked for is imported.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from mcpctl.errors import UsageError
from mcpctl.text import closest

if TYPE_CHECKING:
    from mcpctl.render.base import Target

__all__ = ["TARGET_MODULES", "get_target", "target_names"]

TARGET_MODULES: dict[str, str] = {
    # proxies
    "mcp-proxy": "mcpctl.render.proxies",
    "fastmcp": "mcpctl.render.proxies",
    "mcp-proxy-py": "mcpctl.render.proxies",
    "1mcp": "mcpctl.render.proxies",
    # clients (their entries are added with mcpctl/render/clients.py)
    "claude-desktop": "mcpctl.render.clients_special",
    "claude-code": "mcpctl.render.clients_json",
    "vscode": "mcpctl.render.clients_special",
    "cursor": "mcpctl.render.clients_json",
    "windsurf": "mcpctl.render.clients_json",
    "gemini": "mcpctl.render.clients_json",
    "codex": "mcpctl.render.clients_toml",
    "zed": "mcpctl.render.clients_json",
    "cline": "mcpctl.render.clients_json",
    "roo-code": "mcpctl.render.clients_json",
    "continue": "mcpctl.render.clients_yaml",
    "lm-studio": "mcpctl.render.clients_json",
    "opencode": "mcpctl.render.clients_special",
    "amp": "mcpctl.render.clients_json",
    "goose": "mcpctl.render.clients_yaml",
    "kiro": "mcpctl.render.clients_json",
    "qwen-code": "mcpctl.render.clients_json",
    "copilot-cli": "mcpctl.render.clients_json",
    # a cluster
    "toolhive": "mcpctl.render.toolhive",
}


def target_names() -> list[str]:
    """Every target's name, in table order."""
    return list(TARGET_MODULES)


def get_target(name: str) -> Target:
    """The target called ``name``.

    Raises:
        UsageError: there is no such target (with the closest name).
    """
    module = TARGET_MODULES.get(name)
    if module is None:
        guess = closest(name, TARGET_MODULES)
        hint = f"did you mean {guess!r}?" if guess else f"targets: {', '.join(TARGET_MODULES)}"
        raise UsageError(f"no render target {name!r}", hint=hint)
    target: Target = import_module(module).TARGETS[name]
    return target
