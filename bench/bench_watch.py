"""Watch benchmark: from a saved edit of the config to its change set arriving.

Makes 50 edits of a 50-entry config (each saved as editors do: a temporary file renamed over
it), spaced apart, and times each from the moment the rename returns to the moment the
change set arrives: in-process through the library's ``watch_config``, and through
``mcpctl watch --json`` (a subprocess; the moment its JSON line is read). Reports min,
median, p95 and max per debounce. The budget: p95 <= debounce + 200 ms; ``--check`` exits 1
over it.

    python bench/bench_watch.py [--edits 50] [--debounce 0.5,0.1] [--entries 50]
                                [--no-cli] [--json] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# The same config and program as the start-up benchmark (run from bench/).
from bench_cli import make_config, mcpctl_argv

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BUDGET_OVER_DEBOUNCE = 0.2  # seconds
SPACING = 0.3  # seconds between one change set arriving and the next edit
TIMEOUT = 5.0  # seconds an edit may take to arrive before the run fails


def edit(path: Path, n: int) -> float:
    """Change server-0000's args, save through a renamed temporary file; when it returned."""
    data = json.loads(path.read_text())
    data["server-0000"]["args"] = ["--edit", str(n)]
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)
    return time.perf_counter()


def library(path: Path, debounce: float, edits: int) -> list[float]:
    """Latencies through watch_config, in this process."""
    import contextlib

    import anyio

    from mcpctl.snapshot.watch import ConfigChange, watch_config

    latencies: list[float] = []

    async def main() -> None:
        send, receive = anyio.create_memory_object_stream[tuple[float, ConfigChange]](100)
        ready = anyio.Event()

        async def consume() -> None:
            changes = watch_config(path, debounce=debounce, on_ready=lambda _: ready.set())
            async with contextlib.aclosing(changes):
                async for change in changes:
                    await send.send((time.perf_counter(), change))

        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await ready.wait()
            for n in range(edits):
                saved = edit(path, n)
                with anyio.fail_after(TIMEOUT):
                    arrived, change = await receive.receive()
                assert [c.name for c in change.diff.changed] == ["server-0000"], change.to_data()
                latencies.append(arrived - saved)
                await anyio.sleep(SPACING)
            tg.cancel_scope.cancel()

    anyio.run(main)
    return latencies


def program(path: Path, debounce: float, edits: int, env: dict[str, str]) -> list[float]:
    """Latencies through ``mcpctl watch --json``: until its line is read here."""
    argv = [*mcpctl_argv(), "--config", str(path), "watch", "--json", "--debounce", str(debounce)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            text=True)  # fmt: skip
    lines: queue.Queue[tuple[float, str]] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put((time.perf_counter(), line))

    threading.Thread(target=pump, daemon=True).start()
    latencies = []
    try:
        assert proc.stderr is not None
        if not proc.stderr.readline().startswith("watching "):
            raise SystemExit(f"mcpctl watch did not start: {proc.stderr.read()}")
        for n in range(edits):
            saved = edit(path, n)
            arrived, line = lines.get(timeout=TIMEOUT)
            assert json.loads(line)["changed"][0]["name"] == "server-0000", line
            latencies.append(arrived - saved)
            time.sleep(SPACING)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return latencies


def summary(way: str, debounce: float, values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    budget = debounce + BUDGET_OVER_DEBOUNCE
    return {"way": way, "debounce": debounce, "edits": len(values),
            "min_ms": round(ordered[0] * 1000, 1),
            "median_ms": round(statistics.median(ordered) * 1000, 1),
            "p95_ms": round(p95 * 1000, 1), "max_ms": round(ordered[-1] * 1000, 1),
            "budget_ms": round(budget * 1000), "ok": p95 <= budget}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--debounce", default="0.5,0.1", help="comma-separated seconds")
    parser.add_argument("--entries", type=int, default=50)
    parser.add_argument("--no-cli", action="store_true", help="only the library, in-process")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if over budget")
    opts = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="mcpctl-bench-"))
    rows = []
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCPCTL_")}
        env["MCPCTL_HOME"] = str(tmp / "home")
        path = tmp / "external-mcps.json"
        for debounce in (float(d) for d in opts.debounce.split(",")):
            make_config(path, opts.entries)
            rows.append(summary("library", debounce, library(path, debounce, opts.edits)))
            if not opts.no_cli:
                make_config(path, opts.entries)
                found = program(path, debounce, opts.edits, env)
                rows.append(summary("mcpctl watch", debounce, found))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    if opts.json:
        print(json.dumps({"entries": opts.entries, "results": rows}, indent=2))
    else:
        print(f"{'way':<14} {'debounce':>8} {'min':>8} {'median':>8} {'p95':>8} {'max':>8} "
              f"{'budget':>8}")  # fmt: skip
        for r in rows:
            flag = "" if r["ok"] else "  OVER"
            print(f"{r['way']:<14} {r['debounce']:>7g}s {r['min_ms']:>6.0f}ms "
                  f"{r['median_ms']:>6.0f}ms {r['p95_ms']:>6.0f}ms {r['max_ms']:>6.0f}ms "
                  f"{r['budget_ms']:>6}ms{flag}")  # fmt: skip
    return 1 if (opts.check and not all(r["ok"] for r in rows)) else 0


if __name__ == "__main__":
    raise SystemExit(main())
