"""Changing the servers: add, remove, enable, disable."""

from __future__ import annotations

from typing import Any

import typer

from mcpctl.cli import output
from mcpctl.cli.addflags import (
    PINNED,
    empty_values,
    entry_timeout_ms,
    name_after_dashdash,
    remote_transport,
)
from mcpctl.cli.adding import add_from_registry
from mcpctl.cli.authflags import auth_from_flags
from mcpctl.cli.common import Protocol, config_store, entry_summary
from mcpctl.cli.flagvalues import duration_option, parse_pairs
from mcpctl.config.model import ServerEntry, ToolFilter
from mcpctl.config.transports import remote_transports
from mcpctl.errors import UsageError
from mcpctl.results import Result

app = typer.Typer()


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
    inherit_env: list[str] = typer.Option(
        [],
        "--inherit-env",
        metavar="NAME",
        help="Pass this variable of the environment to the server as it is (repeatable; kept "
        "in the entry's inherit_env). Trust and proxy settings (SSL_CERT_FILE, HTTPS_PROXY...) "
        "pass without it.",
    ),
    allow_literal: list[str] = typer.Option(
        [],
        "--allow-literal",
        metavar="KEY",
        help="Keep the literal value of an --env or --header named like a secret (*TOKEN*, "
        "*KEY, *PASSWORD*...): it is not one (repeatable; kept in the entry).",
    ),
    bearer: str | None = typer.Option(
        None,
        "--bearer",
        metavar="'${VAR}'",
        help="Bearer token of a remote server (a placeholder).",
    ),
    auth: str | None = typer.Option(
        None,
        "--auth",
        metavar="none|bearer|header|basic|oauth",
        help="How a remote server signs in.",
    ),
    token: str | None = typer.Option(
        None, "--token", metavar="'${VAR}'", help="--auth bearer: the token (a placeholder)."
    ),
    auth_header: str | None = typer.Option(
        None, "--auth-header", metavar="NAME", help="--auth header: the header (Authorization)."
    ),
    auth_value: str | None = typer.Option(
        None, "--auth-value", metavar="'${VAR}'", help="--auth header: its value (a placeholder)."
    ),
    username: str | None = typer.Option(None, "--username", help="--auth basic: the user."),
    password: str | None = typer.Option(
        None, "--password", metavar="'${VAR}'", help="--auth basic: the password (a placeholder)."
    ),
    scope: list[str] = typer.Option(
        [], "--scope", metavar="SCOPE", help="--auth oauth: a scope to ask for (repeatable)."
    ),
    client_id: str | None = typer.Option(
        None, "--client-id", metavar="ID", help="--auth oauth: a client id registered beforehand."
    ),
    client_secret: str | None = typer.Option(
        None,
        "--client-secret",
        metavar="'${VAR}'",
        help="--auth oauth: its secret (a placeholder).",
    ),
    client_metadata_url: str | None = typer.Option(
        None,
        "--client-metadata-url",
        metavar="URL",
        help="--auth oauth: a client ID metadata document.",
    ),
    callback_port: int | None = typer.Option(
        None,
        "--callback-port",
        min=1,
        max=65535,
        metavar="PORT",
        help="--auth oauth: the port of the sign-in callback (default: a free one).",
    ),
    description: str | None = typer.Option(None, "--description", "-d", help="Description."),
    timeout: str | None = typer.Option(
        None,
        "--timeout",
        metavar="DURATION",
        help="Connect timeout: 30s, 500ms, 1.5s, 2m; a bare number is seconds (100ms to 60m; "
        "default 30s).",
    ),
    sensitive: bool = typer.Option(
        False, "--sensitive", help="Tool inputs must be screened by the host."
    ),
    protocol: Protocol | None = typer.Option(
        None,
        "--protocol",
        help="Pin the protocol era mcpctl speaks to it: modern (2026-07-28, no handshake) or "
        "legacy (initialize); default auto (detected, remembered).",
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
        help="With --from-registry: how long the registries may take to refresh: 15s, 1m; a bare "
        "number is seconds (default 15s).",
    ),
    offline: bool = typer.Option(
        False,
        "--offline",
        help="With --from-registry: never touch the network, use the registries' cache only.",
    ),
) -> int:
    """Add a stdio server (after --) or a remote one (--url).

    Secrets are never written into the file: use ${VAR} placeholders (in single quotes,
    so the shell leaves them alone), resolved at run time from the environment or the
    keyring. A literal value under a key named like a secret (*TOKEN*, *KEY, *SECRET*,
    *PASSWORD*, *PASS, *PAT, *CREDENTIAL*, Authorization) is refused too; --allow-literal
    KEY keeps one that is not a secret.

    Examples:

      mcpctl add time -- uvx mcp-server-time

      mcpctl add github -e GITHUB_TOKEN='${GITHUB_TOKEN}' -- npx -y @mcp/server-github

      mcpctl add aws --inherit-env AWS_PROFILE -- uvx awslabs.core-mcp-server

      mcpctl add linear --url https://mcp.linear.app/mcp -H 'Authorization: Bearer ${TOKEN}'

      mcpctl add notion --url https://mcp.notion.com/mcp --auth oauth --scope read

      mcpctl add docs --url http://127.0.0.1:8000/sse --transport sse --timeout 10s --json

      mcpctl add --from-registry io.github.modelcontextprotocol/time

      mcpctl add --from-registry io.github.modelcontextprotocol/time --offline
    """
    warnings: list[str] = []
    timeout_ms = None if timeout is None else entry_timeout_ms(timeout, warnings)
    refresh_seconds = duration_option(registry_timeout, warnings, flag="--registry-timeout")
    env_pairs = parse_pairs(env, "=", "--env", "KEY=VALUE")
    header_pairs = parse_pairs(header, ":", "--header", "'Name: value'")
    warnings += empty_values(env_pairs, header_pairs, bearer)
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
        if allow_literal:
            overrides["allow_literal"] = tuple(allow_literal)
        if inherit_env:
            overrides["inherit_env"] = tuple(dict.fromkeys(inherit_env))
        return add_from_registry(
            name, from_registry, registry, prefer, package_type, env_pairs, header_pairs,
            overrides=overrides, force=force, warnings=warnings, refresh_timeout=refresh_seconds,
            offline=offline,
        )  # fmt: skip
    if offline:
        raise UsageError(
            "--offline goes with --from-registry (only a registry is ever reached over the network)"
        )
    if name_after_dashdash(name):
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
    if bearer is not None and (auth not in (None, "bearer") or token is not None):
        raise UsageError("--bearer is short for --auth bearer --token: give one of them")
    entry_auth = auth_from_flags("bearer" if bearer else auth, {
        "--token": bearer or token, "--auth-header": auth_header, "--auth-value": auth_value,
        "--username": username, "--password": password, "--scope": scope,
        "--client-id": client_id, "--client-secret": client_secret,
        "--client-metadata-url": client_metadata_url, "--callback-port": callback_port,
    })  # fmt: skip
    remote_flags = (("--header", header), ("--bearer", bearer), ("--transport", transport),
                    ("--auth", entry_auth))  # fmt: skip
    remote_only = [flag for flag, v in remote_flags if v]
    if url is None and remote_only:
        raise UsageError(f"{remote_only[0]} only applies to remote servers (--url)")
    stdio_only = [flag for flag, v in (("--env", env), ("--cwd", cwd),
                                       ("--inherit-env", inherit_env)) if v]  # fmt: skip
    if url is not None and stdio_only:
        raise UsageError(f"{stdio_only[0]} only applies to stdio servers (a command after --)")
    entry = ServerEntry(
        command=argv[0] if argv else None,
        args=tuple(argv[1:]),
        env=env_pairs,
        cwd=cwd,
        inherit_env=tuple(dict.fromkeys(inherit_env)),
        url=url,
        transport=remote_transport(transport),  # type: ignore[arg-type]
        headers=header_pairs,
        auth=entry_auth,
        timeout=timeout_ms,
        protocol=PINNED.get(protocol) if protocol is not None else None,
        sensitive=sensitive,
        description=description,
        enabled=not disabled,
        tools=ToolFilter(tuple(allow_tool) or None, tuple(deny_tool))
        if allow_tool or deny_tool
        else None,
    )
    from mcpctl.config.edits import with_allowed_literals

    entry = with_allowed_literals(entry, allow_literal)  # before the warnings: they heed it
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


