"""The completion table (``tree.json``), generated from the CLI's command tree.

:func:`build_tree` walks the click command tree the CLI builds (passed in: the library does
not import the CLI) and writes down, per command path, its subcommands, options and
arguments, and what each value completes to. The kinds that need more than the app says
(a server name, a tool, a registry id) are declared in :data:`KINDS`; a key there that no
longer names a parameter is an error, so the table cannot silently go stale.

Value kinds: a list is a fixed set of choices; ``None`` (options only) is a flag; the strings
are ``text`` (anything: no suggestion), ``path``, ``dir``, ``server`` (and ``server-enabled``,
``server-disabled``, ``server-remote``), ``group`` (a group of servers), ``member`` (a
server of the group named by the first argument), ``tool``, ``target``, ``registry``,
``package`` (a server's name in the registries) and ``secret`` (a placeholder of the config).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["KINDS", "build_tree", "dump_tree", "kind_of"]

FORMAT = 1
PACKAGE_TYPES = ["npm", "pypi", "oci", "nuget", "mcpb"]

#: (command path, parameter name) -> value kind, for what the parameter's type does not say.
KINDS: dict[tuple[str, str], str | list[str]] = {
    ("add", "command"): "path",
    ("add", "cwd"): "dir",
    ("add", "from_registry"): "package",
    ("add", "registry"): "registry",
    ("add", "package_type"): PACKAGE_TYPES,
    ("remove", "names"): "server",
    ("enable", "name"): "server-disabled",
    ("disable", "name"): "server-enabled",
    ("get", "name"): "server",
    ("health", "names"): "server",
    ("doctor", "name"): "server",
    ("health", "fail_on"): ["degraded", "needs_auth", "unhealthy", "unavailable"],
    ("tools", "names"): "server",
    ("call", "name"): "server",
    ("call", "tool"): "tool",
    ("upgrade", "names"): "server",
    ("discover", "registry"): "registry",
    ("discover", "package_type"): PACKAGE_TYPES,
    ("show", "spec"): "package",
    ("show", "registry"): "registry",
    ("registry add", "location"): "path",
    ("registry remove", "registry_id"): "registry",
    ("registry sync", "registry_ids"): "registry",
    ("secret set", "name"): "secret",
    ("secret rm", "name"): "secret",
    ("auth login", "name"): "server-remote",
    ("auth status", "names"): "server-remote",
    ("auth logout", "name"): "server-remote",
    ("render", "target"): "target",
    ("render", "only"): "server",
    ("watch", "target"): "target",
    ("run", "name"): "server-enabled",
    ("import", "path"): "path",
    ("list", "group"): "group",
    ("health", "group"): "group",
    ("tools", "group"): "group",
    ("render", "group"): "group",
    ("snapshot save", "group"): "group",
    ("snapshot diff", "group"): "group",
    ("report", "group"): "group",
    ("prefetch", "names"): "server",
    ("prefetch", "group"): "group",
    ("prefetch", "pinned"): "path",
    ("group add", "group"): "group",
    ("group add", "names"): "server",
    ("group remove", "group"): "group",
    ("group remove", "names"): "member",
}
#: Groups whose first word, when it names no subcommand, is the hidden subcommand's argument
#: (``mcpctl auth NAME`` logs in).
DEFAULT_SUBCOMMANDS = {"auth": "login"}
_CHOICES_METAVAR = re.compile(r"[a-z0-9_-]+(?:\|[a-z0-9_-]+)+")


def _summary(text: str | None, limit: int = 72) -> str:
    """The first sentence of a help text, on one line, at most ``limit`` characters."""
    if not text:
        return ""
    first = " ".join(text.strip().split("\n\n")[0].split())
    sentence = re.split(r"(?<=[a-z0-9)])\. ", first, maxsplit=1)[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def kind_of(path: str, param: Any, import_sources: list[str]) -> str | list[str] | None:
    """What the value of ``param`` (a click parameter of command ``path``) completes to."""
    declared = KINDS.get((path, param.name))
    if declared is not None:
        return declared
    if path == "import" and param.name == "source":
        return import_sources
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    choices = getattr(param.type, "choices", None)
    if choices:
        return [str(getattr(c, "value", c)) for c in choices]
    metavar = getattr(param, "metavar", None) or ""
    if _CHOICES_METAVAR.fullmatch(metavar):
        return metavar.split("|")
    if getattr(param.type, "name", "") == "path" or param.name == "config":
        return "dir" if metavar == "DIR" else "path"
    return "text"


def _node(path: str, command: Any, import_sources: list[str], seen: set[tuple[str, str]]) -> Any:
    options: list[dict[str, Any]] = []
    args: list[dict[str, Any]] = []
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        seen.add((path, param.name))
        kind = kind_of(path, param, import_sources)
        if param.param_type_name == "argument":
            args.append({"name": param.name, "value": kind, "many": param.nargs == -1})
            continue
        names = [*param.opts, *param.secondary_opts]
        repeat = bool(getattr(param, "multiple", False) or getattr(param, "count", False))
        options.append(
            {"names": names, "help": _summary(param.help), "value": kind, "repeat": repeat}
        )
    options.append({"names": ["--help", "-h"], "help": "Show the help", "value": None,
                    "repeat": False})  # fmt: skip
    subcommands = getattr(command, "commands", {})
    node: dict[str, Any] = {
        "help": _summary(command.get_short_help_str(limit=200)) if path else "",
        "commands": [name for name, sub in subcommands.items() if not sub.hidden],
        "options": options,
        "args": args,
    }
    if path in DEFAULT_SUBCOMMANDS:
        node["default"] = DEFAULT_SUBCOMMANDS[path]
    return node


def build_tree(root: Any, import_sources: list[str]) -> dict[str, Any]:
    """The completion table of the click command ``root``.

    ``import_sources`` are the names ``mcpctl import SOURCE`` accepts.

    Raises:
        ValueError: :data:`KINDS` or :data:`DEFAULT_SUBCOMMANDS` names a command or
            parameter the app does not have (the table would be stale).
    """
    commands: dict[str, Any] = {}
    seen: set[tuple[str, str]] = set()
    stack: list[tuple[str, Any]] = [("", root)]
    while stack:
        path, command = stack.pop()
        commands[path] = _node(path, command, import_sources, seen)
        for name, sub in getattr(command, "commands", {}).items():
            stack.append((f"{path} {name}".strip(), sub))
    # The options every command has (--config, --json, ...) are written once.
    everywhere = commands.values()
    shared = [o for o in commands[""]["options"] if all(o in n["options"] for n in everywhere)]
    for node in commands.values():
        node["options"] = [o for o in node["options"] if o not in shared]
    stale = sorted(f"{p} {n}" for p, n in KINDS if (p, n) not in seen)
    stale += [f"{g} {s}" for g, s in DEFAULT_SUBCOMMANDS.items() if f"{g} {s}" not in commands]
    if stale:
        raise ValueError(f"completion kinds for parameters the app does not have: {stale}")
    return {"format": FORMAT, "options": shared, "commands": dict(sorted(commands.items()))}


def dump_tree(tree: dict[str, Any]) -> str:
    """``tree`` as ``tree.json`` holds it: stable, readable in a diff."""
    return json.dumps(tree, indent=1, ensure_ascii=False) + "\n"
