"""The config as the rest of mcpctl sees it: plain typed dataclasses.

:mod:`mcpctl.config.schema` holds the pydantic models: the schema of record, used by the
strict validator and ``mcpctl schema``. Importing pydantic costs more than the whole budget
of ``mcpctl list`` (bench/README.md), so the hot paths (``list``, ``get``, ``add``, the
daemon's lenient loader) build these dataclasses with the plain-Python checker of
:mod:`mcpctl.config.checks` instead. The two agree on what they accept: ``tests/config/
test_model.py`` checks it with generated entries.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple

from mcpctl.config.lexicon import (
    ENV_NAME_RE,
    HEADER_NAME_RE,
    INHERIT_NAME_RE,
    MAX_TIMEOUT_MS,
    NAME_RE,
)
from mcpctl.probe.transports import DEFAULT_REMOTE, TRANSPORT_NAMES, TRANSPORTS, Transport

__all__ = [
    "AUTH_TYPES",
    "DEFAULT_TIMEOUT_MS",
    "ENTRY_FIELDS",
    "ENV_NAME_RE",
    "HEADER_NAME_RE",
    "INHERIT_NAME_RE",
    "MAX_TIMEOUT_MS",
    "NAME_RE",
    "PROTOCOL_MODES",
    "TRANSPORTS",
    "TRANSPORT_NAMES",
    "AuthConfig",
    "Config",
    "EntryIssue",
    "Problem",
    "ProtocolMode",
    "ServerEntry",
    "Source",
    "ToolFilter",
    "Transport",
    "format_path",
]

AuthType = Literal["none", "bearer", "header", "basic", "oauth"]
# Which protocol era to speak: detect it, or pin the stateless revisions or the handshake.
ProtocolMode = Literal["auto", "modern", "legacy"]
PROTOCOL_MODES: tuple[ProtocolMode, ...] = ("auto", "modern", "legacy")
AUTH_TYPES: tuple[AuthType, ...] = ("none", "bearer", "header", "basic", "oauth")
DEFAULT_TIMEOUT_MS = 30_000

ENTRY_FIELDS: tuple[str, ...] = (
    "command", "args", "env", "cwd", "inherit_env", "url", "transport", "headers",
    "allow_literal", "auth", "timeout", "protocol", "sensitive", "description", "groups",
    "enabled", "tools", "source",
)  # fmt: skip
AUTH_FIELDS: dict[str, tuple[str, ...]] = {
    "none": (),
    "bearer": ("token",),
    "header": ("name", "value"),
    "basic": ("username", "password"),
    "oauth": ("scopes", "client_id", "client_secret", "client_metadata_url", "callback_port"),
}
AUTH_REQUIRED: dict[str, tuple[str, ...]] = {
    "none": (),
    "bearer": ("token",),
    "header": ("value",),
    "basic": ("username", "password"),
    "oauth": (),
}
# Credentials: a literal value here is a secret whatever it looks like.
AUTH_SECRET_FIELDS = ("token", "value", "password", "client_secret")
SOURCE_FIELDS = ("registry", "name", "version")
TOOLS_FIELDS = ("allow", "deny")

PathPart = str | int


def format_path(parts: tuple[PathPart, ...]) -> str:
    """``("github", "args", 2)`` -> ``github.args[2]`` (empty tuple -> ``$``)."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z0-9_$-]+", part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out or "$"


class Problem(NamedTuple):
    """One finding about a config file.

    ``path`` is where in the document (``github.env.TOKEN``); ``line``/``column`` are
    1-based when known.
    """

    severity: Literal["error", "warning"]
    code: str
    message: str
    path: str = "$"
    line: int | None = None
    column: int | None = None
    hint: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form, as in ``validate --format json``."""
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "hint": self.hint,
        }

    def to_error(self) -> dict[str, str | None]:
        """The problem as an entry of the JSON envelope's ``errors``."""
        where = f"{self.path}: " if self.path and self.path != "$" else ""
        return {"code": self.code, "message": where + self.message, "hint": self.hint}

    def location(self, file: str) -> str:
        """``file:line:column`` (or as much of it as is known)."""
        if self.line is None:
            return file
        return f"{file}:{self.line}:{self.column or 1}"


class EntryIssue(NamedTuple):
    """A reason an entry breaks the model (path relative to the document root)."""

    path: tuple[PathPart, ...]
    message: str
    code: str = "invalid_value"
    hint: str | None = None


@dataclass(frozen=True)
class ToolFilter:
    """Which tools of a server are exposed (glob patterns; deny wins)."""

    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()

    def allows(self, tool: str) -> bool:
        """Whether ``tool`` passes the filter."""
        from fnmatch import fnmatchcase

        if any(fnmatchcase(tool, pat) for pat in self.deny):
            return False
        return self.allow is None or any(fnmatchcase(tool, pat) for pat in self.allow)


@dataclass(frozen=True)
class Source:
    """Provenance of an entry added from a registry, with the pinned version."""

    registry: str
    name: str
    version: str


