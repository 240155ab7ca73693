"""An OAuth-protected MCP server for the sign-in tests, built from the SDK's server-side auth.

python oauth_server.py PORT [--as-port PORT] [--access-ttl S] [--client ID:SECRET] [--deny]
                      [--cimd] [--redirect-port PORT] [--sse] [--iss] [--next-as-port PORT]

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
* ``--iss`` (RFC 9207): the authorization server puts its issuer in every answer it sends
  back through the browser (``iss=``), and its metadata says so.
* ``--next-as-port`` (with ``--as-port``): a second authorization server on that port, sharing
  nothing with the first (its own clients, codes and tokens, its own ``/_test`` controls);
  the MCP server accepts the tokens of both. ``POST /_test/move-as`` (on the first) makes the
  protected-resource metadata name the second from then on: the server moved.
* Access tokens live ``--access-ttl`` seconds. Every token starts with ``mcpctltestAT`` or
  ``mcpctltestRT``, so tests can prove none reaches mcpctl's output.
* Test controls on the authorization server: ``GET /_test/stats`` (counters, the token
  requests seen, the registration requests' bodies, every token issued), ``POST /_test/deny?on=1``, ``POST /_test/ttl?seconds=N``,
  ``POST /_test/refresh-delay?seconds=N`` (refreshes are answered that much later),
  ``POST /_test/revoke-refresh`` (every refresh token stops working),
  ``POST /_test/rotate?on=0`` (a refresh answers without a new refresh token; the one used
  keeps working -- rotation is optional in OAuth 2.1),
  ``POST /_test/expire-access`` (every access token stops working).
* Hostile modes, also test controls (on the authorization server, acting on every port):
  ``POST /_test/trickle?path=P&every=S`` -- the answers to requests for path ``P`` (the token
  endpoint, a metadata document, the revocation endpoint...) send their status and headers at
  once, then their body (padded in front with 4096 spaces) one byte every ``S`` seconds;
  ``POST /_test/token-override`` with a JSON object as body -- its members replace those of
  every successful token response from then on (``{"expires_in": 1e20}``); with
  ``?access_size=N`` the access token becomes ``N`` letters.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import time
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, urlsplit

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_resource_metadata_url, create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, ProtectedResourceMetadata
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

SCOPES = ["mcp:read", "mcp:write"]


class TestProvider:
    """An in-memory authorization server that approves every request (unless told to deny)."""

    def __init__(self, access_ttl: float, issuer: str = "", send_iss: bool = False) -> None:
        self.access_ttl = access_ttl
        self.issuer = issuer
        self.send_iss = send_iss  # RFC 9207: iss= in every answer through the browser
        self.deny = False
        self.cimd_redirect: str | None = None  # set: https client ids are documents
        self.refresh_delay = 0.0
        self.rotate = True  # False: a refresh keeps the refresh token and sends none back
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.pair: dict[str, str] = {}  # each token -> the other token of its pair
        self.stats: Counter[str] = Counter()
        self.token_requests: list[dict[str, str]] = []
        self.registration_requests: list[Any] = []
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
        iss = self.issuer if self.send_iss else None
        if self.deny:
            self.stats["denials"] += 1
            return construct_redirect_uri(
                str(params.redirect_uri),
                error="access_denied",
                error_description="the user declined",
                state=params.state,
                iss=iss,
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
        return construct_redirect_uri(
            str(params.redirect_uri), code=code, state=params.state, iss=iss
        )

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
        self.stats["refreshes"] += 1
        if not self.rotate:  # the answer has no refresh token: the client keeps its own
            token = self.issue(client.client_id, scopes, refresh_token.resource, refresh=False)
            self.pair[token.access_token] = refresh_token.token
            return token
        # Rotation: the refresh token just used never works again.
        self.refresh.pop(refresh_token.token, None)
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


class Faults:
    """The hostile modes of every app of this process (see the module's docstring)."""

    def __init__(self) -> None:
        self.trickle: dict[str, float] = {}
        self.token_override: dict[str, Any] = {}
        self.access_size = 0


class FaultFront:
    """ASGI middleware in front of each app: trickles the answers to the paths told to, and
    rewrites successful token responses as told to."""

    def __init__(self, app: Any, faults: Faults) -> None:
        self.app = app
        self.faults = faults

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        every = self.faults.trickle.get(path)
        rewrite = path == "/token" and (self.faults.token_override or self.faults.access_size)
        if every is None and not rewrite:
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def keep(message: Any) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, keep)
        body = b"".join(chunks)
        if rewrite and start.get("status") == 200:
            data = json.loads(body)
            data.update(self.faults.token_override)
            if self.faults.access_size:
                data["access_token"] = "A" * self.faults.access_size
            body = json.dumps(data).encode()
        if every is not None:
            body = b" " * 4096 + body
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": start.get("status", 500),
                    "headers": headers})  # fmt: skip
        if every is None:
            await send({"type": "http.response.body", "body": body})
            return
        gone = asyncio.Event()

        async def watch() -> None:  # the client hung up: stop trickling
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.create_task(watch())
        try:
            for index in range(len(body)):
                if gone.is_set():
                    return
                await send({"type": "http.response.body", "body": body[index : index + 1],
                            "more_body": index + 1 < len(body)})  # fmt: skip
                await asyncio.sleep(every)
        finally:
            watcher.cancel()


