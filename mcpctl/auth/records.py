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

Plain JSON and no import of the MCP SDK: ``mcpctl auth status`` reads records fast.
:mod:`mcpctl.auth.tokens` writes them.
"""

from __future__ import annotations

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
    "save_record",
    "token_status",
]

RECORD_VERSION = 1
MAX_SKEW = 30.0  # a token this close to its expiry counts as expired (a tenth of its life at most)


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
            return cls(**{k: v for k, v in data.items() if k in known})
        except TypeError:
            return None

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
    return datetime.fromtimestamp(when).astimezone().isoformat(timespec="seconds")


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
