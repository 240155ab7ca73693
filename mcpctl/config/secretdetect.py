"""What a secret looks like: a literal credential told from an ordinary value.

:func:`looks_like_secret` and :func:`literal_secrets` recognise known token prefixes,
``Bearer <token>``, JWTs, passwords inside URLs and long random-looking keys, and values
under names that say they are secret, so that the store refuses to write one and
``validate`` reports it (with the hints that name the placeholder to write instead);
:func:`redact_entry_data` hides literal ones in shown entries. Redacting them, and every
known secret value, out of output is :mod:`mcpctl.config.redaction`'s job.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from mcpctl.config.fieldsyntax import PLACEHOLDER_RE
from mcpctl.config.secretvalues import (
    REDACTED,
    redact_text,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "DIGIT_RE",
    "JWT_RE",
    "KNOWN_PREFIXES",
    "SECRET_KEY_RE",
    "SECRET_NAME_RE",
    "URL_PASSWORD_RE",
    "LiteralSecret",
    "literal_secret_values",
    "literal_secrets",
    "literal_under_secret_name",
    "looks_like_secret",
    "looks_random",
    "named_literal_hint",
    "named_literal_message",
    "placeholder_hint",
    "redact_entry_data",
    "redact_literal",
    "secret_flag_values",
    "secret_fragments",
    "variable_name",
]

# The lookbehind starts a scheme only at a word's start: without it, each position of a long
# run of letters would rescan the run (quadratic).
URL_PASSWORD_RE = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:(?P<password>[^/\s@]+)@"
)

KNOWN_PREFIXES = (
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",  # GitHub
    "glpat-", "gldt-",  # GitLab
    "sk-", "sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_",  # OpenAI, Stripe
    "phx_", "phc_",  # PostHog
    "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xapp-",  # Slack
    "npm_", "pypi-", "hf_", "dop_v1_", "shpat_", "lin_api_", "ntn_", "secret_",
    "AKIA", "ASIA", "AIza", "ya29.", "SG.", "key-", "figd_", "sntrys_", "pat-",
)  # fmt: skip
_SCHEMES = ("bearer", "basic", "token", "bot")
_AUTH_SCHEME_RE = re.compile(r"^(?:Bearer|Basic|Token|Bot)\s+(?P<cred>\S{8,})$", re.IGNORECASE)
JWT_RE = re.compile(r"^eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*$")
_VALUE_SPLIT_RE = re.compile(r"[\s=:,;&?]+")
_TOKEN_CHARS_RE = re.compile(r"^[A-Za-z0-9_\-+/=.~]+$")
DIGIT_RE = re.compile(r"[0-9]")
# The shortest value any form could match: "Bot " + 8 characters, or a 12-character token
# with a known prefix (a JWT needs 15, a random-looking token 20); a URL's password is
# looked for whatever the length.
_SHORTEST_SECRET = 12
_LETTER_RE = re.compile(r"[A-Za-z]")


def _entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(token: str) -> bool:
    # Cheap tests first, in C (regexes): the store runs this on every value it writes.
    if len(token) < 20 or not _TOKEN_CHARS_RE.match(token):
        return False
    if "/" in token and not token.endswith("="):
        return False  # a path or a URL segment, not a key
    if not DIGIT_RE.search(token) or not _LETTER_RE.search(token):
        return False  # a key mixes digits with letters
    return _entropy(token) >= 3.5


def secret_fragments(value: str) -> Iterator[str]:
    """The parts of a literal value that look like secrets (used for detection and redaction).

    Placeholders are never secrets: ``${GITHUB_TOKEN}`` is the safe way to write one.
    """
    if len(value) < _SHORTEST_SECRET and "://" not in value:
        return  # shorter than any form below (most arguments are: -y, --port, 3000)
    scheme = _AUTH_SCHEME_RE.match(value.strip())
    if scheme and not PLACEHOLDER_RE.search(scheme["cred"]):
        yield scheme["cred"]
        return
    if "://" in value:
        for match in URL_PASSWORD_RE.finditer(value):
            if not PLACEHOLDER_RE.search(match["password"]):
                yield match["password"]  # postgres://user:PASSWORD@host/db
    for token in _VALUE_SPLIT_RE.split(value):
        if PLACEHOLDER_RE.search(token):
            continue
        if (
            (len(token) >= 12 and token.startswith(KNOWN_PREFIXES))
            or JWT_RE.match(token)
            or looks_random(token)
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


def _redact_named(key: str, value: object, allowed: bool) -> object:
    """A variable or header whose *name* says it is secret is hidden when literal (unless
    the entry's ``allow_literal`` says it is not a secret, for the names only the write
    guard takes for secrets)."""
    if not isinstance(value, str):
        return value
    if SECRET_NAME_RE.search(key) and value and not PLACEHOLDER_RE.search(value):
        return REDACTED
    if not allowed and literal_under_secret_name(key, value):
        return REDACTED
    return redact_literal(value)


def redact_entry_data(data: Mapping[str, object]) -> dict[str, object]:
    """A copy of an entry's JSON object fit for output: literal secrets become ``****``.

    Placeholders are kept (they name the variable, not its value).
    """
    out: dict[str, object] = dict(data)
    env_ok, header_ok = _allowed(data)
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
            ok = env_ok if section == "env" else header_ok
            out[section] = {
                k: _redact_named(k, v, (k if section == "env" else k.lower()) in ok)
                for k, v in mapping.items()
            }
    auth = out.get("auth")
    if isinstance(auth, dict):
        clean = dict(auth)
        for key in ("token", "value", "password", "client_secret"):
            value = clean.get(key)
            # Credentials in auth are secret whatever they look like, unless they
            # only reference variables ("Bearer ${TOKEN}").
            if isinstance(value, str) and not (
                PLACEHOLDER_RE.search(value) and not looks_like_secret(value)
            ):
                clean[key] = REDACTED
        out["auth"] = clean
    return out


def _auth_literal(value: str) -> bool:
    # A credential in auth is secret whatever it looks like, unless it only references
    # variables ("Bearer ${TOKEN}").
    return bool(value) and not (PLACEHOLDER_RE.search(value) and not looks_like_secret(value))


# The env and header keys whose values are secret by name, whatever they look like:
# *TOKEN*, *SECRET*, *PASSWORD*, *PASSWD*, *CREDENTIAL*, *KEY, *PASS, *PAT (GITHUB_PAT),
# Authorization and Proxy-Authorization. "KEY", "PASS" and "PAT" only at the end:
# KEYBOARD_LAYOUT and PATH are not secrets.
SECRET_KEY_RE = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|(?:KEY|PASS|PAT)$|^(?:PROXY-)?AUTHORIZATION$",
    re.IGNORECASE,
)
# Values that are settings, not secrets, whatever the key: a switch or a small number
# (TOKENIZERS_PARALLELISM=false, MAX_TOKENS=4096).
_SETTING_RE = re.compile(r"true|false|yes|no|on|off|[0-9]{1,6}", re.IGNORECASE)


def literal_under_secret_name(key: str, value: str) -> bool:
    """Whether ``value`` is a literal held by a key named like a secret (``BRAVE_API_KEY``).

    Not literal: a value with a ``${VAR}`` placeholder anywhere (``Bearer ${TOKEN}``), an
    empty one or a bare auth scheme (``Bearer``: a placeholder the shell expanded to
    nothing, warned about by ``add``), or a setting (``true``, ``false``, ``yes``, ``no``,
    ``on``, ``off``, a whole number of up to six digits).
    """
    if not SECRET_KEY_RE.search(key):
        return False
    bare = value.strip()
    if not bare or bare.lower() in _SCHEMES or _SETTING_RE.fullmatch(bare):
        return False  # nothing, an auth scheme with nothing after it, or a setting
    return not PLACEHOLDER_RE.search(value)


# A command-line flag that takes a secret (--api-key VALUE, --token=VALUE): its last word.
_FLAG_RE = re.compile(
    r"(?P<dashes>-{1,2})(?P<name>[A-Za-z][A-Za-z0-9_-]*)(?:=(?P<value>.*))?", re.S
)
_SECRET_FLAG_WORDS = frozenset(
    ("key", "apikey", "token", "secret", "password", "passwd", "pass", "pat", "credential",
     "credentials", "authorization")
)  # fmt: skip
_PATH_LIKE = ("/", "./", "../", "~/", "~\\", ".\\")


def secret_flag_values(args: Sequence[object]) -> list[tuple[int, str]]:
    """``(index, flag)`` of each literal given to a flag named like a secret in ``args``:
    ``--api-key VALUE`` (the value's index) or ``--token=VALUE`` (the argument's own).

    Not counted: a value with a placeholder, a setting (see :func:`literal_under_secret_name`)
    or a file path (``--key ./tls.key``).
    """
    found: list[tuple[int, str]] = []
    for i, arg in enumerate(args):
        match = _FLAG_RE.fullmatch(arg) if isinstance(arg, str) else None
        if match is None:
            continue
        name = match["name"]
        if re.split(r"[-_]", name.lower())[-1] not in _SECRET_FLAG_WORDS:
            continue
        if match["value"] is not None:
            at, value = i, match["value"]
        elif i + 1 < len(args) and isinstance(args[i + 1], str):
            at, value = i + 1, str(args[i + 1])
            if value.startswith("-"):
                continue
        else:
            continue
        if not value.startswith(_PATH_LIKE) and literal_under_secret_name("TOKEN", value):
            found.append((at, match["dashes"] + name))
    return found


class LiteralSecret(NamedTuple):
    """A literal secret in an entry: where (path in the entry), the key it sits under
    (``""`` for args and the URL), and whether only the key's name says it is secret."""

    path: tuple[str | int, ...]
    key: str
    by_name: bool = False


