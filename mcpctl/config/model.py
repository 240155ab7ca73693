"""The config as the rest of mcpctl sees it: plain typed dataclasses, and the fast checker.

``mcpctl.config.schema`` holds the pydantic models: the schema of record, used by the strict
validator and ``mcpctl schema``. Importing pydantic costs more than the whole budget of
``mcpctl list`` (bench/README.md), so the hot paths (``list``, ``get``, ``add``, the
daemon's lenient loader) check entries here instead, in plain Python. The two agree on
what they accept: ``tests/test_model.py`` checks it with generated entries.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple, cast
from urllib.parse import urlsplit

__all__ = [
    "AUTH_TYPES",
    "DEFAULT_TIMEOUT_MS",
    "ENTRY_FIELDS",
    "NAME_RE",
    "TRANSPORTS",
    "AuthConfig",
    "Config",
    "EntryIssue",
    "Problem",
    "ServerEntry",
    "Source",
    "ToolFilter",
    "Transport",
    "check_name",
    "entry_from_data",
    "format_path",
    "transport_field_issues",
]

Transport = Literal["stdio", "streamable-http", "sse"]
AuthType = Literal["none", "bearer", "header", "basic", "oauth"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "streamable-http", "sse")
AUTH_TYPES: tuple[AuthType, ...] = ("none", "bearer", "header", "basic", "oauth")
DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 3_600_000
NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
ENV_NAME_RE = re.compile(r"[^=\x00]+")
HEADER_NAME_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")

ENTRY_FIELDS: tuple[str, ...] = (
    "command", "args", "env", "cwd", "url", "transport", "headers", "auth",
    "timeout", "sensitive", "description", "enabled", "tools", "source",
)  # fmt: skip
STDIO_ONLY = ("command", "args", "env", "cwd")
REMOTE_ONLY = ("url", "headers", "auth")
AUTH_FIELDS: dict[str, tuple[str, ...]] = {
    "none": (),
    "bearer": ("token",),
    "header": ("name", "value"),
    "basic": ("username", "password"),
    "oauth": ("scopes", "client_id", "client_secret", "callback_port"),
}
AUTH_REQUIRED: dict[str, tuple[str, ...]] = {
    "none": (),
    "bearer": ("token",),
    "header": ("value",),
    "basic": ("username", "password"),
    "oauth": (),
}
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
    url: str | None = None
    transport: Transport | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    auth: AuthConfig | None = None
    timeout: int | None = None
    sensitive: bool = False
    description: str | None = None
    enabled: bool = True
    tools: ToolFilter | None = None
    source: Source | None = None

    @property
    def effective_transport(self) -> Transport:
        """``stdio`` with a command, ``streamable-http`` with a url, unless set."""
        if self.transport is not None:
            return self.transport
        return "stdio" if self.command is not None else "streamable-http"

    @property
    def is_remote(self) -> bool:
        """Whether the server is reached over HTTP rather than spawned."""
        return self.effective_transport != "stdio"

    @property
    def timeout_ms(self) -> int:
        """Connect + handshake timeout in milliseconds."""
        return self.timeout if self.timeout is not None else DEFAULT_TIMEOUT_MS

    def to_data(self) -> dict[str, Any]:
        """The JSON object written to the file: canonical key order, defaults left out.

        Stdio entries keep to the seeds' fields unless a newer field is really used, so
        the seeds' orchestrator keeps loading files mcpctl wrote.
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
        if self.url is not None:
            data["url"] = self.url
        if self.transport is not None:
            data["transport"] = self.transport
        if self.headers:
            data["headers"] = dict(self.headers)
        if self.auth is not None:
            data["auth"] = self.auth.to_data()
        if self.timeout is not None:
            data["timeout"] = self.timeout
        if self.sensitive:
            data["sensitive"] = True
        if self.description is not None:
            data["description"] = self.description
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


def check_name(name: str) -> str | None:
    """Why ``name`` is not a valid server name, or ``None`` when it is."""
    if NAME_RE.fullmatch(name):
        return None
    if not name:
        return "a server name cannot be empty"
    if len(name) > 64:
        return f"server name is {len(name)} characters long; the limit is 64"
    return f"server name {name!r} may only contain letters, digits, '_' and '-'"


def suggest(word: str, choices: tuple[str, ...] | list[str]) -> str | None:
    """The closest of ``choices`` to a mistyped ``word``, if any is close."""
    import difflib

    lowered = {c.lower(): c for c in choices}
    if word.lower() in lowered:
        return lowered[word.lower()]
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return match[0] if match else None


# --- the fast checker ---------------------------------------------------------------


