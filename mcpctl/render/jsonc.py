"""JSON with comments, as VS Code, Zed and others write their settings.

:func:`strip_jsonc` blanks the comments and trailing commas of a text, and nothing else:
every other character, strings included, stays where it was, so an offset, a line or a
column in the stripped text is the same in the file. That is what lets
:mod:`mcpctl.render.jsonedit` find the span of a value in the stripped text and replace it
in the file, leaving the comments around it as they were (as VS Code's own ``jsonc-parser``
does with ``modify``).

It is one scan of the text with a regex whose every token, once started, matches (an
unterminated string ends at its line, an unterminated comment at the end of the text), so
each character is looked at a bounded number of times: linear time, whatever the text holds
(a pattern that looked ahead for the bracket after a comma once took exponential time over a
few dozen comments). Libraries on PyPI were weighed and left: the JSON5 parsers accept far
more than VS Code does (single quotes, bare keys), and the JSONC ones strip with the same
kind of backtracking patterns and keep no positions.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["BLANKS_RE", "loads_jsonc", "strip_jsonc"]

# One match per comment run or trailing comma, with the run of anything else before it
# (strings whole), or with the text's end. Every alternative, once its first character
# matched, matches (a string ends at its quote, its line's end or the text's end; a block
# comment at "*/" or the text's end), and atomic groups never give back what they took: every
# match attempt succeeds without backtracking, so each character is looked at a bounded number
# of times. A comma is trailing when only blanks and comments stand between it and a bracket.
_STRING = r'"[^"\\\n]*+(?:\\[\s\S][^"\\\n]*+)*+(?:"|(?=\n)|\\?\Z)'
_COMMENT = r"//[^\n]*+|/\*[\s\S]*?(?:\*/|\Z)"
_BEFORE_CLOSER = rf"(?>\s++|{_COMMENT})*+[\]}}]"
_TOKEN_RE = re.compile(
    rf"(?P<plain>(?>[^\"/,]++|{_STRING}|/(?![/*])|,(?!{_BEFORE_CLOSER}))*+)"
    rf"(?:(?P<comments>(?>(?:{_COMMENT})\s*+)++)|(?P<trailing>,(?={_BEFORE_CLOSER}))|\Z)"
)
_NOT_NEWLINE_RE = re.compile(r"[^\n]")
#: Matches the blanks and comments at a position (perhaps nothing): what may stand between
#: two tokens of a JSON with comments.
BLANKS_RE = re.compile(rf"(?>\s++|{_COMMENT})*+")


def _blanked(match: re.Match[str]) -> str:
    comments = match["comments"]
    if comments is not None:  # lines and columns kept
        blank = " " * len(comments) if "\n" not in comments else _NOT_NEWLINE_RE.sub(" ", comments)
        return match["plain"] + blank
    return match["plain"] + (" " if match["trailing"] is not None else "")


def strip_jsonc(text: str) -> str:
    """``text`` with its comments and trailing commas blanked: strings untouched, every
    offset, line and column kept."""
    if "/" not in text and "," not in text:
        return text
    return _TOKEN_RE.sub(_blanked, text)


def loads_jsonc(text: str) -> Any:
    """Parse JSON that may have comments and trailing commas.

    Raises:
        ValueError: not JSON even so (``json.JSONDecodeError``, with line and column).
        RecursionError: nested deeper than Python's stack (see :mod:`mcpctl.render.readers`,
            which reads client files with a limit).
    """
    try:
        return json.loads(text)
    except ValueError:
        return json.loads(strip_jsonc(text))