def _allowed(data: Mapping[str, object]) -> tuple[set[str], set[str]]:
    """The keys ``allow_literal`` lets hold literals: env names as written, header names
    in lower case (HTTP ignores their case)."""
    listed = data.get("allow_literal")
    names = {n for n in listed if isinstance(n, str)} if isinstance(listed, list | tuple) else set()
    return names, {n.lower() for n in names}


def literal_secrets(data: Mapping[str, object]) -> list[LiteralSecret]:
    """Where an entry's JSON object holds a literal secret.

    Looked at: ``env``, ``headers``, ``args`` and ``url`` values that look like a credential;
    ``env`` and ``headers`` literals under a key named like a secret
    (:func:`literal_under_secret_name`) unless the entry's ``allow_literal`` lists the key;
    and every ``auth`` credential that is not a ``${VAR}`` placeholder.
    """
    found: list[LiteralSecret] = []
    env_ok, header_ok = _allowed(data)
    for section in ("env", "headers"):
        mapping = data.get(section)
        if isinstance(mapping, Mapping):
            for key, value in mapping.items():
                if not isinstance(value, str):
                    continue
                if looks_like_secret(value):
                    found.append(LiteralSecret((section, key), str(key)))
                elif literal_under_secret_name(str(key), value) and not (
                    key in env_ok if section == "env" else str(key).lower() in header_ok
                ):
                    found.append(LiteralSecret((section, key), str(key), by_name=True))
    args = data.get("args")
    if isinstance(args, list):
        shaped = {
            i for i, arg in enumerate(args) if isinstance(arg, str) and looks_like_secret(arg)
        }
        found += [LiteralSecret(("args", i), "") for i in sorted(shaped)]
        found += [
            LiteralSecret(("args", i), flag, by_name=True)
            for i, flag in secret_flag_values(args)
            if i not in shaped and flag not in env_ok
        ]
    url = data.get("url")
    if isinstance(url, str) and looks_like_secret(url):
        found.append(LiteralSecret(("url",), ""))
    auth = data.get("auth")
    if isinstance(auth, Mapping):
        for key in ("token", "value", "password", "client_secret"):
            value = auth.get(key)
            if isinstance(value, str) and _auth_literal(value):
                found.append(LiteralSecret(("auth", key), key))
    return found


