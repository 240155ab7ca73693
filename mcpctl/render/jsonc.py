"""JSON with comments, as VS Code, Zed and others write their settings.

Only reading: mcpctl never writes comments back, so a file that has them is read for
import but not rewritten by ``render --install``.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["loads_jsonc", "strip_jsonc"]

# One token at a time: a string (kept), a comment (dropped), a trailing comma (dropped).
_TOKEN_RE = re.compile(
    r'(?P<string>"(?:[^"\\]|\\.)*")'
    r"|(?P<line>//[^\n]*)"
    r"|(?P<block>/\*.*?\*/)"
    r"|(?P<comma>,)(?=\s*(?://[^\n]*\s*|/\*.*?\*/\s*)*[}\]])",
    re.DOTALL,
)


def strip_jsonc(text: str) -> str:
    """``text`` without comments and trailing commas (strings untouched; line numbers kept)."""

    def keep(match: re.Match[str]) -> str:
        if match["string"] is not None:
            return match["string"]
        if match["comma"] is not None:
            return " "
        return "\n" * match[0].count("\n")  # a dropped comment keeps its line breaks

    return _TOKEN_RE.sub(keep, text)


def loads_jsonc(text: str) -> Any:
    """Parse JSON that may have comments and trailing commas.

    Raises:
        ValueError: not JSON even so (``json.JSONDecodeError``, with line and column).
    """
    try:
        return json.loads(text)
    except ValueError:
        return json.loads(strip_jsonc(text))
