"""Run every benchmark in bench/, one after another, and print one table of the results.

    python bench/run_all.py [--quick] [--only cli,completion,...] [--write]

Each benchmark runs as its own process with ``--json``; its results become rows of one
Markdown table (benchmark, case, result, budget, verdict) headed by the machine it ran on.
``--write`` also puts the table in bench/README.md, between its ``all-results`` markers.
``--quick`` runs fewer rounds (a smoke run, not numbers to publish). Exit 1 when a budget
is blown.

Run it on a quiet machine: the budgets are ratios to ``python -c pass`` measured in the
same run, but two cores shared with other work still skew them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
START, END = "<!-- all-results:start -->", "<!-- all-results:end -->"


class Row(NamedTuple):
    bench: str
    case: str
    result: str
    budget: str
    ok: bool | None  # None: no budget


def _ratio_rows(bench: str, data: dict[str, Any]) -> list[Row]:
    """bench_cli / bench_completion: median and ratio to ``python -c pass``."""
    rows = []
    for r in data["results"]:
        budget = r.get("budget")
        rows.append(
            Row(
                bench,
                r["case"],
                f"{r['median_ms']:.1f} ms, {r['ratio']:.2f}×",
                f"≤ {budget:g}×" if budget else "",
                r["ok"] if budget else None,
            )
        )
    return rows


def _over_list_rows(bench: str, data: dict[str, Any]) -> list[Row]:
    """bench_render / bench_snapshot: extra cost over ``list --json``."""
    rows = []
    limit = data["budget_over_list"]
    for r in data["results"]:
        extra = r.get("over_list")
        shown = f"{r['median_ms']:.1f} ms, {r['ratio']:.2f}×"
        if extra is None:
            rows.append(Row(bench, r["case"], shown, "", None))
            continue
        budgeted = not r["case"].startswith("snapshot save")
        rows.append(
            Row(
                bench,
                r["case"],
                f"{shown} ({extra:+.2f}× over list)",
                f"≤ +{limit:g}× over list" if budgeted else "",
                r["ok"] if budgeted else None,
            )
        )
    return rows


def _validate_rows(bench: str, data: dict[str, Any]) -> list[Row]:
    return [
        Row(
            bench,
            r["case"],
            f"{r['median_s']:.2f} s ({r['file_mb']:g} MB), {r['ratio']:g}×",
            f"≤ {r['budget_s']:g} s" if r["budget_s"] else "",
            r["ok"] if r["budget_s"] else None,
        )
        for r in data["results"]
    ]


def _health_rows(bench: str, data: list[dict[str, Any]]) -> list[Row]:
    rows = []
    for r in data:
        peer = f", `claude mcp list` {r['peer_s']:.2f} s" if r.get("peer_s") is not None else ""
        result = (
            f"mcpctl {r['mcpctl_s']:.2f} s (sequential SDK {r['sequential_s']:.2f} s{peer}); "
            f"{r['healthy']}/{r['n']} healthy"
        )
        ok: bool | None = None
        budget = ""
        if r["n"] == 20:
            budget = "≤ 0.6× sequential, ≤ 1.0× `claude mcp list`"
            ok = r["vs_sequential"] <= 0.6 and (r["vs_peer"] is None or r["vs_peer"] <= 1.0)
            if r["vs_peer"] is None:
                budget += " (peer not installed)"
        rows.append(Row(bench, f"{r['n']} × {r['server']}", result, budget, ok))
    return rows


def _registry_rows(bench: str, data: dict[str, Any]) -> list[Row]:
    rows = []
    for key, value in data["results"].items():
        budget = data["budgets"].get(key)
        unit = "ms" if key.endswith("_ms") else "s" if key.endswith("_s") else ""
        shown = f"{value:.3f} {unit}".strip() if unit else f"{value:g}"
        rows.append(
            Row(
                bench,
                key,
                shown,
                f"≤ {budget:g} {unit}" if budget else "",
                value <= budget if budget else None,
            )
        )
    return rows


def _watch_rows(bench: str, data: dict[str, Any]) -> list[Row]:
    return [
        Row(
            bench,
            f"{r['way']}, debounce {r['debounce']:g} s",
            f"p95 {r['p95_ms']:.0f} ms (median {r['median_ms']:.0f}, max {r['max_ms']:.0f})",
            f"p95 ≤ {r['budget_ms']} ms",
            r["ok"],
        )
        for r in data["results"]
    ]


def _eras_rows(bench: str, data: list[dict[str, Any]]) -> list[Row]:
    rows = []
    for r in data:
        parts = [f"auto {r['auto_s']:.2f} s, legacy {r['legacy_s']:.2f} s"]
        if "ratio" in r:
            parts[0] += f" ({r['ratio']:.2f}×)"
        if "first_contact_s" in r:
            parts.append(f"first contact {r['first_contact_s']:.2f} s")
        if "peer_s" in r:
            parts.append(f"`claude mcp list` {r['peer_s']:.2f} s ({r['vs_peer']:.2f}×)")
        budget, ok = "", None
        if "budget" in r:
            budget = f"auto ≤ {r['budget']:g}× legacy"
            ok = r["ratio"] <= r["budget"]
            if "peer_budget" in r:
                budget += f", ≤ {r['peer_budget']:g}× `claude mcp list`"
                ok = ok and r["vs_peer"] <= r["peer_budget"]
        rows.append(Row(bench, r["case"], "; ".join(parts), budget, ok))
    return rows


def _doctor_name_rows(bench: str, data: dict[str, Any]) -> list[Row]:
    """bench_doctor_name: health NAME and doctor NAME, and what doctor adds."""
    rows = [
        Row(bench, r["case"], f"{r['median_ms']:.1f} ms, {r['ratio']:.2f}×", "", None)
        for r in data["results"]
    ]
    budget = data["budget_added_ms"]
    rows.append(
        Row(bench, "doctor NAME − health NAME", f"{data['added_ms']:+.1f} ms",
            f"≤ +{budget:.0f} ms", data["ok"])
    )  # fmt: skip
    return rows


Adapter = Callable[[str, Any], list[Row]]
#: name -> (script, extra arguments, extra arguments with --quick, adapter)
BENCHES: dict[str, tuple[str, list[str], list[str], Adapter]] = {
    "cli": ("bench_cli.py", [], ["--runs", "5"], _ratio_rows),
    "completion": ("bench_completion.py", [], ["--runs", "5"], _ratio_rows),
    "validate": ("bench_validate.py", [], ["--runs", "1"], _validate_rows),
    "registry": ("bench_registry.py", [], [], _registry_rows),
    "render": ("bench_render.py", [], ["--runs", "3"], _over_list_rows),
    "snapshot": ("bench_snapshot.py", [], ["--runs", "3"], _over_list_rows),
    "watch": ("bench_watch.py", [], ["--edits", "10"], _watch_rows),
    "health": ("bench_health.py", [], ["--sizes", "1,20", "--repeat", "1"], _health_rows),
    "eras": ("bench_eras.py", [], ["--n", "5", "--repeat", "1"], _eras_rows),
    "doctor": ("bench_doctor_name.py", [], ["--runs", "3"], _doctor_name_rows),
}


def machine() -> str:
    """One line about where the numbers come from."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(re.findall(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())[0])
        memory = f", {kib / 1024**2:.0f} GiB"
    except (OSError, IndexError):
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores{memory}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; {datetime.date.today().isoformat()}"
    )


