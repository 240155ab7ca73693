"""What a secret looks like, and keeping secrets out of everything mcpctl prints.

Two jobs share the same knowledge:

* **Detection** -- :func:`looks_like_secret` and :func:`literal_secrets` tell a literal
  credential (known token prefixes, ``Bearer <token>``, JWTs, passwords inside URLs, long
  random-looking keys) from an ordinary value, so that the store refuses to write one and
  ``validate`` reports it; :func:`redact_entry_data` hides literal ones in shown entries.
* **Redaction** -- :class:`Redactor` (:func:`redactor` builds the current one) replaces in any
  text every secret value known to this process: each value a placeholder resolved to
  (:func:`mcpctl.config.secretvalues.resolved_values`), the values of the config's
  placeholders in the environment (:func:`register_config`), OAuth tokens and client secrets
  (:func:`register`), the values of environment variables whose names say they are secret --
  each in every form it may take in text (JSON-escaped, percent-encoded, base64:
  :func:`secret_forms`) -- and whatever the patterns above recognise. The CLI runs
  everything it writes (text, tables, JSON, logs) through it, before anything is
  truncated; snapshot files go through its known values (:meth:`Redactor.data`).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from mcpctl.config.fieldsyntax import PLACEHOLDER_RE
from mcpctl.config.secretvalues import (
    MIN_SECRET_LEN,
    REDACTED,
    forget_resolved,
    redact_text,
    resolved_values,
)

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = [
    "ENV_SECRET_NAME_RE",
    "SECRET_KEY_RE",
    "SECRET_NAME_RE",
    "LiteralSecret",
    "Redactor",
    "forget",
    "known_values",
    "literal_secret_values",
    "literal_secrets",
    "literal_under_secret_name",
    "looks_like_secret",
    "named_literal_hint",
    "named_literal_message",
    "placeholder_hint",
    "redact",
    "redact_entry_data",
    "redact_literal",
    "redactor",
    "register",
    "register_config",
    "secret_flag_values",
    "secret_forms",
    "secret_fragments",
    "variable_name",
]

# The lookbehind starts a scheme only at a word's start: without it, each position of a long
# run of letters would rescan the run (quadratic).
URL_PASSWORD_RE = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:(?P<password>[^/\s@]+)@"
)

_KNOWN_PREFIXES = (
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
_JWT_RE = re.compile(r"^eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*$")
_VALUE_SPLIT_RE = re.compile(r"[\s=:,;&?]+")
_TOKEN_CHARS_RE = re.compile(r"^[A-Za-z0-9_\-+/=.~]+$")
_DIGIT_RE = re.compile(r"[0-9]")
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


# --- redaction of output --------------------------------------------------------------

# Environment variables whose values are secret by name. Narrower than SECRET_NAME_RE: a
# value hidden everywhere in the output must really be a secret ("tty" of
# XDG_SESSION_TYPE is not).
ENV_SECRET_NAME_RE = re.compile(
    r"TOKEN|SECRET|PASSW(?:OR)?D|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL", re.IGNORECASE
)
_TOKEN_RUN_RE = re.compile(r"[A-Za-z0-9_\-+/=.~]{12,}")
# "*": a credential part of which is a known value already redacted (the base64 of
# "user:password" when both are known) is hidden whole.
_SCHEME_IN_TEXT_RE = re.compile(r"\b(?:Bearer|Basic|Token)\s+(?P<cred>[A-Za-z0-9_\-+/=.~*]{8,})")
_registered: set[str] = set()
_registered_lock = threading.Lock()


def forget() -> None:
    """Forget every value known so far (a new run of the CLI in the same process)."""
    forget_resolved()
    with _registered_lock:
        _registered.clear()


def register(values: Iterable[str]) -> None:
    """Values the output must hide from now on (short ones are ignored)."""
    with _registered_lock:
        _registered.update(v for v in values if len(v) >= MIN_SECRET_LEN)


def register_config(
    entries: Iterable[ServerEntry], environ: Mapping[str, str] | None = None
) -> None:
    """Hide the environment's value of every placeholder the config uses, resolved or not."""
    env = os.environ if environ is None else environ
    names: set[str] = set()
    for entry in entries:
        texts = [entry.command or "", *entry.args, *entry.env.values(), entry.cwd or "",
                 entry.url or "", *entry.headers.values()]  # fmt: skip
        if entry.auth is not None:
            auth = entry.auth
            texts += [auth.token or "", auth.value or "", auth.password or "",
                      auth.client_secret or ""]  # fmt: skip
        found = (PLACEHOLDER_RE.finditer(text) for text in texts if "${" in text)
        names.update(m["name"] for matches in found for m in matches)
    register(env[n] for n in names if n in env)


def _looks_like_key(token: str) -> bool:
    # In free text, stricter than in a config value: hashes and UUIDs (one letter case) stay,
    # and so do long runs (base64 of an image or a blob is data; keys are shorter).
    return (
        24 <= len(token) <= 256
        and _looks_random(token)
        and any(c.islower() for c in token)
        and any(c.isupper() for c in token)
    )


