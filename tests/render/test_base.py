"""What every render target shares: warnings for a person, placeholder syntaxes, names used."""

from __future__ import annotations

import re

import pytest

from mcpctl.errors import PlaceholderError
from mcpctl.render.base import (
    RenderRequest,
    convert_placeholders,
    grouped,
    names_used,
    placeholders_back,
    warn,
)


def test_a_warning_names_the_server_and_the_field() -> None:
    warnings: list[str] = []
    warn(warnings, "s", "cwd", "is not supported")
    assert warnings == ["s: cwd is not supported"]


def test_a_reason_shared_by_more_servers_than_the_limit_is_one_line() -> None:
    many = [f"s{i}: timeout dropped" for i in range(5)]
    lines = ["a: cwd dropped", *many, "no server here", "b: cwd dropped"]
    assert grouped(lines) == [
        "a: cwd dropped",
        "5 servers (s0, s1, s2 and 2 more): timeout dropped",
        "no server here",
        "b: cwd dropped",
    ]
    assert grouped(many, limit=5) == many
    assert grouped(many, limit=4) == ["5 servers (s0, s1, s2, s3 and 1 more): timeout dropped"]
    assert grouped(many[:3]) == many[:3]
    assert grouped(many[:4]) == ["4 servers (s0, s1, s2 and 1 more): timeout dropped"]


def test_lines_without_a_server_are_never_grouped() -> None:
    lines = ["same text"] * 5
    assert grouped(lines) == lines
    # a line without ": " does not join the servers of a reason that reads the same
    assert grouped(["x", "a: x", "b: x", "c: x"]) == ["x", "a: x", "b: x", "c: x"]


def request(**kwargs: object) -> RenderRequest:
    return RenderRequest({}, **kwargs)  # type: ignore[arg-type]


def test_placeholders_in_the_targets_own_syntax() -> None:
    def spell(name: str, default: str | None) -> str:
        return f"{{{{{name}|{default}}}}}"

    text = "a ${A} b ${B:-x} c"
    assert convert_placeholders(text, spell, request()) == "a {{A|None}} b {{B|x}} c"
    assert convert_placeholders(text, spell, request(inline_secrets=True)) == (
        "a {{A|None}} b {{B|x}} c"
    )


def test_without_a_syntax_values_are_written_only_when_inline() -> None:
    told: list[str] = []
    text = "${A}-${B:-dflt}"
    assert convert_placeholders(text, None, request(environ={"A": "1"}), told.append) == text
    assert told == []
    inline = request(inline_secrets=True, environ={"A": "1"}, secrets={"B": "2"}.get)
    assert convert_placeholders(text, None, inline, told.append) == "1-2"
    assert told == ["A", "B"]
    assert convert_placeholders(text, None, inline) == "1-2"
    assert convert_placeholders("plain", None, inline, told.append) == "plain"
    assert told == ["A", "B"]
    with pytest.raises(PlaceholderError, match="NOWHERE"):
        convert_placeholders("${NOWHERE}", None, request(inline_secrets=True, environ={}))


def test_placeholders_back_to_the_common_syntax() -> None:
    pattern = re.compile(r"\{env:(?P<name>\w+)\}")
    assert placeholders_back("a {env:X} b {env:Y}", pattern) == "a ${X} b ${Y}"


def test_names_used_in_order_of_first_use() -> None:
    assert names_used(["${B} ${A}", "x", "${A:-1} ${C}"]) == ["B", "A", "C"]
    assert names_used([]) == []


def test_a_group_stands_where_its_first_server_was() -> None:
    lines = ["s0: t", "other: x", "s1: t", "s2: t", "s3: t"]
    assert grouped(lines) == ["4 servers (s0, s1, s2 and 1 more): t", "other: x"]


def test_a_reason_with_a_colon_in_it_is_grouped_whole() -> None:
    reason = "nothing pinned in the lock file: rendered unpinned, every tool exposed"
    lines = [f"s{i}: {reason}" for i in range(4)] + ["t: other: rendered unpinned"]
    assert grouped(lines) == [f"4 servers (s0, s1, s2 and 1 more): {reason}", lines[-1]]


def test_a_line_without_a_server_stays_whatever_the_others_say() -> None:
    lines = ["x", "a: ", "b: ", "c: ", "d: "]
    assert grouped(lines) == ["x", "4 servers (a, b, c and 1 more): "]
