"""Client targets: the config files of MCP clients, rendered for ``--install`` and read by import.

Most clients keep their servers in a JSON object of ``name -> {command, args, env}`` or
``{url, headers}``; they differ in where the object sits, how a transport is named, which
placeholder syntax they expand and what else they understand. This module holds what they
share: placeholder syntaxes (:class:`Syntax`), file locations, a reader for JSON with comments,
the rendering context and the import helpers. :mod:`~mcpctl.render.clients_base` has the
target classes (:class:`~mcpctl.render.clients_base.McpServersClient` renders and parses the
common family from a handful of settings); the targets themselves are declared in
:mod:`~mcpctl.render.clients_json` (the plain family), :mod:`~mcpctl.render.clients_special`
(Claude Desktop, VS Code, opencode), :mod:`~mcpctl.render.clients_toml` (Codex) and
:mod:`~mcpctl.render.clients_yaml` (Continue, Goose).

Each target also has ``expressible(entry)``: the entry as the client can hold it (what render
drops or spells differently, normalised away), or ``None`` when the client cannot hold it at
all. ``parse(render(x))`` gives back exactly that: the round-trip tests rely on it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mcpctl.config.model import NAME_RE, AuthConfig, ServerEntry, format_path
from mcpctl.config.placeholders import PLACEHOLDER_RE
from mcpctl.render.base import Parsed, Places, RenderRequest, convert_placeholders, warn

__all__ = [
    "BRACED",
    "DOLLAR",
    "ENV_COLON",
    "NO_SYNTAX",
    "SHELL",
    "TYPE_ALIASES",
    "RenderContext",
    "Syntax",
    "add_entry",
    "appdata",
    "auth_headers",
    "config_home",
    "env_strings",
    "foreign",
    "headers_with_auth",
    "import_name",
    "load_jsonc",
    "out_ceil",
    "returned_remote",
    "timeout_in",
    "unfold_bearer",
    "unsupported",
    "vscode_user",
]

Spell = Callable[[str, "str | None"], str]
_NAME = r"[A-Z_][A-Z0-9_]*"


@dataclass(frozen=True)
class Syntax:
    """How a client spells a placeholder, and how its spelling reads back as ``${VAR}``.

    Attributes:
        label: the spelling, for warnings and docs (``${env:VAR}``).
        spell: ``(name, default) -> text``; ``None`` when the client expands nothing.
        defaults: the client understands ``${VAR:-default}`` (otherwise defaults are dropped).
        back: matches the client's spelling; group ``name`` (or ``bare``) is the variable.
    """

    label: str
    spell: Spell | None
    defaults: bool = False
    back: re.Pattern[str] | None = None

    def read(self, text: str) -> str:
        """``text`` with the client's placeholders spelled ``${VAR}``."""
        if self.back is None:
            return text
        return self.back.sub(_dollar_braced, text)

    def normal(self, text: str) -> str:
        """``text`` as it comes back from this client: defaults gone if it has none."""
        if self.spell is None or self.defaults:
            return text
        return PLACEHOLDER_RE.sub(lambda m: "${" + m["name"] + "}", text)


def _dollar_braced(match: re.Match[str]) -> str:
    groups = match.groupdict()
    return "${" + (groups.get("name") or groups.get("bare") or "") + "}"


def _braced(name: str, default: str | None) -> str:
    return "${" + name + (f":-{default}" if default is not None else "") + "}"


NO_SYNTAX = Syntax("no expansion", None)
SHELL = Syntax("${VAR} / ${VAR:-default}", _braced, defaults=True)
BRACED = Syntax("${VAR}", _braced)
DOLLAR = Syntax(  # $VAR or ${VAR}, read back both ways
    "$VAR / ${VAR}", _braced, back=re.compile(rf"\$\{{(?P<name>{_NAME})\}}|\$(?P<bare>{_NAME})")
)
ENV_COLON = Syntax(
    "${env:VAR}",
    lambda name, _default: "${env:" + name + "}",
    back=re.compile(rf"\$\{{env:(?P<name>{_NAME})\}}"),
)


def config_home(places: Places) -> Path:
    """``$XDG_CONFIG_HOME`` or ``~/.config``."""
    xdg = places.environ.get("XDG_CONFIG_HOME")
    return Path(xdg) if xdg else places.home / ".config"


def appdata(places: Places) -> Path:
    """``%APPDATA%`` (``~/AppData/Roaming`` when unset)."""
    value = places.environ.get("APPDATA")
    return Path(value) if value else places.home / "AppData" / "Roaming"


def vscode_user(places: Places) -> Path:
    """VS Code's user folder (the default profile) on ``places.system``."""
    if places.system == "win32":
        return appdata(places) / "Code" / "User"
    if places.system == "darwin":
        return places.home / "Library" / "Application Support" / "Code" / "User"
    return config_home(places) / "Code" / "User"


