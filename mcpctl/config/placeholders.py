"""``${NAME}`` / ``${NAME:-default}`` placeholders: parsing and resolution.

NAME is UPPER_SNAKE_CASE (``[A-Z_][A-Z0-9_]*``), as orchestrators expand them; anything
else (``$NAME``, ``${lower}``) is left as literal text and flagged by ``validate``.
A value resolves from the process environment, then from the secret source (the
keyring), then from the default. When none has it, the policy decides:

* ``empty`` -- empty string and a warning (what the orchestrator of docs/config.md does);
* ``skip``  -- leave the whole server out, with a warning naming the variable;
* ``error`` -- raise :class:`~mcpctl.errors.PlaceholderError` (what ``validate`` and CI use).

A variable the environment lacks and the secret source *could not be asked* for (the keyring
is unreachable) is not "not set": the warning says why, and ``error`` raises
:class:`~mcpctl.errors.SecretUnreachableError` (exit 3) instead.

Every value resolved from the environment or the secret source is remembered for the rest of
the process (:func:`resolved_values`, kept by :mod:`mcpctl.config.secretvalues`), so that
whatever mcpctl prints can be redacted of the secrets of every entry, not only of the one at
hand (:mod:`mcpctl.config.redaction`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, NamedTuple

from mcpctl.config import trustguard
from mcpctl.config.fieldsyntax import PLACEHOLDER_RE, unpassable
from mcpctl.config.secretvalues import (
    MIN_SECRET_LEN,
    REDACTED,
    forget_resolved,
    redact_text,
    resolved_values,
)
from mcpctl.config.secretvalues import remember as _remember
from mcpctl.errors import (
    InvalidEntryError,
    KeyringUnavailableError,
    PlaceholderError,
    SecretUnreachableError,
    SkipServer,
)

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = [
    "PLACEHOLDER_RE",
    "REDACTED",
    "MissingPolicy",
    "Placeholder",
    "ResolvedEntry",
    "SecretSource",
    "find_placeholders",
    "forget_resolved",
    "near_misses",
    "redact_text",
    "resolve_entry",
    "resolve_text",
    "resolved_values",
    "secret_held",
    "unspawnable",
]

MissingPolicy = Literal["empty", "skip", "error"]
SecretSource = Callable[[str], "str | None"]
"""Looks a variable up in a secret store; returns ``None`` when it is not there, and raises
:class:`~mcpctl.errors.KeyringUnavailableError` when the store could not be asked (which
resolution reports as :class:`~mcpctl.errors.SecretUnreachableError`, never as "not set")."""

# What people write when they mean a placeholder but that we do not expand.
NEAR_MISS_RE = re.compile(r"\$\{[^{}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


class Placeholder(NamedTuple):
    """One ``${NAME}`` or ``${NAME:-default}`` occurrence."""

    name: str
    default: str | None
    start: int
    end: int


def find_placeholders(text: str) -> list[Placeholder]:
    """Every placeholder in ``text``, in order."""
    return [
        Placeholder(m["name"], m["default"], m.start(), m.end())
        for m in PLACEHOLDER_RE.finditer(text)
    ]


def near_misses(text: str) -> list[str]:
    """Fragments that look like placeholders but are not expanded (``$X``, ``${x}``)."""
    stripped = PLACEHOLDER_RE.sub("", text)
    return [m.group(0) for m in NEAR_MISS_RE.finditer(stripped)]


class _Resolution:
    def __init__(
        self,
        policy: MissingPolicy,
        environ: Mapping[str, str],
        secrets: SecretSource | None,
        context: str,
    ) -> None:
        self.policy = policy
        self.environ = environ
        self.secrets = secrets
        self.context = context
        self.warnings: list[str] = []
        self.secret_values: set[str] = set()

    def lookup(self, ph: Placeholder) -> str:
        value = self.environ.get(ph.name)
        if value is not None:
            self.secret_values.add(value)
            _remember(value)
            return value
        unreachable: KeyringUnavailableError | None = None
        if self.secrets is not None:
            try:
                secret = self.secrets(ph.name)
            except KeyringUnavailableError as exc:
                secret, unreachable = None, exc
            if secret is not None:
                self.secret_values.add(secret)
                _remember(secret)
                return secret
        if ph.default is not None:
            if unreachable is not None:
                self.warnings.append(
                    f"variable {ph.name} is not in the environment and the keyring could not "
                    f"be asked ({unreachable.reason}){self.where}; using its default"
                )
            return ph.default
        if unreachable is not None:
            return self.unreachable(ph.name, unreachable)
        return self.missing(ph.name)

    @property
    def where(self) -> str:
        return f" (in {self.context})" if self.context else ""

    def unreachable(self, name: str, exc: KeyringUnavailableError) -> str:
        """``name`` may well be stored, but the keyring could not be asked: say so, and why."""
        what = (
            f"variable {name} is not in the environment, and the keyring that may hold it "
            f"could not be asked: {exc.reason}"
        )
        if self.policy == "error":
            raise SecretUnreachableError(
                f"{what}{self.where}",
                variable=name,
                reason=exc.reason,
                hint=f"export {name}=... in the environment that starts mcpctl, or reach the "
                "keyring from it: a D-Bus session bus (DBUS_SESSION_BUS_ADDRESS) with an "
                "unlocked Secret Service, or another backend via PYTHON_KEYRING_BACKEND",
            )
        if self.policy == "skip":
            raise SkipServer(name)
        self.warnings.append(f"{what}{self.where}; using an empty string")
        return ""

    def missing(self, name: str) -> str:
        where = self.where
        if self.policy == "error":
            raise PlaceholderError(
                f"variable {name} is not set{where}",
                variable=name,
                hint=f"store it with 'mcpctl secret set {name}', export {name}=..., or give "
                f"it a default: ${{{name}:-value}}",
            )
        if self.policy == "skip":
            raise SkipServer(name)
        self.warnings.append(f"variable {name} is not set{where}; using an empty string")
        return ""

    def text(self, value: str) -> str:
        return PLACEHOLDER_RE.sub(
            lambda m: self.lookup(Placeholder(m["name"], m["default"], m.start(), m.end())),
            value,
        )


def secret_held(secrets: SecretSource | None, name: str) -> bool | None:
    """Whether ``secrets`` holds ``name`` (never its value): ``None`` when it could not be
    asked (the keyring is unreachable), which callers must not take for "not stored"."""
    if secrets is None:
        return False
    try:
        return secrets(name) is not None
    except KeyringUnavailableError:
        return None


def resolve_text(
    text: str,
    *,
    environ: Mapping[str, str] | None = None,
    secrets: SecretSource | None = None,
    policy: MissingPolicy = "error",
) -> str:
    """Replace every placeholder in ``text``.

    Raises:
        PlaceholderError: a variable has no value and ``policy`` is ``error``
            (:class:`~mcpctl.errors.SecretUnreachableError` when the keyring that may
            hold it could not be asked).
        SkipServer: a variable has no value and ``policy`` is ``skip``.
    """
    env = os.environ if environ is None else environ
    return _Resolution(policy, env, secrets, "").text(text)


@dataclass(frozen=True)
class ResolvedEntry:
    """A server entry with its placeholders filled in.

    ``entry`` holds real values (secrets included): hand it to a process or a connection,
    never to output. Use :meth:`redact` on anything derived from it before printing.
    """

    name: str
    entry: ServerEntry
    warnings: tuple[str, ...] = ()
    secret_values: frozenset[str] = frozenset()

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by ``****``: this entry's resolved values, every
        other value resolved in this process, and whatever looks like a credential."""
        from mcpctl.config.redaction import redact

        return redact(text, extra=self.secret_values)


