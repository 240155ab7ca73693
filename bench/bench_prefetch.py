"""The first ``health`` of 5 npx servers from the npm registry: on an empty npm cache, and
after ``mcpctl prefetch``, in the same run.

    python bench/bench_prefetch.py [--timeout 15] [--json]

Three arms, each with an npm cache of its own (``npm_config_cache`` in every entry's env,
as a user's entries would point at their cache), so that none gains from another:

* ``cold, TIMEOUT`` -- ``mcpctl health`` on an empty cache with every entry's timeout at
  ``--timeout`` seconds (15 by default, about what clients allow): how many servers fail
  their first start;
* ``cold, 180 s`` -- the same with time enough: how long the first start takes when nobody
  gives up;
* ``prefetch, then health`` -- ``mcpctl prefetch`` on an empty cache, then the first
  ``mcpctl health`` (``--timeout`` seconds each).

The servers are the @modelcontextprotocol reference servers pinned in tests/servers/npm
(everything, filesystem, memory) and two more published ones (sequential-thinking, github),
each ``npx -y PKG@VERSION`` as a client runs them. Needs npx and the npm registry.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PINNED = json.loads((ROOT / "tests" / "servers" / "npm" / "package.json").read_text())
SERVERS = {
    "everything": [f"@modelcontextprotocol/server-everything@"
                   f"{PINNED['dependencies']['@modelcontextprotocol/server-everything']}"],
    "filesystem": [f"@modelcontextprotocol/server-filesystem@"
                   f"{PINNED['dependencies']['@modelcontextprotocol/server-filesystem']}", "{tmp}"],
    "memory": [f"@modelcontextprotocol/server-memory@"
               f"{PINNED['dependencies']['@modelcontextprotocol/server-memory']}"],
    "thinking": ["@modelcontextprotocol/server-sequential-thinking@2026.8.31"],
    "github": ["@modelcontextprotocol/server-github@2025.4.8"],
}  # fmt: skip


def mcpctl_argv() -> list[str]:
    script = Path(sys.executable).parent / "mcpctl"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcpctl"]


def config(folder: Path, timeout_s: float) -> Path:
    """A config of the 5 servers, each pointing npm at ``folder/npm-cache``."""
    folder.mkdir(parents=True)
    env = {"npm_config_cache": str(folder / "npm-cache"), "npm_config_update_notifier": "false",
           "MEMORY_FILE_PATH": str(folder / "memory.jsonl")}  # fmt: skip
    entries = {
        name: {"command": "npx", "args": ["-y", *(a.format(tmp=folder) for a in args)],
               "env": env, "timeout": int(timeout_s * 1000)}
        for name, args in SERVERS.items()
    }  # fmt: skip
    path = folder / "external-mcps.json"
    path.write_text(json.dumps(entries, indent=2))
    return path


def run(argv: list[str], cfg: Path, home: Path) -> tuple[float, Any]:
    env = {**os.environ, "MCPCTL_HOME": str(home), "MCPCTL_CONFIG": str(cfg)}
    start = time.perf_counter()
    done = subprocess.run([*mcpctl_argv(), *argv, "--json"], env=env, capture_output=True,
                          timeout=900, check=False)  # fmt: skip
    took = time.perf_counter() - start
    try:
        return took, json.loads(done.stdout)
    except ValueError:
        raise SystemExit(f"{argv}: exit {done.returncode}: {done.stderr.decode()[-800:]}") from None


def health_summary(took: float, envelope: Any) -> dict[str, Any]:
    mcps = envelope["data"]["mcps"]
    return {
        "seconds": round(took, 1),
        # degraded answered too (server-filesystem is degraded here, cold or not)
        "answered": sum(m["status"] in ("healthy", "degraded") for m in mcps),
        "servers": {m["name"]: {"status": m["status"],
                                "ms": round(m["latency_ms"].get("total", 0)),
                                "hint": (m.get("error") or {}).get("hint")}
                    for m in mcps},
    }  # fmt: skip


def measure(timeout_s: float, tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"timeout_s": timeout_s, "servers": len(SERVERS)}
    cold = config(tmp / "cold", timeout_s)
    out["cold"] = health_summary(*run(["health"], cold, tmp / "home-cold"))
    patient = config(tmp / "patient", 180)
    out["cold_patient"] = health_summary(*run(["health"], patient, tmp / "home-patient"))
    warm = config(tmp / "prefetched", timeout_s)
    took, envelope = run(["prefetch"], warm, tmp / "home-warm")
    out["prefetch"] = {"seconds": round(took, 1), "counts": envelope["data"]["counts"],
                       "exit_ok": envelope["ok"]}  # fmt: skip
    out["after_prefetch"] = health_summary(*run(["health"], warm, tmp / "home-warm"))
    return out


def report(data: dict[str, Any]) -> str:
    n, t = data["servers"], data["timeout_s"]
    rows = [
        ("cold npm cache, health", t, data["cold"]),
        ("cold npm cache, health", 180, data["cold_patient"]),
        ("after prefetch, health", t, data["after_prefetch"]),
    ]
    lines = [
        "| arm | timeout | first health | answered | slowest server |",
        "|---|---|---|---|---|",
    ]
    for arm, timeout, summary in rows:
        slowest = max(summary["servers"].items(), key=lambda kv: kv[1]["ms"])
        worst = f"{slowest[0]} {slowest[1]['ms'] / 1000:.1f} s"
        lines.append(f"| {arm} | {timeout:g} s | {summary['seconds']:.1f} s | "
                     f"{summary['answered']}/{n} | {worst} |")  # fmt: skip
    p = data["prefetch"]
    lines.append(f"\n`mcpctl prefetch` itself: {p['seconds']:.1f} s ({p['counts']}).")
    hinted = [name for name, s in data["cold"]["servers"].items()
              if (s["hint"] or "").startswith("downloading on first start")]  # fmt: skip
    if hinted:
        lines.append(f"Cold failures hinted 'mcpctl prefetch': {', '.join(hinted)}.")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=15.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpctl-bench-prefetch-") as tmp:
        data = measure(args.timeout, Path(tmp))
    print(json.dumps(data, indent=2) if args.json else report(data))
    return 0 if data["after_prefetch"]["answered"] == data["servers"] else 1


if __name__ == "__main__":
    sys.exit(main())
