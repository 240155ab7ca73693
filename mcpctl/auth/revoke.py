"""Signing out (``mcpctl auth logout NAME``): revoke the tokens at the authorization server
when it offers revocation (RFC 7009), then delete the stored sign-in and registration.

Revocation has one time limit for all of it (:data:`REVOKE_TIMEOUT`, every request and its
whole answer together): a server that answers slowly, or trickles its answer, is given up
on, and the sign-in is deleted all the same."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from urllib.parse import quote

from mcpctl.auth.oauthtokens import OAuthRecord, delete_record, load_record
from mcpctl.auth.secrets import SecretStore

__all__ = ["SignOut", "revoke", "sign_out"]

REVOKE_TIMEOUT = 10.0


@dataclass
class SignOut:
    """What signing out did: ``revoked`` is ``True`` (the server revoked the tokens),
    ``False`` (it was asked and failed: ``problem`` says why) or ``None`` (nothing to ask)."""

    server: str
    deleted: bool
    revoked: bool | None = None
    problem: str | None = None


async def revoke(
    record: OAuthRecord, client_secret: str | None = None
) -> tuple[bool | None, str | None]:
    """Revoke the tokens of ``record``; whether they were revoked, and why not.

    ``client_secret``: the entry's own (resolved) secret, for a configured client.
    """
    import anyio
    import httpx2

    endpoint = record.endpoint("revocation_endpoint")
    tokens = [(t, hint) for t, hint in ((record.refresh_token, "refresh_token"),
                                        (record.access_token, "access_token")) if t]  # fmt: skip
    if not tokens:
        return None, None
    if endpoint is None:
        return (
            None,
            "the authorization server offers no revocation: the tokens stay valid until expiry",
        )
    client = record.client or {}
    client_id = client.get("client_id")
    secret = client_secret if record.client_source == "configured" else client.get("client_secret")
    method = client.get("token_endpoint_auth_method")
    problem = None
    try:
        with anyio.fail_after(REVOKE_TIMEOUT):
            problem = await _post_all(endpoint, tokens, client_id, secret, method)
    except TimeoutError:
        problem = f"the authorization server did not answer within {REVOKE_TIMEOUT:g} s"
    except httpx2.HTTPError as exc:
        problem = f"cannot reach the authorization server: {type(exc).__name__}"
    return (problem is None), problem


async def _post_all(
    endpoint: str,
    tokens: list[tuple[str, str]],
    client_id: object,
    secret: str | None,
    method: object,
) -> str | None:
    """Ask ``endpoint`` to revoke each token; why it failed, or ``None``."""
    from mcpctl.httpclient import BoundedClient, StepTimeout

    problem = None
    async with BoundedClient(limit=REVOKE_TIMEOUT) as http:
        for token, hint in tokens:
            form = {"token": token, "token_type_hint": hint}
            headers = {}
            if isinstance(client_id, str):
                if secret and method == "client_secret_basic":
                    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
                    headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
                else:
                    form["client_id"] = client_id
                    if secret:
                        form["client_secret"] = secret
            try:
                response = await http.post(endpoint, data=form, headers=headers)
                if response.status_code == 400 and "client_secret" not in form and not headers:
                    # The MCP SDK's revocation endpoint requires the field even from a public
                    # client (which has no secret): send it empty.
                    form["client_secret"] = ""
                    response = await http.post(endpoint, data=form, headers=headers)
            except StepTimeout:
                raise TimeoutError from None
            if response.status_code != 200:
                problem = f"the authorization server answered HTTP {response.status_code}"
    return problem


async def sign_out(
    name: str, *, client_secret: str | None = None, secrets: SecretStore | None = None
) -> SignOut:
    """Revoke (when possible) and delete the sign-in of ``name``.

    Raises:
        KeyringUnavailableError: no usable keyring.
    """
    import anyio

    store = secrets or SecretStore()
    record = await anyio.to_thread.run_sync(load_record, name, store)
    if record is None:
        return SignOut(name, deleted=False)
    revoked, problem = await revoke(record, client_secret)
    deleted = await anyio.to_thread.run_sync(delete_record, name, store)
    return SignOut(name, deleted=deleted, revoked=revoked, problem=problem)
