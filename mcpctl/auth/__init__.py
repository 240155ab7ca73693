"""Secrets and sign-in: the OS keyring (the only place mcpctl imports ``keyring``) and OAuth.

    from mcpctl.auth import SecretStore, keyring_source

* :mod:`~mcpctl.auth.secrets` -- values of ``${VAR}`` placeholders, and raw keyring items;

Names are loaded on first use: importing this package does not import ``keyring``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpctl.auth.secrets import SecretStore, keyring_source

__all__ = ["SecretStore", "keyring_source"]

_LAZY = {
    "SecretStore": "mcpctl.auth.secrets",
    "keyring_source": "mcpctl.auth.secrets",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpctl.auth' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
