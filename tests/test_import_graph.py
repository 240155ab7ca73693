"""No import cycles: neither between modules of ``mcpctl`` nor between its packages.

The graph is built with :mod:`ast` from the source, never by importing it, so an import
that runs only in a rarely taken branch counts as much as one at the top of a file.

What counts as an import (an edge from the importing module):

* every ``import`` and ``from ... import`` statement, wherever it is: at module level,
  nested in a function or method (a lazy import is still a dependency), inside ``try``, and
  under ``if TYPE_CHECKING:`` too. A type-only import never runs, so it cannot fail at run
  time, but a module that names another's types depends on it as much as one that calls it:
  two modules that need each other to be read or type-checked are one knot, and
  ``TYPE_CHECKING`` must not hide one. Relative imports are resolved against the importing
  module's package;
* ``import pkg.mod`` and ``from pkg import mod`` where ``pkg.mod`` is a module: an edge to
  that module; ``from pkg import name`` where ``name`` is not: an edge to ``pkg`` (its
  ``__init__``) and, when ``pkg`` re-exports ``name`` (a lazy-export table or a plain ``from
  ... import name`` in its ``__init__``), to the module that defines it;
* lazy-export tables: a module-level ``_LAZY = {"Name": "mcpctl.x.y"}`` (what
  :func:`mcpctl._lazy.lazy_exports` loads on first use), and any other module-level table
  whose values are all names of mcpctl modules loaded by name (``render/targets.py``):
  an edge to each module named.

What does not:

* a package's ``__init__`` importing its own submodules (directly or through its lazy-export
  table): the ``__init__`` is the package's front door, and re-exporting what lives behind it
  is not a cycle with it. An ``__init__`` importing a module outside its package is an edge
  like any other;
* the ancestor ``__init__`` modules that Python runs before a submodule (``import
  mcpctl.config.model`` runs ``mcpctl/__init__.py``): they only re-export, as above. Taking
  a name from a package's ``__init__`` (``from mcpctl.probe import probe``) is an edge to it.

The layers (``[tool.importlinter]`` in pyproject.toml, docs/library.md#layers) are checked
twice: import-linter runs the contracts over the import statements, and
:func:`dynamic_edges` adds what it cannot see -- a module loaded by name
(``importlib.import_module("mcpctl.x")``, ``__import__``, an f-string starting
``"mcpctl.x."``, a table of module names) -- checked against the same contracts, read from
the same file.

Packages: each subpackage of ``mcpctl`` (``mcpctl.config``, ``mcpctl.probe``, ``mcpctl.auth``,
``mcpctl.render``, ``mcpctl.registry``, ``mcpctl.snapshot``, ``mcpctl.doctor``,
``mcpctl.cli``, ``mcpctl.completion``) is one node of the package graph, each top-level
module (``mcpctl.errors``, ``mcpctl.paths``, ...; ``mcpctl`` for ``mcpctl/__init__.py``)
its own node. A package-level cycle is a cycle in the module graph collapsed to these.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "mcpctl"


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``file:line``."""

    source: str
    target: str
    file: str
    line: int


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    out: dict[str, Path] = {}
    for file in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(file.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = file
    return out


def _package_of(module: str, modules: dict[str, Path]) -> str:
    """The package a relative import in ``module`` is relative to."""
    is_package = modules[module].name == "__init__.py"
    return module if is_package else module.rpartition(".")[0]


def _resolve_relative(module: str, node: ast.ImportFrom, modules: dict[str, Path]) -> str:
    if not node.level:
        return node.module or ""
    base = _package_of(module, modules).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _module_tables(
    tree: ast.Module, modules: dict[str, Path]
) -> dict[str, tuple[int, dict[str, str]]]:
    """Module-level ``NAME = {key: "mcpctl.module"}`` tables (lazy exports, dispatch tables),
    each with its line."""
    tables: dict[str, tuple[int, dict[str, str]]] = {}
    for stmt in tree.body:
        target: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
        elif isinstance(stmt, ast.AnnAssign):
            target = stmt.target
        value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
        if not isinstance(target, ast.Name) or not isinstance(value, ast.Dict) or not value.keys:
            continue
        table: dict[str, str] = {}
        for key, item in zip(value.keys, value.values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                break
            if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
                break
            table[key.value] = item.value
        if len(table) != len(value.keys):
            continue
        if target.id == "_LAZY" or all(
            v.startswith(PACKAGE + ".") and v in modules for v in table.values()
        ):
            tables[target.id] = (stmt.lineno, table)
    return tables


def _reexports(modules: dict[str, Path]) -> dict[str, dict[str, str]]:
    """For each package, the names its ``__init__`` re-exports and the module defining each."""
    out: dict[str, dict[str, str]] = {}
    for name, file in modules.items():
        if file.name != "__init__.py":
            continue
        tree = ast.parse(file.read_text(encoding="utf-8"))
        names = dict(_module_tables(tree, modules).get("_LAZY", (0, {}))[1])
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _resolve_relative(name, node, modules)
                for alias in node.names:
                    if source in modules:
                        names.setdefault(alias.asname or alias.name, source)
        out[name] = names
    return out


def import_edges(root: Path = ROOT) -> list[Edge]:
    """Every import between mcpctl modules (the module docstring says which count)."""
    modules = module_files(root)
    reexports = _reexports(modules)
    edges: list[Edge] = []
    for module, file in modules.items():
        text = file.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(file))
        where = str(file.relative_to(root))
        found: list[tuple[str, int]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [(alias.name, node.lineno) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve_relative(module, node, modules)
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in modules:
                        found.append((submodule, node.lineno))
                        continue
                    found.append((source, node.lineno))
                    if alias.name in reexports.get(source, {}):
                        found.append((reexports[source][alias.name], node.lineno))
        tables = _module_tables(tree, modules)
        if any(
            isinstance(n, ast.Call) and getattr(n.func, "id", "") == "lazy_exports"
            for n in ast.walk(tree)
        ):
            assert "_LAZY" in tables, f"{where}: lazy_exports without a _LAZY table of strings"
        for line, table in tables.values():
            found += [(target, line) for target in table.values() if target in modules]
        for target, line in found:
            if target not in modules or target == module:
                continue  # outside mcpctl, or itself
            if file.name == "__init__.py" and target.startswith(module + "."):
                continue  # a package's front door re-exporting its own submodules
            edges.append(Edge(module, target, where, line))
    return edges


def group_of(module: str, root: Path = ROOT) -> str:
    """The package-graph node of ``module``: its subpackage of mcpctl, or itself."""
    parts = module.split(".")
    if len(parts) >= 2 and (root / PACKAGE / parts[1] / "__init__.py").exists():
        return ".".join(parts[:2])
    return module


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of ``graph`` (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        work.append((node, iter(sorted(graph.get(node, ())))))

    for start in sorted(set(graph) | {t for ts in graph.values() for t in ts}):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = []
        visit(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    visit(child)
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


def _shortest_cycle(graph: dict[str, set[str]], start: str, within: set[str]) -> list[str]:
    """A shortest way from ``start`` back to it inside ``within`` (breadth first)."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier and start not in previous:
        following = []
        for node in frontier:
            for child in sorted(graph.get(node, ())):
                if child in within and child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    path = [start]
    node = previous[start]
    while node != start:
        path.append(node)
        node = previous[node]
    path.append(start)
    return path[::-1]


def find_cycles(graph: dict[str, set[str]]) -> list[tuple[list[str], set[str]]]:
    """For each group of nodes that import each other: one of its shortest cycles
    (``[a, b, ..., a]``), and the whole group."""
    cycles = []
    for component in strongly_connected(graph):
        if len(component) < 2:
            continue
        shortest = min(
            (_shortest_cycle(graph, node, component) for node in sorted(component)),
            key=len,
        )
        cycles.append((shortest, component))
    return sorted(cycles, key=lambda found: found[0])


def describe(
    found: tuple[list[str], set[str]], witnesses: dict[tuple[str, str], list[Edge]]
) -> str:
    """The cycle, where each of its imports is, and the rest of its group if any."""
    cycle, component = found
    lines = [" -> ".join(cycle)]
    for source, target in pairwise(cycle):
        edge = min(witnesses[source, target], key=lambda e: (e.file, e.line))
        more = len({(e.file, e.line) for e in witnesses[source, target]}) - 1
        also = f" (and {more} more)" if more else ""
        lines.append(
            f"    {source} -> {target}: {edge.file}:{edge.line} imports {edge.target}{also}"
        )
    rest = sorted(component - set(cycle))
    if rest:
        lines.append(f"    and in the same knot: {', '.join(rest)}")
    return "\n".join(lines)


def module_graph(
    edges: list[Edge],
) -> tuple[dict[str, set[str]], dict[tuple[str, str], list[Edge]]]:
    graph: dict[str, set[str]] = defaultdict(set)
    witnesses: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for edge in edges:
        graph[edge.source].add(edge.target)
        witnesses[edge.source, edge.target].append(edge)
    return graph, witnesses


def package_graph(
    edges: list[Edge], root: Path = ROOT
) -> tuple[dict[str, set[str]], dict[tuple[str, str], list[Edge]]]:
    graph: dict[str, set[str]] = defaultdict(set)
    witnesses: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for edge in edges:
        source, target = group_of(edge.source, root), group_of(edge.target, root)
        if source != target:
            graph[source].add(target)
            witnesses[source, target].append(edge)
    return graph, witnesses


def cycle_report(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """Readable descriptions of the module cycles and of the package cycles."""
    edges = import_edges(root)
    graph, witnesses = module_graph(edges)
    modules = [describe(c, witnesses) for c in find_cycles(graph)]
    graph, witnesses = package_graph(edges, root)
    packages = [describe(c, witnesses) for c in find_cycles(graph)]
    return modules, packages


def test_no_module_imports_another_that_imports_it_back() -> None:
    cycles, _ = cycle_report()
    assert not cycles, "import cycles between modules:\n" + "\n".join(cycles)


def test_no_package_depends_on_another_that_depends_on_it() -> None:
    _, cycles = cycle_report()
    assert not cycles, "import cycles between packages:\n" + "\n".join(cycles)


# The graph itself: each kind of import the docstring names is seen.

SOURCES = {
    "mcpctl/__init__.py": '_LAZY = {"Thing": "mcpctl.a.low"}\n',
    "mcpctl/errors.py": "",
    "mcpctl/a/__init__.py": (
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n    from mcpctl.a.low import Low\n"
        '_LAZY = {"Low": "mcpctl.a.low", "High": "mcpctl.a.high"}\n'
    ),
    "mcpctl/a/low.py": 'from ..errors import McpctlError\nMANAGED = {"by": "mcpctl"}\n',
    "mcpctl/a/high.py": "def f():\n    from mcpctl.b import mid\n",
    "mcpctl/a/typed.py": (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import mcpctl.b.only_typed\n"
    ),
    "mcpctl/b/__init__.py": "",
    "mcpctl/b/mid.py": "from mcpctl.a import Low\nfrom . import table\n",
    "mcpctl/b/table.py": 'TARGETS = {"x": "mcpctl.a.high"}\n',
    "mcpctl/b/only_typed.py": "",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name, text in SOURCES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_the_graph_sees_every_kind_of_import(tree: Path) -> None:
    pairs = {(e.source, e.target) for e in import_edges(tree)}
    assert pairs == {
        ("mcpctl.a.low", "mcpctl.errors"),  # relative
        ("mcpctl.a.high", "mcpctl.b.mid"),  # nested in a function; a submodule by name
        ("mcpctl.b.mid", "mcpctl.a"),
        ("mcpctl.b.mid", "mcpctl.a.low"),  # a lazily re-exported name: where it is defined
        ("mcpctl.b.mid", "mcpctl.b.table"),
        ("mcpctl.b.table", "mcpctl.a.high"),  # a table of modules loaded by name
        ("mcpctl.a.typed", "mcpctl.b.only_typed"),  # under TYPE_CHECKING
    }  # no __init__ importing its own submodules, no table of other strings


def test_a_cycle_is_reported_with_where_each_import_is(tree: Path) -> None:
    modules, packages = cycle_report(tree)
    assert len(modules) == 1
    assert modules[0].splitlines()[0] == (
        "mcpctl.a.high -> mcpctl.b.mid -> mcpctl.b.table -> mcpctl.a.high"
    )
    assert "mcpctl/a/high.py:2 imports mcpctl.b.mid" in modules[0]
    assert packages and packages[0].splitlines()[0] == "mcpctl.a -> mcpctl.b -> mcpctl.a"
    (tree / "mcpctl/b/table.py").write_text("")
    modules, packages = cycle_report(tree)  # b.mid still imports a.low
    assert modules == [] and [p.splitlines()[0] for p in packages] == [
        "mcpctl.a -> mcpctl.b -> mcpctl.a"
    ]
    (tree / "mcpctl/b/mid.py").write_text("")
    assert cycle_report(tree) == ([], [])


# The layers: import-linter's contracts, and the imports by name it does not see.


def test_the_layer_contracts_are_kept() -> None:
    """import-linter over the import statements (pyproject.toml says which contracts)."""
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300
    )
    assert r.returncode == 0, f"a contract is broken:\n{r.stdout}\n{r.stderr}"


def _named_module(node: ast.expr) -> str | None:
    """The mcpctl module a literal names: ``"mcpctl.x.y"``, or the package an f-string's
    fixed start names (``f"mcpctl.cli.{name}"``: ``mcpctl.cli``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        name = node.value
    elif (
        isinstance(node, ast.JoinedStr)
        and node.values
        and isinstance(node.values[0], ast.Constant)
        and isinstance(node.values[0].value, str)
    ):
        name = node.values[0].value.rpartition(".")[0]
    else:
        return None
    return name if name == PACKAGE or name.startswith(PACKAGE + ".") else None


def dynamic_edges(root: Path = ROOT) -> list[Edge]:
    """Every mcpctl module loaded by name: ``import_module``/``__import__`` of a literal (or an
    f-string's fixed start), and the module-level tables of module names
    (:func:`_module_tables`: lazy exports, ``render/targets.py``)."""
    modules = module_files(root)
    edges: list[Edge] = []
    for module, file in modules.items():
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        where = str(file.relative_to(root))
        found: list[tuple[str, int]] = []
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if called in {"import_module", "__import__"}:
                target = _named_module(node.args[0])
                if target is not None:
                    found.append((target, node.lineno))
        for line, table in _module_tables(tree, modules).values():
            found += [(t, line) for t in table.values() if _named_module(ast.Constant(t))]
        edges += [Edge(module, target, where, line) for target, line in found if target != module]
    return edges


def _contracts(pyproject: Path = ROOT / "pyproject.toml") -> list[dict[str, object]]:
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    contracts: list[dict[str, object]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def _names(contract: dict[str, object], key: str) -> list[str]:
    value = contract.get(key, [])
    assert isinstance(value, list), (contract["name"], key)
    return [str(v) for v in value]


def _within(module: str, names: list[str]) -> str | None:
    """The one of ``names`` that is ``module`` or contains it."""
    return next((n for n in names if module == n or module.startswith(n + ".")), None)


def contract_violations(edges: list[Edge], contracts: list[dict[str, object]]) -> list[str]:
    """The edges that break a ``layers``, ``forbidden`` or ``independence`` contract, each
    with the contract's name and where the import is. (Direct imports only: the chains through
    other modules are import-linter's.)"""
    broken: list[str] = []
    for contract in contracts:
        kind, name = contract["type"], contract["name"]
        for edge in edges:
            why = None
            if kind == "layers":
                why = _layer_break(edge, contract)
            elif kind == "forbidden":
                if _within(edge.source, _names(contract, "source_modules")) and _within(
                    edge.target, _names(contract, "forbidden_modules")
                ):
                    why = "forbidden"
            elif kind == "independence":
                a = _within(edge.source, _names(contract, "modules"))
                b = _within(edge.target, _names(contract, "modules"))
                if a and b and a != b:
                    why = "independent"
            if why:
                broken.append(
                    f"{name} ({why}): {edge.file}:{edge.line} loads {edge.target} by name"
                )
    return broken


def _layer_break(edge: Edge, contract: dict[str, object]) -> str | None:
    """Why ``edge`` goes against the layers of ``contract`` (``None``: it does not)."""
    for container in _names(contract, "containers") or [""]:
        prefix = f"{container}." if container else ""
        levels: list[tuple[list[str], bool]] = []
        for layer in _names(contract, "layers"):
            independent = ":" not in layer
            parts = layer.replace("|", ":").split(":")
            levels.append(([prefix + p.strip().strip("()") for p in parts], independent))

        def level_of(module: str, levels: list[tuple[list[str], bool]] = levels) -> tuple[int, str]:
            for index, (names, _) in enumerate(levels):
                found = _within(module, names)
                if found:
                    return index, found
            return -1, ""

        (src, src_name), (dst, dst_name) = level_of(edge.source), level_of(edge.target)
        if src < 0 or dst < 0:
            continue
        if dst < src:
            return f"{src_name} is below {dst_name}"
        if dst == src and src_name != dst_name and levels[src][1]:
            return f"{src_name} and {dst_name} are independent"
    return None


def test_modules_loaded_by_name_keep_the_layers_too() -> None:
    edges = dynamic_edges()
    assert any(e.source == "mcpctl.cli.app" for e in edges)  # f"mcpctl.cli.{module}" is seen
    broken = contract_violations(edges, _contracts())
    assert not broken, "modules loaded by name against the contracts:\n" + "\n".join(broken)


PLANTED = {
    "mcpctl/__init__.py": "",
    "mcpctl/config/__init__.py": '_LAZY = {"App": "mcpctl.cli.app"}\n',
    "mcpctl/config/up.py": (
        "import importlib\n"
        "def f():\n"
        '    importlib.import_module("mcpctl.render.clients")\n'
        '    __import__("mcpctl.errors")\n'
    ),
    "mcpctl/registry/__init__.py": "",
    "mcpctl/registry/calls.py": (
        "from importlib import import_module\n"
        "def f(n):\n"
        '    return import_module(f"mcpctl.probe.{n}"), import_module(n), import_module("json")\n'
    ),
    "mcpctl/doctor/__init__.py": "",
    "mcpctl/doctor/x.py": 'TABLE = {"a": "mcpctl.completion"}\nimport importlib\nimportlib.import_module("mcpctl.completion.engine")\n',
    "mcpctl/completion/__init__.py": "",
}


def test_each_kind_of_load_by_name_is_checked_against_the_contracts(tmp_path: Path) -> None:
    for name, text in PLANTED.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    edges = dynamic_edges(tmp_path)
    assert {(e.source, e.target) for e in edges} == {
        ("mcpctl.config", "mcpctl.cli.app"),  # a lazy-export table
        ("mcpctl.config.up", "mcpctl.render.clients"),  # importlib.import_module
        ("mcpctl.config.up", "mcpctl.errors"),  # __import__
        ("mcpctl.registry.calls", "mcpctl.probe"),  # an f-string's fixed start
        ("mcpctl.doctor.x", "mcpctl.completion.engine"),  # at module level
        ("mcpctl.doctor.x", "mcpctl.completion"),  # a table of module names
    }  # neither a variable nor a module outside mcpctl
    broken = contract_violations(edges, _contracts())
    assert len(broken) == 5, broken
    text = "\n".join(broken)
    assert "mcpctl/config/__init__.py:1 loads mcpctl.cli.app" in text
    assert "mcpctl.config is below mcpctl.render" in text
    assert "mcpctl.doctor and mcpctl.completion are independent" in text
    assert (
        "the registry reads registries and caches, it never talks to a server (forbidden)" in text
    )
    assert "mcpctl.errors" not in text  # the ground is below everything
