"""Rendering the config for other tools: render."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.common import GROUP, group_selection, read_config, require_trusted
from mcpctl.cli.output import Lines
from mcpctl.errors import ExitCode, UsageError
from mcpctl.render.targets import TARGET_MODULES
from mcpctl.results import Result

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcpctl.config.model import ServerEntry
    from mcpctl.render.base import ClientTarget
    from mcpctl.render.clientcheck import ClientProblem
    from mcpctl.render.delivery import SecretsMode
    from mcpctl.render.install import Merged
    from mcpctl.snapshot.packages import PackagePin

app = typer.Typer()


def unified_diff(old: str, new: str, path: Path) -> list[str]:
    """The lines of a unified diff from ``old`` (the file) to ``new`` (what would be written)."""
    import difflib

    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=str(path),
            tofile=f"{path} (rendered)",
        )
    ]


@app.command("render")
def render(
    target: str = typer.Argument(..., help=f"One of: {', '.join(TARGET_MODULES)}."),
    out: Path | None = typer.Option(
        None, "--output", "-o", metavar="FILE", help="Write here (atomically) instead of stdout."
    ),
    template: Path | None = typer.Option(
        None, "--template", metavar="FILE", help="A base document the servers go under."
    ),
    secrets_mode: str = typer.Option(
        "auto",
        "--secrets",
        metavar="auto|launcher|env|inline",
        help="How secrets reach the client: auto runs a stdio server whose secret only the "
        "keyring holds through 'mcpctl run'; launcher does so for every stdio server; env "
        "leaves placeholders to the client's environment; inline writes the values.",
    ),
    inline_secrets: bool = typer.Option(
        False, "--inline-secrets", help="The same as --secrets inline."
    ),
    check: bool = typer.Option(
        False, "--check", help="Exit 1 with a diff when FILE differs from the rendering (CI)."
    ),
    diff: bool = typer.Option(
        False, "--diff", help="Show what would change in FILE; write nothing."
    ),
    only: list[str] = typer.Option([], "--only", metavar="NAME", help="Only these servers."),
    group: list[str] = GROUP,
    install: bool = typer.Option(
        False, "--install", help="Write into the client's own config file (a backup is kept)."
    ),
    scope: str = typer.Option(
        "user",
        "--scope",
        metavar="user|project",
        help="Which of the client's files --install uses.",
    ),
    replace: bool = typer.Option(
        False, "--replace", help="With --install: also remove the servers mcpctl does not manage."
    ),
    pinned: Path | None = typer.Option(
        None,
        "--pinned",
        metavar="FILE",
        help="A lock file (snapshot save --probe --packages): expose only the tools it pinned, "
        "and run the package versions it recorded.",
    ),
    listen: str | None = typer.Option(
        None,
        "--listen",
        metavar="HOST:PORT",
        help="Where the proxy listens, for mcp-proxy (default 127.0.0.1:9090); "
        "[::1]:PORT for IPv6, :PORT for every interface.",
    ),
    with_self: bool = typer.Option(
        False,
        "--self",
        help="Also add mcpctl itself, as the server 'mcpctl' (mcpctl serve): the client's "
        "agent can then list, check and search its servers (docs/serve.md).",
    ),
    allow_changes: bool = typer.Option(
        False,
        "--allow-changes",
        help="With --self: let the agent ask for changes (add, enable, disable, remove, "
        "secret set), each approved by you in the client.",
    ),
) -> int:
    """Render the enabled servers for a proxy, a client or a cluster.

    Placeholders are carried over in the target's own syntax where it has one. A client
    resolves them from its own environment, not from the keyring: a stdio server whose
    secret only the keyring holds is rendered as 'mcpctl run NAME --config FILE', which
    resolves it and starts the server (--secrets launcher: every stdio server); a remote
    server's keyring-held headers come from 'mcpctl secret headers NAME' where the client
    runs a headers helper (Claude Code), from its own password prompt (VS Code), else a
    warning names the variable. --secrets inline writes the values (mode 0600; refused for
    --install into a git work tree). What a target cannot express is rendered as far as it
    goes, with a warning.

    --pinned LOCK exposes only the tools the lock file recorded (saved with --probe) and,
    when it was saved with --packages, writes the versions it recorded into the commands:
    npx -y pkg@1.2.0, uvx pkg==1.2.0, docker run image@sha256:...; a server the lock does
    not pin is rendered as configured, with a warning.

    mcp-proxy listens on 127.0.0.1:9090 unless --listen (or a template) says otherwise; it
    warns when the proxy would listen beyond this machine without an auth token.

    --self adds the server 'mcpctl' to a client's file: 'mcpctl serve' (with --config FILE
    when the config is not your user one), read-only unless --allow-changes, and even then
    every change is shown to you in the client and waits for your approval.

    Examples:

      mcpctl render mcp-proxy -o config.json

      mcpctl render fastmcp --only time --only github

      mcpctl render claude-code --install --group work

      mcpctl render mcp-proxy -o config.json --check

      mcpctl render cursor --install --scope project

      mcpctl render claude-code --install --secrets launcher

      mcpctl render mcp-proxy --pinned mcp-lock.json -o config.json

      mcpctl render claude-code --pinned mcp-lock.json --install

      mcpctl render mcp-proxy --listen 127.0.0.1:8080 -o config.json

      mcpctl render claude-code --install --self

      mcpctl render cursor --install --self --allow-changes
    """
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.config.safefile import read_text_file
    from mcpctl.render import render as render_target
    from mcpctl.render.delivery import Launcher
    from mcpctl.render.templatepins import launched_unpinned, load_pins, load_template, pin_packages

    how = secrets_choice(secrets_mode, inline_secrets)
    inline_secrets = how == "inline"
    if allow_changes and not with_self:
        raise UsageError("--allow-changes goes with --self (what mcpctl serve lets the agent do)")
    pins, packages, pin_warnings = load_pins(pinned) if pinned is not None else (None, None, [])
    if install:
        if out is not None or template is not None:
            raise UsageError("--install writes the client's own file: drop -o and --template")
        if scope not in ("user", "project"):
            raise UsageError(f"--scope must be user or project, not {scope!r}")
        return install_into_client(
            target, only, scope, replace, how, check, diff, pins, pin_warnings, listen, group,
            packages, pinned, serve=_self_entry(with_self, allow_changes),
        )  # fmt: skip
    if replace:
        raise UsageError("--replace goes with --install")
    if (check or diff) and out is None:
        raise UsageError("--check and --diff compare with a file: give -o FILE")
    if inline_secrets and out is None:
        raise UsageError("--inline-secrets writes secrets, which mcpctl never prints: give -o FILE")
    loaded = read_config()
    only = [*only, *(group_selection(loaded.config.entries, group) or [])]
    base = load_template(template) if template is not None else None
    if inline_secrets:  # the file would get their secrets
        require_trusted(loaded, _rendered(loaded.config.entries, only))
    entries, package_warnings = pin_packages(loaded.config.entries, only, packages, pinned)
    rendered = render_target(
        target, entries, only=only, template=base, secrets_mode=how,
        secrets=keyring_source(), pinned=pins, launcher=Launcher.for_config(loaded.path),
        listen=listen, serve=_self_entry(with_self, allow_changes),
    )  # fmt: skip
    warnings = loaded.warnings + pin_warnings + package_warnings + _for_people(rendered.warnings)
    warnings += launched_unpinned(rendered.launched, packages)
    if rendered.holds_secrets:
        warnings.append(f"{out} holds secrets in clear text: it is written with mode 0600")
    data: dict[str, Any] = {"target": target, "file": str(out) if out else None,
                            "secrets": how, "launched": rendered.launched}  # fmt: skip
    if out is None:
        data["text"] = rendered.text
        return output.emit(Result("render", data, warnings), lambda _: Lines([rendered.text]))
    current = read_text_file(out)
    data["changed"] = current != rendered.text
    if check or diff:
        lines = unified_diff(current or "", rendered.text, out) if data["changed"] else []
        data.update(diff=lines, exists=current is not None)
        exit_code = ExitCode.FAILED if check and data["changed"] else ExitCode.OK
        if current is None:
            output.info(f"{out} does not exist: rendering would create it")
        elif not data["changed"]:
            output.info(f"{out} is up to date")
        return output.emit(Result("render", data, warnings, exit_code=exit_code),
                           lambda _: Lines(lines))  # fmt: skip
    if data["changed"] or rendered.holds_secrets:  # a file of secrets gets 0600 even as is
        from mcpctl.config.atomicwrite import atomic_write

        mode = 0o600 if rendered.holds_secrets else None
        atomic_write(out, rendered.text.encode("utf-8"), mode=mode)
        output.info(f"Wrote {out} ({target})" if data["changed"] else f"{out} is up to date")
    else:
        output.info(f"{out} is up to date")
    return output.emit(Result("render", data, warnings))


def _rendered(entries: dict[str, ServerEntry], only: list[str]) -> list[str]:
    """The servers a render writes: the enabled ones (of ``only``, when given)."""
    return [n for n, e in entries.items() if e.enabled and (not only or n in only)]


def _self_entry(wanted: bool, allow_changes: bool) -> ServerEntry | None:
    """The entry that starts ``mcpctl serve`` on the config in use (``--self``), or ``None``."""
    if not wanted:
        return None
    from mcpctl.cli.common import paths
    from mcpctl.render.delivery import serve_entry

    where = paths()
    return serve_entry(where.config, where.user_config, allow_changes=allow_changes)


def secrets_choice(mode: str, inline_secrets: bool) -> SecretsMode:
    """The ``--secrets`` mode (``--inline-secrets`` is ``inline``).

    Raises:
        UsageError: an unknown mode, or ``--inline-secrets`` with another mode.
    """
    from mcpctl.render.delivery import SECRETS_MODES

    if mode not in SECRETS_MODES:
        raise UsageError(f"--secrets must be one of {', '.join(SECRETS_MODES)}, not {mode!r}")
    if inline_secrets and mode not in ("auto", "inline"):
        raise UsageError(f"--inline-secrets is --secrets inline: it cannot go with {mode}")
    chosen: SecretsMode = "inline" if inline_secrets else mode
    return chosen


def install_into_client(
    name: str,
    only: list[str],
    scope: str,
    replace: bool,
    mode: SecretsMode,
    check: bool,
    diff: bool,
    pins: dict[str, list[str]] | None = None,
    pin_warnings: list[str] | None = None,
    listen: str | None = None,
    groups: Sequence[str] = (),
    packages: Mapping[str, PackagePin] | None = None,
    lock: Path | None = None,
    serve: ServerEntry | None = None,
) -> int:
    """``render NAME --install``: merge the servers into the client's own config file (with
    ``only`` or ``groups``, only those servers are managed: the others are left as they are).
    """
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.cli.common import paths
    from mcpctl.config.safefile import decode_text, read_text_file
    from mcpctl.config.store import FileStore
    from mcpctl.render import render as render_target
    from mcpctl.render.delivery import Launcher, in_git_work_tree
    from mcpctl.render.importing import here
    from mcpctl.render.install import merge_install
    from mcpctl.render.targets import get_target
    from mcpctl.render.templatepins import launched_unpinned, pin_packages

    target = get_target(name)
    if not hasattr(target, "locations"):
        raise UsageError(f"{name} has no config file of its own", hint="render it with -o FILE")
    client: ClientTarget = target  # type: ignore[assignment]
    places = client.locations("project" if scope == "project" else "user", here())
    if not places:
        raise UsageError(f"{name} has no {scope}-scope config file")
    path = places[0]
    if mode == "inline" and not (check or diff) and in_git_work_tree(path):
        raise UsageError(
            f"--secrets inline would write secrets into {path}, which is in a git work tree",
            hint="use --secrets auto (the default): the file then holds no secret (a stdio "
            "server runs through mcpctl run; a remote server's header comes from the client's "
            "helper, prompt or environment)",
        )
    loaded = read_config()
    entries = loaded.config.entries
    only = [*only, *(group_selection(entries, groups) or [])]
    if mode == "inline":  # the client's file would get their secrets
        require_trusted(loaded, _rendered(entries, only))
    to_render, package_warnings = pin_packages(entries, only, packages, lock)
    rendered = render_target(
        name,
        to_render,
        only=only,
        secrets_mode=mode,
        secrets=keyring_source(),
        pinned=pins,
        launcher=Launcher.for_config(loaded.path),
        listen=listen,
        serve=serve,
    )
    managed = set(only) or set(entries)
    if serve is not None:
        from mcpctl.render.delivery import SELF_NAME

        managed.add(SELF_NAME)
    merged: list[Merged] = []

    def change(current: bytes | None) -> bytes:
        text = decode_text(current, path) if current is not None else None
        result = merge_install(
            client, text, rendered.text, managed=managed, replace=replace, where=str(path)
        )
        merged.append(result)
        return result.text.encode("utf-8")

    warnings = loaded.warnings + (pin_warnings or []) + package_warnings
    warnings += _for_people(rendered.warnings) + launched_unpinned(rendered.launched, packages)
    if rendered.holds_secrets and not (check or diff):
        warnings.append(f"{path} holds secrets in clear text: it is written with mode 0600")
    data: dict[str, Any] = {"target": name, "file": str(path), "scope": scope, "secrets": mode,
                            "launched": rendered.launched}  # fmt: skip
    if check or diff:
        current = read_text_file(path)
        change(current.encode("utf-8") if current is not None else None)
        # A missing file differs, even from an empty rendering: a CI gate must not pass on it.
        changed = merged[0].changed or current is None
        warnings += merged[0].warnings
        lines = unified_diff(current or "", merged[0].text, path) if changed else []
        data.update(_changes(merged[0]), changed=changed, diff=lines, exists=current is not None)
        if current is None:
            output.info(f"{path} does not exist: installing would create it")
        elif not changed:
            output.info(f"{path} is up to date")
        code = ExitCode.FAILED if check and changed else ExitCode.OK
        return output.emit(Result("render", data, warnings, exit_code=code), lambda _: Lines(lines))
    store = FileStore(path, backups=paths().backups_for(path), locks=paths().locks_dir)
    store.replace(
        change, action=f"render {name} --install", mode=0o600 if rendered.holds_secrets else None
    )
    result = merged[-1]
    data.update(_changes(result))
    warnings += result.warnings
    problems = _client_problems(name, path, {n: entries[n] for n in managed if n in entries})
    data["problems"] = [p.to_dict() for p in problems]
    warnings += [f"{name} will not start {p.server} as mcpctl does: {p.message}" for p in problems]
    if result.changed:
        output.info(
            f"Installed into {path}: {_summary(result)}; undo with: mcpctl undo --file {path}"
        )
    else:
        output.info(f"{path} is up to date")
    return output.emit(Result("render", data, warnings))


def _client_problems(
    target: str, path: Path, entries: dict[str, ServerEntry]
) -> list[ClientProblem]:
    """What the client will not be able to start in the file just installed (``health --as``'s
    static check); nothing when the client's file cannot be read back."""
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.errors import McpctlError
    from mcpctl.render.clientcheck import check_as_client
    from mcpctl.render.clientfile import as_client_targets

    if target not in as_client_targets():
        return []
    try:
        return check_as_client(target, path, entries, secrets=keyring_source())
    except McpctlError:
        return []


def _for_people(warnings: list[str]) -> list[str]:
    # JSON keeps one warning per server and field; a person reads one line per reason.
    from mcpctl.render.base import grouped

    return warnings if output.STATE.json else grouped(warnings)


def _changes(merged: Merged) -> dict[str, Any]:
    return {
        "changed": merged.changed,
        "added": merged.added,
        "updated": merged.updated,
        "removed": merged.removed,
        "kept": merged.kept,
    }


def _summary(merged: Merged) -> str:
    parts = [
        f"{what} {', '.join(names)}"
        for what, names in (
            ("added", merged.added), ("updated", merged.updated), ("removed", merged.removed),
        )
        if names
    ]  # fmt: skip
    return "; ".join(parts)
