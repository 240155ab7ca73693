"""What the proxy targets share: placeholders, auth headers, tool lists, templates, reading back.

:class:`Writer` carries one rendering's warnings and whether a secret was written;
:class:`Reader` reads one server object of a proxy's file, leaving out (with a warning) what
has the wrong type. The targets themselves are in :mod:`mcpctl.render.proxies`.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from mcpctl.config.model import MAX_TIMEOUT_MS, NAME_RE, AuthConfig, ServerEntry, ToolFilter
from mcpctl.config.placeholders import PLACEHOLDER_RE, near_misses
from mcpctl.errors import UsageError
from mcpctl.render.base import Family, Parsed, Rendered, RenderRequest, convert_placeholders, warn

__all__ = [
    "BARE_RE",
    "Reader",
    "Writer",
    "auth_headers",
    "base_document",
    "filter_of",
    "load_servers",
    "split_bearer",
    "tool_lists",
    "valid_name",
]

GLOB_RE = re.compile(r"[*?\[]")
# `$NAME` without braces: expanded too by os.ExpandEnv (mcp-proxy) and by 1mcp.
BARE_RE = re.compile(r"\$(?P<name>[A-Z_][A-Z0-9_]*)(?![A-Za-z0-9_])")
BEARER_RE = re.compile(r"Bearer +(?P<token>\S+)")


def _braces(name: str, default: str | None) -> str:
    return f"${{{name}}}"


class Writer:
    """One rendering for ``target``: its warnings, and whether it wrote a resolved secret.

    ``expands``: the target expands ``${VAR}`` itself (none of them has defaults); otherwise
    placeholders stay as written with a warning, or are resolved under ``inline_secrets``.
    """

    def __init__(self, target: str, request: RenderRequest, *, expands: bool) -> None:
        self.target = target
        self.request = request
        self.expands = expands
        self.warnings: list[str] = []
        self.holds_secrets = False

    def warn(self, server: str, what: str, why: str) -> None:
        """Record that ``server``'s ``what`` could not be rendered as it is, and why."""
        warn(self.warnings, server, what, why)

    def _secret(self, _name: str) -> None:
        self.holds_secrets = True

    def text(self, server: str, what: str, value: str) -> str:
        """``value`` (the field ``what`` of ``server``) as the target's file holds it.

        Raises:
            PlaceholderError: ``inline_secrets`` and a variable has no value.
        """
        if self.expands:
            for m in PLACEHOLDER_RE.finditer(value):
                if m["default"] is not None:
                    self.warn(server, what, f"loses the default of ${{{m['name']}}}: "
                              f"{self.target} has no ${{VAR:-default}}")  # fmt: skip
            for fragment in near_misses(value):
                self.warn(server, what, f"has {fragment!r}, which {self.target} "
                          "expands as a variable")  # fmt: skip
            return convert_placeholders(value, _braces, self.request)
        if not PLACEHOLDER_RE.search(value):
            return value
        if self.request.inline_secrets:
            return convert_placeholders(value, None, self.request, self._secret)
        names = ", ".join(sorted({f"${{{m['name']}}}" for m in PLACEHOLDER_RE.finditer(value)}))
        self.warn(server, what, f"keeps {names} as written: {self.target} does not expand "
                  "variables (--inline-secrets writes the values)")  # fmt: skip
        return value

    def texts(self, server: str, what: str, values: Mapping[str, str]) -> dict[str, str]:
        """Each value of a mapping (env, headers) through :meth:`text`."""
        return {k: self.text(server, f"{what}.{k}", v) for k, v in values.items()}

    def stdio(self, server: str, entry: ServerEntry) -> dict[str, Any]:
        """A stdio entry's ``command``, ``args`` and ``env`` (those it has), each through
        :meth:`text`: the fields every proxy's file spells the same."""
        item: dict[str, Any] = {"command": self.text(server, "command", entry.command or "")}
        if entry.args:
            item["args"] = [self.text(server, "args", a) for a in entry.args]
        if entry.env:
            item["env"] = self.texts(server, "env", entry.env)
        return item

    def resolved(self, value: str) -> str:
        """``value`` with its placeholders resolved (only under ``inline_secrets``).

        Raises:
            PlaceholderError: a variable has no value.
        """
        return convert_placeholders(value, None, self.request, self._secret)

    def done(self, doc: dict[str, Any]) -> Rendered:
        """The rendered document: two-space JSON, keys in the order built, a final newline."""
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        return Rendered(text, self.warnings, self.holds_secrets)


