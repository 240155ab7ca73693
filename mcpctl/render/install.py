"""``render --install``: merge the rendered servers into a client's own config file.

Only the client's MCP section changes, and in it only the servers mcpctl manages (the names
in ``external-mcps.json``): every other key keeps its value and order, and servers the user
added to the client by hand stay unless ``replace`` asks to drop them. In a JSON file (with
comments or not) only the text of the section is replaced (:mod:`mcpctl.render.jsonedit`):
the rest of the file, its comments included, stays byte for byte. A TOML file is edited
with tomlkit, which keeps comments; a YAML file is rewritten, so one with comments is
refused. The merge is pure (text in, text out); :class:`~mcpctl.config.store.FileStore`
writes the result, with a backup for ``undo``. Every file is read with the limits of
:mod:`mcpctl.render.readers`.
"""

from __future__ import annotations

import copy
import json
import operator
import re
import secrets
from collections.abc import Callable, Collection, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpctl.errors import UsageError

if TYPE_CHECKING:
    from mcpctl.render.base import ClientTarget

__all__ = ["Merged", "merge_install"]

_INDENT_RE = re.compile(r"^\{\s*\n([ \t]+)\S", re.MULTILINE)
# A YAML comment: "#" at the start of a line or after a blank (a "#" inside a quoted value may
# match too, which only makes install refuse a file it could have kept).
_YAML_COMMENT_RE = re.compile(r"(?:^|\s)#", re.MULTILINE)


