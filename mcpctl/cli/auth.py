"""Signing in to remote servers with OAuth: auth NAME, auth status, auth logout."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import typer

from mcpctl.cli import output
from mcpctl.cli.asyncrun import run_async
from mcpctl.cli.commandgroup import CommandGroup
from mcpctl.cli.common import read_config, require_trusted
from mcpctl.cli.flagvalues import parse_duration
from mcpctl.cli.output import STATE, Table
from mcpctl.errors import ExitCode, Interrupted, ServerNotFoundError, SignInError, UsageError
from mcpctl.results import Result

if TYPE_CHECKING:
    from mcpctl.config.loader import LoadResult
    from mcpctl.config.model import ServerEntry
    from mcpctl.config.placeholders import ResolvedEntry

app = typer.Typer()
GROUP_HELP = """Sign in to remote servers that use OAuth ("auth": {"type": "oauth"}).

'mcpctl auth NAME' signs in: in a browser (the address is also printed; with --no-browser,
or without a display, paste back the address the browser lands on), or machine to machine
with --grant client_credentials. The tokens go to the OS keyring (item oauth:NAME) and are
renewed when they expire; health, tools and call use them and never open a browser.

Examples:

  mcpctl auth github

  mcpctl auth github --no-browser --scope repo:read

  mcpctl auth build-bot --grant client_credentials

  mcpctl auth status --json

  mcpctl auth logout github
"""


class AuthGroup(CommandGroup):
    """``mcpctl auth NAME`` is the (hidden) ``login`` command: a first argument that names no
    subcommand names a server."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            args = ["login", *args]
        return super().resolve_command(ctx, args)


auth_app = typer.Typer(
    help=GROUP_HELP,
    no_args_is_help=True,
    cls=AuthGroup,
    subcommand_metavar="NAME [OPTIONS] | COMMAND [ARGS]...",
)
app.add_typer(auth_app, name="auth")


class Grant(StrEnum):
    """How to sign in."""

    authorization_code = "authorization_code"
    client_credentials = "client_credentials"


def _oauth_entry(loaded: LoadResult, name: str) -> ServerEntry:
    entries = loaded.config.entries
    entry = entries.get(name)
    if entry is None:
        raise ServerNotFoundError.for_names([name], entries, loaded.path)
    if not entry.is_remote or entry.url is None:
        raise UsageError(f"{name} is a stdio server: only remote servers sign in")
    if entry.auth is None or entry.auth.type != "oauth":
        kind = entry.auth.type if entry.auth is not None else "none"
        raise UsageError(
            f"{name} does not use OAuth (its auth is {kind!r})",
            hint='give its entry "auth": {"type": "oauth"} in the config',
        )
    return entry


def _resolve(name: str, entry: ServerEntry, *, strict: bool) -> ResolvedEntry:
    from mcpctl.auth.secrets import keyring_source
    from mcpctl.config.placeholders import resolve_entry

    resolved = resolve_entry(
        name, entry, policy="error" if strict else "empty", secrets=keyring_source()
    )
    assert resolved is not None  # only the "skip" policy gives none
    return resolved


def _sayer(url: str) -> Callable[[str], None]:
    """How lines reach the person signing in: on stderr, even with -q or --json, and whole --
    the authorization address must work. Its ``state``, PKCE challenge and client id are not
    secrets (though they may look like keys, or come from a placeholder); the one secret it
    could carry is one resolved into the server's ``url`` (its ``resource`` parameter): that
    is hidden."""
    from urllib.parse import quote, quote_plus

    from mcpctl.config.placeholders import redact_text, resolved_values
    from mcpctl.text import escape_controls

    hidden = [v for v in resolved_values() if v in url]
    forms = {form for v in hidden for form in (v, quote(v, safe=""), quote_plus(v))}

    def say(line: str) -> None:
        output.stderr(escape_controls(redact_text(line, forms)))

    return say


