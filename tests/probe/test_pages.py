"""Every page of a paged list, whatever a server does with its cursors (the listing itself,
without a server: tests/probe/test_probe.py lists a real paged server)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio

from mcpctl.probe.pages import MAX_PAGES, every_page, item_key


def tool(name: str) -> SimpleNamespace:
    return SimpleNamespace(name=name)


def listing(pages: dict[str | None, tuple[list[Any] | None, str | None]]) -> Any:
    asked: list[str | None] = []

    async def list_page(cursor: str | None) -> SimpleNamespace:
        asked.append(cursor)
        items, following = pages[cursor]
        return SimpleNamespace(tools=items, next_cursor=following)

    list_page.asked = asked  # type: ignore[attr-defined]
    return list_page


def run(list_page: Any, warnings: list[str]) -> list[Any]:
    return anyio.run(every_page, list_page, "tools", "tools/list", warnings)


def test_every_page_is_listed_until_no_cursor() -> None:
    list_page = listing({None: ([tool("a")], "c1"), "c1": (None, "c2"), "c2": ([tool("b")], "")})
    warnings: list[str] = []
    assert [t.name for t in run(list_page, warnings)] == ["a", "b"]
    assert list_page.asked == [None, "c1", "c2"] and warnings == []


def test_a_cursor_sent_again_ends_the_listing() -> None:
    pages = {None: ([tool("a")], "c1"), "c1": ([tool("b")], "c1")}
    warnings: list[str] = []
    assert [t.name for t in run(listing(pages), warnings)] == ["a", "b"]
    assert warnings == ["tools/list: the server sent the cursor 'c1' again; the listing ends there"]


def test_a_long_cursor_is_shown_cut() -> None:
    long = "x" * 100
    warnings: list[str] = []
    run(listing({None: ([tool("a")], long), long: ([], long)}), warnings)
    assert warnings == [f"tools/list: the server sent the cursor {'x' * 39 + '…'!r} again; "
                        "the listing ends there"]  # fmt: skip


def test_a_server_that_never_ends_is_cut_off_after_max_pages() -> None:
    asked: list[str | None] = []

    async def endless(cursor: str | None) -> SimpleNamespace:
        asked.append(cursor)
        return SimpleNamespace(tools=[tool(f"t{len(asked)}")], next_cursor=f"c{len(asked)}")

    warnings: list[str] = []
    assert len(run(endless, warnings)) == MAX_PAGES == len(asked) == 100
    assert warnings == ["tools/list: more than 100 pages; the rest was not listed"]


def test_an_item_listed_again_is_kept_once() -> None:
    first = tool("a")
    pages = {None: ([first, tool("b")], "c1"), "c1": ([tool("a"), tool("c"), tool("b")], None)}
    warnings: list[str] = []
    items = run(listing(pages), warnings)
    assert [t.name for t in items] == ["a", "b", "c"] and items[0] is first
    assert warnings == ["tools/list: 2 listed again on a later page; each is kept once"]


def test_what_tells_items_apart() -> None:
    template = SimpleNamespace(uri_template="file:///{p}", uri="x", name="n")
    resource = SimpleNamespace(uri="file:///a", name="n")
    assert item_key(template) == ("uri_template", "file:///{p}")
    assert item_key(resource) == ("uri", "file:///a")
    assert item_key(tool("n")) == ("name", "n")
    nameless = SimpleNamespace(name=None)
    assert item_key(nameless) == id(nameless)


def test_a_page_without_the_list_has_no_items() -> None:
    async def bare(cursor: str | None) -> SimpleNamespace:
        return SimpleNamespace(next_cursor=None)  # no "tools" at all

    warnings: list[str] = []
    assert run(bare, warnings) == [] and warnings == []
