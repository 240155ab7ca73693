"""A bounded HTTP client: one time limit for all of each request, and a cap on its body.

Sign-in and sign-out (:mod:`mcpctl.auth`) use it, and so does the check of a server's OAuth
metadata (:mod:`mcpctl.probe.layers`); it lives below both packages, where both reach it
without one importing the other back.

httpx's timeouts apply to each read, so a server that sends one byte every few seconds never
trips them. Like the registry client (:mod:`mcpctl.registry.client`), every request here has
one deadline for all of it -- connecting, the status line and headers, and the whole body --
and a cap on the body's size: the request is cancelled (``anyio.fail_after``) when the time
is up, whatever the server sends. An event stream (an SSE server's, or an MCP answer sent as
one) is not read: only its headers are waited for. Redirects are never followed: a 3xx is
the answer (an OAuth metadata document or token endpoint that moved elsewhere, or to plain
http, is not fetched from there behind the user's back).

It overrides ``httpx2.AsyncClient._send_single_request``, a private method, deliberately: it is
the one place every request meets the transport -- each request of the SDK's OAuth flow
included, which waits for the user's browser between requests, so no deadline can be put
around a whole :meth:`~httpx2.AsyncClient.send` -- and the public alternatives fall short: a
``transport=`` wrapper is bypassed by the proxy transports httpx builds from the environment
(``HTTPS_PROXY``, ``NO_PROXY``), and event hooks run after the headers have arrived.
``tests/test_httpclient.py`` fails loudly when httpx2 changes that method.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2

__all__ = ["MAX_RESPONSE", "BoundedClient", "ResponseTooLarge", "StepTimeout"]

MAX_RESPONSE = 4 * 1024 * 1024


class StepTimeout(httpx2.TimeoutException):
    """A request that did not end within its time limit (the server was too slow, or
    trickled its answer)."""

    def __init__(self, request: httpx2.Request, seconds: float) -> None:
        super().__init__(
            f"{request.method} {request.url} did not answer in full within {seconds:g} s",
            request=request,
        )
        self.seconds = seconds


class ResponseTooLarge(httpx2.HTTPError):
    """A response body larger than the client accepts."""

    def __init__(self, request: httpx2.Request, limit: int) -> None:
        super().__init__(f"{request.method} {request.url} answered with more than {limit} bytes")
        self.request = request
        self.limit = limit


class BoundedClient(httpx2.AsyncClient):
    """An ``httpx2.AsyncClient`` whose every request (auth-flow requests included: metadata,
    registration, tokens) ends within ``limit`` seconds in all, with a body of at most
    ``max_bytes``; see the module's docstring.

    Raises (from its requests):
        StepTimeout: a request took longer than ``limit`` (an ``httpx2.TimeoutException``).
        ResponseTooLarge: a body over ``max_bytes`` (an ``httpx2.HTTPError``).
    """

    def __init__(self, *, limit: float, max_bytes: int = MAX_RESPONSE, **kwargs: Any) -> None:
        if kwargs.get("follow_redirects"):
            raise ValueError("BoundedClient never follows redirects")
        kwargs.setdefault("timeout", httpx2.Timeout(limit))
        super().__init__(**kwargs)
        # Uncompressed: the cap is on what is kept, and a small compressed body can be huge.
        self.headers["Accept-Encoding"] = "identity"
        self.limit = limit
        self.max_bytes = max_bytes

    async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        """:meth:`httpx2.AsyncClient.send`, without following redirects whatever is asked."""
        kwargs["follow_redirects"] = False
        return await super().send(request, **kwargs)

    async def _send_single_request(self, request: httpx2.Request) -> httpx2.Response:
        # httpx's one place where a request meets the transport (redirects and auth flows
        # each come through it): the deadline covers the headers and the whole body.
        try:
            with anyio.fail_after(self.limit):
                response = await super()._send_single_request(request)
                if _is_event_stream(response):
                    return response
                try:
                    body = await _read_capped(response, self.max_bytes)
                except BaseException:
                    await response.aclose()
                    raise
        except TimeoutError:
            raise StepTimeout(request, self.limit) from None
        if body is None:
            raise ResponseTooLarge(request, self.max_bytes)
        response.stream = httpx2.ByteStream(body)  # read within the deadline; handed out as is
        return response


def _is_event_stream(response: httpx2.Response) -> bool:
    kind = response.headers.get("content-type", "")
    return kind.split(";")[0].strip().lower() == "text/event-stream"


async def _read_capped(response: httpx2.Response, limit: int) -> bytes | None:
    """The raw body (the response itself is left unread), or ``None`` past ``limit`` bytes."""
    stream = response.stream
    assert isinstance(stream, httpx2.AsyncByteStream)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in stream:
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
    finally:
        await stream.aclose()
    return b"".join(chunks)
