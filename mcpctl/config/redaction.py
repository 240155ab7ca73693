"""What a secret looks like, and keeping secrets out of everything mcpctl prints.

Two jobs share the same knowledge:

* **Detection** -- :func:`looks_like_secret` and :func:`literal_secrets` tell a literal
  credential (known token prefixes, ``Bearer <token>``, JWTs, passwords inside URLs, long
  random-looking keys) from an ordinary value, so that the store refuses to write one and
  ``validate`` reports it; :func:`redact_entry_data` hides literal ones in shown entries.
* **Redaction** -- :class:`Redactor` (:func:`redactor` builds the current one) replaces in any
  text every secret value known to this process: each value a placeholder resolved to
  (:func:`mcpctl.config.placeholders.resolved_values`), the values of the config's
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
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from mcpctl.config.placeholders import (
    MIN_SECRET_LEN,
    PLACEHOLDER_RE,
    REDACTED,
    find_placeholders,
    forget_resolved,
    redact_text,
    resolved_values,
)

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry

__all__ = [
    "ENV_SECRET_NAME_RE",
    "SECRET_NAME_RE",
    "Redactor",
    "forget",
    "known_values",
    "literal_secrets",
    "looks_like_secret",
    "placeholder_hint",
    "redact",
    "redact_entry_data",
    "redact_literal",
    "redactor",
    "register",
    "register_config",
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
        names.update(p.name for text in texts if "${" in text for p in find_placeholders(text))
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
    if _DIGIT_RE.search(cred) or len(cred) >= 20 or REDACTED in cred:
        return match[0].replace(cred, REDACTED)
    return match[0]


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

    def __call__(self, text: str) -> str:
        """``text`` with secrets replaced."""
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


def redact(text: str, *, extra: Iterable[str] = ()) -> str:
    """``text`` with every secret known to this process (and ``extra`` values) replaced."""
    return redactor(extra=extra)(text)
