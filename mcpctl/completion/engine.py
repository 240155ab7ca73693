"""What a TAB press may insert: the command table walked along the words typed so far.

:func:`complete` follows the words through ``tree.json`` (commands, their options and
arguments; see :mod:`~mcpctl.completion.generate`) and lists what fits the word under the
cursor, reading dynamic values through :mod:`~mcpctl.completion.sources`.
:mod:`~mcpctl.completion.protocol` gets the words from the shell and prints the reply.

This runs on every TAB press, so it imports only the standard library's os and json,
mcpctl.text, and what :mod:`~mcpctl.completion.sources` needs for the value asked for;
never the CLI framework, pydantic or the MCP SDK (tests/completion checks the modules).
"""

from __future__ import annotations

import os
from typing import Any

from mcpctl.completion import sources

__all__ = ["Reply", "complete", "load_tree"]

TREE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tree.json")

Pairs = list[tuple[str, str]]


class Reply:
    """What a TAB press offers: candidates (value, description) or file names.

    ``mode`` is ``words``, ``files`` or ``dirs``; for files, ``partial`` is the path typed
    so far and ``prefix`` what precedes it in the word (``--config=``).
    """

    __slots__ = ("candidates", "mode", "partial", "prefix")

    def __init__(
        self, candidates: Pairs | None = None, mode: str = "words", partial: str = "",
        prefix: str = "",
    ) -> None:  # fmt: skip
        self.candidates = candidates or []
        self.mode = mode
        self.partial = partial
        self.prefix = prefix


def load_tree() -> dict[str, Any]:
    """The command table (``tree.json``).

    Raises:
        OSError, ValueError: the package's ``tree.json`` is missing or damaged.
    """
    import json

    with open(TREE_FILE, "rb") as file:
        tree: dict[str, Any] = json.loads(file.read())
    return tree


def _options(tree: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    return [*node["options"], *tree["options"]]


def _find_option(tree: dict[str, Any], node: dict[str, Any], name: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = next(
        (o for o in _options(tree, node) if name in o["names"]), None
    )
    return found


def _arg_at(node: dict[str, Any], index: int) -> dict[str, Any] | None:
    args: list[dict[str, Any]] = node["args"]
    for i, arg in enumerate(args):
        if arg["many"] or i == index:
            return arg
    return None


class _State:
    """Where the words so far lead: the command, its positionals, the options given."""

    def __init__(self, tree: dict[str, Any]) -> None:
        self.tree = tree
        self.path = ""
        self.node: dict[str, Any] = tree["commands"][""]
        self.positionals: list[str] = []
        self.used: set[str] = set()
        self.config: str | None = None
        self.after_dashdash = False

    def enter(self, name: str) -> bool:
        path = f"{self.path} {name}".strip()
        node = self.tree["commands"].get(path)
        if node is None:
            return False
        self.path, self.node, self.used = path, node, set()
        return True

    def walk(self, words: list[str]) -> dict[str, Any] | None:
        """Follow ``words``; returns the option still waiting for its value, if any."""
        pending: dict[str, Any] | None = None
        for word in words:
            if pending is not None:
                if "--config" in pending["names"]:
                    self.config = word
                pending = None
            elif self.after_dashdash:
                self.positionals.append(word)
            elif word == "--":
                self.after_dashdash = True
            elif word.startswith("-") and word != "-":
                name, eq, value = word.partition("=")
                option = _find_option(self.tree, self.node, name if eq else word)
                if option is None:
                    continue
                self.used.update(option["names"])
                if option["names"][0] == "--config" and eq:
                    self.config = value
                elif option["value"] is not None and not eq:
                    pending = option
            elif not self.positionals and self.node["commands"] and self.enter(word):
                continue
            elif not self.positionals and "default" in self.node:
                self.enter(self.node["default"])
                self.positionals.append(word)
            else:
                self.positionals.append(word)
        return pending


def _matching(values: Pairs, prefix: str) -> Pairs:
    return [(v, d) for v, d in dict(values).items() if v.startswith(prefix)]


def _values(kind: Any, prefix: str, state: _State) -> Reply:
    """What the value of ``kind`` (see :mod:`~mcpctl.completion.generate`) may be."""
    if isinstance(kind, list):
        return Reply(_matching([(c, "") for c in kind], prefix))
    if kind in ("path", "dir"):
        return Reply(mode="files" if kind == "path" else "dirs", partial=prefix)
    found: Pairs = []
    if kind.startswith("server"):
        found = sources.servers(sources.config_path(state.config), kind)
        if state.node["args"] and state.node["args"][-1]["many"]:
            found = [(v, d) for v, d in found if v not in state.positionals]
    elif kind == "group":
        found = sources.groups(sources.config_path(state.config))
    elif kind == "member" and state.positionals:
        found = sources.members(sources.config_path(state.config), state.positionals[0])
        found = [(v, d) for v, d in found if v not in state.positionals[1:]]
    elif kind == "tool" and state.positionals:
        found = sources.tool_names(sources.config_path(state.config), state.positionals[0])
    elif kind == "secret":
        found = sources.placeholders(sources.config_path(state.config))
    elif kind == "target":
        found = [(t, "") for t in sources.targets()]
    elif kind == "registry":
        found = [(r, "") for r in sources.registries()]
    elif kind == "package":
        found = [(p, "") for p in sources.packages(prefix)]
    return Reply(_matching(found, prefix))


def complete(tree: dict[str, Any], words: list[str], current: str) -> Reply:
    """What may replace ``current``, the word under the cursor, after ``words`` (the words
    before it, the program's name left out)."""
    state = _State(tree)
    pending = state.walk(words)
    if pending is not None:
        return _values(pending["value"], current, state)
    node = state.node
    if current.startswith("-") and not state.after_dashdash:
        name, eq, value = current.partition("=")
        if eq:
            option = _find_option(tree, node, name)
            if option is None or option["value"] is None:
                return Reply()
            reply = _values(option["value"], value, state)
            reply.candidates = [(f"{name}={v}", d) for v, d in reply.candidates]
            reply.prefix = f"{name}="
            return reply
        offered = [
            (n, o["help"])
            for o in _options(tree, node)
            if o["repeat"] or not state.used.intersection(o["names"])
            for n in o["names"]
        ]
        return Reply(_matching(offered, current))
    if node["commands"] and not state.positionals:
        nodes = tree["commands"]
        subs = [(n, nodes[f"{state.path} {n}".strip()]["help"]) for n in node["commands"]]
        reply = Reply(_matching(subs, current))
        if "default" in node:
            state.enter(node["default"])
            arg = _arg_at(state.node, 0)
            if arg is not None:
                reply.candidates += _values(arg["value"], current, state).candidates
        return reply
    arg = _arg_at(node, len(state.positionals))
    if arg is None:
        return Reply()
    return _values(arg["value"], current, state)
