"""What speaking both protocol eras costs ``mcpctl health``, in one run.

Cases (N copies of one real stdio server each, ``mcpctl health --json``, medians of
``--repeat`` rounds in rotating order):

* **handshake-only** (npm ``@modelcontextprotocol/server-everything``, TypeScript SDK 1.x):
  ``--protocol auto`` with the era remembered from an earlier run, against
  ``--protocol legacy``; budget auto <= 1.05 x legacy (the remembered era makes the probe
  free). The first contact (no memory: ``server/discover`` is refused, then the handshake)
  is reported without a budget.
* **dual-era** (PyPI ``mcp-server-time`` on the Python SDK 2.x): auto (one ``server/discover``
  instead of ``initialize`` + ``initialized`` + ``ping``) against legacy; budget auto <= 1.0 x
  legacy. And ``claude mcp list`` (npm ``@anthropic-ai/claude-code``, with a throwaway HOME,
  when installed under .cache/claude) on the same servers; budget mcpctl auto <= 0.8 x it.
* **silent** (a handshake-only server that never answers ``server/discover``; tests/servers/
  legacy_modes.py): the first contact waits out the discovery deadline; remembered, it costs
  what legacy does. Reported, no budget.

    python bench/bench_eras.py [--n 20] [--repeat 3] [--cases handshake,dual,silent]
                               [--json] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_health import PEER, SERVERS, healthy_count, mcpctl_argv, run_timed

ROOT = Path(__file__).resolve().parent.parent
SILENT = [sys.executable, str(ROOT / "tests" / "servers" / "legacy_modes.py"), "silent-discover"]


def write_config(path: Path, argv: list[str], n: int, prefix: str) -> Path:
    path.write_text(
        json.dumps({f"{prefix}{i}": {"command": argv[0], "args": argv[1:]} for i in range(n)})
    )
    return path


def timed(ways: dict[str, tuple[list[str], dict[str, str]]], repeat: int) -> dict[str, object]:
    """Median wall time of each way over ``repeat`` rounds, in rotating order."""
    walls: dict[str, list[float]] = {way: [] for way in ways}
    cpus: dict[str, list[float]] = {way: [] for way in ways}
    healthy: dict[str, int] = {}
    order = list(ways)
    for r in range(repeat):
        for way in order[r % len(order) :] + order[: r % len(order)]:
            run = run_timed(*ways[way])
            walls[way].append(run.wall)
            cpus[way].append(run.cpu)  # the whole process tree's, servers included
            if way != "peer":
                healthy[way] = min(healthy.get(way, 1 << 30), healthy_count(run.output) or 0)
    out: dict[str, object] = {f"{w}_s": round(statistics.median(v), 3) for w, v in walls.items()}
    out |= {f"{w}_cpu_s": round(statistics.median(v), 2) for w, v in cpus.items()}
    out |= {f"{w}_all_s": [round(x, 2) for x in v] for w, v in walls.items()}
    out["healthy"] = healthy
    return out


def handshake_only(n: int, repeat: int, tmp: Path) -> dict[str, object]:
    cfg = write_config(tmp / "everything.json", SERVERS["everything"], n, "everything")
    env = {**os.environ, "MCPCTL_HOME": str(tmp / "home-everything"), "MCPCTL_TRUST": "1"}
    base = [*mcpctl_argv(), "--config", str(cfg), "health", "--json"]
    first = run_timed([*base, "--protocol", "auto"], env)  # fills the era memory
    row = timed({"auto": ([*base, "--protocol", "auto"], env),
                 "legacy": ([*base, "--protocol", "legacy"], env)}, repeat)  # fmt: skip
    row.update(case=f"{n} × handshake-only", first_contact_s=round(first.wall, 3))
    row["ratio"] = round(float(row["auto_s"]) / float(row["legacy_s"]), 3)  # type: ignore[arg-type]
    row["budget"] = 1.05
    return row


def dual_era(n: int, repeat: int, tmp: Path) -> dict[str, object]:
    cfg = write_config(tmp / "time.json", SERVERS["time"], n, "time")
    env = {**os.environ, "MCPCTL_HOME": str(tmp / "home-time"), "MCPCTL_TRUST": "1"}
    base = [*mcpctl_argv(), "--config", str(cfg), "health", "--json"]
    ways = {"auto": ([*base, "--protocol", "auto"], env),
            "legacy": ([*base, "--protocol", "legacy"], env)}  # fmt: skip
    if PEER.exists():
        home = tmp / "peer-home"
        home.mkdir()
        penv = {**env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
        import subprocess

        for i in range(n):
            subprocess.run(
                [str(PEER), "mcp", "add", f"time{i}", "--", *SERVERS["time"]],
                env=penv, capture_output=True, timeout=120, check=False,
            )  # fmt: skip
        ways["peer"] = ([str(PEER), "mcp", "list"], penv)
    run_timed(ways["auto"][0], env)  # the era remembered, as every later health run has it
    row = timed(ways, repeat)
    row.update(case=f"{n} × dual-era", budget=1.0)
    row["ratio"] = round(float(row["auto_s"]) / float(row["legacy_s"]), 3)  # type: ignore[arg-type]
    if "peer_s" in row:
        row["vs_peer"] = round(float(row["auto_s"]) / float(row["peer_s"]), 3)  # type: ignore[arg-type]
        row["peer_budget"] = 0.8
    return row


def silent(repeat: int, tmp: Path) -> dict[str, object]:
    cfg = tmp / "silent.json"
    cfg.write_text(json.dumps({"silent": {"command": SILENT[0], "args": SILENT[1:],
                                          "timeout": 6000}}))  # fmt: skip
    env = {**os.environ, "MCPCTL_HOME": str(tmp / "home-silent"), "MCPCTL_TRUST": "1"}
    base = [*mcpctl_argv(), "--config", str(cfg), "health", "--json"]
    first = run_timed([*base, "--protocol", "auto"], env)
    row = timed({"auto": ([*base, "--protocol", "auto"], env),
                 "legacy": ([*base, "--protocol", "legacy"], env)}, repeat)  # fmt: skip
    row.update(case="1 × silent on discovery (timeout 6 s)", first_contact_s=round(first.wall, 3))
    return row


def verdicts(row: dict[str, object]) -> list[str]:
    problems = []
    if "budget" in row and float(row["ratio"]) > float(row["budget"]):  # type: ignore[arg-type]
        problems.append(f"{row['case']}: auto {row['ratio']}x legacy (budget {row['budget']}x)")
    if "vs_peer" in row and float(row["vs_peer"]) > float(row["peer_budget"]):  # type: ignore[arg-type]
        problems.append(f"{row['case']}: {row['vs_peer']}x claude mcp list (budget 0.8x)")
    return problems


def _line(row: dict[str, object]) -> str:
    parts = [f"{row['case']}:", f"auto {row['auto_s']}s", f"legacy {row['legacy_s']}s"]
    if "ratio" in row:
        parts.append(f"= {row['ratio']}x")
    if "first_contact_s" in row:
        parts.append(f"first contact {row['first_contact_s']}s")
    if "peer_s" in row:
        parts.append(f"claude mcp list {row['peer_s']}s ({row['vs_peer']}x)")
    parts.append(f"healthy {row['healthy']}")
    return "  ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="copies of each server")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is blown")
    parser.add_argument("--cases", default="handshake,dual,silent", help="which cases to run")
    opts = parser.parse_args()
    for kind in ("everything", "time"):
        if not Path(SERVERS[kind][-1] if kind == "time" else SERVERS[kind][1]).exists():
            print(f"{kind} is not installed (run .ci/run)", file=sys.stderr)
            return 2
    tmp = Path(tempfile.mkdtemp(prefix="mcpctl-bench-eras-"))
    rows = []
    try:
        cases = {
            "handshake": lambda: handshake_only(opts.n, opts.repeat, tmp),
            "dual": lambda: dual_era(opts.n, opts.repeat, tmp),
            "silent": lambda: silent(opts.repeat, tmp),
        }
        for name in opts.cases.split(","):
            rows.append(cases[name]())
            if not opts.json:
                print(_line(rows[-1]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if opts.json:
        print(json.dumps(rows, indent=2))
    problems = [p for row in rows for p in verdicts(row)]
    for p in problems:
        print(f"over budget: {p}", file=sys.stderr)
    return 1 if opts.check and problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
