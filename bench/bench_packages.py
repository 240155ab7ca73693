"""Package resolution: 20 entries (10 npm, 10 PyPI) against a local npm registry and PyPI.

Reports, in one run: resolving them in the library with a cold cache (every document
fetched whole) and with a warm one (every document revalidated with its ETag: 304s), and
``mcpctl snapshot diff --packages`` as a user runs it (a process of its own) with the warm
cache. Budget: the warm command ≤ 3 s.

    python bench/bench_packages.py [--entries 20] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcpctl.snapshot.packages import parse_spec, resolve_packages  # noqa: E402
from tests.snapshot.pkgserver import Packages, serving  # noqa: E402

BUDGET_WARM_COMMAND = 3.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    packages = Packages()
    config: dict[str, dict[str, object]] = {}
    for i in range(opts.entries):
        if i % 2 == 0:
            name = f"@bench/server-{i}"
            for v in range(40):
                packages.publish_npm(name, f"1.{v}.0")
            config[f"npm-{i}"] = {"command": "npx", "args": ["-y", f"{name}@^1"]}
        else:
            name = f"bench-server-{i}"
            for v in range(40):
                packages.publish_pypi(name, f"1.{v}")
            config[f"py-{i}"] = {"command": "uvx", "args": [name]}
    results: dict[str, float] = {}
    with serving(packages) as url, tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "MCPCTL_HOME": home, "PYTHONPATH": str(ROOT),
               "MCPCTL_NPM_REGISTRY": url, "MCPCTL_PYPI_URL": url}  # fmt: skip
        os.environ.update({"MCPCTL_NPM_REGISTRY": url, "MCPCTL_PYPI_URL": url})
        specs = {}
        for n, e in config.items():
            spec = parse_spec(str(e["command"]), list(e["args"]))  # type: ignore[arg-type]
            assert spec is not None
            specs[n] = spec
        cache = Path(home) / "cache" / "package-metadata.json"
        t = time.perf_counter()
        cold = resolve_packages(specs, cache_file=cache)
        results["library_cold_s"] = time.perf_counter() - t
        assert all(p.resolved for p in cold.pins.values()), cold.pins
        warm = []
        for _ in range(opts.runs):
            t = time.perf_counter()
            resolve_packages(specs, cache_file=cache)
            warm.append(time.perf_counter() - t)
        results["library_warm_s"] = statistics.median(warm)
        Path(home, "external-mcps.json").write_text(json.dumps(config))

        def mcpctl(*args: str) -> float:
            t = time.perf_counter()
            command = [sys.executable, "-m", "mcpctl", *args]
            done = subprocess.run(command, env=env, cwd=home, capture_output=True, text=True,
                                  timeout=120, check=False)  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            return time.perf_counter() - t

        mcpctl("snapshot", "save", "--packages", "-o", "lock.json")
        runs = [mcpctl("snapshot", "diff", "--packages", "--against", "lock.json", "--exit-code")
                for _ in range(opts.runs)]  # fmt: skip
        results["command_warm_s"] = statistics.median(runs)
        results["entries"] = opts.entries
        results["not_modified"] = packages.not_modified
    budgets = {"command_warm_s": BUDGET_WARM_COMMAND}
    ok = results["command_warm_s"] <= BUDGET_WARM_COMMAND
    if opts.json:
        print(json.dumps({"results": results, "budgets": budgets}, indent=2))
    else:
        for key, value in results.items():
            budget = budgets.get(key)
            flag = ("  ok" if value <= budget else "  OVER") if budget else ""
            print(f"{key:<20} {value:>10.3f}" + (f"   budget {budget:g}" if budget else "") + flag)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
