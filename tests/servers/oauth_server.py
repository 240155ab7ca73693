"""An OAuth-protected MCP server for the sign-in tests, built from the SDK's server-side auth.

python oauth_server.py PORT [--as-port PORT] [--access-ttl S] [--client ID:SECRET] [--deny]
                      [--cimd] [--redirect-port PORT] [--sse]

* The MCP endpoint is ``http://127.0.0.1:PORT/mcp`` (streamable HTTP; ``/sse`` with ``--sse``),
  protected by bearer tokens; its protected-resource metadata names the authorization server.
* The authorization server is the SDK's (``create_auth_routes``) over :class:`TestProvider`:
  dynamic client registration, an authorize endpoint that approves at once (or denies, with
  ``--deny`` or ``POST /_test/deny``), PKCE, refresh-token rotation, revocation. With
  ``--as-port`` it runs on its own origin; otherwise on the MCP server's.
* ``--client ID:SECRET`` pre-registers a confidential client that may also use the
  ``client_credentials`` grant (which the SDK's token endpoint lacks: a small middleware in
  front of ``/token`` answers it). ``--redirect-port`` gives it (and client ID metadata
  document clients) the redirect URI ``http://127.0.0.1:PORT/callback``.
* ``--cimd`` advertises client ID metadata documents: any ``https://`` client id is accepted
  as if its document had been fetched (the test cannot serve https).
* Access tokens live ``--access-ttl`` seconds. Every token starts with ``mcpctltestAT`` or
  ``mcpctltestRT``, so tests can prove none reaches mcpctl's output.
* Test controls on the authorization server: ``GET /_test/stats`` (counters, the token
  requests seen, every token issued), ``POST /_test/deny?on=1``, ``POST /_test/ttl?seconds=N``,
  ``POST /_test/refresh-delay?seconds=N`` (refreshes are answered that much later),
  ``POST /_test/revoke-refresh`` (every refresh token stops working),
  ``POST /_test/expire-access`` (every access token stops working).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import time
from collections import Counter
from typing import Any
from urllib.parse import parse_qs

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    ProviderTokenVerifier,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

SCOPES = ["mcp:read", "mcp:write"]


class TestProvider:
    """An in-memory authorization server that approves every request (unless told to deny)."""

    def __init__(self, access_ttl: float) -> None:
        self.access_ttl = access_ttl
        self.deny = False
        self.cimd_redirect: str | None = None  # set: https client ids are documents
        self.refresh_delay = 0.0
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.pair: dict[str, str] = {}  # each token -> the other token of its pair
        self.stats: Counter[str] = Counter()
        self.token_requests: list[dict[str, str]] = []
        self.issued: list[str] = []
        self.authorized_clients: list[str] = []

    # --- clients ------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if self.cimd_redirect is not None and client_id.startswith("https://"):
            self.stats["metadata_documents"] += 1
            return OAuthClientInformationFull.model_validate({
                "client_id": client_id, "token_endpoint_auth_method": "none",
                "redirect_uris": [self.cimd_redirect], "scope": " ".join(SCOPES),
            })  # fmt: skip
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.stats["registrations"] += 1
        self.clients[client_info.client_id] = client_info

    # --- authorization code ---------------------------------------------------------------

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        self.stats["authorizations"] += 1
        self.authorized_clients.append(client.client_id)
        if self.deny:
            self.stats["denials"] += 1
            return construct_redirect_uri(
                str(params.redirect_uri),
                error="access_denied",
                error_description="the user declined",
                state=params.state,
            )
        code = secrets.token_hex(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or SCOPES,
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="tester",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> Any:
        self.codes.pop(authorization_code.code, None)
        self.stats["code_exchanges"] += 1
        return self.issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    # --- tokens ---------------------------------------------------------------------------

    def issue(
        self, client_id: str, scopes: list[str], resource: str | None, *, refresh: bool = True
    ) -> Any:
        from mcp.shared.auth import OAuthToken

        access = "mcpctltestAT" + secrets.token_hex(16)
        expires_at = time.time() + self.access_ttl
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(expires_at),
            resource=resource,
            subject="tester",
        )
        self.issued.append(access)
        refresh_token = None
        if refresh:
            refresh_token = "mcpctltestRT" + secrets.token_hex(16)
            self.refresh[refresh_token] = RefreshToken(
                token=refresh_token, client_id=client_id, scopes=scopes, resource=resource,
                subject="tester",
            )  # fmt: skip
            self.issued.append(refresh_token)
            self.pair[access] = refresh_token
            self.pair[refresh_token] = access
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=max(1, round(self.access_ttl)),
            scope=" ".join(scopes),
            refresh_token=refresh_token,
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        if found is None:
            self.stats["refresh_refused"] += 1
        return found

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> Any:
        # Rotation: the refresh token just used never works again.
        self.refresh.pop(refresh_token.token, None)
        self.stats["refreshes"] += 1
        return self.issue(client.client_id, scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            self.stats["access_refused"] += 1
            return None
        self.stats["access_accepted"] += 1
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.stats["revocations"] += 1
        for value in (token.token, self.pair.get(token.token, "")):
            self.access.pop(value, None)
            self.refresh.pop(value, None)

    async def exchange_identity_assertion(self, client: Any, params: Any) -> Any:
        from mcp.server.auth.provider import TokenError

        raise TokenError(error="unsupported_grant_type")


class TokenFront:
    """ASGI middleware before ``/token``: records each request's grant and resource, and
    answers the ``client_credentials`` grant, which the SDK's token endpoint lacks."""

    def __init__(self, app: Any, provider: TestProvider) -> None:
        self.app = app
        self.provider = provider

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/token" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        if form.get("grant_type") == "refresh_token" and self.provider.refresh_delay:
            await asyncio.sleep(self.provider.refresh_delay)  # a slow server: races overlap
        self.provider.token_requests.append(
            {"grant_type": form.get("grant_type", ""), "resource": form.get("resource", "")}
        )
        if form.get("grant_type") == "client_credentials":
            response = self.client_credentials(form, Request(scope))
            await response(scope, receive, send)
            return
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def client_credentials(self, form: dict[str, str], request: Request) -> Response:
        import base64

        client_id, secret = form.get("client_id"), form.get("client_secret")
        header = request.headers.get("authorization", "")
        if header.lower().startswith("basic "):
            from urllib.parse import unquote

            raw = base64.b64decode(header[6:]).decode()
            client_id, _, secret = raw.partition(":")
            client_id, secret = unquote(client_id), unquote(secret)
        client = self.provider.clients.get(client_id or "")
        if client is None or not client.client_secret or client.client_secret != secret:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        self.provider.stats["client_credentials"] += 1
        scopes = form["scope"].split() if form.get("scope") else SCOPES
        token = self.provider.issue(client.client_id, scopes, form.get("resource"), refresh=False)
        return JSONResponse(
            token.model_dump(exclude_none=True), headers={"Cache-Control": "no-store"}
        )


