"""The config's names, placeholders and limits, with nothing but :mod:`re` and :mod:`os`.

The model, the resolver and the checker take them from here, and so do the paths that must
start in a few milliseconds (shell completion, the launcher's quick path), which cannot
afford the dataclasses and typing machinery of :mod:`mcpctl.config.model`.
"""

import os
import re

__all__ = [
    "ENV_NAME_RE",
    "HEADER_NAME_RE",
    "INHERIT_NAME_RE",
    "MAX_TIMEOUT_MS",
    "NAME_RE",
    "PLACEHOLDER_RE",
    "unpassable",
]

MAX_TIMEOUT_MS = 3_600_000
NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
ENV_NAME_RE = re.compile(r"[^=\x00]+")
# What inherit_env may list: the names a shell can export.
INHERIT_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
HEADER_NAME_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# ${NAME} or ${NAME:-default}. A default holds no brace: a scan for the closing one then stops
# at the next "{", which keeps matching linear on hostile input (thousands of unclosed "${A:-").
PLACEHOLDER_RE = re.compile(r"\$\{(?P<name>[A-Z_][A-Z0-9_]*)(?::-(?P<default>[^{}]*))?\}")


def unpassable(text: str) -> str | None:
    """What in ``text`` no process can be given (a NUL, a lone surrogate), if anything."""
    if "\0" in text:
        return "a NUL character (\\x00)"
    try:
        os.fsencode(text)  # \udc80-\udcff pass: they stand for the bytes of a raw name
    except UnicodeEncodeError as exc:
        return f"a lone surrogate (\\u{ord(text[exc.start]):04x})"
    return None
