"""Trust of a client's config file that ``health --as`` would start servers from, and the
review ``mcpctl trust`` shows of any file (an mcpctl config, or a client's).

A client's file in a project folder (``.mcp.json``, ``.cursor/mcp.json``,
``.vscode/mcp.json`` ...) comes with the project, like a project's ``external-mcps.json``: it
is someone else's words until ``mcpctl trust`` approves it (per server, by digest, in the
same record as config files). A client's user-level file (in the user's home, where the
client keeps the user's own servers) and a file under mcpctl's config dir are the user's own.

A client server's digest covers what ``health --as`` would run of it: the entry as the
client's reader gives it, each placeholder the client passes on as written restored to its
text, and the headers helper command the client runs before it connects.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpctl.config.trust import TrustStore
    from mcpctl.config.trustdescribe import ServerView
    from mcpctl.config.trustview import FileTrust
    from mcpctl.render.base import Places
    from mcpctl.render.clientfile import ClientEntry, ClientView

__all__ = [
    "client_digest",
    "client_of",
    "client_trust",
    "client_views",
    "detect_client",
    "is_users_own",
    "require_client_trusted",
    "review",
    "trust_client",
]

_PLACEHOLDER = re.compile(r"\$\{(?P<name>[A-Z_][A-Z0-9_]*)\}")


def _restored(value: Any, literals: dict[str, str]) -> Any:
    """``value`` with each literal placeholder back to the text it stands for."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: literals.get(m["name"], m.group(0)), value)
    if isinstance(value, list):
        return [_restored(v, literals) for v in value]
    if isinstance(value, dict):
        return {k: _restored(v, literals) for k, v in value.items()}
    return value


def client_digest(item: ClientEntry) -> str:
    """The digest of a client's server: what ``health --as`` would run and send."""
    from mcpctl.config.trustrecord import canonical, digest_of

    document = _restored(canonical(item.entry.to_data()), dict(item.literals))
    assert isinstance(document, dict)
    if item.headers_helper is not None:
        document["headers_helper"] = item.headers_helper
    return digest_of(document)


def is_users_own(target: str, file: Path, places: Places | None = None) -> bool:
    """``file`` is one of ``target``'s user-level files (the user's own servers)."""
    from mcpctl.render.clientfile import client_target
    from mcpctl.render.importing import here

    real = os.path.realpath(file)
    mine = client_target(target).locations("user", places or here())
    return any(os.path.realpath(path) == real for path in mine)


def detect_client(file: Path) -> str | None:
    """The client whose project-level file ``file`` is (``.cursor/mcp.json`` -> cursor), when
    its path says so."""
    from mcpctl.render.importing import client_targets, here

    real = Path(os.path.realpath(file))
    base = here()
    for folder in real.parents:
        places = type(base)(base.home, folder, base.system, base.environ)
        for target in client_targets():
            if any(os.path.realpath(p) == str(real) for p in target.locations("project", places)):
                return target.name
    return None


def client_of(file: Path, as_client: str | None = None) -> str | None:
    """The client whose file ``file`` is (``as_client`` when given, else found from its path),
    or ``None`` for an mcpctl config file (``external-mcps.json``, or any other file).

    Raises:
        UsageError: ``as_client`` is not a client with a config file mcpctl reads.
    """
    from mcpctl.paths import CONFIG_FILENAME
    from mcpctl.render.clientfile import client_target

    if as_client is not None:
        return client_target(as_client).name
    if file.name == CONFIG_FILENAME:
        return None
    return detect_client(file)


def client_trust(
    view: ClientView, store: TrustStore, places: Places | None = None, *, always: bool = False
) -> FileTrust:
    """The trust of the client's file ``view`` was read from (``always``: the servers'
    states even when the file is trusted as a whole)."""
    digests = {name: client_digest(item) for name, item in view.entries.items()}
    status = store.check_digests(view.file, digests, client=view.target, always=always)
    if status.reason is None and is_users_own(view.target, view.file, places):
        status.reason = "own"
    return status


