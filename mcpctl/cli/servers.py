"""Server management: add, remove, list, get, enable, disable, undo."""

from __future__ import annotations

import shlex
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.output import STATE, Detail, Table
from mcpctl.errors import (
    ConfigInvalidError,
    MissingInputError,
    PlaintextSecretError,
    ServerNotFoundError,
    UsageError,
)
from mcpctl.config.loader import build_config
from mcpctl.config.model import AuthConfig, ServerEntry, ToolFilter, format_path, suggest
from mcpctl.paths import Paths
from mcpctl.config.placeholders import redact_entry_data, secret_fragments
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.config.store import ConfigStore

app = typer.Typer()


class RegistryChoice(StrEnum):
    """What to install from a registry entry."""

    package = "package"
    remote = "remote"


class RemoteTransport(StrEnum):
    """Transports of remote servers."""

    streamable_http = "streamable-http"
    sse = "sse"


def _paths() -> Paths:
    return Paths.from_env(STATE.config)


def _store() -> ConfigStore:
    from mcpctl.config.store import ConfigStore  # filelock and friends: not on the read-only paths

    return ConfigStore.from_paths(_paths())


def _parse_pairs(values: list[str], sep: str, flag: str, example: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for raw in values:
        key, found, value = raw.partition(sep)
        key = key.strip()
        if not found or not key:
            raise UsageError(f"{flag} {raw!r} is not in the form {example}")
        pairs[key] = value.strip() if sep == ":" else value
    return pairs


def _check_no_literal_secrets(entry: ServerEntry) -> None:
    places: list[tuple[str, str, str]] = [
        *(("--env", k, v) for k, v in entry.env.items()),
        *(("--header", k, v) for k, v in entry.headers.items()),
        *(("argument", str(i), a) for i, a in enumerate(entry.args)),
    ]
    if entry.url:
        places.append(("--url", "", entry.url))
    for flag, key, value in places:
        if next(secret_fragments(value), None) is None:
            continue
        var = key.upper().replace("-", "_") if flag in ("--env", "--header") else "API_TOKEN"
        var = "".join(c if c.isalnum() or c == "_" else "_" for c in var) or "API_TOKEN"
        where = f"{flag} {key}" if key and flag != "argument" else flag
        if flag == "argument":
            where = f"argument {int(key) + 1}"
        raise PlaintextSecretError(
            f"{where} looks like a literal secret; mcpctl does not write secrets into the "
            "config file",
            hint=(
                f"write a placeholder instead, e.g. --env {var}='${{{var}}}', and provide the "
                f"value at run time: export {var}=... (or store it with 'mcpctl secret set {var}')"
            ),
        )


def _target(data: dict[str, Any]) -> str:
    if "url" in data:
        return str(data["url"])
    parts = [str(data.get("command", "")), *(str(a) for a in data.get("args", []))]
    return shlex.join(parts)


def _summary(name: str, entry: ServerEntry) -> dict[str, Any]:
    data = redact_entry_data(entry.to_data())
    return {
        "name": name,
        "transport": entry.effective_transport,
        "enabled": entry.enabled,
        **{k: v for k, v in data.items() if k != "enabled"},
    }


@app.command("add")
def add(
    name: str | None = typer.Argument(
        None, help="Logical name: 1-64 of letters, digits, '_' and '-' (from a registry: optional)."
    ),
    command: list[str] | None = typer.Argument(
        None, metavar="[-- COMMAND [ARGS]...]", help="The stdio server to spawn, after '--'."
    ),
    url: str | None = typer.Option(None, "--url", help="Endpoint of a remote server."),
    transport: RemoteTransport | None = typer.Option(
        None, "--transport", help="Remote transport (default: streamable-http, SSE fallback)."
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
    timeout: int | None = typer.Option(
        None, "--timeout", metavar="MS", min=1, help="Connect timeout in ms (default 30000)."
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
    prefer: RegistryChoice | None = typer.Option(
        None, "--prefer", help="With --from-registry: a package (local) or a remote."
    ),
    package_type: str | None = typer.Option(
        None, "--package-type", metavar="TYPE", help="With --from-registry: npm, pypi, oci, nuget."
    ),
) -> int:
    """Add a stdio server (after --) or a remote one (--url).

    Secrets are never written into the file: use ${VAR} placeholders, resolved at run
    time from the environment (or the keyring).

    Examples:

      mcpctl add time -- uvx mcp-server-time

      mcpctl add github -e GITHUB_TOKEN='${GITHUB_TOKEN}' -- npx -y @mcp/server-github

      mcpctl add linear --url https://mcp.linear.app/mcp -H 'Authorization: Bearer ${TOKEN}'

      mcpctl add docs --url http://127.0.0.1:8000/sse --transport sse --json

      mcpctl add --from-registry io.github.modelcontextprotocol/time
    """
    if from_registry is not None:
        if command or url:
            raise UsageError("--from-registry replaces the command and --url; give only one")
        return _add_from_registry(
            name, from_registry, registry, prefer.value if prefer else None, package_type,
            _parse_pairs(env, "=", "--env", "KEY=VALUE"),
            _parse_pairs(header, ":", "--header", "'Name: value'"),
            description=description, timeout=timeout, disabled=disabled, force=force,
        )  # fmt: skip
    if name is None:
        raise UsageError("a name is required", hint="mcpctl add NAME -- COMMAND [ARGS...]")
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
        env=_parse_pairs(env, "=", "--env", "KEY=VALUE"),
        cwd=cwd,
        url=url,
        transport=transport.value if transport else None,
        headers=_parse_pairs(header, ":", "--header", "'Name: value'"),
        auth=AuthConfig(type="bearer", token=bearer) if bearer else None,
        timeout=timeout,
        sensitive=sensitive,
        description=description,
        enabled=not disabled,
        tools=ToolFilter(tuple(allow_tool) or None, tuple(deny_tool))
        if allow_tool or deny_tool
        else None,
    )
    _check_no_literal_secrets(entry)
    if bearer is not None and next(secret_fragments(bearer), None) is None and "${" not in bearer:
        raise PlaintextSecretError(
            "--bearer must be a placeholder such as '${API_TOKEN}', not the token itself"
        )
    store = _store()
    from mcpctl.config.validate import entry_warnings

    warnings = entry_warnings(name, entry.to_data(), base=store.path.parent)
    outcome = store.add(name, entry, force=force)
    kind = "remote" if entry.is_remote else "stdio"
    verb = "Replaced" if outcome.replaced else "Added"
    if outcome.created_file:
        output.info(f"Created {store.path}")
    output.info(f"{verb} {kind} server {name!r} in {store.path}")
    result = Result(
        "add",
        {
            "name": name,
            "config": str(store.path),
            "replaced": outcome.replaced,
            "created_file": outcome.created_file,
            "server": _summary(name, entry),
        },
        warnings=warnings,
    )
    return output.emit(result)


def _add_from_registry(
    name: str | None,
    spec: str,
    registry: str | None,
    prefer: Any,
    package_type: str | None,
    env: dict[str, str],
    headers: dict[str, str],
    *,
    description: str | None,
    timeout: int | None,
    disabled: bool,
    force: bool,
) -> int:
    import sys
    from dataclasses import replace

    from mcpctl.cli.registry import cache_and_sources
    from mcpctl.config.loader import read_document
    from mcpctl.registry.convert import default_name, entry_from_server_json
    from mcpctl.registry.sources import find_record, refresh

    cache, sources = cache_and_sources([registry] if registry else None)
    report = refresh(cache, sources)
    for warning in report.warnings:
        output.warn(warning)
    reg, record = find_record(cache, spec, registry)
    conversion = entry_from_server_json(
        record, registry=reg, prefer=prefer, package_type=package_type, env=env, headers=headers
    )
    if conversion.missing:
        if not sys.stdin.isatty():
            listed = "; ".join(
                f"{m.name} ({m.flag})" + (f": {m.description}" if m.description else "")
                for m in conversion.missing
            )
            raise MissingInputError(
                f"{record.name} needs values that have no default: {listed}",
                hint="pass them with the flags shown (there is no terminal to ask on)",
            )
        for missing in conversion.missing:
            label = missing.name + (f" ({missing.description})" if missing.description else "")
            target = headers if missing.flag.startswith("--header") else env
            target[missing.name] = typer.prompt(label)
        conversion = entry_from_server_json(
            record, registry=reg, prefer=prefer, package_type=package_type, env=env, headers=headers
        )
    entry = replace(
        conversion.entry,
        description=description or conversion.entry.description,
        timeout=timeout,
        enabled=not disabled,
    )
    _check_no_literal_secrets(entry)
    store = _store()
    taken = {k for k in read_document(store.path).data if not k.startswith("$")}
    chosen = name or default_name(record.name, taken)
    outcome = store.add(chosen, entry, force=force)
    verb = "Replaced" if outcome.replaced else "Added"
    output.info(f"{verb} {chosen!r} from {reg}: {record.name}@{record.version} ({conversion.kind})")
    for note in conversion.notes:
        output.warn(note)
    if conversion.secrets:
        output.info(f"It needs secrets before it works: {', '.join(conversion.secrets)}")
        for secret in conversion.secrets:
            output.info(f"  mcpctl secret set {secret}   (or: export {secret}=...)")
    data = {
        "name": chosen,
        "config": str(store.path),
        "replaced": outcome.replaced,
        "registry": reg,
        "server": _summary(chosen, entry),
        "secrets": conversion.secrets,
    }
    return output.emit(Result("add", data, report.warnings + conversion.notes))


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
    store = _store()
    removed = store.remove(names, missing_ok=ignore_missing)
    for name in removed:
        output.info(f"Removed {name!r} from {store.path}")
    if not removed:
        output.info("Nothing to remove")
    return output.emit(Result("remove", {"config": str(store.path), "removed": removed}))


def _load() -> tuple[Path, Any, list[str], bool]:
    from mcpctl.config.loader import read_document

    path = _paths().config
    doc = read_document(path)
    config, problems = build_config(doc.data)
    warnings = [p.message for p in problems]
    warnings += [f"key {k!r} appears more than once; the last one is used" for k in doc.duplicates]
    output.debug(f"config: {path} ({'exists' if doc.exists else 'not created yet'})")
    return path, (doc, config), warnings, doc.exists


@app.command("list")
def list_(
    enabled_only: bool = typer.Option(False, "--enabled", help="Only enabled servers."),
) -> int:
    """List the configured servers (never starts one, never touches the network).

    Literal secrets are shown as ****; ${VAR} placeholders are shown as written.
    Piped output is tab-separated: NAME, TRANSPORT, ENABLED, TARGET, DESCRIPTION.

    Examples:

      mcpctl list

      mcpctl list --json | jq -r '.data.servers[].name'
    """
    path, (_doc, config), warnings, exists = _load()
    servers = [
        _summary(name, entry)
        for name, entry in config.entries.items()
        if entry.enabled or not enabled_only
    ]
    result = Result(
        "list", {"config": str(path), "exists": exists, "servers": servers}, warnings=warnings
    )

    def human(_: Result) -> Table:
        rows = [
            [
                s["name"],
                s["transport"],
                "yes" if s["enabled"] else "no",
                _target(s),
                s.get("description") or "",
            ]
            for s in servers
        ]
        empty = f"no servers in {path}" if exists else f"no config file yet ({path})"
        return Table(["NAME", "TRANSPORT", "ENABLED", "TARGET", "DESCRIPTION"], rows, empty)

    return output.emit(result, human)


@app.command("get")
def get(name: str = typer.Argument(..., help="The server to show.")) -> int:
    """Show one server's entry (secrets redacted, placeholders as written).

    Examples:

      mcpctl get github

      mcpctl get github --json | jq .data.server.args
    """
    path, (doc, config), warnings, _ = _load()
    if name not in doc.data or name.startswith("$"):
        names = [k for k in doc.data if not k.startswith("$")]
        guess = suggest(name, names) if names else None
        raise ServerNotFoundError(
            f"no server {name!r} in {path}",
            hint=f"did you mean {guess!r}?" if guess else "run 'mcpctl list' to see the servers",
        )
    entry = config.entries.get(name)
    if entry is None:
        from mcpctl.config.model import entry_from_data

        _, issues = entry_from_data(name, doc.data[name])
        first = issues[0]
        raise ConfigInvalidError(
            f"server {name!r} is invalid: {format_path(first.path)}: {first.message}",
            hint=f"run 'mcpctl validate' to see every problem in {path}",
        )
    summary = _summary(name, entry)
    result = Result(
        "get", {"config": str(path), "server": summary}, warnings=[w for w in warnings if name in w]
    )

    def human(_: Result) -> Detail:
        pairs: list[tuple[str, str]] = [
            ("name", name),
            ("transport", entry.effective_transport),
            ("enabled", "yes" if entry.enabled else "no"),
        ]
        if "url" in summary:
            pairs.append(("url", summary["url"]))
        if "command" in summary:
            pairs.append(("command", _target(summary)))
        pairs += [(f"env {k}", v) for k, v in summary.get("env", {}).items()]
        pairs += [(f"header {k}", v) for k, v in summary.get("headers", {}).items()]
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
        return Detail(pairs)

    return output.emit(result, human)


def _toggle(name: str, enabled: bool) -> int:
    store = _store()
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

    store = _store()
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
