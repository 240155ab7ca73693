"""Positions on demand: a large config file parsed at C speed, line and column where needed.

:func:`index_document` parses a JSON object document member by member with the stdlib
decoder (written in C), noting only where each top-level member starts and whether it repeats
a key anywhere. The line and column of anything inside a member come from the position-
tracking parser of :mod:`mcpctl.config.jsontext`, run on that member alone the first time a
position inside it is asked for. A 100,000-entry file thus costs a ``json.loads`` and a pass
over its top-level keys; only the members with something to report are parsed again.

The positions are the ones :func:`~mcpctl.config.jsontext.parse_with_positions` gives, and so
are the duplicates and, for invalid text, the error (the position-tracking parser takes over
at the member where the decoder failed). The one difference is depth: inside a member, nesting
is limited only by the stdlib decoder, as for ``json.loads``; a member nested deeper than
:data:`~mcpctl.config.jsontext.MAX_DEPTH` has no positions inside (they fall back to its key).
"""

from __future__ import annotations

import gc
import json
import re
from typing import Any, NamedTuple, Protocol

from mcpctl.config.jsontext import (
    JsonPosError,
    LineIndex,
    PathPart,
    Pos,
    PositionedJson,
    parse_object_rest,
    parse_value_positions,
    parse_with_positions,
)

__all__ = ["JsonIndex", "Positions", "index_document"]

JsonPath = tuple[PathPart, ...]
_WS_RE = re.compile(r"[ \t\n\r]*")
_COLON_RE = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
# After a member's value: the next one, or the end of the document (only white space after).
_AFTER_VALUE_RE = re.compile(r"[ \t\n\r]*(?:(,)[ \t\n\r]*|(})[ \t\n\r]*\Z)")
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]


class Positions(Protocol):
    """A parsed document that knows where its parts were written."""

    value: Any
    duplicates: list[tuple[JsonPath, Pos, Pos]]

    def position(self, path: JsonPath, *, prefer_key: bool = False) -> Pos | None:
        """Where ``path`` (or its nearest existing parent) was written."""
        ...

    def member_position(self, name: str) -> Pos | None:
        """Where the key of the top-level member ``name`` was written (its last time)."""
        ...

    def member_text(self, name: str) -> str | None:
        """The text of member ``name``, key to value, when the document keeps it."""
        ...


class _Member(NamedTuple):
    key_index: int
    key: Pos
    start: int  # offset of the value
    end: int


class JsonIndex:
    """A JSON object document with the positions of its top-level members; the positions
    inside a member are worked out when first asked for (see the module's docstring)."""

    def __init__(self, text: str, root: Pos) -> None:
        self.text = text
        self.root = root
        self.value: dict[str, Any] = {}
        self.duplicates: list[tuple[JsonPath, Pos, Pos]] = []
        self._members: dict[str, _Member] = {}
        self._parsed: dict[str, PositionedJson | None] = {}

    def member_position(self, name: str) -> Pos | None:
        """Where the key of the top-level member ``name`` was written (its last time)."""
        member = self._members.get(name)
        return member.key if member else None

    def member_text(self, name: str) -> str | None:
        """The text of member ``name`` (its last time), key to value."""
        member = self._members.get(name)
        return self.text[member.key_index : member.end] if member else None

    def position(self, path: JsonPath, *, prefer_key: bool = False) -> Pos | None:
        """Where ``path`` (or its nearest existing parent) was written."""
        name = path[0] if path else None
        member = self._members.get(name) if isinstance(name, str) else None
        if member is None or not isinstance(name, str):
            return self.root
        if len(path) == 1:
            return member.key if prefer_key else self._lines(member).at(member.start)
        inner = self.member_positions(name)
        rel = path[1:]
        while inner is not None and rel:
            if prefer_key and rel in inner.keys:
                return inner.keys[rel]
            if rel in inner.values:
                return inner.values[rel]
            rel = rel[:-1]
            prefer_key = True
        return member.key

    def member_positions(self, name: str) -> PositionedJson | None:
        """The positions inside member ``name`` (paths relative to it), parsed once;
        ``None`` when it nests deeper than the position-tracking parser goes."""
        if name not in self._parsed:
            member = self._members[name]
            lines = self._lines(member)
            try:
                inner, _ = parse_value_positions(self.text, member.start, lines=lines, levels=1)
            except JsonPosError:
                inner = None
            self._parsed[name] = inner
        return self._parsed[name]

    def _lines(self, member: _Member) -> LineIndex:
        return LineIndex(self.text, (member.key_index, member.key))


