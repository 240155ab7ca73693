"""How a rendered file gets its secrets without holding them: the three secret modes.

A client resolves a placeholder from its own environment; mcpctl resolves it from the
environment, then from the OS keyring. A secret kept only in the keyring is therefore lost
on the way to a client unless the rendered file asks mcpctl for it:

* ``launcher`` -- a stdio server runs as ``mcpctl run NAME --config FILE``, which resolves
  the entry (environment, then keyring) and execs the server in place; a remote server's
  keyring-held headers come from ``mcpctl secret headers NAME`` where the client can run a
  command for them (Claude Code's ``headersHelper``), from the client's own secret prompt
  where it has one (VS Code's password inputs), and otherwise a warning names the variable
  the client must find in its environment;
* ``env`` -- placeholders are left for the client to resolve (a warning names each variable
  that only the keyring has);
* ``inline`` -- the values are written into the file (opt-in only): every placeholder of a
  client's entry is resolved (environment, keyring, default) before the client renders it,
  whatever the client could expand itself, so the file holds secrets (mode 0600, and a
  warning says so).

One rule per transport: ``launcher`` applies to stdio servers only (``mcpctl run`` starts a
process; a remote server is reached by URL), so a remote server's header gets its value from
the client's own mechanism, the client's environment (``env``), or the file (``inline``).

``auto`` (the default) is ``launcher`` for the entries that need it -- a placeholder whose
value only the keyring holds -- and ``env`` for the others.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mcpctl.config.model import ServerEntry
from mcpctl.config.placeholders import SecretSource, resolve_entry, secret_held
from mcpctl.render.base import names_used

__all__ = [
    "SECRETS_MODES",
    "SELF_NAME",
    "Delivery",
    "Launcher",
    "SecretsMode",
    "deliver",
    "entry_texts",
    "in_git_work_tree",
    "inline",
    "keyring_fix",
    "resolved_headers",
    "serve_entry",
]

SecretsMode = Literal["auto", "launcher", "env", "inline"]
SECRETS_MODES: tuple[SecretsMode, ...] = ("auto", "launcher", "env", "inline")


@dataclass(frozen=True)
class Launcher:
    """How a rendered file starts mcpctl: ``program`` (found on the client's PATH unless a
    path) and the config it names (``config``: as written, ``~`` for the home directory;
    ``None`` names none)."""

    program: str = "mcpctl"
    config: str | None = None

    @classmethod
    def for_config(cls, path: Path, home: Path | None = None) -> Launcher:
        """The launcher naming config file ``path``: ``~/...`` under the home directory, so
        the rendered file is the same on every machine laid out alike.

        The config is always named: started in a project's folder, ``mcpctl run NAME``
        would otherwise read that project's ``external-mcps.json``, and a repository could
        stand in a server of its own, fed with your keyring's secrets.
        """
        absolute = path.expanduser().absolute()
        base = Path.home() if home is None else home
        try:
            rel = absolute.relative_to(base)
        except ValueError:
            return cls(config=str(absolute))
        return cls(config="~/" + rel.as_posix() if rel.parts else str(absolute))

    def run_args(self, name: str) -> tuple[str, ...]:
        """The arguments of ``mcpctl run NAME``."""
        return ("run", name, *(("--config", self.config) if self.config else ()))

    def headers_command(self, name: str) -> str:
        """The shell command that prints server ``name``'s headers (a headers helper)."""
        config = ("--config", self.config) if self.config else ()
        # "~" must reach mcpctl as is (it expands it itself), and everything else quoted.
        words = [self.program, "secret", "headers", name, *config]
        return " ".join(w if w.startswith("~/") and shlex.quote(w[2:]) == w[2:] else
                        shlex.quote(w) for w in words)  # fmt: skip


#: The name of the entry that runs ``mcpctl serve`` in a client's file (``render --self``).
SELF_NAME = "mcpctl"


