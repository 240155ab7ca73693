"""JSON with positions: what the strict validator needs and ``json.loads`` does not give.

:func:`parse_with_positions` records the line and column of every value and key and
reports duplicate keys (which ``json.loads`` silently resolves to the last one). It is
a small recursive-descent parser that leaves strings and numbers to the stdlib decoder,
so it accepts exactly what ``json.loads`` accepts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JsonPosError", "PositionedJson", "line_col", "parse_with_positions"]

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
                i += 1
                continue
            if i < len(self.text) and self.text[i] == "]":
                return i + 1
            raise self.error("expected ',' or ']' after an array element", i)


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
