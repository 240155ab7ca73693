"""Health of N copies of real stdio servers, three ways, in one run.

1. **sequential**: the plain SDK (``stdio_client`` + ``ClientSession``), one server after
   another: initialize, list tools, ping -- what a naive checker does.
2. **mcpctl**: ``mcpctl health --json`` on a config with the N copies (also: peak RSS of the
   mcpctl process itself, children excluded).
3. **peer**: ``claude mcp list`` from npm ``@anthropic-ai/claude-code``, which health-checks
   every configured server, with a throwaway HOME (skipped when not installed; .ci/run
   installs it under .cache/claude).

Servers: ``mcp-server-time`` (PyPI) and ``@modelcontextprotocol/server-everything`` /
``server-memory`` (npm), as installed by .ci/run under .cache/.

    python bench/bench_health.py [--sizes 1,5,20] [--servers time,everything,memory]
                                 [--repeat 3] [--json] [--check]

Each case runs ``--repeat`` rounds with the three ways in rotating order and reports medians,
and the CPU seconds of each way's whole process tree (servers included): with few cores the
probes are CPU-bound, and that CPU spread over every core is a floor no tool can beat.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"
NPM = CACHE / "npm" / "node_modules" / "@modelcontextprotocol"
SERVERS = {
    "time": [str(CACHE / "servers" / "time" / "bin" / "mcp-server-time")],
    "everything": ["node", str(NPM / "server-everything" / "dist" / "index.js"), "stdio"],
    "memory": ["node", str(NPM / "server-memory" / "dist" / "index.js")],
}
PEER = CACHE / "claude" / "node_modules" / ".bin" / "claude"

SEQUENTIAL = r"""
import sys, json, anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
argv = json.loads(sys.argv[1]); n = int(sys.argv[2])
async def one():
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize(); await s.list_tools(); await s.send_ping()
async def main():
    for _ in range(n):
        await one()
anyio.run(main)
"""


def mcpctl_argv() -> list[str]:
    script = Path(sys.executable).parent / "mcpctl"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcpctl"]


class Run(NamedTuple):
    wall: float
    cpu: float
    rss_mb: float
    output: str


def run_timed(argv: list[str], env: dict[str, str], *, rss: bool = False) -> Run:
    """Run to completion: wall time, CPU of the whole process tree, peak RSS of argv[0]."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        status = Path(f"/proc/{proc.pid}/status")
        peak = 0
        while True:
            pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if rss:
                with contextlib.suppress(OSError, ValueError):
                    for line in status.read_text().splitlines():
                        if line.startswith("VmHWM:"):
                            peak = max(peak, int(line.split()[1]))
            if time.perf_counter() - start > 900:
                proc.kill()
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(code)
        elapsed = time.perf_counter() - start
        out.seek(0)
        # A process's rusage includes every descendant it waited for: the servers too.
        return Run(elapsed, usage.ru_utime + usage.ru_stime, peak / 1024, out.read().decode())


def healthy_count(output: str) -> int | None:
    try:
        return int(json.loads(output[output.index("{") :])["data"]["summary"]["healthy"])
    except (ValueError, KeyError, TypeError):
        return None


