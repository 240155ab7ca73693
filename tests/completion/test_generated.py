"""The completion table and the shell scripts are what the app generates.

``mcpctl/completion/tree.json`` (the command table a TAB press reads) and the scripts in
``completions/`` are generated; these tests fail when they drift from the app. Regenerate
them with ``MCPCTL_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/completion``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.cli.app import build_command
from mcpctl.completion.engine import load_tree
from mcpctl.completion.generate import KINDS, build_tree, dump_tree
from mcpctl.completion.scripts import FILENAMES, script
from mcpctl.render.importing import client_targets
from tests.golden import check_golden

ROOT = Path(__file__).resolve().parent.parent.parent


def generated() -> dict[str, str]:
    """Every generated file (path from the repository's root -> text)."""
    tree = build_tree(build_command(), [t.name for t in client_targets()])
    files = {"mcpctl/completion/tree.json": dump_tree(tree)}
    for shell, name in FILENAMES.items():
        files[f"completions/{name}"] = script(shell)
    return files


@pytest.mark.parametrize("path", sorted(generated()))
def test_generated_files_match_the_app(path: str) -> None:
    text = generated()[path]
    file = ROOT / path
    check_golden(file, text)


def test_the_table_lists_every_command_and_option() -> None:
    tree = load_tree()
    stack = [("", build_command())]
    while stack:
        path, command = stack.pop()
        node = tree["commands"][path]
        names = {n for o in [*node["options"], *tree["options"]] for n in o["names"]}
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                assert set(param.opts) <= names, (path, param.opts)
        visible = (
            [n for n, sub in command.commands.items() if not sub.hidden]
            if hasattr(command, "commands")
            else []
        )
        assert node["commands"] == visible
        stack += [
            (f"{path} {n}".strip(), sub) for n, sub in getattr(command, "commands", {}).items()
        ]


def test_declared_kinds_name_real_parameters() -> None:
    tree = load_tree()
    for (path, param), kind in KINDS.items():
        node = tree["commands"][path]
        values = [a["value"] for a in node["args"] if a["name"] == param]
        assert kind in values or any(o["value"] == kind for o in node["options"]), (path, param)


def test_a_stale_kind_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KINDS, ("call", "no_such_param"), "server")
    with pytest.raises(ValueError, match="call no_such_param"):
        build_tree(build_command(), [])


def test_the_table_is_small_and_plain_json() -> None:
    text = (ROOT / "mcpctl/completion/tree.json").read_text(encoding="utf-8")
    tree: dict[str, Any] = json.loads(text)
    assert tree["format"] == 1
    assert len(text) < 60_000  # read on every TAB press
    assert {"--config", "--json", "-q", "--help"} <= {
        n for o in tree["options"] for n in o["names"]
    }
