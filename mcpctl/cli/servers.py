"""Changing the servers: add, remove, enable, disable, undo."""

from __future__ import annotations

from typing import Any

import typer

from mcpctl.cli import output
from mcpctl.cli.adding import add_from_registry
from mcpctl.cli.common import (
    config_store,
    entry_summary,
    parse_duration,
    parse_pairs,
)
from mcpctl.cli.output import STATE, Table
from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter
from mcpctl.errors import UsageError
from mcpctl.probe.transports import remote_transports
from mcpctl.results import Result

app = typer.Typer()

_AUTH_SCHEMES = ("bearer", "basic", "token", "bot")


def _remote_transport(value: str | None) -> str | None:
    choices = remote_transports()
    if value is not None and value not in choices:
        raise UsageError(
            f"--transport {value!r} is not a remote transport",
            hint=f"choose one of {', '.join(choices)}",
        )
    return value


def _empty_values(env: dict[str, str], headers: dict[str, str], bearer: str | None) -> list[str]:
    """Warnings for values a shell most likely expanded to nothing (``"${TOKEN}"``)."""
    warnings = []
    for key, value in env.items():
        if not value:
            warnings.append(
                f"--env {key} is empty; if you meant a placeholder, the shell expanded it: "
                f"write -e {key}='${{{key}}}' (single quotes)"
            )
    for key, value in headers.items():
        words = value.split()
        if not words or (len(words) == 1 and words[0].lower() in _AUTH_SCHEMES):
            var = key.upper().replace("-", "_")
            warnings.append(
                f"--header {key} has no value after {value.strip() or 'the colon'}; if you meant "
                f"a placeholder, the shell expanded it: write -H '{key}: "
                f"{(value.strip() + ' ') if words else ''}${{{var}}}' (single quotes)"
            )
    if bearer is not None and not bearer.strip():
        warnings.append(
            "--bearer is empty; if you meant a placeholder, the shell expanded it: "
            "write --bearer '${API_TOKEN}' (single quotes)"
        )
    return warnings


def _name_after_dashdash(name: str | None) -> bool:
    """Whether the only positional came after ``--`` (``mcpctl add -- true``)."""
    args = STATE.argv
    if name is None or "--" not in args:
        return False
    cut = args.index("--")
    return name in args[cut + 1 :] and name not in args[:cut]


