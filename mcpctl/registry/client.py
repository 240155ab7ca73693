"""Reading registries: the official v0.1 HTTP API, and local JSON files.

The HTTP client uses the SDK's HTTP stack (``httpx2``). Every request has one time limit for
all of it -- connecting, the status line and headers, the whole body, and any retries -- not
a limit per read: a registry that sends one byte a second, or answers nothing at all, is
given up on when the limit is reached. A client may also be given a ``deadline`` (a
:func:`time.monotonic` time) that no request goes past, however many pages it reads. 429
and 5xx are retried with backoff honouring ``Retry-After`` as long as the wait fits in what
is left; a registry asking for longer is given up on at once. Each response's size is
capped. Pagination follows ``metadata.nextCursor`` (and the older ``next_cursor`` spelling).

Redirects are followed by this client, not by httpx, so that each is checked: at most
:data:`MAX_REDIRECTS`, only to ``http`` or ``https``, never from ``https`` down to ``http``
(a ``RegistryError`` says where it led); any other 3xx is an error, its body no answer.
One that leads to another host is followed, and remembered (:attr:`RegistryClient.redirects`,
:attr:`Document.redirect`) so that callers can say that the answer came from elsewhere.

The time limits' parts are :mod:`mcpctl.registry.timing`; file registries
:mod:`mcpctl.registry.fileregistry` (:func:`load_file_registry`, re-exported here).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from mcpctl.errors import RegistryError
from mcpctl.registry.fileregistry import load_file_registry
from mcpctl.registry.records import Record, record_from_json
from mcpctl.registry.timing import Cutoff, Sockets, retry_after_seconds

__all__ = [
    "MAX_REDIRECTS",
    "Document",
    "RegistryClient",
    "host_of",
    "load_file_registry",
    "retry_after_seconds",
]

API = "/v0.1"
PAGE_LIMIT = 100
MAX_BYTES = 10 * 1024 * 1024
RETRY_STATUSES = {429, 500, 502, 503, 504}
CONNECT_TIMEOUT = 3.0  # offline, mcpctl must fail fast
OFFLINE_HINT = "check the network, or use --offline to search the cache"
MAX_REDIRECTS = 5
REDIRECT_STATUSES = {301, 302, 303, 307, 308}


def host_of(url: str) -> str:
    """The host of ``url`` as a person names it: ``name`` or ``name:port`` (no user info)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port is not None else host


@dataclass(frozen=True)
class Document:
    """A JSON document fetched from an arbitrary URL: ``data`` is ``None`` when the server
    answered 304 (the copy whose ``etag`` was sent is still current). ``redirect`` is
    ``(host asked, host that answered)`` when redirects led to another host."""

    data: Any
    etag: str | None = None
    redirect: tuple[str, str] | None = None


class _Redirected(Exception):
    """A 3xx answer with a ``Location`` (``url``: the request's whole URL)."""

    def __init__(self, status: int, url: str, location: str) -> None:
        super().__init__(location)
        self.status, self.url, self.location = status, url, location