def peer_env(home: Path, kind: str, n: int, env: dict[str, str]) -> dict[str, str]:
    """A throwaway HOME where the peer has the N servers configured."""
    home.mkdir()
    penv = {**env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    for i in range(n):
        subprocess.run(
            [str(PEER), "mcp", "add", f"{kind}{i}", "--", *SERVERS[kind]],
            env=penv, capture_output=True, timeout=120, check=False,
        )  # fmt: skip
    return penv


def measure(kind: str, n: int, repeat: int, tmp: Path) -> dict[str, object]:
    """``repeat`` rounds of the three ways, in rotating order so noise hits each alike."""
    argv = SERVERS[kind]
    # The config is trusted: what is measured is the probing (bench_cli times the trust check).
    env = {**os.environ, "MCPCTL_HOME": str(tmp / "home"), "MCPCTL_TRUST": "1"}
    cfg = tmp / f"{kind}-{n}.json"
    cfg.write_text(
        json.dumps({f"{kind}{i}": {"command": argv[0], "args": argv[1:]} for i in range(n)})
    )
    ways: dict[str, tuple[list[str], dict[str, str]]] = {
        "sequential": ([sys.executable, "-c", SEQUENTIAL, json.dumps(argv), str(n)], env),
        "mcpctl": ([*mcpctl_argv(), "--config", str(cfg), "health", "--json"], env),
    }
    if PEER.exists():
        ways["peer"] = (
            [str(PEER), "mcp", "list"],
            peer_env(tmp / f"peer-{kind}-{n}", kind, n, env),
        )
    runs: dict[str, list[Run]] = {way: [] for way in ways}
    order = list(ways)
    for r in range(repeat):
        for way in order[r % len(order) :] + order[: r % len(order)]:
            runs[way].append(run_timed(*ways[way], rss=way == "mcpctl"))
    wall = {way: statistics.median(x.wall for x in rs) for way, rs in runs.items()}
    cpu = {way: statistics.median(x.cpu for x in rs) for way, rs in runs.items()}
    row: dict[str, object] = {"server": kind, "n": n, "runs": repeat}
    for way, rs in runs.items():
        row[f"{way}_s"] = round(wall[way], 2)
        row[f"{way}_cpu_s"] = round(cpu[way], 2)
        row[f"{way}_all_s"] = [round(x.wall, 2) for x in rs]
    row["mcpctl_rss_mb"] = round(max(x.rss_mb for x in runs["mcpctl"]), 1)
    row["healthy"] = min(healthy_count(x.output) or 0 for x in runs["mcpctl"])
    row["vs_sequential"] = round(wall["mcpctl"] / wall["sequential"], 2)
    row["vs_peer"] = round(wall["mcpctl"] / wall["peer"], 2) if "peer" in wall else None
    # The best any tool could do with this much work: its CPU spread over every core.
    row["cpu_floor_s"] = round(cpu["mcpctl"] / (os.cpu_count() or 1), 2)
    return row


def over_budget(row: dict[str, object]) -> list[str]:
    """The budgets for 20 servers: <= 0.6 x sequential, no slower than the peer."""
    if row["n"] != 20:
        return []
    name, seq, peer = row["server"], row["vs_sequential"], row["vs_peer"]
    problems = []
    if isinstance(seq, float) and seq > 0.6:
        problems.append(f"{name}: {seq}x sequential (budget 0.6x)")
    if isinstance(peer, float) and peer > 1.0:
        problems.append(f"{name}: {peer}x the peer (budget 1.0x)")
    return problems


def _line(r: dict[str, object]) -> str:
    peer = f"{r['peer_s']:>6.2f}s (cpu {r['peer_cpu_s']:>4.1f})" if "peer_s" in r else "-"
    return (
        f"{r['server']:<11}{r['n']:>3}  seq {r['sequential_s']:>6.2f}s "
        f"(cpu {r['sequential_cpu_s']:>4.1f})  mcpctl {r['mcpctl_s']:>6.2f}s "
        f"(cpu {r['mcpctl_cpu_s']:>4.1f}, floor {r['cpu_floor_s']:>5.2f}s) "
        f"{r['vs_sequential']:.2f}x seq  peer {peer}  "
        f"rss {r['mcpctl_rss_mb']:.0f} MB  healthy {r['healthy']}/{r['n']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,5,20")
    parser.add_argument("--servers", default="time,everything,memory")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per case (medians)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when a budget is blown")
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="mcpctl-bench-health-"))
    rows = []
    try:
        for kind in opts.servers.split(","):
            argv = SERVERS[kind]
            if not Path(argv[-1] if kind == "time" else argv[1]).exists():
                print(f"skip {kind}: not installed (run .ci/run)", file=sys.stderr)
                continue
            for n in sizes:
                rows.append(measure(kind, n, opts.repeat, tmp))
                if not opts.json:
                    print(_line(rows[-1]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if opts.json:
        print(json.dumps(rows, indent=2))
    problems = [p for row in rows for p in over_budget(row)]
    for p in problems:
        print(f"over budget: {p}", file=sys.stderr)
    return 1 if opts.check and problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
