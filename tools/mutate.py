"""Mutation testing of mcpctl's modules, each against its area's tests.

    .venv/bin/pip install -e '.[test,mutation]'
    .venv/bin/python tools/mutate.py                      # the modules of TARGETS below
    .venv/bin/python tools/mutate.py redaction diff       # some (by name or path)
    .venv/bin/python tools/mutate.py config/trust.py mcpctl.probe.pages launch
    .venv/bin/python tools/mutate.py --list               # TARGETS and their tests
    .venv/bin/python tools/mutate.py --list --all         # every module that can be named
    .venv/bin/python tools/mutate.py --deadline 20 config.trust   # stop after 20 min: partial

Any module of the packages in PACKAGES (and the top-level modules in TOP) can be named, as a
path (``mcpctl/config/trust.py``, ``config/trust.py``) or dotted (``mcpctl.config.trust``,
``config.trust``). Its tests are those of TARGETS when it is there (the modules where a bug
costs a user most, with hand-picked in-process tests); otherwise the mirror file
``tests/PKG/test_MODULE.py`` when it exists plus the package's test folder ``tests/PKG/``
(for a top-level module, ``tests/test_MODULE.py`` alone). ``--tests`` replaces them.

mutmut changes the module one small way at a time (a ``<`` for a ``<=``, a string emptied,
a call dropped) and runs the tests that cover the changed function; a change no test notices
is a *surviving* mutant: a bug those tests would let through. Each module runs in a scratch
copy of the repository (``.mutation/NAME/``, ignored by git) whose ``[tool.mutmut]`` section
is the project's own (pyproject.toml) narrowed to that module and its tests, so runs never
touch the work tree and their results stay for ``cd .mutation/NAME && mutmut show MUTANT``.

For each module it prints the score (killed / tested) and writes the surviving mutants with
their diffs to ``.mutation/NAME/survivors.txt``. Goal: 90 % killed; what survives is either
equivalent (no behaviour changes: say why in docs/testing.md) or wants a test.

The machine is shared: ``--max-children`` (default 1) bounds mutmut's parallel workers.
``--deadline MINUTES`` stops a module's run after that long and scores the mutants tested so
far, marked partial (the others count as not checked).
Exit status: 0 when every module reached ``--goal`` (whole runs), 1 otherwise (or when a module
was not measured: its tests failed without a mutant), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = ROOT / ".mutation"


@dataclass(frozen=True)
class Target:
    """A module to mutate and the tests of its area (pytest arguments)."""

    name: str
    module: str
    tests: tuple[str, ...]
    #: Modules split off ``module`` that are mutated with it.
    also: tuple[str, ...] = ()


# In-process tests only: a test that runs mcpctl as a subprocess does not see the mutants
# (and slows every run), so those files are left out of each area.
SNAPSHOT = ("tests/snapshot/test_diff.py", "tests/snapshot/test_fingerprints.py",
            "tests/snapshot/test_model.py", "tests/snapshot/test_startupreport.py",
            "tests/snapshot/test_sarif.py")  # fmt: skip
TARGETS = [
    Target(
        "redaction",
        "mcpctl/config/redaction.py",
        ("tests/config",),
        ("mcpctl/config/secretdetect.py",),
    ),
    Target("placeholders", "mcpctl/config/placeholders.py", ("tests/config",)),
    Target(
        "store",
        "mcpctl/config/store.py",
        (
            "tests/config",
            "tests/cli/test_servers.py",
            "tests/cli/test_app.py",
            "tests/adversarial/test_store_crashes.py",
        ),
        ("mcpctl/config/filestore.py", "mcpctl/config/locking.py", "mcpctl/config/atomicwrite.py"),
    ),
    Target(
        "tokens",
        "mcpctl/auth/oauthtokens.py",
        (
            "tests/auth/test_oauthtokens.py",
            "tests/auth/test_connecting.py",
            "tests/auth/test_secret_store.py",
        ),
    ),
    Target("diff", "mcpctl/snapshot/diff.py", SNAPSHOT),
    Target("fingerprints", "mcpctl/snapshot/fingerprints.py", SNAPSHOT),
    Target(
        "clients",
        "mcpctl/render/clients.py",
        (
            "tests/render/test_clients.py",
            "tests/render/test_roundtrip.py",
            "tests/render/test_install.py",
            "tests/render/test_importing.py",
        ),
    ),
    Target("search", "mcpctl/registry/search.py", ("tests/registry", "-m", "not slow")),
]

#: The packages (under mcpctl/) and top-level modules whose every module can be named.
PACKAGES = ("config", "probe", "auth", "registry", "snapshot", "render", "doctor")
TOP = ("launch.py",)
#: A module without a function has nothing mutmut mutates (a package's re-exports).
FUNCTION_RE = re.compile(r"^\s*(async\s+)?def ", re.MULTILINE)

#: Tests that cannot pass under mutmut: one checks that the installed ``mcpctl`` program runs
#: the package it imports (there, the copy); one that the launcher's fast path imports
#: nothing heavy (mutmut's hooks in the copy import typing); and the SDK's stdio client hands
#: the server ``sys.stderr``, which mutmut's runner has closed.
SCRATCH_FAILS = (
    "tests/render/test_launchers.py::test_launchers_are_this_program_only",
    "tests/test_launch.py::test_the_fast_path_imports_nothing_heavy",
    "tests/probe/test_era_servers.py",
)

#: Copied into each scratch repository (the rest of the tree is not needed by the tests).
COPIED = ("mcpctl", "tests", "docs", "examples", "completions", "pyproject.toml", "README.md",
          "CHANGELOG.md")  # fmt: skip
#: A test that starts Python with the mutated tree on PYTHONPATH (the launcher, concurrent
#: writers) inherits MUTANT_UNDER_TEST. In mutmut's "stats" pass the trampolines there would
#: need mutmut's configuration, which they look for in the working directory, and fail the
#: test: this file, copied to mutants/, runs the original code there instead. In a mutant's
#: run the child runs the mutant, as the test's own process does.
SITECUSTOMIZE = "sitecustomize.py"
SITECUSTOMIZE_TEXT = """import os