def auth_headers(w: Writer, server: str, entry: ServerEntry) -> dict[str, str]:
    """The headers that ``entry.auth`` sends, values as written (OAuth is the caller's).

    Basic credentials cannot stay placeholders inside base64: they are written only under
    ``inline_secrets``, else left out with a warning.

    Raises:
        PlaceholderError: ``inline_secrets`` and a variable has no value.
    """
    auth = entry.auth
    if auth is None or auth.type in ("none", "oauth"):
        return {}
    if auth.type == "bearer":
        return {"Authorization": f"Bearer {auth.token or ''}"}
    if auth.type == "header":
        return {auth.name or "Authorization": auth.value or ""}
    if not w.request.inline_secrets:
        w.warn(server, "auth", "(basic) is left out: its Authorization header holds the "
               "credentials encoded, which only --inline-secrets writes")  # fmt: skip
        return {}
    import base64

    pair = f"{w.resolved(auth.username or '')}:{w.resolved(auth.password or '')}"
    return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}


def tool_lists(
    w: Writer, server: str, tools: ToolFilter | None
) -> tuple[list[str] | None, list[str]]:
    """``tools`` as exact names, for targets without globs: ``(allow, deny)``.

    With an allow list, deny is folded into it (allow minus deny) and ``deny`` is empty.
    A glob in allow is left out (its tools are hidden); one in a lone deny list is not
    applied (its tools stay exposed); both with a warning.
    """
    if tools is None:
        return None, []
    if tools.allow is None:
        deny: list[str] = []
        for pattern in tools.deny:
            if GLOB_RE.search(pattern):
                w.warn(server, "tools.deny", f"pattern {pattern!r} is not applied: "
                       f"{w.target} takes exact tool names, so its tools stay exposed")  # fmt: skip
            else:
                deny.append(pattern)
        return None, deny
    allow: list[str] = []
    for pattern in tools.allow:
        if GLOB_RE.search(pattern):
            w.warn(server, "tools.allow", f"pattern {pattern!r} is left out: {w.target} "
                   "takes exact tool names, so its tools are hidden")  # fmt: skip
        elif tools.allows(pattern):
            allow.append(pattern)
    if tools.deny:
        w.warn(server, "tools.deny", f"is folded into tools.allow: {w.target} gets the one "
               f"list allow minus deny ({', '.join(allow) or 'nothing'})")  # fmt: skip
    return allow, []


def filter_of(allow: list[str] | None, deny: list[str]) -> ToolFilter | None:
    """The :class:`ToolFilter` of tool name lists read back (``None``: no filter)."""
    if allow is None and not deny:
        return None
    return ToolFilter(tuple(allow) if allow is not None else None, tuple(deny))


