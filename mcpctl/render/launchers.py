"""Whether a client's entry starts *this* mcpctl's launcher (``mcpctl run NAME``).

A launcher entry is probed by ``health --as`` with the whole environment, as a client starts
it, since the launcher resolves its own secrets (the keyring included) before it ``exec``\\s
the server. That trust goes to this very program only: the entry's command must resolve --
on the PATH the server would be started with, against its working directory, through
symlinks -- to the ``mcpctl`` program this process runs (its console script, or
``sys.argv[0]`` when that is an ``mcpctl``), or be ``python -m mcpctl`` with this interpreter
and nothing in the way of this package. Any other program named ``mcpctl`` -- a script in a
cloned repository (``./bin/mcpctl``), another install earlier on PATH -- is an ordinary
server, started with an ordinary environment.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mcpctl.config.placeholders import find_placeholders

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = ["is_own_launcher", "own_programs"]

_NAMES = ("mcpctl", "mcpctl.exe")
# What would make a Python program import another mcpctl package than this one.
_PYTHON_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONUSERBASE")


def is_own_launcher(entry: ServerEntry, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``entry`` runs this mcpctl's ``run NAME`` (with at most a ``--config``).

    ``environ`` (default: the process environment) gives the ``PATH`` a bare command is
    found on, unless the entry's own ``env`` sets one.
    """
    from mcpctl.launch import fast_args

    if entry.is_remote or not entry.command or any(v in entry.env for v in _PYTHON_VARIABLES):
        return False
    args = list(entry.args)
    program = _resolve(entry, os.environ if environ is None else environ)
    if program is None:
        return False
    if Path(entry.command).name in _NAMES:
        return fast_args(args) is not None and program.resolve() in own_programs()
    if args[:2] == ["-m", "mcpctl"] and fast_args(args[2:]) is not None:
        return _this_interpreter(program) and not _shadowed(entry)
    return False


def _resolve(entry: ServerEntry, environ: Mapping[str, str]) -> Path | None:
    """The file ``entry``'s command starts (symlinks kept), or ``None`` when it is not known
    without running anything (a placeholder, not found)."""
    command = entry.command or ""
    path = entry.env.get("PATH", environ.get("PATH"))
    if find_placeholders(command) or (path is not None and find_placeholders(path)):
        return None
    if os.sep in command or (os.altsep and os.altsep in command):
        cwd = entry.cwd
        if cwd is not None and find_placeholders(cwd):
            return None
        found = Path(cwd or ".") / command
        return found.absolute() if found.is_file() else None
    which = shutil.which(command, path=path)
    return Path(which).absolute() if which is not None else None


@functools.cache
def own_programs() -> frozenset[Path]:
    """The real paths of the ``mcpctl`` program this process runs: the console script of the
    installed distribution that holds this package, and ``sys.argv[0]`` when it is one."""
    found: set[Path] = set()
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in _NAMES and argv0.is_file():
        found.add(argv0.resolve())
    script = _console_script()
    if script is not None:
        found.add(script)
    return frozenset(found)


def _console_script() -> Path | None:
    """This distribution's ``mcpctl`` script, if the distribution is the one imported."""
    import importlib.metadata
    import json
    from urllib.parse import unquote, urlsplit

    try:
        dist = importlib.metadata.distribution("mcpctl")
        files = list(dist.files or ())
        here = Path(__file__).resolve().parent.parent  # this package's folder
        ours = any(
            f.as_posix() == "mcpctl/__init__.py" and Path(str(dist.locate_file(f))).resolve()
            == here / "__init__.py" for f in files
        )  # fmt: skip
        if not ours:  # an editable install points at its source tree instead
            url = urlsplit(json.loads(dist.read_text("direct_url.json") or "{}").get("url", ""))
            ours = url.scheme == "file" and Path(unquote(url.path)).resolve() == here.parent
    except (importlib.metadata.PackageNotFoundError, OSError, ValueError, AttributeError):
        return None
    if not ours:
        return None
    for f in files:
        if f.name in _NAMES and f.parent.name in ("bin", "Scripts"):
            script = Path(str(dist.locate_file(f)))
            if script.is_file():
                return script.resolve()
    return None


def _this_interpreter(program: Path) -> bool:
    """Whether ``program`` is this interpreter: the same file, in the same folder (a
    virtual environment's ``python`` links to the base one; its folder tells them apart)."""
    mine = Path(sys.executable)
    try:
        return program.parent.resolve() == mine.parent.resolve() and program.samefile(mine)
    except OSError:
        return False


def _shadowed(entry: ServerEntry) -> bool:
    """Whether ``python -m mcpctl`` would import another ``mcpctl`` from its working
    directory (first on ``sys.path`` with ``-m``) than this package."""
    cwd = entry.cwd
    if cwd is not None and find_placeholders(cwd):
        return True
    folder = Path(cwd or ".")
    here = Path(__file__).resolve().parent.parent
    for candidate in (folder / "mcpctl", folder / "mcpctl.py"):
        if candidate.exists() and candidate.resolve() != here:
            return True
    return False
