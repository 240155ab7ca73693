"""A tool call's arguments as given on a command line: ``--args-json`` (an inline object,
``@FILE`` or ``-`` for stdin) and ``--arg KEY=VALUE`` pairs, each value typed by the tool's
input schema (a string stays a string; anything else is read as JSON when it parses).

    given = load_args_json('{"query": "mcp"}')            # read before any server starts
    arguments = tool_arguments(["limit=5"], given, info.input_schema)
"""

from __future__ import annotations

import json
import sys
from typing import Any

from mcpctl.errors import UsageError

__all__ = ["coerce", "load_args_json", "tool_arguments"]


def load_args_json(args_json: str | None) -> dict[str, Any]:
    """The ``--args-json`` object (inline, ``@FILE`` or ``-``), read before any server starts.

    Raises:
        UsageError: the file cannot be read, stdin is a terminal, or the text is not a JSON
            object.
    """
    if args_json is None:
        return {}
    if args_json == "-":
        text = _read_stdin_json()
    elif args_json.startswith("@"):
        from mcpctl.config.safefile import decode_text, read_file

        raw = read_file(args_json[1:])
        if raw is None:
            raise UsageError(f"cannot read {args_json[1:]}: No such file or directory")
        text = decode_text(raw, args_json[1:])
    else:
        text = args_json
    try:
        loaded = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--args-json is not valid JSON: {exc}") from None
    if not isinstance(loaded, dict):
        raise UsageError("--args-json must be a JSON object of arguments")
    return loaded


def tool_arguments(
    pairs: list[str], given: dict[str, Any], schema: dict[str, Any]
) -> dict[str, Any]:
    """``given`` with each ``KEY=VALUE`` of ``pairs`` set, typed by ``schema``'s properties.

    Raises:
        UsageError: a pair is not in the form key=value.
    """
    arguments: dict[str, Any] = dict(given)
    props = schema.get("properties") or {}
    for raw in pairs:
        key, found, value = raw.partition("=")
        if not found or not key:
            raise UsageError(f"--arg {raw!r} is not in the form key=value")
        arguments[key] = coerce(value, props.get(key))
    return arguments


def _read_stdin_json() -> str:
    if sys.stdin.isatty():
        raise UsageError(
            "--args-json - reads the arguments from stdin, but stdin is a terminal",
            hint="pipe the JSON in, or pass --args-json '{...}'",
        )
    return sys.stdin.read()


def coerce(value: str, spec: Any) -> Any:
    """``--arg`` values are strings unless the tool's schema asks for another JSON type."""
    kind = spec.get("type") if isinstance(spec, dict) else None
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value
