"""Reading registries: the official v0.1 HTTP API, and local JSON files.

The HTTP client uses the SDK's HTTP stack (``httpx2``) with a timeout on every request, a cap
on each response's size, and retries with backoff on 429 and 5xx that honour ``Retry-After``.
Pagination follows ``metadata.nextCursor`` (and the older ``next_cursor`` spelling).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mcpctl.errors import RegistryError, UsageError
from mcpctl.registry.records import Record, record_from_json

__all__ = ["RegistryClient", "load_file_registry"]

API = "/v0.1"
PAGE_LIMIT = 100
MAX_BYTES = 10 * 1024 * 1024
RETRY_STATUSES = {429, 500, 502, 503, 504}


@dataclass
class RegistryClient:
    """A client of one registry speaking the official API.

    Args:
        base_url: e.g. ``https://registry.modelcontextprotocol.io`` (``/v0.1`` is added).
        timeout: seconds for each request (connect and read).
        retries: further attempts after a 429 or 5xx.
        max_bytes: the largest response body accepted.
    """

    base_url: str
    timeout: float = 10.0
    retries: int = 3
    max_bytes: int = MAX_BYTES
    backoff: float = 0.5
    sleep: Callable[[float], None] = time.sleep

    def __post_init__(self) -> None:
        import httpx2  # noqa: TID251 -- the registry client is the one HTTP client outside probe/

        # A short connect timeout: offline, mcpctl must fail fast, not after retries.
        timeout = httpx2.Timeout(self.timeout, connect=min(self.timeout, 3.0))
        self._http = httpx2.Client(timeout=timeout, follow_redirects=True,
                                   headers={"Accept": "application/json"})  # fmt: skip

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
        """GET one JSON document, with retries and the size cap.

        Raises:
            RegistryError: network failure, an error status after the retries, a body over
                the cap, or invalid JSON.
        """
        import httpx2  # noqa: TID251 -- the registry client is the one HTTP client outside probe/

        url = self._url(path)
        for attempt in range(self.retries + 1):
            try:
                with self._http.stream("GET", url, params=params) as response:
                    status = response.status_code
                    if status in RETRY_STATUSES and attempt < self.retries:
                        self.sleep(self._delay(response.headers.get("retry-after"), attempt))
                        continue
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
            except httpx2.ConnectTimeout:
                raise RegistryError(
                    f"cannot reach {self.base_url}: no answer to the connection",
                    hint="check the network, or use --offline to search the cache",
                ) from None
            except httpx2.TimeoutException:
                if attempt < self.retries:
                    self.sleep(self._delay(None, attempt))
                    continue
                raise RegistryError(f"{url}: timed out after {self.timeout:g} s") from None
            except httpx2.HTTPError as exc:
                raise RegistryError(
                    f"cannot reach {self.base_url}: {exc}",
                    hint="check the network, or use --offline to search the cache",
                ) from None
            try:
                return json.loads(bytes(body).decode("utf-8-sig"))
            except ValueError:
                raise RegistryError(f"{url}: the response is not valid JSON") from None
        raise RegistryError(f"{url}: still failing after {self.retries + 1} attempts")

    def _delay(self, retry_after: str | None, attempt: int) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), 60.0)
            except ValueError:
                pass
        return float(self.backoff * (2**attempt))

    def iter_records(
        self, *, updated_since: str | None = None, search: str | None = None
    ) -> Iterator[Record]:
        """Every record, page by page (deleted ones too when ``updated_since`` is given)."""
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            params: dict[str, Any] = {"limit": PAGE_LIMIT}
            if cursor:
                params["cursor"] = cursor
            if updated_since:
                params["updated_since"] = updated_since
            if search:
                params["search"] = search
            page = self.get_json("/servers", params)
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


def load_file_registry(path: Path) -> list[Record]:
    """The records of a file registry: a JSON list of server.json documents or records
    (or ``{"servers": [...]}``, as the API returns, or a ``discover --export`` file).

    Raises:
        UsageError: the file cannot be read or is not such a list.
    """
    try:
        data = json.loads(path.read_text("utf-8-sig"))
    except OSError as exc:
        raise UsageError(f"cannot read registry file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"registry file {path} is not valid JSON: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("servers"), list):
        data = data["servers"]
    if not isinstance(data, list):
        raise UsageError(f"registry file {path} must be a JSON list of server.json documents")
    return [r for r in (record_from_json(x) for x in data) if r is not None]
