"""Editing a JSON file in place: one member's value set, the rest of the text byte for byte.

What ``render --install`` writes into a client's JSON file, comments or not: the value at a
key path (the servers object, VS Code's ``inputs``) is replaced in the text, or the member is
added to the deepest object of the path that exists; every other character -- comments,
trailing commas, the order and the formatting of everything else -- stays as it was, the way
VS Code's own ``jsonc-parser`` edits a settings file with ``modify``. Comments inside the
value replaced go with it.

The spans come from the text with its comments blanked (:func:`mcpctl.render.jsonc.
strip_jsonc`), which has the same offsets as the file. The text must have been read already
(:func:`mcpctl.render.readers.load_json`): it is known to be an object of JSON with comments,
within the depth limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["set_value"]

_decoder = json.JSONDecoder()
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]
_WS_RE = re.compile(r"\s*")
# After a value: blanks, then at most a line comment, up to the line's end.
_REST_OF_LINE_RE = re.compile(r"[ \t\r]*(?://[^\n]*)?\n")

#: Writes a value as JSON text (over several lines) with the given indentation unit.
Dump = Callable[[Any], str]


class _Member(NamedTuple):
    key: str
    key_start: int
    value_start: int
    value_end: int


def _ws(plain: str, i: int) -> int:
    match = _WS_RE.match(plain, i)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _members(plain: str, start: int) -> tuple[list[_Member], int]:
    """The members of the object whose ``{`` is at ``start``, and where its ``}`` is."""
    members: list[_Member] = []
    i = _ws(plain, start + 1)
    if plain[i] == "}":
        return members, i
    while True:
        key, j = _scanstring(plain, i + 1)
        j = _ws(plain, _ws(plain, j) + 1)  # past the colon
        _, end = _decoder.raw_decode(plain, j)
        members.append(_Member(key, i, j, end))
        k = _ws(plain, end)
        if plain[k] != ",":
            return members, k
        i = _ws(plain, k + 1)


def _line_indent(text: str, i: int) -> str:
    """The blanks that start the line holding offset ``i``."""
    start = text.rfind("\n", 0, i) + 1
    match = re.match(r"[ \t]*", text[start:i])
    return match[0] if match else ""


def _starts_line(text: str, i: int) -> bool:
    start = text.rfind("\n", 0, i) + 1
    return not text[start:i].strip()


def _has_comment(text: str, plain: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` holds a comment (a slash the stripped text blanked)."""
    i = text.find("/", start, end)
    while i != -1:
        if plain[i] != "/":
            return True
        i = text.find("/", i + 1, end)
    return False


def _shifted(dumped: str, base: str) -> str:
    """A value's JSON text with every line after the first indented by ``base``."""
    return dumped.replace("\n", "\n" + base) if base else dumped


def set_value(
    text: str, path: tuple[str, ...], value: Any, dump: Dump, unit: str
) -> tuple[str, bool]:
    """``text`` (a JSON object, comments allowed) with the value at ``path`` set to ``value``,
    and whether comments inside the value replaced were dropped with it.

    The value is written by ``dump`` (its own indentation in steps of ``unit``, then moved
    to where it stands). A missing key is added as the last member of the deepest object of
    ``path`` that exists (its missing parents as nested objects).
    """
    from mcpctl.render.jsonc import strip_jsonc

    plain = strip_jsonc(text)
    at = _ws(plain, 1 if plain.startswith("\ufeff") else 0)  # past a byte order mark
    for depth, key in enumerate(path):
        members, close = _members(plain, at)
        found = [m for m in members if m.key == key]
        if not found:
            for missing in reversed(path[depth + 1 :]):
                value = {missing: value}
            return _added(text, at, members, close, key, dump(value), unit), False
        member = found[-1]
        if depth == len(path) - 1:
            start, end = member.value_start, member.value_end
            base = _line_indent(text, member.key_start)
            new = text[:start] + _shifted(dump(value), base) + text[end:]
            return new, _has_comment(text, plain, start, end)
        at = member.value_start
    return text, False  # pragma: no cover - an empty path sets nothing


def _added(
    text: str, start: int, members: list[_Member], close: int, key: str, dumped: str, unit: str
) -> str:
    """``text`` with the member ``key: dumped`` added to the object at ``start``..``close``."""
    from mcpctl.render.jsonc import BLANKS_RE

    if not members:
        outer = _line_indent(text, start)
        inner = outer + unit
        member = f"{json.dumps(key, ensure_ascii=False)}: {_shifted(dumped, inner)}"
        if not text[start + 1 : close].strip():  # "{}" or "{ }": the member on a line of its own
            return f"{text[: start + 1]}\n{inner}{member}\n{outer}{text[close:]}"
        return f"{text[: start + 1]}\n{inner}{member}{text[start + 1 :]}"  # comments after it
    last = members[-1]
    if _starts_line(text, last.key_start):
        base = _line_indent(text, last.key_start)
    else:
        base = _line_indent(text, start) + unit
    member = f"{json.dumps(key, ensure_ascii=False)}: {_shifted(dumped, base)}"
    after = BLANKS_RE.match(text, last.value_end)
    assert after is not None  # the pattern matches the empty string
    if text[after.end()] == ",":  # a trailing comma: it now separates the new member
        head, at = text[: after.end() + 1], after.end() + 1
    else:
        head, at = text[: last.value_end] + ",", last.value_end
    line = _REST_OF_LINE_RE.match(text, at)
    if line is not None and line.end() <= close:  # after a comment that ends the line
        return f"{head}{text[at : line.end() - 1]}\n{base}{member}{text[line.end() - 1 :]}"
    return f"{head}\n{base}{member}{text[at:]}"
