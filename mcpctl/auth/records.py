"""The stored form of an OAuth sign-in: one keyring item ``oauth:SERVER`` per server, as JSON.

The record holds everything a later process needs to use the sign-in without a browser:

* the tokens, with an **absolute** expiry (``expires_at``): the SDK keeps only a relative
  ``expires_in``, which means nothing once the process that received it has ended;
* the granted scopes, and the grant (``authorization_code`` or ``client_credentials``);
* the client registration (dynamic, a client ID metadata document, or the configured client
  id -- whose secret is never stored: it is resolved from its placeholder each time);
* the authorization server's metadata (its token and revocation endpoints) and the protected
  resource's metadata, so that a refresh in a fresh process goes to the right server, with the
  ``resource`` parameter;
* the URL of the server the tokens are bound to: once the entry's ``url`` changes they are
  stale and never sent to the new URL.

What an authorization server sends is checked before it is stored (:func:`token_problem`,
:func:`sane_lifetime`): a token is visible ASCII (it goes into an HTTP header) of at most
:data:`MAX_TOKEN` characters; a lifetime that is not a positive number of seconds up to
:data:`MAX_LIFETIME` is unknown (the token is used until the server refuses it, then
renewed). A record read back is checked the same way, so one stored by an older version (an
expiry of 1e20 seconds, a token no header can carry) reads as unknown or as needing a sign-in,
never as a crash.

Plain JSON and no import of the MCP SDK: ``mcpctl auth status`` reads records fast.
:mod:`mcpctl.auth.oauthtokens` writes them.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcpctl.auth.secrets import SecretStore

__all__ = [
    "OAuthRecord",
    "canonical_url",
    "delete_record",
    "load_record",
    "record_key",
    "sane_lifetime",
    "save_record",
    "token_problem",
    "token_status",
]

RECORD_VERSION = 1
MAX_TOKEN = 16 * 1024  # characters of an access or refresh token
MAX_LIFETIME = 10 * 365 * 24 * 3600.0  # seconds; a longer one is not believed
MAX_SKEW = 30.0  # a token this close to its expiry counts as expired (a tenth of its life at most)


def token_problem(value: object) -> str | None:
    """What makes ``value`` unusable as a token (it must go into an HTTP header), as the end
    of a sentence ("is empty"...), or ``None``."""
    if not isinstance(value, str):
        return "is not a string"
    if not value:
        return "is empty"
    if len(value) > MAX_TOKEN:
        return f"is longer than {MAX_TOKEN // 1024} KiB ({len(value)} characters)"
    for char in value:
        if not "!" <= char <= "~":
            code = ord(char)
            shown = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
            return f"holds a character other than visible ASCII ({shown})"
    return None


def sane_lifetime(value: object) -> float | None:
    """``value`` (``expires_in``) as a lifetime in seconds, or ``None`` (unknown) when it is
    no positive number up to :data:`MAX_LIFETIME` (a numeric string is read too)."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        seconds = float(value)
    except OverflowError:  # an int past the float range
        return None
    if not math.isfinite(seconds) or not 0 < seconds <= MAX_LIFETIME:
        return None
    return seconds


def _sane_time(value: object) -> float | None:
    """A stored absolute time, or ``None`` when it is no plausible Unix time."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        when = float(value)
    except OverflowError:
        return None
    if not math.isfinite(when) or not 0 < when <= time.time() + 2 * MAX_LIFETIME:
        return None
    return when


def record_key(server: str) -> str:
    """The keyring item of a server's sign-in."""
    return f"oauth:{server}"


