"""JSON text in and out: positions for the strict validator, and the canonical writer.

:func:`parse_with_positions` records the line and column of every value and key and
reports duplicate keys (which ``json.loads`` silently resolves to the last one). It is
a small recursive-descent parser that leaves strings and numbers to the stdlib decoder,
so it accepts exactly what ``json.loads`` accepts.

:func:`dump_config` writes the stable on-disk form, and :func:`splice_canonical` rewrites a
file it wrote by copying the text of unchanged entries.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

__all__ = [
    "JsonPosError",
    "PositionedJson",
    "dump_config",
    "line_col",
    "parse_with_positions",
    "splice_canonical",
]

PathPart = str | int
Pos = tuple[int, int]

_WS = " \t\n\r"
_decoder = json.JSONDecoder()
MAX_DEPTH = 200


def line_col(text: str, index: int) -> Pos:
    """1-based (line, column) of ``index`` in ``text``."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


class JsonPosError(ValueError):
    """Invalid JSON, with the position of the problem."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{message} (line {line}, column {column})")
        self.msg = message
        self.line = line
        self.column = column


@dataclass
class PositionedJson:
    """A parsed document with where each part of it was written."""

    value: Any
    values: dict[tuple[PathPart, ...], Pos] = field(default_factory=dict)
    keys: dict[tuple[PathPart, ...], Pos] = field(default_factory=dict)
    duplicates: list[tuple[tuple[PathPart, ...], Pos, Pos]] = field(default_factory=list)

    def position(self, path: tuple[PathPart, ...], *, prefer_key: bool = False) -> Pos | None:
        """Where ``path`` (or its nearest existing parent) was written."""
        while True:
            if prefer_key and path in self.keys:
                return self.keys[path]
            if path in self.values:
                return self.values[path]
            if not path:
                return None
            path = path[:-1]
            prefer_key = True


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.doc = PositionedJson(None)

    def error(self, message: str, index: int) -> JsonPosError:
        return JsonPosError(message, *line_col(self.text, index))

    def skip(self, i: int) -> int:
        text = self.text
        while i < len(text) and text[i] in _WS:
            i += 1
        return i

    def value(self, i: int, path: tuple[PathPart, ...], depth: int) -> int:
        i = self.skip(i)
        if i >= len(self.text):
            raise self.error("unexpected end of file: expected a value", i)
        if depth > MAX_DEPTH:
            raise self.error(f"nested deeper than {MAX_DEPTH} levels", i)
        self.doc.values[path] = line_col(self.text, i)
        ch = self.text[i]
        if ch == "{":
            return self.obj(i + 1, path, depth + 1)
        if ch == "[":
            return self.arr(i + 1, path, depth + 1)
        try:
            value, end = _decoder.raw_decode(self.text, i)
        except json.JSONDecodeError as exc:
            raise self.error(exc.msg, exc.pos) from None
        except ValueError as exc:  # e.g. an integer with more digits than Python allows
            raise self.error(str(exc), i) from None
        self._set(path, value)
        return end

    def _set(self, path: tuple[PathPart, ...], value: Any) -> None:
        if not path:
            self.doc.value = value
            return
        parent = self._get(path[:-1])
        key = path[-1]
        if isinstance(parent, list):
            parent.append(value)
        else:
            parent[key] = value

    def _forget(self, path: tuple[PathPart, ...]) -> None:
        # The earlier value of a duplicate key is replaced: its children's positions go.
        n = len(path)
        for table in (self.doc.values, self.doc.keys):
            for known in [p for p in table if len(p) > n and p[:n] == path]:
                del table[known]

    def _get(self, path: tuple[PathPart, ...]) -> Any:
        node = self.doc.value
        for part in path:
            node = node[part]
        return node

    def obj(self, i: int, path: tuple[PathPart, ...], depth: int) -> int:
        self._set(path, {})
        i = self.skip(i)
        if i < len(self.text) and self.text[i] == "}":
            return i + 1
        while True:
            i = self.skip(i)
            if i >= len(self.text) or self.text[i] != '"':
                raise self.error("expected a property name in double quotes", i)
            key_pos = line_col(self.text, i)
            try:
                key, i = json.decoder.scanstring(self.text, i + 1)  # type: ignore[attr-defined]
            except json.JSONDecodeError as exc:
                raise self.error(exc.msg, exc.pos) from None
            child = (*path, key)
            if child in self.doc.keys:
                self.doc.duplicates.append((child, key_pos, self.doc.keys[child]))
                self._forget(child)
            self.doc.keys[child] = key_pos
            i = self.skip(i)
            if i >= len(self.text) or self.text[i] != ":":
                raise self.error("expected ':' after a property name", i)
            i = self.value(i + 1, child, depth)
            i = self.skip(i)
            if i < len(self.text) and self.text[i] == ",":
                self._no_trailing_comma(i, "}")
                i += 1
                continue
            if i < len(self.text) and self.text[i] == "}":
                return i + 1
            raise self.error("expected ',' or '}' after a property value", i)

    def arr(self, i: int, path: tuple[PathPart, ...], depth: int) -> int:
        self._set(path, [])
        i = self.skip(i)
        if i < len(self.text) and self.text[i] == "]":
            return i + 1
        index = 0
        while True:
            i = self.value(i, (*path, index), depth)
            index += 1
            i = self.skip(i)
            if i < len(self.text) and self.text[i] == ",":
                self._no_trailing_comma(i, "]")
                i += 1
                continue
            if i < len(self.text) and self.text[i] == "]":
                return i + 1
            raise self.error("expected ',' or ']' after an array element", i)

    def _no_trailing_comma(self, comma: int, closer: str) -> None:
        after = self.skip(comma + 1)
        if after < len(self.text) and self.text[after] == closer:
            raise self.error(f"trailing comma before '{closer}' (JSON allows none)", comma)


def parse_with_positions(text: str) -> PositionedJson:
    """Parse ``text`` as one JSON document, recording positions and duplicate keys.

    Raises:
        JsonPosError: the text is not valid JSON (or nests deeper than 200 levels).
    """
    parser = _Parser(text)
    end = parser.value(0, (), 0)
    end = parser.skip(end)
    if end != len(text):
        raise parser.error("extra data after the JSON document", end)
    return parser.doc


# --- the canonical writer ---------------------------------------------------------------


def dump_config(data: dict[str, Any]) -> bytes:
    """The stable on-disk form: 2-space indent, key order kept, trailing newline.

    Byte for byte what ``json.dumps(data, indent=2, ensure_ascii=False)`` gives, but
    faster: with ``indent`` set, the stdlib falls back to its pure-Python encoder, which
    costs a 1,000-entry ``mcpctl add`` a noticeable share of its budget.
    """
    out: list[str] = []
    _encode(data, "", out)
    out.append("\n")
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (valid as a \\udXXX escape in JSON, not as UTF-8): keep it
        # escaped rather than fail or write bytes no JSON reader accepts.
        return (json.dumps(data, indent=2, ensure_ascii=True) + "\n").encode("ascii")


_TOP_KEY_RE = re.compile(rb'^  "', re.MULTILINE)


def splice_canonical(raw: bytes, old: dict[str, Any], new: dict[str, Any]) -> bytes | None:
    """``dump_config(new)``, reusing the text of entries unchanged since ``old``.

    ``raw`` must be ``dump_config(old)``; in that form a line starting with exactly two
    spaces and a quote starts a top-level key, so the file splits into entries without
    parsing it. Returns ``None`` when ``raw`` does not split as expected.
    """
    if not new:
        return b"{}\n"
    if not old or not raw.startswith(b"{\n") or not raw.endswith(b"\n}\n"):
        return None
    starts = [m.start() for m in _TOP_KEY_RE.finditer(raw)]
    if len(starts) != len(old):
        return None
    chunks: dict[str, bytes] = {}
    ends = [s - 2 for s in starts[1:]] + [len(raw) - 3]  # drop ",\n" and "\n}\n"
    for key, start, end in zip(old, starts, ends, strict=True):
        if not raw.startswith(encode_basestring(key).encode("utf-8"), start + 2):
            return None
        chunks[key] = raw[start:end]
    parts: list[bytes] = []
    for key, value in new.items():
        if key in chunks and value == old[key]:
            parts.append(chunks[key])
        else:
            out = ["  ", encode_basestring(key), ": "]
            _encode(value, "  ", out)
            try:
                parts.append("".join(out).encode("utf-8"))
            except UnicodeEncodeError:
                return None
    return b"{\n" + b",\n".join(parts) + b"\n}\n"


_CONSTANTS = {True: "true", False: "false", None: "null"}


def _encode(value: Any, indent: str, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None or value is True or value is False:
        out.append(_CONSTANTS[value])
    elif type(value) is int:
        out.append(int.__repr__(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = indent + "  "
        out.append("{\n" + inner)
        first = True
        for key, item in value.items():
            if not first:
                out.append(",\n" + inner)
            first = False
            out.append(encode_basestring(key) + ": ")
            _encode(item, inner, out)
        out.append("\n" + indent + "}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
            return
        inner = indent + "  "
        out.append("[\n" + inner)
        for i, item in enumerate(value):
            if i:
                out.append(",\n" + inner)
            _encode(item, inner, out)
        out.append("\n" + indent + "]")
    else:  # floats and the rare rest: the stdlib's exact spelling
        out.append(json.dumps(value))
