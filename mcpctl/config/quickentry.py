"""One plain stdio entry, read and resolved with the standard library only.

``mcpctl run NAME`` stands in front of every start of a server by a client, so it must hand
over within a few interpreter start-ups; the config model (dataclasses, typing, the checker)
alone costs more than that. :func:`plain_entry` answers the plain case quickly -- a regular
config file, an enabled stdio entry whose fields are all of the kinds below and valid, every
placeholder resolved -- and says ``None`` to everything else: the full path (the model, its
errors and hints) then decides, so nothing the model refuses is ever started from here.
"""

from __future__ import annotations

import json
import re

from mcpctl.config.fieldsyntax import (
    ENV_NAME_RE,
    INHERIT_NAME_RE,
    MAX_TIMEOUT_MS,
    NAME_RE,
    PLACEHOLDER_RE,
    unpassable,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["PlainEntry", "plain_entry"]

# What a plain entry may hold, and the checks the model would make of each field.
_STRINGS = ("command", "cwd", "description")
_BOOLS = ("enabled", "sensitive")
_KNOWN = frozenset(
    (*_STRINGS, *_BOOLS, "args", "env", "inherit_env", "timeout", "transport", "protocol",
     "groups")
)  # fmt: skip
_PROTOCOLS = ("auto", "modern", "legacy")


class PlainEntry:
    """A stdio entry's resolved launch: ``argv``, its own ``env``, ``inherit_env``, ``cwd``."""

    __slots__ = ("argv", "cwd", "env", "inherit_env")

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        inherit_env: bool | tuple[str, ...],
        cwd: str | None,
    ) -> None:
        self.argv = argv
        self.env = env
        self.inherit_env = inherit_env
        self.cwd = cwd


def _read(path: str) -> object:
    """The JSON document at ``path``: a regular file within the size limit, else ``None``."""
    from mcpctl.config.safefile import read_file
    from mcpctl.errors import McpctlError

    try:
        raw = read_file(path)
        return json.loads(raw.decode("utf-8-sig")) if raw is not None else None
    except (McpctlError, ValueError, RecursionError):
        return None


def _valid(data: dict[str, object]) -> bool:
    """``data`` is a stdio entry the model accepts, with nothing beyond the plain fields."""
    if not _KNOWN.issuperset(data):
        return False
    command = data.get("command")
    if not isinstance(command, str) or not command.strip():
        return False
    for key in _STRINGS:
        value = data.get(key, "x")
        if not isinstance(value, str) or (key == "cwd" and not value.strip()):
            return False
    if any(not isinstance(data.get(key, True), bool) for key in _BOOLS):
        return False
    args = data.get("args", [])
    env = data.get("env", {})
    inherit = data.get("inherit_env", False)
    timeout = data.get("timeout", 1)
    groups = data.get("groups", [])
    return (
        isinstance(args, list)
        and all(isinstance(a, str) for a in args)
        and isinstance(env, dict)
        and all(ENV_NAME_RE.fullmatch(k) and isinstance(v, str) for k, v in env.items())
        and (
            isinstance(inherit, bool)
            or (
                isinstance(inherit, list)
                and all(isinstance(n, str) and INHERIT_NAME_RE.fullmatch(n) for n in inherit)
            )
        )
        and isinstance(groups, list)
        and all(isinstance(g, str) and NAME_RE.fullmatch(g) for g in groups)
        and type(timeout) is int
        and 0 < timeout <= MAX_TIMEOUT_MS
        and data.get("transport", "stdio") == "stdio"
        and data.get("protocol", "auto") in _PROTOCOLS
    )


def plain_entry(
    name: str,
    path: str,
    environ: Mapping[str, str],
    secrets: Callable[[str], str | None] | None = None,
    allowed: Callable[[dict[str, object]], bool] | None = None,
) -> PlainEntry | None:
    """Entry ``name`` of the config file at ``path``, resolved, when it is plain; else ``None``.

    ``allowed`` sees the entry's JSON object before anything is resolved: ``False`` is
    ``None`` too (the launcher's trust check, :func:`mcpctl.config.trustrecord.quick_trusted`).
    Placeholders resolve from ``environ``, then ``secrets``, then their default, as
    :func:`mcpctl.config.placeholders.resolve_entry` resolves them. Never raises: a variable
    without a value, or a ``secrets`` that raises, is ``None`` too.
    """
    doc = _read(path)
    if not isinstance(doc, dict) or not NAME_RE.fullmatch(name) or name.startswith("$"):
        return None
    data = doc.get(name)
    if not isinstance(data, dict) or not _valid(data) or data.get("enabled", True) is False:
        return None
    try:
        if allowed is not None and not allowed(data):
            return None
    except (OSError, ValueError, TypeError):  # the full path checks again, and says why
        return None

    def value(match: re.Match[str]) -> str:
        var, default = match["name"], match["default"]
        found = environ.get(var)
        if found is None and secrets is not None:
            found = secrets(var)
        if found is None:
            found = default
        if found is None:
            raise LookupError(var)
        return found

    def text(raw: object) -> str:
        return PLACEHOLDER_RE.sub(value, str(raw))

    try:
        argv = [text(data["command"]), *(text(a) for a in data.get("args", []))]
        env = {k: text(v) for k, v in data.get("env", {}).items()}
        cwd = text(data["cwd"]) if "cwd" in data else None
    # Unresolved, or the secret source failed however a caller's source fails: the full
    # path resolves again and reports it, so nothing of the source's may escape here.
    except Exception:
        return None
    if any(map(unpassable, (*argv, *env, *env.values(), cwd or ""))):
        return None  # the model refuses it, and says where
    inherit = data.get("inherit_env", False)
    return PlainEntry(argv, env, inherit if isinstance(inherit, bool) else tuple(inherit), cwd)
