"""What a stdio server is started with, and why it could not be: no anyio, no SDK here.

Shared by the probes (:mod:`mcpctl.probe.spawn`) and the launcher (:mod:`mcpctl.launch`),
which must start in a fraction of the CLI's time: both give a server the same minimal
environment (:func:`child_env`) and explain a failed start the same way
(:func:`command_not_found`, :func:`spawn_error`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from mcpctl.probe.serverenv import DEFAULT_INHERITED_ENV, TRUST_ENV, server_env

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = [
    "DEFAULT_INHERITED_ENV",
    "EnvBuilder",
    "ProbeError",
    "child_env",
    "command_not_found",
    "proxy_password",
    "spawn_error",
    "started_by",
]

#: ``(entry, environ) -> environment``: how a client builds a (resolved) server's environment.
EnvBuilder = Callable[["ServerEntry", Mapping[str, str]], dict[str, str]]

# The client whose way :func:`child_env` follows for the servers started in this context
# (``health --as``); ``None``: mcpctl's own. A context variable, so that it holds for the
# tasks started within and for nothing that runs beside them.
_STARTED_BY: ContextVar[EnvBuilder | None] = ContextVar("mcpctl_started_by", default=None)


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
    reaches the server besides :data:`DEFAULT_INHERITED_ENV`) -- or, within
    :func:`started_by`, what that client would give it.

    A password in a proxy URL it gets is registered with the redaction, so that whatever the
    server says is shown without it.
    """
    source = os.environ if environ is None else environ
    builder = _STARTED_BY.get()
    env = builder(entry, source) if builder is not None else server_env(
        entry.env, entry.inherit_env, source
    )  # fmt: skip
    _register_proxy_passwords(env)
    return env


@contextmanager
def started_by(builder: EnvBuilder) -> Iterator[None]:
    """Within it, the servers this context (and the tasks it starts) spawns get the
    environment ``builder`` makes, as a client would give it, instead of mcpctl's."""
    token = _STARTED_BY.set(builder)
    try:
        yield
    finally:
        _STARTED_BY.reset(token)


def _register_proxy_passwords(env: Mapping[str, str]) -> None:
    passwords = [
        password
        for name in TRUST_ENV
        if "@" in env.get(name, "") and (password := proxy_password(env[name]))
    ]
    if passwords:
        from mcpctl.config.redaction import register

        register(passwords)


def proxy_password(url: str) -> str | None:
    """The password of a proxy URL (``http://user:PASSWORD@proxy:3128``), or ``None``."""
    from urllib.parse import unquote, urlsplit

    try:
        password = urlsplit(url).password
    except ValueError:
        return None
    return unquote(password) if password else None
