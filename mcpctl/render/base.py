"""What every render target shares: the request, the results, and the placeholder syntaxes.

A target is a pure pair: :meth:`Target.render` (entries in, text out) and
:meth:`Target.parse` (text in, entries out, for ``mcpctl import``). Neither touches a file,
the network or the keyring: the caller reads and writes (through the store), and hands in
a secret source when secrets are to be written inline.

Where a target cannot express something (SSE, tool filters, headers, a working directory),
it renders what it can and adds a warning naming the server and the field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import PLACEHOLDER_RE, SecretSource, resolve_text
from mcpctl.render.listen import ListenAddress

__all__ = [
    "ClientTarget",
    "Family",
    "Parsed",
    "Places",
    "RenderRequest",
    "Rendered",
    "Scope",
    "Target",
    "convert_placeholders",
    "grouped",
    "placeholders_back",
    "warn",
]

Family = Literal["proxy", "client", "cluster"]
Scope = Literal["user", "project"]


@dataclass(frozen=True)
class Places:
    """Where a client's files are looked for: the user's home, the project, the OS.

    ``system`` is :data:`sys.platform` (``linux``, ``darwin``, ``win32``); ``environ`` is
    read for ``APPDATA`` and ``XDG_CONFIG_HOME``. Tests build one over a temporary folder.
    """

    home: Path
    cwd: Path
    system: str
    environ: Mapping[str, str]


@dataclass
class RenderRequest:
    """What to render.

    Attributes:
        entries: the servers, in file order (enabled ones only, after ``--only``).
        template: a base document the servers go under (``--template``), or ``None``.
        inline_secrets: write resolved values where the target has no expansion.
        secrets: where resolved values come from besides the environment (the keyring).
        environ: the environment to resolve from (default: the process's).
        keyring_vars: the variables whose value only the keyring holds (a client cannot
            resolve them from its environment).
        headers_command: for a remote server whose headers need such a variable, the command
            that prints them (``mcpctl secret headers NAME``), for clients that run one;
            ``None`` under ``--secrets env``.
        listen: where the proxy listens (``--listen``), for the targets whose file says it.
    """

    entries: dict[str, ServerEntry]
    template: dict[str, Any] | None = None
    inline_secrets: bool = False
    secrets: SecretSource | None = None
    environ: Mapping[str, str] | None = None
    keyring_vars: frozenset[str] = frozenset()
    headers_command: Callable[[str], str] | None = None
    listen: ListenAddress | None = None


@dataclass
class Rendered:
    """A rendered document, what it could not express, whether it holds secrets, and the
    servers it starts through ``mcpctl run``."""

    text: str
    warnings: list[str] = field(default_factory=list)
    holds_secrets: bool = False
    launched: list[str] = field(default_factory=list)


@dataclass
class Parsed:
    """Entries read back from another tool's file, and what could not be read."""

    entries: dict[str, ServerEntry] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


class Target(Protocol):
    """One render/import target."""

    name: str
    family: Family
    description: str

    def render(self, request: RenderRequest) -> Rendered:
        """The target's document for ``request``."""
        ...

    def parse(self, text: str) -> Parsed:
        """Entries from a document of this target (placeholders back to ``${VAR}``)."""
        ...


class ClientTarget(Target, Protocol):
    """A target that is a client with a config file of its own (``--install``, import scan).

    Attributes:
        file_format: ``json`` (with comments or not: ``--install`` replaces only the servers'
            text), ``toml`` or ``yaml`` (YAML with comments is read, never written back).
        section: the key path of the object that holds the servers in the client's file,
            e.g. ``("mcpServers",)``; ``--install`` changes only that object.
        keyed_lists: lists beside the section that rendering also fills, with the key that
            identifies an item (VS Code's ``{"inputs": "id"}``); ``--install`` merges them.
    """

    file_format: Literal["json", "toml", "yaml"]
    section: tuple[str, ...]
    keyed_lists: Mapping[str, str]

    def locations(self, scope: Scope, places: Places) -> list[Path]:
        """The client's documented config files for ``scope`` on ``places.system``, the one
        ``--install`` writes first (an empty list: the client has no such scope)."""
        ...


def warn(warnings: list[str], server: str, what: str, why: str) -> None:
    """Record that ``server``'s ``what`` (a field) could not be rendered, and why."""
    warnings.append(f"{server}: {what} {why}")


def grouped(warnings: list[str], *, limit: int = 3) -> list[str]:
    """``warnings`` for a person: one line for a field and reason shared by more than
    ``limit`` servers (``1000 servers (a, b, c and 997 more): timeout ...``)."""
    servers: dict[str, list[str]] = {}
    for line in warnings:
        server, sep, rest = line.partition(": ")
        if sep:
            servers.setdefault(rest, []).append(server)
    out: list[str] = []
    for line in warnings:
        server, sep, rest = line.partition(": ")
        names = servers.get(rest, []) if sep else []
        if len(names) <= limit:
            out.append(line)
        elif names[0] == server:
            shown = ", ".join(names[:limit])
            out.append(f"{len(names)} servers ({shown} and {len(names) - limit} more): {rest}")
    return out


def convert_placeholders(
    text: str,
    syntax: Callable[[str, str | None], str] | None,
    request: RenderRequest,
    on_secret: Callable[[str], None] | None = None,
) -> str:
    """``text`` with each ``${VAR}``/``${VAR:-default}`` in the target's own ``syntax``.

    ``syntax(name, default)`` spells one placeholder; a target without expansion passes
    ``None``: then the values are resolved when ``request.inline_secrets`` (``on_secret`` is
    told each name), and otherwise left as written (the caller warns).
    """
    if syntax is not None:
        return PLACEHOLDER_RE.sub(lambda m: syntax(m["name"], m["default"]), text)
    if not request.inline_secrets or not PLACEHOLDER_RE.search(text):
        return text
    for match in PLACEHOLDER_RE.finditer(text):
        if on_secret is not None:
            on_secret(match["name"])
    return resolve_text(text, environ=request.environ, secrets=request.secrets, policy="error")


def placeholders_back(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with a target's placeholders (matched by ``pattern``, whose group ``name``
    is the variable) spelled ``${VAR}`` again, for import."""
    return pattern.sub(lambda m: f"${{{m['name']}}}", text)


def names_used(values: Iterable[str]) -> list[str]:
    """The placeholder names in ``values``, in order of first use."""
    seen: dict[str, None] = {}
    for value in values:
        for match in PLACEHOLDER_RE.finditer(value):
            seen.setdefault(match["name"], None)
    return list(seen)
