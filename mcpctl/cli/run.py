"""Launching a server for a client: run."""

from __future__ import annotations

import typer

from mcpctl.cli.output import STATE

app = typer.Typer()


@app.command("run")
def run(name: str = typer.Argument(..., help="The stdio server to start.")) -> int:
    """Become a stdio server of the config, its ${VAR} placeholders resolved (keyring included).

    Give a client (Claude Desktop, an IDE, an orchestrator) 'mcpctl run NAME' as the server's
    command: mcpctl resolves the entry's placeholders from the environment, then from the OS
    keyring ('mcpctl secret set'), gives the server the same minimal environment as 'health',
    changes to its cwd and replaces itself with it (same process: the client's stdin, stdout,
    stderr and signals reach the server, and its exit status is the client's to see). A
    secret kept in the keyring reaches the server without being written into the client's
    config. Nothing is printed on stdout (the protocol's channel); errors go to stderr with
    exit 2 (unknown, remote or disabled server, missing variable, command not installed) or
    3 (cannot start it).

    Examples:

      mcpctl run github

      mcpctl run github --config ~/agents/external-mcps.json

      claude mcp add github -- mcpctl run github
    """
    from mcpctl.launch import exec_server

    exec_server(name, config=STATE.config)
