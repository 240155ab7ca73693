"""The table of render targets: every name resolves, and a wrong name is told what is there."""

from __future__ import annotations

import pytest

from mcpctl.errors import UsageError
from mcpctl.render.targets import TARGET_MODULES, get_target, target_names


def test_every_name_in_the_table_gives_the_target_of_that_name() -> None:
    assert target_names() == list(TARGET_MODULES)
    for name in target_names():
        assert get_target(name).name == name


def test_a_mistyped_target_is_told_the_closest_name() -> None:
    with pytest.raises(UsageError) as caught:
        get_target("vscod")
    assert caught.value.message == "no render target 'vscod'"
    assert caught.value.hint == "did you mean 'vscode'?"
    with pytest.raises(UsageError) as caught:
        get_target("Cursor")
    assert caught.value.hint == "did you mean 'cursor'?"


def test_a_target_like_no_other_is_told_every_target() -> None:
    with pytest.raises(UsageError) as caught:
        get_target("zzzzqqqq")
    assert caught.value.message == "no render target 'zzzzqqqq'"
    assert caught.value.hint == "targets: " + ", ".join(TARGET_MODULES)
    assert caught.value.hint.startswith("targets: mcp-proxy, fastmcp, mcp-proxy-py, 1mcp, ")
