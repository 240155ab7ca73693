"""``mcpctl validate --json`` on large and hostile files, timed as ratios to ``python -c pass``.

Builds, in a temporary directory: configs of 10,000, 20,000 and 100,000 entries (the shape of
bench_cli.py's), and three hostile ones: one value of 30,000 unclosed ``${A:-``, one value of
1,000,000 ``$X `` near-misses (a million warnings, of which the report keeps 1,000), and an
entry whose ``args`` nest 199 levels deep around an array of 100,000 numbers (one level under
the position parser's limit, and a problem inside it, so its positions are worked out).
Times each ``validate --json`` run as a subprocess, interleaved with ``python -c pass``, and
reports the medians of wall time and of CPU time (user + system, which other work on a busy
machine disturbs less), ratios and what the report said. ``--check`` exits 1 when validating
100,000 entries takes more than 5 s of wall time.

    python bench/bench_validate.py [--runs 3] [--json] [--check]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_100K_S = 5.0
DEPTH = 199  # levels below the document's top; the parser allows 200


def mcpctl_argv() -> list[str]:
    script = Path(sys.executable).parent / "mcpctl"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcpctl"]


def entries(n: int) -> str:
    data = {
        f"server-{i:06d}": {
            "command": "npx",
            "args": ["-y", f"@example/mcp-server-{i}", "--port", str(3000 + i)],
            "env": {"API_TOKEN": f"${{API_TOKEN_{i}}}", "REGION": "eu-west-1"},
            "timeout": 15000,
            "description": f"Example server number {i}",
        }
        for i in range(n)
    }
    return json.dumps(data, indent=2) + "\n"


def one_value(value: str) -> str:
    return json.dumps({"hostile": {"command": "npx", "env": {"VALUE": value}}}, indent=2)


def deep_nesting() -> str:
    # The entry is level 1 and args level 2: the innermost array is at level DEPTH.
    wide = "[" + ",".join(["0"] * 100_000) + "]"
    args = "[" * (DEPTH - 3) + wide + "]" * (DEPTH - 3)
    return '{\n  "deep": {\n    "command": "npx",\n    "args": ' + args + "\n  }\n}\n"


CASES = {
    "10,000 entries": lambda: entries(10_000),
    "20,000 entries": lambda: entries(20_000),
    "100,000 entries": lambda: entries(100_000),
    '30,000 x "${A:-"': lambda: one_value("${A:-" * 30_000),
    '1,000,000 x "$X "': lambda: one_value("$X " * 1_000_000),
    f"nesting {DEPTH} deep": deep_nesting,
}


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds and the output of one run."""
    cpu = cpu_of_children()
    start = time.perf_counter()
    proc = subprocess.run(argv, check=False, env=env, capture_output=True, timeout=300)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # 1: the file has errors, which some cases do
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode()}")
    return elapsed, cpu_of_children() - cpu, proc.stdout


def summary(stdout: bytes) -> str:
    if not stdout:
        return ""
    data = json.loads(stdout)["data"]
    return (
        f"{data['errors']} errors, {data['warnings']} warnings, "
        f"{len(data['problems'])} shown, {data['omitted']} omitted; {len(stdout):,} bytes out"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if over budget")
    opts = parser.parse_args()

    compileall.compile_dir(str(ROOT / "mcpctl"), quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="mcpctl-bench-"))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCPCTL_")}
        env["MCPCTL_HOME"] = str(tmp / "home")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cli = mcpctl_argv()
        runs: dict[str, list[str]] = {"python -c pass": [sys.executable, "-c", "pass"]}
        sizes: dict[str, int] = {}
        for i, (name, build) in enumerate(CASES.items()):
            path = tmp / f"case-{i}.json"
            path.write_text(build(), encoding="utf-8")
            sizes[name] = path.stat().st_size
            runs[name] = [*cli, "--config", str(path), "validate", "--json"]
        said = {name: summary(timed(argv, env)[2]) for name, argv in runs.items()}  # warm-up
        samples: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(opts.runs):
            for name, argv in runs.items():  # interleaved, so drift hits all alike
                wall, used, _ = timed(argv, env)
                samples[name].append(wall)
                cpu[name].append(used)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    floor = statistics.median(samples["python -c pass"])
    rows = []
    for name, values in samples.items():
        med = statistics.median(values)
        budget = BUDGET_100K_S if name == "100,000 entries" else None
        rows.append({
            "case": name, "median_s": round(med, 3), "ratio": round(med / floor, 1),
            "cpu_s": round(statistics.median(cpu[name]), 3),
            "file_mb": round(sizes.get(name, 0) / 1e6, 1), "budget_s": budget,
            "ok": budget is None or med <= budget, "report": said[name],
        })  # fmt: skip
    over = not all(r["ok"] for r in rows)
    if opts.json:
        print(json.dumps({"runs": opts.runs, "python": sys.version.split()[0], "results": rows},
                         indent=2))  # fmt: skip
    else:
        print(f"{'case':<22} {'file':>7} {'median':>8} {'ratio':>8} {'cpu':>7}  report")
        for r in rows:
            flag = "" if r["ok"] else f"  OVER {r['budget_s']:g} s"
            size = f"{r['file_mb']:.1f}MB" if r["file_mb"] else "-"
            print(f"{r['case']:<22} {size:>7} {r['median_s']:>7.2f}s {r['ratio']:>7.1f}x"
                  f" {r['cpu_s']:>6.2f}s  {r['report']}{flag}")  # fmt: skip
    return 1 if (opts.check and over) else 0


if __name__ == "__main__":
    raise SystemExit(main())
