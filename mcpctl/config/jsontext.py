"""JSON text in and out: positions for the strict validator, and the canonical writer.

:func:`parse_with_positions` records the line and column of values and keys and reports
duplicate keys (which ``json.loads`` silently resolves to the last one). It is a small
recursive-descent parser that leaves strings and numbers to the stdlib decoder, so it
accepts exactly what ``json.loads`` accepts. It runs in time linear in the text: line and
column come from a cursor that only moves forward, and positions are recorded down to
:data:`POSITION_DEPTH` levels (deeper parts report their nearest recorded parent), so a
hostile file nested to the limit costs no more per value than a flat one.

:func:`dump_config` writes the stable on-disk form, and :func:`splice_canonical` rewrites a
file it wrote by copying the text of unchanged entries.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

from mcpctl.jsonenc import encode_indented

__all__ = [
    "MAX_DEPTH",
    "POSITION_DEPTH",
    "JsonPosError",
    "LineIndex",
    "PositionedJson",
    "dump_config",
    "line_col",
    "parse_object_rest",
    "parse_value_positions",
    "parse_with_positions",
    "splice_canonical",
]

PathPart = str | int
Pos = tuple[int, int]

_WS = " \t\n\r"
_WS_RE = re.compile(r"[ \t\n\r]*")
_NEWLINE_RE = re.compile(r"\n")
_decoder = json.JSONDecoder()
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]
MAX_DEPTH = 200
# Deep enough for every path the validator reports (server.auth.scopes[0] is 4 levels).
POSITION_DEPTH = 16


def line_col(text: str, index: int) -> Pos:
    """1-based (line, column) of ``index`` in ``text`` (one look-up; see :class:`LineIndex`)."""
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


class LineIndex:
    """1-based (line, column) of offsets in one text, in linear time over all look-ups.

    Look-ups that move forward (as a parser's do) count only the newlines since the previous
    one (from ``anchor``, an offset whose position is known, at first); a look-up behind it
    uses a table of line starts, built once.
    """

    def __init__(self, text: str, anchor: tuple[int, Pos] = (0, (1, 1))) -> None:
        index, (line, column) = anchor
        self.text = text
        self._offset = index
        self._line = line
        self._line_start = index - column + 1
        self._starts: list[int] | None = None

    def at(self, index: int) -> Pos:
        """(line, column) of ``index``."""
        offset = self._offset
        if index < offset:
            return self._behind(index)
        newlines = self.text.count("\n", offset, index)
        if newlines:
            self._line += newlines
            self._line_start = self.text.rfind("\n", offset, index) + 1
        self._offset = index
        return self._line, index - self._line_start + 1

    def _behind(self, index: int) -> Pos:
        if self._starts is None:
            self._starts = [0, *(m.end() for m in _NEWLINE_RE.finditer(self.text))]
        line = bisect_right(self._starts, index)
        return line, index - self._starts[line - 1] + 1


class JsonPosError(ValueError):
    """Invalid JSON, with the position of the problem."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{message} (line {line}, column {column})")
        self.msg = message
        self.line = line
        self.column = column


