"""The HTTP layers of a remote server, for ``mcpctl doctor NAME``: its first answer to an
``initialize`` POST (or the older transport's event-stream GET), and its OAuth metadata
(protected-resource and authorization-server documents).

Each check answers with what it saw or raises :class:`~mcpctl.probe.netlayers.LayerFailed`.
No header's value or token is ever part of what is returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from mcpctl.probe.failures import one_line
from mcpctl.probe.netlayers import LayerFailed

if TYPE_CHECKING:
    from mcpctl.config.placeholders import ResolvedEntry

__all__ = ["AuthMetadata", "HttpAnswer", "auth_metadata", "check_http"]

#: The body of the ``initialize`` request the HTTP check sends (any era answers it somehow).
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "mcpctl-doctor", "version": "1"},
    },
}
_MAX_METADATA = 256 * 1024


@dataclass(frozen=True)
class HttpAnswer:
    """The first answer of the server: its status, content type, and the scheme of its
    ``WWW-Authenticate`` challenge (with the protected-resource metadata URL it names)."""

    method: str
    status: int
    content_type: str
    challenge: str | None = None
    resource_metadata: str | None = None


def _challenge(header: str) -> tuple[str | None, str | None]:
    import re

    header = header.strip()
    if not header:
        return None, None
    scheme = one_line(header.split()[0].rstrip(","), 40)
    found = re.search(r'resource_metadata\s*=\s*"?([^",\s]+)"?', header)
    return scheme, (found.group(1) if found else None)


async def check_http(resolved: ResolvedEntry, transport: str | None, timeout: float) -> HttpAnswer:
    """What the endpoint answers to the first request a client sends: a POST of
    ``initialize`` (streamable HTTP), or a GET of the event stream (SSE) -- with the entry's
    headers, and its credentials unless it signs in with OAuth (the sign-in is the next
    layer's). Only the status line and headers are read.

    Raises:
        LayerFailed: no HTTP answer (the connection failed or timed out).
    """
    import anyio
    import httpx2

    from mcpctl.probe.streams import _auth_headers

    entry = resolved.entry
    assert entry.url is not None
    if entry.auth is not None and entry.auth.type == "oauth":
        headers, auth = dict(entry.headers), None
    else:
        headers, auth = _auth_headers(entry, resolved.name)
    sse = transport == "sse"
    try:
        with anyio.fail_after(timeout):
            async with httpx2.AsyncClient(headers=headers, auth=auth, timeout=timeout) as client:
                if sse:
                    request = client.build_request(
                        "GET", entry.url, headers={"Accept": "text/event-stream"}
                    )
                else:
                    request = client.build_request(
                        "POST",
                        entry.url,
                        json=_INITIALIZE,
                        headers={
                            "Accept": "application/json, text/event-stream",
                            "MCP-Protocol-Version": "2025-11-25",
                        },
                    )
                response = await client.send(request, stream=True)
                await response.aclose()
    except TimeoutError:
        raise LayerFailed(
            f"no HTTP answer within {timeout:g} s",
            "the server accepted the connection but did not answer",
        ) from None
    except httpx2.HTTPError as exc:
        raise LayerFailed(
            resolved.redact(one_line(f"no HTTP answer: {type(exc).__name__}: {exc}")),
            "does the server speak HTTP on that port?",
        ) from None
    scheme, metadata = _challenge(response.headers.get("www-authenticate", ""))
    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return HttpAnswer(request.method, response.status_code, ctype, scheme, metadata)


@dataclass
class AuthMetadata:
    """The OAuth metadata of a protected server: where its protected-resource metadata is,
    which authorization server it names, and whether that one publishes its own."""

    resource_url: str | None = None
    resource: str | None = None
    authorization_servers: list[str] = field(default_factory=list)
    issuer: str | None = None
    issuer_metadata_url: str | None = None
    problems: list[str] = field(default_factory=list)


def _well_known(url: str, suffix: str) -> list[str]:
    """``{origin}/.well-known/{suffix}{path}`` then ``{origin}/.well-known/{suffix}``."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    first = f"{origin}/.well-known/{suffix}{path}"
    return list(dict.fromkeys([first, f"{origin}/.well-known/{suffix}"]))


async def _get_json(client: Any, url: str) -> dict[str, Any] | None:
    try:
        response = await client.get(url, headers={"Accept": "application/json"})
    except Exception:  # a metadata URL that fails is one that is not there
        return None
    if response.status_code != 200 or len(response.content) > _MAX_METADATA:
        return None
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


async def auth_metadata(url: str, resource_metadata: str | None, timeout: float) -> AuthMetadata:
    """The protected-resource metadata of ``url`` (the URL its challenge named, else the
    well-known ones) and the metadata of the first authorization server it names. Never
    raises: what is missing is in ``problems``."""
    import anyio

    from mcpctl.httpclient import BoundedClient

    found = AuthMetadata()
    candidates = [resource_metadata] if resource_metadata else []
    candidates += _well_known(url, "oauth-protected-resource")
    try:
        with anyio.fail_after(timeout):
            async with BoundedClient(limit=timeout, max_bytes=_MAX_METADATA) as client:
                for candidate in dict.fromkeys(candidates):
                    data = await _get_json(client, urljoin(url, candidate))
                    if data is not None:
                        found.resource_url = urljoin(url, candidate)
                        found.resource = str(data.get("resource") or "") or None
                        servers = data.get("authorization_servers")
                        if isinstance(servers, list):
                            found.authorization_servers = [str(s) for s in servers if s]
                        break
                else:
                    found.problems.append("no protected-resource metadata")
                    return found
                if not found.authorization_servers:
                    found.problems.append(
                        "its protected-resource metadata names no authorization server"
                    )
                    return found
                issuer = found.authorization_servers[0]
                for candidate in (
                    *_well_known(issuer, "oauth-authorization-server"),
                    *_well_known(issuer, "openid-configuration"),
                ):
                    data = await _get_json(client, candidate)
                    if data is not None:
                        found.issuer = str(data.get("issuer") or issuer)
                        found.issuer_metadata_url = candidate
                        break
                else:
                    found.problems.append(
                        f"the authorization server {issuer} publishes no metadata"
                    )
    except TimeoutError:
        found.problems.append(f"the metadata did not arrive within {timeout:g} s")
    return found