@dataclass
class Merged:
    """The client's file after the merge, and what changed in its MCP section."""

    text: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # the client's own servers, left alone
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether any server was added, updated or removed."""
        return bool(self.added or self.updated or self.removed)


def merge_install(
    target: ClientTarget,
    current: str | None,
    rendered: str,
    *,
    managed: Collection[str],
    replace: bool = False,
    where: str = "the client's config",
) -> Merged:
    """``current`` (the client's file, ``None`` when there is none) with the servers of
    ``rendered`` (the target's full document) merged into ``target.section``.

    ``managed`` are the names mcpctl owns: each is set to its rendering, or removed when the
    rendering has no such server (it is disabled or the target cannot express it). Other
    servers are kept, unless ``replace``.

    Raises:
        UsageError: ``current`` is not a document of this client (or is over a limit of
            :mod:`mcpctl.render.readers`), or is YAML with comments that a rewrite would lose.
    """
    if target.file_format == "toml":
        return _merge_toml(target, current, rendered, managed, replace, where)
    yaml = target.file_format == "yaml"
    blank = not current or not current.strip()
    doc: dict[str, Any] = (
        {} if blank else (_load_yaml if yaml else _load_json)(current or "", where)
    )
    new = _load_yaml(rendered, "the rendering") if yaml else json.loads(rendered)
    lists = [(key, id_key) for key, id_key in target.keyed_lists.items()
             if (key,) != target.section]  # fmt: skip
    had_section = _has(doc, target.section)
    before = {key: copy.deepcopy(doc.get(key)) for key, _ in lists}
    result = Merged("")
    _merge_section(doc, new, target, managed, replace, result, where)
    for key, id_key in lists:
        _merge_list(doc, new.get(key), key, id_key, where)
    if yaml:
        result.text = _dump_yaml(doc)
    elif blank or current is None:
        result.text = dump_json(doc, 2)
    else:
        edits = [target.section] if result.changed or not had_section else []
        edits += [(key,) for key, _ in lists if doc.get(key) != before[key]]
        result.text, dropped = _edited(current, doc, edits)
        result.warnings += [
            f"{where}: the comments inside {'.'.join(path)} were not kept (mcpctl rewrites "
            "that part; the rest of the file is kept as it was)"
            for path in dropped
        ]
    return result


def _has(doc: dict[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = doc
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def _edited(
    current: str, doc: dict[str, Any], paths: list[tuple[str, ...]]
) -> tuple[str, list[tuple[str, ...]]]:
    """``current`` with the value of each of ``paths`` in it set to ``doc``'s, and nothing
    else changed (comments included); and the paths whose old value had comments."""
    from mcpctl.render.jsonedit import set_value

    indent = _indent_of(current)
    unit = " " * indent if isinstance(indent, int) else indent
    text = current
    dropped: list[tuple[str, ...]] = []
    for path in paths:
        value: Any = doc
        for key in path:
            value = value[key]
        text, lost = set_value(text, path, value, lambda v: dump_json(v, indent).rstrip("\n"),
                               unit)  # fmt: skip
        if lost:
            dropped.append(path)
    return text, dropped


class WrittenNumber(float):
    """A number with a fraction or an exponent as the file wrote it (``1e400``, ``1.50``):
    written back the same, not as Python's float (``inf`` would become ``Infinity``, which
    is not JSON). It compares as the float it reads as."""

    text: str

    def __new__(cls, text: str) -> WrittenNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number


def _load_json(text: str, where: str) -> dict[str, Any]:
    from mcpctl.render.readers import DocumentError, load_json

    try:
        # Duplicate keys: json.loads keeps the last, so a rewrite would drop the first.
        data = load_json(text, unique_keys=True, surrogates=False, parse_float=WrittenNumber,
                         parse_constant=WrittenNumber)  # fmt: skip
    except DocumentError as exc:
        what = f"not valid JSON: {exc.problem}" if exc.syntax else exc.problem
        raise UsageError(f"{where}:{exc.line}:{exc.column}: {what}" if exc.line
                         else f"{where}: {what}") from None  # fmt: skip
    if not isinstance(data, dict):
        raise UsageError(f"{where} is not a JSON object")
    return data


def dump_json(doc: Any, indent: str | int) -> str:
    """``doc`` as JSON text (and a newline), every :class:`WrittenNumber` as it was written."""
    marks: dict[str, str] = {}
    token = f"mcpctl-number-{secrets.token_hex(8)}-"

    def swap(value: Any) -> Any:
        if isinstance(value, WrittenNumber):
            mark = f"{token}{len(marks)}"
            marks[f'"{mark}"'] = value.text
            return mark
        return value

    doc = _mapped(doc, swap)
    try:
        text = json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"
    except RecursionError:
        raise UsageError("the file is nested too deeply for mcpctl to rewrite it") from None
    if marks:
        text = re.sub(f'"{re.escape(token)}\\d+"', lambda m: marks[m[0]], text)
    return text


def _mapped(doc: Any, fn: Callable[[Any], Any]) -> Any:
    """A copy of ``doc`` with ``fn`` applied to every leaf (iterative: any depth json.loads
    produced is fine)."""
    if not isinstance(doc, dict | list):
        return fn(doc)
    top: Any = {} if isinstance(doc, dict) else []
    stack: list[tuple[Any, Any]] = [(doc, top)]
    while stack:
        source, copy = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, value in items:
            if isinstance(value, dict | list):
                child: Any = {} if isinstance(value, dict) else []
                stack.append((value, child))
            else:
                child = fn(value)
            if isinstance(copy, dict):
                copy[key] = child
            else:
                copy.append(child)
    return top


def _load_yaml(text: str, where: str) -> dict[str, Any]:
    from mcpctl.render.readers import DocumentError, load_yaml

    if _YAML_COMMENT_RE.search(text):
        raise UsageError(
            f"{where} has comments, which a rewrite of YAML would lose",
            hint="render to a file with -o and copy the servers over by hand",
        )
    try:
        data = load_yaml(text)
    except DocumentError as exc:
        raise UsageError(f"{where} is not valid YAML: {exc}" if exc.syntax
                         else f"{where}: {exc}") from None  # fmt: skip
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{where} is not a YAML mapping")
    return data


def _dump_yaml(doc: dict[str, Any]) -> str:
    from mcpctl.render.yamltext import dump_yaml

    return dump_yaml(doc)


def _indent_of(text: str) -> str | int:
    match = _INDENT_RE.search(text)
    return match[1] if match else 2


def _node(doc: dict[str, Any], path: tuple[str, ...], where: str, empty: Any) -> Any:
    node: Any = doc
    for i, key in enumerate(path):
        child = node.get(key)
        if child is None:
            child = node[key] = empty() if i == len(path) - 1 else {}
        if not isinstance(child, dict) and not (i == len(path) - 1 and isinstance(child, list)):
            dotted = ".".join(path[: i + 1])
            raise UsageError(f"{where}: {dotted} is not an object; mcpctl will not replace it")
        node = child
    return node


def _merge_section(
    doc: dict[str, Any],
    new: Mapping[str, Any],
    target: ClientTarget,
    managed: Collection[str],
    replace: bool,
    result: Merged,
    where: str,
) -> None:
    path = target.section
    id_key = target.keyed_lists.get(path[0]) if len(path) == 1 else None
    ours: Any = new
    for key in path:
        ours = ours.get(key) or {}
    node = _node(doc, path, where, list if id_key else dict)
    if isinstance(ours, list) or isinstance(node, list):
        # A list of servers, each named by id_key (Continue's mcpServers).
        if not id_key or not isinstance(node, list):
            kind, dotted = ("a list" if id_key else "an object"), ".".join(path)
            raise UsageError(f"{where}: {dotted} is not {kind}; mcpctl will not replace it")
        named = {item.get(id_key): item for item in node if isinstance(item, dict)}
        anonymous = [item for item in node if not isinstance(item, dict) or id_key not in item]
        servers = {str(k): v for k, v in named.items() if k is not None}
        ours = {str(item.get(id_key)): item for item in ours if isinstance(item, dict)}
        _merge_servers(servers, ours, managed, replace, result)
        node[:] = [*anonymous, *servers.values()]
        return
    _merge_servers(node, ours, managed, replace, result)


def _merge_servers(
    servers: MutableMapping[str, Any],
    ours: Mapping[str, Any],
    managed: Collection[str],
    replace: bool,
    result: Merged,
    *,
    same: Callable[[Any, Any], bool] = operator.eq,
) -> None:
    for name in list(servers):
        if name in ours:
            continue
        if name in managed or replace:
            del servers[name]
            result.removed.append(name)
        else:
            result.kept.append(name)
    for name, value in ours.items():
        if name not in servers:
            result.added.append(name)
        elif not same(servers[name], value):
            result.updated.append(name)
        else:
            continue
        servers[name] = value


def _merge_list(doc: dict[str, Any], items: Any, key: str, id_key: str, where: str) -> None:
    if not isinstance(items, list) or not items:
        return
    existing = doc.get(key)
    if existing is None:
        existing = doc[key] = []
    if not isinstance(existing, list):
        raise UsageError(f"{where}: {key} is not a list; mcpctl will not replace it")
    index = {item.get(id_key): i for i, item in enumerate(existing) if isinstance(item, dict)}
    for item in items:
        at = index.get(item.get(id_key))
        if at is None:
            existing.append(item)
        else:
            existing[at] = item


def _merge_toml(
    target: ClientTarget,
    current: str | None,
    rendered: str,
    managed: Collection[str],
    replace: bool,
    where: str,
) -> Merged:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from mcpctl.render.readers import DocumentError, load_toml

    try:
        load_toml(current or "")  # the limits every client file is read with, first
        doc = tomlkit.parse(current or "")
    except DocumentError as exc:
        raise UsageError(f"{where} is not valid TOML: {exc}" if exc.syntax
                         else f"{where}: {exc}") from None  # fmt: skip
    except TOMLKitError as exc:
        raise UsageError(f"{where} is not valid TOML: {exc}") from None
    new = tomlkit.parse(rendered)
    result = Merged("")
    node: Any = doc
    for i, key in enumerate(target.section):
        child = node.get(key)
        if child is None:
            child = tomlkit.table(is_super_table=True)
            node[key] = child
        if not isinstance(child, dict):
            dotted = ".".join(target.section[: i + 1])
            raise UsageError(f"{where}: {dotted} is not a table; mcpctl will not replace it")
        node = child
    ours: Any = new
    for key in target.section:
        ours = ours.get(key) or {}
    # Compare values, not tomlkit's formatting; an unchanged table keeps its comments.
    _merge_servers(node, ours, managed, replace, result, same=lambda a, b: a.unwrap() == b.unwrap())
    result.text = tomlkit.dumps(doc)
    return result