# How clients name a transport in a "type" field.
TYPE_ALIASES: dict[str, str] = {
    "stdio": "stdio", "local": "stdio",
    "http": "streamable-http", "streamable-http": "streamable-http",
    "streamableHttp": "streamable-http", "streamable_http": "streamable-http",
    "sse": "sse",
}  # fmt: skip

_BEARER = re.compile(r"Bearer (\S+)")


def load_jsonc(text: str, what: str) -> Any:
    """JSON with comments and trailing commas (as VS Code and Zed write it), read with the
    limits of every client file (:mod:`mcpctl.render.readers`).

    Raises:
        UsageError: ``text`` is not such a document (``what`` names it), or is over a limit.
    """
    from mcpctl.render.readers import DocumentError, load_json

    try:
        return load_json(text)
    except DocumentError as exc:
        raise exc.usage(f"a {what} file") from None


class Client(Protocol):
    """What a :class:`RenderContext` reads of its client target (a
    :class:`~mcpctl.render.clients_base.ClientBase`, whose module imports this one)."""

    @property
    def label(self) -> str: ...

    @property
    def syntax(self) -> Syntax: ...


class RenderContext:
    """One rendering's running state: warnings, secrets written, the server at hand."""

    def __init__(self, client: Client, request: RenderRequest) -> None:
        self.client = client
        self.request = request
        self.syntax = client.syntax
        self.warnings: list[str] = []
        self.holds_secrets = False
        self._noted: set[tuple[str, str, str]] = set()

    def warn(self, server: str, what: str, why: str) -> None:
        """Add a warning (once) naming ``server`` and the field ``what``."""
        if (server, what, why) not in self._noted:
            self._noted.add((server, what, why))
            warn(self.warnings, server, what, why)

    def text(self, server: str, where: str, value: str) -> str:
        """``value`` with its placeholders in the client's syntax (or the inline rule).

        Raises:
            PlaceholderError: ``--inline-secrets`` and a variable has no value.
        """
        syntax = self.syntax
        if syntax.spell is None:
            return self.literal(server, where, value)
        spell, dropped = syntax.spell, []

        def spelled(name: str, default: str | None) -> str:
            if default is not None and not syntax.defaults:
                dropped.append(name)
                default = None
            return spell(name, default)

        out = convert_placeholders(value, spelled, self.request)
        if dropped:
            why = f"loses its placeholder default: {self.client.label} has no ${{VAR:-default}}"
            self.warn(server, where, why)
        return out

    def literal(self, server: str, where: str, value: str) -> str:
        """``value`` where nothing is expanded: resolved with ``--inline-secrets``, else kept.

        Raises:
            PlaceholderError: ``--inline-secrets`` and a variable has no value.
        """
        if not PLACEHOLDER_RE.search(value):
            return value
        if self.request.inline_secrets:
            self.holds_secrets = True
            return convert_placeholders(value, None, self.request)
        # One rule: a launcher runs a stdio server; a remote one's url and headers can only
        # hold the values (a launcher cannot stand in for a URL).
        fix = "--secrets inline writes the values"
        if not (where == "url" or where.startswith("headers.")):
            fix = f"--secrets launcher runs it through mcpctl run; {fix}"
        why = (
            f"keeps its ${{VAR}} placeholders as written: {self.client.label} does not expand "
            f"them here ({fix})"
        )
        self.warn(server, where, why)
        return value


def import_name(raw: str, taken: Mapping[str, Any], warnings: list[str]) -> str:
    """A valid, unused mcpctl name for a server the client calls ``raw``."""
    if NAME_RE.fullmatch(raw) and raw not in taken:
        return raw
    base = re.sub(r"[^A-Za-z0-9_-]+", "-", raw).strip("-")[:64] or "server"
    name, n = base, 2
    while name in taken:
        suffix = f"-{n}"
        name, n = base[: 64 - len(suffix)] + suffix, n + 1
    warnings.append(f"{raw}: imported as {name!r} (names are letters, digits, '-' and '_')")
    return name


def add_entry(parsed: Parsed, name: str, data: dict[str, Any]) -> None:
    """Check ``data`` as mcpctl would and add the entry, or warn why it is left out.

    A remote server gets its transport spelled out, and an ``Authorization: Bearer`` header
    becomes bearer auth again (the form it was rendered from).
    """
    from mcpctl.config.checks import entry_from_data

    if "url" in data:
        data.setdefault("transport", "streamable-http")
        headers = data.get("headers")
        if (
            "auth" not in data
            and isinstance(headers, dict)
            and isinstance(headers.get("Authorization"), str)
        ):
            headers = dict(headers)
            auth = unfold_bearer(headers)
            if auth is not None:
                data["auth"] = {"type": "bearer", "token": auth.token}
                data["headers"] = headers

    entry, problems = entry_from_data(name, data)
    if entry is None:
        for problem in problems:
            parsed.warnings.append(f"{format_path(problem.path)}: {problem.message}")
        parsed.warnings.append(f"{name}: not imported")
        return
    parsed.entries[name] = entry


