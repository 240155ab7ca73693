"""Control characters in a config entry: refusing to write a lone surrogate out."""

from __future__ import annotations

import pytest

from mcpctl import ServerEntry
from mcpctl.config.controlchars import refuse_lone_surrogates
from mcpctl.errors import UsageError


@pytest.mark.parametrize(
    ("entry", "where", "char"),
    [
        (ServerEntry(command="x", args=("ok", "a\udc80")), "s.args[1]", "\\udc80"),
        (ServerEntry(command="x", env={"K": "\ud800"}), "s.env.K", "\\ud800"),
        (ServerEntry(command="x\udfff"), "s.command", "\\udfff"),
        (ServerEntry(url="https://h.example/\udbff"), "s.url", "\\udbff"),
    ],
)  # fmt: skip
def test_a_lone_surrogate_is_refused_where_it_is(entry: ServerEntry, where: str, char: str) -> None:
    with pytest.raises(UsageError) as info:
        refuse_lone_surrogates({"fine": ServerEntry(command="y"), "s": entry}, "render cursor")
    assert info.value.message == (
        f"{where} holds a lone surrogate ({char}), which is not text: render cursor cannot hold it"
    )
    assert info.value.hint == "fix it in the config; 'mcpctl validate' shows every such place"


def test_a_surrogate_in_a_servers_name_is_refused() -> None:
    with pytest.raises(UsageError, match=r"holds a lone surrogate \(\\udc80\)"):
        refuse_lone_surrogates({"s\udc80": ServerEntry(command="x")}, "render cursor")


@pytest.mark.parametrize("text", ["\x1b[31m", "\u200b", "\u202e", "\ud7ff", "\ue000", "plain"])
def test_other_characters_are_left_to_validate(text: str) -> None:
    refuse_lone_surrogates({"s": ServerEntry(command="x", args=(text,))}, "render cursor")