@dataclass
class RegistryClient:
    """A client of one registry speaking the official API.

    Args:
        base_url: e.g. ``https://registry.modelcontextprotocol.io`` (``/v0.1`` is added).
        timeout: seconds one request may take in all: connecting, the whole response, and
            its retries.
        retries: further attempts after a 429 or 5xx (when the wait fits in the time left).
        max_bytes: the largest response body accepted.
        deadline: a :func:`time.monotonic` time no request goes past (``None``: only
            ``timeout``); for reading many pages, or many registries, in a bounded time.

    ``redirects`` lists, once each, the ``(host asked, host that answered)`` of every request
    that redirects led to another host.
    """

    base_url: str
    timeout: float = 10.0
    retries: int = 3
    max_bytes: int = MAX_BYTES
    backoff: float = 0.5
    sleep: Callable[[float], None] = time.sleep
    deadline: float | None = None

    def __post_init__(self) -> None:
        import httpx2  # noqa: TID251 -- the registry client is the one HTTP client outside probe/

        self._sockets = Sockets()
        self.redirects: list[tuple[str, str]] = []
        # Redirects are followed in _fetch, each one checked.
        self._http = httpx2.Client(follow_redirects=False, headers={"Accept": "application/json"})

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _url(self, path: str) -> str:
        base = self.base_url.rstrip("/")
        if not base.endswith(API):
            base += API
        return base + path

    def get_json(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """GET one JSON document, within the time limit, with retries and the size cap.

        Raises:
            RegistryError: network failure, no complete answer in time (the message says
                how long it waited), an error status after the retries, a ``Retry-After``
                longer than the time left, a body over the cap, or invalid JSON.
        """
        return self._get(path, params, time.monotonic())

    def get_document(
        self, url: str, *, etag: str | None = None, accept: str | None = None
    ) -> Document:
        """GET the JSON document at ``url`` (a whole URL: ``base_url`` is not used), with the
        same limits as :meth:`get_json`; ``etag`` asks for a 304 when it is still current.

        Raises:
            RegistryError: as :meth:`get_json`.
        """
        headers = {"If-None-Match": etag} if etag else {}
        if accept:
            headers["Accept"] = accept
        return self._fetch(url, None, time.monotonic(), headers)

    def _get(self, path: str, params: dict[str, Any] | None, since: float) -> Any:
        """:meth:`get_json`; messages give the time waited ``since`` (the first page's
        request, when reading several)."""
        return self._fetch(self._url(path), params, since, {}).data

    def _fetch(
        self, url: str, params: dict[str, Any] | None, since: float, headers: dict[str, str]
    ) -> Document:
        end = time.monotonic() + self.timeout
        if self.deadline is not None:
            end = min(end, self.deadline)
        attempt = hops = 0
        first, redirect = url, None
        while True:
            try:
                status, retry_after, body = self._attempt(url, params, since, end, headers)
            except _Redirected as moved:
                hops += 1
                url = self._follow(first, moved, hops)
                params = None  # the new location is a whole URL, its query included
                if host_of(url) != host_of(first):
                    redirect = (host_of(first), host_of(url))
                    if redirect not in self.redirects:
                        self.redirects.append(redirect)
                else:
                    redirect = None
                continue
            if status == 304:
                if headers.get("If-None-Match"):
                    return Document(None, headers["If-None-Match"], redirect)
                raise RegistryError(f"{url}: HTTP 304 to a request that was not conditional")
            if body is not None:
                try:
                    return Document(json.loads(body.decode("utf-8-sig")), retry_after, redirect)
                except (ValueError, RecursionError):
                    raise RegistryError(f"{url}: the response is not valid JSON") from None
            waited = time.monotonic() - since
            if attempt >= self.retries:
                raise RegistryError(
                    f"{url}: HTTP {status}, still failing after {attempt + 1} attempts "
                    f"({waited:.1f} s)"
                )
            asked = retry_after_seconds(retry_after)
            delay = asked if asked is not None else self.backoff * (2**attempt)
            left = end - time.monotonic()
            if delay >= left:
                why = (
                    f"it asks to retry in {round(delay, 1):g} s, more than the "
                    f"{max(left, 0):.1f} s left"
                    if asked is not None
                    else "no time left to retry"
                )
                raise RegistryError(f"{url}: HTTP {status}; {why}; gave up after {waited:.1f} s")
            self.sleep(delay)
            attempt += 1

    def _attempt(
        self,
        url: str,
        params: dict[str, Any] | None,
        since: float,
        end: float,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, str | None, bytes | None]:
        """One GET: (status, Retry-After, None) for a retryable status, (304, ETag, None) for
        a conditional request answered "not modified", else (status, ETag, the body)."""
        import httpx2  # noqa: TID251 -- the registry client is the one HTTP client outside probe/

        left = end - time.monotonic()
        if left <= 0:
            raise self._gave_up(url, since)
        timeout = httpx2.Timeout(left, connect=min(left, CONNECT_TIMEOUT))
        with Cutoff(self._sockets, end) as watch:
            try:
                trace = {"trace": self._sockets.trace}
                with self._http.stream(
                    "GET", url, params=params, timeout=timeout, extensions=trace,
                    headers=headers or None,
                ) as response:  # fmt: skip
                    status = response.status_code
                    location = response.headers.get("location")
                    if status in REDIRECT_STATUSES and location:
                        raise _Redirected(status, str(response.url), location)
                    if status in RETRY_STATUSES:
                        return status, response.headers.get("retry-after"), None
                    if status == 304:
                        return status, response.headers.get("etag"), None
                    if 300 <= status < 400:  # its body is a page about the move, not the answer
                        raise RegistryError(
                            f"{url}: HTTP {status} "
                            + ("without a Location to follow" if status in REDIRECT_STATUSES else
                               "(only 301, 302, 303, 307 and 308 are followed)")
                        )  # fmt: skip
                    etag = response.headers.get("etag")
                    if status == 404:
                        raise RegistryError(f"{url}: not found (404)")
                    if status >= 400:
                        raise RegistryError(f"{url}: HTTP {status}")
                    body = bytearray()
                    for chunk in response.iter_bytes():
                        body += chunk
                        if len(body) > self.max_bytes:
                            raise RegistryError(
                                f"{url}: response larger than {self.max_bytes // 1_048_576} MB"
                            )
                        if time.monotonic() >= end:
                            raise self._gave_up(url, since)
            except httpx2.ConnectTimeout:
                if watch.fired or time.monotonic() >= end:
                    raise self._gave_up(url, since) from None
                raise RegistryError(
                    f"cannot reach {self.base_url}: no answer to the connection within "
                    f"{round(min(left, CONNECT_TIMEOUT), 1):g} s",
                    hint=OFFLINE_HINT,
                ) from None
            except httpx2.TimeoutException:
                raise self._gave_up(url, since) from None
            except httpx2.HTTPError as exc:
                if watch.fired or time.monotonic() >= end:
                    raise self._gave_up(url, since) from None
                raise RegistryError(f"cannot reach {self.base_url}: {exc}",
                                    hint=OFFLINE_HINT) from None  # fmt: skip
            if watch.fired:  # a body cut short, without a length to notice it by
                raise self._gave_up(url, since)
        return status, etag, bytes(body)

    @staticmethod
    def _follow(asked: str, moved: _Redirected, hops: int) -> str:
        """Where a redirect leads, once checked.

        Raises:
            RegistryError: too many redirects, or one to another scheme than http(s), or
                from https down to http.
        """
        try:
            target = urljoin(moved.url, moved.location.strip())
            parts = urlsplit(target)
            valid = bool(parts.hostname) and (parts.port or 0) >= 0
        except ValueError:  # "http://[::1", a port that is not a number
            target, parts, valid = "", urlsplit(""), False
        scheme = parts.scheme.lower()
        shown = f"{scheme}://{host_of(target)}" if scheme in ("http", "https") else scheme + ":"
        why = None
        if not target:
            shown, why = "an address that cannot be read", "not a valid address"
        elif not valid and scheme in ("http", "https"):
            why = "not a valid address"
        elif scheme not in ("http", "https") or not valid:
            why = "only http and https are followed"
        elif scheme == "http" and urlsplit(moved.url).scheme.lower() == "https":
            why = "a redirect from https to http is refused (the answer could be altered)"
        elif hops > MAX_REDIRECTS:
            why = f"more than {MAX_REDIRECTS} redirects"
        if why is not None:
            raise RegistryError(
                f"{asked}: HTTP {moved.status} redirects to {shown}: {why}",
                hint="check the registry's address: use the one it redirects to if you trust it",
            )
        return target

    @staticmethod
    def _gave_up(url: str, since: float) -> RegistryError:
        waited = time.monotonic() - since
        return RegistryError(f"{url}: timed out: no complete answer; gave up after {waited:.1f} s",
                             hint=OFFLINE_HINT)  # fmt: skip

    def iter_records(
        self, *, updated_since: str | None = None, search: str | None = None
    ) -> Iterator[Record]:
        """Every record, page by page (deleted ones too when ``updated_since`` is given)."""
        cursor: str | None = None
        seen: set[str] = set()
        since = time.monotonic()
        while True:
            params: dict[str, Any] = {"limit": PAGE_LIMIT}
            if cursor:
                params["cursor"] = cursor
            if updated_since:
                params["updated_since"] = updated_since
            if search:
                params["search"] = search
            page = self._get("/servers", params, since)
            if not isinstance(page, dict) or not isinstance(page.get("servers"), list):
                raise RegistryError(f"{self.base_url}: a page without a 'servers' list")
            for raw in page["servers"]:
                record = record_from_json(raw)
                if record is not None:
                    yield record
            raw_meta = page.get("metadata")
            meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            cursor = meta.get("nextCursor") or meta.get("next_cursor")
            if not isinstance(cursor, str) or not cursor or cursor in seen:
                return  # the end, or a registry repeating a cursor (never loop forever)
            seen.add(cursor)

    def versions(self, name: str) -> list[Record]:
        """Every version of one server."""
        page = self.get_json(f"/servers/{quote(name, safe='')}/versions")
        items = page.get("servers") if isinstance(page, dict) else None
        return [r for r in (record_from_json(x) for x in items or []) if r is not None]

    def version(self, name: str, version: str = "latest") -> Record:
        """One version of one server (``latest`` resolves on the registry)."""
        doc = self.get_json(f"/servers/{quote(name, safe='')}/versions/{quote(version, safe='')}")
        record = record_from_json(doc)
        if record is None:
            raise RegistryError(f"{self.base_url}: {name}@{version} is not a server record")
        return record
