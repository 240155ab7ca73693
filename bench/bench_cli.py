"""Start-up benchmark of the everyday commands, as ratios to ``python -c pass``.

Builds a 50-entry and a 1,000-entry config in a temporary MCPCTL_HOME, then times,
interleaved and in one run: ``python -c pass`` (same interpreter), ``mcpctl list --json``
(50 entries), ``mcpctl get NAME`` (50), ``mcpctl add`` / ``mcpctl remove`` on the
1,000-entry file, ``mcpctl run NAME`` (50 entries) up to its server's exec (the server is
``true``, which exits at once) from a project's file the user approved (``mcpctl trust``), from
the user's own file (in mcpctl's config dir, which needs no approval) and without ``--config``
(the approved file found by walking up from the working directory, as a client that starts
``mcpctl run NAME`` in a project does), and ``mcpctl tools --cached --budget N`` over 50 entries
whose 5 stateless-era servers' listings are cached and fresh (no server started: the token
counting is what it adds to ``list``, taken the full CLI's way with ``-v``; ``list --json``
alone is answered before the CLI framework loads). Reports medians and ratios; ``--check``
exits 1 when a budget is blown.

    python bench/bench_cli.py [--runs 25] [--json] [--check]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The project's start-up budgets, as ratios to `python -c pass`.
BUDGETS = {
    "list --json (50)": 6.0,
    "add (1000)": 10.0,
    "remove (1000)": 10.0,
    "run NAME (to the server's exec)": 3.0,
    "run NAME, no --config (found upwards)": 3.0,
    "run NAME (own file)": 3.0,
}
# The cases run in a project folder below the one holding the launched config.
IN_PROJECT = ("run NAME, no --config (found upwards)",)
# tools --budget on cached listings: at most this many `python -c pass` above `list --json`.
# `list --json` is answered before the CLI framework loads; `-v` takes it the full way, the
# way `tools` goes: the base that leaves the token counting.
TOOLS_ABOVE_LIST = ("tools --cached --budget (5 cached)", "list --json -v (50, full CLI)", 3.0)
MODERN_SERVER = ROOT / "tests" / "servers" / "modern.py"


def mcpctl_argv() -> list[str]:
    script = Path(sys.executable).parent / "mcpctl"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcpctl"]


def make_config(path: Path, n: int, **extra: dict[str, object]) -> None:
    data: dict[str, dict[str, object]] = {
        f"server-{i:04d}": {
            "command": "npx",
            "args": ["-y", f"@example/mcp-server-{i}", "--port", str(3000 + i)],
            "env": {"API_TOKEN": f"${{API_TOKEN_{i}}}", "REGION": "eu-west-1"},
            "timeout": 15000,
            "description": f"Example server number {i}",
        }
        for i in range(n)
    }
    data.update(extra)
    path.write_text(json.dumps(data, indent=2) + "\n")


def timed(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        argv,
        check=False,
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=60,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if over budget")
    opts = parser.parse_args()

    # Users get bytecode from pip install; an editable checkout may not have it yet.
    compileall.compile_dir(str(ROOT / "mcpctl"), quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="mcpctl-bench-"))
    try:
        small, big, launch = tmp / "small.json", tmp / "big.json", tmp / "launch.json"
        make_config(small, 50)
        make_config(big, 1000)
        # The launched server: `true` exits at once, so the time is mcpctl's up to the exec.
        make_config(launch, 50, launched={"command": "true", "env": {"T": "${BENCH_T}"}})
        project = tmp / "project"
        (project / "src" / "deep").mkdir(parents=True)
        shutil.copy(launch, project / "external-mcps.json")
        cached = tmp / "cached.json"
        server = {"command": sys.executable, "args": [str(MODERN_SERVER)],
                  "env": {"MODERN_SERVER_TTL_MS": "86400000"}}  # fmt: skip
        make_config(cached, 45, **{f"modern-{i}": dict(server) for i in range(5)})
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCPCTL_")}
        env.pop("CI", None)  # the project files are approved, as a user does
        env["MCPCTL_HOME"] = str(tmp / "home")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["BENCH_T"] = "a-value-from-the-environment"  # no keyring look-up
        own = tmp / "home" / "config" / "external-mcps.json"
        own.parent.mkdir(parents=True)
        make_config(own, 50, launched={"command": "true", "env": {"T": "${BENCH_T}"}})
        cli = mcpctl_argv()
        for approved in (launch, cached, project / "external-mcps.json"):
            timed([*cli, "trust", "--yes", str(approved)], env)
        modern = [f"modern-{i}" for i in range(5)]
        tools_args = [*modern, "--cached", "--prefix", "underscore", "--budget", "100000"]
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "list --json (50)": [*cli, "--config", str(small), "list", "--json"],
            TOOLS_ABOVE_LIST[1]: [*cli, "--config", str(small), "list", "--json", "-v"],
            "get NAME (50)": [*cli, "--config", str(small), "get", "server-0025"],
            "add (1000)": [*cli, "--config", str(big), "add", "bench-new", "--", "echo", "hi"],
            "remove (1000)": [*cli, "--config", str(big), "remove", "bench-new"],
            "run NAME (to the server's exec)": [*cli, "run", "launched", "--config", str(launch)],
            IN_PROJECT[0]: [*cli, "run", "launched"],
            "run NAME (own file)": [*cli, "run", "launched", "--config", str(own)],
            TOOLS_ABOVE_LIST[0]: [*cli, "--config", str(cached), "tools", *tools_args],
        }
        # The listings are cached once, by a real probe of each server.
        timed(cases[TOOLS_ABOVE_LIST[0]], env)
        samples: dict[str, list[float]] = {name: [] for name in cases}
        where = {name: project / "src" / "deep" if name in IN_PROJECT else None for name in cases}
        for name, argv in cases.items():  # warm-up: page cache, bytecode
            timed(argv, env, where[name])
        for _ in range(opts.runs):
            for name, argv in cases.items():  # interleaved, so drift hits all alike
                samples[name].append(timed(argv, env, where[name]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    floor = statistics.median(samples["python -c pass"])
    rows = []
    over = False
    for name, values in samples.items():
        med = statistics.median(values)
        ratio = med / floor
        budget = BUDGETS.get(name)
        ok = budget is None or ratio <= budget
        over |= not ok
        rows.append({"case": name, "median_ms": round(med * 1000, 1), "ratio": round(ratio, 2),
                     "budget": budget, "ok": ok})  # fmt: skip
    name, base, limit = TOOLS_ABOVE_LIST
    above = (statistics.median(samples[name]) - statistics.median(samples[base])) / floor
    over |= above > limit
    rows.append({"case": f"{name.split(' (')[0]} above list", "median_ms": None,
                 "ratio": round(above, 2), "budget": limit, "ok": above <= limit})  # fmt: skip
    if opts.json:
        print(
            json.dumps(
                {"runs": opts.runs, "python": sys.version.split()[0], "results": rows}, indent=2
            )
        )
    else:
        print(f"{'case':<32} {'median':>9} {'ratio':>7} {'budget':>7}")
        for r in rows:
            budget = f"{r['budget']:g}x" if r["budget"] else "-"
            flag = "" if r["ok"] else "  OVER"
            ms = f"{r['median_ms']:>7.1f}ms" if r["median_ms"] is not None else " " * 9
            print(f"{r['case']:<32} {ms} {r['ratio']:>6.2f}x {budget:>7}{flag}")
    return 1 if (opts.check and over) else 0


if __name__ == "__main__":
    raise SystemExit(main())