@auth_app.command("login", hidden=True)
def login(
    name: str = typer.Argument(..., metavar="NAME", help="The server: a remote entry with OAuth."),
    no_browser: bool = typer.Option(
        False,
        "--no-browser",
        help="Do not open a browser: print the address, and also accept the address the "
        "browser lands on pasted on stdin (automatic without a display).",
    ),
    scopes: list[str] | None = typer.Option(
        None,
        "--scope",
        metavar="SCOPE",
        help="A scope to ask for (repeatable; default: the entry's scopes, else the server's).",
    ),
    grant: Grant = typer.Option(
        Grant.authorization_code,
        "--grant",
        help="authorization_code (a person, in a browser) or client_credentials (machine to "
        "machine, with the entry's client_id and client_secret).",
    ),
    client_metadata_url: str | None = typer.Option(
        None,
        "--client-metadata-url",
        metavar="URL",
        help="The https URL of a client ID metadata document (default: the entry's).",
    ),
    timeout: str = typer.Option(
        "5m",
        "--timeout",
        envvar="MCPCTL_AUTH_TIMEOUT",
        metavar="DURATION",
        help="How long to wait for the browser's answer, and at most for each request to the "
        "servers (30 s at most): 5m, 90s; a bare number is seconds (env MCPCTL_AUTH_TIMEOUT).",
    ),
) -> int:
    """Sign in to a server (mcpctl auth NAME): tokens to the keyring.

    Prints the address to open on stderr, opens a browser when there is a display, and waits
    for the answer on a loopback port (the entry's callback_port, else a free one) -- or, with
    --no-browser, for the address the browser lands on, pasted on stdin. Exit 0 once the tokens
    are stored; 1 when access is denied, the answer is not this sign-in's, or none comes in time.

    Examples:

      mcpctl auth github

      mcpctl auth github --no-browser

      mcpctl auth build-bot --grant client_credentials --scope deploy
    """
    from mcpctl.auth.oauthtokens import load_record, token_status
    from mcpctl.auth.signin import SignIn, has_display, sign_in

    STATE.command = "auth"
    seconds, note = parse_duration(timeout)
    if note:
        output.warn(note)
    loaded = read_config()
    entry = _oauth_entry(loaded, name)
    require_trusted(loaded, [name])  # it would connect, with the entry's secrets
    load_record(name)  # no usable keyring: say so now, not after the browser
    resolved = _resolve(name, entry, strict=True)
    assert resolved.entry.url is not None and resolved.entry.auth is not None
    browser = not no_browser and has_display()
    request = SignIn(
        name=name,
        url=resolved.entry.url,
        auth=resolved.entry.auth,
        headers=dict(resolved.entry.headers),
        transport=entry.transport,
        scopes=tuple(scopes or ()),
        grant=grant.value,
        browser=browser,
        paste=not browser,
        timeout=seconds,
        client_metadata_url=client_metadata_url,
    )
    try:
        say = _sayer(request.url)
        # A spinner while the browser is away; none while a pasted address is read on stdin.
        done = run_async(
            lambda: sign_in(request, say),
            what=f"Waiting for the sign-in to {name} (Ctrl-C to stop)",
            spinner=browser,
        )
    except Interrupted as exc:
        raise SignInError(
            f"signing in to {name} was stopped ({exc.signal.name}); nothing was stored"
        ) from None
    status = token_status(name, resolved.entry.url, done.record)
    output.info(f"Signed in to {name}")
    return output.emit(Result("auth", status, done.warnings))