def _hide_scheme_credential(match: re.Match[str]) -> str:
    cred = match["cred"]
    if (
        _DIGIT_RE.search(cred)
        or len(cred) >= 20
        or REDACTED in cred
        or (match[0].startswith("Basic") and _is_user_password(cred))
    ):
        return match[0].replace(cred, REDACTED)
    return match[0]


def _is_user_password(cred: str) -> bool:
    # Basic credentials are base64("user:password"), letters only or not: "dXNlcjpwYXNz".
    import binascii

    try:
        decoded = binascii.a2b_base64(cred + "=" * (-len(cred) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _hide_url_password(match: re.Match[str]) -> str:
    if PLACEHOLDER_RE.search(match["password"]):
        return match[0]
    return match[0].replace(match["password"] + "@", REDACTED + "@")


# Base64 is looked for from this many bytes on (shorter values' base64 is too short to tell
# from data); the parts at each alignment from this many (they are then 10 characters long).
_B64_MIN_BYTES = 6
_B64_CORE_BYTES = 8


_PERCENT_RE = re.compile(r"%[0-9A-F]{2}")


def _b64_forms(raw: bytes) -> set[str]:
    """Base64 of ``raw``, standard and URL-safe, padded or not, and the parts of its base64
    that any longer text holding it encodes to whatever precedes it (``user:secret`` in
    ``Basic`` auth): the characters carried by ``raw``'s bits alone, at each of the three
    alignments."""
    import base64

    forms: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode("ascii")
        forms.update((whole, whole.rstrip("=")))
        if len(raw) < _B64_CORE_BYTES:
            continue
        for shift in range(3):
            text = encode(b"\0" * shift + raw).decode("ascii")
            start = -(-8 * shift // 6)  # the first character made of raw's bits only
            end = (8 * shift + 8 * len(raw)) // 6
            forms.add(text[start:end])
    return forms


@functools.lru_cache(maxsize=4096)
def secret_forms(value: str) -> frozenset[str]:
    """Every way ``value`` may be written in output: as is, JSON-escaped (with and without
    ``\\uXXXX`` escapes), percent-encoded (``quote``, ``quote(safe="")``, ``quote_plus``,
    with upper- or lower-case hex) and base64 (standard and URL-safe, padded or not, and
    inside the base64 of a longer text such as ``name:secret``)."""
    from urllib.parse import quote, quote_plus

    forms = {value}
    for ascii_only in (False, True):
        forms.add(json.dumps(value, ensure_ascii=ascii_only)[1:-1])
    try:
        encoded = [quote(value), quote(value, safe=""), quote_plus(value)]
    except UnicodeEncodeError:  # a lone surrogate: no URL carries it
        encoded = []
    for text in encoded:
        forms.add(text)
        if "%" in text:
            forms.add(_PERCENT_RE.sub(lambda m: m[0].lower(), text))
    try:
        raw = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = b""
    if len(raw) >= _B64_MIN_BYTES:
        forms |= _b64_forms(raw)
    return frozenset(f for f in forms if len(f) >= MIN_SECRET_LEN)


def _trie_pattern(words: Iterable[str]) -> str:
    """One regex matching any of ``words`` (the longest at a position), as a trie: each
    position of a text costs one branch per character of the words' common prefixes, not one
    per word."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def build(node: dict[str, Any]) -> str:
        literal = ""
        while len(node) == 1 and "" not in node:  # a run without branches: one literal
            ((char, node),) = node.items()
            literal += char
        branches = [re.escape(char) + build(child) for char, child in node.items() if char]
        if not branches:
            return re.escape(literal)
        group = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" in node:  # a word may end here; longer ones are tried first
            group = f"(?:{group})?" if len(branches) == 1 else group + "?"
        return re.escape(literal) + group

    return build(root)


@functools.lru_cache(maxsize=8)
def _matchers(
    values: frozenset[str],
) -> tuple[tuple[str, ...], re.Pattern[str] | None, re.Pattern[str] | None]:
    """The forms of ``values`` (longest first), the regex that finds any of them, and the one
    that finds the longest at each position: built once per set of values (the output layer
    asks for the current redactor for each document it prints)."""
    forms: set[str] = set()
    for value in values:
        forms |= secret_forms(value)
    ordered = tuple(sorted(forms, key=lambda v: (-len(v), v)))
    if not ordered:
        return ordered, None, None
    try:
        pattern = _trie_pattern(ordered)
        known = re.compile(pattern)
    except (RecursionError, re.error):  # words branching thousands deep: plainly
        pattern = "|".join(map(re.escape, ordered))
        known = re.compile(pattern)
    # At each position the longest form there (a zero-width match steps one character).
    return ordered, known, re.compile(f"(?=({pattern}))")


_MEMO_SIZE = 4096


class Redactor:
    """Replaces every secret in a text by ``****``: known values (in each of their forms,
    :func:`secret_forms`) first, then patterns.

    The forms of all the values are searched for at once, with one regex compiled as a trie
    of them, once per set of values: the output layer runs every string it prints through
    this.
    """

    def __init__(self, values: Iterable[str], *, patterns: bool = True) -> None:
        self.values, self._known, self._each = _matchers(
            frozenset(v for v in values if len(v) >= MIN_SECRET_LEN)
        )
        self.patterns = patterns
        # A document repeats its strings (transports, commands, env values): each distinct
        # text is redacted once (up to _MEMO_SIZE of them: a long-lived redactor stays small).
        self._done: dict[str, str] = {}

    def known(self, text: str) -> str:
        """``text`` with every known value (in any of its forms) replaced, patterns not
        looked for."""
        if self._known is None or self._each is None or self._known.search(text) is None:
            return text  # the common case: one search, in C
        # Every occurrence is covered, even one overlapping another value's: the spans of all
        # are merged and each run becomes one ``****``.
        spans: list[list[int]] = []
        for match in self._each.finditer(text):
            start, end = match.start(), match.start() + len(match[1])
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        parts: list[str] = []
        done = 0
        for start, end in spans:
            parts += [text[done:start], REDACTED]
            done = end
        parts.append(text[done:])
        return "".join(parts)

    def __call__(self, text: str, keep: Iterable[str] = ()) -> str:
        """``text`` with secrets replaced.

        ``keep`` are the subjects of the text (a config path, a key name: never a value),
        shown as they are even when they look like a token (``hf_hub.env.HF_TOKEN``) or hold
        a secret value (a server named like a secret's value): the text around them is
        redacted piece by piece. A subject equal to a known secret value is not kept.
        """
        kept = None
        if keep:
            kept = {k for k in keep if k and k in text and k not in self.values}
        if not kept:
            done = self._done.get(text)
            if done is None:
                done = self._redact(text)
                if len(self._done) < _MEMO_SIZE:
                    self._done[text] = done
            return done
        longest_first = sorted(kept, key=len, reverse=True)
        pieces = re.split("(" + "|".join(re.escape(k) for k in longest_first) + ")", text)
        # re.split with one group: the kept subjects at the odd indexes.
        return "".join(p if i % 2 else self._redact(p) for i, p in enumerate(pieces))

    def _redact(self, text: str) -> str:
        text = self.known(text)
        if not self.patterns:
            return text
        if "://" in text:
            text = URL_PASSWORD_RE.sub(_hide_url_password, text)
        if "Bearer" in text or "Basic" in text or "Token" in text:
            text = _SCHEME_IN_TEXT_RE.sub(_hide_scheme_credential, text)
        # Only runs of token characters long enough to be a key are looked at (most strings
        # have none): the cheap test of each output string.
        found = {
            token
            for token in (m[0] for m in _TOKEN_RUN_RE.finditer(text))
            if token.startswith(_KNOWN_PREFIXES) or _JWT_RE.match(token) or _looks_like_key(token)
        }
        return redact_text(text, found) if found else text

    def data(self, value: Any) -> tuple[Any, bool]:
        """A copy of a JSON value (keys included) with every string redacted as by
        :meth:`known` (patterns are not looked for: what a server sends is often an example
        of a key), and whether anything was."""
        if isinstance(value, str):
            out = self.known(value)
            return out, out != value
        if isinstance(value, Mapping):
            changed = False
            result: dict[Any, Any] = {}
            for key, item in value.items():
                new_key, key_changed = self.data(key) if isinstance(key, str) else (key, False)
                new_item, item_changed = self.data(item)
                result[new_key] = new_item
                changed = changed or key_changed or item_changed
            return result, changed
        if isinstance(value, list | tuple):
            items = [self.data(item) for item in value]
            return [item for item, _ in items], any(hit for _, hit in items)
        return value, False


def known_values(
    *, extra: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> frozenset[str]:
    """Every secret value known now: resolved or registered, the values of secret-named
    environment variables, and ``extra`` ones."""
    env = os.environ if environ is None else environ
    named = (v for k, v in env.items() if ENV_SECRET_NAME_RE.search(k) and len(v) >= 6)
    with _registered_lock:
        registered = set(_registered)
    return frozenset({*resolved_values(), *registered, *named, *extra})


def redactor(
    *, extra: Iterable[str] = (), environ: Mapping[str, str] | None = None, patterns: bool = True
) -> Redactor:
    """The redactor for now: every value resolved or registered, secret-named variables'
    values, and ``extra`` ones (see :func:`known_values`); ``patterns``: also whatever looks
    like a credential (off for what is written to files, where a server's example of a key
    must stay as it is)."""
    return Redactor(known_values(extra=extra, environ=environ), patterns=patterns)


def redact(text: str, *, extra: Iterable[str] = (), keep: Iterable[str] = ()) -> str:
    """``text`` with every secret known to this process (and ``extra`` values) replaced;
    ``keep`` subjects stay readable (see :meth:`Redactor.__call__`)."""
    return redactor(extra=extra)(text, keep)
