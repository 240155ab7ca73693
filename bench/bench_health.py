"""Health of N copies of real stdio servers, three ways, in one run.

1. **sequential**: the plain SDK (``stdio_client`` + ``ClientSession``), one server after
   another: initialize, list tools, ping -- what a naive checker does.
2. **mcpctl**: ``mcpctl health --json`` on a config with the N copies (also: peak RSS of the
   mcpctl process itself, children excluded).
3. **peer**: ``claude mcp list`` from npm ``@anthropic-ai/claude-code``, which health-checks
   every configured server, with a throwaway HOME (skipped when not installed; install it
   with ``npm install --prefix .cache/peer @anthropic-ai/claude-code``).

Servers: ``mcp-server-time`` (PyPI) and ``@modelcontextprotocol/server-everything`` /
``server-memory`` (npm), as installed by .ci/run under .cache/.

    python bench/bench_health.py [--sizes 1,5,20] [--servers time,everything,memory] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"
NPM = CACHE / "npm" / "node_modules" / "@modelcontextprotocol"
SERVERS = {
    "time": [str(CACHE / "servers" / "time" / "bin" / "mcp-server-time")],
    "everything": ["node", str(NPM / "server-everything" / "dist" / "index.js"), "stdio"],
    "memory": ["node", str(NPM / "server-memory" / "dist" / "index.js")],
}
PEER = CACHE / "peer" / "node_modules" / ".bin" / "claude"

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


def run_timed(
    argv: list[str], env: dict[str, str], *, rss: bool = False
) -> tuple[float, float | None, str]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = 0
    if rss:
        status = Path(f"/proc/{proc.pid}/status")
        while proc.poll() is None:
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
            except OSError:
                pass
            time.sleep(0.02)
    out, err = proc.communicate(timeout=900)
    elapsed = time.perf_counter() - start
    return elapsed, (peak / 1024 if rss else None), out + err


def _line(r: dict[str, object]) -> str:
    peer = f"{r['peer_s']:>6.2f}s" if r["peer_s"] is not None else "     -"
    return (
        f"{r['server']:<11}{r['n']:>3}  sequential {r['sequential_s']:>6.2f}s  "
        f"mcpctl {r['mcpctl_s']:>6.2f}s ({r['vs_sequential']:.2f}x)  peer {peer}  "
        f"rss {r['mcpctl_rss_mb']:.0f} MB  healthy {r['healthy']}/{r['n']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,5,20")
    parser.add_argument("--servers", default="time,everything,memory")
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    kinds = opts.servers.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="mcpctl-bench-health-"))
    rows = []
    try:
        for kind in kinds:
            argv = SERVERS[kind]
            if not Path(argv[-1] if kind == "time" else argv[1]).exists():
                print(f"skip {kind}: not installed (run .ci/run)", file=sys.stderr)
                continue
            for n in sizes:
                env = {**os.environ, "MCPCTL_HOME": str(tmp / "home")}
                cfg = tmp / f"{kind}-{n}.json"
                cfg.write_text(
                    json.dumps(
                        {f"{kind}{i}": {"command": argv[0], "args": argv[1:]} for i in range(n)}
                    )
                )
                seq, _, _ = run_timed(
                    [sys.executable, "-c", SEQUENTIAL, json.dumps(argv), str(n)], env
                )
                ours, rss, out = run_timed(
                    [*mcpctl_argv(), "--config", str(cfg), "health", "--json"], env, rss=True
                )
                healthy = json.loads(out.split("\n{", 1)[0] if out.startswith("{") else "{}").get(
                    "data", {}
                )
                ok = healthy.get("summary", {}).get("healthy") if healthy else None
                peer = None
                if PEER.exists():
                    home = tmp / f"peer-{kind}-{n}"
                    home.mkdir()
                    penv = {**env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
                    for i in range(n):
                        subprocess.run(
                            [str(PEER), "mcp", "add", f"{kind}{i}", "--", *argv],
                            env=penv,
                            capture_output=True,
                            timeout=120,
                            check=False,
                        )
                    peer, _, _ = run_timed([str(PEER), "mcp", "list"], penv)
                rows.append({
                    "server": kind, "n": n,
                    "sequential_s": round(seq, 2), "mcpctl_s": round(ours, 2),
                    "peer_s": round(peer, 2) if peer is not None else None,
                    "mcpctl_rss_mb": round(rss or 0, 1), "healthy": ok,
                    "vs_sequential": round(ours / seq, 2),
                    "vs_peer": round(ours / peer, 2) if peer else None,
                })  # fmt: skip
                if not opts.json:
                    print(_line(rows[-1]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if opts.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
