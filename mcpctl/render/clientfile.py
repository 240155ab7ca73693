"""A client's config file as that client runs it: which servers it can start, and why not.

:func:`read_client` reads a client's file with the target's import reader (the one ``mcpctl
import`` uses) into :class:`ClientEntry` items that keep what the client does with each
placeholder: one written in the client's own syntax (Cursor's ``${env:VAR}``, Claude Code's
``${VAR:-default}``, VS Code's ``${env:VAR}`` and ``${input:ID}``...) is expanded by the
client, from its environment only -- never from mcpctl's keyring; one the client does not
expand (any ``${VAR}`` in a Claude Desktop, Codex or Zed file, a ``${VAR}`` in Cursor's) reaches
the server as written. An entry that starts ``mcpctl run NAME`` (the launcher) resolves its
own secrets when it starts, so it needs nothing from the client but to be found.

:mod:`mcpctl.render.clientcheck` gives the static verdict (no server is started), and
:mod:`mcpctl.render.clienthealth` probes the entries and compares with plain ``health``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from mcpctl.config.placeholders import PLACEHOLDER_RE, SecretSource
from mcpctl.errors import UsageError

if TYPE_CHECKING:
    from mcpctl.config.model import ServerEntry
    from mcpctl.render.base import ClientTarget, Places

__all__ = [
    "LITERAL_PREFIX",
    "ClientEntry",
    "ClientView",
    "as_client_targets",
    "client_target",
    "entry_strings",
    "is_launcher",
    "placeholder_names",
    "read_client",
]


# A placeholder the client passes on as written is replaced, for the probe, by one of these
# names, which resolve to the original text (never from the environment: no one exports them).
LITERAL_PREFIX = "MCPCTL_AS_CLIENT_LITERAL_"
_ESCAPE = "\ue000"  # marks a "${" the client does not expand, while its file is read
_ESCAPED_RE = re.compile(
    "\\$" + _ESCAPE + r"\{(?P<name>[A-Z_][A-Z0-9_]*)(?::-(?P<default>[^{}]*))?\}"
)
_VSCODE_OWN = re.compile(r"\$\{(?:env|input):")
_VSCODE_INPUT = re.compile(r"\$\{input:(?P<id>[^}$]++)\}")  # "$": linear (see _VSCODE_BACK)
_JSON_KEY = re.compile(r'"(?P<name>[A-Z_][A-Z0-9_]*)"\s*:')


@dataclass(frozen=True)
class ClientEntry:
    """One server of a client's file, as the client starts it.

    Attributes:
        entry: the server; its ``${VAR}`` placeholders are the ones the client expands (from
            its environment), and each one it passes on as written is a placeholder named
            ``MCPCTL_AS_CLIENT_LITERAL_<n>`` whose value is the text (see :attr:`literals`).
        literals: those names -> the text the server gets.
        inputs: the variables the client asks a person for (VS Code's ``${input:ID}``).
        launcher: the entry runs ``mcpctl run NAME``: it resolves its own secrets.
        headers_helper: the shell command the client runs for the server's headers (Claude
            Code's ``headersHelper``), whose output joins ``entry.headers``.
        listed: the variables the file tells the client to pass the server (Codex's
            ``env_vars``), as written; ``None`` when the client has no such list.
    """

    name: str
    entry: ServerEntry
    literals: Mapping[str, str] = field(default_factory=dict)
    inputs: frozenset[str] = frozenset()
    launcher: bool = False
    headers_helper: str | None = None
    listed: tuple[str, ...] | None = None

    def source(self) -> SecretSource:
        """What the client resolves besides its environment: only the literal texts."""
        return self.literals.get

    def probe_entry(self) -> ServerEntry:
        """The entry to probe, whose ``inherit_env`` is what the file lists for the client to
        pass (the environment itself is the client's: :mod:`mcpctl.render.clientenv`)."""
        return replace(self.entry, inherit_env=self.listed or ())


@dataclass
class ClientView:
    """A client's file read as the client runs it."""

    target: str
    file: Path
    entries: dict[str, ClientEntry] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    literals: dict[str, str] = field(default_factory=dict)  # of every entry (names unique)

    def source(self) -> SecretSource:
        """What the client resolves besides its environment: only the literal texts."""
        return self.literals.get


def as_client_targets() -> list[str]:
    """The targets ``health --as`` and :func:`check_as_client` accept: clients with a reader."""
    from mcpctl.render.importing import client_targets

    return [t.name for t in client_targets()]


def client_target(name: str) -> ClientTarget:
    """The client target ``name``.

    Raises:
        UsageError: no such target, or it is not a client with a config file of its own.
    """
    from mcpctl.render.importing import client_targets
    from mcpctl.text import closest

    clients = {t.name: t for t in client_targets()}
    if name in clients:
        return clients[name]
    names = ", ".join(clients)
    guess = closest(name, clients)
    what = "a client with a config file mcpctl can read" if _is_target(name) else "a client"
    hint = f"did you mean {guess!r}? " if guess else ""
    raise UsageError(f"{name!r} is not {what}", hint=f"{hint}clients: {names}")


def _is_target(name: str) -> bool:
    from mcpctl.render.targets import TARGET_MODULES

    return name in TARGET_MODULES


def is_launcher(entry: ServerEntry, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``entry`` starts this mcpctl's ``mcpctl run NAME`` (what renders with a
    launcher write): its command resolves (on ``environ``'s PATH, default the process's) to
    the program this process runs. Any other program named ``mcpctl`` is an ordinary server
    (:mod:`mcpctl.render.launchers`)."""
    from mcpctl.render.launchers import is_own_launcher

    return is_own_launcher(entry, environ)


def read_client(target: str, file: Path | None = None, places: Places | None = None) -> ClientView:
    """``target``'s file (default: the one ``mcpctl import`` reads) as the client runs it.

    The literal secrets the file holds (what ``mcpctl import`` would move to the keyring: a
    value under ``DB_PASSWORD``, after ``--password``, that looks like a token) are
    registered with the redaction (:func:`mcpctl.config.redaction.register`) before this
    returns: whatever a server started from it says is shown without them.

    Raises:
        UsageError: not a client, no file found, or the file is not the client's format.
        StorageError: the file cannot be read.
    """
    from mcpctl.render.importing import _read, here, read_source

    client = client_target(target)
    if file is None:
        file, _ = read_source(target, None, places or here())
    text = _read(file)
    try:
        parsed = client.parse(_escape(client, text))
    except UsageError as exc:
        raise UsageError(f"{file}: {exc.message}", hint=exc.hint) from None
    inputs = _inputs(client, text)
    helpers = _headers_helpers(client, text)
    from mcpctl.render.clientenv import listed_env

    listed = listed_env(client, text)
    helper_key = getattr(client, "headers_helper", None)
    view = ClientView(target, file, warnings=[
        w.replace(_ESCAPE, "") for w in parsed.warnings
        if not (helper_key and f": {helper_key} is not imported" in w)])  # fmt: skip
    from mcpctl.config.redaction import literal_secret_values, register

    for name, entry in parsed.entries.items():
        clean = _map_strings(entry, lambda s: _unescape(s, view.literals))
        register(literal_secret_values(clean.to_data()))
        used = {ph for s in entry_strings(clean) for ph in placeholder_names(s)}
        own = {k: v for k, v in view.literals.items() if k in used}
        view.entries[name] = ClientEntry(
            name, clean, own, frozenset(used & inputs), launcher=is_launcher(clean),
            headers_helper=helpers.get(name) if clean.is_remote else None,
            listed=listed.get(name, ()) if listed is not None else None,
        )  # fmt: skip
    return view


def _headers_helpers(client: ClientTarget, text: str) -> dict[str, str]:
    """Server name -> the headers helper command the client's file gives it."""
    key = getattr(client, "headers_helper", None)
    if key is None:
        return {}
    try:
        servers = client.servers_of(client.load(text))  # type: ignore[attr-defined]
    except UsageError:
        return {}
    return {
        str(name): raw[key]
        for name, raw in servers.items()
        if isinstance(raw, dict) and isinstance(raw.get(key), str) and raw[key].strip()
    }


def helper_headers(item: ClientEntry, literals: dict[str, str]) -> ClientEntry:
    """``item`` with the headers its helper printed, each a literal (so that its value is
    redacted like a resolved secret wherever it could show).

    Raises:
        UsageError: the helper failed, ran over 10 s, or printed no JSON object of strings.
    """
    import subprocess

    assert item.headers_helper is not None
    env = {**os.environ, "CLAUDE_CODE_MCP_SERVER_NAME": item.name,
           "CLAUDE_CODE_MCP_SERVER_URL": item.entry.url or ""}  # fmt: skip
    why = f"{item.name}: its headers helper"
    try:
        done = subprocess.run(  # noqa: S602 -- the client runs it through a shell too
            item.headers_helper, shell=True, env=env, capture_output=True, timeout=10,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise UsageError(f"{why} ran over 10 s") from None
    except OSError as exc:
        raise UsageError(f"{why} cannot be run: {exc.strerror or exc}") from None
    if done.returncode != 0:
        said = _first_line(done.stderr)
        raise UsageError(f"{why} failed (exit {done.returncode})" + (f": {said}" if said else ""))
    from mcpctl.render.readers import DocumentError, load_json

    try:
        headers = load_json(done.stdout.decode("utf-8"), comments=False)
    except (DocumentError, UnicodeDecodeError):
        headers = None
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise UsageError(f"{why} did not print a JSON object of strings")
    own = dict(item.literals)
    spelled: dict[str, str] = {}
    for key, value in headers.items():
        name = f"{LITERAL_PREFIX}{len(literals)}"
        literals[name] = own[name] = value
        spelled[str(key)] = "${" + name + "}"
    entry = replace(item.entry, headers={**item.entry.headers, **spelled})
    return replace(item, entry=entry, literals=own)


# --- reading placeholders as the client does ------------------------------------------------


def _first_line(stderr: bytes) -> str:
    """The first line a failed helper wrote on stderr, one line, controls escaped, cut."""
    from mcpctl.text import escape_controls

    text = stderr[:4096].decode("utf-8", "replace")
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = escape_controls(line, keep_newlines=False)
    return line if len(line) <= 300 else line[:299] + "…"


def _own_spans(client: ClientTarget, text: str) -> set[int]:
    """Where in ``text`` a ``${`` starts a placeholder the client expands itself."""
    from mcpctl.render.clients import Syntax
    from mcpctl.render.clients_special import ClaudeDesktop, VsCode

    if isinstance(client, VsCode):
        return {m.start() for m in _VSCODE_OWN.finditer(text)}
    if isinstance(client, ClaudeDesktop):
        # mcp-remote (the bridge to a remote server) expands ${VAR} in its arguments from
        # the variables of the entry's env: those are the client's own.
        keys = {m["name"] for m in _JSON_KEY.finditer(text)}
        return {m.start() for m in PLACEHOLDER_RE.finditer(text) if m["name"] in keys
                and m["default"] is None and "--header" in text}  # fmt: skip
    syntax = getattr(client, "syntax", None)
    if not isinstance(syntax, Syntax) or syntax.spell is None:
        return set()
    pattern = syntax.back or PLACEHOLDER_RE
    return {m.start() for m in pattern.finditer(text)}


def _escape(client: ClientTarget, text: str) -> str:
    """``text`` with each ``${`` the client does not expand marked, so the reader keeps it."""
    own = _own_spans(client, text)
    out: list[str] = []
    last = 0
    for m in re.finditer(r"\$\{", text):
        if m.start() in own:
            continue
        out.append(text[last : m.start()] + "$" + _ESCAPE + "{")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _unescape(value: str, literals: dict[str, str]) -> str:
    """A read value with each marked placeholder made a literal one (see :data:`LITERAL_PREFIX`)."""
    if _ESCAPE not in value:
        return value

    def literal(m: re.Match[str]) -> str:
        text = m.group(0).replace(_ESCAPE, "")
        for key, have in literals.items():
            if have == text:
                return "${" + key + "}"
        key = f"{LITERAL_PREFIX}{len(literals)}"
        literals[key] = text
        return "${" + key + "}"

    return _ESCAPED_RE.sub(literal, value).replace(_ESCAPE, "")


def _inputs(client: ClientTarget, text: str) -> set[str]:
    """The variables of VS Code's ``${input:ID}`` prompts, as its reader names them."""
    from mcpctl.render.clients_special import VsCode

    if not isinstance(client, VsCode):
        return set()
    found: set[str] = set()
    for m in _VSCODE_INPUT.finditer(text):
        read = client.read(m.group(0))
        found.update(placeholder_names(read) if isinstance(read, str) else ())
    return found


def placeholder_names(text: str) -> list[str]:
    return [m["name"] for m in PLACEHOLDER_RE.finditer(text)]


def entry_strings(entry: ServerEntry) -> list[str]:
    """Every string of ``entry`` a placeholder is expanded in."""
    texts = [entry.command or "", *entry.args, *entry.env.values(), entry.cwd or "",
             entry.url or "", *entry.headers.values()]  # fmt: skip
    auth = entry.auth
    if auth is not None:
        creds = (auth.token, auth.value, auth.username, auth.password, auth.client_id,
                 auth.client_secret)  # fmt: skip
        texts += [c for c in creds if c]
    return texts


def _map_strings(entry: ServerEntry, fn: Callable[[str], str]) -> ServerEntry:
    return replace(
        entry,
        command=fn(entry.command) if entry.command is not None else None,
        args=tuple(fn(a) for a in entry.args),
        env={k: fn(v) for k, v in entry.env.items()},
        cwd=fn(entry.cwd) if entry.cwd is not None else None,
        url=fn(entry.url) if entry.url is not None else None,
        headers={k: fn(v) for k, v in entry.headers.items()},
        auth=entry.auth.map_values(fn) if entry.auth is not None else None,
    )