def serve_entry(
    config: Path,
    user_config: Path,
    *,
    allow_changes: bool = False,
    program: str = "mcpctl",
    home: Path | None = None,
) -> ServerEntry:
    """The stdio entry that starts ``mcpctl serve``: mcpctl itself as an MCP server of the
    client, on config file ``config``.

    ``--config`` names the file unless it is ``user_config`` (the user's own, which ``serve``
    reads by default), as ``~/...`` under the home directory; ``--allow-changes`` is there
    only when ``allow_changes`` (each change still asks the user).
    """
    args = ["serve"]
    if config.expanduser().absolute() != user_config.expanduser().absolute():
        named = Launcher.for_config(config, home).config
        assert named is not None  # for_config always names the file
        args += ["--config", named]
    if allow_changes:
        args.append("--allow-changes")
    return ServerEntry(
        command=program,
        args=tuple(args),
        description="mcpctl: this agent's MCP servers (list, health, doctor, tools, search)",
    )


@dataclass
class Delivery:
    """What :func:`deliver` decided for one rendering.

    Attributes:
        entries: the entries to render: launched stdio servers replaced by the launcher.
        launched: the servers that run through the launcher.
        keyring_vars: the variables whose value only the keyring holds.
        notes: warnings for people (``server: field why``).
    """

    entries: dict[str, ServerEntry]
    launched: list[str] = field(default_factory=list)
    keyring_vars: frozenset[str] = frozenset()
    notes: list[str] = field(default_factory=list)
    holds_secrets: bool = False


def entry_texts(entry: ServerEntry) -> list[str]:
    """Every string of ``entry`` a placeholder may sit in."""
    texts = [entry.command or "", *entry.args, *entry.env.values(), entry.cwd or ""]
    texts += [entry.url or "", *entry.headers.values()]
    auth = entry.auth
    if auth is not None:
        texts += [v for v in (auth.token, auth.value, auth.username, auth.password) if v]
    return texts


def _launch_entry(name: str, entry: ServerEntry, launcher: Launcher) -> ServerEntry:
    """The stdio entry that runs ``mcpctl run NAME``: the launcher applies the rest."""
    return ServerEntry(
        command=launcher.program,
        args=launcher.run_args(name),
        timeout=entry.timeout,
        protocol=entry.protocol,
        sensitive=entry.sensitive,
        description=entry.description,
        enabled=entry.enabled,
        tools=entry.tools,
        source=entry.source,
    )


def deliver(
    entries: Mapping[str, ServerEntry],
    mode: SecretsMode,
    *,
    launcher: Launcher,
    environ: Mapping[str, str],
    secrets: SecretSource | None,
    label: str,
    expands: bool = True,
) -> Delivery:
    """Decide how each entry gets its secrets when rendered for the client ``label``
    (``expands``: whether it expands placeholders at all).

    A variable is "in the keyring only" when ``environ`` lacks it and ``secrets`` has it.
    """
    keyring: set[str] = set()
    for var in names_used(t for e in entries.values() for t in entry_texts(e)):
        # A keyring that cannot be asked holds nothing here: rendering is static, and a
        # machine without one (CI) renders for the client's environment, as it always has.
        if var not in environ and secret_held(secrets, var):
            keyring.add(var)
    out = Delivery(dict(entries), keyring_vars=frozenset(keyring))
    for name, entry in entries.items():
        used = [v for v in names_used(entry_texts(entry)) if v in keyring]
        if entry.is_remote or mode in ("inline",):
            continue
        if mode == "launcher" or (mode == "auto" and used):
            out.entries[name] = _launch_entry(name, entry, launcher)
            out.launched.append(name)
        elif used:
            why = (
                "reads placeholders from its own environment, where they are not set"
                if expands
                else "expands no placeholder"
            )
            out.notes.append(
                f"{name}: {', '.join(used)} only in the keyring: {label} {why} (--secrets "
                "launcher runs the server through mcpctl)"
            )
    return out