def _type_name(value: object) -> str:
    return {
        type(None): "null",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)


class _Checker:
    def __init__(self, base: tuple[PathPart, ...]) -> None:
        self.base = base
        self.issues: list[EntryIssue] = []

    def fail(
        self, rel: tuple[PathPart, ...], message: str, code: str = "invalid_value", **kw: Any
    ) -> None:
        self.issues.append(EntryIssue(self.base + rel, message, code, kw.get("hint")))

    def string(self, value: object, rel: tuple[PathPart, ...], *, nonempty: bool = False) -> bool:
        if not isinstance(value, str):
            self.fail(rel, f"expected a string, got {_type_name(value)}", "wrong_type")
            return False
        if nonempty and not value.strip():
            self.fail(rel, "must not be empty")
            return False
        return True

    def string_list(self, value: object, rel: tuple[PathPart, ...]) -> tuple[str, ...] | None:
        if not isinstance(value, list):
            self.fail(rel, f"expected an array of strings, got {_type_name(value)}", "wrong_type")
            return None
        ok = True
        for i, item in enumerate(value):  # check every item: report all problems at once
            ok = self.string(item, (*rel, i)) and ok
        return tuple(cast(list[str], value)) if ok else None

    def string_map(
        self, value: object, rel: tuple[PathPart, ...], key_re: re.Pattern[str], what: str
    ) -> dict[str, str] | None:
        if not isinstance(value, dict):
            self.fail(rel, f"expected an object of strings, got {_type_name(value)}", "wrong_type")
            return None
        ok = True
        for key, item in value.items():
            if not key_re.fullmatch(key):
                self.fail((*rel, key), f"{key!r} is not a valid {what} name")
                ok = False
            ok = self.string(item, (*rel, key)) and ok
        return dict(value) if ok else None

    def boolean(self, value: object, rel: tuple[PathPart, ...]) -> bool:
        if not isinstance(value, bool):
            self.fail(rel, f"expected true or false, got {_type_name(value)}", "wrong_type")
            return False
        return True

    def unknown_keys(
        self, data: dict[str, Any], allowed: tuple[str, ...], rel: tuple[PathPart, ...]
    ) -> None:
        for key in data:
            if key not in allowed:
                guess = suggest(key, allowed)
                msg = f"unknown field {key!r}" + (f" (did you mean {guess!r}?)" if guess else "")
                self.fail((*rel, key), msg, "unknown_field")


def check_url(url: str) -> str | None:
    """Why ``url`` is not a usable http(s) URL, or ``None`` (placeholders allowed)."""
    if url.startswith("${"):
        return None  # the scheme comes from a variable; checked when resolved
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"not a valid URL: {exc}"
    if parts.scheme not in ("http", "https"):
        return f"URL must start with http:// or https://, got {url!r}"
    if not parts.netloc:
        return "URL has no host"
    return None


def _auth(chk: _Checker, value: object) -> AuthConfig | None:
    if not isinstance(value, dict):
        chk.fail(("auth",), f"expected an object, got {_type_name(value)}", "wrong_type")
        return None
    kind = value.get("type")
    if kind not in AUTH_FIELDS:
        allowed = ", ".join(AUTH_TYPES)
        chk.fail(("auth", "type"), f"auth type must be one of {allowed}; got {kind!r}")
        return None
    n = len(chk.issues)
    allowed_keys = ("type", *AUTH_FIELDS[kind])
    chk.unknown_keys(value, allowed_keys, ("auth",))
    for key in AUTH_REQUIRED[kind]:
        if key not in value:
            chk.fail(("auth", key), f"auth type {kind!r} needs {key!r}", "missing_field")
    kwargs: dict[str, Any] = {}
    for key in AUTH_FIELDS[kind]:
        if key not in value:
            continue
        item = value[key]
        if key == "scopes":
            kwargs[key] = chk.string_list(item, ("auth", key))
        elif key == "callback_port":
            if type(item) is not int or not 1 <= item <= 65535:
                chk.fail(("auth", key), "expected a port number (1-65535)")
            kwargs[key] = item
        elif chk.string(item, ("auth", key), nonempty=key == "name"):
            kwargs[key] = item
    if len(chk.issues) > n:
        return None
    return AuthConfig(type=kind, **kwargs)