def require_client_trusted(
    view: ClientView, store: TrustStore, places: Places | None = None
) -> None:
    """Refuse to start, connect to or run the headers helper of the enabled servers of a
    client's file nobody approved.

    Raises:
        UntrustedConfigError: some wait for approval (``mcpctl trust --as CLIENT FILE``).
    """
    status = client_trust(view, store, places)
    refusal = status.refusal([n for n, item in view.entries.items() if item.entry.enabled])
    if refusal is not None:
        raise refusal


def trust_client(view: ClientView, store: TrustStore) -> list[str]:
    """Approve every server of the client's file ``view`` (see
    :meth:`~mcpctl.config.trust.TrustStore.trust_digests`).

    Raises:
        StorageError, ReadOnlyError, LockTimeoutError: the record cannot be written.
    """
    digests = {name: client_digest(item) for name, item in view.entries.items()}
    return store.trust_digests(view.file, digests, client=view.target)


def client_views(view: ClientView, status: FileTrust) -> list[ServerView]:
    """What approving each server of the client's file lets happen (a placeholder the client
    passes on as written is shown as written, and is no secret it gets)."""
    from dataclasses import replace

    from mcpctl.config.trustdescribe import describe

    found = []
    for name, item in view.entries.items():
        state = status.servers[name].state if name in status.servers else "new"
        literals = dict(item.literals)
        entry = item.entry

        def text(value: str, literals: dict[str, str] = literals) -> str:
            return str(_restored(value, literals))

        shown = replace(
            entry,
            command=text(entry.command) if entry.command is not None else None,
            args=tuple(text(a) for a in entry.args),
            env={k: text(v) for k, v in entry.env.items()},
            cwd=text(entry.cwd) if entry.cwd is not None else None,
            url=text(entry.url) if entry.url is not None else None,
            headers={k: text(v) for k, v in entry.headers.items()},
        )
        secrets = describe(name, entry, state).secrets
        described = describe(name, shown, state, helper=item.headers_helper)
        kept = tuple(s for s in secrets if s not in literals)
        found.append(replace(described, secrets=kept))
    return found


def review(
    store: TrustStore, path: Path | None, as_client: str | None = None
) -> tuple[FileTrust, list[ServerView], Callable[[], list[str]]]:
    """What ``mcpctl trust`` shows of the file at ``path`` (a client's with ``as_client``, or
    when its path says so; else an mcpctl config): its trust, what each server would do, and
    the call that approves them all (it returns the servers not trusted before). ``path``
    may be ``None`` with ``as_client``: the client's own file, as ``health --as`` finds it.

    Raises:
        ConfigNotFoundError, ConfigError: the config file cannot be read.
        UsageError: the client's file cannot be read, or the file is a client's whose path
            does not say which client.
    """
    from mcpctl.config.loader import read_config
    from mcpctl.config.trustdescribe import describe
    from mcpctl.errors import UsageError

    client = client_of(path, as_client) if path is not None else as_client
    if client is not None:
        from mcpctl.render.clientfile import client_target, read_client

        client = client_target(client).name
        if path is not None and not path.is_file():
            raise UsageError(f"there is no file {path}", hint=f"mcpctl trust --as {client} FILE")
        view = read_client(client, path)
        status = client_trust(view, store, always=True)
        return status, client_views(view, status), lambda: trust_client(view, store)
    if path is None:
        raise UsageError("which file? give FILE, or --as CLIENT for a client's own")
    loaded = read_config(path, must_exist=True)
    wrapped = next((p for p in loaded.problems if p.code == "wrapped_servers"), None)
    if wrapped is not None:  # a client's file whose path does not say which client
        raise UsageError(
            f"{path}: {wrapped.message}",
            hint=f"name the client whose file it is: mcpctl trust --as CLIENT {path}",
            subjects=(str(path),),
        )
    entries = loaded.config.entries
    status = store.check(path, entries, always=True)
    views = [describe(n, e, status.servers[n].state) for n, e in entries.items()]
    return status, views, lambda: store.trust(path, entries)
