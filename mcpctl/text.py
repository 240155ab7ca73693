"""Text from outside (registries, servers, files) is data, never terminal control.

One definition of the characters that can drive a terminal or disguise text -- C0 controls
other than newline and tab, DEL, C1 controls (U+0080-U+009F, among them the one-character CSI
U+009B), bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069), bidirectional
marks (U+200E LRM, U+200F RLM, U+061C ALM), zero-width characters (U+200B-U+200D, U+2060,
U+FEFF), the line and paragraph separators (U+2028, U+2029), and lone surrogates -- used by
everything that checks or shows such text: the CLI's output shows them escaped (``\\x1b``,
``\\u200b``), ``validate`` rejects them in names, commands, arguments, URLs and headers, and
the registry conversion refuses them.
"""

from __future__ import annotations

import re

__all__ = ["CONTROLS_RE", "escape_controls", "find_controls", "plural"]

CONTROLS_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but newline and tab, DEL, C1
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, overrides and isolates
    "\u200b-\u200d\u2060\ufeff"  # zero width: space, non-joiner, joiner; word joiner; BOM
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff]"  # lone surrogates
)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every control character shown escaped (``ESC`` -> ``\\x1b``).

    Newlines and tabs stay unless ``keep_newlines`` is false (a table cell, one line).
    """
    text = CONTROLS_RE.sub(_escaped, text)
    if not keep_newlines:
        text = text.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return text


def find_controls(text: str) -> str | None:
    """The first control character in ``text``, escaped, or ``None`` when there is none."""
    match = CONTROLS_RE.search(text)
    return _escaped(match) if match else None


def plural(count: int, noun: str) -> str:
    """``1 server``, ``2 servers`` (a regular plural)."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
