"""The SDK's ``TokenStorage`` over the keyring item ``oauth:SERVER``
(:mod:`mcpctl.auth.records`), and the lock that serialises refreshes across processes.

Nothing here imports the MCP SDK at import time (only the type names, for checking).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpctl.auth.records import (
    OAuthRecord,
    canonical_url,
    delete_record,
    load_record,
    record_key,
    sane_lifetime,
    save_record,
    token_status,
)
from mcpctl.auth.secrets import SecretStore
from mcpctl.errors import LockTimeoutError

if TYPE_CHECKING:
    from mcpctl.sdk import (
        OAuthClientInformationFull,
        OAuthMetadata,
        OAuthToken,
        ProtectedResourceMetadata,
    )

__all__ = [
    "OAuthRecord",
    "TokenStore",
    "canonical_url",
    "delete_record",
    "load_record",
    "lock_path",
    "record_key",
    "refresh_lock",
    "save_record",
    "token_status",
]

LOCK_TIMEOUT = 60.0
_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


def lock_path(server: str) -> Path:
    """The file that serialises refreshes of ``server`` across processes."""
    from mcpctl.paths import Paths

    return Paths.from_env().state_dir / "oauth" / f"{_UNSAFE_FILE_CHARS.sub('_', server)}.lock"


@contextlib.asynccontextmanager
async def refresh_lock(server: str, timeout: float = LOCK_TIMEOUT) -> AsyncIterator[None]:
    """Hold the refresh lock of ``server`` (one process refreshes at a time: with refresh-token
    rotation, two refreshing at once would invalidate each other's tokens).

    Raises:
        LockTimeoutError: another process held it for ``timeout`` seconds.
    """
    import anyio
    from filelock import FileLock, Timeout

    path = lock_path(server)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), thread_local=False)
    deadline = anyio.current_time() + timeout
    while True:
        try:
            lock.acquire(timeout=0)
            break
        except Timeout:
            if anyio.current_time() >= deadline:
                raise LockTimeoutError(
                    f"another mcpctl process has been refreshing the sign-in of {server} for "
                    f"{timeout:g} s",
                    hint=f"if none is running, delete {path}",
                ) from None
            await anyio.sleep(0.05)
    try:
        yield
    finally:
        lock.release()


class TokenStore:
    """The SDK's ``TokenStorage`` for one server, over its ``oauth:SERVER`` keyring item.

    Args:
        server: the server's name.
        url: the URL the tokens are (to be) bound to; a record bound to another URL is stale:
            neither its tokens nor its registration are handed out.
        secrets: the keyring (default: the one ``keyring`` chooses).
        configured_client: the entry's own client id (and secret): used instead of any stored
            registration, and its secret is never stored.
        sign_in: a new sign-in: no stored token is handed out, a new registration is kept in
            memory until tokens arrive, and the tokens replace the whole record.
        redirect_uri: for a sign-in, the redirect URI a stored registration must know to be
            reused.
    """

    def __init__(
        self,
        server: str,
        url: str,
        secrets: SecretStore | None = None,
        *,
        configured_client: OAuthClientInformationFull | None = None,
        sign_in: bool = False,
        redirect_uri: str | None = None,
        grant: str = "authorization_code",
        client_metadata_url: str | None = None,
    ) -> None:
        self.server = server
        self.url = url
        self.secrets = secrets or SecretStore()
        self.configured_client = configured_client
        self.sign_in = sign_in
        self.redirect_uri = redirect_uri
        self.grant = grant
        self.client_metadata_url = client_metadata_url
        self.record: OAuthRecord | None = None  # as last read or written
        self.oauth_metadata: OAuthMetadata | None = None
        self.resource_metadata: ProtectedResourceMetadata | None = None
        self._pending_client: OAuthClientInformationFull | None = None
        self._client_in_use: OAuthClientInformationFull | None = None
        self.tokens_saved = 0

    # --- plain access ------------------------------------------------------------------------

    def load(self) -> OAuthRecord | None:
        """Read the record (always from the keyring: another process may have refreshed)."""
        self.record = load_record(self.server, self.secrets)
        return self.record

    def current(self) -> OAuthRecord | None:
        """The record last read, if it is bound to this store's URL."""
        record = self.record
        return record if record is not None and record.bound_to(self.url) else None

    async def aload(self) -> OAuthRecord | None:
        """:meth:`load` in a worker thread (a keyring may be slow to answer)."""
        import anyio

        return await anyio.to_thread.run_sync(self.load, abandon_on_cancel=True)

    async def _save(self, record: OAuthRecord) -> None:
        import anyio

        await anyio.to_thread.run_sync(save_record, self.server, record, self.secrets)
        self.record = record

    async def mark_sign_in_needed(self, why: str) -> None:
        """The tokens were refused: drop them, keep the rest, and say why."""
        record = await self.aload()
        if record is None or not record.bound_to(self.url):
            return
        record.access_token = record.refresh_token = None
        record.expires_at = None
        record.sign_in_needed = why
        await self._save(record)

    def note_metadata(
        self,
        oauth_metadata: OAuthMetadata | None,
        resource_metadata: ProtectedResourceMetadata | None,
    ) -> None:
        """The metadata discovered by the flow, stored with the next tokens."""
        if oauth_metadata is not None:
            self.oauth_metadata = oauth_metadata
        if resource_metadata is not None:
            self.resource_metadata = resource_metadata

    # --- the SDK's TokenStorage ----------------------------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens; an expired access token comes back empty, so that the provider
        refreshes instead of sending it (the SDK does not restore expiry from storage)."""
        from mcpctl.sdk import OAuthToken

        if self.sign_in:
            return None
        record = await self.aload()
        if record is None or not record.bound_to(self.url) or not record.has_tokens:
            return None
        now = time.time()
        expired = record.expired(now)
        remaining = None
        if record.expires_at is not None and not expired:
            remaining = max(1, int(record.expires_at - now))
        return OAuthToken(
            access_token="" if expired else (record.access_token or ""),
            expires_in=remaining,
            scope=record.scope,
            refresh_token=record.refresh_token,
        )

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Store new tokens (a sign-in, a refresh, a client-credentials grant)."""
        now = time.time()
        if self.sign_in or self.record is None or not self.record.bound_to(self.url):
            record = OAuthRecord(server_url=self.url, grant=self.grant)
            client = self._client_in_use or self.configured_client
            record.client = _client_data(client, self.configured_client)
            record.client_source = self._client_source(client)
            record.client_metadata_url = self.client_metadata_url
        else:
            record = self.record
        record.access_token = tokens.access_token
        if tokens.refresh_token:
            record.refresh_token = tokens.refresh_token
        record.token_type = tokens.token_type
        if tokens.scope is not None:
            record.scope = tokens.scope
        record.lifetime = sane_lifetime(tokens.expires_in)
        record.expires_at = now + record.lifetime if record.lifetime is not None else None
        record.sign_in_needed = None
        if self.oauth_metadata is not None:
            record.auth_server = self.oauth_metadata.model_dump(mode="json", exclude_none=True)
        if self.resource_metadata is not None:
            record.resource = self.resource_metadata.model_dump(mode="json", exclude_none=True)
        await self._save(record)
        self.tokens_saved += 1

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The configured client, else the stored registration (for this URL; for a sign-in,
        only if it knows the redirect URI).

        A registration is bound to the issuer of the authorization server it was made with
        (its ``issuer``): once the server's metadata names another one, the provider registers
        anew there instead of presenting it.
        """
        from mcpctl.sdk import OAuthClientInformationFull

        if self.configured_client is not None:
            self._client_in_use = self.configured_client
            return self.configured_client
        if self._pending_client is not None:
            return self._pending_client
        record = self.record if self.record is not None else await self.aload()
        if record is None or not record.bound_to(self.url) or not record.client:
            return None
        if record.client_source == "configured":
            return None  # the entry no longer names its client: register anew
        try:
            client = OAuthClientInformationFull.model_validate(record.client)
        except ValueError:
            return None
        if client.issuer is None and record.client_source == "registered":
            # Stored before registrations carried their issuer: the tokens' server made it.
            client.issuer = record.issuer
        if self.sign_in:
            known = [str(u) for u in client.redirect_uris or []]
            if self.redirect_uri is None or self.redirect_uri not in known:
                return None
        self._client_in_use = client
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep a new registration: with the tokens for a sign-in, at once otherwise.

        Its client secret is hidden from all output at once: a token request that fails may
        be echoed back with it (form-encoded) before anything is stored."""
        from mcpctl.config.redaction import register

        if client_info.client_secret:
            register([client_info.client_secret])
        self._pending_client = self._client_in_use = client_info
        if self.sign_in:
            return
        record = self.record if self.record is not None else await self.aload()
        if record is None or not record.bound_to(self.url):
            return
        record.client = _client_data(client_info, self.configured_client)
        record.client_source = self._client_source(client_info)
        await self._save(record)

    def _client_source(self, client: OAuthClientInformationFull | None) -> str | None:
        if client is None:
            return "configured" if self.configured_client is not None else None
        configured = self.configured_client
        if configured is not None and client.client_id == configured.client_id:
            return "configured"
        if self.client_metadata_url is not None and client.client_id == self.client_metadata_url:
            return "metadata_document"
        return "registered"


def _client_data(
    client: OAuthClientInformationFull | None, configured: OAuthClientInformationFull | None
) -> dict[str, Any] | None:
    """A registration as stored: a configured client's secret stays in its placeholder."""
    if client is None:
        return None
    data = client.model_dump(mode="json", exclude_none=True)
    if configured is not None and client.client_id == configured.client_id:
        data.pop("client_secret", None)
    return data
