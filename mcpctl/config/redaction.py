"""Keeping secrets out of everything mcpctl prints (and what a secret looks like, from
:mod:`mcpctl.config.secretdetect`, re-exported here).

Two jobs share the same knowledge:

* **Detection** (:mod:`mcpctl.config.secretdetect`) -- :func:`looks_like_secret` and
  :func:`literal_secrets` tell a literal credential (known token prefixes, ``Bearer <token>``,
  JWTs, passwords inside URLs, long random-looking keys) from an ordinary value, so that the
  store refuses to write one and ``validate`` reports it; :func:`redact_entry_data` hides
  literal ones in shown entries.
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
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mcpctl.config.fieldsyntax import PLACEHOLDER_RE
from mcpctl.config.secretdetect import (
    DIGIT_RE,
    JWT_RE,
    KNOWN_PREFIXES,
    SECRET_KEY_RE,
    SECRET_NAME_RE,
    URL_PASSWORD_RE,
    LiteralSecret,
    literal_secret_values,
    literal_secrets,
    literal_under_secret_name,
    looks_like_secret,
    looks_random,
    named_literal_hint,
    named_literal_message,
    placeholder_hint,
    redact_entry_data,
    redact_literal,
    secret_flag_values,
    secret_fragments,
    variable_name,
)
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
        and looks_random(token)
        and any(c.islower() for c in token)
        and any(c.isupper() for c in token)
    )


def _hide_scheme_credential(match: re.Match[str]) -> str:
    cred = match["cred"]
    if (
        DIGIT_RE.search(cred)
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
            if token.startswith(KNOWN_PREFIXES) or JWT_RE.match(token) or _looks_like_key(token)
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
