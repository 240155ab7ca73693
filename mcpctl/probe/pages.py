"""Every page of a paged list (tools, prompts, resources, resource templates), whatever the
server does with its cursors.

A server ends a list by sending no ``nextCursor``. One that sends a cursor it sent before
would be asked for the same pages for ever: the listing ends there, with a warning, and so
it does after :data:`MAX_PAGES` pages. An item listed again on a later page (a server that
answers every cursor with its first page) is kept once, with a warning: it is the server's
paging, not two tools of one name. Used by :func:`mcpctl.probe.toolinfo.list_all_tools`
and :mod:`mcpctl.probe.catalog`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpctl.probe.failures import one_line

__all__ = ["MAX_PAGES", "every_page", "item_key"]

#: Pages listed per list at most: a server that keeps sending new cursors is cut off there.
MAX_PAGES = 100


def item_key(item: Any) -> object:
    """What tells items of a list apart: a template's URI template, a resource's URI, a
    tool's or prompt's name."""
    for attr in ("uri_template", "uri", "name"):
        found = getattr(item, attr, None)
        if found is not None:
            return attr, str(found)
    return id(item)


async def every_page(
    list_page: Callable[[str | None], Awaitable[Any]],
    attr: str,
    what: str,
    warnings: list[str],
) -> list[Any]:
    """The items (``page.<attr>``) of every page ``list_page(cursor)`` gives, the first asked
    for without a cursor; a warning naming ``what`` is added to ``warnings`` when the server's
    paging had to be cut short or repeated items."""
    items: list[Any] = []
    seen: set[object] = set()
    sent: set[str] = set()
    repeated = 0
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await list_page(cursor)
        fresh = []
        for item in getattr(page, attr, None) or []:
            key = item_key(item)
            if key in seen:
                repeated += 1
                continue
            fresh.append(item)
        seen.update(item_key(item) for item in fresh)
        items += fresh
        cursor = page.next_cursor
        if not cursor:
            break
        if cursor in sent:
            warnings.append(
                f"{what}: the server sent the cursor {one_line(cursor, 40)!r} again; "
                "the listing ends there"
            )
            break
        sent.add(cursor)
    else:
        warnings.append(f"{what}: more than {MAX_PAGES} pages; the rest was not listed")
    if repeated:
        warnings.append(f"{what}: {repeated} listed again on a later page; each is kept once")
    return items
