"""Tools of servers: tools (the catalog a host sees) and call."""

from __future__ import annotations

import json
from contextlib import nullcontext
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.auth.secrets import keyring_source
from mcpctl.cli import output
from mcpctl.cli.asyncrun import run_async
from mcpctl.cli.common import (
    GROUP,
    INTERNAL_ROOT,
    MANIFEST_KEY,
    PROTOCOL,
    Protocol,
    era_options,
    missing_config,
    paths,
    require_trusted,
    targets,
)
from mcpctl.cli.completion import remember_probed
from mcpctl.cli.flagvalues import duration_option, parse_pairs
from mcpctl.cli.output import STATE, Lines, Table
from mcpctl.cli.progress import Ticker, progress
from mcpctl.errors import ExitCode, ToolError, UsageError
from mcpctl.results import Result
from mcpctl.text import plural

if TYPE_CHECKING:
    from mcpctl.probe.health import ProbeResult
    from mcpctl.probe.tools import ToolInfo

app = typer.Typer()


class Prefix(StrEnum):
    """How a host names aggregated tools."""

    underscore = "underscore"
    colon = "colon"
    none = "none"


class Collisions(StrEnum):
    """What a name collision does to the exit code."""

    auto = "auto"
    warn = "warn"
    error = "error"


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
    collisions_policy: Collisions = typer.Option(
        Collisions.auto,
        "--collisions",
        help="Two tools under one name: error (exit 1) or warn. auto: error under --prefix "
        "underscore|colon, a warning for bare names (a host that prefixes does not see those "
        "collide).",
    ),
    cached: bool = typer.Option(
        False,
        "--cached",
        help="Serve a server's last listing while it says it is fresh (its ttlMs), without "
        "starting it; probe the others (a stale listing is used, with its age, when that fails).",
    ),
    timeout: str | None = typer.Option(
        None,
        "--timeout",
        metavar="DURATION",
        help="Per-server timeout: 10s, 500ms; a bare number is seconds.",
    ),
    group: list[str] = GROUP,
    budget: int | None = typer.Option(
        None,
        "--budget",
        min=0,
        metavar="TOKENS",
        help="Exit 1 when the exposed tools' definitions cost more tokens than this, "
        "all servers listed together (a CI gate).",
    ),
    protocol: Protocol | None = PROTOCOL,
    internal_root: Path | None = INTERNAL_ROOT,
    manifest_key: str = MANIFEST_KEY,
) -> int:
    """List the tools of one or all servers, with a summary of their parameters.

    With --prefix, the aggregated catalog a host would see, honouring each entry's
    tools.allow/deny; a name that two tools still share there is an error (exit 1). Without
    --prefix, two servers sharing a bare tool name is a warning: it matters only to a host
    that does not prefix (--collisions error makes it fail). With --cached, servers whose
    last listing is still fresh (servers of the stateless protocol era say for how long) are
    not started at all.

    TASK says that a tool runs as a task (MCP 2025-11-25): required (call waits for the
    task), or optional.

    TOKENS is what each tool's definition costs the model: the o200k_base tokens of
    {"name", "description", "input_schema"} as compact JSON, the name as exposed. Each
    server's total counts its exposed tools only. --budget exits 1 when the exposed tools
    of all the servers listed cost more, naming each server's share. Counting ends by the
    timeout; what is left is estimated from its length and marked ~.

    Examples:

      mcpctl tools time

      mcpctl tools --prefix underscore --json

      mcpctl tools --cached

      mcpctl tools --group work --prefix underscore

      mcpctl tools --budget 20000

      mcpctl tools --collisions error
    """
    from mcpctl.probe.costs import by_cost
    from mcpctl.probe.health import probe_all
    from mcpctl.probe.listcache import ListingCache, cached_or_probed
    from mcpctl.probe.toolsreport import tools_report

    started = STATE.started  # the deadline runs from the command's start
    warnings: list[str] = []
    seconds = duration_option(timeout, warnings)
    chosen, more = targets(names or [], "all", internal_root, manifest_key, group, gate=False)
    warnings += more + missing_config()
    mode, eras = era_options(protocol)
    listings = ListingCache.in_dir(paths().cache_dir) if cached else None
    # Every listing fresh: no server to start, so no event loop either.
    fresh = listings.all_fresh(chosen) if listings is not None else None
    results: list[ProbeResult] = fresh if fresh is not None else []
    if fresh is None:
        require_trusted(None, [n for n, _, kind in chosen if kind == "external"])
        with progress(f"Listing the tools of {plural(len(chosen), 'server')}", len(chosen)) as tick:
            options: dict[str, Any] = {
                "timeout": seconds, "secrets": keyring_source(), "protocol": mode, "eras": eras,
                "on_result": lambda _: tick.advance(),
            }  # fmt: skip
            results = run_async(
                lambda: (
                    cached_or_probed(chosen, listings, **options)
                    if listings is not None
                    else probe_all(chosen, **options)
                ),
                what="",
                spinner=False,
            )
    ok = [r for r in results if r.error is None]
    if not cached:  # cached_or_probed kept what it probed
        remember_probed(ok, chosen)  # for `mcpctl call NAME <TAB>` and `tools --cached`
    report = tools_report(
        results, chosen, prefix.value, collisions=collisions_policy.value, show_all=show_all,
        budget=budget, cache_dir=paths().cache_dir, started=started, timeout=seconds,
    )  # fmt: skip
    warnings += report.warnings
    totals, guessed_servers = report.totals, report.estimated_servers
    rows_data = report.data["tools"]
    exit_code = ExitCode.FAILED if report.failed else ExitCode.OK

    def human(_: Result) -> Table:
        cols = ["TOOL", "SERVER", "PARAMS", "DESCRIPTION", "TOKENS", "TASK"]
        rows = [
            [
                str(d["name"]) + ("" if d["exposed"] else " (hidden)"),
                str(d["server"]),
                str(d["params"]),
                str(d["description"] or "").split("\n")[0],
                ("~" if d["tokens_estimated"] else "") + f"{d['tokens']:,}",
                str(d["task_support"] or ""),
            ]
            for d in rows_data
        ]
        about = "~" if guessed_servers else ""
        shares = ", ".join(
            f"{name} {'~' if name in guessed_servers else ''}{count:,}"
            for name, count in by_cost(totals)
        )
        title = f"{about}{sum(totals.values()):,} tokens ({report.encoding})" + (
            f": {shares}" if shares else ""
        )
        return Table(cols, rows, "no tools", title=title if rows else None)

    result = Result("tools", report.data, warnings, report.errors, exit_code=exit_code)
    return output.emit(result, human)


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
    timeout: str | None = typer.Option(
        None,
        "--timeout",
        metavar="DURATION",
        help="The whole call: 30s, 2m; a bare number is seconds (default 60s).",
    ),
    inputs: list[str] = typer.Option(
        [],
        "--input",
        "-i",
        metavar="FIELD=VALUE",
        help="Answer a field of a form the server asks for mid-call (repeatable).",
    ),
    input_accept: bool = typer.Option(
        False,
        "--input-accept",
        help="Accept a form that asks for nothing: no fields (a yes/no confirmation), or only "
        "optional ones that --input leaves empty.",
    ),
    no_wait: bool = typer.Option(
        False,
        "--no-wait",
        help="Print the task a server starts (its id and status) instead of waiting.",
    ),
    structured: bool = typer.Option(
        False,
        "--structured",
        help="Print the result's structured content as JSON instead of its text "
        "(exit 2 when it has none).",
    ),
    protocol: Protocol | None = PROTOCOL,
) -> int:
    """Call a tool and print its result: its text, as a host shows it.

    Arguments are checked against the tool's input schema first (exit 2 when they do not
    fit). Images, audio and resources are one line each in text output and whole in
    --json. Structured content is printed (as JSON) when the result has no other content,
    or with --structured; --json carries both. A tool that reports an error exits 1 with
    the server's message.

    A server may ask for input while the call runs (a form, or a page to visit). Only you
    answer: --input answers form fields by name, --input-accept a form with no fields (a
    yes/no confirmation); on a terminal every other form is shown and asked for, a
    confirmation as a yes/no question. Elsewhere (piped, --json, CI) an unanswered request
    exits 2 listing what was asked, and the server is told cancel. An --input that no form
    asked for exits 2 (with the closest field); a page to visit is shown only at an https
    address (or http on this machine), any other is declined with a warning.

    A server may run the call as a task (the tasks extension; in the handshake era, a tool
    whose TASK is required, or optional with --no-wait): mcpctl polls it to its end within
    --timeout, showing its status on a terminal, and cancels it on Ctrl-C or timeout. A task
    that fails exits 3 with the server's message. --no-wait prints the task (its id and
    status; "task" in --json) instead of waiting.

    Examples:

      mcpctl call time get_current_time --arg timezone=Europe/Paris

      mcpctl call github search_repositories --args-json '{"query": "mcp"}' --json

      mcpctl call weather forecast --arg city=Rome --structured

      mcpctl call deploy release --input environment=staging --input confirm=yes

      mcpctl call files delete_all --input-accept

      mcpctl call builder build_site --no-wait --json
    """
    from mcpctl.cli.inputanswers import answerer, interactive
    from mcpctl.config.siblings import DEFAULT_MANIFEST_KEY
    from mcpctl.probe.callargs import load_args_json, tool_arguments
    from mcpctl.probe.inputrequests import answers_from
    from mcpctl.probe.tools import call_tool

    warnings: list[str] = []
    seconds = duration_option(timeout, warnings)
    chosen, _ = targets([name], "all", None, DEFAULT_MANIFEST_KEY)
    _, entry, _ = chosen[0]

    # Read (and check) --args-json now, before connecting: a typo should not cost a server
    # start, and a stdio server must not see our stdin.
    given = load_args_json(args_json)

    def prepare(info: ToolInfo) -> dict[str, Any]:
        return tool_arguments(arg, given, info.input_schema)

    answers = answers_from(parse_pairs(inputs, "=", "--input", "FIELD=VALUE"), confirm=input_accept)
    mode, eras = era_options(protocol)
    what = f"Calling {name}/{tool}…"
    # A prompt may come on a terminal: no spinner over it. Else a task's status is shown.
    with progress(what) if not interactive() else nullcontext(Ticker()) as tick:

        def status(text: str) -> None:
            tick.describe(output.clean(f"{what} {text}", one_line=True))

        res = run_async(
            lambda: call_tool(
                name, entry, tool, prepare, timeout=seconds, secrets=keyring_source(),
                protocol=mode, eras=eras, answer=answerer(answers), wait=not no_wait,
                on_status=status,
            ),
            what=what,
            spinner=False,
        )  # fmt: skip
    warnings += [f"{name}: {w}" for w in res.warnings]
    data = {"server": name, "tool": tool, "is_error": res.is_error, "text": res.text,
            "structured": res.structured, "content": res.content, "task": res.task}  # fmt: skip

    def human(_: Result) -> Lines:
        if res.task is not None:
            message = res.task.get("statusMessage")
            return Lines([f"task {res.task['taskId']}: {res.task['status']}"
                          + (f" ({message})" if message else "")])  # fmt: skip
        # As a host shows it: the content; the structured content when asked for or alone.
        if res.structured is not None and (structured or not res.content):
            return Lines([json.dumps(res.structured, indent=2, ensure_ascii=False)])
        return Lines([res.text])

    errors: list[dict[str, object]] = []
    if res.is_error:
        err = ToolError(f"Error calling MCP server: {res.text or 'the tool reported an error'}")
        errors.append(err.to_dict())
    try:  # a value nobody asked for was not sent: the call went on without it
        answers.check_unused()
    except UsageError as unused:
        errors.append(unused.to_dict())
    if errors:
        code = ExitCode.FAILED if len(errors) == 1 and res.is_error else ExitCode.USAGE
        shown = None if res.is_error else human  # an error's text is in its message
        return output.emit(Result("call", data, warnings, errors, exit_code=code), shown)
    if structured and res.task is None and res.structured is None:
        none = UsageError(
            f"{name}/{tool} returned no structured content",
            hint="drop --structured to print its text",
        )
        return output.emit(
            Result("call", data, warnings, [none.to_dict()], exit_code=ExitCode.USAGE)
        )

    return output.emit(Result("call", data, warnings), human)