@auth_app.command("status")
def auth_status(
    names: list[str] | None = typer.Argument(
        None, metavar="[NAME]...", help="Servers (default: every remote server)."
    ),
) -> int:
    """Show each server's sign-in (never a token).

    Per server: its auth type, whether tokens are stored, when they expire, the scopes, the
    authorization server, and whether they are stale (the entry's url changed). Exit 1 when
    an OAuth server shown has no usable sign-in.

    Examples:

      mcpctl auth status

      mcpctl auth status github --json
    """
    from mcpctl.auth.oauthtokens import load_record, token_status
    from mcpctl.config import trustguard
    from mcpctl.config.placeholders import resolve_text

    loaded = read_config()
    entries = loaded.config.entries
    missing = [n for n in names or [] if n not in entries]
    if missing:
        raise ServerNotFoundError.for_names(missing, entries, loaded.path)
    chosen = list(dict.fromkeys(names)) if names else [n for n, e in entries.items() if e.is_remote]
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for name in chosen:
        entry = entries[name]
        kind = entry.auth.type if entry.auth is not None else "none"
        if kind != "oauth":
            rows.append({"server": name, "auth": kind, **token_status(name, entry.url, None)})
            continue
        if trustguard.held(name, entry) is None:
            url = _resolve(name, entry, strict=False).entry.url
        else:  # a server nobody approved gets nothing from the keyring, even for a look
            url = resolve_text(entry.url, policy="empty") if entry.url else entry.url
        row = {"server": name, "auth": kind, **token_status(name, url, load_record(name))}
        rows.append(row)
        if not row["signed_in"] or row["problem"]:
            why = row["problem"] or "not signed in"
            problems.append(f"{name}: {why}; run 'mcpctl auth {name}'")
    table = Table(
        ["NAME", "AUTH", "SIGNED IN", "EXPIRES", "SCOPES", "AUTHORIZATION SERVER"],
        [_status_row(r) for r in rows],
        "no remote servers",
    )
    result = Result(
        "auth status",
        {"servers": rows},
        problems,
        exit_code=ExitCode.FAILED if problems else ExitCode.OK,
    )
    return output.emit(result, lambda _: table)


def _status_row(row: dict[str, Any]) -> list[str]:
    if row["auth"] != "oauth":
        return [row["server"], row["auth"], "-", "-", "-", "-"]
    if row["stale"]:
        signed = "stale (url changed)"
    elif row["signed_in"]:
        signed = "yes" if not row["problem"] else f"no: {row['problem']}"
    else:
        signed = f"no: {row['problem']}" if row["problem"] else "no"
    expires = row["expires_at"] or "-"
    if row["expired"]:
        expires += " (expired; renewed on use)" if row["refreshable"] else " (expired)"
    return [row["server"], row["auth"], signed, expires, " ".join(row["scopes"]) or "-",
            row["authorization_server"] or "-"]  # fmt: skip


@auth_app.command("logout")
def logout(
    name: str = typer.Argument(..., metavar="NAME", help="The server to sign out of."),
) -> int:
    """Sign out of a server: revoke its tokens, delete them from the keyring.

    The tokens are revoked at the authorization server when it offers revocation; they and the
    client registration are deleted from the keyring either way.

    Examples:

      mcpctl auth logout github
    """
    from mcpctl.auth.revoke import sign_out

    loaded = read_config()
    entry = loaded.config.entries.get(name)
    secret = None
    if entry is not None and entry.auth is not None and entry.auth.type == "oauth":
        require_trusted(loaded, [name])  # its client secret goes to the revocation endpoint
        auth = _resolve(name, entry, strict=False).entry.auth
        secret = auth.client_secret if auth is not None else None
    done = run_async(lambda: sign_out(name, client_secret=secret), what="Signing out…")
    data = {"server": name, "deleted": done.deleted, "revoked": done.revoked}
    if not done.deleted:
        if entry is None:
            raise ServerNotFoundError.for_names([name], loaded.config.entries, loaded.path)
        output.info(f"{name} had no stored sign-in")
        return output.emit(Result("auth logout", data))
    warnings = [f"{name}: the tokens were not revoked: {done.problem}"] if done.problem else []
    revoked = "; its tokens were revoked" if done.revoked else ""
    output.info(f"Signed out of {name}{revoked}")
    return output.emit(Result("auth logout", data, warnings))
