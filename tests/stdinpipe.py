"""This process's stdin made a pipe for a while: what a program it starts may read of it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator


@contextlib.contextmanager
def stdin_holding(data: bytes | None) -> Iterator[None]:
    """File descriptor 0 made a pipe holding ``data`` and then ended, or, for ``None``, a
    pipe that never ends; put back as it was afterwards."""
    read_end, write_end = os.pipe()
    if data is not None:
        os.write(write_end, data)
        os.close(write_end)
    saved = os.dup(0)
    os.dup2(read_end, 0)
    os.close(read_end)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        if data is None:
            os.close(write_end)
