"""Text from outside (registries, servers, files) is data, never terminal control.

One definition of the characters that can drive a terminal or disguise text -- C0 controls
other than newline and tab, DEL, C1 controls (U+0080-U+009F, among them the one-character CSI
U+009B), bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069), bidirectional
marks (U+200E LRM, U+200F RLM, U+061C ALM), zero-width characters (U+200B-U+200D, U+2060,
U+FEFF), the line and paragraph separators (U+2028, U+2029), and lone surrogates -- used by
everything that checks or shows such text: the CLI's output shows them escaped (``\\x1b``,
``\\u200b``), ``validate`` rejects them in names, commands, arguments, URLs and headers, and
the registry conversion refuses them.

And what a program's stderr says went wrong (:func:`stderr_cause`): the lines ``health``,
``doctor`` and a failed call show of a server that did not start; and the name a mistyped
one was probably meant to be (:func:`closest`), for "did you mean".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "STDERR_CAUSE_LINES",
    "closest",
    "controls_in",
    "controls_re",
    "escape_controls",
    "find_controls",
    "plural",
    "stderr_cause",
]

_CONTROLS = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but newline and tab, DEL, C1
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, overrides and isolates
    "\u200b-\u200d\u2060\ufeff"  # zero width: space, non-joiner, joiner; word joiner; BOM
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff]"  # lone surrogates
)
# The same set within ASCII: C0 but newline and tab, and DEL.
_ASCII_CONTROLS_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_compiled: list[re.Pattern[str]] = []


def controls_re() -> re.Pattern[str]:
    """The pattern of every control character above.

    Compiled on first use: a set beyond Latin-1 compiles to a 64K-character table, a
    millisecond that most commands (their output is ASCII) never need.
    """
    if not _compiled:
        _compiled.append(re.compile(_CONTROLS))
    return _compiled[0]


def controls_in(text: str) -> re.Pattern[str]:
    """The pattern of control characters to scan ``text`` with (:func:`controls_re`, or
    its cheaper ASCII part when ``text`` is ASCII)."""
    return _ASCII_CONTROLS_RE if text.isascii() else controls_re()


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every control character shown escaped (``ESC`` -> ``\\x1b``).

    Newlines and tabs stay unless ``keep_newlines`` is false (a table cell, one line).
    """
    if text.isprintable():  # every control character is unprintable: nothing to escape
        return text
    text = controls_in(text).sub(_escaped, text)
    if not keep_newlines:
        text = text.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return text


def find_controls(text: str) -> str | None:
    """The first control character in ``text``, escaped, or ``None`` when there is none."""
    if text.isprintable():
        return None
    match = controls_in(text).search(text)
    return _escaped(match) if match else None


def plural(count: int, noun: str) -> str:
    """``1 server``, ``2 servers`` (a regular plural)."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


#: How many lines of a server's stderr are shown for why it failed.
STDERR_CAUSE_LINES = 3
# What runners write around the cause: npm's bare prefixes, its advice and log notice, its
# notices and warnings; a traceback's header and frames (Python, Node).
_STDERR_NOISE = (
    r"^npm (?:error|ERR!)(?: 404| code \S+)?\s*$"
    r"|^npm (?:error|ERR!) (?:404 +)?(?:Note that you can also install from a|tarball, folder, "
    r"http url, or git url|A complete log of this run|Log files were not written|You can rerun)"
    r"|^npm (?:notice|warn|WARN)\b"
    r"|^Traceback \(most recent call last\):|^During handling of the above exception"
    r"|^\s+File \"|^ {4}\S|^\s+at \S"
)
_STDERR_CAUSE = (
    r"(?i)\b(?:error|not found|no such|no module|enoent|e404|404|denied|unauthori[sz]ed"
    r"|forbidden|refused|exception|fatal|cannot|can't|could not|failed|invalid|missing"
    r"|permission)\b"
)


def stderr_cause(lines: list[str], limit: int = STDERR_CAUSE_LINES) -> list[str]:
    """The lines of a program's stderr that say why it failed, at most ``limit``, in order.

    Runners bury the cause: npm's ``404 Not Found`` comes before its advice and the path of
    its log, Python's exception after the frames of its traceback. So: what is not noise
    (:data:`_STDERR_NOISE`), the first lines that name a cause (an error, something not
    found, denied...) and the last line (where the program stopped), then the last lines
    before it while there is room. Only noise: its last lines, as they are.
    """
    import re

    if limit <= 0:
        return []
    told = [i for i, line in enumerate(lines) if line.strip()]
    kept = [i for i in told if not re.search(_STDERR_NOISE, lines[i])]
    if not kept:
        return [lines[i] for i in told[-limit:]]
    causes = [i for i in kept if re.search(_STDERR_CAUSE, lines[i])]
    picked = {*causes[: limit - 1], kept[-1]}
    for i in reversed(kept):
        if len(picked) >= limit:
            break
        picked.add(i)
    return [lines[i] for i in sorted(picked)]


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The one of ``choices`` closest to a mistyped ``word``, if any is close."""
    import difflib

    options = list(choices)
    lowered = {c.lower(): c for c in options}
    if word.lower() in lowered:
        return lowered[word.lower()]
    match = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return match[0] if match else None
