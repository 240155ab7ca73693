"""``${NAME}`` / ``${NAME:-default}`` placeholders: parsing, resolution and redaction.

NAME is UPPER_SNAKE_CASE (``[A-Z_][A-Z0-9_]*``), as orchestrators expand them; anything
else (``$NAME``, ``${lower}``) is left as literal text and flagged by ``validate``.
A value resolves from the process environment, then from the secret source (the
keyring), then from the default. When none has it, the policy decides:

* ``empty`` -- empty string and a warning (what the Annabelle orchestrator does);
* ``skip``  -- leave the whole server out, with a warning naming the variable;
* ``error`` -- raise :class:`~mcpctl.errors.PlaceholderError` (what ``validate`` and CI use).

This module also knows what a secret looks like, so that literal tokens are never
written into the config file nor printed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, NamedTuple

from mcpctl.errors import PlaceholderError, SkipServer

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = [
    "REDACTED",
    "MissingPolicy",
    "Placeholder",
    "ResolvedEntry",
    "SecretSource",
    "find_placeholders",
    "literal_secrets",
    "looks_like_secret",
    "placeholder_hint",
    "redact_entry_data",
    "redact_literal",
    "redact_text",
    "resolve_entry",
    "resolve_text",
]

MissingPolicy = Literal["empty", "skip", "error"]
SecretSource = Callable[[str], "str | None"]
"""Looks a variable up in a secret store; returns ``None`` when it is not there."""

REDACTED = "****"

# A default holds no brace: a scan for the closing one then stops at the next "{", which keeps
# matching linear on hostile input (thousands of unclosed "${A:-").
PLACEHOLDER_RE = re.compile(r"\$\{(?P<name>[A-Z_][A-Z0-9_]*)(?::-(?P<default>[^{}]*))?\}")
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
            return value
        if self.secrets is not None:
            secret = self.secrets(ph.name)
            if secret is not None:
                self.secret_values.add(secret)
                return secret
        if ph.default is not None:
            return ph.default
        return self.missing(ph.name)

    def missing(self, name: str) -> str:
        where = f" (in {self.context})" if self.context else ""
        if self.policy == "error":
            raise PlaceholderError(
                f"variable {name} is not set{where}",
                variable=name,
                hint=f"export {name}=... or give it a default: ${{{name}:-value}}",
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


def resolve_text(
    text: str,
    *,
    environ: Mapping[str, str] | None = None,
    secrets: SecretSource | None = None,
    policy: MissingPolicy = "error",
) -> str:
    """Replace every placeholder in ``text``.

    Raises:
        PlaceholderError: a variable has no value and ``policy`` is ``error``.
        SkipServer: a variable has no value and ``policy`` is ``skip``.
    """
    import os

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
        """``text`` with every resolved value replaced by ``****``."""
        return redact_text(text, self.secret_values)


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

    Raises:
        PlaceholderError: a variable has no value and ``policy`` is ``error``.
    """
    import os

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
    # Values of two characters or fewer would redact half the output: not worth hiding.
    secrets_seen = frozenset(v for v in res.secret_values if len(v) > 2)
    return ResolvedEntry(name, resolved, tuple(res.warnings), secrets_seen)


def redact_text(text: str, values: frozenset[str] | set[str]) -> str:
    """``text`` with each of ``values`` (longest first) replaced by ``****``."""
    for value in sorted(values, key=len, reverse=True):
        if value:
            text = text.replace(value, REDACTED)
    return text


# --- what a secret looks like -------------------------------------------------------

_KNOWN_PREFIXES = (
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",  # GitHub
    "glpat-", "gldt-",  # GitLab
    "sk-", "sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_",  # OpenAI, Stripe
    "phx_", "phc_",  # PostHog
    "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xapp-",  # Slack
    "npm_", "pypi-", "hf_", "dop_v1_", "shpat_", "lin_api_", "ntn_", "secret_",
    "AKIA", "ASIA", "AIza", "ya29.", "SG.", "key-", "figd_", "sntrys_", "pat-",
)  # fmt: skip
_AUTH_SCHEME_RE = re.compile(r"^(?:Bearer|Basic|Token|Bot)\s+(?P<cred>\S{8,})$", re.IGNORECASE)
_JWT_RE = re.compile(r"^eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*$")
_TOKEN_CHARS_RE = re.compile(r"^[A-Za-z0-9_\-+/=.~]+$")
_DIGIT_RE = re.compile(r"[0-9]")
_LETTER_RE = re.compile(r"[A-Za-z]")


def _entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    # Cheap tests first, in C (regexes): the store runs this on every value it writes.
    if len(token) < 20 or not _TOKEN_CHARS_RE.match(token):
        return False
    if "/" in token and not token.endswith("="):
        return False  # a path or a URL segment, not a key
    if not _DIGIT_RE.search(token) or not _LETTER_RE.search(token):
        return False  # a key mixes digits with letters
    return _entropy(token) >= 3.5


