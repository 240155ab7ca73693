"""Reading files that may come from elsewhere: only regular files, never more than a cap.

The config, a client's config file (``render --install``, ``import``), a lock file
(``snapshot diff --against``, ``render --pinned``, ``report --snapshot``) and a template
(``render --template``) can arrive in a cloned repository or a pull request. Such a file may
be a FIFO (a read would block for ever), a link to ``/dev/zero`` (a read would fill the
memory) or a sparse file of gigabytes (a read would take minutes). :func:`read_file` opens
without blocking (``O_NONBLOCK``), asks the open file what it is (``fstat``) and refuses,
before reading a byte, anything but a regular file of at most :func:`size_limit` bytes
(16 MiB, or ``MCPCTL_MAX_FILE_BYTES``); it then reads at most one byte more than the limit,
so a file that grows meanwhile is refused too.

:func:`decode_text` and :func:`loads_json` turn such bytes into text and JSON with errors
that name the file and the line and column: invalid UTF-8, invalid JSON, nesting deeper
than Python's stack, and lone surrogates (``"\\ud800"`` is a valid JSON escape but no
character: it could neither be written back as UTF-8 nor passed to a process).

Standard library only (``mcpctl list`` and ``mcpctl run`` read the config through here).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat

from mcpctl.errors import McpctlError, StorageError, UsageError

# Not even typing or pathlib at run time: `mcpctl run` reads the config through here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    #: Makes the error for a problem at (line, column) of a file: ``fail(message, line, col)``.
    Fail = Callable[[str, int, int], McpctlError]

__all__ = [
    "LIMIT_VARIABLE",
    "MAX_FILE_BYTES",
    "decode_text",
    "describe_size",
    "loads_json",
    "lone_surrogate",
    "read_file",
    "read_text_file",
    "refuse_unreadable",
    "size_limit",
]

#: The largest file read by default (no config, lock file or client file comes near it).
MAX_FILE_BYTES = 16 * 1024 * 1024
#: The environment variable that overrides :data:`MAX_FILE_BYTES` (a number of bytes).
LIMIT_VARIABLE = "MCPCTL_MAX_FILE_BYTES"


_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
# A lone surrogate escape: pairs and escaped backslashes are consumed first, so what is left
# in the last group is a high surrogate with no low one after it, or a low one on its own.
_SURROGATE_RE = re.compile(
    r"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|(\\u[dD][89a-fA-F][0-9a-fA-F]{2})"
)


def size_limit(
    environ: Mapping[str, str] | None = None, *, error: type[McpctlError] = UsageError
) -> int:
    """The largest file :func:`read_file` reads: ``MCPCTL_MAX_FILE_BYTES``, else 16 MiB.

    Raises:
        UsageError (or ``error``): the variable is not a positive whole number.
    """
    raw = (os.environ if environ is None else environ).get(LIMIT_VARIABLE, "").strip()
    if not raw:
        return MAX_FILE_BYTES
    if raw.isdigit() and 0 < int(raw) <= 1 << 62:
        return int(raw)
    raise error(
        f"{LIMIT_VARIABLE} must be a positive number of bytes, not {raw[:40]!r}",
        hint=f"for example {LIMIT_VARIABLE}={MAX_FILE_BYTES * 4} (64 MiB)",
    )


def describe_size(size: int) -> str:
    """``size`` bytes for people: ``900 bytes``, ``16 MiB``, ``2.0 GiB``."""
    if size < 1024:
        return f"{size} byte{'' if size == 1 else 's'}"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            break
    return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _mode_of(path: str) -> int | None:
    try:
        return os.stat(path).st_mode  # noqa: PTH116 - no pathlib on the fast path
    except OSError:
        return None


def _refused(path: str, mode: int, error: type[McpctlError]) -> McpctlError:
    kind = _kind(mode)
    what = f"{path} is {kind}, not a regular file" if kind.startswith("a ") else f"{path} is {kind}"
    return error(what, hint="mcpctl reads only regular files")


def refuse_unreadable(
    path: str | os.PathLike[str], *, error: type[McpctlError] = UsageError
) -> None:
    """Raise ``error`` when ``path`` exists (links followed) and :func:`read_file` would refuse
    it: not a regular file, or over the size limit.

    For a writer, before it takes its lock: replacing a FIFO or a device with a file would
    not do what was meant, and a file too large to read cannot be changed.
    """
    file = os.fspath(path)
    try:
        info = os.stat(file)  # noqa: PTH116 - no pathlib on the fast path
    except OSError:
        return  # not there (the writer creates it), or the read says why
    if not stat.S_ISREG(info.st_mode):
        raise _refused(file, info.st_mode, error)
    cap = size_limit(error=error)
    if info.st_size > cap:
        raise _too_large(file, describe_size(info.st_size), cap, error)


def read_file(
    path: str | os.PathLike[str],
    *,
    error: type[McpctlError] = UsageError,
    limit: int | None = None,
) -> bytes | None:
    """The bytes of the regular file at ``path`` (links followed); ``None`` when there is none.

    ``limit`` defaults to :func:`size_limit`. Nothing is read from a file that is refused.

    Raises:
        ``error`` (a :class:`UsageError` unless the caller says otherwise): the path is not a
            regular file (a FIFO, a device, a directory, a socket), or it is larger than the
            limit; the message names the file and the rule.
            So is ``MCPCTL_MAX_FILE_BYTES`` set to something that is not a number of bytes.
        StorageError: it exists but cannot be opened or read (permissions, I/O).
    """
    file = os.fspath(path)
    cap = size_limit(error=error) if limit is None else limit
    try:
        fd = os.open(file, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a FIFO on some systems): what is it?
            mode = _mode_of(file)
            if mode is not None:
                raise _refused(file, mode, error) from None
        raise StorageError(f"cannot read {file}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refused(file, info.st_mode, error)
        if info.st_size > cap:
            raise _too_large(file, describe_size(info.st_size), cap, error)
        chunks: list[bytes] = []
        left = cap + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise StorageError(f"cannot read {file}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if len(raw) > cap:  # it grew after the fstat
        raise _too_large(file, f"more than {describe_size(cap)}", cap, error)
    return raw


def read_text_file(path: str | os.PathLike[str]) -> str | None:
    """The UTF-8 text of the file at ``path`` (``None``: there is none), read as
    :func:`read_file` reads.

    Raises:
        UsageError: it is not a regular file, too large, or not UTF-8.
        StorageError: it cannot be read.
    """
    raw = read_file(path)
    return decode_text(raw, path) if raw is not None else None


def _too_large(path: str, size: str, cap: int, error: type[McpctlError]) -> McpctlError:
    return error(
        f"{path} is {size}, over the {describe_size(cap)} limit ({LIMIT_VARIABLE})",
        hint=f"if the file is really meant to be this large, raise {LIMIT_VARIABLE}",
    )


def _usage_fail(path: str | os.PathLike[str]) -> Fail:
    def fail(message: str, line: int, column: int) -> McpctlError:
        return UsageError(f"{path}:{line}:{column}: {message}")

    return fail


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def decode_text(raw: bytes, path: str | os.PathLike[str], *, fail: Fail | None = None) -> str:
    """``raw`` as UTF-8 text (a byte-order mark dropped).

    Raises:
        UsageError (or what ``fail`` makes): not UTF-8, with the line and column of the first
            bad byte.
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # After a byte-order mark the decoder counts from the byte that follows it.
        body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
        before = body[: exc.start].decode("utf-8", "replace")
        line, column = _line_col(before, len(before))
        raise (fail or _usage_fail(path))(
            f"not UTF-8 text (byte 0x{body[exc.start]:02x})", line, column
        ) from None