def canonical_url(url: str) -> str:
    """``url`` as tokens are bound to it: lower-case scheme and host, no fragment, no trailing
    slash on the path."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


@dataclass
class OAuthRecord:
    """One server's sign-in as stored (the JSON of the ``oauth:SERVER`` item)."""

    server_url: str
    grant: str = "authorization_code"
    access_token: str | None = None
    refresh_token: str | None = None
    token_type: str = "Bearer"  # noqa: S105 -- the scheme's name
    scope: str | None = None
    expires_at: float | None = None
    lifetime: float | None = None
    updated_at: float | None = None
    client: dict[str, Any] | None = None
    client_source: str | None = None  # configured, metadata_document or registered
    client_metadata_url: str | None = None
    auth_server: dict[str, Any] | None = None
    resource: dict[str, Any] | None = None
    sign_in_needed: str | None = None  # why the tokens can no longer be used
    version: int = RECORD_VERSION

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> OAuthRecord | None:
        """The record in ``data``, or ``None`` when it is not one."""
        url = data.get("server_url")
        if not isinstance(url, str):
            return None
        known = {f.name for f in fields(cls)}
        try:
            record = cls(**{k: v for k, v in data.items() if k in known})
        except TypeError:
            return None
        record._sanitize()
        return record

    def _sanitize(self) -> None:
        """Make a record read back safe to use (see the module's docstring): an implausible
        expiry is unknown, an unusable token is dropped (with no token left, the sign-in is
        needed again), a field of the wrong type is absent."""
        self.expires_at = _sane_time(self.expires_at)
        self.lifetime = sane_lifetime(self.lifetime)
        dropped = []
        for name in ("access_token", "refresh_token"):
            value = getattr(self, name)
            problem = token_problem(value) if value is not None else None
            if problem is not None:
                setattr(self, name, None)
                dropped.append(f"the stored {name} {problem}")
        for name in ("scope", "sign_in_needed", "client_source", "client_metadata_url"):
            if not isinstance(getattr(self, name), str | None):
                setattr(self, name, None)
        for name in ("client", "auth_server", "resource"):
            if not isinstance(getattr(self, name), dict | None):
                setattr(self, name, None)
        kept: dict[str, object] = {"grant": self.grant, "token_type": self.token_type}
        if not isinstance(kept["grant"], str):
            self.grant = "authorization_code"
        if not isinstance(kept["token_type"], str):
            self.token_type = "Bearer"  # noqa: S105 -- the scheme's name
        if dropped and not (self.access_token or self.refresh_token) and not self.sign_in_needed:
            self.sign_in_needed = dropped[0]

    def to_data(self) -> dict[str, Any]:
        """The JSON object stored."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    def bound_to(self, url: str | None) -> bool:
        """Whether the tokens belong to ``url`` (the entry's current URL)."""
        return url is not None and canonical_url(self.server_url) == canonical_url(url)

    @property
    def has_tokens(self) -> bool:
        """Whether there is anything to sign requests with, or to refresh."""
        return self.sign_in_needed is None and bool(self.access_token or self.refresh_token)

    @property
    def refreshable(self) -> bool:
        """Whether an expired access token can be renewed without a browser."""
        if self.sign_in_needed is not None:
            return False
        return bool(self.refresh_token) or self.grant == "client_credentials"

    def valid_until(self) -> float | None:
        """When the access token stops being used (its expiry, less a safety margin)."""
        if self.expires_at is None:
            return None
        margin = MAX_SKEW if not self.lifetime else min(MAX_SKEW, self.lifetime / 10)
        return self.expires_at - margin

    def expired(self, now: float | None = None) -> bool:
        """Whether the access token is missing or past its (margined) expiry."""
        if not self.access_token:
            return True
        until = self.valid_until()
        return until is not None and (now if now is not None else time.time()) >= until

    @property
    def issuer(self) -> str | None:
        """The authorization server's issuer, when known."""
        value = (self.auth_server or {}).get("issuer")
        return str(value) if value else None

    def endpoint(self, name: str) -> str | None:
        """An endpoint of the authorization server (``token_endpoint``, ``revocation_endpoint``)."""
        value = (self.auth_server or {}).get(name)
        return str(value) if value else None

    def secrets(self) -> list[str]:
        """Every secret value of the record (for the redactor)."""
        found = [self.access_token, self.refresh_token, (self.client or {}).get("client_secret")]
        return [v for v in found if isinstance(v, str) and v]


def load_record(server: str, store: SecretStore | None = None) -> OAuthRecord | None:
    """The stored sign-in of ``server``, if any.

    Raises:
        KeyringUnavailableError: no usable keyring.
    """
    data = (store or SecretStore()).get_json(record_key(server))
    record = OAuthRecord.from_data(data) if data is not None else None
    if record is not None:
        _hide(record.secrets())
    return record


def save_record(server: str, record: OAuthRecord, store: SecretStore | None = None) -> None:
    """Store ``record`` as the sign-in of ``server``."""
    _hide(record.secrets())
    record.updated_at = time.time()
    (store or SecretStore()).set_json(record_key(server), record.to_data())


def delete_record(server: str, store: SecretStore | None = None) -> bool:
    """Delete the sign-in of ``server``; whether there was one."""
    return (store or SecretStore()).delete_item(record_key(server))


def _hide(values: list[str]) -> None:
    from mcpctl.config.redaction import register

    register(values)


def _iso(when: float | None) -> str | None:
    if when is None:
        return None
    try:
        return datetime.fromtimestamp(when).astimezone().isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):  # out of the platform's range
        return None


def token_status(
    server: str, url: str | None, record: OAuthRecord | None, now: float | None = None
) -> dict[str, Any]:
    """What ``mcpctl auth status`` shows of one server's sign-in -- never a token."""
    moment = now if now is not None else time.time()
    if record is None:
        return {
            "server": server, "signed_in": False, "stale": False, "grant": None,
            "expires_at": None, "expired": None, "refreshable": False, "scopes": [],
            "authorization_server": None, "client": None, "problem": None,
        }  # fmt: skip
    stale = not record.bound_to(url)
    problem = None
    if stale:
        problem = "signed in for another URL"
    elif record.sign_in_needed:
        problem = record.sign_in_needed
    elif record.expired(moment) and not record.refreshable:
        problem = "expired"
    return {
        "server": server,
        "signed_in": record.has_tokens and not stale,
        "stale": stale,
        "grant": record.grant,
        "expires_at": _iso(record.expires_at),
        "expired": record.expired(moment) if record.access_token else None,
        "refreshable": record.refreshable and not stale,
        "scopes": (record.scope or "").split(),
        "authorization_server": record.issuer,
        "client": record.client_source,
        "problem": problem,
    }
