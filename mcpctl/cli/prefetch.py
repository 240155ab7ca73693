"""Fetching the servers' packages ahead of a client's first start: prefetch."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.asyncrun import run_async
from mcpctl.cli.common import GROUP
from mcpctl.cli.flagvalues import duration_option
from mcpctl.cli.output import STATE, Table
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.prefetch.fetch import FetchProgress
    from mcpctl.prefetch.results import PrefetchReport

app = typer.Typer()

STYLES = {"fetched": "green", "cached": "green", "failed": "bold red", "skipped": "dim"}


@app.command("prefetch")
def prefetch(
    names: list[str] | None = typer.Argument(
        None, metavar="[NAME]...", help="Servers (default: every stdio server)."
    ),
    group: list[str] = GROUP,
    pinned: str | None = typer.Option(
        None,
        "--pinned",
        metavar="LOCK",
        help="Fetch exactly the versions this lock file records (snapshot save --packages), "
        "each checked against its integrity before any of its code runs.",
    ),
    jobs: int = typer.Option(4, "--jobs", "-j", min=1, metavar="N", help="Packages at once."),
    timeout: str = typer.Option(
        "10m",
        "--timeout",
        metavar="DURATION",
        help="The time one package manager may take: 10m, 90s; a bare number is seconds.",
    ),
) -> int:
    """Fetch the packages of stdio servers where their runners look, so that a client's
    first start does not download them while it waits for the server.

    For npx it runs npm as npx will (npm exec --package=PKG@V -- node -e 0): the package
    lands in npm's cache (npx's _npx folder for exactly that spec), and a later 'npx -y
    PKG@V' starts without the network. For uvx it runs the same uvx with 'python -S -c 0'
    instead of the server (uv's cache); for 'docker run' it pulls the image unless it is
    here. The cache is the one the client's runner uses: npm_config_cache, UV_CACHE_DIR,
    DOCKER_HOST... from the environment or from the entry's env (only the runner's own
    variables reach it, never the server's secrets). Install scripts run only when the
    package has some (npm runs first with --ignore-scripts, then again with scripts). A
    package manager runs with the same consent as the server it installs. Disabled and
    remote servers are skipped with a note. Several packages at once (--jobs), with a
    progress bar per package on a terminal.

    With --pinned LOCK, the versions the lock records are fetched, and each is checked
    against the lock's integrity (npm's dist.integrity, a wheel's sha256) before any of its
    code runs; a mismatch fails, naming the package, and is removed from the cache.

    Exit 0 when every package is fetched (or was already there), 1 when one failed (naming
    it and the runner's reason), 2 for an unknown name or group, 3 when a registry cannot
    be reached (at once, not after npm's retries). SIGINT, SIGTERM or SIGHUP stop every
    package manager and what it started.

    Examples:

      mcpctl prefetch

      mcpctl prefetch github docs

      mcpctl prefetch --group ci --pinned mcps.lock.json

      mcpctl prefetch --json | jq -r '.data.packages[] | select(.status == "failed") | .reason'
    """
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.prefetch.fetch import prefetch_async

    warnings: list[str] = []
    seconds = duration_option(timeout, warnings)
    assert seconds is not None
    with _bars() as on_progress:
        report: PrefetchReport = run_async(
            lambda: prefetch_async(
                names or (),
                STATE.config,
                groups=group,
                pinned=pinned,
                jobs=jobs,
                timeout=seconds,
                secrets=keyring_source(),
                on_progress=on_progress,
            ),
            "Fetching packages",
            spinner=False,
        )
    errors = [_error(item) for item in report.failed]
    result = Result(
        "prefetch", report.to_dict(), warnings + report.warnings, errors, report.exit_code
    )
    # Integrities are public digests, not secrets, however much they look like tokens.
    digests = [i.integrity for i in report.items if i.integrity]
    code = output.emit(result, lambda _: render(report), keep=digests)
    output.info(f"prefetch: {summary(report)}")
    return code


def _error(item: Any) -> dict[str, object]:
    who = ", ".join(item.servers)
    if item.offline:
        hint = "check the network (or the registry the runner's settings name), then run again"
        code = "offline"
    else:
        hint = "run the server's command by hand to see all of its runner's output"
        code = "prefetch_failed"
    return {"code": code, "message": f"{who}: {item.package}: {item.reason}", "hint": hint}


def render(report: PrefetchReport) -> Table:
    """A row per package (or skipped server)."""
    rows = [
        [", ".join(i.servers), i.runner or "-", i.package or "-", i.status,
         (i.reason or "") if i.status in ("failed", "skipped") else (i.where or "")]
        for i in report.items
    ]  # fmt: skip
    return Table(["SERVER", "RUNNER", "PACKAGE", "STATUS", "DETAIL"], rows,
                 empty="no server to fetch", styles={3: STYLES})  # fmt: skip


def summary(report: PrefetchReport) -> str:
    """``2 fetched, 1 cached, 1 failed, 3 skipped`` (the counts that are not zero)."""
    counts = report.to_dict()["counts"]
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "nothing to fetch"


def _short(line: str, width: int = 36) -> str:
    """A runner's line, short enough for a bar: npm's ``http fetch GET 200 URL 12ms`` as
    ``GET ajv-8.17.1.tgz``."""
    import re
    from urllib.parse import unquote

    fetched = re.match(r"npm http (?:fetch )?(GET|cache) (?:\d{3} )?(\S+)", line)
    if fetched:
        what = unquote(fetched.group(2).rstrip("/").rsplit("/", 1)[-1])
        line = f"{fetched.group(1)} {what}"
    return line if len(line) <= width else line[: width - 1] + "…"


@contextlib.contextmanager
def _bars() -> Iterator[Callable[[FetchProgress], None] | None]:
    """A progress bar per package on stderr, on a terminal for a person; else nothing."""
    from mcpctl.cli.progress import wanted

    if not wanted():
        yield None
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from mcpctl.cli.output import clean

    bar = Progress(
        SpinnerColumn(), TextColumn("{task.fields[package]}"), BarColumn(bar_width=16),
        TextColumn("[dim]{task.description}"), TimeElapsedColumn(),
        console=Console(stderr=True, highlight=False), transient=True, expand=False,
        redirect_stdout=False,
    )  # fmt: skip
    tasks: dict[str, Any] = {}
    lines: dict[str, int] = {}

    def update(event: FetchProgress) -> None:
        package = escape(clean(event.package, one_line=True))
        if event.package not in tasks:
            tasks[event.package] = bar.add_task("", total=None, package=package)
        task = tasks[event.package]
        if event.status is not None:
            bar.update(task, total=1, completed=1, description=escape(event.status))
            return
        lines[event.package] = lines.get(event.package, 0) + 1
        text = _short(clean(event.text, one_line=True))
        bar.update(task, description=escape(f"{lines[event.package]} · {text}"))

    with bar:
        yield update