def table(rows: list[Row], header: str) -> str:
    verdict = {True: "ok", False: "**over**", None: ""}
    lines = [header, "", "| benchmark | case | result | budget | |", "|---|---|---|---|---|"]
    lines += [f"| {r.bench} | {r.case} | {r.result} | {r.budget} | {verdict[r.ok]} |" for r in rows]
    return "\n".join(lines) + "\n"


def write_readme(text: str) -> None:
    readme = README.read_text()
    if START not in readme or END not in readme:
        raise SystemExit(f"{README} has no {START} ... {END} block to replace")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    README.write_text(f"{head}{START}\n{text}{END}{tail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated: " + ",".join(BENCHES))
    parser.add_argument("--quick", action="store_true", help="fewer rounds: a smoke run")
    parser.add_argument("--write", action="store_true", help="update bench/README.md")
    opts = parser.parse_args()
    wanted = opts.only.split(",") if opts.only else list(BENCHES)
    unknown = [w for w in wanted if w not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    rows: list[Row] = []
    took: list[str] = []
    for name in wanted:
        script, args, quick, adapter = BENCHES[name]
        argv = [sys.executable, str(HERE / script), "--json", *args, *(quick if opts.quick else [])]
        print(f"running {script} ...", file=sys.stderr, flush=True)
        started = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, timeout=3600, check=False)
        took.append(f"{name} {time.monotonic() - started:.0f} s")
        if done.returncode != 0 or not done.stdout.strip():
            rows.append(Row(name, "(failed to run)", done.stderr.strip()[-200:], "", False))
            continue
        rows.extend(adapter(name, json.loads(done.stdout)))
    header = f"Machine: {machine()}. Run time: {', '.join(took)}."
    text = table(rows, header)
    print(text)
    if opts.write:
        write_readme(text)
    return 1 if any(r.ok is False for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
