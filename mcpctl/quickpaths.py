""":class:`mcpctl.paths.Paths`'s rules for the config file and the user dirs, in ``os.path``.

For the programs that must answer within a few interpreter start-ups (shell completion, the
launcher a client starts for every server): :mod:`mcpctl.paths` imports pathlib, dataclasses
and, off Linux, platformdirs. Tests keep the two in agreement.
"""

import os
import sys

__all__ = ["CONFIG_FILENAME", "config_path", "user_dir"]

CONFIG_FILENAME = "external-mcps.json"
_XDG = {
    "config": ("XDG_CONFIG_HOME", "~/.config"),
    "cache": ("XDG_CACHE_HOME", "~/.cache"),
    "state": ("XDG_STATE_HOME", "~/.local/state"),
}


def user_dir(kind: str) -> str:
    """mcpctl's user ``config``, ``cache`` or ``state`` dir, as :class:`mcpctl.paths.Paths`
    finds it."""
    home = os.environ.get("MCPCTL_HOME")
    if home:
        return os.path.join(os.path.expanduser(home), kind)
    if sys.platform != "linux":
        from mcpctl.paths import Paths

        return str(getattr(Paths(), f"{kind}_dir"))
    # platformdirs' XDG rules: the variable when it is an absolute path, else the default.
    var, default = _XDG[kind]
    base = os.environ.get(var, "")
    return os.path.join(base if os.path.isabs(base) else os.path.expanduser(default), "mcpctl")


def config_path(explicit: str | None = None) -> str:
    """The config file: ``explicit`` (``--config``), ``$MCPCTL_CONFIG``, the nearest
    ``external-mcps.json`` upwards, else the user config dir's."""
    chosen = explicit if explicit is not None else os.environ.get("MCPCTL_CONFIG")
    if chosen:
        return os.path.abspath(os.path.expanduser(chosen))
    try:
        here = os.getcwd()
    except OSError:
        here = "/"
    while True:
        candidate = os.path.join(here, CONFIG_FILENAME)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return os.path.join(user_dir("config"), CONFIG_FILENAME)