if os.environ.get("MUTANT_UNDER_TEST") == "stats":
    os.environ["MUTANT_UNDER_TEST"] = ""
"""
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", ".pytest_cache")
RESULT_RE = re.compile(r"^\s+(?P<name>\S+): (?P<status>.+)$")


def toml_value(value: object) -> str:
    """``value`` (a string, number, bool or list of them) as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")


def narrowed_pyproject(text: str, target: Target) -> str:
    """The project's pyproject.toml with ``[tool.mutmut]`` narrowed to ``target``."""
    settings = dict(tomllib.loads(text).get("tool", {}).get("mutmut", {}))
    settings["only_mutate"] = [target.module, *target.also]
    settings["pytest_add_cli_args_test_selection"] = list(target.tests)
    settings["also_copy"] = [*settings.get("also_copy", []), SITECUSTOMIZE]
    deselected = [arg for test in SCRATCH_FAILS for arg in ("--deselect", test)]
    settings["pytest_add_cli_args"] = [*settings.get("pytest_add_cli_args", []), *deselected]
    section = "[tool.mutmut]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in settings.items())
    # Drop the project's own section (up to the next table), then add the narrowed one.
    text = re.sub(r"(?ms)^\[tool\.mutmut\]\n.*?(?=^\[|\Z)", "", text)
    return text.rstrip("\n") + "\n\n" + section


def prepare(target: Target) -> Path:
    """A fresh scratch repository for ``target``."""
    where = SCRATCH / target.name
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, where / name, ignore=IGNORED, symlinks=True)
        elif source.exists():
            shutil.copy2(source, where / name)
    (where / SITECUSTOMIZE).write_text(SITECUSTOMIZE_TEXT, "utf-8")
    pyproject = where / "pyproject.toml"
    pyproject.write_text(narrowed_pyproject(pyproject.read_text("utf-8"), target), "utf-8")
    cache = ROOT / ".cache"  # the published servers some tests start
    if cache.exists():
        (where / ".cache").symlink_to(cache.resolve())
    return where


