"""Talking to servers: health (and --watch), tools, call."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.output import STATE, Lines, Table
from mcpctl.errors import McpctlError, OutsideError, UsageError
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.probe.health import ProbeResult, ToolInfo

app = typer.Typer()


class Scope(StrEnum):
    """Which servers."""

    all = "all"
    internal = "internal"
    external = "external"


class Prefix(StrEnum):
    """How a host names aggregated tools."""

    underscore = "underscore"
    colon = "colon"
    none = "none"


INTERNAL_ROOT = typer.Option(
    None,
    "--internal-root",
    envvar="MCPCTL_INTERNAL_ROOT",
    metavar="DIR",
    help="Also probe internal MCPs: sub-folders of DIR whose package.json has a manifest.",
)
MANIFEST_KEY = typer.Option(
    "annabelle", "--manifest-key", metavar="KEY", help="package.json key of the manifest."
)


def _targets(
    names: list[str], scope: Scope, internal_root: Path | None, manifest_key: str
) -> tuple[list[tuple[str, ServerEntry, Any]], list[str]]:
    from mcpctl.config.siblings import discover_internal, select_targets
    from mcpctl.config.loader import build_config, read_document
    from mcpctl.paths import Paths

    doc = read_document(Paths.from_env(STATE.config).config)
    config, problems = build_config(doc.data)
    warnings = [p.message for p in problems]
    internal: dict[str, ServerEntry] = {}
    if internal_root is not None:
        internal, found = discover_internal(internal_root, manifest_key)
        warnings += found
    targets, more = select_targets(config.entries, internal, scope=scope.value, names=names)
    return targets, warnings + more


def _run(coro_fn: Any, *args: Any, what: str) -> Any:
    """Run async work, with a spinner on a terminal when it may take a while."""
    import logging

    import anyio

    # The SDK logs connection failures with tracebacks; mcpctl reports them itself.
    sdk_log = logging.getLogger("mcp")
    if STATE.verbose:
        logging.basicConfig(level=logging.DEBUG, format="debug: %(name)s: %(message)s")
    else:
        sdk_log.addHandler(logging.NullHandler())
        sdk_log.propagate = False

    if sys.stderr.isatty() and not STATE.json and not STATE.quiet:
        from rich.console import Console

        with Console(stderr=True).status(what):
            return anyio.run(coro_fn, *args)
    return anyio.run(coro_fn, *args)


def _status(r: ProbeResult) -> str:
    if r.healthy:
        return "healthy"
    return "unavailable" if not r.available else "unhealthy"


def _health_data(results: list[ProbeResult], scope: Scope) -> dict[str, Any]:
    healthy = sum(r.healthy for r in results)
    return {
        "scope": scope.value,
        "summary": {"total": len(results), "healthy": healthy, "unhealthy": len(results) - healthy},
        "mcps": [r.to_dict() for r in results],
    }


@app.command("health")
def health(
    names: list[str] | None = typer.Argument(
        None, metavar="[NAME]...", help="Servers (default: all enabled)."
    ),
    scope: Scope = typer.Option(Scope.all, "--scope", help="all, internal or external."),
    timeout: float | None = typer.Option(
        None,
        "--timeout",
        metavar="S",
        min=0.1,
        help="Per-server timeout in seconds (default: each entry's).",
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        min=1,
        metavar="N",
        help="Servers probed at once (default: CPUs+1 spawned, 4 per CPU remote).",
    ),
    watch: bool = typer.Option(False, "--watch", help="Re-probe periodically; print only changes."),
    interval: float = typer.Option(
        60.0, "--interval", min=0.1, metavar="S", help="Seconds between rounds with --watch."
    ),
    internal_root: Path | None = INTERNAL_ROOT,
    manifest_key: str = MANIFEST_KEY,
) -> int:
    """Probe servers: spawn or connect, initialize, list tools, ping.

    Every enabled server is probed at once (bounded), each within its own timeout. Exit 0
    when all are healthy, 1 otherwise. With --watch, prints one line (or JSON object) per
    change until Ctrl-C.

    Examples:

      mcpctl health

      mcpctl health github time --timeout 10 --json

      mcpctl health --watch --interval 30 --json >> health.jsonl
    """
    from mcpctl.probe.health import probe_all

    targets, warnings = _targets(names or [], scope, internal_root, manifest_key)
    if watch:
        return _watch(targets, warnings, interval, timeout, concurrency)
    results: list[ProbeResult] = _run(
        lambda: probe_all(targets, concurrency=concurrency, timeout=timeout),
        what=f"Probing {len(targets)} server{'s' if len(targets) != 1 else ''}…",
    )
    data = _health_data(results, scope)
    exit_code = 0 if all(r.healthy for r in results) else 1
    code = output.emit(
        Result("health", data, warnings, exit_code=exit_code), lambda _: _health_table(results)
    )
    _health_notes(results)
    return code


def _health_table(results: list[ProbeResult]) -> Table:
    rows = []
    for r in results:
        latency = f"{r.latency_ms.get('total', 0):.0f} ms"
        tools = str(r.tool_count) if r.tool_count is not None else "-"
        err = f"{r.error.code}: {r.error.message}" if r.error else ""
        rows.append([r.name, r.type, r.transport, _status(r), tools, latency, err])
    columns = ["NAME", "TYPE", "TRANSPORT", "STATUS", "TOOLS", "LATENCY", "ERROR"]
    return Table(columns, rows, "no servers to probe")


def _health_notes(results: list[ProbeResult]) -> None:
    """Hints, stderr tails and the summary, after the table, on stderr (diagnostics)."""
    for r in results:
        if r.error and r.error.hint:
            output.warn(f"{r.name}: {r.error.hint}")
        for line in r.stderr[-5:]:
            output.warn(f"{r.name} stderr: {line}")
    if results:
        healthy = sum(r.healthy for r in results)
        noun = "server" if len(results) == 1 else "servers"
        output.info(f"{len(results)} {noun}: {healthy} healthy, {len(results) - healthy} unhealthy")


def _watch(
    targets: list[tuple[str, ServerEntry, Any]],
    warnings: list[str],
    interval: float,
    timeout: float | None,
    concurrency: int | None,
) -> int:
    import signal
    from datetime import datetime

    import anyio

    from mcpctl.probe.health import probe_all

    for w in warnings:
        output.warn(w)

    def emit_line(event: dict[str, Any]) -> None:
        if STATE.json:
            sys.stdout.write(json.dumps(event) + "\n")
        else:
            err = event.get("error") or {}
            reason = f" ({err.get('code')}: {err.get('message')})" if err else ""
            was = event["previous"] or "new"
            sys.stdout.write(
                f"{event['time']} {event['name']} {was} -> {event['status']}{reason}\n"
            )
        sys.stdout.flush()

    async def loop() -> None:
        last: dict[str, str] = {}
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as tg:

                async def stop_on_signal() -> None:
                    async for _ in signals:
                        tg.cancel_scope.cancel()
                        return

                tg.start_soon(stop_on_signal)
                while True:
                    results = await probe_all(targets, concurrency=concurrency, timeout=timeout)
                    now = datetime.now().astimezone().isoformat(timespec="seconds")
                    for r in results:
                        status = _status(r)
                        if last.get(r.name) != status:
                            emit_line({
                                "time": now, "name": r.name, "status": status,
                                "previous": last.get(r.name), "healthy": r.healthy,
                                "error": r.error.to_dict() if r.error else None,
                            })  # fmt: skip
                            last[r.name] = status
                    await anyio.sleep(interval)

    anyio.run(loop)
    return 0


def _probe_one(name: str, timeout: float | None) -> tuple[ServerEntry, ProbeResult]:
    from mcpctl.probe.health import probe

    targets, _ = _targets([name], Scope.all, None, "annabelle")
    _, entry, kind = targets[0]
    result: ProbeResult = _run(
        lambda: probe(name, entry, kind=kind, timeout=timeout), what=f"Connecting to {name}…"
    )
    return entry, result


def _failure(name: str, result_error: Any, stderr: list[str]) -> McpctlError:
    code = result_error.code
    for line in stderr[-5:]:
        output.warn(f"{name} stderr: {line}")
    cls = UsageError if code in ("command_not_found", "missing_variable") else OutsideError
    err = cls(f"{name}: {result_error.message}", hint=result_error.hint)
    err.code = code
    return err


@app.command("tools")
def tools(
    names: list[str] | None = typer.Argument(
        None, metavar="[NAME]...", help="Servers (default: all enabled)."
    ),
    prefix: Prefix = typer.Option(
        Prefix.none,
        "--prefix",
        help="Aggregated catalog: underscore (mcp_<server>_<tool>) or colon (<server>:<tool>).",
    ),
    show_all: bool = typer.Option(False, "--all", help="Include tools hidden by tools.allow/deny."),
    timeout: float | None = typer.Option(
        None, "--timeout", metavar="S", min=0.1, help="Per-server timeout in seconds."
    ),
    internal_root: Path | None = INTERNAL_ROOT,
    manifest_key: str = MANIFEST_KEY,
) -> int:
    """List the tools of one or all servers, with a summary of their parameters.

    With --prefix, the aggregated catalog a host would see, honouring each entry's
    tools.allow/deny, and any name collision (exit 1).

    Examples:

      mcpctl tools time

      mcpctl tools --prefix underscore --json
    """
    from mcpctl.probe.naming import build_catalog
    from mcpctl.probe.health import probe_all

    targets, warnings = _targets(names or [], Scope.all, internal_root, manifest_key)
    results: list[ProbeResult] = _run(
        lambda: probe_all(targets, timeout=timeout),
        what=f"Listing tools of {len(targets)} server{'s' if len(targets) != 1 else ''}…",
    )
    filters = {name: entry.tools for name, entry, _ in targets}
    ok = [r for r in results if r.error is None]
    for r in results:
        if r.error is not None:
            warnings.append(f"{r.name}: {r.error.code}: {r.error.message}")
    catalog, collisions = build_catalog(
        ((r.name, [t.name for t in r.tools], filters.get(r.name)) for r in ok), prefix.value
    )
    info = {(r.name, t.name): t for r in ok for t in r.tools}
    rows_data = [
        {
            "name": c.name, "server": c.server, "tool": c.tool, "exposed": c.exposed,
            "description": info[(c.server, c.tool)].description,
            "params": info[(c.server, c.tool)].params_summary(),
            "input_schema": info[(c.server, c.tool)].input_schema,
        }
        for c in catalog
        if c.exposed or show_all
    ]  # fmt: skip
    for col in collisions:
        sources = ", ".join(f"{s}/{t}" for s, t in col.sources)
        warnings.append(f"name collision: {col.name!r} is exposed by {sources}")
    data = {
        "prefix": prefix.value,
        "tools": rows_data,
        "collisions": [
            {"name": c.name, "sources": [list(s) for s in c.sources]} for c in collisions
        ],
        "failed": [{"name": r.name, "error": r.error.to_dict()} for r in results if r.error],
    }
    exit_code = 1 if collisions or len(ok) != len(results) else 0

    def human(_: Result) -> Table:
        cols = ["TOOL", "SERVER", "PARAMS", "DESCRIPTION"]
        rows = [
            [
                str(d["name"]) + ("" if d["exposed"] else " (hidden)"),
                str(d["server"]),
                str(d["params"]),
                str(d["description"] or "").split("\n")[0],
            ]
            for d in rows_data
        ]
        return Table(cols, rows, "no tools")

    return output.emit(Result("tools", data, warnings, exit_code=exit_code), human)


def _parse_args(pairs: list[str], args_json: str | None, schema: dict[str, Any]) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    if args_json is not None:
        if args_json.startswith("@"):
            try:
                text = Path(args_json[1:]).read_text("utf-8")
            except OSError as exc:
                raise UsageError(f"cannot read {args_json[1:]}: {exc.strerror or exc}") from None
        else:
            text = args_json
        try:
            loaded = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"--args-json is not valid JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise UsageError("--args-json must be a JSON object of arguments")
        arguments.update(loaded)
    props = schema.get("properties") or {}
    for raw in pairs:
        key, found, value = raw.partition("=")
        if not found or not key:
            raise UsageError(f"--arg {raw!r} is not in the form key=value")
        arguments[key] = _coerce(value, props.get(key))
    return arguments


def _read_stdin_json() -> str:
    if sys.stdin.isatty():
        raise UsageError(
            "--args-json - reads the arguments from stdin, but stdin is a terminal",
            hint="pipe the JSON in, or pass --args-json '{...}'",
        )
    return sys.stdin.read()


def _coerce(value: str, spec: Any) -> Any:
    """``--arg`` values are strings unless the tool's schema asks for another JSON type."""
    kind = spec.get("type") if isinstance(spec, dict) else None
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


