"""The checks of one entry beyond the model of record (:mod:`mcpctl.config.schema`): literal
secrets, placeholders that will not expand, an environment handed over whole or a secret in
it, a secret placeholder in ``args`` (where ``ps`` shows it to every user of the machine),
plain-http URLs to other hosts, and commands that are not installed.

:class:`EntryChecks` runs them for the strict validator (:mod:`mcpctl.config.validate`);
:func:`entry_warnings` for one new entry (``mcpctl add``).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcpctl.config.jsontext import PositionedJson
from mcpctl.config.model import TRANSPORTS, format_path
from mcpctl.config.placeholders import find_placeholders, near_misses
from mcpctl.config.redaction import (
    ENV_SECRET_NAME_RE,
    SECRET_KEY_RE,
    literal_secrets,
    named_literal_hint,
    named_literal_message,
    placeholder_hint,
)
from mcpctl.config.validationreport import ProblemCollector

__all__ = ["EntryChecks", "SecretNames", "entry_warnings"]

PathT = tuple[str | int, ...]
#: Variables known to hold secrets, or a function giving them (called once, when needed).
SecretNames = Iterable[str] | Callable[[], Iterable[str]]


def _is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _with_dollar(entry: dict[str, Any]) -> list[tuple[PathT, str]]:
    """(relative path, value) of the strings placeholders are expanded in that hold a ``$``
    (the others cannot hold a near-miss)."""
    found: list[tuple[PathT, str]] = []
    for key in ("command", "cwd", "url"):
        value = entry.get(key)
        if isinstance(value, str) and "$" in value:
            found.append(((key,), value))
    args = entry.get("args")
    if isinstance(args, list):
        found += [(("args", i), a) for i, a in enumerate(args) if isinstance(a, str) and "$" in a]
    for section in ("env", "headers"):
        mapping = entry.get(section)
        if isinstance(mapping, dict):
            found += [
                ((section, k), v) for k, v in mapping.items() if isinstance(v, str) and "$" in v
            ]
    auth = entry.get("auth")
    if isinstance(auth, dict):
        for key in ("token", "value", "password", "client_secret"):
            value = auth.get(key)
            if isinstance(value, str) and "$" in value:
                found.append((("auth", key), value))
    return found


class EntryChecks:
    """The checks beyond the model, for one run (it remembers which commands it found)."""

    def __init__(
        self,
        col: ProblemCollector,
        base: Path,
        strict_commands: bool,
        secret_names: SecretNames = (),
    ) -> None:
        self.col = col
        self.base = base
        self.strict = strict_commands
        self._secret_names = secret_names
        self._known: frozenset[str] | None = None  # asked for once, and only if needed
        self.found: dict[tuple[str, str], bool] = {}  # (directory, command): installed

    def entry(self, name: str, entry: dict[str, Any]) -> None:
        col = self.col
        for found in literal_secrets(entry):
            path = (name, *found.path)
            if found.by_name:
                section, key = found.path
                value = str(entry[str(section)][key])
                col.add(
                    "error", "named_literal_secret", path,
                    named_literal_message(format_path(path), found),
                    hint=named_literal_hint(name, str(section), found.key, value, in_file=True),
                )  # fmt: skip
                continue
            col.add(
                "error", "plaintext_secret", path,
                f"{format_path(path)} looks like a literal secret; config files get "
                "committed and shared",
                hint=placeholder_hint(name, format_path(found.path), found.key),
            )  # fmt: skip
        for rel, value in _with_dollar(entry):
            col.add_each(
                "warning", "unexpanded_placeholder", (name, *rel), near_misses(value),
                lambda miss: f"{miss!r} is not expanded: placeholders are ${{UPPER_SNAKE_CASE}}",
                hint="write ${NAME} or ${NAME:-default} with NAME in UPPER_SNAKE_CASE",
            )  # fmt: skip
        if _is_stdio(entry):  # elsewhere inherit_env is an error of its own
            self.inherit_env(name, entry.get("inherit_env"))
            self.secret_args(name, entry.get("args"))
        url = entry.get("url")
        if isinstance(url, str) and not find_placeholders(url) and _plain_http_elsewhere(url):
            col.add(
                "warning", "insecure_url", (name, "url"),
                "plain http to a non-loopback host sends headers and tokens unencrypted",
                hint="use https://",
            )  # fmt: skip
        command = entry.get("command")
        if isinstance(command, str) and command.strip() and not find_placeholders(command):
            self.command(name, entry, command)

    def inherit_env(self, name: str, value: object) -> None:
        if value is True:
            self.col.add(
                "warning", "inherit_env_all", (name, "inherit_env"),
                "inherit_env is true: the server sees every environment variable mcpctl runs "
                "with, secrets included",
                hint='list only the variables it needs: "inherit_env": ["NAME", ...]',
            )  # fmt: skip
        elif isinstance(value, list):
            for i, var in enumerate(value):
                if isinstance(var, str) and ENV_SECRET_NAME_RE.search(var):
                    self.col.add(
                        "warning", "inherit_env_secret", (name, "inherit_env", i),
                        f"{var!r} looks like a secret: its value will reach the server, which "
                        "may be intended",
                        hint="keep it if the server needs it; otherwise take it out of "
                        "inherit_env",
                    )  # fmt: skip

    def secret_args(self, name: str, args: object) -> None:
        """A secret's placeholder in ``args``: resolved, it sits on the server's command line."""
        for i, arg in enumerate(args if isinstance(args, list) else ()):
            found = find_placeholders(arg) if isinstance(arg, str) else []
            for var in dict.fromkeys(p.name for p in found):
                if self.secret(var):
                    self.col.add(
                        "warning", "secret_args", (name, "args", i),
                        f"${{{var}}} is a secret on the server's command line, where every "
                        "user of this machine can read it (ps, /proc)",
                        hint=f'pass it in "env" instead ("{var}": "${{{var}}}") if the server '
                        "reads it from its environment",
                    )  # fmt: skip

    def secret(self, var: str) -> bool:
        """Whether ``var`` holds a secret: named like one, or a name the caller knows."""
        if SECRET_KEY_RE.search(var):
            return True
        if self._known is None:
            names = self._secret_names
            self._known = frozenset(names() if callable(names) else names)
        return var in self._known

    def command(self, name: str, entry: dict[str, Any], command: str) -> None:
        cwd = entry.get("cwd")
        relative = os.sep in command
        # Taken as written, ``~`` too: no shell expands it when the server starts.
        if relative and isinstance(cwd, str) and not find_placeholders(cwd):
            key = (str(self.base / cwd), command)
        else:
            key = (str(self.base) if relative else "", command)
        if key not in self.found:
            if relative:
                candidate = Path(key[0]) / command
                self.found[key] = candidate.is_file() and os.access(candidate, os.X_OK)
            else:
                self.found[key] = shutil.which(command) is not None
        if not self.found[key]:
            self.col.add(
                "error" if self.strict else "warning", "command_not_found", (name, "command"),
                f"command {command!r} is not installed here (not found on PATH)",
                hint=_install_hint(command),
            )  # fmt: skip


def _is_stdio(entry: dict[str, Any]) -> bool:
    transport = entry.get("transport")
    if transport is None:
        return "url" not in entry
    spec = TRANSPORTS.get(transport) if isinstance(transport, str) else None
    return spec is not None and not spec.remote


def _plain_http_elsewhere(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False  # not a URL at all: the model check reports it
    return parts.scheme == "http" and not _is_loopback(parts.hostname or "")


def _install_hint(command: str) -> str:
    from mcpctl.config.runtimes import install_hint

    return install_hint(
        command, "install it, or fix the path; --strict-commands makes this an error"
    )


def entry_warnings(
    name: str, data: dict[str, Any], *, base: Path, secret_names: SecretNames = ()
) -> list[str]:
    """What ``validate`` would say about one new entry beyond the model (for ``add``);
    ``secret_names`` as for :func:`validate_text`."""
    col = ProblemCollector(PositionedJson(data))
    EntryChecks(col, base, strict_commands=False, secret_names=secret_names).entry(name, data)
    return [p.message + (f" ({p.hint})" if p.hint else "") for p in col.problems()]
