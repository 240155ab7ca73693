"""Mutation testing of the modules where a bug costs a user most, each against its area's tests.

    .venv/bin/pip install -e '.[test,mutation]'
    .venv/bin/python tools/mutate.py                      # every module below
    .venv/bin/python tools/mutate.py redaction diff       # some (by name or path)
    .venv/bin/python tools/mutate.py --list

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
Exit status: 0 when every module reached ``--goal``, 1 otherwise, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
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

#: Copied into each scratch repository (the rest of the tree is not needed by the tests).
COPIED = ("mcpctl", "tests", "docs", "examples", "completions", "pyproject.toml", "README.md",
          "CHANGELOG.md")  # fmt: skip
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
    pyproject = where / "pyproject.toml"
    pyproject.write_text(narrowed_pyproject(pyproject.read_text("utf-8"), target), "utf-8")
    cache = ROOT / ".cache"  # the published servers some tests start
    if cache.exists():
        (where / ".cache").symlink_to(cache.resolve())
    return where


def mutmut(where: Path, *args: str, log: Path | None = None) -> str:
    """Run ``mutmut ARGS`` in ``where``; its output (also appended to ``log``)."""
    env = {k: v for k, v in os.environ.items() if k != "MUTANT_UNDER_TEST"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "mutmut", *args],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    output = done.stdout + done.stderr
    if log is not None:
        with log.open("a", encoding="utf-8") as f:
            f.write(f"$ mutmut {' '.join(args)}  (exit {done.returncode})\n{output}\n")
    if done.returncode != 0:
        raise RuntimeError(f"mutmut {' '.join(args)} failed (exit {done.returncode}): see {log}")
    return output


@dataclass
class Score:
    """What became of one module's mutants."""

    target: Target
    statuses: dict[str, str]
    seconds: float

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
                      "caught by type check", "skipped"))  # fmt: skip


def run(target: Target, max_children: int) -> Score:
    """Mutate ``target`` in its scratch repository; the outcome of each mutant."""
    where = prepare(target)
    log = where / "mutmut.log"
    started = time.monotonic()
    mutmut(where, "run", "--max-children", str(max_children), log=log)
    statuses = {}
    for line in mutmut(where, "results", "--all", "true").splitlines():
        found = RESULT_RE.match(line)
        if found:
            statuses[found["name"]] = found["status"]
    score = Score(target, statuses, time.monotonic() - started)
    with (where / "survivors.txt").open("w", encoding="utf-8") as f:
        for name in score.survivors:
            f.write(mutmut(where, "show", name) + "\n")
    return score


def choose(names: list[str]) -> list[Target]:
    """The targets named (by name or module path); all of them for none."""
    if not names:
        return list(TARGETS)
    chosen = []
    for name in names:
        found = [t for t in TARGETS if name in (t.name, t.module) or t.module.endswith(name)]
        if not found:
            known = ", ".join(t.name for t in TARGETS)
            raise SystemExit(f"mutate.py: no module {name!r} (one of: {known})")
        chosen += [t for t in found if t not in chosen]
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="names or paths (default: all)")
    parser.add_argument("--max-children", type=int, default=1, help="parallel workers")
    parser.add_argument("--goal", type=float, default=90.0, help="the score to reach, in %%")
    parser.add_argument("--list", action="store_true", help="list the modules and tests")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the scores here")
    opts = parser.parse_args(argv)
    targets = choose(opts.modules)
    if opts.list:
        for t in targets:
            print(f"{t.name:<14} {t.module:<34} {' '.join(t.tests)}")
        return 0
    scores = []
    for target in targets:
        print(f"{target.name}: mutating {target.module} against {' '.join(target.tests)}...")
        score = run(target, opts.max_children)
        scores.append(score)
        print(
            f"{target.name}: {score.killed}/{score.tested} killed ({score.percent:.1f} %), "
            f"{len(score.survivors)} surviving, {score.seconds / 60:.0f} min; "
            f"see {SCRATCH.name}/{target.name}/survivors.txt",
            flush=True,
        )
    if opts.json is not None:
        opts.json.write_text(json.dumps([{
            "module": s.target.module, "tests": list(s.target.tests), "killed": s.killed,
            "tested": s.tested, "percent": round(s.percent, 1), "survivors": s.survivors,
        } for s in scores], indent=2) + "\n", "utf-8")  # fmt: skip
    return 0 if all(s.percent >= opts.goal for s in scores) else 1


if __name__ == "__main__":
    sys.exit(main())