def admin_routes(provider: TestProvider) -> list[Route]:
    async def stats(request: Request) -> Response:
        return JSONResponse({
            "stats": dict(provider.stats),
            "token_requests": provider.token_requests,
            "issued": provider.issued,
            "clients": len(provider.clients),
            "authorized_clients": provider.authorized_clients,
        })  # fmt: skip

    async def deny(request: Request) -> Response:
        provider.deny = request.query_params.get("on", "1") == "1"
        return JSONResponse({"deny": provider.deny})

    async def ttl(request: Request) -> Response:
        provider.access_ttl = float(request.query_params["seconds"])
        return JSONResponse({"access_ttl": provider.access_ttl})

    async def refresh_delay(request: Request) -> Response:
        provider.refresh_delay = float(request.query_params["seconds"])
        return JSONResponse({"refresh_delay": provider.refresh_delay})

    async def revoke_refresh(request: Request) -> Response:
        count = len(provider.refresh)
        provider.refresh.clear()
        return JSONResponse({"revoked": count})

    async def expire_access(request: Request) -> Response:
        count = len(provider.access)
        provider.access.clear()
        return JSONResponse({"expired": count})

    return [
        Route("/_test/stats", stats, methods=["GET"]),
        Route("/_test/deny", deny, methods=["POST"]),
        Route("/_test/ttl", ttl, methods=["POST"]),
        Route("/_test/refresh-delay", refresh_delay, methods=["POST"]),
        Route("/_test/revoke-refresh", revoke_refresh, methods=["POST"]),
        Route("/_test/expire-access", expire_access, methods=["POST"]),
    ]


