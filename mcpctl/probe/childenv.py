"""What a stdio server is started with, and why it could not be: no anyio, no SDK here.

Shared by the probes (:mod:`mcpctl.probe.spawn`) and the launcher (:mod:`mcpctl.launch`),
which must start in a fraction of the CLI's time: both give a server the same minimal
environment (:func:`child_env`) and explain a failed start the same way
(:func:`command_not_found`, :func:`spawn_error`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from mcpctl.probe.serverenv import DEFAULT_INHERITED_ENV, server_env

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = [
    "DEFAULT_INHERITED_ENV",
    "ProbeError",
    "child_env",
    "command_not_found",
    "spawn_error",
]


class ProbeError(NamedTuple):
    """Why a server failed, with a stable ``code`` and a ``hint`` for humans."""

    code: str
    message: str
    hint: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        """JSON form."""
        return {"code": self.code, "message": self.message, "hint": self.hint}


_INSTALL_HINTS = {
    "npx": "install Node.js (it provides npx)",
    "node": "install Node.js",
    "uvx": "install uv (it provides uvx): pip install uv",
    "uv": "install uv: pip install uv",
    "docker": "install Docker, or use the server's npm/PyPI package",
    "python": "install Python 3",
    "python3": "install Python 3",
}


def command_not_found(command: str, *, own_path: bool = False) -> ProbeError:
    """The error for an executable that is not there (``own_path``: the entry sets the PATH
    it is looked up on)."""
    hint = _INSTALL_HINTS.get(Path(command).name, f"install {command!r} or fix the path")
    where = (
        ("on the entry's PATH" if own_path else "on PATH")
        if os.sep not in command
        else (f"at {command}")
    )
    return ProbeError("command_not_found", f"command {command!r} not found {where}", hint)


def spawn_error(exc: OSError, entry: ServerEntry) -> ProbeError:
    """The error for a server that could not be started."""
    if isinstance(exc, FileNotFoundError):
        if entry.cwd and not Path(entry.cwd).is_dir():
            return ProbeError("spawn_failed", f"working directory {entry.cwd!r} does not exist",
                              "fix the entry's cwd")  # fmt: skip
        return command_not_found(str(entry.command), own_path="PATH" in entry.env)
    return ProbeError("spawn_failed", f"cannot start {entry.command!r}: {exc.strerror or exc}",
                      "check that the command is executable")  # fmt: skip


def child_env(entry: ServerEntry, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment: a few variables of ours, with the entry's (resolved) on top
    (:func:`~mcpctl.probe.serverenv.server_env`: only what the entry's ``inherit_env`` names
    reaches the server besides :data:`DEFAULT_INHERITED_ENV`)."""
    return server_env(entry.env, entry.inherit_env, environ)
