"""TAB-press benchmark: ``mcpctl __complete ...`` as ratios to ``python -c pass``.

Each TAB press runs the program again, so shell completion has a budget of its own: 5x
``python -c pass`` for every kind of answer. Builds, in a temporary HOME (no MCPCTL_HOME:
the user dirs are found as most users have them), a 50-entry and a 1,000-entry config, tool
names from an earlier probe and a discovery cache of 2,000 registry servers, then times,
interleaved and in one run, the medians of one completion per kind of value, and
``mcpctl list --json`` (the whole CLI) for contrast. ``--check`` exits 1 when a budget is
blown.

    python bench/bench_completion.py [--runs 25] [--json] [--check]
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
BUDGET = 5.0  # every completion case, as a ratio to `python -c pass`
BREAKS = " \t\n\"'><=;|&(:"


def mcpctl_argv() -> list[str]:
    script = Path(sys.executable).parent / "mcpctl"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcpctl"]


def make_config(path: Path, n: int) -> None:
    data = {
        f"server-{i:04d}": {
            "command": "npx",
            "args": ["-y", f"@example/mcp-server-{i}", "--port", str(3000 + i)],
            "env": {"API_TOKEN": f"${{API_TOKEN_{i}}}", "REGION": "eu-west-1"},
            "description": f"Example server number {i}",
        }
        for i in range(n)
    }
    path.write_text(json.dumps(data, indent=2) + "\n")


def prepare(tmp: Path, env: dict[str, str]) -> None:
    """The tool cache and the discovery cache, where the completion reads them."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        from mcpctl.completion.toolcache import remember_tools
        from mcpctl.paths import Paths
        from mcpctl.registry.cache import DiscoveryCache
        from mcpctl.registry.records import Record

        paths = Paths.from_env(str(tmp / "small.json"))
        tools = {f"server-{i:04d}": [f"tool_{j}" for j in range(40)] for i in range(50)}
        remember_tools(paths.cache_dir, paths.config, tools)
        cache = DiscoveryCache.open(paths.discovery_cache)
        records = [
            Record(f"io.github.org{i % 50}/server-{i}", "1.0.0", "active", True, "2026-01-01",
                   {"name": f"io.github.org{i % 50}/server-{i}", "description": f"server {i}"})
            for i in range(2000)
        ]  # fmt: skip
        cache.replace("official", records)
        cache.close()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(argv, check=False, env=env, cwd=cwd, capture_output=True, timeout=60)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode()}")
    return elapsed, proc.stdout


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
        small, big = tmp / "small.json", tmp / "big.json"
        make_config(small, 50)
        make_config(big, 1000)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MCPCTL_", "XDG_"))}
        env["HOME"] = str(tmp / "home")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        prepare(tmp, env)
        cli = mcpctl_argv()

        def bash(line: str, config: Path = small) -> list[str]:
            return [*cli, "__complete", "bash", BREAKS, f"mcpctl --config {config} {line}"]

        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "commands": bash(""),
            "options": bash("add x --"),
            "servers (50)": bash("get "),
            "servers (1000)": bash("remove ", big),
            "tool names": bash("call server-0007 "),
            "secrets (1000)": bash("secret set ", big),
            "render targets": bash("render "),
            "registry ids": bash("discover --registry "),
            "registry names (2000)": bash("show io.github.org7/"),
            "files": bash("undo --file "),
            "zsh: servers (50)": [*cli, "__complete", "zsh", "--config", str(small), "get", ""],
            "fish: servers (50)": [*cli, "__complete", "fish", "--config", str(small), "get", ""],
            # -v: the full CLI (a plain `list` is answered before it loads).
            "list --json (whole CLI)": [*cli, "--config", str(small), "list", "--json", "-v"],
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for name, argv in cases.items():  # warm-up: page cache, bytecode; and a sanity check
            _, out = timed(argv, env, tmp)
            if name not in ("python -c pass", "list --json (whole CLI)", "files"):
                assert len(out.splitlines()) > 1, f"{name}: no candidates: {out!r}"
        for _ in range(opts.runs):
            for name, argv in cases.items():  # interleaved, so drift hits all alike
                samples[name].append(timed(argv, env, tmp)[0])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    floor = statistics.median(samples["python -c pass"])
    rows = []
    over = False
    for name, values in samples.items():
        med = statistics.median(values)
        ratio = med / floor
        budget = None if name in ("python -c pass", "list --json (whole CLI)") else BUDGET
        ok = budget is None or ratio <= budget
        over |= not ok
        rows.append({"case": name, "median_ms": round(med * 1000, 1), "ratio": round(ratio, 2),
                     "budget": budget, "ok": ok})  # fmt: skip
    if opts.json:
        print(
            json.dumps(
                {"runs": opts.runs, "python": sys.version.split()[0], "results": rows}, indent=2
            )
        )
    else:
        print(f"{'case':<25} {'median':>9} {'ratio':>7} {'budget':>7}")
        for r in rows:
            budget = f"{r['budget']:g}x" if r["budget"] else "-"
            flag = "" if r["ok"] else "  OVER"
            print(f"{r['case']:<25} {r['median_ms']:>7.1f}ms {r['ratio']:>6.2f}x {budget:>7}{flag}")
    return 1 if (opts.check and over) else 0


if __name__ == "__main__":
    raise SystemExit(main())