def _toggle(names: list[str], enabled: bool) -> int:
    store = config_store()
    changed = store.set_enabled_many(names, enabled)
    state = "enabled" if enabled else "disabled"
    for name in dict.fromkeys(names):
        if name in changed:
            output.info(f"{state.capitalize()} {name!r} in {store.path}")
        else:
            output.info(f"{name!r} is already {state}")
    command = "enable" if enabled else "disable"
    given = list(dict.fromkeys(names))
    data: dict[str, object] = {"config": str(store.path), "enabled": enabled, "names": given,
                               "changed": bool(changed), "changed_names": changed}  # fmt: skip
    if len(given) == 1:
        data["name"] = given[0]
    return output.emit(Result(command, data))


@app.command("enable")
def enable(
    names: list[str] = typer.Argument(..., metavar="NAME...", help="The servers to enable."),
) -> int:
    """Enable servers (they are probed, rendered and loaded again), all or none: an unknown
    name changes nothing (exit 2, with the closest name).

    Examples:

      mcpctl enable github

      mcpctl enable github slack --json
    """
    return _toggle(names, True)


@app.command("disable")
def disable(
    names: list[str] = typer.Argument(..., metavar="NAME...", help="The servers to disable."),
) -> int:
    """Disable servers without removing them (they are kept but not loaded), all or none:
    an unknown name changes nothing (exit 2, with the closest name).

    Examples:

      mcpctl disable github

      mcpctl disable a b c --json
    """
    return _toggle(names, False)