@app.command("call")
def call(
    name: str = typer.Argument(..., help="The server."),
    tool: str = typer.Argument(..., help="The tool to call."),
    arg: list[str] = typer.Option(
        [],
        "--arg",
        "-a",
        metavar="KEY=VALUE",
        help="An argument (repeatable); typed by the tool's schema.",
    ),
    args_json: str | None = typer.Option(
        None,
        "--args-json",
        metavar="JSON|@FILE|-",
        help="All arguments as a JSON object, from a file (@) or stdin (-).",
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", metavar="S", min=0.1, help="Seconds for the whole call (default 60)."
    ),
) -> int:
    """Call a tool and print its result (text as text, structured content as JSON).

    A tool that reports an error exits 1 with the server's message.

    Examples:

      mcpctl call time get_current_time --arg timezone=Europe/Paris

      mcpctl call github search_repositories --args-json '{"query": "mcp"}' --json
    """
    from mcpctl.probe.health import ProbeFailed, ToolNotFound, call_tool

    targets, _ = _targets([name], Scope.all, None, "annabelle")
    _, entry, _ = targets[0]

    def prepare(info: ToolInfo) -> dict[str, Any]:
        return _parse_args(arg, args_json, info.input_schema)

    if args_json == "-":
        # Read stdin now, before connecting: a server must not see our stdin.
        args_json = _read_stdin_json()
    try:
        res = _run(
            lambda: call_tool(name, entry, tool, prepare, timeout=timeout),
            what=f"Calling {name}/{tool}…",
        )
    except ProbeFailed as exc:
        raise _failure(name, exc.error, exc.stderr) from None
    except ToolNotFound as exc:
        from mcpctl.config.model import suggest

        guess = suggest(tool, exc.available) if exc.available else None
        raise UsageError(
            f"server {name!r} has no tool {tool!r}",
            hint=f"did you mean {guess!r}?" if guess else f"run 'mcpctl tools {name}'",
        ) from None
    data = {"server": name, "tool": tool, "is_error": res.is_error, "text": res.text,
            "structured": res.structured, "content": res.content}  # fmt: skip
    if res.is_error:
        message = f"Error calling MCP server: {res.text or 'the tool reported an error'}"
        err = {"code": "tool_error", "message": message, "hint": None}
        result = Result("call", data, errors=[err], exit_code=1)
        return output.emit(result)

    def human(_: Result) -> Lines:
        if res.structured is not None:
            return Lines([json.dumps(res.structured, indent=2, ensure_ascii=False)])
        return Lines([res.text])

    return output.emit(Result("call", data), human)
