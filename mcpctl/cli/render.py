"""Rendering the config for other tools: render."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.common import read_config
from mcpctl.cli.output import Lines
from mcpctl.errors import StorageError, UsageError
from mcpctl.render.targets import TARGET_MODULES
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.render.base import ClientTarget
    from mcpctl.render.install import Merged

app = typer.Typer()


def load_template(path: Path) -> dict[str, Any]:
    """A template document, with ``<name>.local.json`` beside it merged over it when present.

    Raises:
        UsageError: the file is missing or not a JSON object.
    """
    base = _read_json(path)
    local = path.with_name(f"{path.stem}.local{path.suffix or '.json'}")
    if local.exists():
        base = _merged(base, _read_json(local))
    return base


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8-sig"))
    except FileNotFoundError:
        raise UsageError(f"template {path} does not exist") from None
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"template {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"template {path} must be a JSON object")
    return data


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


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
    inline_secrets: bool = typer.Option(
        False, "--inline-secrets", help="Write resolved secrets where the target cannot expand."
    ),
    check: bool = typer.Option(
        False, "--check", help="Exit 1 with a diff when FILE differs from the rendering (CI)."
    ),
    diff: bool = typer.Option(
        False, "--diff", help="Show what would change in FILE; write nothing."
    ),
    only: list[str] = typer.Option([], "--only", metavar="NAME", help="Only these servers."),
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
        help="A lock file (snapshot save --probe): expose only the tools it pinned.",
    ),
    listen: str | None = typer.Option(
        None,
        "--listen",
        metavar="HOST:PORT",
        help="Where the proxy listens, for mcp-proxy (default 127.0.0.1:9090); "
        "[::1]:PORT for IPv6, :PORT for every interface.",
    ),
) -> int:
    """Render the enabled servers for a proxy, a client or a cluster.

    Placeholders are carried over in the target's own syntax where it has one; where it has
    none, secrets are not written unless --inline-secrets (the file is then written with
    mode 0600). What a target cannot express is rendered as far as it goes, with a warning.

    mcp-proxy listens on 127.0.0.1:9090 unless --listen (or a template) says otherwise; it
    warns when the proxy would listen beyond this machine without an auth token.

    Examples:

      mcpctl render mcp-proxy -o config.json

      mcpctl render fastmcp --only time --only github

      mcpctl render mcp-proxy -o config.json --check

      mcpctl render cursor --install --scope project

      mcpctl render mcp-proxy --pinned mcp-lock.json -o config.json

      mcpctl render mcp-proxy --listen 127.0.0.1:8080 -o config.json
    """
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.render import render as render_target

    pins, pin_warnings = load_pins(pinned) if pinned is not None else (None, [])
    if install:
        if out is not None or template is not None:
            raise UsageError("--install writes the client's own file: drop -o and --template")
        if scope not in ("user", "project"):
            raise UsageError(f"--scope must be user or project, not {scope!r}")
        return install_into_client(
            target, only, scope, replace, inline_secrets, check, diff, pins, pin_warnings, listen
        )
    if replace:
        raise UsageError("--replace goes with --install")
    if (check or diff) and out is None:
        raise UsageError("--check and --diff compare with a file: give -o FILE")
    if inline_secrets and out is None:
        raise UsageError("--inline-secrets writes secrets, which mcpctl never prints: give -o FILE")
    loaded = read_config()
    base = load_template(template) if template is not None else None
    rendered = render_target(
        target, loaded.config.entries, only=only, template=base,
        inline_secrets=inline_secrets, secrets=keyring_source(), pinned=pins, listen=listen,
    )  # fmt: skip
    warnings = loaded.warnings + pin_warnings + _for_people(rendered.warnings)
    if rendered.holds_secrets:
        warnings.append(f"{out} holds secrets in clear text: it is written with mode 0600")
    data: dict[str, Any] = {"target": target, "file": str(out) if out else None}
    if out is None:
        data["text"] = rendered.text
        return output.emit(Result("render", data, warnings), lambda _: Lines([rendered.text]))
    current = _current(out)
    data["changed"] = current != rendered.text
    if check or diff:
        lines = unified_diff(current or "", rendered.text, out) if data["changed"] else []
        data["diff"] = lines
        exit_code = 1 if check and data["changed"] else 0
        if not data["changed"]:
            output.info(f"{out} is up to date")
        return output.emit(Result("render", data, warnings, exit_code=exit_code),
                           lambda _: Lines(lines))  # fmt: skip
    if data["changed"]:
        from mcpctl.config.store import atomic_write

        mode = 0o600 if rendered.holds_secrets else None
        atomic_write(out, rendered.text.encode("utf-8"), mode=mode)
        output.info(f"Wrote {out} ({target})")
    else:
        output.info(f"{out} is up to date")
    return output.emit(Result("render", data, warnings))


def load_pins(path: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The tools a lock file pinned, per server, and warnings.

    Raises:
        UsageError: there is no such file, or it is not a snapshot.
        StorageError: it cannot be read.
    """
    from mcpctl.snapshot.files import load_snapshot
    from mcpctl.snapshot.probing import pinned_tools

    found = load_snapshot(path)
    if found is None:
        raise UsageError(
            f"there is no lock file at {path}",
            hint=f"record one with: mcpctl snapshot save --probe -o {path}",
        )
    if not found.probed:
        return {}, [f"{path} has no probe data, so it pins no tool (save it with --probe)"]
    return pinned_tools(found), []