def unspawnable(entry: ServerEntry) -> str | None:
    """Why a stdio ``entry`` cannot be started as it is: the field (``args[1]``, ``env.X``,
    the name of an ``env`` variable, ``cwd``) and what it holds that no process can be given
    (a NUL character, a lone surrogate such as ``"\\ud800"``, both valid JSON escapes);
    ``None`` for an entry that can be (and for a remote one)."""
    if entry.is_remote:
        return None
    from mcpctl.text import escape_controls

    fields = [("command", entry.command or ""), ("cwd", entry.cwd or "")]
    fields += [(f"args[{i}]", arg) for i, arg in enumerate(entry.args)]
    for key, value in entry.env.items():
        shown = escape_controls(key, keep_newlines=False)
        fields += [(f"the name of env variable '{shown}'", key), (f"env.{shown}", value)]
    for where, text in fields:
        what = unpassable(text)
        if what is not None:
            return f"{where} holds {what}, which no process can be given"
    return None


def resolve_entry(
    name: str,
    entry: ServerEntry,
    *,
    policy: MissingPolicy = "empty",
    environ: Mapping[str, str] | None = None,
    secrets: SecretSource | None = None,
) -> ResolvedEntry | None:
    """Resolve the placeholders of one entry (command, args, env, cwd, url, headers, auth).

    Returns ``None`` when ``policy`` is ``skip`` and a variable is missing (the caller
    leaves the server out; :func:`resolve_entry_reason` style warnings are the caller's).

    A stdio entry is also checked to be one a process can be started with, once resolved:
    see :func:`unspawnable`.

    Raises:
        PlaceholderError: a variable has no value and ``policy`` is ``error``
            (:class:`~mcpctl.errors.SecretUnreachableError` when the keyring that may
            hold it could not be asked).
        InvalidEntryError: the resolved command, an argument, an environment variable (name
            or value) or the working directory holds a NUL character or a lone surrogate.
        UntrustedConfigError: this process read the entry from a config file whose servers
            wait for approval (see :mod:`mcpctl.config.trustguard`).
    """
    if trustguard.HELD:
        trustguard.check(name, entry)
    env = os.environ if environ is None else environ
    res = _Resolution(policy, env, secrets, f"server {name!r}")
    try:
        resolved = replace(
            entry,
            command=res.text(entry.command) if entry.command is not None else None,
            args=tuple(res.text(a) for a in entry.args),
            env={k: res.text(v) for k, v in entry.env.items()},
            cwd=res.text(entry.cwd) if entry.cwd is not None else None,
            url=res.text(entry.url) if entry.url is not None else None,
            headers={k: res.text(v) for k, v in entry.headers.items()},
            auth=entry.auth.map_values(res.text) if entry.auth is not None else None,
        )
    except SkipServer:
        return None
    problem = unspawnable(resolved)
    if problem is not None:
        raise InvalidEntryError(f"{problem} (in server {name!r})")
    secrets_seen = frozenset(v for v in res.secret_values if len(v) >= MIN_SECRET_LEN)
    return ResolvedEntry(name, resolved, tuple(res.warnings), secrets_seen)
