"""JSON with a two-space indent, written in one pass.

``json.dumps(value, indent=2, ensure_ascii=False)`` falls back to the stdlib's pure-Python
encoder as soon as an indent is set, several times slower than this; the config writer and
the CLI's ``--json`` output both sit on start-up budgets. The output is byte for byte the
stdlib's, with every string (keys too) passed through ``strings`` first when it is given
(the CLI redacts secrets there).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

__all__ = ["encode_indented"]

_CONSTANTS = {True: "true", False: "false", None: "null"}


def encode_indented(
    value: Any, out: list[str], indent: str = "", strings: Callable[[str], str] | None = None
) -> None:
    """Append ``value``'s JSON text to ``out``, nested at ``indent``.

    Raises:
        TypeError: a value JSON cannot hold (as :func:`json.dumps` raises it).
    """
    if isinstance(value, str):
        out.append(encode_basestring(value if strings is None else strings(value)))
    elif value is None or value is True or value is False:
        out.append(_CONSTANTS[value])
    elif type(value) is int:
        out.append(int.__repr__(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        sep = "{\n" + inner
        for key, item in value.items():
            name = str(key) if strings is None else strings(str(key))
            out.append(sep + encode_basestring(name) + ": ")
            encode_indented(item, out, inner, strings)
            sep = ",\n" + inner
        out.append("\n" + indent + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        sep = "[\n" + inner
        for item in value:
            out.append(sep)
            encode_indented(item, out, inner, strings)
            sep = ",\n" + inner
        out.append("\n" + indent + "]")
    else:  # floats and the rare rest: the stdlib's exact spelling (and its TypeError)
        out.append(json.dumps(value))