def install_into_client(
    name: str,
    only: list[str],
    scope: str,
    replace: bool,
    inline: bool,
    check: bool,
    diff: bool,
    pins: dict[str, list[str]] | None = None,
    pin_warnings: list[str] | None = None,
    listen: str | None = None,
) -> int:
    """``render NAME --install``: merge the servers into the client's own config file."""
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.cli.common import paths
    from mcpctl.config.store import FileStore
    from mcpctl.render import render as render_target
    from mcpctl.render.importing import here
    from mcpctl.render.install import merge_install
    from mcpctl.render.targets import get_target

    target = get_target(name)
    if not hasattr(target, "locations"):
        raise UsageError(f"{name} has no config file of its own", hint="render it with -o FILE")
    client: ClientTarget = target  # type: ignore[assignment]
    places = client.locations("project" if scope == "project" else "user", here())
    if not places:
        raise UsageError(f"{name} has no {scope}-scope config file")
    path = places[0]
    loaded = read_config()
    entries = loaded.config.entries
    rendered = render_target(
        name, entries, only=only, inline_secrets=inline, secrets=keyring_source(), pinned=pins,
        listen=listen,
    )  # fmt: skip
    managed = set(only) or set(entries)
    merged: list[Merged] = []

    def change(current: bytes | None) -> bytes:
        text = current.decode("utf-8-sig") if current is not None else None
        result = merge_install(
            client, text, rendered.text, managed=managed, replace=replace, where=str(path)
        )
        merged.append(result)
        return result.text.encode("utf-8")

    warnings = loaded.warnings + (pin_warnings or []) + _for_people(rendered.warnings)
    data: dict[str, Any] = {"target": name, "file": str(path), "scope": scope}
    if check or diff:
        current = _current(path)
        change(current.encode("utf-8") if current is not None else None)
        lines = unified_diff(current or "", merged[0].text, path) if merged[0].changed else []
        data.update(_changes(merged[0]), diff=lines)
        if not merged[0].changed:
            output.info(f"{path} is up to date")
        code = 1 if check and merged[0].changed else 0
        return output.emit(Result("render", data, warnings, exit_code=code), lambda _: Lines(lines))
    store = FileStore(path, backups=paths().backups_for(path))
    store.replace(
        change, action=f"render {name} --install", mode=0o600 if rendered.holds_secrets else None
    )
    result = merged[-1]
    data.update(_changes(result))
    if result.changed:
        output.info(
            f"Installed into {path}: {_summary(result)}; undo with: mcpctl undo --file {path}"
        )
    else:
        output.info(f"{path} is up to date")
    return output.emit(Result("render", data, warnings))


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


def _current(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror or exc}") from None
