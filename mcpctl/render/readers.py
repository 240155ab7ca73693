"""Reading other tools' files: one reader per format, one limit for all.

A client's config file (``import``, ``health --as``, ``render --install``), a proxy's config, a
ToolHive manifest: any of them may come from a cloned repository, so each is read as
someone else's words. The readers here are the only way mcpctl parses them -- JSON (with or
without comments), TOML, YAML -- and they all refuse, with a :class:`DocumentError` that says
what is wrong and where:

* text that is not the format (the parser's message, with the line and column it knows);
* nesting deeper than :data:`MAX_DEPTH` levels, the limit of mcpctl's own config: whatever
  walks a document recurses, and a parser that stops only at Python's stack would let a
  document just under that crash the code that reads it;
* YAML aliases that refer to themselves, or that make the document more than
  :data:`MAX_ALIAS_VALUES` values bigger than what is written: a few hundred bytes of nested
  aliases (a "billion laughs") stand for billions of values, which anything that walks the
  document would build.

Each reader takes time linear in its text (whose size :mod:`mcpctl.config.safefile` caps
before it is read).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mcpctl.config.jsontext import MAX_DEPTH
from mcpctl.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "MAX_ALIAS_VALUES",
    "MAX_DEPTH",
    "DocumentError",
    "check_depth",
    "load_json",
    "load_toml",
    "load_yaml",
    "load_yaml_stream",
]

#: How many values YAML aliases may add to a document, beyond the ones written in it.
MAX_ALIAS_VALUES = 10_000


class DocumentError(ValueError):
    """A document mcpctl does not read: what is wrong (``problem``) and where (1-based
    ``line`` and ``column``, 0 when unknown). ``syntax``: the text is not of the format at all
    (rather than over a limit, or holding what a rewrite would lose)."""

    def __init__(self, problem: str, line: int = 0, column: int = 0, *, syntax: bool = True):
        self.problem = problem
        self.line = line
        self.column = column
        self.syntax = syntax
        super().__init__(problem + (f" (line {line}, column {column})" if line else ""))

    def usage(self, what: str) -> UsageError:
        """This error as the :class:`~mcpctl.errors.UsageError` of a file of ``what`` (``a
        Cursor file``): ``this is not a Cursor file: ...`` for bad text, the bare problem
        for a limit."""
        return UsageError(f"this is not {what}: {self}" if self.syntax else str(self))


def _too_deep(line: int = 0, column: int = 0) -> DocumentError:
    return DocumentError(f"nested deeper than {MAX_DEPTH} levels", line, column, syntax=False)


def _children(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        return iter(value.values())
    return iter(value)


def check_depth(value: Any) -> None:
    """Refuse a value (of a JSON or TOML document) with a part inside more than
    :data:`MAX_DEPTH` lists or objects. Iterative: any depth a parser produced is fine.

    Raises:
        DocumentError: it is nested deeper (without a position).
    """
    if not isinstance(value, dict | list):
        return
    stack = [_children(value)]  # one per list or object the next part is inside
    while stack:
        child = next(stack[-1], stack)
        if child is stack:  # that container is done
            stack.pop()
            continue
        # An empty list at the limit is no part inside it: the positional parser and YAML agree
        if len(stack) > MAX_DEPTH:
            raise _too_deep()
        if isinstance(child, dict | list):
            stack.append(_children(child))


# --- JSON --------------------------------------------------------------------------------------


def load_json(
    text: str,
    *,
    comments: bool = True,
    unique_keys: bool = False,
    surrogates: bool = True,
    **hooks: Any,
) -> Any:
    """One JSON document; with ``comments``, JSON with comments and trailing commas as VS Code
    reads it (:mod:`mcpctl.render.jsonc`). A leading byte order mark is skipped. ``hooks``
    go to :func:`json.loads`.

    With ``unique_keys``, a key written twice in one object is refused (``json.loads`` keeps
    the last, so a rewrite would lose the first); without ``surrogates``, a lone surrogate
    escape (``"\\ud800"``: valid JSON, but no character that could be written back).

    Raises:
        DocumentError: not such a document, nested deeper than :data:`MAX_DEPTH`, a repeated
            key, a lone surrogate; with the line and column.
    """
    from mcpctl.render.jsonc import strip_jsonc

    text = text.removeprefix("\ufeff")
    repeated: list[str] = []
    if unique_keys:

        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            obj = dict(items)  # in C; only a repeated key costs more
            if len(obj) != len(items):
                repeated.append("")
            return obj

        hooks["object_pairs_hook"] = pairs
    plain = text
    try:
        try:
            data = json.loads(text, **hooks)
        except json.JSONDecodeError:
            if not comments:
                raise
            plain = strip_jsonc(text)
            data = json.loads(plain, **hooks)
        check_depth(data)
    except json.JSONDecodeError as exc:
        raise DocumentError(exc.msg, exc.lineno, exc.colno) from None
    except (ValueError, RecursionError):
        # Too deep for Python's stack or for the limit, or a number Python refuses: the
        # positional parser says where (it stops at MAX_DEPTH).
        raise _located(strip_jsonc(text) if comments else text) from None
    if not surrogates:
        _no_lone_surrogate(plain)
    if repeated:
        raise _repeated(plain)
    return data


def _located(text: str) -> DocumentError:
    from mcpctl.config.jsontext import JsonPosError, parse_with_positions

    try:
        parse_with_positions(text)
    except JsonPosError as exc:
        if exc.msg == _too_deep().problem:  # the parser's words for the same limit
            return _too_deep(exc.line, exc.column)
        return DocumentError(exc.msg, exc.line, exc.column)
    return _too_deep()  # pragma: no cover - what fails json.loads fails the parser too


def _no_lone_surrogate(text: str) -> None:
    from mcpctl.config.jsontext import line_col
    from mcpctl.config.safefile import lone_surrogate

    found = lone_surrogate(text)
    if found is not None:
        escape, index = found
        raise DocumentError(
            f"{escape} is a lone surrogate: a valid JSON escape, but not a character",
            *line_col(text, index),
            syntax=False,
        )


def _repeated(text: str) -> DocumentError:
    """The error for a key written twice, at its second place, naming the first."""
    from mcpctl.config.jsontext import parse_with_positions
    from mcpctl.config.model import format_path
    from mcpctl.text import escape_controls

    path, (line, column), (first, _) = parse_with_positions(text).duplicates[0]
    shown = escape_controls(format_path(path), keep_newlines=False)
    return DocumentError(
        f"key {shown} is written more than once (lines {first} and {line}); a rewrite "
        "would keep only the last",
        line,
        column,
        syntax=False,
    )


# --- TOML --------------------------------------------------------------------------------------


def load_toml(text: str) -> dict[str, Any]:
    """One TOML document (a leading byte order mark skipped).

    Raises:
        DocumentError: not TOML (the parser's message says where), or nested deeper than
            :data:`MAX_DEPTH`.
    """
    import tomllib

    try:
        data = tomllib.loads(text.removeprefix("\ufeff"))
    except tomllib.TOMLDecodeError as exc:
        raise DocumentError(str(exc)) from None
    except RecursionError:
        raise _too_deep() from None
    check_depth(data)
    return data


# --- YAML --------------------------------------------------------------------------------------


def load_yaml(text: str) -> Any:
    """One YAML document (``None`` when empty; a leading byte order mark skipped), read with
    the safe loader (in C when PyYAML has libyaml).

    Raises:
        DocumentError: not YAML, a lone surrogate, nested deeper than :data:`MAX_DEPTH`, an
            alias that refers to itself, or aliases that add more than
            :data:`MAX_ALIAS_VALUES` values.
    """
    docs = _yaml_documents(text, single=True)
    return docs[0] if docs else None


def load_yaml_stream(text: str) -> list[Any]:
    """Every document of a YAML stream (``---`` separated).

    Raises:
        DocumentError: as :func:`load_yaml`, for any of its documents.
    """
    return _yaml_documents(text, single=False)


def _yaml_documents(text: str, *, single: bool) -> list[Any]:
    import yaml

    from mcpctl.render.yamltext import yaml_loader

    text = text.removeprefix("\ufeff")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # the C loader fails on it with an encoding error
        from mcpctl.config.jsontext import line_col

        raise DocumentError("a lone surrogate", *line_col(text, exc.start)) from None
    loader = yaml_loader()(text)
    docs: list[Any] = []
    try:
        if single:
            node = loader.get_single_node()
            nodes = [node] if node is not None else []
        else:
            nodes = []
            while loader.check_node():
                nodes.append(loader.get_node())
        for node in nodes:
            _measure(node)
            docs.append(loader.construct_document(node))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "not YAML"
        if exc.context and exc.problem:
            problem = f"{exc.context}: {exc.problem}"
        where = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        raise DocumentError(problem, *where) from None
    except yaml.YAMLError as exc:
        raise DocumentError(str(exc)) from None
    finally:
        loader.dispose()
    return docs


def _measure(root: Any) -> None:
    """Refuse a composed YAML document whose aliases refer to themselves or add more than
    :data:`MAX_ALIAS_VALUES` values, or that is nested deeper than :data:`MAX_DEPTH` (aliases
    expanded): each node is measured once, however often aliases repeat it.

    Raises:
        DocumentError: where the alias or the deepest part was written.
    """
    size: dict[int, int] = {}  # node -> values in it, aliases expanded
    height: dict[int, int] = {}  # node -> levels of lists and mappings in it
    open_: set[int] = set()  # the nodes being measured: one met again is its own alias
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        kids = _kids(node)
        if done:
            open_.discard(key)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            height[key] = 1 + max((height[id(k)] for k in kids), default=0) if kids else 0
            if height[key] > MAX_DEPTH:
                raise _too_deep(*_at(node))
            continue
        if key in size:
            continue
        if key in open_:
            raise DocumentError("an alias refers to the value it is part of", *_at(node),
                                syntax=False)  # fmt: skip
        open_.add(key)
        stack.append((node, True))
        stack += [(k, False) for k in kids]
    added = size[id(root)] - len(size)
    if added > MAX_ALIAS_VALUES:
        raise DocumentError(
            f"its aliases stand for {added:,} values more than are written, over the limit "
            f"of {MAX_ALIAS_VALUES:,} (an alias bomb)",
            syntax=False,
        )


def _kids(node: Any) -> list[Any]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _at(node: Any) -> tuple[int, int]:
    mark = node.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
