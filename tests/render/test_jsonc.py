"""JSON with comments: what is blanked, and that every offset stays where it was."""

from __future__ import annotations

import pytest

from mcpctl.render.jsonc import loads_jsonc, strip_jsonc


@pytest.mark.parametrize(
    ("text", "stripped"),
    [
        ("[1,]", "[1 ]"),  # a trailing comma alone, no comment in the text
        ('{"a": 1, // one\n}', '{"a": 1        \n}'),
        ('{"a": /* x\ny */ 1}', '{"a":     \n     1}'),
        ('{"a": "//not, a comment",}', '{"a": "//not, a comment" }'),
        ('{"a": 1} // the end', '{"a": 1}' + " " * 11),
        ('{"a": [1, 2]}', '{"a": [1, 2]}'),
        ("", ""),
    ],
)
def test_comments_and_trailing_commas_are_blanked_in_place(text: str, stripped: str) -> None:
    assert strip_jsonc(text) == stripped
    assert len(strip_jsonc(text)) == len(text)


def test_loads_jsonc_reads_what_json_refuses() -> None:
    assert loads_jsonc('{"a": [1, 2,], // c\n "b": "/*s*/"}') == {"a": [1, 2], "b": "/*s*/"}