@app.command("add")
def add(
    name: str | None = typer.Argument(
        None, help="Logical name: 1-64 of letters, digits, '_' and '-' (from a registry: optional)."
    ),
    command: list[str] | None = typer.Argument(
        None, metavar="[-- COMMAND [ARGS]...]", help="The stdio server to spawn, after '--'."
    ),
    url: str | None = typer.Option(None, "--url", help="Endpoint of a remote server."),
    transport: str | None = typer.Option(
        None,
        "--transport",
        metavar="|".join(remote_transports()),
        help="Remote transport (default: streamable-http, SSE fallback).",
    ),
    env: list[str] = typer.Option(
        [], "--env", "-e", metavar="KEY=VALUE", help="Environment variable (repeatable)."
    ),
    header: list[str] = typer.Option(
        [], "--header", "-H", metavar="'NAME: VALUE'", help="HTTP header (repeatable)."
    ),
    bearer: str | None = typer.Option(
        None,
        "--bearer",
        metavar="'${VAR}'",
        help="Bearer token of a remote server (a placeholder).",
    ),
    description: str | None = typer.Option(None, "--description", "-d", help="Description."),
    timeout: str | None = typer.Option(
        None,
        "--timeout",
        metavar="DURATION",
        help="Connect timeout: 30s, 500ms, 2m (a bare number is ms; default 30s).",
    ),
    sensitive: bool = typer.Option(
        False, "--sensitive", help="Tool inputs must be screened by the host."
    ),
    cwd: str | None = typer.Option(None, "--cwd", help="Working directory of the server."),
    allow_tool: list[str] = typer.Option(
        [], "--allow-tool", metavar="GLOB", help="Expose only matching tools (repeatable)."
    ),
    deny_tool: list[str] = typer.Option(
        [], "--deny-tool", metavar="GLOB", help="Hide matching tools (repeatable)."
    ),
    disabled: bool = typer.Option(False, "--disabled", help="Add it disabled."),
    force: bool = typer.Option(False, "--force", "-f", help="Replace an existing server."),
    from_registry: str | None = typer.Option(
        None,
        "--from-registry",
        metavar="SERVER[@VERSION]",
        help="Add a server found with discover.",
    ),
    registry: str | None = typer.Option(
        None, "--registry", metavar="ID", help="With --from-registry: only this registry."
    ),
    prefer: str | None = typer.Option(
        None,
        "--prefer",
        metavar="package|remote",
        help="With --from-registry: a package (local) or a remote.",
    ),
    package_type: str | None = typer.Option(
        None, "--package-type", metavar="TYPE", help="With --from-registry: npm, pypi, oci, nuget."
    ),
    registry_timeout: str | None = typer.Option(
        None,
        "--registry-timeout",
        metavar="DURATION",
        help="With --from-registry: how long the registries may take to refresh (15s).",
    ),
) -> int:
    """Add a stdio server (after --) or a remote one (--url).

    Secrets are never written into the file: use ${VAR} placeholders (in single quotes,
    so the shell leaves them alone), resolved at run time from the environment.

    Examples:

      mcpctl add time -- uvx mcp-server-time

      mcpctl add github -e GITHUB_TOKEN='${GITHUB_TOKEN}' -- npx -y @mcp/server-github

      mcpctl add linear --url https://mcp.linear.app/mcp -H 'Authorization: Bearer ${TOKEN}'

      mcpctl add docs --url http://127.0.0.1:8000/sse --transport sse --timeout 10s --json

      mcpctl add --from-registry io.github.modelcontextprotocol/time
    """
    warnings: list[str] = []
    timeout_ms = None
    if timeout is not None:
        seconds, note = parse_duration(timeout, bare="ms")
        timeout_ms = max(1, round(seconds * 1000))
        warnings += [note] if note else []
    env_pairs = parse_pairs(env, "=", "--env", "KEY=VALUE")
    header_pairs = parse_pairs(header, ":", "--header", "'Name: value'")
    warnings += _empty_values(env_pairs, header_pairs, bearer)
    if from_registry is not None:
        if command or url:
            raise UsageError("--from-registry replaces the command and --url; give only one")
        if prefer not in (None, "package", "remote"):
            raise UsageError(f"--prefer {prefer!r}: choose package or remote")
        overrides: dict[str, Any] = {"enabled": not disabled}
        if description is not None:
            overrides["description"] = description
        if timeout_ms is not None:
            overrides["timeout"] = timeout_ms
        refresh_seconds = None
        if registry_timeout is not None:
            refresh_seconds, note = parse_duration(
                registry_timeout, bare="s", flag="--registry-timeout"
            )
            warnings += [note] if note else []
        return add_from_registry(
            name, from_registry, registry, prefer, package_type, env_pairs, header_pairs,
            overrides=overrides, force=force, warnings=warnings, refresh_timeout=refresh_seconds,
        )  # fmt: skip
    if _name_after_dashdash(name):
        raise UsageError(
            "missing NAME: everything after '--' is the server's command",
            hint=f"mcpctl add NAME -- {name} {' '.join(command or [])}".rstrip(),
        )
    if name is None:
        raise UsageError("missing NAME", hint="mcpctl add NAME -- COMMAND [ARGS...]")
    argv = list(command or [])
    if url is not None and argv:
        raise UsageError(
            "give either a command (after --) or --url, not both",
            hint="a stdio server is spawned from a command; a remote one is reached at a URL",
        )
    if url is None and not argv:
        raise UsageError(
            "nothing to add: give the server's command after '--', or --url",
            hint=f"mcpctl add {name} -- npx -y some-mcp-server   or   mcpctl add {name} --url https://...",
        )
    remote_only = [flag for flag, v in (("--header", header), ("--bearer", bearer),
                                        ("--transport", transport)) if v]  # fmt: skip
    if url is None and remote_only:
        raise UsageError(f"{remote_only[0]} only applies to remote servers (--url)")
    stdio_only = [flag for flag, v in (("--env", env), ("--cwd", cwd)) if v]
    if url is not None and stdio_only:
        raise UsageError(f"{stdio_only[0]} only applies to stdio servers (a command after --)")
    entry = ServerEntry(
        command=argv[0] if argv else None,
        args=tuple(argv[1:]),
        env=env_pairs,
        cwd=cwd,
        url=url,
        transport=_remote_transport(transport),  # type: ignore[arg-type]
        headers=header_pairs,
        auth=AuthConfig(type="bearer", token=bearer) if bearer else None,
        timeout=timeout_ms,
        sensitive=sensitive,
        description=description,
        enabled=not disabled,
        tools=ToolFilter(tuple(allow_tool) or None, tuple(deny_tool))
        if allow_tool or deny_tool
        else None,
    )
    store = config_store()
    from mcpctl.config.validate import entry_warnings

    warnings += entry_warnings(name, entry.to_data(), base=store.path.parent)
    outcome = store.add(name, entry, force=force)
    kind = "remote" if entry.is_remote else "stdio"
    verb = "Replaced" if outcome.replaced else "Added"
    if outcome.created_file:
        output.info(f"Created {store.path}")
    output.info(f"{verb} {kind} server {name!r} in {store.path}")
    data = {
        "name": name,
        "config": str(store.path),
        "replaced": outcome.replaced,
        "created_file": outcome.created_file,
        "server": entry_summary(name, entry),
    }
    return output.emit(Result("add", data, warnings=warnings))


