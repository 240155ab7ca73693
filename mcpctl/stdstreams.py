"""Standard streams the program was started without (``mcpctl list >&-``).

A descriptor 0, 1 or 2 that is closed when the program starts is the next one any ``open``
returns: the config file, a lock, a socket to the keyring would take it, and a ``print``
-- or a server started with it -- would write into that file. So before anything is opened
each closed one gets ``/dev/null`` (inheritable, so a server mcpctl starts or becomes gets it
too: its own first ``open`` lands elsewhere, as it expects), and the Python stream is
replaced:

* a closed stdin reads as empty;
* a closed stderr takes diagnostics and drops them (nobody asked for them);
* a closed stdout refuses each write with ``EBADF``, "standard output is closed": the output
  of a command cannot reach anyone, and the program exits 120, "the output could not be
  written", as when a disk is full. A command that writes nothing on stdout is not affected.

Only :mod:`mcpctl.__main__` calls :func:`reopen_closed`, first thing, and only when the
interpreter found a stream missing (it sets ``sys.stdout`` and the others to ``None``).

And how the program leaves them: :func:`reader_gone` when the reader of stdout went away
(``mcpctl list | head -1``), :func:`leave` once a command is done.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import NoReturn

from mcpctl.errors import ExitCode

__all__ = ["CLOSED_STDOUT", "leave", "reader_gone", "reopen_closed"]

CLOSED_STDOUT = "standard output is closed"


class _ClosedBytes(io.RawIOBase):
    """The binary side of a closed stdout: every write fails."""

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        raise OSError(errno.EBADF, CLOSED_STDOUT)

    def fileno(self) -> int:
        return 1

    def isatty(self) -> bool:
        return False


class _ClosedText(io.TextIOBase):
    """A closed stdout as a text stream: it answers questions (no terminal, UTF-8, fd 1)
    and refuses to write."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = _ClosedBytes()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # read-only, as io's own
        return "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "strict"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            raise OSError(errno.EBADF, CLOSED_STDOUT)
        return 0

    def fileno(self) -> int:
        return 1

    def isatty(self) -> bool:
        return False

    def flush(self) -> None:
        pass


def _null_on(fd: int, mode: int) -> bool:
    """Put ``/dev/null`` on ``fd`` when it is closed; whether it was."""
    try:
        os.fstat(fd)
    except OSError:
        pass
    else:
        return False  # something holds it already: not ours to replace
    new = os.open(os.devnull, mode)
    if new != fd:
        os.dup2(new, fd)  # inheritable, as a standard descriptor is
        os.close(new)
    else:
        os.set_inheritable(fd, True)
    return True


def reopen_closed() -> tuple[int, ...]:
    """Give each standard descriptor the interpreter found closed ``/dev/null``, and its Python
    stream the behaviour described above; the descriptors that were closed."""
    closed: list[int] = []
    if sys.stdin is None and _null_on(0, os.O_RDONLY):
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 -- the process's own
        closed.append(0)
    if sys.stdout is None and _null_on(1, os.O_WRONLY):
        sys.stdout = _ClosedText()
        closed.append(1)
    if sys.stderr is None and _null_on(2, os.O_WRONLY):
        sys.stderr = open(  # noqa: SIM115 -- the process's own
            2, "w", encoding="utf-8", errors="backslashreplace", closefd=False
        )
        closed.append(2)
    return tuple(closed)


def reader_gone() -> int:
    """The reader of stdout went away (``mcpctl list | head -1``): its choice, not an error
    worth a message. Stdout becomes ``/dev/null``, so nothing is left to fail at exit; 0."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


def leave(code: int) -> NoReturn:
    """Exit with ``code`` once the standard streams are flushed, without the interpreter's
    teardown; a failed flush of stdout (a full disk) exits 120 (``ExitCode.FLUSH_FAILED``), as the
    interpreter would."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started without it, and not through mcpctl.__main__
            continue
        try:
            stream.flush()
        except BrokenPipeError:  # the reader is gone: nothing more can reach it anyway
            pass
        except OSError:
            if stream is sys.stdout and code == ExitCode.OK:
                code = ExitCode.FLUSH_FAILED
        except ValueError:  # closed
            pass
    os._exit(code)
