"""mcpctl as an MCP server of the agent's client: serve."""

from __future__ import annotations

import sys

import typer

from mcpctl.cli import output
from mcpctl.cli.output import STATE
from mcpctl.errors import ExitCode, UsageError

app = typer.Typer()


@app.command("serve")
def serve(
    http: str | None = typer.Option(
        None,
        "--http",
        metavar="HOST:PORT",
        help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio; loopback "
        "addresses only (127.0.0.1, [::1], localhost); a bearer token is printed once on "
        "stderr.",
    ),
    allow_changes: bool = typer.Option(
        False,
        "--allow-changes",
        help="Also offer the change tools (add, enable, disable, remove, secret set); each "
        "change is shown to the user in the client and waits for their approval.",
    ),
) -> int:
    """Serve mcpctl to an agent as an MCP server (stdio, or --http on this machine).

    The agent can list the servers, probe their health, diagnose one (doctor), list their
    tools with what each costs in tokens, search the registries and diff against a lock
    file; resources: the config (secrets redacted) and the last report. With
    --allow-changes it can also ask for changes: each is shown to the user through the
    client's form (what will be written, what will run) and happens only if they approve;
    a client that cannot ask gets an error instead. A secret's value is typed by the user on
    a page of this machine, never through the chat. Text from servers and registries is
    marked as theirs in every result; no secret value is ever in one.

    A client starts it (mcpctl render claude-code --self --install adds it); stdout is the
    protocol's channel, diagnostics go to stderr. It stops, stopping every server it
    started, when its input ends or on SIGINT, SIGTERM or SIGHUP (exit 0). Exit 2 for bad
    usage (an address that is not loopback), 3 when the port is in use.

    Examples:

      mcpctl serve

      mcpctl serve --allow-changes

      mcpctl --config ~/agents/external-mcps.json serve

      mcpctl serve --http 127.0.0.1:8765

      claude mcp add mcpctl -- mcpctl serve
    """
    from mcpctl.cli.common import paths
    from mcpctl.serve.running import run
    from mcpctl.serve.workspace import Workspace

    if STATE.json:
        raise UsageError(
            "--json does not apply to serve: it speaks MCP (JSON-RPC) on stdout",
            hint="drop --json",
        )
    endpoint = None
    if http is not None:
        from mcpctl.serve.http import loopback_endpoint

        endpoint = loopback_endpoint(http)
    output.configure_logging(warnings=True)
    workspace = Workspace(paths(), allow_changes=allow_changes)
    if endpoint is None and sys.stdin.isatty():
        output.info("mcpctl serve speaks MCP on stdin and stdout: an MCP client starts it "
                    "(docs/serve.md). Ctrl-C stops it.")  # fmt: skip

    def announce(line: str) -> None:
        output.stderr(line)  # the token is shown as it is: the one time it is ever shown

    run(workspace, http=endpoint, announce=announce)
    return ExitCode.OK