def lone_surrogate(text: str) -> tuple[str, int] | None:
    """The first lone surrogate escape in JSON ``text`` (as written) and its offset, if any.

    Only meaningful for text that parsed as JSON: there a backslash occurs only in strings.
    """
    if "\\u" not in text:
        return None
    for match in _SURROGATE_RE.finditer(text):
        if match[1] is not None:
            return match[1], match.start(1)
    return None


def loads_json(
    text: str,
    path: str | os.PathLike[str],
    *,
    fail: Fail | None = None,
    surrogates: bool = False,
    unique_keys: bool = False,
    **hooks: Any,
) -> Any:
    """Parse ``text`` (the content of ``path``) as JSON; ``hooks`` go to :func:`json.loads`.

    A lone surrogate escape is refused unless ``surrogates`` allows it; a key written twice
    in one object (``json.loads`` keeps the last) is refused when ``unique_keys`` asks.

    Raises:
        UsageError (or what ``fail`` makes): not JSON, nested too deeply, a number Python
            refuses, a lone surrogate, or a repeated key; with the line and column.
    """
    fail = fail or _usage_fail(path)
    repeated: list[str] = []
    if unique_keys:

        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            obj = dict(items)  # in C; the slow path below runs only when keys repeat
            if len(obj) != len(items) and not repeated:
                seen: set[str] = set()
                for key, _ in items:
                    if key in seen:
                        repeated.append(key)
                    seen.add(key)
            return obj

        hooks["object_pairs_hook"] = pairs
    try:
        data = json.loads(text, **hooks)
    except json.JSONDecodeError as exc:
        raise fail(f"not valid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except (ValueError, RecursionError) as exc:
        # Nesting deeper than Python's stack, or an integer with thousands of digits: the
        # positional parser says where (it stops at a depth of 200).
        from mcpctl.config.jsontext import JsonPosError, parse_with_positions

        try:
            parse_with_positions(text)
        except JsonPosError as ours:
            raise fail(f"not valid JSON: {ours.msg}", ours.line, ours.column) from None
        except RecursionError:
            pass
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise fail(f"not valid JSON: {reason}", 1, 1) from None
    if not surrogates and (found := lone_surrogate(text)) is not None:
        escape, index = found
        raise fail(
            f"{escape} is a lone surrogate: a valid JSON escape, but not a character",
            *_line_col(text, index),
        )
    if repeated:
        raise _repeated(text, repeated[0], fail)
    return data


def _repeated(text: str, key: str, fail: Fail) -> McpctlError:
    """The error for a key written twice, at its second place, naming the first."""
    from mcpctl.config.jsontext import JsonPosError, parse_with_positions
    from mcpctl.text import escape_controls

    shown = escape_controls(key, keep_newlines=False)
    message = f"key {shown!r} is written more than once in one object"
    try:
        duplicates = parse_with_positions(text).duplicates
    except (JsonPosError, RecursionError):
        duplicates = []
    if not duplicates:
        return fail(message, 1, 1)
    from mcpctl.config.model import format_path

    path, (line, column), (first, _) = duplicates[0]
    shown = escape_controls(format_path(path), keep_newlines=False)
    return fail(
        f"key {shown} is written more than once (lines {first} and {line}); "
        "a rewrite would keep only the last",
        line,
        column,
    )