class TokenFront:
    """ASGI middleware before ``/token`` and ``/register``: records each token request's grant
    and resource, and each registration request's body; answers the ``client_credentials``
    grant, which the SDK's token endpoint lacks."""

    def __init__(self, app: Any, provider: TestProvider) -> None:
        self.app = app
        self.provider = provider

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        watched = ("/token", "/register")
        if scope["type"] != "http" or scope["path"] not in watched or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] == "/register":
            try:
                self.provider.registration_requests.append(json.loads(body))
            except ValueError:
                self.provider.registration_requests.append(None)
            await self.app(scope, _replay(body), send)
            return
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
        await self.app(scope, _replay(body), send)

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


def _replay(body: bytes) -> Any:
    """An ASGI ``receive`` that hands out ``body`` (already read) once."""
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def admin_routes(
    provider: TestProvider, faults: Faults, moves: list[str] | None = None
) -> list[Route]:
    async def stats(request: Request) -> Response:
        return JSONResponse({
            "stats": dict(provider.stats),
            "token_requests": provider.token_requests,
            "registration_requests": provider.registration_requests,
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

    async def rotate(request: Request) -> Response:
        provider.rotate = request.query_params.get("on", "1") == "1"
        return JSONResponse({"rotate": provider.rotate})

    async def revoke_refresh(request: Request) -> Response:
        count = len(provider.refresh)
        provider.refresh.clear()
        return JSONResponse({"revoked": count})

    async def expire_access(request: Request) -> Response:
        count = len(provider.access)
        provider.access.clear()
        return JSONResponse({"expired": count})

    async def move_as(request: Request) -> Response:
        assert moves is not None
        if len(moves) > 1:
            del moves[0]  # the protected-resource metadata names the next one
        return JSONResponse({"authorization_server": moves[0]})

    async def trickle(request: Request) -> Response:
        faults.trickle[request.query_params["path"]] = float(request.query_params["every"])
        return JSONResponse({"trickle": faults.trickle})

    async def token_override(request: Request) -> Response:
        body = await request.body()
        faults.token_override = json.loads(body) if body else {}
        faults.access_size = int(request.query_params.get("access_size", "0"))
        return JSONResponse({"override": sorted(faults.token_override)})

    moving = [Route("/_test/move-as", move_as, methods=["POST"])] if moves else []
    return [
        *moving,
        Route("/_test/stats", stats, methods=["GET"]),
        Route("/_test/deny", deny, methods=["POST"]),
        Route("/_test/ttl", ttl, methods=["POST"]),
        Route("/_test/refresh-delay", refresh_delay, methods=["POST"]),
        Route("/_test/revoke-refresh", revoke_refresh, methods=["POST"]),
        Route("/_test/rotate", rotate, methods=["POST"]),
        Route("/_test/expire-access", expire_access, methods=["POST"]),
        Route("/_test/trickle", trickle, methods=["POST"]),
        Route("/_test/token-override", token_override, methods=["POST"]),
    ]


def metadata_route(
    issuer: Any, registration: Any, revocation: Any, *, cimd: bool, iss: bool
) -> Route:
    """The SDK's authorization-server metadata, also advertising client ID metadata documents
    (``cimd``) and the ``iss`` of RFC 9207 (``iss``)."""
    from mcp.server.auth.routes import build_metadata

    metadata = build_metadata(issuer, None, registration, revocation)
    if cimd:
        metadata.client_id_metadata_document_supported = True
    if iss:
        metadata.authorization_response_iss_parameter_supported = True

    async def handle(request: Request) -> Response:
        return JSONResponse(metadata.model_dump(mode="json", exclude_none=True))

    return Route("/.well-known/oauth-authorization-server", handle, methods=["GET"])


class Verifier:
    """The MCP server's token check: a token of any of the authorization servers."""

    def __init__(self, providers: list[TestProvider]) -> None:
        self.providers = providers

    async def verify_token(self, token: str) -> AccessToken | None:
        owner = next((p for p in self.providers if token in p.access), self.providers[0])
        return await owner.load_access_token(token)


def resource_route(resource: str, servers: list[str]) -> Route:
    """Protected-resource metadata naming ``servers[0]``, whichever that is at the time."""
    path = urlsplit(str(build_resource_metadata_url(resource))).path  # type: ignore[arg-type]

    async def handle(request: Request) -> Response:
        metadata = ProtectedResourceMetadata.model_validate({
            "resource": resource, "authorization_servers": [servers[0]],
            "scopes_supported": ["mcp:read"],
        })  # fmt: skip
        return JSONResponse(metadata.model_dump(mode="json", exclude_none=True))

    return Route(path, handle, methods=["GET"])


def build(opts: argparse.Namespace) -> list[tuple[Any, int]]:
    """The apps to serve, each with its port."""
    import warnings

    if opts.next_as_port and not opts.as_port:
        raise SystemExit("--next-as-port needs --as-port")
    faults = Faults()
    mcp_origin = f"http://127.0.0.1:{opts.port}"
    as_origin = f"http://127.0.0.1:{opts.as_port}" if opts.as_port else mcp_origin
    provider = TestProvider(opts.access_ttl, as_origin, opts.iss)
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
    providers = [provider]
    origins = [as_origin]  # the first is the one the protected-resource metadata names
    if opts.next_as_port:
        origins.append(f"http://127.0.0.1:{opts.next_as_port}")
        providers.append(TestProvider(opts.access_ttl, origins[1], opts.iss))
        providers[1].cimd_redirect = provider.cimd_redirect
    registration = ClientRegistrationOptions(
        enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES
    )
    revocation = RevocationOptions(enabled=True)
    resource = f"{mcp_origin}/{'sse' if opts.sse else 'mcp'}"

    def auth_settings(issuer: str) -> AuthSettings:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return AuthSettings(
                issuer_url=issuer,  # type: ignore[arg-type]
                resource_server_url=resource,  # type: ignore[arg-type]
                client_registration_options=registration,
                revocation_options=revocation,
                required_scopes=["mcp:read"],
                validate_token_resource=True,
            )

    settings = auth_settings(as_origin)
    if opts.as_port:
        server = MCPServer("oauth-test", auth=settings, token_verifier=Verifier(providers))  # type: ignore[arg-type]
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

    def metadata(issuer: Any) -> list[Route]:
        if not (opts.cimd or opts.iss):
            return []
        return [metadata_route(issuer, registration, revocation, cimd=opts.cimd, iss=opts.iss)]

    if not opts.as_port:
        mcp_app.router.routes[:0] = metadata(settings.issuer_url)  # before the SDK's own
        mcp_app.router.routes.extend(admin_routes(provider, faults))
        apps.append((FaultFront(TokenFront(mcp_app, provider), faults), opts.port))
        return apps
    if opts.next_as_port:
        mcp_app.router.routes.insert(0, resource_route(resource, origins))
    apps.append((FaultFront(mcp_app, faults), opts.port))
    ports = [opts.as_port, opts.next_as_port]
    for index, each in enumerate(providers):
        issuer = auth_settings(origins[index]).issuer_url
        routes = create_auth_routes(
            each,  # type: ignore[arg-type]
            issuer_url=issuer,
            client_registration_options=registration,
            revocation_options=revocation,
        )
        admin = admin_routes(each, faults, origins if index == 0 and opts.next_as_port else None)
        as_app = Starlette(routes=[*metadata(issuer), *routes, *admin])
        apps.append((FaultFront(TokenFront(as_app, each), faults), ports[index]))
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
    parser.add_argument("--iss", action="store_true", help="send iss= in answers (RFC 9207)")
    parser.add_argument(
        "--next-as-port", type=int, default=0, help="a second authorization server's port"
    )
    opts = parser.parse_args()
    asyncio.run(serve(build(opts)))


if __name__ == "__main__":
    main()
