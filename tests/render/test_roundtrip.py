"""Render and import are inverses: what a target renders without a warning comes back as is.

For every target, over generated configs: each server that ``render`` wrote without a
warning must be parsed back from the rendered text as the same entry (mcpctl's own metadata,
which no other tool keeps, aside). A server the target cannot fully express must be named in
a warning: nothing is dropped in silence.
"""

from __future__ import annotations

import dataclasses
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.render import render, target_names
from mcpctl.render.targets import get_target

# Kept by mcpctl only: no target has a place for them, and losing them is not a loss.
METADATA = {"description": None, "source": None, "sensitive": False}

words = st.text(string.ascii_letters + string.digits + "-_./:=@", min_size=1, max_size=12)
var_names = st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True)
placeholder = var_names.map(lambda v: f"${{{v}}}")
values = st.one_of(words, placeholder)
env = st.dictionaries(var_names, values, max_size=3)
tool_names = st.lists(st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), min_size=1,
                      max_size=3, unique=True).map(tuple)  # fmt: skip
filters = st.one_of(
    st.none(),
    tool_names.map(lambda t: ToolFilter(allow=t)),
    tool_names.map(lambda t: ToolFilter(deny=t)),
)
timeouts = st.one_of(st.none(), st.integers(1, 600).map(lambda s: s * 1000))

stdio = st.builds(
    ServerEntry,
    command=st.sampled_from(["npx", "uvx", "node", "python3", "/usr/local/bin/server"]),
    args=st.lists(words, max_size=4).map(tuple),
    env=env,
    cwd=st.one_of(st.none(), st.just("/srv/mcp")),
    timeout=timeouts,
    tools=filters,
)
header_names = st.sampled_from(["X-Api-Key", "X-Team", "Accept-Language"])
remote = st.builds(
    ServerEntry,
    url=st.from_regex(r"https://[a-z]{1,8}\.example\.com/[a-z]{0,6}", fullmatch=True),
    transport=st.sampled_from(["streamable-http", "sse"]),
    headers=st.dictionaries(header_names, values, max_size=2),
    timeout=timeouts,
    tools=filters,
    auth=st.one_of(st.none(), placeholder.map(lambda p: AuthConfig(type="bearer", token=p))),
)
configs = st.dictionaries(
    st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True),
    st.one_of(stdio, remote),
    min_size=1,
    max_size=4,
)


def _bare(entry: ServerEntry) -> ServerEntry:
    return dataclasses.replace(entry, **METADATA)  # type: ignore[arg-type]


def _warned(warnings: list[str]) -> set[str]:
    return {w.split(":", 1)[0] for w in warnings}


@pytest.mark.parametrize("target", target_names())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs)
def test_render_then_import_gives_the_same_entries(
    target: str, config: dict[str, ServerEntry]
) -> None:
    rendered = render(target, config, environ={})
    parsed = get_target(target).parse(rendered.text)
    warned = _warned(rendered.warnings)
    for name, entry in config.items():
        if name in warned:
            continue
        assert name in parsed.entries, f"{target} dropped {name} without a warning"
        assert _bare(parsed.entries[name]) == _bare(entry), f"{target}: {name} changed"
