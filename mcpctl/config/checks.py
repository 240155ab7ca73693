"""The fast checker: a config entry's JSON value -> a :class:`ServerEntry`, in plain Python.

It accepts exactly what the pydantic schema of record (:mod:`mcpctl.config.schema`) accepts
and reports every problem at once; it never raises. The hot paths use it, since importing
pydantic costs more than ``mcpctl list``'s whole budget.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit

from mcpctl.config.model import (
    AUTH_FIELDS,
    AUTH_REQUIRED,
    AUTH_TYPES,
    ENTRY_FIELDS,
    ENV_NAME_RE,
    HEADER_NAME_RE,
    INHERIT_NAME_RE,
    MAX_TIMEOUT_MS,
    NAME_RE,
    PROTOCOL_MODES,
    SOURCE_FIELDS,
    TOOLS_FIELDS,
    AuthConfig,
    EntryIssue,
    PathPart,
    Problem,
    ServerEntry,
    Source,
    ToolFilter,
)
from mcpctl.config.transports import DEFAULT_REMOTE, TRANSPORT_NAMES, TRANSPORTS
from mcpctl.text import closest

__all__ = [
    "check_group_name",
    "check_name",
    "check_url",
    "entry_from_data",
    "transport_field_issues",
    "unknown_field_message",
    "wrapper_problem",
]

# Other tools' config files keep their servers under one key; people point mcpctl at them.
_WRAPPERS = {
    "mcpServers": 'a Claude Desktop-style config (servers under "mcpServers")',
    "servers": 'a VS Code-style config (servers under "servers")',
    "context_servers": 'a Zed-style config (servers under "context_servers")',
}


def check_name(name: str) -> str | None:
    """Why ``name`` is not a valid server name, or ``None`` when it is."""
    if NAME_RE.fullmatch(name):
        return None
    if not name:
        return "a server name cannot be empty"
    if len(name) > 64:
        return f"server name is {len(name)} characters long; the limit is 64"
    return f"server name {name!r} may only contain letters, digits, '_' and '-'"


def check_group_name(name: str) -> str | None:
    """Why ``name`` is not a valid group name (the rules of server names), or ``None``."""
    if NAME_RE.fullmatch(name):
        return None
    if not name:
        return "a group name cannot be empty"
    if len(name) > 64:
        return f"group name is {len(name)} characters long; the limit is 64"
    return f"group name {name!r} may only contain letters, digits, '_' and '-'"


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
                self.fail((*rel, key), unknown_field_message(key, allowed), "unknown_field")


def unknown_field_message(key: str, allowed: tuple[str, ...]) -> str:
    """``unknown field 'comand' (did you mean 'command'?)``."""
    guess = closest(key, allowed)
    return f"unknown field {key!r}" + (f" (did you mean {guess!r}?)" if guess else "")


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
        elif chk.string(item, ("auth", key), nonempty=key in ("name", "client_metadata_url")):
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
    if "inherit_env" in data:
        kw["inherit_env"] = _inherit_env(chk, data["inherit_env"])
    if "headers" in data:
        kw["headers"] = chk.string_map(data["headers"], ("headers",), HEADER_NAME_RE, "header")
    if "allow_literal" in data:
        kw["allow_literal"] = _allow_literal(chk, data["allow_literal"])
    if "groups" in data:
        kw["groups"] = _groups(chk, data["groups"])
    for key in ("sensitive", "enabled"):
        if key in data and chk.boolean(data[key], (key,)):
            kw[key] = data[key]
    if "transport" in data:
        if isinstance(data["transport"], str) and data["transport"] in TRANSPORTS:
            kw["transport"] = data["transport"]
        else:
            options = ", ".join(TRANSPORT_NAMES)
            chk.fail(
                ("transport",), f"transport must be one of {options}; got {data['transport']!r}"
            )
    if "protocol" in data:
        if isinstance(data["protocol"], str) and data["protocol"] in PROTOCOL_MODES:
            kw["protocol"] = data["protocol"]
        else:
            options = ", ".join(PROTOCOL_MODES)
            chk.fail(("protocol",), f"protocol must be one of {options}; got {data['protocol']!r}")
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


def _inherit_env(chk: _Checker, value: object) -> bool | tuple[str, ...]:
    if isinstance(value, bool):
        return value
    if not isinstance(value, list):
        got = _type_name(value)
        chk.fail(("inherit_env",), f"expected true, false or a list of names, got {got}",
                 "wrong_type")  # fmt: skip
        return False
    names = chk.string_list(value, ("inherit_env",)) or ()
    for i, name in enumerate(names):
        if not INHERIT_NAME_RE.fullmatch(name):
            chk.fail(("inherit_env", i), f"{name!r} is not an environment variable name")
    return names or False  # an empty list inherits nothing more, as false does


def _allow_literal(chk: _Checker, value: object) -> tuple[str, ...]:
    names = chk.string_list(value, ("allow_literal",)) or ()
    for i, name in enumerate(names):
        if not ENV_NAME_RE.fullmatch(name):
            chk.fail(
                ("allow_literal", i), f"{name!r} is not an environment variable or header name"
            )
    return names


def _groups(chk: _Checker, value: object) -> tuple[str, ...]:
    names = chk.string_list(value, ("groups",)) or ()
    for i, name in enumerate(names):
        if (why := check_group_name(name)) is not None:
            chk.fail(("groups", i), why)
    return names


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
    has_command, has_url = "command" in data, "url" in data
    if has_command and has_url:
        msg = "an entry has either 'command' (stdio) or 'url' (remote), not both"
        return [EntryIssue((), msg, "conflicting_fields")]
    name = data.get("transport")
    if name is None:
        name = DEFAULT_REMOTE if has_url else "stdio"
    spec = TRANSPORTS.get(name) if isinstance(name, str) else None
    if spec is None:
        return []  # an unknown transport is reported on its own
    issues: list[EntryIssue] = []
    if spec.requires not in data:
        if spec.remote:
            msg = f"transport {spec.name!r} needs {spec.requires!r}"
        else:
            msg = "needs 'command' (a stdio server) or 'url' (a remote server)"
        issues.append(EntryIssue((), msg, "missing_field"))
    kind = "remote" if not spec.remote else "stdio"
    others = {f for other in TRANSPORTS.values() for f in other.fields} - set(spec.fields)
    for key in (k for k in ENTRY_FIELDS if k in others and k in data):
        msg = f"{key!r} only applies to {kind} servers"
        issues.append(EntryIssue((key,), msg, "conflicting_fields"))
    return issues


def wrapper_problem(data: Mapping[str, Any]) -> Problem | None:
    """A problem when ``data`` is another tool's file, its servers one level down."""
    for key, what in _WRAPPERS.items():
        inner = data.get(key)
        if not isinstance(inner, dict) or "command" in inner or "url" in inner:
            continue  # not there, or a server really named so
        if any(isinstance(v, dict) and ("command" in v or "url" in v) for v in inner.values()):
            return Problem(
                "error",
                "wrapped_servers",
                f"this looks like {what}; in external-mcps.json every server sits at the "
                "top level, keyed by its name",
                key,
                hint=f'move the entries inside "{key}" up one level',
            )
    return None
