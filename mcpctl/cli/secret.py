"""Secrets in the OS keyring: secret set, list, rm."""

from __future__ import annotations

import os
import sys
from typing import Any

import typer

from mcpctl.cli import output
from mcpctl.cli.commandgroup import CommandGroup
from mcpctl.cli.common import read_config, require_trusted
from mcpctl.cli.output import STATE, Table
from mcpctl.errors import MissingInputError, UsageError
from mcpctl.results import Result

app = typer.Typer()
GROUP_HELP = """Keep the values of ${VAR} placeholders in the OS keyring, not in files.

A placeholder resolves from the environment first, then from the keyring, then from its
default. Values are never printed, except by 'secret headers', which a client runs.

Examples:

  mcpctl secret set GITHUB_TOKEN

  printf %s "$TOKEN" | mcpctl secret set GITHUB_TOKEN

  mcpctl secret list --json
"""
secret_app = typer.Typer(help=GROUP_HELP, no_args_is_help=True, cls=CommandGroup)
app.add_typer(secret_app, name="secret")


def _store() -> Any:
    from mcpctl.auth.secrets import SecretStore

    return SecretStore()


def _references() -> dict[str, list[str]]:
    """Placeholder name -> the servers whose entries use it."""
    from mcpctl.config.placeholders import find_placeholders

    refs: dict[str, list[str]] = {}
    for server, entry in read_config().config.entries.items():
        data = entry.to_data()
        texts = [data.get("command"), data.get("cwd"), data.get("url"), *data.get("args", [])]
        texts += [*data.get("env", {}).values(), *data.get("headers", {}).values()]
        texts += [v for v in data.get("auth", {}).values() if isinstance(v, str)]
        for text in texts:
            for ph in find_placeholders(text) if isinstance(text, str) else ():
                servers = refs.setdefault(ph.name, [])
                if server not in servers:
                    servers.append(server)
    return refs


def _read_value(name: str) -> str:
    if sys.stdin.isatty():
        value: str = typer.prompt(f"Value of {name}", hide_input=True, confirmation_prompt=True)
        return value
    data = sys.stdin.read()
    # One trailing newline is the shell's (echo, a here-string), not the secret's.
    return data[:-1] if data.endswith("\n") else data


@secret_app.command("set")
def secret_set(
    name: str = typer.Argument(..., help="The placeholder's name (UPPER_SNAKE_CASE)."),
) -> int:
    """Store a secret in the OS keyring: from a hidden prompt, or from stdin when piped.

    The value is never taken from an argument (shell history, process lists).

    Examples:

      mcpctl secret set GITHUB_TOKEN

      gh auth token | mcpctl secret set GITHUB_TOKEN
    """
    from mcpctl.auth.secrets import check_secret_name

    check_secret_name(name)
    if sys.stdin.isatty() and STATE.json:
        raise MissingInputError(
            "with --json there is no prompt for the value", hint="pipe the value on stdin"
        )
    value = _read_value(name)
    if not value:
        raise UsageError(f"no value for {name} on stdin; nothing was stored",
                         hint=f"printf %s \"$VALUE\" | mcpctl secret set {name}")  # fmt: skip
    store = _store()
    store.set(name, value)
    backend = store.backend_name()
    output.info(f"Stored {name} in the keyring ({backend})")
    if name in os.environ:
        output.warn(f"{name} is also set in the environment, which wins over the keyring")
    return output.emit(Result("secret set", {"name": name, "backend": backend, "stored": True}))


@secret_app.command("list")
def secret_list() -> int:
    """List the secrets in the keyring (names only), the servers that use each, and whether
    the environment overrides it.

    Placeholders of the config that neither the environment nor the keyring has are listed
    as missing.

    Examples:

      mcpctl secret list

      mcpctl secret list --json | jq -r '.data.missing[]'
    """
    store = _store()
    backend = store.backend_name()
    names = store.names()
    refs = _references()
    rows = [
        {"name": n, "servers": refs.get(n, []), "environment_overrides": n in os.environ}
        for n in names
    ]
    missing = sorted(n for n in refs if n not in names and n not in os.environ)
    warnings = [f"{n} is used by {', '.join(refs[n])} but set nowhere" for n in missing]
    data = {"backend": backend, "secrets": rows, "missing": missing}
    table = Table(
        ["NAME", "SERVERS", "ENVIRONMENT"],
        [
            [
                r["name"],
                ", ".join(r["servers"]) or "-",
                "overrides" if r["environment_overrides"] else "",
            ]
            for r in rows
        ],
        f"no secrets in the keyring ({backend})",
    )
    return output.emit(Result("secret list", data, warnings), lambda _: table)


@secret_app.command("rm")
def secret_rm(
    name: str = typer.Argument(..., help="The secret to delete."),
) -> int:
    """Delete a secret from the keyring.

    Examples:

      mcpctl secret rm GITHUB_TOKEN
    """
    store = _store()
    if not store.delete(name):
        raise UsageError(f"no secret {name!r} in the keyring",
                         hint="run 'mcpctl secret list' to see them")  # fmt: skip
    output.info(f"Deleted {name} from the keyring")
    return output.emit(Result("secret rm", {"name": name, "deleted": True}))


@secret_app.command("headers")
def secret_headers(
    name: str = typer.Argument(..., help="The remote server whose headers to print."),
) -> int:
    """Print a remote server's HTTP headers, secrets resolved, as one JSON object.

    For a client that runs a command for its headers (Claude Code's headersHelper, which
    'mcpctl render claude-code' sets up): its headers and its bearer, header or basic auth,
    resolved from the environment, then the keyring. This is the one command that prints
    secrets, so it refuses to write to a terminal.

    Examples:

      mcpctl secret headers github | jq -r keys[]
    """
    import json

    from mcpctl.auth.secrets import keyring_source
    from mcpctl.render.delivery import resolved_headers

    if sys.stdout.isatty():
        raise UsageError(
            "mcpctl secret headers prints secrets: it is meant for a client to run",
            hint=f"pipe it if you mean it: mcpctl secret headers {name} | jq -r 'keys[]'",
        )
    loaded = read_config()
    entry = loaded.entry(name)
    require_trusted(loaded, [name])  # its headers carry the secrets
    headers = resolved_headers(name, entry, secrets=keyring_source())
    # Straight to stdout: the output layer would redact the very values asked for.
    sys.stdout.write(json.dumps(headers) + "\n")
    sys.stdout.flush()
    return 0
