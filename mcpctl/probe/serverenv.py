"""The environment a stdio server starts with, and the program it runs, in plain Python.

Shared by the probes (through :func:`mcpctl.probe.childenv.child_env`), ``doctor`` and the
launcher's quick path, which must not pay for typing or pathlib on its way to the server's
``exec``.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["DEFAULT_INHERITED_ENV", "SDK_INHERITED_ENV", "TRUST_ENV", "find_program", "server_env"]

# What a server inherits from mcpctl's environment unless its entry asks for more: the MCP
# SDK's list (mcp.client.stdio.DEFAULT_INHERITED_ENV_VARS), enough for launchers such as npx
# and uvx to find their caches. The SDK is not imported here: servers start before it is.
SDK_INHERITED_ENV: tuple[str, ...] = (
    ("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
     "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE")
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
)  # fmt: skip

# What says which certificate authorities to trust and which proxy to use: a machine that
# trusts a CA through SSL_CERT_FILE needs it in every server that connects out (uvx, npx,
# the server's own HTTP client), and none of it is a secret -- a password in a proxy URL is
# redacted wherever mcpctl shows text.
TRUST_ENV: tuple[str, ...] = (
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
)  # fmt: skip

DEFAULT_INHERITED_ENV: tuple[str, ...] = SDK_INHERITED_ENV + TRUST_ENV


def server_env(
    own: Mapping[str, str],
    inherit_env: bool | tuple[str, ...],
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A server's environment: a few variables of ``environ`` with its ``own`` (resolved) on top.

    Of ``environ`` (default ``os.environ``) the server gets only :data:`DEFAULT_INHERITED_ENV`
    (the SDK's few, and what configures trust and proxies: :data:`TRUST_ENV`; skipping
    exported shell functions), plus what ``inherit_env`` asks for: the names it
    lists, or everything when it is ``True``. A secret mcpctl happens to have reaches a server
    only when its entry names it.
    """
    source = os.environ if environ is None else environ
    if inherit_env is True:
        return {**source, **own}
    env = {
        name: source[name]
        for name in DEFAULT_INHERITED_ENV
        if name in source and not source[name].startswith("()")
    }
    if isinstance(inherit_env, tuple):
        env.update((name, source[name]) for name in inherit_env if name in source)
    return {**env, **own}


def find_program(command: str, env: Mapping[str, str], cwd: str | None = None) -> str | None:
    """The absolute path of the program a server with ``command``, the environment ``env`` and
    the working directory ``cwd`` runs, or ``None`` when there is none to run.

    Found the way the server's ``exec`` finds it, so that what ``doctor`` names is what
    ``health`` and ``mcpctl run`` start (both start the path returned here): a command with a
    slash is a path, from ``cwd`` when relative (no ``~``: no shell expands it); a bare name
    is looked up on ``env``'s ``PATH`` -- the entry's own when it sets one, else the one the
    server inherits; ``os.defpath`` when there is none -- whose relative folders start from
    ``cwd`` too. Only an executable regular file counts.
    """
    if sys.platform == "win32":  # PATHEXT and the current folder first: as the shell does
        import shutil

        return shutil.which(command, path=env.get("PATH", os.defpath))
    here = cwd or ""
    if os.sep in command:
        candidates = [os.path.join(here, command)]
    else:
        folders = env.get("PATH", os.defpath).split(os.pathsep)
        candidates = [os.path.join(here, folder, command) for folder in folders]
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    return None