def entry_from_data(
    name: str, data: object, *, base: tuple[PathPart, ...] | None = None
) -> tuple[ServerEntry | None, list[EntryIssue]]:
    """Check one entry's JSON value and build a :class:`ServerEntry` from it.

    Returns the entry (or ``None``) and every issue found; never raises.
    """
    chk = _Checker(base if base is not None else (name,))
    if (why := check_name(name)) is not None:
        chk.fail((), why, "invalid_name")
    if not isinstance(data, dict):
        chk.fail((), f"a server entry must be an object, got {_type_name(data)}", "wrong_type")
        return None, chk.issues
    chk.unknown_keys(data, ENTRY_FIELDS, ())
    kw: dict[str, Any] = {}
    for key in ("command", "cwd", "url", "description"):
        if key in data and chk.string(data[key], (key,), nonempty=key != "description"):
            kw[key] = data[key]
    if "args" in data:
        kw["args"] = chk.string_list(data["args"], ("args",))
    if "env" in data:
        kw["env"] = chk.string_map(data["env"], ("env",), ENV_NAME_RE, "environment variable")
    if "headers" in data:
        kw["headers"] = chk.string_map(data["headers"], ("headers",), HEADER_NAME_RE, "header")
    for key in ("sensitive", "enabled"):
        if key in data and chk.boolean(data[key], (key,)):
            kw[key] = data[key]
    if "transport" in data:
        if data["transport"] in TRANSPORTS:
            kw["transport"] = data["transport"]
        else:
            options = ", ".join(TRANSPORTS)
            chk.fail(
                ("transport",), f"transport must be one of {options}; got {data['transport']!r}"
            )
    if "timeout" in data:
        timeout = data["timeout"]
        if type(timeout) is not int:
            got = _type_name(timeout)
            chk.fail(("timeout",), f"expected milliseconds as an integer, got {got}", "wrong_type")
        elif not 0 < timeout <= MAX_TIMEOUT_MS:
            chk.fail(("timeout",), f"timeout must be between 1 and {MAX_TIMEOUT_MS} ms")
        else:
            kw["timeout"] = timeout
    if "url" in kw and (why := check_url(kw["url"])) is not None:
        chk.fail(("url",), why)
    if "auth" in data:
        kw["auth"] = _auth(chk, data["auth"])
    if "tools" in data:
        kw["tools"] = _tools(chk, data["tools"])
    if "source" in data:
        kw["source"] = _source(chk, data["source"])
    for issue in transport_field_issues(data):
        chk.fail(issue.path, issue.message, issue.code)
    if chk.issues:
        return None, chk.issues
    return ServerEntry(**kw), []


def _tools(chk: _Checker, value: object) -> ToolFilter | None:
    if not isinstance(value, dict):
        chk.fail(("tools",), f"expected an object, got {_type_name(value)}", "wrong_type")
        return None
    chk.unknown_keys(value, TOOLS_FIELDS, ("tools",))
    allow = chk.string_list(value["allow"], ("tools", "allow")) if "allow" in value else None
    deny = chk.string_list(value["deny"], ("tools", "deny")) if "deny" in value else ()
    return ToolFilter(allow=allow, deny=deny or ())


def _source(chk: _Checker, value: object) -> Source | None:
    if not isinstance(value, dict):
        chk.fail(("source",), f"expected an object, got {_type_name(value)}", "wrong_type")
        return None
    chk.unknown_keys(value, SOURCE_FIELDS, ("source",))
    ok = True
    for key in SOURCE_FIELDS:
        if key not in value:
            chk.fail(("source", key), f"source needs {key!r}", "missing_field")
            ok = False
        else:
            ok = chk.string(value[key], ("source", key), nonempty=True) and ok
    return Source(value["registry"], value["name"], value["version"]) if ok else None


def transport_field_issues(data: Mapping[str, Any]) -> list[EntryIssue]:
    """Cross-field rules: stdio needs ``command``, remote needs ``url``, no mixing."""
    issues: list[EntryIssue] = []
    transport = data.get("transport")
    has_command, has_url = "command" in data, "url" in data
    if has_command and has_url:
        msg = "an entry has either 'command' (stdio) or 'url' (remote), not both"
        return [EntryIssue((), msg, "conflicting_fields")]
    if transport is None:
        transport = "streamable-http" if has_url else "stdio"
    if transport == "stdio":
        if not has_command:
            msg = "needs 'command' (a stdio server) or 'url' (a remote server)"
            issues.append(EntryIssue((), msg, "missing_field"))
        misplaced, kind = [k for k in REMOTE_ONLY if k in data], "remote"
    elif transport in ("sse", "streamable-http"):
        if not has_url:
            issues.append(EntryIssue((), f"transport {transport!r} needs 'url'", "missing_field"))
        misplaced, kind = [k for k in STDIO_ONLY if k in data], "stdio"
    else:
        return issues
    for key in misplaced:
        msg = f"{key!r} only applies to {kind} servers"
        issues.append(EntryIssue((key,), msg, "conflicting_fields"))
    return issues