def foreign(name: str, raw: Mapping[str, Any], warnings: list[str], label: str) -> None:
    """Warn for each key left in ``raw``: settings of the client mcpctl has no place for."""
    for key in raw:
        warn(warnings, name, str(key), f"is not imported: a {label} setting mcpctl does not have")


def timeout_in(value: Any, unit: int) -> Any:
    """A timeout of ``unit`` milliseconds as mcpctl's milliseconds (left as is when odd)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    ms = value * unit
    return int(ms) if ms == int(ms) else ms


def out_ceil(ms: int, unit: int) -> int | float:
    """Milliseconds in the client's ``unit``, rounded up."""
    return ms if unit == 1 else -(-ms // unit)


def headers_with_auth(entry: ServerEntry) -> dict[str, str]:
    """``entry``'s headers with bearer/header auth folded in (as clients come back)."""
    headers = dict(entry.headers)
    auth = entry.auth
    if auth is not None and auth.type == "bearer":
        headers["Authorization"] = f"Bearer {auth.token}"
    elif auth is not None and auth.type == "header":
        headers[auth.name or "Authorization"] = auth.value or ""
    return headers


def unfold_bearer(headers: dict[str, str]) -> AuthConfig | None:
    """Bearer auth out of ``headers`` (which loses its ``Authorization: Bearer`` header)."""
    match = _BEARER.fullmatch(headers.get("Authorization", ""))
    if match is None:
        return None
    del headers["Authorization"]
    return AuthConfig("bearer", token=match[1])


def returned_remote(entry: ServerEntry, text: Callable[[str], str], sse: bool) -> dict[str, Any]:
    """The remote fields of ``entry`` as a client gives them back (``sse``: it tells SSE)."""
    if not entry.is_remote:
        return {}
    headers = {k: text(v) for k, v in headers_with_auth(entry).items()}
    auth = unfold_bearer(headers)
    kind = "sse" if sse and entry.effective_transport == "sse" else "streamable-http"
    return {"url": text(entry.url or ""), "transport": kind, "headers": headers, "auth": auth}


def auth_headers(name: str, entry: ServerEntry, ctx: RenderContext) -> dict[str, str]:
    """The headers that carry ``entry.auth`` (placeholders still ``${VAR}``).

    Raises:
        PlaceholderError: basic auth, ``--inline-secrets``, and a credential has no value.
    """
    auth = entry.auth
    if auth is None or auth.type == "none":
        return {}
    if auth.type == "bearer":
        return {"Authorization": f"Bearer {auth.token}"}
    if auth.type == "header":
        return {auth.name or "Authorization": auth.value or ""}
    if auth.type == "basic":
        if not ctx.request.inline_secrets:
            why = "is not written: a Basic header needs the resolved credentials"
            ctx.warn(name, "auth", f"{why} (--inline-secrets); {ctx.client.label} cannot build one")
            return {}
        pair = f"{auth.username}:{auth.password}"
        resolved = convert_placeholders(pair, None, ctx.request)
        ctx.holds_secrets = True
        return {"Authorization": "Basic " + base64.b64encode(resolved.encode()).decode()}
    ctx.warn(name, "auth", f"is OAuth: sign-in happens in {ctx.client.label}")
    return {}


def unsupported(name: str, entry: ServerEntry, ctx: RenderContext, keep: str) -> None:
    """Warn for the fields this client has no setting for (``keep``: names it does have)."""
    label = ctx.client.label
    if entry.cwd is not None and "cwd" not in keep:
        ctx.warn(name, "cwd", f"is not written: {label} has no working-directory setting")
    if entry.inherit_env and "inherit_env" not in keep:
        ctx.warn(name, "inherit_env", f"is not written: {label} decides what environment "
                 "a server inherits")  # fmt: skip
    if entry.timeout is not None and "timeout" not in keep:
        ctx.warn(name, "timeout", f"is not written: {label} has no per-server timeout")
    tools = entry.tools
    if tools is not None and tools.allow is not None and "allow" not in keep:
        ctx.warn(name, "tools.allow", f"is not written: {label} has no tool allow-list here")
    if tools is not None and tools.deny and "deny" not in keep:
        ctx.warn(name, "tools.deny", f"is not written: {label} has no tool deny-list here")


def env_strings(env: Any) -> Any:
    """VS Code and others accept numbers as env values: mcpctl keeps strings."""
    if not isinstance(env, dict):
        return env
    return {k: str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v
            for k, v in env.items()}  # fmt: skip