def literal_secret_values(data: Mapping[str, object]) -> set[str]:
    """The secrets an entry's JSON object holds as literals, where :func:`literal_secrets`
    finds them: of a value that looks like a credential, the parts that do (a URL's
    password, the token after ``Bearer``); of one a name says is secret (``DB_PASSWORD``,
    ``--password VALUE``, an ``auth`` credential), the whole value (after ``--flag=``)."""
    values: set[str] = set()
    for found in literal_secrets(data):
        value: Any = data
        for part in found.path:
            value = value[part]
        if not isinstance(value, str):
            continue
        flag = found.key
        if found.path[0] == "args" and flag.startswith("-") and value.startswith(flag + "="):
            value = value[len(flag) + 1 :]
        shaped = set() if found.by_name else set(secret_fragments(value))
        values |= shaped or {value}
    return values


def variable_name(server: str, key: str) -> str:
    """A ``${VAR}`` name for a secret at ``key`` of ``server`` (``X-Api-Key`` -> ``X_API_KEY``)."""
    raw = key.upper().replace("-", "_") if key else f"{server.upper().replace('-', '_')}_TOKEN"
    return "".join(c if c.isalnum() or c == "_" else "_" for c in raw).strip("_") or "SECRET"


def named_literal_message(where: str, found: LiteralSecret) -> str:
    """The error for a literal under a secret's name at ``where`` (``brave.env.API_KEY``)."""
    if found.path[0] == "args":
        return (
            f"{where} (the value of {found.key}) is a literal; a flag named like a secret "
            "must take a ${VAR} placeholder"
        )
    return (
        f"{where} holds a literal value; a key named like a secret must hold a ${{VAR}} placeholder"
    )