def base_document(
    template: dict[str, Any] | None, head: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document to render into, and its ``mcpServers`` object to add servers to.

    The template (copied, never changed) is the base; ``head`` gives what it lacks, first.
    The template's own servers are kept unless a rendered one has their name.

    Raises:
        UsageError: the template's ``mcpServers`` is not an object.
    """
    base = copy.deepcopy(template) if template is not None else {}
    doc = {k: copy.deepcopy(v) for k, v in head.items() if k not in base}
    doc.update(base)
    servers = doc.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise UsageError('the template\'s "mcpServers" must be a JSON object')
    return doc, servers


def load_servers(text: str, target: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document ``text`` and its ``mcpServers`` object.

    Raises:
        UsageError: ``text`` is not JSON, not an object, or has no ``mcpServers`` object.
    """
    from mcpctl.render.readers import DocumentError, load_json

    try:
        doc = load_json(text, comments=False)
    except DocumentError as exc:
        raise exc.usage(f"a {target} config") from None
    if not isinstance(doc, dict):
        raise UsageError(f"not a {target} config: a JSON object was expected, "
                         f"not {type(doc).__name__}")  # fmt: skip
    servers = doc.get("mcpServers")
    if not isinstance(servers, dict):
        raise UsageError(f'not a {target} config: it has no "mcpServers" object',
                         hint='the servers are under "mcpServers": {"NAME": {...}}')  # fmt: skip
    return doc, servers


def valid_name(name: str, value: Any, warnings: list[str]) -> bool:
    """Whether server ``name`` (its object ``value``) can be read; if not, say why."""
    if not NAME_RE.fullmatch(name):
        warn(warnings, name, "name", "is not a server name (1-64 of A-Z a-z 0-9 _ -): skipped")
        return False
    if not isinstance(value, dict):
        warn(warnings, name, "entry", "is not a JSON object: skipped")
        return False
    return True


def split_bearer(headers: dict[str, str]) -> tuple[dict[str, str], AuthConfig | None]:
    """``headers`` less an ``Authorization: Bearer TOKEN`` one, turned into bearer auth."""
    for key, value in headers.items():
        match = BEARER_RE.fullmatch(value)
        if key.lower() == "authorization" and match:
            rest = {k: v for k, v in headers.items() if k != key}
            return rest, AuthConfig("bearer", token=match["token"])
    return headers, None


class Reader:
    """Reads one server object; a field of the wrong type is left out with a warning.

    ``back`` turns a string's placeholders back into ``${VAR}`` (the target's syntax).
    """

    def __init__(
        self, name: str, data: dict[str, Any], warnings: list[str], back: Callable[[str], str]
    ) -> None:
        self.name = name
        self.data = data
        self.warnings = warnings
        self.back = back
        self.seen: set[str] = set()

    def raw(self, key: str) -> Any:
        """The value at ``key`` as it is (``None`` when absent), marked as read."""
        self.seen.add(key)
        return self.data.get(key)

    def _bad(self, key: str, kind: str) -> None:
        warn(self.warnings, self.name, key, f"is not {kind}: left out")

    def text(self, key: str) -> str | None:
        """A string field."""
        value = self.raw(key)
        if value is None or isinstance(value, str):
            return None if value is None else self.back(value)
        self._bad(key, "a string")
        return None

    def texts(self, key: str) -> tuple[str, ...] | None:
        """A list of strings (``None`` when absent or bad)."""
        value = self.raw(key)
        if value is None:
            return None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(self.back(v) for v in value)
        self._bad(key, "a list of strings")
        return None

    def mapping(self, key: str) -> dict[str, str]:
        """An object of strings (empty when absent or bad)."""
        value = self.raw(key)
        if value is None:
            return {}
        if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            return {k: self.back(v) for k, v in value.items()}
        self._bad(key, "an object of strings")
        return {}

    def flag(self, key: str) -> bool | None:
        """A boolean field."""
        value = self.raw(key)
        if value is None or isinstance(value, bool):
            return value
        self._bad(key, "true or false")
        return None

    def timeout(self, key: str, ms: float | None) -> int | None:
        """A timeout already converted to milliseconds (``ms``), checked against the range."""
        if ms is None:
            return None
        rounded = round(ms)
        if rounded != ms:
            warn(self.warnings, self.name, key, f"is rounded to {rounded} ms")
        if not 1 <= rounded <= MAX_TIMEOUT_MS:
            warn(self.warnings, self.name, key, f"is out of range (1 to {MAX_TIMEOUT_MS} ms): "
                 "left out")  # fmt: skip
            return None
        return rounded

    def number(self, key: str) -> float | None:
        """A number field (not a boolean)."""
        value = self.raw(key)
        if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            return value
        self._bad(key, "a number")
        return None

    def rest(self, ignored: Mapping[str, str]) -> None:
        """Warn about the keys not read: ``ignored`` says why for the known ones."""
        for key in self.data:
            if key not in self.seen:
                why = ignored.get(key, "is not a field mcpctl knows")
                warn(self.warnings, self.name, key, f"{why}: not imported")


class ServersTarget:
    """What the proxy targets share: the servers as an ``mcpServers`` object (under the
    template, or :attr:`base` without one), one item per server from :meth:`_server`, read
    back one by one by :meth:`_entry`."""

    name: str
    family: Family = "proxy"
    description: str
    #: Whether the target expands ``${VAR}`` itself (placeholders are then carried over).
    expands = False
    #: The document the servers go into when no template is given.
    base: ClassVar[dict[str, Any]] = {}
    #: Whether the file says where the proxy listens (``--listen`` applies), and if not,
    #: where that goes instead.
    listens = False
    listen_hint: str | None = None

    def render(self, request: RenderRequest) -> Rendered:
        """The target's document for ``request`` (the template, if any, is the base).

        Raises:
            UsageError: the template's ``mcpServers`` is not an object.
            PlaceholderError: ``inline_secrets`` and a variable has no value.
        """
        w = Writer(self.name, request, expands=self.expands)
        doc, servers = base_document(request.template, self.base)
        for name, entry in request.entries.items():
            servers[name] = self._server(w, name, entry)
        self._finish(w, doc)
        return w.done(doc)

    def parse(self, text: str) -> Parsed:
        """The servers of a document of this target.

        Raises:
            UsageError: ``text`` is not such a document.
        """
        doc, servers = load_servers(text, self.name)
        out = Parsed()
        self._document_notes(doc, out.warnings)
        for name, data in servers.items():
            if valid_name(name, data, out.warnings):
                entry = self._entry(Reader(name, data, out.warnings, self._back))
                if entry is not None:
                    out.entries[name] = entry
        return out

    def _back(self, text: str) -> str:
        """A value as written in the target's file, with its placeholders as ``${VAR}``."""
        return text

    def _document_notes(self, doc: dict[str, Any], warnings: list[str]) -> None:
        """Warn about the document's own settings that import leaves behind."""

    def _finish(self, w: Writer, doc: dict[str, Any]) -> None:
        """The document's own settings, once every server is in."""

    def _server(self, w: Writer, name: str, entry: ServerEntry) -> dict[str, Any]:
        raise NotImplementedError

    def _entry(self, r: Reader) -> ServerEntry | None:
        raise NotImplementedError