@dataclass
class PositionedJson:
    """A parsed document with where each part of it was written.

    ``values`` and ``keys`` hold the positions of the parts at most :data:`POSITION_DEPTH`
    levels deep; ``duplicates`` lists every repeated key, at any depth, with its position and
    that of the previous occurrence.
    """

    value: Any
    values: dict[tuple[PathPart, ...], Pos] = field(default_factory=dict)
    keys: dict[tuple[PathPart, ...], Pos] = field(default_factory=dict)
    duplicates: list[tuple[tuple[PathPart, ...], Pos, Pos]] = field(default_factory=list)

    def member_position(self, name: str) -> Pos | None:
        """Where the key of the top-level member ``name`` was written (its last time)."""
        return self.keys.get((name,))

    def member_text(self, name: str) -> str | None:
        """The text of a member: not kept here."""
        return None

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
    def __init__(self, text: str, lines: LineIndex | None = None, levels: int = 0) -> None:
        self.text = text
        self.size = len(text)
        self.lines = lines or LineIndex(text)
        self.doc = PositionedJson(None)
        self.path: list[PathPart] = []  # where the parser is; positions are keyed by it
        # Positions are recorded this many levels deep (fewer when parsing a nested value).
        self.record = POSITION_DEPTH - levels

    def error(self, message: str, index: int) -> JsonPosError:
        return JsonPosError(message, *self.lines.at(index))

    def skip(self, i: int) -> int:
        if i < self.size and self.text[i] in _WS:
            match = _WS_RE.match(self.text, i)
            assert match is not None  # the pattern matches the empty string
            return match.end()
        return i

    def value(self, i: int, depth: int) -> tuple[Any, int]:
        i = self.skip(i)
        if i >= self.size:
            raise self.error("unexpected end of file: expected a value", i)
        if depth > MAX_DEPTH:
            raise self.error(f"nested deeper than {MAX_DEPTH} levels", i)
        if len(self.path) <= self.record:
            self.doc.values[tuple(self.path)] = self.lines.at(i)
        ch = self.text[i]
        if ch == "{":
            return self.obj(i + 1, depth + 1)
        if ch == "[":
            return self.arr(i + 1, depth + 1)
        try:
            return _decoder.raw_decode(self.text, i)
        except json.JSONDecodeError as exc:
            raise self.error(exc.msg, exc.pos) from None
        except ValueError as exc:  # e.g. an integer with more digits than Python allows
            raise self.error(str(exc), i) from None

    def obj(self, i: int, depth: int) -> tuple[dict[str, Any], int]:
        text, path = self.text, self.path
        result: dict[str, Any] = {}
        seen: dict[str, Pos] = {}  # where each key was last written
        i = self.skip(i)
        if i < self.size and text[i] == "}":
            return result, i + 1
        while True:
            i = self.skip(i)
            if i >= self.size or text[i] != '"':
                raise self.error("expected a property name in double quotes", i)
            key_pos = self.lines.at(i)
            try:
                key, i = _scanstring(text, i + 1)
            except json.JSONDecodeError as exc:
                raise self.error(exc.msg, exc.pos) from None
            path.append(key)
            recorded = len(path) <= self.record
            if key in seen:
                here = tuple(path)
                self.doc.duplicates.append((here, key_pos, seen[key]))
                if recorded:
                    self._forget(here, result[key])
            seen[key] = key_pos
            if recorded:
                self.doc.keys[tuple(path)] = key_pos
            i = self.skip(i)
            if i >= self.size or text[i] != ":":
                raise self.error("expected ':' after a property name", i)
            result[key], i = self.value(i + 1, depth)
            path.pop()
            i = self.skip(i)
            if i < self.size and text[i] == ",":
                self._no_trailing_comma(i, "}")
                i += 1
                continue
            if i < self.size and text[i] == "}":
                return result, i + 1
            raise self.error("expected ',' or '}' after a property value", i)

    def arr(self, i: int, depth: int) -> tuple[list[Any], int]:
        text, path = self.text, self.path
        result: list[Any] = []
        i = self.skip(i)
        if i < self.size and text[i] == "]":
            return result, i + 1
        while True:
            path.append(len(result))
            item, i = self.value(i, depth)
            result.append(item)
            path.pop()
            i = self.skip(i)
            if i < self.size and text[i] == ",":
                self._no_trailing_comma(i, "]")
                i += 1
                continue
            if i < self.size and text[i] == "]":
                return result, i + 1
            raise self.error("expected ',' or ']' after an array element", i)

    def _forget(self, path: tuple[PathPart, ...], replaced: Any) -> None:
        # A repeated key replaces the earlier value: the positions of its parts go. Each
        # replaced value is walked once, so this stays linear however many keys repeat.
        if len(path) >= self.record:
            return
        if isinstance(replaced, dict):
            parts: Any = replaced.items()
        elif isinstance(replaced, list):
            parts = enumerate(replaced)
        else:
            return
        for part, child in parts:
            sub = (*path, part)
            self.doc.values.pop(sub, None)
            self.doc.keys.pop(sub, None)
            self._forget(sub, child)

    def _no_trailing_comma(self, comma: int, closer: str) -> None:
        after = self.skip(comma + 1)
        if after < self.size and self.text[after] == closer:
            raise self.error(f"trailing comma before '{closer}' (JSON allows none)", comma)


def parse_with_positions(text: str) -> PositionedJson:
    """Parse ``text`` as one JSON document, recording positions and duplicate keys.

    Raises:
        JsonPosError: the text is not valid JSON (or nests deeper than 200 levels).
    """
    parser = _Parser(text)
    parser.doc.value, end = parser.value(0, 0)
    end = parser.skip(end)
    if end != len(text):
        raise parser.error("extra data after the JSON document", end)
    return parser.doc


def parse_value_positions(
    text: str, start: int, *, lines: LineIndex | None = None, levels: int = 0
) -> tuple[PositionedJson, int]:
    """The positions of the one JSON value at offset ``start`` of ``text``, and its end.

    Paths are relative to that value; positions are in ``text`` (``lines`` may carry an anchor
    near ``start``). ``levels`` is how deeply the value is nested in its document: the depth
    limit and :data:`POSITION_DEPTH` count from the document's top.

    Raises:
        JsonPosError: the value is not valid JSON (or nests too deep).
    """
    parser = _Parser(text, lines, levels)
    parser.doc.value, end = parser.value(start, levels)
    return parser.doc, end


def parse_object_rest(text: str, start: int, *, lines: LineIndex | None = None) -> None:
    """Parse the rest of a document whose top level is an object, from ``start`` (just after
    its ``{``, or at the key of a member) on: from a member on, it raises what
    :func:`parse_with_positions` would (for saying where a large document goes wrong).

    Raises:
        JsonPosError: the rest is not valid JSON.
    """
    parser = _Parser(text, lines, 1)
    _, end = parser.obj(start, 1)
    end = parser.skip(end)
    if end != len(text):
        raise parser.error("extra data after the JSON document", end)


# --- the canonical writer ---------------------------------------------------------------


def dump_config(data: dict[str, Any]) -> bytes:
    """The stable on-disk form: 2-space indent, key order kept, trailing newline.

    Byte for byte what ``json.dumps(data, indent=2, ensure_ascii=False)`` gives, but
    faster: with ``indent`` set, the stdlib falls back to its pure-Python encoder, which
    costs a 1,000-entry ``mcpctl add`` a noticeable share of its budget.
    """
    out: list[str] = []
    encode_indented(data, out)
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
            encode_indented(value, out, "  ")
            try:
                parts.append("".join(out).encode("utf-8"))
            except UnicodeEncodeError:
                return None
    return b"{\n" + b",\n".join(parts) + b"\n}\n"
