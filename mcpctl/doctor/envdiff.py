"""Which of the user's environment variables a failed server did not get, by name.

A stdio server starts with a few variables (:func:`mcpctl.probe.childenv.child_env`), not the
whole environment of the shell where the same command works by hand. When it fails and says
something on stderr, ``mcpctl doctor NAME`` names what it did not get -- the ones its stderr
mentions and those that configure trust, proxies or runtimes first -- and how to pass one.
Names only: a value is never shown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = ["missing_names", "with_env_note"]

SHOWN = 8
SUGGESTED = 3
# The shell's own bookkeeping and mcpctl's settings: nothing a server needs.
_NOISE = frozenset(("_", "PWD", "OLDPWD", "SHLVL", "LS_COLORS", "LSCOLORS", "COLUMNS", "LINES"))
# Names that often decide whether a server can reach out or start its runtime.
_LIKELY = re.compile(r"PROXY|CERT|SSL|_CA_|CA_BUNDLE|^NODE_|^NPM_CONFIG_|^UV_|^PIP_|^PYTHON|^JAVA_"
                     r"|^GOPATH$|^LANG$|^LC_|^XDG_|^AWS_PROFILE$|^AWS_REGION$|^KUBECONFIG$",
                     re.IGNORECASE)  # fmt: skip


def missing_names(
    child: Mapping[str, str], environ: Mapping[str, str], stderr: Sequence[str] = ()
) -> list[str]:
    """The names of ``environ`` the server's environment ``child`` lacks: first those its
    ``stderr`` mentions, then those that configure trust, proxies and runtimes, then the
    rest (each group sorted)."""
    said = "\n".join(stderr)
    absent = sorted(
        name
        for name in environ
        if name not in child and name not in _NOISE and not name.startswith("MCPCTL_")
    )
    mentioned = [n for n in absent if re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}\b", said)]
    likely = [n for n in absent if n not in mentioned and _LIKELY.search(n)]
    rest = [n for n in absent if n not in mentioned and n not in likely]
    return mentioned + likely + rest


def with_env_note(
    detail: str,
    fix: str | None,
    entry: ServerEntry,
    stderr: Sequence[str],
    environ: Mapping[str, str] | None = None,
) -> tuple[str, str | None]:
    """``detail`` and ``fix`` of a failed start of (resolved) ``entry`` that wrote ``stderr``,
    with the variables of ``environ`` (default: this process's) it did not get, when it
    wrote something and some are missing."""
    from mcpctl.probe.childenv import child_env

    if not stderr:
        return detail, fix
    env = os.environ if environ is None else environ
    names = missing_names(child_env(entry, env), env, stderr)
    if not names:
        return detail, fix
    shown = ", ".join(names[:SHOWN]) + (
        f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    )
    detail += (
        f"; it started without {len(names)} of your environment variables ({shown}), which a "
        "run by hand would have"
    )
    wanted = ", ".join(f'"{n}"' for n in names[:SUGGESTED])
    how = (
        f'if it needs one of them, name it in its entry: "inherit_env": [{wanted}] '
        f"(mcpctl add NAME --inherit-env {names[0]} ... when adding it)"
    )
    return detail, f"{fix}; {how}" if fix else how
