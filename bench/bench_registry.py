"""Registry sync and search at scale: 20,000 synthetic records from a local registry.

Reports, in one run: a full sync (every page of the v0.1 API from 127.0.0.1 into the SQLite
cache), an incremental sync with 100 changes, and ``discover QUERY`` inside the library (the
first page of ranked results). Budgets: full ≤ 5 s, incremental ≤ 0.5 s, search ≤ 50 ms.

Then ``mcpctl discover --timeout D`` as a user runs it (a process of its own), with a fast
registry and one that accepts the connection and never answers, both stale: the first run
must answer by the deadline plus start-up (≤ D + 1.5 s), with the fast registry's results
and the other's cache; the second, right after, must not wait for the hanging one again
(≤ 1.5 s).

    python bench/bench_registry.py [--records 20000] [--deadline 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcpctl.registry.cache import DiscoveryCache  # noqa: E402
from mcpctl.registry.sources import RegistrySource  # noqa: E402
from mcpctl.registry.syncing import sync_source  # noqa: E402
from tests.registry.server import OFFICIAL, Registry, make_record, running, serve  # noqa: E402

WORDS = [
    "github", "slack", "postgres", "weather", "files", "memory", "search", "browser", "docs",
    "calendar", "notion", "jira", "figma", "stripe", "redis", "kafka", "s3", "time", "fetch",
    "git", "sql", "vector", "email", "maps",
]  # fmt: skip


def records(n: int) -> list[dict[str, object]]:
    rng = random.Random(7)
    out = []
    for i in range(n):
        a, b = rng.sample(WORDS, 2)
        name = f"io.github.user{i % 997}/{a}-{b}-mcp-{i}"
        desc = f"An MCP server for {a} and {b}: " + " ".join(rng.sample(WORDS, 6))
        updated = f"2025-11-{1 + i % 28:02d}T00:00:00Z"
        title = f"{a.title()} {b.title()}"
        out.append(make_record(name, f"1.{i % 7}.{i % 13}", title=title, description=desc,
                               updated=updated))  # fmt: skip
    return out


def discover_with_a_hanging_registry(deadline: float) -> dict[str, float]:
    """Wall times of two ``mcpctl discover`` runs with a fast and a hanging registry."""
    fast = Registry([make_record("io.fast/weather", title="Fast weather")])
    hang = Registry([make_record("io.hang/weather", title="Hanging weather")])
    out: dict[str, float] = {}
    with (
        running(fast) as fast_url,
        running(hang) as hang_url,
        tempfile.TemporaryDirectory() as home,
    ):
        env = {**os.environ, "MCPCTL_HOME": home, "PYTHONPATH": str(ROOT)}

        def mcpctl(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
            t = time.perf_counter()
            command = [sys.executable, "-m", "mcpctl", *args]
            done = subprocess.run(command, env=env, cwd=home, capture_output=True, text=True,
                                  timeout=120, check=False)  # fmt: skip
            return done, time.perf_counter() - t

        mcpctl("registry", "remove", "official")
        mcpctl("registry", "add", "fast", fast_url)
        mcpctl("registry", "add", "hang", hang_url)
        mcpctl("registry", "sync", "fast", "hang")
        hang.mode = "hang"
        cache = next(Path(home).rglob("discovery.sqlite3"))
        with sqlite3.connect(cache) as db:  # both stale: the next command refreshes them
            db.execute("UPDATE registries SET synced_at = 0")
        db.close()
        for key in ("discover_hanging_first_s", "discover_hanging_again_s"):
            done, seconds = mcpctl("discover", "weather", "--timeout", f"{deadline:g}s", "--json")
            names = {r["name"] for r in json.loads(done.stdout)["data"]["results"]}
            assert done.returncode == 0 and names == {"io.fast/weather", "io.hang/weather"}, done
            out[key] = seconds
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--deadline", type=float, default=3.0)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    reg = Registry(records(opts.records))
    server, url = serve(reg)
    results: dict[str, float] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cache = DiscoveryCache.open(Path(tmp) / "discovery.sqlite3")
            source = RegistrySource("local", "http", url)
            t = time.perf_counter()
            full = sync_source(cache, source)
            results["full_sync_s"] = time.perf_counter() - t
            for rec in reg.records[:100]:
                meta = rec["_meta"][OFFICIAL]
                meta["updatedAt"] = "2025-12-30T00:00:00Z"
                rec["server"]["description"] += " (updated)"
            reg.changed()
            t = time.perf_counter()
            inc = sync_source(cache, source)
            results["incremental_sync_s"] = time.perf_counter() - t
            timings = []
            for query in ("github", "postgres weather", "slack", "vector search", "time"):
                for _ in range(5):
                    t = time.perf_counter()
                    cache.search(query, limit=20)
                    timings.append(time.perf_counter() - t)
            results["search_median_ms"] = statistics.median(timings) * 1000
            results["search_max_ms"] = max(timings) * 1000
            results["records"] = float(full.records)
            results["changed"] = float(inc.records)
    finally:
        server.shutdown()
        server.server_close()
    results.update(discover_with_a_hanging_registry(opts.deadline))
    budgets = {
        "full_sync_s": 5.0,
        "incremental_sync_s": 0.5,
        "search_max_ms": 50.0,
        "discover_hanging_first_s": opts.deadline + 1.5,
        "discover_hanging_again_s": 1.5,
    }
    if opts.json:
        print(json.dumps({"results": results, "budgets": budgets}, indent=2))
    else:
        for key, value in results.items():
            budget = budgets.get(key)
            flag = "" if budget is None or value <= budget else "  OVER"
            print(f"{key:<26} {value:>10.3f}" + (f"   budget {budget:g}" if budget else "") + flag)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