def inline(
    entries: Mapping[str, ServerEntry],
    *,
    environ: Mapping[str, str],
    secrets: SecretSource | None,
    label: str,
    expands: str | None,
) -> Delivery:
    """``--secrets inline`` for the client ``label``: each entry with its placeholders
    resolved (environment, then ``secrets``, then the default), for every transport.

    ``expands`` is the client's own placeholder spelling (``${env:VAR}``), ``None`` when it
    expands none: a client that could read the values from its environment is told so.

    Raises:
        PlaceholderError: a variable has no value anywhere
            (:class:`~mcpctl.errors.SecretUnreachableError`: the keyring could not be asked).
        InvalidEntryError: a resolved stdio entry holds what no process can be given.
    """
    out = Delivery(dict(entries))
    for name, entry in entries.items():
        if not names_used(entry_texts(entry)):
            continue
        resolved = resolve_entry(name, entry, policy="error", environ=environ, secrets=secrets)
        assert resolved is not None  # the "error" policy raises instead
        out.entries[name] = resolved.entry
        out.holds_secrets = True
    if out.holds_secrets and expands is not None:
        out.notes.append(
            f"--secrets inline wrote the values, though {label} expands {expands} itself: "
            "--secrets env (or auto) keeps them out of the file"
        )
    return out


def keyring_fix(client: object, remote: bool, var: str | None = None) -> str:
    """What makes a value that only mcpctl's keyring holds reach ``client`` (a client
    target) for a server of that transport: the one rule every hint follows.

    A stdio server runs through ``mcpctl run`` (``--secrets launcher``). A launcher cannot
    stand in for a remote server, so its header comes from the client's own mechanism where
    it has one -- Claude Code's headers helper, VS Code's password input, both what
    ``--secrets auto`` writes -- and otherwise from the client's environment or the file.
    """
    if not remote:
        return "render with --secrets launcher"
    label = str(getattr(client, "label", client))
    helper = getattr(client, "headers_helper", None)
    if helper:
        return f"render with --secrets auto: {label}'s {helper} then asks mcpctl for it"
    if getattr(client, "prompts_secrets", False):
        return f"render with --secrets auto: {label} then asks for it as a password input"
    where = f"export {var}" if var else "set it"
    return (
        f"{where} in the environment {label} starts from, or render with --secrets inline "
        "(the file then holds the value, mode 0600); a launcher cannot reach a remote server"
    )


def resolved_headers(
    name: str,
    entry: ServerEntry,
    *,
    environ: Mapping[str, str] | None = None,
    secrets: SecretSource | None = None,
) -> dict[str, str]:
    """The HTTP headers of remote server ``name`` with their placeholders resolved: its
    ``headers`` and the one its bearer, header or basic ``auth`` makes.

    An OAuth entry's token is not among them (the client signs in itself).

    Raises:
        UsageError: ``name`` is a stdio server.
        PlaceholderError: a variable has no value anywhere.
    """
    import base64

    from mcpctl.config.placeholders import resolve_entry
    from mcpctl.errors import UsageError

    if not entry.is_remote:
        raise UsageError(f"{name} is a stdio server: it has no HTTP headers",
                         hint=f"a client starts it with: mcpctl run {name}")  # fmt: skip
    resolved = resolve_entry(name, entry, policy="error", environ=environ, secrets=secrets)
    assert resolved is not None  # the "error" policy raises instead
    run = resolved.entry
    headers = dict(run.headers)
    auth = run.auth
    if auth is not None and auth.type == "bearer" and auth.token is not None:
        headers["Authorization"] = f"Bearer {auth.token}"
    elif auth is not None and auth.type == "header" and auth.value is not None:
        headers[auth.name or "Authorization"] = auth.value
    elif auth is not None and auth.type == "basic":
        pair = f"{auth.username or ''}:{auth.password or ''}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
    return headers


def in_git_work_tree(path: Path) -> bool:
    """``path`` is inside a git work tree (a ``.git`` folder or file in it or a parent)."""
    here = path.expanduser().absolute().parent
    return any((folder / ".git").exists() for folder in (here, *here.parents))