def mutmut(where: Path, *args: str, log: Path | None = None, deadline: float | None = None) -> str:
    """Run ``mutmut ARGS`` in ``where``; its output (also appended to ``log``).

    Past ``deadline`` (seconds) mutmut and its workers are stopped and :class:`Stopped` raised.
    """
    env = {k: v for k, v in os.environ.items() if k != "MUTANT_UNDER_TEST"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # Its own session, so that stopping it reaches the workers it forked (by process group).
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutmut", *args],
        cwd=where,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    stopped = False
    try:
        output, _ = proc.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        stopped = True
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            output, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
    if log is not None:
        with log.open("a", encoding="utf-8") as f:
            note = "stopped at the deadline" if stopped else f"exit {proc.returncode}"
            f.write(f"$ mutmut {' '.join(args)}  ({note})\n{output}\n")
    if stopped:
        raise Stopped(f"mutmut {' '.join(args)} stopped after {deadline:.0f} s")
    if proc.returncode != 0:
        raise RuntimeError(f"mutmut {' '.join(args)} failed (exit {proc.returncode}): see {log}")
    return output


class Stopped(Exception):
    """A run reached its deadline."""


@dataclass
class Score:
    """What became of one module's mutants."""

    target: Target
    statuses: dict[str, str]
    seconds: float
    partial: bool = False

    def count(self, *statuses: str) -> int:
        return sum(1 for s in self.statuses.values() if s in statuses)

    @property
    def killed(self) -> int:
        return self.count("killed", "timeout", "caught by type check")

    @property
    def tested(self) -> int:
        return len(self.statuses) - self.count("skipped", "not checked")

    @property
    def percent(self) -> float:
        return 100.0 * self.killed / self.tested if self.tested else 0.0

    @property
    def survivors(self) -> list[str]:
        return sorted(n for n, s in self.statuses.items() if s not in ("killed", "timeout",
                      "caught by type check", "skipped", "not checked"))  # fmt: skip


def run(target: Target, max_children: int, deadline: float | None = None) -> Score:
    """Mutate ``target`` in its scratch repository; the outcome of each mutant.

    Past ``deadline`` (seconds) the run stops and the score covers the mutants tested so far.
    """
    where = prepare(target)
    log = where / "mutmut.log"
    started = time.monotonic()
    partial = False
    try:
        mutmut(where, "run", "--max-children", str(max_children), log=log, deadline=deadline)
    except Stopped:
        partial = True
    statuses = {}
    for line in mutmut(where, "results", "--all", "true").splitlines():
        found = RESULT_RE.match(line)
        if found:
            statuses[found["name"]] = found["status"]
    score = Score(target, statuses, time.monotonic() - started, partial)
    with (where / "survivors.txt").open("w", encoding="utf-8") as f:
        for name in score.survivors:
            f.write(mutmut(where, "show", name) + "\n")
    return score


def every_module() -> list[str]:
    """The paths of every module of PACKAGES and TOP that has a function to mutate."""
    paths = [p for pkg in PACKAGES for p in sorted((ROOT / "mcpctl" / pkg).glob("*.py"))]
    paths += [ROOT / "mcpctl" / name for name in TOP]
    found = []
    for path in paths:
        if path.is_file() and FUNCTION_RE.search(path.read_text("utf-8")):
            found.append(path.relative_to(ROOT).as_posix())
    return found


def target_for(module: str) -> Target:
    """``module`` (a path under mcpctl/) with its tests: from TARGETS, or by the mirror rule."""
    for t in TARGETS:
        if t.module == module:
            return t
    parts = Path(module).with_suffix("").parts[1:]  # ("config", "trust") or ("launch",)
    name = ".".join(parts)
    if len(parts) == 1:
        return Target(name, module, (f"tests/test_{parts[0]}.py",))
    folder = "tests/" + "/".join(parts[:-1])
    mirror = f"{folder}/test_{parts[-1]}.py"
    tests = (mirror, folder) if (ROOT / mirror).is_file() else (folder,)
    return Target(name, module, tests)


def spellings(module: str) -> set[str]:
    """The ways ``module`` (``mcpctl/config/trust.py``) can be named."""
    dotted = module.removesuffix(".py").replace("/", ".")  # mcpctl.config.trust
    short = module.removeprefix("mcpctl/")
    return {module, short, short.removesuffix(".py"), dotted, dotted.removeprefix("mcpctl.")}


def choose(names: list[str], everything: bool = False) -> list[Target]:
    """The targets named (by name, module path or dotted name); TARGETS for none.

    ``everything`` gives every module of PACKAGES and TOP when no name is given.
    """
    modules = every_module()
    if not names:
        return [target_for(m) for m in modules] if everything else list(TARGETS)
    chosen: list[Target] = []
    for name in names:
        found = [t for t in TARGETS if name in (t.name, t.module) or t.module.endswith(name)]
        if not found:
            wanted = name.rstrip("/")
            exact = [m for m in modules if wanted in spellings(m)]
            ending = [m for m in modules if m.endswith(("/" + wanted, "/" + wanted + ".py"))]
            picked = exact or ending
            if len(picked) > 1:
                raise SystemExit(f"mutate.py: {name!r} is ambiguous: {', '.join(picked)}")
            found = [target_for(m) for m in picked]
        if not found:
            raise SystemExit(f"mutate.py: no module {name!r} (see --list --all)")
        chosen += [t for t in found if t not in chosen]
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="names, paths, dotted names")
    parser.add_argument("--all", action="store_true", help="every module of PACKAGES and TOP")
    parser.add_argument("--max-children", type=int, default=1, help="parallel workers")
    parser.add_argument("--goal", type=float, default=90.0, help="the score to reach, in %%")
    parser.add_argument("--list", action="store_true", help="list the modules and tests")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the scores here")
    parser.add_argument("--tests", nargs="+", metavar="ARG", help="pytest arguments instead")
    parser.add_argument("--deadline", type=float, metavar="MINUTES", help="stop each run then")
    opts = parser.parse_args(argv)
    if opts.all and opts.modules:
        parser.error("--all takes no module names")
    targets = choose(opts.modules, everything=opts.all)
    if opts.tests:
        targets = [Target(t.name, t.module, tuple(opts.tests)) for t in targets]
    if opts.list:
        for t in targets:
            print(f"{t.name:<22} {t.module:<38} {' '.join(t.tests)}")
        return 0
    deadline = None if opts.deadline is None else opts.deadline * 60
    scores = []
    failed = False
    for target in targets:
        print(f"{target.name}: mutating {target.module} against {' '.join(target.tests)}...")
        try:
            score = run(target, opts.max_children, deadline)
        except RuntimeError as exc:  # its tests fail without a mutant: say so, go on
            print(f"{target.name}: not measured: {exc}", flush=True)
            failed = True
            continue
        scores.append(score)
        print(
            f"{target.name}: {score.killed}/{score.tested} killed ({score.percent:.1f} %"
            f"{', partial: stopped at the deadline' if score.partial else ''}), "
            f"{len(score.survivors)} surviving, {score.seconds / 60:.0f} min; "
            f"see {SCRATCH.name}/{target.name}/survivors.txt",
            flush=True,
        )
    if opts.json is not None:
        opts.json.write_text(json.dumps([{
            "module": s.target.module, "tests": list(s.target.tests), "killed": s.killed,
            "tested": s.tested, "percent": round(s.percent, 1), "survivors": s.survivors,
            "partial": s.partial,
        } for s in scores], indent=2) + "\n", "utf-8")  # fmt: skip
    reached = all(s.percent >= opts.goal and not s.partial for s in scores)
    return 0 if reached and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
