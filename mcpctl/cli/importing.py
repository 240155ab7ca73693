"""Bringing in what other tools have configured: import (and its scan)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from mcpctl.cli import output
from mcpctl.cli.common import config_store, read_config
from mcpctl.cli.output import Table
from mcpctl.errors import UsageError
from mcpctl.results import Result

app = typer.Typer()

ON_CONFLICT = ("skip", "rename", "overwrite")


@app.command("import")
def import_servers(
    source: str | None = typer.Argument(
        None, help="The tool to import from (claude-desktop, cursor, vscode, ...); none: scan."
    ),
    path: Path | None = typer.Argument(
        None, help="Its config file (default: the first of its usual locations that exists)."
    ),
    on_conflict: str = typer.Option(
        "skip",
        "--on-conflict",
        metavar="skip|rename|overwrite",
        help="What to do with a server whose name is already configured.",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show what would happen; change nothing."
    ),
    only: list[str] = typer.Option([], "--only", metavar="NAME", help="Only these servers."),
    allow_literal: list[str] = typer.Option(
        [],
        "--allow-literal",
        metavar="KEY",
        help="Keep the literal value of an env variable or header named like a secret "
        "(*TOKEN*, *KEY, *PASSWORD*...): it is not one (repeatable; kept in the entry).",
    ),
) -> int:
    """Import servers from another tool's config, or find them all (no SOURCE).

    Placeholders come back as ${VAR}. A literal secret (a token in env, a header, a URL, or
    any literal under a key named like a secret: *TOKEN*, *KEY, *PASSWORD*...) goes to the
    OS keyring and the entry gets a placeholder instead; without a usable keyring such an
    entry is skipped. Nothing secret is ever written to the config file. --allow-literal KEY
    keeps a value that is not a secret.

    Examples:

      mcpctl import

      mcpctl import claude-desktop --dry-run

      mcpctl import vscode .vscode/mcp.json --on-conflict rename
    """
    from mcpctl.render.importing import here, scan

    if on_conflict not in ON_CONFLICT:
        raise UsageError(f"--on-conflict must be one of {', '.join(ON_CONFLICT)}")
    if source is None:
        if path is not None or only or allow_literal:
            raise UsageError("give the SOURCE whose file this is", hint="mcpctl import cursor FILE")
        found = scan(here())
        rows = [
            [f.source, f.scope, str(f.path), f"error: {f.error}" if f.error else
             (", ".join(f.servers) or "(none)")]
            for f in found
        ]  # fmt: skip
        items = [
            {"source": f.source, "scope": f.scope, "file": str(f.path), "servers": f.servers,
             "error": f.error}
            for f in found
        ]  # fmt: skip
        warnings = [f"{f.path}: {w}" for f in found for w in f.warnings]
        if found:
            output.info(f"Import one with: mcpctl import {found[0].source} {found[0].path}")
        return output.emit(
            Result("import", {"found": items}, warnings),
            lambda _: Table(["SOURCE", "SCOPE", "FILE", "SERVERS"], rows,
                            empty="no MCP configs of known tools found"),
        )  # fmt: skip
    return _import(source, path, on_conflict, dry_run, only, allow_literal)


def _import(
    source: str,
    path: Path | None,
    on_conflict: str,
    dry_run: bool,
    only: list[str],
    allow_literal: list[str],
) -> int:
    from mcpctl.auth.secrets import SecretStore, keyring_source
    from mcpctl.render.importing import apply_import, here, plan_import, read_source

    file, parsed = read_source(source, path, here())
    loaded = read_config()
    items = plan_import(
        parsed.entries, loaded.config.entries, on_conflict=on_conflict,  # type: ignore[arg-type]
        only=only, taken_secrets=keyring_source(), allow_literal=allow_literal,
    )  # fmt: skip
    if not dry_run:
        keyring = SecretStore()
        items = apply_import(config_store(), items, keep_secret=keyring.set, source=source)
    warnings = loaded.warnings + [f"{file}: {w}" for w in parsed.warnings]
    keys = {k for e in parsed.entries.values() for k in [*e.env, *(h.lower() for h in e.headers)]}
    warnings += [
        f"--allow-literal {key}: no server in {file} has an env variable or header {key!r}"
        for key in dict.fromkeys(allow_literal)
        if key not in keys and key.lower() not in keys
    ]
    data: dict[str, Any] = {
        "source": source,
        "file": str(file),
        "dry_run": dry_run,
        "servers": [item.to_dict() for item in items],
    }
    done = [i for i in items if i.action in ("add", "overwrite", "rename")]
    if not items:
        output.info(f"no servers in {file}")
    elif dry_run:
        output.info(f"Would import {len(done)} of {len(items)} servers from {file} (dry run)")
    else:
        output.info(f"Imported {len(done)} of {len(items)} servers from {file}")
    rows = [
        [i.name, _verb(i.action, dry_run), (i.as_name or "") if i.action == "rename" else "",
         ", ".join(f"${{{v}}} -> keyring" for v in sorted(i.secrets)) or (i.reason or "")]
        for i in items
    ]  # fmt: skip
    return output.emit(
        Result("import", data, warnings),
        lambda _: Table(["SERVER", "ACTION", "AS", "NOTE"], rows, empty="nothing to import"),
    )


def _verb(action: str, dry_run: bool) -> str:
    if not dry_run:
        return {"add": "added", "overwrite": "overwritten", "rename": "renamed"}.get(action, action)
    return action
