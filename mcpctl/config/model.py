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
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple

from mcpctl._record import Record, record_fields
from mcpctl.config.fieldsyntax import (
    ENV_NAME_RE,
    HEADER_NAME_RE,
    INHERIT_NAME_RE,
    MAX_TIMEOUT_MS,
    NAME_RE,
)
from mcpctl.config.transports import DEFAULT_REMOTE, TRANSPORT_NAMES, TRANSPORTS, Transport

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


@dataclass(init=False, repr=False, eq=False)
class ToolFilter(Record):
    """Which tools of a server are exposed (glob patterns; deny wins)."""

    allow: tuple[str, ...] | None
    deny: tuple[str, ...]

    def __init__(self, allow: tuple[str, ...] | None = None, deny: tuple[str, ...] = ()) -> None:
        d = self.__dict__
        d["allow"] = allow
        d["deny"] = deny

    def allows(self, tool: str) -> bool:
        """Whether ``tool`` passes the filter."""
        from fnmatch import fnmatchcase

        if any(fnmatchcase(tool, pat) for pat in self.deny):
            return False
        return self.allow is None or any(fnmatchcase(tool, pat) for pat in self.allow)


@dataclass(init=False, repr=False, eq=False)
class Source(Record):
    """Provenance of an entry added from a registry, with the pinned version."""

    registry: str
    name: str
    version: str

    def __init__(self, registry: str, name: str, version: str) -> None:
        d = self.__dict__
        d["registry"] = registry
        d["name"] = name
        d["version"] = version


@dataclass(init=False, repr=False, eq=False)
class AuthConfig(Record):
    """How a remote server authenticates; fields beyond ``type`` depend on it."""

    type: AuthType
    token: str | None
    name: str | None
    value: str | None
    username: str | None
    password: str | None
    scopes: tuple[str, ...]
    client_id: str | None
    client_secret: str | None
    client_metadata_url: str | None
    callback_port: int | None

    def __init__(
        self,
        type: AuthType,
        token: str | None = None,
        name: str | None = None,
        value: str | None = None,
        username: str | None = None,
        password: str | None = None,
        scopes: tuple[str, ...] = (),
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        callback_port: int | None = None,
    ) -> None:
        d = self.__dict__
        d["type"] = type
        d["token"] = token
        d["name"] = name
        d["value"] = value
        d["username"] = username
        d["password"] = password
        d["scopes"] = scopes
        d["client_id"] = client_id
        d["client_secret"] = client_secret
        d["client_metadata_url"] = client_metadata_url
        d["callback_port"] = callback_port

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


@dataclass(init=False, repr=False, eq=False)
class ServerEntry(Record):
    """One server of ``external-mcps.json``, as written (placeholders unresolved).

    ``transport`` is what the file says (``None`` = inferred); use
    :attr:`effective_transport` to know how to connect. ``env`` and ``headers`` default to
    a new empty dict.
    """

    command: str | None
    args: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str | None
    inherit_env: bool | tuple[str, ...]
    url: str | None
    transport: Transport | None
    headers: Mapping[str, str]
    #: env and header keys named like secrets that may hold a literal (not a secret after
    #: all): the write guard and ``validate`` leave them alone.
    allow_literal: tuple[str, ...]
    auth: AuthConfig | None
    timeout: int | None
    protocol: ProtocolMode | None
    sensitive: bool
    description: str | None
    #: the groups the server belongs to (valid names, as server names are), in file order.
    groups: tuple[str, ...]
    enabled: bool
    tools: ToolFilter | None
    source: Source | None

    def __init__(
        self,
        command: str | None = None,
        args: tuple[str, ...] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        inherit_env: bool | tuple[str, ...] = False,
        url: str | None = None,
        transport: Transport | None = None,
        headers: Mapping[str, str] | None = None,
        allow_literal: tuple[str, ...] = (),
        auth: AuthConfig | None = None,
        timeout: int | None = None,
        protocol: ProtocolMode | None = None,
        sensitive: bool = False,
        description: str | None = None,
        groups: tuple[str, ...] = (),
        enabled: bool = True,
        tools: ToolFilter | None = None,
        source: Source | None = None,
    ) -> None:
        d = self.__dict__
        d["command"] = command
        d["args"] = args
        d["env"] = {} if env is None else env
        d["cwd"] = cwd
        d["inherit_env"] = inherit_env
        d["url"] = url
        d["transport"] = transport
        d["headers"] = {} if headers is None else headers
        d["allow_literal"] = allow_literal
        d["auth"] = auth
        d["timeout"] = timeout
        d["protocol"] = protocol
        d["sensitive"] = sensitive
        d["description"] = description
        d["groups"] = groups
        d["enabled"] = enabled
        d["tools"] = tools
        d["source"] = source

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


@dataclass(init=False, repr=False, eq=False)
class Config:
    """A whole config file: the valid entries in file order, plus top-level ``$`` keys."""

    entries: dict[str, ServerEntry]
    extras: dict[str, Any]
    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass with eq

    def __init__(
        self, entries: dict[str, ServerEntry] | None = None, extras: dict[str, Any] | None = None
    ) -> None:
        self.entries = {} if entries is None else entries
        self.extras = {} if extras is None else extras

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, Config)
            return (self.entries, self.extras) == (other.entries, other.extras)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Config(entries={self.entries!r}, extras={self.extras!r})"

    def enabled(self) -> dict[str, ServerEntry]:
        """Only the entries that are enabled."""
        return {name: e for name, e in self.entries.items() if e.enabled}

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


for _cls in (ToolFilter, Source, AuthConfig, ServerEntry):
    record_fields(_cls)
