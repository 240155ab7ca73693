"""Whether a client can start the servers of its file as mcpctl would, found without starting
any: the placeholders the client cannot resolve and the commands it cannot find, for
``render --install`` to report and ``health --as`` to explain (:func:`check_as_client`).

The file is read as the client reads it by :mod:`mcpctl.render.clientfile`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcpctl.config.placeholders import PLACEHOLDER_RE, SecretSource, secret_held
from mcpctl.errors import InvalidEntryError
from mcpctl.render.clientfile import ClientEntry, entry_strings, placeholder_names, read_client

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.render.base import Places

__all__ = ["ClientProblem", "ProblemKind", "check_as_client", "check_entry"]

ProblemKind = Literal["keyring", "unset", "input", "literal", "command"]


@dataclass(frozen=True)
class ClientProblem:
    """Why a client cannot start a server as mcpctl would.

    ``kind``: ``keyring`` (the variable is only in mcpctl's keyring), ``unset`` (it is set
    nowhere), ``input`` (the client asks a person for it, and it is not in the environment),
    ``literal`` (the client passes the placeholder on as written), ``command`` (the command is
    not found). ``message`` says it for a person, naming the fix.
    """

    server: str
    kind: ProblemKind
    message: str
    variable: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON view."""
        return {"server": self.server, "kind": self.kind, "variable": self.variable,
                "message": self.message}  # fmt: skip


def check_entry(
    item: ClientEntry,
    target: str,
    *,
    environ: Mapping[str, str] | None = None,
    secrets: SecretSource | None = None,
) -> list[ClientProblem]:
    """Why ``target`` cannot start ``item`` as mcpctl would, found without starting it.

    ``secrets`` (mcpctl's keyring) only tells a variable that is there from one set nowhere;
    the client never reads it. ``environ`` defaults to the process environment.
    """
    from mcpctl.config.placeholders import resolve_entry
    from mcpctl.probe.failures import precheck

    env = os.environ if environ is None else environ
    problems: list[ClientProblem] = []
    name = item.name
    seen: set[str] = set()
    for text in entry_strings(item.entry):
        for m in PLACEHOLDER_RE.finditer(text):
            var = m["name"]
            if var in seen:
                continue
            seen.add(var)
            literal = item.literals.get(var)
            if literal is not None:
                if not placeholder_names(
                    literal
                ):  # a value the client fills in (a helper's header)
                    continue
                shown = placeholder_names(literal)[0]
                where = _known(shown, env, secrets)
                fix = f"; {_literal_fix(item.entry.is_remote)}" if where is not None else ""
                problems.append(ClientProblem(
                    name, "literal",
                    f"{shown} is passed to the server as written: {target} does not expand "
                    f"that placeholder{fix}", shown,
                ))  # fmt: skip
            elif m["default"] is None and var not in env:
                problems.append(_unresolved(item, var, target, secrets))
    try:
        resolved = resolve_entry(name, item.entry, policy="empty", environ=env,
                                 secrets=item.source())  # fmt: skip
    except InvalidEntryError:
        resolved = None  # no process can be started with it: its probe says why
    if resolved is not None:
        early = precheck(resolved.entry)
        if early is not None and early.code in ("command_not_found", "spawn_failed"):
            problems.append(ClientProblem(name, "command", f"{early.message}: {target} cannot "
                                          "start it"))  # fmt: skip
    if item.headers_helper is not None:
        problems += _helper_found(item, target, env)
    return problems


def _helper_found(item: ClientEntry, target: str, env: Mapping[str, str]) -> list[ClientProblem]:
    """A problem when the headers helper's program is not where the client's shell looks."""
    import shlex
    import shutil

    try:
        program = shlex.split(item.headers_helper or "")[0]
    except (ValueError, IndexError):
        return []
    if "/" in program:
        found = Path(program).expanduser().exists()
    else:
        found = shutil.which(program, path=env.get("PATH")) is not None
    if found:
        return []
    return [ClientProblem(item.name, "command", f"the headers helper's command {program!r} is "
                          f"not found on PATH: {target} cannot get its headers")]  # fmt: skip


def check_as_client(
    target: str,
    file: Path | None = None,
    config: Mapping[str, ServerEntry] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    secrets: SecretSource | None = None,
    places: Places | None = None,
) -> list[ClientProblem]:
    """The servers of ``target``'s ``file`` that the client will not be able to start as
    mcpctl would, with the reasons; static: no server is started, nothing is written.

    ``file`` defaults to the client's file that ``mcpctl import`` reads. With ``config``
    (mcpctl's entries), only the servers of that name are checked (the ones an install
    manages). ``secrets`` (``keyring_source()``) tells a variable kept in mcpctl's keyring --
    which the client does not read -- from one set nowhere. Disabled servers are skipped.

    Raises:
        UsageError: ``target`` is not a client with a reader, no file, or not its format.
        StorageError: the file cannot be read.
    """
    view = read_client(target, file, places)
    problems: list[ClientProblem] = []
    for name, item in view.entries.items():
        if not item.entry.enabled or (config is not None and name not in config):
            continue
        problems += check_entry(item, target, environ=environ, secrets=secrets)
    return problems


def _literal_fix(remote: bool) -> str:
    """What makes a placeholder the client passes on as written reach the server."""
    if remote:  # a launcher cannot stand in for a URL
        return "render with --secrets inline (the file then holds the value, mode 0600)"
    return "render with --secrets launcher"


def _unresolved(
    item: ClientEntry, var: str, target: str, secrets: SecretSource | None
) -> ClientProblem:
    from mcpctl.render.clientfile import client_target
    from mcpctl.render.delivery import keyring_fix

    server, remote = item.name, item.entry.is_remote
    in_keyring = secret_held(secrets, var) is True
    if var in item.inputs:
        if not in_keyring:
            tail = f"; export {var} to probe it with a value"
        elif remote:  # the input is how the client gets it: the user types it
            tail = f"; type the keyring's value when {target} asks"
        else:
            tail = f"; {keyring_fix(client_target(target), remote)}"
        what = f"{var} is asked for by {target} when the server starts (an input)"
        return ClientProblem(server, "input", f"{what}, not taken from the keyring{tail}", var)
    if in_keyring:
        fix = keyring_fix(client_target(target), remote, var)
        return ClientProblem(server, "keyring", f"{var} comes from the keyring, which {target} "
                             f"does not read; {fix}", var)  # fmt: skip
    return ClientProblem(server, "unset", f"{var} is not set", var)


def _known(var: str, env: Mapping[str, str], secrets: SecretSource | None) -> str | None:
    if var in env:
        return "environment"
    if secret_held(secrets, var):
        return "keyring"
    return None
