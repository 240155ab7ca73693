"""What ``mcpctl doctor NAME`` adds to the probe it runs: ``health NAME`` and ``doctor NAME``
on the same stdio test server (tests/servers/basic.py), as a user runs them.

    python bench/bench_doctor_name.py [--runs 7] [--json] [--check]

Each round runs ``python -c pass``, ``mcpctl health NAME --json`` and ``mcpctl doctor NAME
--json`` in rotating order; medians are reported with their ratio to ``python -c pass``
measured in the same run. The budget: doctor NAME takes at most 0.5 s more than health NAME
(the config, placeholder, command and package checks, and the step-by-step bookkeeping).
"""

from __future__ import annotations

import argparse
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
SERVER = ROOT / "tests" / "servers" / "basic.py"
#: Seconds doctor NAME may add to health NAME.
BUDGET_ADDED_S = 0.5


def mcpctl_argv() -> list[str]:
    script = Path(sys.executable).parent / "mcpctl"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcpctl"]


def timed(argv: list[str], env: dict[str, str], expect: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, timeout=300, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in expect:
        raise SystemExit(f"{argv} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def measure(runs: int, tmp: Path) -> dict[str, object]:
    cfg = tmp / "external-mcps.json"
    cfg.write_text(json.dumps({"basic": {"command": sys.executable, "args": [str(SERVER)]}}))
    env = {
        **os.environ,
        "MCPCTL_HOME": str(tmp / "home"),
        "MCPCTL_CONFIG": str(cfg),
        "MCPCTL_TRUST": "1",
    }  # the probing is measured, not the trust check
    ways = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "health NAME": [*mcpctl_argv(), "health", "basic", "--json"],
        "doctor NAME": [*mcpctl_argv(), "doctor", "basic", "--json"],
    }
    for argv in ways.values():  # warm-up: the era memory, the OS's file cache
        timed(argv, env)
    times: dict[str, list[float]] = {way: [] for way in ways}
    order = list(ways)
    for r in range(runs):
        for way in order[r % len(order) :] + order[: r % len(order)]:
            times[way].append(timed(ways[way], env))
    medians = {way: statistics.median(ts) for way, ts in times.items()}
    base = medians["python -c pass"]
    added = medians["doctor NAME"] - medians["health NAME"]
    results: list[dict[str, object]] = [
        {"case": way, "median_ms": round(m * 1000, 1), "ratio": round(m / base, 2)}
        for way, m in medians.items()
    ]
    return {
        "runs": runs,
        "results": results,
        "added_ms": round(added * 1000, 1),
        "budget_added_ms": BUDGET_ADDED_S * 1000,
        "ok": added <= BUDGET_ADDED_S,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when the budget is blown")
    opts = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mcpctl-bench-doctor-"))
    try:
        data = measure(opts.runs, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if opts.json:
        print(json.dumps(data, indent=2))
    else:
        for r in data["results"]:  # type: ignore[attr-defined]
            print(f"{r['case']:<16}{r['median_ms']:>9.1f} ms  {r['ratio']:>6.2f}×")
        verdict = "ok" if data["ok"] else "OVER BUDGET"
        print(f"doctor NAME adds {data['added_ms']:.1f} ms to health NAME "
              f"(budget {data['budget_added_ms']:.0f} ms): {verdict}")  # fmt: skip
    return 1 if opts.check and not data["ok"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
