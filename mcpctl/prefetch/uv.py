"""Filling uv's cache: what ``uvx pkg==1.2`` will look up.

``uvx`` (``uv tool run``) resolves the requirement, downloads and unpacks the distributions
into uv's cache and builds an environment there; a later run with the same requirement
finds it all in the cache and starts without the network (``UV_OFFLINE=1`` proves it). The
faithful prefetch is the same ``uvx`` with the same options and requirement, running the
environment's ``python -S -c 0`` instead of the server: ``-S`` so that not even a ``.pth``
file of an installed package runs. Installing a wheel runs none of its code; an sdist is
built by its build backend (what ``uvx`` would do too).

uv keeps, beside each wheel it downloaded, a record of the file with its SHA-256
(``wheels-v*/<index>/<name>/<version>-<tags>.http``): a lock's sha256 is checked against it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from mcpctl.prefetch.plan import Job

__all__ = ["uv_program", "uvx_argv", "wheel_hashes"]

_RECORD = re.compile(rb"Sha256.{1,4}?([0-9a-f]{64})", re.DOTALL)
MAX_RECORD_BYTES = 1_000_000


def uv_program(job: Job) -> str | None:
    """The ``uv`` beside the entry's ``uvx``, else on PATH."""
    if job.program is not None:
        sibling = Path(job.program).with_name("uv")
        if sibling.is_file():
            return str(sibling)
    return shutil.which("uv", path=job.env.get("PATH"))


def uvx_argv(job: Job, *, offline: bool = False) -> list[str]:
    """The ``uvx`` that fills the cache for ``job`` (see the module)."""
    assert job.program is not None
    extra = ["--offline"] if offline else []
    return [job.program, *extra, *job.options, "--from", job.packages[0],
            "python", "-S", "-c", "0"]  # fmt: skip


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_hashes(cache: Path, name: str, version: str | None) -> list[str]:
    """The SHA-256 of each wheel of ``name`` (at ``version``) uv downloaded into ``cache``."""
    found: list[str] = []
    wanted = _normal(name)
    for root in sorted(cache.glob("wheels-v*")):
        for folder in [*root.glob(f"*/{wanted}"), *root.glob(f"*/*/{wanted}")]:
            pattern = f"{version}-*.http" if version else "*.http"
            for record in sorted(folder.glob(pattern)):
                try:
                    if record.stat().st_size > MAX_RECORD_BYTES:
                        continue
                    raw = record.read_bytes()
                except OSError:
                    continue
                found += [m.decode() for m in _RECORD.findall(raw)]
    return found