@app.command("remove")
def remove(
    names: list[str] = typer.Argument(..., metavar="NAME...", help="Servers to remove."),
    ignore_missing: bool = typer.Option(
        False, "--ignore-missing", help="Do not fail on names that are not there."
    ),
) -> int:
    """Remove servers (all or none: an unknown name changes nothing).

    Examples:

      mcpctl remove github

      mcpctl remove a b c --ignore-missing --json
    """
    store = config_store()
    removed = store.remove(names, missing_ok=ignore_missing)
    for name in removed:
        output.info(f"Removed {name!r} from {store.path}")
    if not removed:
        output.info("Nothing to remove")
    return output.emit(Result("remove", {"config": str(store.path), "removed": removed}))


def _toggle(name: str, enabled: bool) -> int:
    store = config_store()
    changed = store.set_enabled(name, enabled)
    state = "enabled" if enabled else "disabled"
    if changed:
        output.info(f"{state.capitalize()} {name!r} in {store.path}")
    else:
        output.info(f"{name!r} is already {state}")
    command = "enable" if enabled else "disable"
    data = {"config": str(store.path), "name": name, "enabled": enabled, "changed": changed}
    return output.emit(Result(command, data))


@app.command("enable")
def enable(name: str = typer.Argument(..., help="The server to enable.")) -> int:
    """Enable a server (it is probed, rendered and loaded again).

    Examples:

      mcpctl enable github
    """
    return _toggle(name, True)


@app.command("disable")
def disable(name: str = typer.Argument(..., help="The server to disable.")) -> int:
    """Disable a server without removing it (it is kept but not loaded).

    Examples:

      mcpctl disable github
    """
    return _toggle(name, False)


@app.command("undo")
def undo(
    force: bool = typer.Option(
        False, "--force", help="Restore even if the file was edited by hand since."
    ),
    list_versions: bool = typer.Option(
        False, "--list", help="Show the saved versions instead of restoring one."
    ),
) -> int:
    """Restore the config as it was before mcpctl's last change.

    mcpctl keeps the last 20 versions of each file it changes; run undo again to go
    further back. A file edited by hand since mcpctl's change is left alone unless
    --force.

    Examples:

      mcpctl undo

      mcpctl undo --list
    """
    from datetime import datetime

    store = config_store()
    if list_versions:
        history = store.history()
        items = [
            {"seq": b.seq, "action": b.action, "time": datetime.fromtimestamp(b.time).isoformat(
                timespec="seconds")}
            for b in reversed(history)
        ]  # fmt: skip
        result = Result("undo", {"config": str(store.path), "versions": items})
        return output.emit(
            result,
            lambda _: Table(
                ["#", "BEFORE", "SAVED"],
                [[str(i["seq"]), str(i["action"]), str(i["time"])] for i in items],
                empty=f"no saved versions of {store.path}",
            ),
        )
    outcome = store.undo(force=force)
    when = datetime.fromtimestamp(outcome.time).isoformat(timespec="seconds")
    what = "removed the file" if outcome.removed_file else "restored the previous version"
    output.info(f"Undid '{outcome.action}' ({when}): {what} of {store.path}")
    data = {
        "config": str(store.path),
        "undone": outcome.action,
        "time": when,
        "removed_file": outcome.removed_file,
        "remaining": outcome.remaining,
    }
    return output.emit(Result("undo", data))
