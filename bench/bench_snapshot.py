"""Snapshot benchmark: ``mcpctl snapshot diff`` of 1,000 entries (no probing), against
``list --json`` and ``python -c pass``.

The budget: the diff (against a saved snapshot of the same 1,000 entries) costs at most
3 x ``python -c pass`` more than ``mcpctl list --json`` of the same file: without --probe it
must not import the MCP SDK or pydantic. ``snapshot save`` is timed too, without a budget.
Cases run interleaved in one run; ``--check`` exits 1 over budget.

    python bench/bench_snapshot.py [--runs 15] [--json] [--check]
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
from pathlib import Path

# The same 1,000-entry config and timing as the start-up benchmark (run from bench/).
from bench_cli import make_config, mcpctl_argv, timed

ROOT = Path(__file__).resolve().parent.parent
# Extra cost over `list --json` of the same file, in units of `python -c pass`.
BUDGET_OVER_LIST = 3.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if over budget")
    opts = parser.parse_args()

    compileall.compile_dir(str(ROOT / "mcpctl"), quiet=1)
    tmp = Path(tempfile.mkdtemp(prefix="mcpctl-bench-"))
    try:
        config = tmp / "big.json"
        make_config(config, 1000)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCPCTL_")}
        env["MCPCTL_HOME"] = str(tmp / "home")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cli = [*mcpctl_argv(), "--config", str(config)]
        lock = tmp / "mcp-lock.json"
        subprocess.run([*cli, "snapshot", "save", "-o", str(lock)], check=True, env=env,
                       capture_output=True, timeout=60)  # fmt: skip
        # The same servers, one of them reconfigured: the diff has something to say.
        data = json.loads(config.read_text())
        data["server-0007"]["args"].append("--verbose")
        changed = tmp / "changed.json"
        changed.write_text(json.dumps(data, indent=2) + "\n")
        changed_cli = [*mcpctl_argv(), "--config", str(changed)]
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            # -v: through the full CLI, as the command measured against it (a plain `list`
            # is answered before the CLI framework loads).
            "list --json": [*cli, "list", "--json", "-v"],
            "snapshot diff": [*cli, "snapshot", "diff", "--against", str(lock)],
            "snapshot diff --json": [*cli, "snapshot", "diff", "--against", str(lock), "--json"],
            "snapshot diff (1 changed)": [*changed_cli, "snapshot", "diff", "--against", str(lock)],
            "snapshot save": [*cli, "snapshot", "save", "-o", str(tmp / "saved.json")],
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for argv in cases.values():
            timed(argv, env)
        for _ in range(opts.runs):
            for name, argv in cases.items():
                samples[name].append(timed(argv, env))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    floor = statistics.median(samples["python -c pass"])
    listing = statistics.median(samples["list --json"]) / floor
    rows = []
    over = False
    for name, values in samples.items():
        ratio = statistics.median(values) / floor
        extra = ratio - listing if name.startswith("snapshot") else None
        # The budget is the diff's; save (which also writes the file) is shown for reference.
        ok = extra is None or not name.startswith("snapshot diff") or extra <= BUDGET_OVER_LIST
        over |= not ok
        over_list = None if extra is None else round(extra, 2)
        rows.append({"case": name, "median_ms": round(statistics.median(values) * 1000, 1),
                     "ratio": round(ratio, 2), "over_list": over_list, "ok": ok})  # fmt: skip
    if opts.json:
        print(json.dumps({"runs": opts.runs, "budget_over_list": BUDGET_OVER_LIST,
                          "results": rows}, indent=2))  # fmt: skip
    else:
        print(f"{'case':<27} {'median':>9} {'ratio':>7} {'over list':>10}")
        for r in rows:
            shown = "-" if r["over_list"] is None else f"{r['over_list']:+.2f}x"
            flag = "" if r["ok"] else "  OVER"
            print(f"{r['case']:<27} {r['median_ms']:>7.1f}ms {r['ratio']:>6.2f}x {shown:>10}{flag}")
    return 1 if (opts.check and over) else 0


if __name__ == "__main__":
    raise SystemExit(main())
