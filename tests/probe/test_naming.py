"""Tool names as a host sees them, without a server: the prefix styles, the allow/deny
filters and the collisions they leave (tests/cli/test_tools.py lists real servers)."""

from __future__ import annotations

import pytest

from mcpctl.config.model import ToolFilter
from mcpctl.probe.naming import (
    CatalogEntry,
    Collision,
    build_catalog,
    collisions_fail,
    prefixed,
)


@pytest.mark.parametrize(
    ("style", "expected"),
    [("underscore", "mcp_gh_search"), ("colon", "gh:search"), ("none", "search")],
)
def test_each_style_names_a_tool_as_its_hosts_do(style: str, expected: str) -> None:
    assert prefixed("gh", "search", style) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("style", "policy", "fails"),
    [
        ("underscore", "auto", True),
        ("colon", "auto", True),
        ("none", "auto", False),
        ("underscore", "warn", False),
        ("none", "warn", False),
        ("underscore", "error", True),
        ("none", "error", True),
    ],
)
def test_whether_collisions_fail_a_check(style: str, policy: str, fails: bool) -> None:
    assert collisions_fail(style, policy) is fails  # type: ignore[arg-type]


def test_by_default_only_prefixed_collisions_fail() -> None:
    assert collisions_fail("colon") is True
    assert collisions_fail("none") is False


def test_every_tool_is_listed_in_order_with_its_server_and_own_name() -> None:
    catalog, collisions = build_catalog(
        [("gh", ["search", "issue"], None), ("fs", ["read"], None)], "colon"
    )
    assert catalog == [
        CatalogEntry("gh:search", "gh", "search", True),
        CatalogEntry("gh:issue", "gh", "issue", True),
        CatalogEntry("fs:read", "fs", "read", True),
    ]
    assert collisions == []


def test_filtered_tools_are_listed_hidden_and_never_collide() -> None:
    filt = ToolFilter(allow=("s*",), deny=("secret",))
    catalog, collisions = build_catalog(
        [("a", ["search", "secret", "other"], filt), ("b", ["search", "secret"], None)], "none"
    )
    assert [(e.name, e.server, e.exposed) for e in catalog] == [
        ("search", "a", True),
        ("secret", "a", False),
        ("other", "a", False),
        ("search", "b", True),
        ("secret", "b", True),
    ]
    assert collisions == [Collision("search", (("a", "search"), ("b", "search")))]


def test_prefixed_names_that_still_meet_collide_with_every_source() -> None:
    servers = [
        ("a_b", ["c"], None),
        ("a", ["b_c", "d"], None),
        ("x", ["y"], ToolFilter(deny=("y",))),
        ("mcp_x", ["z"], None),
        ("a_b_c", [], None),
    ]
    catalog, collisions = build_catalog(servers, "underscore")
    assert [e.name for e in catalog] == [
        "mcp_a_b_c",
        "mcp_a_b_c",
        "mcp_a_d",
        "mcp_x_y",
        "mcp_mcp_x_z",
    ]
    assert collisions == [Collision("mcp_a_b_c", (("a_b", "c"), ("a", "b_c")))]
    # The same servers under another style do not collide.
    assert build_catalog(servers, "colon")[1] == []


def test_three_tools_under_one_name_are_one_collision() -> None:
    _, collisions = build_catalog(
        [("a", ["t"], None), ("b", ["t"], None), ("c", ["t"], None), ("d", ["u"], None)], "none"
    )
    assert collisions == [Collision("t", (("a", "t"), ("b", "t"), ("c", "t")))]