@dataclass(frozen=True)
class AuthConfig:
    """How a remote server authenticates; fields beyond ``type`` depend on it."""

    type: AuthType
    token: str | None = None
    name: str | None = None
    value: str | None = None
    username: str | None = None
    password: str | None = None
    scopes: tuple[str, ...] = ()
    client_id: str | None = None
    client_secret: str | None = None
    client_metadata_url: str | None = None
    callback_port: int | None = None

    def map_values(self, fn: Callable[[str], str]) -> AuthConfig:
        """A copy with ``fn`` applied to every string credential (for placeholders)."""

        def opt(value: str | None) -> str | None:
            return fn(value) if value is not None else None

        return replace(
            self,
            token=opt(self.token),
            value=opt(self.value),
            username=opt(self.username),
            password=opt(self.password),
            client_id=opt(self.client_id),
            client_secret=opt(self.client_secret),
        )

    def to_data(self) -> dict[str, Any]:
        """The JSON object written to the file (defaults left out)."""
        data: dict[str, Any] = {"type": self.type}
        for key in AUTH_FIELDS[self.type]:
            value = getattr(self, key)
            if value is None or value == ():
                continue
            data[key] = list(value) if isinstance(value, tuple) else value
        if self.type == "header" and data.get("name") == "Authorization":
            del data["name"]
        return data


@dataclass(frozen=True)
class ServerEntry:
    """One server of ``external-mcps.json``, as written (placeholders unresolved).

    ``transport`` is what the file says (``None`` = inferred); use
    :attr:`effective_transport` to know how to connect.
    """

    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    inherit_env: bool | tuple[str, ...] = False
    url: str | None = None
    transport: Transport | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: env and header keys named like secrets that may hold a literal (not a secret after
    #: all): the write guard and ``validate`` leave them alone.
    allow_literal: tuple[str, ...] = ()
    auth: AuthConfig | None = None
    timeout: int | None = None
    protocol: ProtocolMode | None = None
    sensitive: bool = False
    description: str | None = None
    #: the groups the server belongs to (valid names, as server names are), in file order.
    groups: tuple[str, ...] = ()
    enabled: bool = True
    tools: ToolFilter | None = None
    source: Source | None = None

    @property
    def effective_transport(self) -> Transport:
        """``stdio`` with a command, ``streamable-http`` with a url, unless set."""
        if self.transport is not None:
            return self.transport
        return "stdio" if self.command is not None else DEFAULT_REMOTE

    @property
    def is_remote(self) -> bool:
        """Whether the server is reached over HTTP rather than spawned."""
        return TRANSPORTS[self.effective_transport].remote

    @property
    def timeout_ms(self) -> int:
        """Connect + handshake timeout in milliseconds."""
        return self.timeout if self.timeout is not None else DEFAULT_TIMEOUT_MS

    def to_data(self) -> dict[str, Any]:
        """The JSON object written to the file: canonical key order, defaults left out.

        Stdio entries keep to the original format's fields (command, args, env, timeout,
        sensitive, description) unless a newer field is really used, so orchestrators that
        read only those keep loading files mcpctl wrote.
        """
        data: dict[str, Any] = {}
        if self.command is not None:
            data["command"] = self.command
        if self.args:
            data["args"] = list(self.args)
        if self.env:
            data["env"] = dict(self.env)
        if self.cwd is not None:
            data["cwd"] = self.cwd
        if isinstance(self.inherit_env, tuple):
            if self.inherit_env:
                data["inherit_env"] = list(self.inherit_env)
        elif self.inherit_env:
            data["inherit_env"] = True
        if self.url is not None:
            data["url"] = self.url
        if self.transport is not None:
            data["transport"] = self.transport
        if self.headers:
            data["headers"] = dict(self.headers)
        if self.allow_literal:
            data["allow_literal"] = list(self.allow_literal)
        if self.auth is not None:
            data["auth"] = self.auth.to_data()
        if self.timeout is not None:
            data["timeout"] = self.timeout
        if self.protocol is not None:
            data["protocol"] = self.protocol
        if self.sensitive:
            data["sensitive"] = True
        if self.description is not None:
            data["description"] = self.description
        if self.groups:
            data["groups"] = list(self.groups)
        if not self.enabled:
            data["enabled"] = False
        if self.tools is not None:
            tools: dict[str, Any] = {}
            if self.tools.allow is not None:
                tools["allow"] = list(self.tools.allow)
            if self.tools.deny:
                tools["deny"] = list(self.tools.deny)
            data["tools"] = tools
        if self.source is not None:
            data["source"] = {
                "registry": self.source.registry,
                "name": self.source.name,
                "version": self.source.version,
            }
        return data


@dataclass
class Config:
    """A whole config file: the valid entries in file order, plus top-level ``$`` keys."""

    entries: dict[str, ServerEntry] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)

    def enabled(self) -> dict[str, ServerEntry]:
        """Only the entries that are enabled."""
        return {name: e for name, e in self.entries.items() if e.enabled}

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)