def metadata_route(settings: AuthSettings, registration: Any, revocation: Any) -> Route:
    """The SDK's authorization-server metadata, also advertising client ID metadata documents."""
    from mcp.server.auth.routes import build_metadata

    metadata = build_metadata(settings.issuer_url, None, registration, revocation)
    metadata.client_id_metadata_document_supported = True

    async def handle(request: Request) -> Response:
        return JSONResponse(metadata.model_dump(mode="json", exclude_none=True))

    return Route("/.well-known/oauth-authorization-server", handle, methods=["GET"])


def build(opts: argparse.Namespace) -> list[tuple[Any, int]]:
    """The apps to serve, each with its port."""
    import warnings

    provider = TestProvider(opts.access_ttl)
    provider.deny = opts.deny
    redirect = f"http://127.0.0.1:{opts.redirect_port}/callback" if opts.redirect_port else None
    if opts.cimd:
        provider.cimd_redirect = redirect or "http://127.0.0.1/callback"
    if opts.client:
        client_id, _, secret = opts.client.partition(":")
        provider.clients[client_id] = OAuthClientInformationFull.model_validate({
            "client_id": client_id, "client_secret": secret,
            "token_endpoint_auth_method": "client_secret_post",
            "grant_types": ["client_credentials", "authorization_code", "refresh_token"],
            "scope": " ".join(SCOPES), "redirect_uris": [redirect] if redirect else None,
        })  # fmt: skip
    mcp_origin = f"http://127.0.0.1:{opts.port}"
    as_origin = f"http://127.0.0.1:{opts.as_port}" if opts.as_port else mcp_origin
    registration = ClientRegistrationOptions(
        enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES
    )
    revocation = RevocationOptions(enabled=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        settings = AuthSettings(
            issuer_url=as_origin,  # type: ignore[arg-type]
            resource_server_url=f"{mcp_origin}/{'sse' if opts.sse else 'mcp'}",  # type: ignore[arg-type]
            client_registration_options=registration,
            revocation_options=revocation,
            required_scopes=["mcp:read"],
            validate_token_resource=True,
        )
    if opts.as_port:
        server = MCPServer(
            "oauth-test", auth=settings, token_verifier=ProviderTokenVerifier(provider)
        )  # type: ignore[arg-type]
    else:
        server = MCPServer("oauth-test", auth=settings, auth_server_provider=provider)  # type: ignore[arg-type]

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def whoami() -> str:
        """The client and scopes of the token this call came with."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        if token is None:
            return "nobody"
        return json.dumps({"client_id": token.client_id, "scopes": token.scopes})

    mcp_app = server.sse_app() if opts.sse else server.streamable_http_app()
    apps: list[tuple[Any, int]] = []
    metadata = [metadata_route(settings, registration, revocation)] if opts.cimd else []
    if opts.as_port:
        as_app = Starlette(
            routes=[
                *metadata,
                *create_auth_routes(
                    provider,  # type: ignore[arg-type]
                    issuer_url=settings.issuer_url,
                    client_registration_options=registration,
                    revocation_options=revocation,
                ),
                *admin_routes(provider),
            ]
        )
        apps.append((mcp_app, opts.port))
        apps.append((TokenFront(as_app, provider), opts.as_port))
    else:
        mcp_app.router.routes[:0] = metadata  # before the SDK's own
        mcp_app.router.routes.extend(admin_routes(provider))
        apps.append((TokenFront(mcp_app, provider), opts.port))
    return apps


async def serve(apps: list[tuple[Any, int]]) -> None:
    servers = [
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        for app, port in apps
    ]
    await asyncio.gather(*(s.serve() for s in servers))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument(
        "--as-port", type=int, default=0, help="the authorization server's own port"
    )
    parser.add_argument("--access-ttl", type=float, default=60.0)
    parser.add_argument("--client", default="", help="ID:SECRET of a pre-registered client")
    parser.add_argument("--deny", action="store_true")
    parser.add_argument("--cimd", action="store_true", help="accept client ID metadata documents")
    parser.add_argument("--redirect-port", type=int, default=0)
    parser.add_argument("--sse", action="store_true", help="serve HTTP+SSE at /sse instead")
    opts = parser.parse_args()
    asyncio.run(serve(build(opts)))


if __name__ == "__main__":
    main()
