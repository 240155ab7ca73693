"""The runtimes stdio servers' commands run on, and how to install each: one table for
``validate`` (a command not installed) and ``doctor`` (which runtimes, which versions)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

__all__ = ["RUNTIMES", "Runtime", "install_hint", "runtime_of"]

_PYTHON_RE = re.compile(r"python(\d+(\.\d+)?)?")


class Runtime(NamedTuple):
    """A family of commands that run on one program (``npx`` and ``node`` on Node.js)."""

    name: str
    commands: tuple[str, ...]
    program: str  # what ``--version`` is asked of, beside the command or on PATH
    hint: str


RUNTIMES: dict[str, Runtime] = {
    r.name: r
    for r in (
        Runtime(
            "node",
            ("npx", "node"),
            "node",
            "install Node.js (it provides node and npx): https://nodejs.org",
        ),
        Runtime(
            "uv",
            ("uvx", "uv"),
            "uv",
            "install uv (it provides uv and uvx): https://docs.astral.sh/uv/",
        ),
        Runtime(
            "docker",
            ("docker",),
            "docker",
            "install Docker (https://docs.docker.com/get-docker/), or use the server's npm "
            "or PyPI package instead",
        ),
        Runtime(
            "python",
            ("python", "python3"),
            "python3",
            "install Python 3 (https://www.python.org/downloads/), or fix the path in the "
            "entry's command",
        ),
    )
}


def runtime_of(command: str) -> Runtime | None:
    """The runtime ``command`` runs on (``/usr/bin/python3.12`` -> python), if a known one."""
    name = Path(command).name.lower().removesuffix(".exe").removesuffix(".cmd")
    if _PYTHON_RE.fullmatch(name):
        return RUNTIMES["python"]
    return next((r for r in RUNTIMES.values() if name in r.commands), None)


def install_hint(command: str, otherwise: str) -> str:
    """How to get ``command``: its runtime's install hint, else ``otherwise``."""
    runtime = runtime_of(command)
    return runtime.hint if runtime is not None else otherwise
