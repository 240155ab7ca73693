"""Approving a config file's servers: trust and untrust."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.common import paths
from mcpctl.cli.output import STATE, Lines, Table
from mcpctl.errors import ExitCode, UsageError
from mcpctl.results import Result
from mcpctl.text import plural

if TYPE_CHECKING:
    from mcpctl.config.trust import TrustStore
    from mcpctl.config.trustdescribe import ServerView
    from mcpctl.config.trustview import FileTrust

app = typer.Typer()

FILE_HELP = "The config file (default: the one in use), or a client's config file."
AS_HELP = (
    "FILE is this client's config file (a project-level one, as .cursor/mcp.json, is "
    "recognised by its path)."
)


@app.command("trust")
def trust(
    file: Path | None = typer.Argument(None, metavar="[FILE]", help=FILE_HELP),
    as_client: str | None = typer.Option(None, "--as", metavar="CLIENT", help=AS_HELP),
    yes: bool = typer.Option(False, "--yes", "-y", help="Approve without asking (scripts)."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show what waits for approval; approve nothing (exit 1 if any)."
    ),
    list_files: bool = typer.Option(False, "--list", help="List the files approved so far."),
) -> int:
    """Approve the servers of a config file from elsewhere (a cloned repository) to run.

    A config file found in a project (the nearest external-mcps.json upwards, or --config)
    is someone else's words: until approved, mcpctl starts none of its servers, connects to
    none and resolves no secret for them. trust shows what each server waiting for approval
    would run -- its command line or URL, its working dir, the names (never the values) of
    the secrets and the environment it would receive -- and asks y/N on a terminal (--yes in
    scripts). Approval is per server, by content: after a git pull, only a new or changed
    server asks again. Your own file (in mcpctl's config dir) needs none; with CI=true the
    project's file is trusted (MCPCTL_TRUST=0 turns that off); MCPCTL_TRUST=1 trusts every
    file. A client's project file (.mcp.json, .cursor/mcp.json, .vscode/mcp.json) is approved
    the same way before health --as starts its servers.

    Exit 0 when approved (or nothing waits), 1 when you answer no (or --dry-run finds servers
    waiting), 2 when there is no terminal to ask and no --yes.

    Examples:

      mcpctl trust

      mcpctl trust ~/src/project/external-mcps.json --yes

      mcpctl trust --dry-run --json

      mcpctl trust .cursor/mcp.json

      mcpctl trust --list
    """
    from mcpctl.config.trust import TrustStore
    from mcpctl.config.trustview import trust_command

    store = TrustStore.from_paths(paths())
    if list_files:
        return _list(store)
    from mcpctl.render.clienttrust import review as review_file

    # With --as and no FILE: the client's own file, as health --as reads it.
    given = file if file is not None or as_client is not None else paths().config
    status, views, approve = review_file(store, given.absolute() if given else None, as_client)
    path = status.path
    waiting = [v for v in views if v.state != "trusted"]
    data: dict[str, Any] = {
        "file": str(path), "client": status.client, "reason": status.reason,
        "servers": [v.to_dict() for v in views], "waiting": [v.name for v in waiting],
        "trusted": [],
    }  # fmt: skip
    if status.reason == "own":
        output.info(f"{path} is your own config (in mcpctl's config dir): it needs no approval")
        return output.emit(Result("trust", data))
    if not waiting:
        output.info(f"{path}: {_all(views)} trusted")
        return output.emit(Result("trust", data, _policy_note(status)))
    review = _review_lines(status, views, waiting)
    if dry_run:
        return output.emit(Result("trust", data, exit_code=ExitCode.FAILED), lambda _: review)
    if not yes:
        if not STATE.json:
            output.emit(Result("trust"), lambda _: review)
        if STATE.json or not sys.stdin.isatty():
            them = "it" if len(waiting) == 1 else "them"
            raise UsageError(
                f"{path}: {plural(len(waiting), 'server')} "
                f"{'waits' if len(waiting) == 1 else 'wait'} for approval and there is no "
                "terminal to ask",
                hint=f"review {them} (mcpctl trust --dry-run), then approve with: "
                f"{trust_command(path, status.client, yes=True)}",
                subjects=(str(path),),
            )
        if not _ask(f"Trust {'this server' if len(waiting) == 1 else 'these servers'}? [y/N] "):
            output.info("Nothing was approved")
            return output.emit(Result("trust", data, exit_code=ExitCode.FAILED))
    data["trusted"] = approve()
    output.info(f"Trusted {plural(len(waiting), 'server')} of {path}")
    return output.emit(Result("trust", data, _policy_note(status)))


@app.command("untrust")
def untrust(file: Path | None = typer.Argument(None, metavar="[FILE]", help=FILE_HELP)) -> int:
    """Forget the approvals of a config file: none of its servers runs until 'mcpctl trust'.

    Exit 0 (also when the file was not trusted), 2 for your own file (in mcpctl's config
    dir), which is always trusted.

    Examples:

      mcpctl untrust

      mcpctl untrust ~/src/project/external-mcps.json --json
    """
    from mcpctl.config.trust import TrustStore

    store = TrustStore.from_paths(paths())
    path = (file if file is not None else paths().config).absolute()
    if store.is_own(path):
        raise UsageError(
            f"{path} is your own config (in mcpctl's config dir): it is always trusted",
            subjects=(str(path),),
        )
    found = store.untrust(path)
    output.info(f"{path} is no longer trusted" if found else f"{path} was not trusted")
    policy = store.policy()
    warnings = [f"{policy} trusts every file all the same"] if policy else []
    return output.emit(Result("untrust", {"file": str(path), "untrusted": found}, warnings))


def _all(views: list[ServerView]) -> str:
    if len(views) == 1:
        return "its server is"
    return f"all {len(views)} servers are" if views else "it has no servers: nothing is"


def _policy_note(status: FileTrust) -> list[str]:
    if status.reason in (None, "own"):
        return []
    return [f"{status.reason} trusts every file all the same; approvals count when it does not"]


def _review_lines(status: FileTrust, views: list[ServerView], waiting: list[ServerView]) -> Lines:
    """The servers waiting for approval, each with what it would run and receive."""
    new = sum(v.state == "new" for v in waiting)
    counts = ", ".join(
        f"{n} {state}" for n, state in ((new, "new"), (len(waiting) - new, "changed")) if n
    )
    trusted = len(views) - len(waiting)
    head = f"{status.path}: {plural(len(waiting), 'server')} to approve ({counts})"
    if status.client:
        head += f", {status.client}'s file"
    lines = [head + (f"; {trusted} already trusted" if trusted else "")]
    for view in waiting:
        lines += ["", f"  {view.name} ({view.state}{'' if view.enabled else ', disabled'})"]
        lines += [f"    {key:<9} {value}" for key, value in _facts(view)]
    return Lines([*lines, ""], keep=(str(status.path), *(v.name for v in waiting)))


def _facts(view: ServerView) -> list[tuple[str, str]]:
    facts: list[tuple[str, str]] = []
    if view.runs is not None:
        facts.append(("runs", view.runs))
        facts.append(("in", view.cwd if view.cwd is not None else "(the folder mcpctl runs in)"))
    if view.connects is not None:
        facts.append(("connects", f"{view.connects} ({view.transport})"))
    if view.headers:
        facts.append(("headers", ", ".join(view.headers)))
    if view.auth is not None:
        facts.append(("auth", view.auth))
    if view.helper is not None:
        facts.append(("helper", f"{view.helper} (run for its headers)"))
    if view.env:
        facts.append(("env", ", ".join(view.env)))
    if view.inherits is True:
        facts.append(("inherits", "your whole environment"))
    elif view.inherits:
        facts.append(("inherits", ", ".join(view.inherits)))
    if view.secrets:
        facts.append(("secrets", f"{', '.join(view.secrets)} (environment or keyring)"))
    return facts


def _ask(question: str) -> bool:
    """y/N on the terminal: anything but y or yes (an end of input too) is no."""
    sys.stderr.write(question)
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _list(store: TrustStore) -> int:
    files = store.files()
    data = {"files": [f.to_dict() for f in files], "policy": store.policy()}
    rows = [
        [f.path, str(len(f.servers)), f.trusted_at or "-", f.client or "-",
         "yes" if f.exists else "no (gone)"]
        for f in files
    ]  # fmt: skip
    table = Table(["FILE", "SERVERS", "TRUSTED", "CLIENT", "EXISTS"], rows, "no file is trusted")
    policy = store.policy()
    warnings = [f"{policy} trusts every file all the same"] if policy else []
    return output.emit(Result("trust", data, warnings), lambda _: table)