def named_literal_hint(
    server: str, section: str, key: str, value: str = "", *, in_file: bool = False
) -> str:
    """How to fix a literal under a key named like a secret: a placeholder with the value in
    the keyring, or -- when it is no secret -- ``--allow-literal`` (``allow_literal``).

    Said with ``add``'s flags, or with ``in_file`` as an edit of the file (for ``validate``).
    Of ``value`` only an auth scheme in front (``Bearer``) is shown.
    """
    var = variable_name(server, key.lstrip("-"))
    if key.lower() in ("authorization", "proxy-authorization"):
        var = variable_name(server, "")
    if section == "args":
        allow = f'"allow_literal": ["{key}"]'
        return (
            f"keep the value in the keyring with 'mcpctl secret set {var}' and pass "
            f"{key} '${{{var}}}' in the server's arguments; if it is not a secret, "
            + (f"add {allow} to the entry" if in_file
               else f"--allow-literal={key} (or {allow} in the entry) lets it stay")
        )  # fmt: skip
    words = value.split(None, 1)
    scheme = words[0] if len(words) == 2 and words[0].lower() in _SCHEMES else ""
    written = f"{scheme} ${{{var}}}" if scheme else f"${{{var}}}"
    if in_file:
        return (
            f'write "{written}" in {section}.{key} and keep the value in the keyring: '
            f"mcpctl secret set {var}; if it is not a secret, add "
            f'"allow_literal": ["{key}"] to the entry'
        )
    flag = f"-H '{key}: {written}'" if section == "headers" else f"-e {key}='{written}'"
    return (
        f"keep the value in the keyring with 'mcpctl secret set {var}' and write the "
        f"placeholder instead ({flag}); if it is not a secret, --allow-literal {key} "
        f'(or "allow_literal": ["{key}"] in the entry) lets it stay'
    )


def placeholder_hint(server: str, where: str, key: str = "") -> str:
    """What to write instead of a literal secret at ``where`` (``env.GITHUB_TOKEN``)."""
    var = variable_name(server, key)
    return (
        f'write "${{{var}}}" in {where} instead and keep the value in the keyring: '
        f"mcpctl secret set {var} (or export {var}=... where mcpctl and the host run)"
    )