def secret_fragments(value: str) -> Iterator[str]:
    """The parts of a literal value that look like secrets (used for detection and redaction).

    Placeholders are never secrets: ``${GITHUB_TOKEN}`` is the safe way to write one.
    """
    scheme = _AUTH_SCHEME_RE.match(value.strip())
    if scheme and not PLACEHOLDER_RE.search(scheme["cred"]):
        yield scheme["cred"]
        return
    for token in re.split(r"[\s=:,;&?]+", value):
        if PLACEHOLDER_RE.search(token):
            continue
        if (
            (len(token) >= 12 and token.startswith(_KNOWN_PREFIXES))
            or _JWT_RE.match(token)
            or _looks_random(token)
        ):
            yield token


def looks_like_secret(value: str) -> bool:
    """Whether a literal value looks like a credential (token, key, password)."""
    return next(secret_fragments(value), None) is not None


def redact_literal(value: str) -> str:
    """``value`` with anything that looks like a secret replaced by ``****``.

    Placeholders stay as they are: they are references, safe to show.
    """
    return redact_text(value, set(secret_fragments(value)))


SECRET_NAME_RE = re.compile(
    r"token|secret|passw(or)?d|api[_-]?key|auth|credential|private|cookie|session", re.IGNORECASE
)


def _redact_named(key: str, value: object) -> object:
    """A variable or header whose *name* says it is secret is hidden when literal."""
    if not isinstance(value, str):
        return value
    if SECRET_NAME_RE.search(key) and value and not find_placeholders(value):
        return REDACTED
    return redact_literal(value)


def redact_entry_data(data: Mapping[str, object]) -> dict[str, object]:
    """A copy of an entry's JSON object fit for output: literal secrets become ``****``.

    Placeholders are kept (they name the variable, not its value).
    """
    out: dict[str, object] = dict(data)
    for key in ("command", "cwd", "url"):
        value = out.get(key)
        if isinstance(value, str):
            out[key] = redact_literal(value)
    args = out.get("args")
    if isinstance(args, list):
        out["args"] = [redact_literal(a) if isinstance(a, str) else a for a in args]
    for section in ("env", "headers"):
        mapping = out.get(section)
        if isinstance(mapping, dict):
            out[section] = {k: _redact_named(k, v) for k, v in mapping.items()}
    auth = out.get("auth")
    if isinstance(auth, dict):
        clean = dict(auth)
        for key in ("token", "value", "password", "client_secret"):
            value = clean.get(key)
            # Credentials in auth are secret whatever they look like, unless they
            # only reference variables ("Bearer ${TOKEN}").
            if isinstance(value, str) and not (
                find_placeholders(value) and not looks_like_secret(value)
            ):
                clean[key] = REDACTED
        out["auth"] = clean
    return out


def _auth_literal(value: str) -> bool:
    # A credential in auth is secret whatever it looks like, unless it only references
    # variables ("Bearer ${TOKEN}").
    return bool(value) and not (find_placeholders(value) and not looks_like_secret(value))


def literal_secrets(data: Mapping[str, object]) -> list[tuple[tuple[str | int, ...], str]]:
    """Where an entry's JSON object holds a literal secret: (path in the entry, its key).

    Looked at: ``env``, ``headers``, ``args`` and ``url`` values that look like a credential,
    and every ``auth`` credential that is not a ``${VAR}`` placeholder.
    """
    found: list[tuple[tuple[str | int, ...], str]] = []
    for section in ("env", "headers"):
        mapping = data.get(section)
        if isinstance(mapping, Mapping):
            for key, value in mapping.items():
                if isinstance(value, str) and looks_like_secret(value):
                    found.append(((section, key), str(key)))
    args = data.get("args")
    if isinstance(args, list):
        for i, arg in enumerate(args):
            if isinstance(arg, str) and looks_like_secret(arg):
                found.append((("args", i), ""))
    url = data.get("url")
    if isinstance(url, str) and looks_like_secret(url):
        found.append((("url",), ""))
    auth = data.get("auth")
    if isinstance(auth, Mapping):
        for key in ("token", "value", "password", "client_secret"):
            value = auth.get(key)
            if isinstance(value, str) and _auth_literal(value):
                found.append((("auth", key), key))
    return found


def variable_name(server: str, key: str) -> str:
    """A ``${VAR}`` name for a secret at ``key`` of ``server`` (``X-Api-Key`` -> ``X_API_KEY``)."""
    raw = key.upper().replace("-", "_") if key else f"{server.upper().replace('-', '_')}_TOKEN"
    return "".join(c if c.isalnum() or c == "_" else "_" for c in raw).strip("_") or "SECRET"


def placeholder_hint(server: str, where: str, key: str = "") -> str:
    """What to write instead of a literal secret at ``where`` (``env.GITHUB_TOKEN``)."""
    var = variable_name(server, key)
    return (
        f'write "${{{var}}}" in {where} instead and give {var} a value where mcpctl and the '
        f"host run (export {var}=...)"
    )