def index_document(text: str) -> Positions:
    """Parse ``text`` as one JSON document: a :class:`JsonIndex` when it is an object, else
    the full position-tracking parse.

    Raises:
        JsonPosError: the text is not valid JSON, in the words and at the position
            :func:`~mcpctl.config.jsontext.parse_with_positions` gives (it parses from the
            member where the stdlib decoder failed on, not from the start).
    """
    # Building a large document triggers a full cycle collection each time the heap grows by a
    # quarter; a JSON document has no cycles, and skipping them saves a third of the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        indexed = _index(text)
    finally:
        if collecting:
            gc.enable()
    return indexed if indexed is not None else parse_with_positions(text)


def _skip(text: str, i: int) -> int:
    match = _WS_RE.match(text, i)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _index(text: str) -> JsonIndex | None:
    """The index of an object document; ``None`` when the document is not an object.

    Raises:
        JsonPosError: the document is not valid JSON.
    """
    lines = LineIndex(text)
    i = _skip(text, 0)
    if not text.startswith("{", i):
        return None
    reader = _Reader(text, JsonIndex(text, lines.at(i)), lines)
    try:
        return reader.members(i + 1)
    except JsonPosError:
        raise
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        pass
    # Invalid: the position-tracking parser, from the member that failed on, says where and
    # how (the members before it are valid JSON).
    parse_object_rest(text, reader.resume, lines=lines)
    return None  # not reached: the parser agrees that the text is invalid


class _Reader:
    """Reads the members of a top-level object with the stdlib decoder."""

    def __init__(self, text: str, doc: JsonIndex, lines: LineIndex) -> None:
        self.text = text
        self.doc = doc
        self.lines = lines
        self.resume = 0  # where the member being read starts (after the brace, or its key)
        self.repeated = False  # whether the member being read repeats a key inside

    def pairs(self, items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            self.repeated = True
        return obj

    def members(self, i: int) -> JsonIndex:
        """The index, from just after the opening brace; ``ValueError`` when invalid."""
        text, doc, lines = self.text, self.doc, self.lines
        members = doc._members
        decoder = json.JSONDecoder(object_pairs_hook=self.pairs)
        scan: Any = decoder.scan_once  # type: ignore[attr-defined]  # what raw_decode() calls
        self.resume = i
        i = _skip(text, i)
        if text.startswith("}", i) and _skip(text, i + 1) == len(text):
            return doc
        while True:
            if not text.startswith('"', i):
                raise ValueError("expected a property name")
            self.resume = i
            key_index, key_pos = i, lines.at(i)
            key, i = _scanstring(text, i + 1)
            colon = _COLON_RE.match(text, i)
            if colon is None:
                raise ValueError("expected ':'")
            i = colon.end()
            earlier = members.get(key)
            if earlier is not None:
                doc.duplicates.append(((key,), key_pos, earlier.key))
                doc._parsed.pop(key, None)
            self.repeated = False
            try:
                doc.value[key], end = scan(text, i)
            except StopIteration:
                raise ValueError("expected a value") from None
            members[key] = _Member(key_index, key_pos, i, end)
            if self.repeated:  # a key repeats inside this member: its positions are needed now
                inner = doc.member_positions(key)
                if inner is None:
                    raise ValueError("nested too deep")
                doc.duplicates += [((key, *p), at, first) for p, at, first in inner.duplicates]
            after = _AFTER_VALUE_RE.match(text, end)
            if after is None:
                raise ValueError("expected ',' or '}'")
            if after[2]:  # the closing brace, then only white space
                return doc
            i = after.end()
