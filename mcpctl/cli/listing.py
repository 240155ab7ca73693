"""Reading the servers: list and get (never start a server, never touch the network)."""

from __future__ import annotations

import typer

from mcpctl.cli import output
from mcpctl.cli.common import GROUP, entry_summary, entry_target, read_config
from mcpctl.cli.output import Detail
from mcpctl.cli.quick import show_list
from mcpctl.results import Result

app = typer.Typer()


@app.command("list")
def list_(
    enabled_only: bool = typer.Option(False, "--enabled", help="Only enabled servers."),
    group: list[str] = GROUP,
) -> int:
    """List the configured servers (never starts one, never touches the network).

    Literal secrets are shown as ****; ${VAR} placeholders are shown as written.
    Piped output is tab-separated: NAME, TRANSPORT, ENABLED, TARGET, DESCRIPTION.
    With no config file, nothing is listed and a warning says which file would be used
    and how to create it (exit 0: an empty list is not an error).

    Examples:

      mcpctl list

      mcpctl list --json | jq -r '.data.servers[].name'

      mcpctl list --group work
    """
    return show_list(enabled_only, group)  # as mcpctl.cli.quick answers it before typer loads


@app.command("get")
def get(name: str = typer.Argument(..., help="The server to show.")) -> int:
    """Show one server's entry (secrets redacted, placeholders as written).

    Examples:

      mcpctl get github

      mcpctl get github --json | jq .data.server.args
    """
    loaded = read_config()
    path = loaded.path
    entry = loaded.entry(name)
    summary = entry_summary(name, entry)
    warnings = [w for w in loaded.warnings if name in w]
    result = Result("get", {"config": str(path), "server": summary}, warnings=warnings)

    def human(_: Result) -> Detail:
        pairs: list[tuple[str, str]] = [
            ("name", name),
            ("transport", entry.effective_transport),
            ("enabled", "yes" if entry.enabled else "no"),
        ]
        if "url" in summary:
            pairs.append(("url", summary["url"]))
        if "command" in summary:
            pairs.append(("command", entry_target(summary)))
        pairs += [(f"env {k}", v) for k, v in summary.get("env", {}).items()]
        pairs += [(f"header {k}", v) for k, v in summary.get("headers", {}).items()]
        if entry.allow_literal:
            pairs.append(("allow literal", ", ".join(entry.allow_literal)))
        if "cwd" in summary:
            pairs.append(("cwd", summary["cwd"]))
        if "auth" in summary:
            pairs.append(("auth", summary["auth"]["type"]))
        pairs.append(("timeout", f"{entry.timeout_ms} ms"))
        pairs.append(("sensitive", "yes" if entry.sensitive else "no"))
        if entry.tools is not None:
            allow = ", ".join(entry.tools.allow) if entry.tools.allow is not None else "*"
            pairs.append(("tools", f"allow {allow}; deny {', '.join(entry.tools.deny) or '-'}"))
        if entry.source is not None:
            src = entry.source
            pairs.append(("source", f"{src.name}@{src.version} ({src.registry})"))
        if entry.description:
            pairs.append(("description", entry.description))
        if entry.groups:
            pairs.append(("groups", ", ".join(entry.groups)))
        return Detail(pairs)

    return output.emit(result, human)
