"""The docs show commands that exist: every ``mcpctl ...`` line in their shell and CI blocks
parses against the app (the command, its options, the number of its arguments, the values
of its choices), and their links lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcpctl.cli.app import build_command
from tests.conftest import ROOT
from tools.doclines import check_command_line, fenced_lines, shell_commands

#: Shell-like and CI blocks whose ``mcpctl`` lines are checked.
LANGUAGES = ("sh", "bash", "shell", "console", "yaml", "yml")
#: Every page with shell examples: the README, the examples' README and all of docs/.
PAGES = sorted(
    [ROOT / "README.md", ROOT / "examples" / "README.md", *(ROOT / "docs").rglob("*.md")]
)
#: Lines that cannot parse as they are (a placeholder stands for a value); keep this tiny.
SKIP: set[str] = set()


def command_lines(page: Path) -> list[tuple[str, list[str]]]:
    """(line, the arguments of one mcpctl command in it) for each command in the page."""
    found = []
    for line in fenced_lines(page.read_text(encoding="utf-8"), LANGUAGES):
        if line not in SKIP:
            found += [(line, args) for args in shell_commands(line)]
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_line_parses(page: Path) -> None:
    root = build_command()
    for line, args in command_lines(page):
        try:
            check_command_line(root, args)
        except Exception as exc:
            where = page.relative_to(ROOT)
            pytest.fail(f"{where}: '{line}' does not parse: {exc}")


@pytest.mark.parametrize(
    ("page", "at_least"),
    [("README.md", 20), ("docs/getting-started.md", 30), ("docs/ci.md", 10)],
)
def test_the_newcomer_pages_show_commands(page: str, at_least: int) -> None:
    assert len(command_lines(ROOT / page)) >= at_least


def test_the_ci_recipes_run_the_four_checks() -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    workflows = fenced_lines(text, ("yaml",))
    commands = [" ".join(args) for line in workflows for args in shell_commands(line)]
    for wanted in (
        "validate --format github",
        "render mcp-proxy -o proxy.json --check",
        "snapshot diff --probe --against mcp-lock.json --exit-code --format sarif",
        "health --json",
    ):
        assert any(c.startswith(wanted) for c in commands), wanted
    assert "github/codeql-action/upload-sarif" in text
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |"):
        assert code in text


def test_the_yaml_helper_reads_run_and_script_values() -> None:
    text = """
```yaml
jobs:
  a:
    steps:
      - run: mcpctl validate
      - run: >
          mcpctl snapshot diff --exit-code
          --format sarif > out.sarif
      - run: |
          mcpctl list \\
            --json
lint:
  script:
    - mcpctl doctor
```
"""
    assert fenced_lines(text, ("yaml",)) == [
        "mcpctl validate",
        "mcpctl snapshot diff --exit-code --format sarif > out.sarif",
        "mcpctl list --json",
        "mcpctl doctor",
    ]


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize(
    "page", ["README.md", "docs/getting-started.md", "docs/ci.md", "docs/commands.md",
             "docs/config.md", "docs/health.md", "docs/snapshots.md", "docs/daemon.md",
             "docs/library.md", "docs/render-proxies.md", "CHANGELOG.md"],
)  # fmt: skip
def test_relative_links_resolve(page: str) -> None:
    file = ROOT / page
    for target in LINK.findall(file.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        assert (file.parent / target).exists(), f"{page} links to {target}, which is missing"


@pytest.mark.parametrize(
    ("page", "links"),
    [
        ("README.md", ["docs/getting-started.md", "docs/reference/commands.md",
                       "docs/reference/config.md"]),
        ("docs/commands.md", ["reference/commands.md"]),
        ("docs/config.md", ["reference/config.md"]),
        ("docs/getting-started.md", ["reference/commands.md", "reference/config.md"]),
    ],
)  # fmt: skip
def test_the_generated_reference_is_linked(page: str, links: list[str]) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    for link in links:
        assert f"]({link}" in text, f"{page} does not link to {link}"


SECTION = "the-orchestrator-convention"


def test_the_orchestrator_convention_is_described_once_and_linked_wherever_it_is_named() -> None:
    from mcpctl.cli.common import MANIFEST_HELP

    config = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    assert config.count("\n## The orchestrator convention\n") == 1
    pages = [*PAGES, ROOT / "CHANGELOG.md"]
    for page in pages:
        if page.name == "commands.md" and page.parent.name == "reference":
            continue  # generated from the help, checked below
        text = page.read_text(encoding="utf-8")
        if page == ROOT / "docs" / "config.md":
            text = text.split("\n## The orchestrator convention\n")[0]
        named = re.search(r"annabelle|orchestrator's", text, re.IGNORECASE)
        if named:
            assert f"#{SECTION})" in text, f"{page.name} names the orchestrator without a link"
    assert "docs/config.md" in MANIFEST_HELP


def test_the_library_page_places_every_package_and_module() -> None:
    """docs/library.md's table of packages names each one, and its Layers section each layer
    of the contract in pyproject.toml."""
    import tomllib

    page = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    where = page.split("## Where things are")[1].split("\n## ")[0]
    package = ROOT / "mcpctl"
    for path in sorted(package.iterdir()):
        if (path / "__init__.py").exists():
            assert f"| `mcpctl/{path.name}/` |" in where, f"{path.name}/ is not in the table"
        elif path.suffix == ".py" and path.stem not in {"__init__", "__main__", "_version"}:
            assert f"{path.name}`" in where, f"{path.name} is not in the table"
    layers = page.split("\n## Layers\n")[1].split("\n## ")[0]
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    for layer in contract["layers"]:
        if ":" not in layer:  # the ground is one layer of many modules, named in the table
            for name in layer.split("|"):
                assert f"`{name.strip()}`" in layers, f"{name} is not in the Layers section"
