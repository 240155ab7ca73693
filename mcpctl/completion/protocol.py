"""A completion request and its reply, as the shell scripts speak them.

Request (the arguments after ``mcpctl __complete``):

* ``bash WORDBREAKS LINE``: bash's ``COMP_WORDBREAKS`` and the command line up to the
  cursor, split here as bash would (quotes, backslashes);
* ``zsh WORD... CURRENT`` and ``fish WORD... CURRENT``: the words after the program's name,
  unquoted by the shell, then the word under the cursor (possibly empty).

Reply, on stdout: a header line, then one candidate per line.

* bash: the header is ``nospace`` (a directory: keep typing its path) or empty; candidates
  are ready for ``COMPREPLY``: quoted for the shell, and cut after the word-break character
  readline completes after (``--config=``, ``a:``). File names are listed here.
* zsh and fish: the header is ``words``, or ``files``/``dirs`` followed by a space and the
  text before the path in the word (``--config=``), for the shell's own file completion.
  Candidates are ``value:description`` (zsh's ``_describe``; ``:`` in the value escaped) or
  ``value<TAB>description`` (fish).

Values holding control characters (a server's tool names are outside data) are never offered;
descriptions have them replaced.
"""

from __future__ import annotations

import os
import sys

from mcpctl.completion.engine import Pairs, Reply, complete, load_tree
from mcpctl.text import controls_in

__all__ = ["SHELLS", "BadRequest", "answer", "list_files", "reply_text", "split_line"]

SHELLS = ("bash", "zsh", "fish")
MAX_FILES = 500
_BASH_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,%^~")
USAGE = "usage: mcpctl __complete bash WORDBREAKS LINE | zsh|fish [WORD]... CURRENT\n"


class BadRequest(Exception):
    """The arguments are not a completion request."""


def split_line(line: str) -> tuple[list[str], str, str]:
    """The words of ``line`` as bash splits them, with the last one (the word under the
    cursor; ``""`` after a blank) apart, both unquoted and as typed."""
    words: list[str] = []
    chars: list[str] = []
    quote = ""
    start = -1  # where the word being read began, -1 between words
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == quote:
                quote = ""
            elif quote == '"' and c == "\\" and i + 1 < len(line) and line[i + 1] in '"\\$`':
                i += 1
                chars.append(line[i])
            else:
                chars.append(c)
        elif c in " \t\n":
            if start >= 0:
                words.append("".join(chars))
                chars, start = [], -1
        else:
            start = i if start < 0 else start
            if c in "'\"":
                quote = c
            elif c == "\\" and i + 1 < len(line):
                i += 1
                chars.append(line[i])
            else:
                chars.append(c)
        i += 1
    if start < 0:
        return words, "", ""
    return words, "".join(chars), line[start:]


def _after_program(words: list[str]) -> list[str]:
    """The words after the program's name (``VAR=value`` assignments before it skipped)."""
    i = 0
    while i < len(words) and "=" in words[i] and words[i].partition("=")[0].isidentifier():
        i += 1
    return words[i + 1 :]


def list_files(partial: str, dirs_only: bool = False) -> list[str]:
    """Paths that complete ``partial``; directories end with ``/``, hidden ones only when
    ``partial``'s last part starts with a dot."""
    head, slash, name = partial.rpartition("/")
    directory = os.path.expanduser(head + slash) if slash else "."
    found: list[str] = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if not entry.name.startswith(name):
                    continue
                if entry.name.startswith(".") and not name.startswith("."):
                    continue
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir or not dirs_only:
                    found.append(f"{head}{slash}{entry.name}{'/' if is_dir else ''}")
                if len(found) >= MAX_FILES:
                    break
    except OSError:
        return []
    return sorted(found)


def _clean(candidates: Pairs) -> Pairs:
    out: Pairs = []
    for value, description in candidates:
        if not value or controls_in(value).search(value) or "\n" in value or "\t" in value:
            continue
        text = " ".join(controls_in(description).sub("?", description).split())
        out.append((value, text))
    return out


def _bash_quote(value: str) -> str:
    return "".join(c if c in _BASH_SAFE else "\\" + c for c in value)


def _bash(reply: Reply, breaks: str, raw: str) -> str:
    values = [v for v, _ in _clean(reply.candidates)]
    if reply.mode != "words":
        paths = list_files(reply.partial, dirs_only=reply.mode == "dirs")
        values = [reply.prefix + p for p in paths]
    if raw[:1] in ("'", '"'):
        out = values  # readline dequotes the word and requotes what it inserts
    else:
        # Readline replaces only the text after the last word-break character.
        stops = set(breaks) - set(" \t\n\"'")
        cut = max((i + 1 for i, c in enumerate(raw) if c in stops), default=0)
        out = [_bash_quote(v)[cut:] for v in values]
    header = "nospace" if any(v.endswith("/") for v in values) else ""
    return "".join(f"{line}\n" for line in [header, *out])


def _described(shell: str, reply: Reply) -> str:
    if reply.mode != "words":
        header = f"{reply.mode} {reply.prefix}" if reply.prefix else reply.mode
        return header + "\n"
    lines = ["words"]
    for value, description in _clean(reply.candidates):
        if shell == "zsh":
            escaped = value.replace("\\", "\\\\").replace(":", "\\:")
            lines.append(f"{escaped}:{description}" if description else escaped)
        else:
            lines.append(f"{value}\t{description}" if description else value)
    return "".join(f"{line}\n" for line in lines)


def reply_text(shell: str, args: list[str]) -> str:
    """The reply to a request (``args``: what follows the shell's name).

    Raises:
        BadRequest: the arguments are not a request.
        OSError, ValueError: the command table (``tree.json``) cannot be read.
    """
    if shell == "bash":
        if len(args) != 2:
            raise BadRequest(USAGE)
        words, current, raw = split_line(args[1])
        return _bash(complete(load_tree(), _after_program(words), current), args[0], raw)
    if shell not in SHELLS or not args:
        raise BadRequest(USAGE)
    return _described(shell, complete(load_tree(), args[:-1], args[-1]))


def answer(args: list[str]) -> int:
    """Answer ``mcpctl __complete ARGS...`` on stdout; returns the exit code (2: a request
    that is not one). Nothing reaches the terminal on a failure, unless ``MCPCTL_DEBUG``."""
    if not args or args[0] not in SHELLS:
        sys.stderr.write(USAGE)
        return 2
    try:
        text = reply_text(args[0], args[1:])
    except BadRequest:
        sys.stderr.write(USAGE)
        return 2
    except Exception:
        if os.environ.get("MCPCTL_DEBUG"):
            raise
        return 1  # a TAB press offers nothing rather than a traceback
    # File names may not be UTF-8: they go back to the shell byte for byte.
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    sys.stdout.buffer.flush()
    return 0
